"""Fit the confidence function of asmr.retrieve on questions some of which the memory cannot answer.

    python bench/calibrate_confidence.py \\
        --corpus ../shared/data/hotpotqa_train.corpus.jsonl \\
        --queries ../shared/data/hotpotqa_train.queries.jsonl [--unanswerable 0.3] [--seed 0] \\
        --synth DIR [--synth DIR2 ...] [--holdout DIR3 ...] [--holdout-seed N ...]

Two kinds of data, fitted together:

- a corpus in the format of ../shared/data with its questions: the gold
  documents of a random share (``--unanswerable``, ``--seed``) are removed, the
  rest ingested (``--memory``, reused when it already holds them);
- generated knowledge bases (``asmr eval synth --out DIR``; the memory
  DIR/memory is built from docs/v1 then docs/v2 if it does not exist): their
  unanswerable questions mostly name a subject that exists and ask for a
  field it lacks ("What is the cache TTL of Ivrix?").

For each question it computes the confidence features (``Retriever.recall``),
fits a logistic regression of "answerable" on them (Newton's method; each
dataset weighs as much as the others, whatever its size), and prints the
weights, 5-fold cross-validated refusal numbers per dataset at several
thresholds (a fold's questions are scored by weights fitted on the other folds
of every dataset), ROC AUC, and a reliability table. ``--holdout`` knowledge
bases and the corpus with another seed's unanswerable share (``--holdout-seed``:
the same questions, other ones made unanswerable, its memory beside
``--memory``) are not fitted on: they are scored by the weights fitted on all
the rest. ``--write`` puts the fitted weights into python/asmr/retrieve/confidence_model.json:
use it only on tuning data.

The shipped weights came from (HotpotQA tuning sample, 30 % unanswerable,
seed 0; the generated KB of seed 0, as ``asmr eval answers --synth`` builds
it; the KB of seed 1 and HotpotQA seeds 1-4 held out):

    asmr eval synth --out /tmp/syn0 --seed 0 && asmr eval synth --out /tmp/syn1 --seed 1
    python bench/calibrate_confidence.py --corpus ../shared/data/hotpotqa_train.corpus.jsonl \\
        --queries ../shared/data/hotpotqa_train.queries.jsonl --memory /tmp/hotpot-unanswerable-0 \\
        --synth /tmp/syn0 --holdout /tmp/syn1 --holdout-seed 1 --holdout-seed 2 --holdout-seed 3 --holdout-seed 4
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

from asmr.embed import get_embedder
from asmr.eval.retrieval import (load_queries, refusal_features, refusal_report, reliability_table,
                                 split_unanswerable, synth_refusal_queries)
from asmr.retrieve import RetrieveConfig
from asmr.retrieve.confidence import FEATURES, MODEL_PATH
from asmr.store import Memory, Writer
from asmr.units.read import iter_jsonl, read_path

THRESHOLDS = (0.5, 0.6, 0.7, 0.75, 0.8)


def fit_logistic(x: np.ndarray, y: np.ndarray, weight: np.ndarray | None = None, l2: float = 1e-2,
                 steps: int = 50) -> np.ndarray:
    a = np.hstack([np.ones((len(x), 1)), x])
    weight = np.ones(len(x)) if weight is None else weight
    w = np.zeros(a.shape[1])
    for _ in range(steps):
        p = 1 / (1 + np.exp(-a @ w))
        grad = a.T @ (weight * (p - y)) + l2 * w
        hess = (a * (weight * p * (1 - p))[:, None]).T @ a + l2 * np.eye(len(w))
        w -= np.linalg.solve(hess, grad)
    return w


def predict(w: np.ndarray, x: np.ndarray) -> np.ndarray:
    return 1 / (1 + np.exp(-(w[0] + x @ w[1:])))


def corpus_rows(args, seed: int) -> tuple[str, list[dict], set[str]]:
    """The corpus's questions with the gold documents of ``seed``'s unanswerable share removed. The
    memory is --memory for --seed; any other seed's sits beside it, named as --seed's would be."""
    queries = load_queries(args.queries)
    unanswerable, removed = split_unanswerable(queries, args.unanswerable, seed)
    memory = Path(f"asmr-eval-{args.corpus.stem}-unanswerable-{args.unanswerable}-{seed}")
    if args.memory is not None:
        memory = args.memory if seed == args.seed else args.memory.parent / memory
    with Writer(memory, embedder=args.embedder, progress=False) as w:
        w.ingest((d for d in iter_jsonl(args.corpus) if d.doc_id not in removed), kb="eval")
    with Memory(memory) as m:
        return (f"{args.corpus.stem} seed {seed}", refusal_features(m, get_embedder(m.embed_model), queries),
                unanswerable)


def synth_rows(root: Path, embedder: str | None) -> tuple[str, list[dict], set[str]]:
    queries, unanswerable = synth_refusal_queries(root / "queries.jsonl")
    memory = root / "memory"
    if not memory.exists():  # built once, as `asmr eval answers --synth` builds it (v1 revised by v2)
        for version in ("v1", "v2"):
            docs = root / "docs" / version
            with Writer(memory, embedder=embedder, progress=False) as w:
                w.ingest([read_path(p, root=docs) for p in sorted(docs.rglob("*.md"))])
    with Memory(memory) as m:
        return f"synth:{root}", refusal_features(m, get_embedder(m.embed_model), queries), unanswerable


def report(name: str, rows: list[dict], unanswerable: set[str]) -> None:
    conf = np.array([r["confidence"] for r in rows])
    ans = np.array([r["qid"] not in unanswerable for r in rows])
    auc = np.mean((conf[ans][:, None] > conf[~ans][None]) + 0.5 * (conf[ans][:, None] == conf[~ans][None]))
    cut = np.quantile(conf[ans], 0.10)
    print(f"{name}: ROC AUC {auc:.3f}; at 10 % false refusals (threshold {cut:.2f}) refusal recall "
          f"{np.mean(conf[~ans] < cut):.2f}")
    for t in THRESHOLDS:
        rep = refusal_report([{**r, "refused": r["confidence"] < t} for r in rows], unanswerable)
        print(f"  threshold {t:.2f}: precision {rep['precision']:.3f} recall {rep['recall']:.3f} "
              f"false-refusal rate {rep['false_refusal_rate']:.3f}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--corpus", type=Path, default=None)
    ap.add_argument("--queries", type=Path, default=None)
    ap.add_argument("--unanswerable", type=float, default=0.3)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--memory", type=Path, default=None, help="memory of the corpus without the removed documents")
    ap.add_argument("--synth", type=Path, action="append", default=[], metavar="DIR",
                    help="output of asmr eval synth, fitted on (repeatable)")
    ap.add_argument("--holdout", type=Path, action="append", default=[], metavar="DIR",
                    help="output of asmr eval synth, only scored (repeatable)")
    ap.add_argument("--holdout-seed", type=int, action="append", default=[], metavar="N",
                    help="the corpus with another seed's unanswerable share, only scored (repeatable)")
    ap.add_argument("--embedder", default=None)
    ap.add_argument("--write", action="store_true",
                    help=f"write the fitted weights into {MODEL_PATH.relative_to(MODEL_PATH.parents[3])} "
                         "(the threshold is kept)")
    args = ap.parse_args()
    if (args.corpus is None) != (args.queries is None):
        ap.error("--corpus and --queries go together")
    if args.holdout_seed and args.corpus is None:
        ap.error("--holdout-seed needs --corpus and --queries")
    sets = ([corpus_rows(args, args.seed)] if args.corpus else []) + [synth_rows(d, args.embedder) for d in args.synth]
    if not sets:
        ap.error("nothing to fit: give --corpus/--queries or --synth")
    held = ([corpus_rows(args, s) for s in args.holdout_seed if s != args.seed]
            + [synth_rows(d, args.embedder) for d in args.holdout])

    def xy(rows, unanswerable):
        return (np.array([[r[f] for f in FEATURES] for r in rows]),
                np.array([r["qid"] not in unanswerable for r in rows], float))

    data = [xy(rows, un) for _, rows, un in sets]
    x = np.vstack([d[0] for d in data])
    y = np.concatenate([d[1] for d in data])
    weight = np.concatenate([np.full(len(d[1]), len(y) / len(data) / len(d[1])) for d in data])
    which = np.concatenate([np.full(len(d[1]), i) for i, d in enumerate(data)])
    w = fit_logistic(x, y, weight)
    print(f"fitted weights (bias, {', '.join(FEATURES)}): {np.round(w, 2).tolist()}")
    print("shipped weights", RetrieveConfig().confidence_weights, "threshold", RetrieveConfig().confidence_threshold)
    if args.write:
        model = json.loads(MODEL_PATH.read_text(encoding="utf-8"))
        model["weights"] = [round(float(v), 2) for v in w]
        model["fitted_by"] = "bench/calibrate_confidence.py " + " ".join(sys.argv[1:])
        MODEL_PATH.write_text(json.dumps(model, indent=2) + "\n", encoding="utf-8")
        print(f"wrote {MODEL_PATH}")

    folds = np.zeros(len(y), int)
    rng = np.random.default_rng(args.seed)
    for i in range(len(data)):  # five folds within each dataset
        f = np.arange(np.sum(which == i)) % 5
        rng.shuffle(f)
        folds[which == i] = f
    conf = np.zeros(len(y))
    for k in range(5):
        wk = fit_logistic(x[folds != k], y[folds != k], weight[folds != k])
        conf[folds == k] = predict(wk, x[folds == k])
    print("\n5-fold cross-validated:")
    cv_sets, start = [], 0
    for name, rows, un in sets:
        cv_rows = [{**r, "confidence": float(c)} for r, c in zip(rows, conf[start:start + len(rows)])]
        start += len(rows)
        report(name, cv_rows, un)
        print("  shipped weights:", json.dumps({k: round(v, 3) for k, v in refusal_report(rows, un).items()}))
        cv_sets.append((name, cv_rows, un))
    for name, rows, un in held:
        hx, _ = xy(rows, un)
        print("\nheld out (weights fitted on all of the above):")
        report(name, [{**r, "confidence": float(c)} for r, c in zip(rows, predict(w, hx))], un)
        print("  shipped weights:", json.dumps({k: round(v, 3) for k, v in refusal_report(rows, un).items()}))

    # Reliability of the cross-validated confidences: every fitted dataset together, then each.
    pooled = [{**r, "qid": f"{i}/{r['qid']}"} for i, (_, rows, _) in enumerate(cv_sets) for r in rows]
    pooled_un = {f"{i}/{q}" for i, (_, _, un) in enumerate(cv_sets) for q in un}
    for name, rows, un in [("all fitted", pooled, pooled_un)] + cv_sets:
        print(f"\nreliability ({name}, cross-validated)\n\n| confidence | questions | mean confidence | answerable |"
              "\n|---|---:|---:|---:|")
        for b in reliability_table(rows, un):
            print(f"| {b['bin']} | {b['questions']} | {b['mean_confidence']:.2f} | {b['answerable']:.2f} |")


if __name__ == "__main__":
    main()
