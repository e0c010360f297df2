"""How much ASMR's recall adds to the rankers it is built from, source by source (issue 20's own table).

    D=../shared/data
    python bench/recall_margin.py --work DIR --embedder multilingual-e5-small \\
        --source hotpot-removed=$D/hotpotqa_train.corpus.jsonl,$D/hotpotqa_train.queries.jsonl,removed \\
        --source hotel=HOTEL/corpus.jsonl,HOTEL/queries.jsonl ... --read hotpot-removed [--json OUT]

Sources are given as ``bench/calibrate_confidence.py`` takes them (NAME=CORPUS,QUERIES[,MODE]; a MODE
makes 30 % of the answerable questions unanswerable, ``--seed``), and their memories are built the
same way under ``--work`` and reused, so one ``--work`` serves both scripts. For the answerable
questions of each source it runs ``asmr.eval.retrieval.evaluate`` (the command ``asmr eval retrieval``
runs) and prints Recall@5 of BM25, dense, hybrid and ASMR, and ASMR's margin over the better of dense
and hybrid: the issue asks for five points on data nobody tuned on. Sources named in ``--read`` are
marked "read" (in sample for a choice made on them); the others "never read". Then the mean margin
and how many sources reach ``--goal``, for each group apart.
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from calibrate_confidence import source_memory, source_questions

from asmr.embed import DEFAULT_EMBEDDER, get_embedder
from asmr.eval.retrieval import evaluate
from asmr.store import Memory

METHODS = ("bm25", "dense", "hybrid", "asmr")


def margin(recall: dict[str, float]) -> float:
    """ASMR's Recall@5 over the better of dense and hybrid RAG's."""
    return recall["asmr"] - max(recall["dense"], recall["hybrid"])


def summary(rows: list[dict], goal: float) -> dict:
    """Per status ("read", "never read"): sources, mean margin, and how many reach ``goal``."""
    out = {}
    for status in ("read", "never read"):
        margins = [r["margin"] for r in rows if r["status"] == status]
        if margins:
            out[status] = {"sources": len(margins), "mean_margin": sum(margins) / len(margins),
                           "at_goal": sum(m >= goal for m in margins)}
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--source", action="append", required=True, metavar="NAME=CORPUS,QUERIES[,MODE]")
    ap.add_argument("--read", action="append", default=[], metavar="NAME,...",
                    help="sources read or tuned on (marked in sample); the rest are reported as never read")
    ap.add_argument("--work", type=Path, default=Path("calibration-memories"),
                    help="where the memories are built")
    ap.add_argument("--embedder", default=DEFAULT_EMBEDDER,
                    help=f"the model of the memories built (default {DEFAULT_EMBEDDER}); memories already "
                         "under --work must be of it")
    ap.add_argument("--seed", type=int, default=0, help="which questions the constructions pick (default 0)")
    ap.add_argument("--goal", type=float, default=0.05, help="the margin counted as met (default 0.05)")
    ap.add_argument("--json", type=Path, default=None, help="also write the rows and the summary here")
    args = ap.parse_args()
    if bad := [s for s in args.source if "=" not in s]:
        ap.error(f"--source {bad[0]!r}: want NAME=CORPUS,QUERIES[,MODE]")
    specs = dict(s.split("=", 1) for s in args.source)
    read = {n for group in args.read for n in group.split(",") if n}
    if unknown := sorted(read - set(specs)):
        ap.error(f"--read {unknown}: no such --source")
    rows = []
    for name, spec in specs.items():
        queries, unanswerable, docs = source_questions(name, spec, args.seed)
        answerable = [q for q in queries if q.answerable and q.qid not in unanswerable]
        if not answerable:
            ap.error(f"--source {name}: no answerable question to measure recall on")
        with Memory(source_memory(name, docs, args.work, args.embedder)) as m:
            report = evaluate(m, get_embedder(m.embed_model), answerable, methods=METHODS)
            model = m.embed_model
        recall = {k: report["methods"][k]["recall@5"] for k in METHODS}
        rows.append({"source": name, "status": "read" if name in read else "never read", "embedder": model,
                     "questions": len(answerable), "recall@5": recall, "margin": margin(recall)})
        print(f"{name}: {len(answerable)} answerable questions", file=sys.stderr, flush=True)
    print(f"{'source':<22} {'status':<11} {'n':>4}  " + " ".join(f"{k:>6}" for k in METHODS) + "  margin")
    for r in rows:
        rc = r["recall@5"]
        print(f"{r['source']:<22} {r['status']:<11} {r['questions']:>4}  "
              + " ".join(f"{rc[k]:6.3f}" for k in METHODS) + f"  {r['margin']:+.3f}")
    total = summary(rows, args.goal)
    for status, s in total.items():
        print(f"{status}: mean margin {s['mean_margin']:+.3f}, {s['at_goal']} of {s['sources']} sources at "
              f"{args.goal:+.2f} or more")
    if args.json:
        args.json.write_text(json.dumps({"rows": rows, "summary": total, "goal": args.goal}, indent=2))


if __name__ == "__main__":
    main()
