"""all-MiniLM-L6-v2 on the CPU: the torch path (sentence-transformers) against ONNX Runtime (asmr.embed.onnx),
fp32 and 8-bit.

    python bench/embed.py [--sentences 2000] [--questions 200] [--repeats 3] [--threads 2] [--json]

Per runtime, on the HotpotQA sample in ../shared/data:

- ``load_s``: a fresh process importing asmr's embedder and loading the model (median of ``--repeats``);
- ``units_per_s``: short units (the corpus's sentences) embedded in one call, as an ingest does (median);
- ``query_p50_ms`` / ``query_p95_ms``: single questions, one call each, after a warm-up;
- ``min_cosine_to_torch``: the lowest cosine of a unit's vector to the torch path's;
- ``hotpotqa_recall@5``: dense retrieval alone, passages (title and text) against the questions' gold.

Both runtimes get ``--threads`` threads (torch.set_num_threads, the ONNX session's intra-op pool).
"""
from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

DATA = Path(__file__).resolve().parent.parent.parent / "shared" / "data"
RUNTIMES = ("torch", "onnx", "onnx-int8")


def load_seconds(runtime: str) -> float:
    """A fresh process: import asmr's embedder and load the model."""
    probe = ("import time; t = time.perf_counter(); from asmr.embed import MiniLMEmbedder; "
             f"MiniLMEmbedder(runtime={runtime!r}); print(time.perf_counter() - t)")
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    return float(out.stdout.split()[-1])


def embedder(runtime: str, threads: int):
    from asmr.embed import MiniLMEmbedder

    if runtime == "torch":
        import torch
        torch.set_num_threads(threads)
    return MiniLMEmbedder(runtime=runtime, threads=threads)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sentences", type=int, default=2000)
    ap.add_argument("--questions", type=int, default=200)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()

    from asmr.text.sentences import split_sentences

    docs = [json.loads(line) for line in (DATA / "hotpotqa_train.corpus.jsonl").open()]
    queries = [json.loads(line) for line in (DATA / "hotpotqa_train.queries.jsonl").open()]
    queries = [q for q in queries if q.get("gold_pids")]
    sentences = [s for d in docs for s in split_sentences(d["text"])][:args.sentences]
    passages = [f"{d['title']}\n{d['text']}" for d in docs]
    pids = [d.get("pid") or d.get("id") for d in docs]
    rows, reference = [], None
    for runtime in RUNTIMES:
        load = statistics.median(load_seconds(runtime) for _ in range(args.repeats))
        e = embedder(runtime, args.threads)
        e.embed(sentences[:64])  # warm-up
        rates, vectors = [], None
        for _ in range(args.repeats):
            t = time.perf_counter()
            vectors = e.embed(sentences)
            rates.append(len(sentences) / (time.perf_counter() - t))
        if reference is None:
            reference = vectors
        for q in queries[:10]:
            e.embed_questions([q["question"]])
        lat = []
        for q in queries[:args.questions]:
            t = time.perf_counter()
            e.embed_questions([q["question"]])
            lat.append((time.perf_counter() - t) * 1e3)
        pv = e.embed(passages)
        qv = e.embed_questions([q["question"] for q in queries])
        top = np.argsort(-(qv @ pv.T), axis=1)[:, :5]
        recall = float(np.mean([bool(set(q["gold_pids"]) & {pids[i] for i in t}) for q, t in zip(queries, top)]))
        rows.append({"runtime": runtime, "threads": args.threads, "units_per_s": round(statistics.median(rates), 1),
                     "units_per_s_runs": [round(r, 1) for r in rates],
                     "query_p50_ms": round(float(np.percentile(lat, 50)), 2),
                     "query_p95_ms": round(float(np.percentile(lat, 95)), 2), "load_s": round(load, 3),
                     "min_cosine_to_torch": round(float(np.min(np.sum(vectors * reference, axis=1))), 6),
                     "hotpotqa_recall@5": round(recall, 4)})
    if args.json:
        print(json.dumps({"sentences": len(sentences), "questions": args.questions, "rows": rows}, indent=2))
        return
    print(f"{len(sentences)} sentences, {args.questions} questions, {args.threads} threads, median of {args.repeats}")
    for r in rows:
        print(f"{r['runtime']:6s} {r['units_per_s']:8.1f} units/s  question P50 {r['query_p50_ms']:.2f} ms "
              f"P95 {r['query_p95_ms']:.2f} ms  load {r['load_s']:.2f} s  min cos {r['min_cosine_to_torch']:.6f}  "
              f"HotpotQA dense Recall@5 {r['hotpotqa_recall@5']:.3f}")


if __name__ == "__main__":
    main()
