"""Fit the confidence function of asmr.retrieve on a corpus with some questions made unanswerable.

    python bench/calibrate_confidence.py --corpus C.jsonl --queries Q.jsonl [--unanswerable 0.3]

Removes the gold documents of a random share of the questions, ingests the
rest (``--memory``, reused when it already holds them), computes each
question's confidence features, fits a logistic regression of "answerable" on
them (Newton's method), and prints the weights, 5-fold cross-validated
refusal numbers at the shipped threshold, and a reliability table. Put the
weights in RetrieveConfig.confidence_weights only from a tuning set.
"""
from __future__ import annotations

import argparse
import json
from dataclasses import replace
from pathlib import Path

import numpy as np

from asmr.embed import get_embedder
from asmr.eval.retrieval import (load_queries, refusal_features, refusal_report, reliability_table,
                                 split_unanswerable)
from asmr.retrieve import RetrieveConfig
from asmr.store import Memory, Writer
from asmr.units.read import iter_jsonl

FEATURES = ("top_similarity", "name_coverage", "title_coverage")


def fit_logistic(x: np.ndarray, y: np.ndarray, l2: float = 1e-2, steps: int = 50) -> np.ndarray:
    a = np.hstack([np.ones((len(x), 1)), x])
    w = np.zeros(a.shape[1])
    for _ in range(steps):
        p = 1 / (1 + np.exp(-a @ w))
        grad = a.T @ (p - y) + l2 * w
        hess = (a * (p * (1 - p))[:, None]).T @ a + l2 * np.eye(len(w))
        w -= np.linalg.solve(hess, grad)
    return w


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--corpus", type=Path, required=True)
    ap.add_argument("--queries", type=Path, required=True)
    ap.add_argument("--unanswerable", type=float, default=0.3)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--memory", type=Path, default=None)
    ap.add_argument("--embedder", default=None)
    args = ap.parse_args()
    queries = load_queries(args.queries)
    unanswerable, removed = split_unanswerable(queries, args.unanswerable, args.seed)
    memory = args.memory or Path(f"asmr-eval-{args.corpus.stem}-unanswerable-{args.unanswerable}-{args.seed}")
    with Writer(memory, embedder=args.embedder, progress=False) as w:
        w.ingest((d for d in iter_jsonl(args.corpus) if d.doc_id not in removed), kb="eval")
    with Memory(memory) as m:
        rows = refusal_features(m, get_embedder(m.embed_model), queries)
    x = np.array([[r[f] for f in FEATURES] for r in rows])
    y = np.array([r["qid"] not in unanswerable for r in rows], float)
    w = fit_logistic(x, y)
    print(f"fitted weights (bias, {', '.join(FEATURES)}): {np.round(w, 2).tolist()}")

    threshold = RetrieveConfig().confidence_threshold
    folds = np.arange(len(rows)) % 5
    np.random.default_rng(args.seed).shuffle(folds)
    cv_rows = []
    for k in range(5):
        wk = fit_logistic(x[folds != k], y[folds != k])
        for i in np.flatnonzero(folds == k):
            conf = float(1 / (1 + np.exp(-(wk[0] + x[i] @ wk[1:]))))
            cv_rows.append({**rows[i], "confidence": conf, "refused": conf < threshold})
    print("5-fold cross-validated at threshold", threshold, json.dumps(refusal_report(cv_rows, unanswerable)))
    conf = np.array([r["confidence"] for r in cv_rows])
    ans_cv = np.array([r["qid"] not in unanswerable for r in cv_rows])
    cut = np.quantile(conf[ans_cv], 0.10)
    auc = np.mean([(a > b) + 0.5 * (a == b) for a in conf[ans_cv] for b in conf[~ans_cv]])
    print(f"5-fold cross-validated: ROC AUC {auc:.3f}; at 10 % false refusals (threshold {cut:.2f}) "
          f"refusal recall {np.mean(conf[~ans_cv] < cut):.2f}")
    shipped = refusal_report(rows, unanswerable)
    print("shipped weights", RetrieveConfig().confidence_weights, json.dumps(shipped))
    print("\n| confidence | questions | mean confidence | answerable |\n|---|---:|---:|---:|")
    for b in reliability_table(cv_rows, unanswerable):
        print(f"| {b['bin']} | {b['questions']} | {b['mean_confidence']:.2f} | {b['answerable']:.2f} |")
    # Single-feature baseline: the best threshold on top similarity alone at <= 10 % false refusals.
    sims = np.array([r["top_similarity"] for r in rows])
    ans = y.astype(bool)
    t = np.quantile(sims[ans], 0.10)
    print(f"\nmax cosine alone at 10 % false refusals: refusal recall {np.mean(sims[~ans] < t):.2f}")


if __name__ == "__main__":
    main()
