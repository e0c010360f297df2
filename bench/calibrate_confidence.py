"""Fit recall's refusal (and the baselines' thresholds) on some sources; report on all, in-sample and out of source.

    python bench/calibrate_confidence.py --work DIR \\
        --source hotpot-removed=../shared/data/hotpotqa_train.corpus.jsonl,../shared/data/hotpotqa_train.queries.jsonl,removed \\
        --source chat=CHAT/corpus.jsonl,CHAT/queries.jsonl \\
        ... --fit hotpot-removed,chat [--fit handbook-a,handbook-b] [--write]

A source is a corpus and its questions in the format of ../shared/data, and how its unanswerable
questions are made: ``removed`` / ``sentence`` / ``swap`` (``asmr.eval.unanswerable``: 30 % of the
answerable questions, ``--seed``), or, without a third field, the questions the file marks as having
no answer (``gold_pids: []`` or ``"answerable": false``). Each source's memory is built once under
``--work`` (with ``--embedder``, default MiniLM) and reused.

For every question it computes recall's confidence features (``asmr.eval.retrieval.refusal_features``)
and the baselines' scores (``baseline_score``: the cosine of the question and the best unit dense or
hybrid RAG would show, over ``--baseline-k`` units). On the ``--fit`` sources it fits the logistic
weights of ``asmr.retrieve.confidence`` (a little L2; each weight of the sign ``SIGNS`` gives it: a
signal that the memory states the answer never lowers confidence), and chooses every method's
threshold by one rule (``best_threshold``: the largest weighted mean, over the fitted sources, of
refusal recall minus false refusals; of the thresholds that come within 0.01 of it, the lowest). Each
``--fit`` is a group of sources that weighs as much as every other group, and within a group each
source weighs the same whatever its size (``source_weights``): with one group of data made by
construction (gold passages removed, sentences cut) and one of handbooks and conversations written
apart, neither kind outvotes the other by having more sources. Then, per
source, for asmr, dense and hybrid: ROC AUC, and refusal recall, false refusals and precision at the
threshold, each row marked in-sample or out-of-source; in ``--json`` also
``recall_at_10pct_false_refusals`` (refusal recall where at most 10 % of the answerable are refused). ``--write`` puts weights and thresholds into
python/asmr/retrieve/confidence_model.json with the command that fitted them; use it on tuning data only.

``--against DIR`` compares with another run of the same sources (its ``--work``, whose
``SOURCE.rows.json`` it reads: the features of other code): both are fitted the same way, and per
source it prints asmr's ROC AUC there and here, in sample and out of source, with a paired bootstrap
95 % interval of the change over the source's questions (``--bootstrap`` resamples, answerable and
unanswerable questions drawn apart). A change whose interval lies on one side of zero is one the
questions agree on; a signal that moves one source's interval below zero is not a gain.
"""
from __future__ import annotations

import argparse
import json
import shlex
import sys
from pathlib import Path

import numpy as np

from asmr.embed import DEFAULT_EMBEDDER, get_embedder
from asmr.eval.fit import sign_bounds, signed_logistic
from asmr.eval.retrieval import load_queries, refusal_features, roc_auc
from asmr.eval.unanswerable import MODES, make
from asmr.retrieve import RetrieveConfig
from asmr.retrieve.confidence import FEATURES, MODEL_PATH, SIGNS
from asmr.store import Memory, MemoryStateError, Writer
from asmr.units.read import iter_jsonl

METHODS = {"asmr": "confidence", "dense": "dense_score", "hybrid": "hybrid_score"}


def fit_logistic(x: np.ndarray, y: np.ndarray, weight: np.ndarray, signs: tuple[int, ...] | None = None,
                 l2: float = 1e-2) -> np.ndarray:
    """The bias and weights of the weighted logistic regression of ``y`` on ``x`` (a little L2), each
    weight of the sign ``signs`` gives its column (+1 at least 0, -1 at most 0, 0 free; default all free)."""
    a = np.hstack([np.ones((len(x), 1)), x])
    signs = signs if signs is not None else (0,) * x.shape[1]
    return signed_logistic(a, y, np.full(a.shape[1], l2), sign_bounds((0, *signs)), weight)


def source_questions(name: str, spec: str, seed: int) -> tuple[list, set[str], list]:
    """A ``--source`` NAME=CORPUS,QUERIES[,MODE]: its questions, the qids without an answer, and the
    documents its memory holds (MODE's construction applied: ``asmr.eval.unanswerable``, 30 %)."""
    parts = spec.split(",")
    if len(parts) not in (2, 3) or (len(parts) == 3 and parts[2] not in MODES):
        raise SystemExit(f"--source {name}={spec}: want CORPUS,QUERIES[,{'|'.join(MODES)}]")
    corpus, queries = Path(parts[0]), load_queries(parts[1])
    docs = list(iter_jsonl(corpus))
    natural = {q.qid for q in queries if not q.answerable}
    if len(parts) == 3:
        built = make(parts[2], queries, docs, 0.3, seed)
        return list(built.queries), set(built.qids) | natural, list(built.documents(docs))
    return queries, natural, docs


def source_memory(name: str, docs: list, work: Path, embedder: str) -> Path:
    """The source's memory under ``work``, built on first use (an ingest skips unchanged documents); a
    memory there of another embedder is refused in one line (exit 2)."""
    try:
        with Writer(work / name, embedder=embedder, progress=False) as w:
            w.ingest(docs, kb="eval")
    except MemoryStateError as exc:
        print(f"--source {name}: {exc}", file=sys.stderr)
        raise SystemExit(2) from None
    return work / name


def source_rows(name: str, spec: str, work: Path, embedder: str, seed: int, k: int,
                reuse: bool = False) -> dict:
    """Features and baseline scores of one source's questions, and which of them have no answer."""
    queries, unanswerable, docs = source_questions(name, spec, seed)
    cached = work / f"{name}.rows.json"  # --reuse-rows: the features of an earlier run, to refit only
    if reuse and cached.exists():
        rows = json.loads(cached.read_text())
        return {"rows": rows, "y": np.array([r["qid"] not in unanswerable for r in rows], float)}
    with Memory(source_memory(name, docs, work, embedder)) as m:
        rows = refusal_features(m, get_embedder(m.embed_model), queries, RetrieveConfig(),
                                baselines=("dense", "hybrid"), baseline_k=k)
    cached.write_text(json.dumps(rows))
    return {"rows": rows, "y": np.array([r["qid"] not in unanswerable for r in rows], float)}


# Thresholds whose gain is this close to the best count as the best: the mean gain over sources is
# flat over a wide range (0.64-0.76 within 0.01), and its argmax jumped by 0.05 when a few questions'
# features moved.
THRESHOLD_TOLERANCE = 0.01


def source_weights(groups: list[list[str]]) -> dict[str, float]:
    """Each source's share of the fit: every group the same, and within a group every source the same."""
    groups = [g for g in groups if g]
    return {n: 1 / len(groups) / len(g) for g in groups for n in g}


def best_threshold(scores: list[np.ndarray], answerable: list[np.ndarray],
                   weights: list[float] | None = None) -> float:
    """The threshold that maximises the mean, over sources (weighted by ``weights``, default each the
    same), of refusal recall minus false-refusal rate (Youden's J: refusing a no-answer question counts
    as much as answering an answerable one); of those within ``THRESHOLD_TOLERANCE`` of the best, the
    lowest.

    Where the fitted sources cannot tell thresholds apart, the one that refuses least: a false refusal
    leaves the user nothing, an answer is still checked by the verifier, and the issue's goal bounds
    false refusals (0.1) first. The low end of the plateau also held still where its middle did not:
    0.644 on the features of two versions of the code whose middles were 0.718 and 0.726."""
    candidates = np.unique(np.concatenate(scores))
    gains = np.array([np.average([np.mean(s[~a] < t) - np.mean(s[a] < t) for s, a in zip(scores, answerable)],
                                 weights=weights) for t in candidates])
    return float(candidates[gains >= gains.max() - THRESHOLD_TOLERANCE].min())


def recall_at_false_refusals(scores: np.ndarray, y: np.ndarray, rate: float = 0.1) -> float | None:
    """The share of unanswerable questions refused at the threshold that refuses at most ``rate`` of the
    answerable ones (the issue's goal is 0.8 at 0.1): a point of the ROC curve, whatever the threshold."""
    ans = np.sort(scores[y == 1])
    if not len(ans) or not (y == 0).any():
        return None
    return float(np.mean(scores[y == 0] < ans[min(int(np.floor(rate * len(ans))), len(ans) - 1)]))


def report_row(scores: np.ndarray, y: np.ndarray, threshold: float) -> dict:
    ans, una = y == 1, y == 0
    refused = scores < threshold
    return {"roc_auc": roc_auc(list(scores[ans]), list(scores[una])),
            "recall_at_10pct_false_refusals": recall_at_false_refusals(scores, y),
            "recall": float(refused[una].mean()) if una.any() else None,
            "false_refusal_rate": float(refused[ans].mean()) if ans.any() else None,
            "precision": float((refused & una).sum() / refused.sum()) if refused.any() else None,
            "answerable": int(ans.sum()), "unanswerable": int(una.sum())}


def _auc(scores: np.ndarray, y: np.ndarray) -> float:
    from scipy.stats import rankdata  # the bench extra's; ties count half, as roc_auc's
    ranks, pos = rankdata(scores), y == 1
    n1 = int(pos.sum())
    return float((ranks[pos].sum() - n1 * (n1 + 1) / 2) / (n1 * (len(y) - n1)))


def without(groups: list[list[str]], members: list[str]) -> list[list[str]]:
    """The fit's groups less ``members`` (a group left empty is dropped)."""
    return [kept for g in groups if (kept := [n for n in g if n not in members])]


def compare(against: Path, data: dict, fit: list[list[str]], leave_out: list[str], fitted,
            resamples: int) -> None:
    """asmr's ROC AUC with the rows of ``against`` and with these, in sample and out of source, each
    change with a paired bootstrap 95 % interval over the source's questions."""
    other = {}
    for n in data:
        path = against / f"{n}.rows.json"
        if not path.exists():
            raise SystemExit(f"--against {against}: no {path.name} (run this script there with the same sources)")
        rows = json.loads(path.read_text())
        if [r["qid"] for r in rows] != [r["qid"] for r in data[n]["rows"]]:
            raise SystemExit(f"--against {against}: {path.name} holds other questions than this run's {n}")
        other[n] = {"rows": rows, "y": data[n]["y"]}
    views = [("in sample", fit, [n for g in fit for n in g])]
    for family in leave_out:
        label, _, members = family.partition("=")
        members = [n for n in members.split(",") if n in data]
        views.append((f"out of source ({label})", without(fit, members), members))
    rng = np.random.default_rng(0)
    print(f"\n| source | fitted | AUC --against | AUC here | change [95 % interval, {resamples} resamples] |")
    print("|---|---|---:|---:|---|")
    for label, on, members in views:
        before, after = fitted(on, other)[2], fitted(on, data)[2]
        for n in (members if label != "in sample" else list(data)):
            y = data[n]["y"]
            a, b = before[n]["asmr"], after[n]["asmr"]
            pos, neg = np.flatnonzero(y == 1), np.flatnonzero(y == 0)
            deltas = []
            for _ in range(resamples):
                i = np.concatenate([rng.choice(pos, len(pos)), rng.choice(neg, len(neg))])
                deltas.append(_auc(b[i], y[i]) - _auc(a[i], y[i]))
            lo, hi = np.percentile(deltas, [2.5, 97.5])
            side = " (above 0)" if lo > 0 else " (below 0)" if hi < 0 else ""
            view = label if label != "in sample" or n in members else "never fitted"
            print(f"| {n} | {view} | {_auc(a, y):.3f} | {_auc(b, y):.3f} | "
                  f"{_auc(b, y) - _auc(a, y):+.3f} [{lo:+.3f}, {hi:+.3f}]{side} |")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--source", action="append", default=[], metavar="NAME=CORPUS,QUERIES[,MODE]", required=True)
    ap.add_argument("--fit", action="append", required=True, metavar="NAME,...",
                    help="a group of sources fitted on (repeatable: each group weighs the same, and each "
                         "source within it)")
    ap.add_argument("--work", type=Path, default=Path("calibration-memories"), help="where the memories are built")
    ap.add_argument("--embedder", default=DEFAULT_EMBEDDER,
                    help=f"the model of the memories built and of the weights fitted (default "
                         f"{DEFAULT_EMBEDDER})")
    ap.add_argument("--seed", type=int, default=0, help="which questions the constructions pick (default 0)")
    ap.add_argument("--baseline-k", type=int, default=6, help="units a baseline shows (default 6, eval answers')")
    ap.add_argument("--leave-out", action="append", default=[], metavar="FAMILY=NAME,...",
                    help="also refit without these sources (one family: one corpus, its constructions) and score "
                         "them out of source (repeatable)")
    ap.add_argument("--json", type=Path, default=None, help="also write the report here")
    ap.add_argument("--reuse-rows", action="store_true",
                    help="reuse the features an earlier run saved under --work (refit only; not after a change "
                         "of the signals)")
    ap.add_argument("--against", type=Path, default=None, metavar="DIR",
                    help="another run's --work: compare asmr's AUC with its features, with bootstrap intervals")
    ap.add_argument("--bootstrap", type=int, default=1000, metavar="N", help="resamples for --against")
    ap.add_argument("--write", action="store_true", help=f"write {MODEL_PATH.name}")
    args = ap.parse_args()
    specs = dict(s.split("=", 1) for s in args.source)
    fit = [[n for n in group.split(",") if n] for group in args.fit]
    if unknown := [n for g in fit for n in g if n not in specs]:
        ap.error(f"--fit {unknown}: no such --source")
    named = [n for g in fit for n in g]
    if not named:
        ap.error("--fit: no source named (give NAME,... of the --source names)")
    if repeated := sorted({n for n in named if named.count(n) > 1}):
        ap.error(f"--fit {repeated}: named more than once (a source belongs to one group, once)")
    data = {}
    for name, spec in specs.items():
        data[name] = source_rows(name, spec, args.work, args.embedder, args.seed, args.baseline_k,
                                 args.reuse_rows)
        print(f"{name}: {len(data[name]['y'])} questions, {int((data[name]['y'] == 0).sum())} unanswerable",
              file=sys.stderr, flush=True)

    def fitted(groups: list[list[str]], data=data) -> tuple[np.ndarray, dict, dict]:
        """Weights fitted on ``groups`` (``source_weights``), every method's threshold chosen on them, and
        every source's scores."""
        share = source_weights(groups)
        on = list(share)
        features = {n: np.array([[r.get(f, 0.0) for f in FEATURES] for r in data[n]["rows"]]) for n in data}
        x = np.vstack([features[n] for n in on])
        y = np.concatenate([data[n]["y"] for n in on])
        weight = np.concatenate([np.full(len(data[n]["y"]), len(y) * share[n] / len(data[n]["y"]))
                                 for n in on])
        w = fit_logistic(x, y, weight, tuple(SIGNS[f] for f in FEATURES))
        scores = {n: {"asmr": 1 / (1 + np.exp(-(w[0] + features[n] @ w[1:]))),
                      **{m: np.array([r[col] for r in data[n]["rows"]]) for m, col in METHODS.items() if m != "asmr"}}
                  for n in data}
        return w, {m: best_threshold([scores[n][m] for n in on], [data[n]["y"] == 1 for n in on],
                                     [share[n] for n in on]) for m in METHODS}, scores

    w, thresholds, scores = fitted(fit)
    share = source_weights(fit)
    report = {"weights": dict(zip(("bias",) + FEATURES, np.round(w, 3).tolist())), "thresholds": thresholds,
              "fit": fit, "sources": {n: {"in_sample": n in share,
                                          **{m: report_row(scores[n][m], data[n]["y"], thresholds[m])
                                             for m in METHODS}} for n in data}}
    # Out of source: each family refitted without it (weights and thresholds), scored on it.
    for family in args.leave_out:
        label, _, members = family.partition("=")
        members = [n for n in members.split(",") if n in data]
        _, t_out, s_out = fitted(without(fit, members))
        for n in members:
            report["sources"][n]["out_of_source"] = {"family": label, **{
                m: report_row(s_out[n][m], data[n]["y"], t_out[m]) for m in METHODS}}
    print("weights: " + ", ".join(f"{k} {v}" for k, v in report["weights"].items()))
    print("thresholds: " + ", ".join(f"{m} {t:.3f}" for m, t in thresholds.items()))
    print("| source | fitted on it? | questions (unanswerable) | " + " | ".join(
        f"{m} AUC | {m} refusal recall / false refusals" for m in METHODS) + " |")
    print("|---|---|---|" + "---:|---:|" * len(METHODS))

    def fmt(v):
        return "–" if v is None else f"{v:.2f}"
    for n, s in report["sources"].items():
        a = s["asmr"]
        views = [("in-sample" if s["in_sample"] else "out-of-source", s)]
        if "out_of_source" in s:
            views.append((f"out-of-source (refitted without {s['out_of_source']['family']})", s["out_of_source"]))
        for label, v in views:
            print(f"| {n} | {label} | {a['answerable'] + a['unanswerable']} ({a['unanswerable']}) | " +
                  " | ".join(f"{fmt(v[m]['roc_auc'])} | {fmt(v[m]['recall'])} / {fmt(v[m]['false_refusal_rate'])}"
                             for m in METHODS) + " |")
    if args.against is not None:
        compare(args.against, data, fit, args.leave_out, fitted, args.bootstrap)
    if args.json:
        args.json.write_text(json.dumps(report, indent=2))
    if args.write:
        model = json.loads(MODEL_PATH.read_text(encoding="utf-8"))
        fitted = {"weights": [round(float(v), 3) for v in w], "threshold": round(thresholds["asmr"], 3),
                  "baselines": {m: round(thresholds[m], 3) for m in ("dense", "hybrid")},
                  "fitted_by": "python " + " ".join(shlex.quote(a) for a in sys.argv)}
        if args.embedder == DEFAULT_EMBEDDER:  # the default model, also of embedders without their own
            for other in model.get("embedders", {}).values():  # fitted on the features of their day
                other.setdefault("features", list(model["features"]))
            model.update({"features": list(FEATURES), **fitted,
                          "baselines_note": "refusal thresholds of the evaluation's dense and hybrid RAG on the "
                                            "cosine of the question and their best unit, chosen by the same rule "
                                            "as ours"})
        else:  # another model's cosines are on another scale: its own weights and thresholds
            if list(model["features"]) != list(FEATURES):
                raise SystemExit(f"{MODEL_PATH}: fit the default embedder's model for these features first")
            model.setdefault("embedders", {}).setdefault(args.embedder, {}).update(features=list(FEATURES), **fitted)
        MODEL_PATH.write_text(json.dumps(model, indent=2) + "\n", encoding="utf-8")
        print(f"wrote {MODEL_PATH}")


if __name__ == "__main__":
    main()
