#!/usr/bin/env python3
"""all-MiniLM-L6-v2 on a GPU: asmr's embedder (runtime "torch", sentence-transformers) over synthetic units
as a re-index embeds them, in fp32 (as shipped) and fp16.

    python bench/gpu_embed.py [--units 1000000] [--budget-s 90] [--device cuda] [--json-out F]
    python bench/gpu_embed.py --write-reference F [--reference-units 2000]   # on a CPU, torch fp32

Units are two to four of bench/reindex.py's sentences (about 25 to 70 words). Per row (precision, batch):
``units_per_s`` over the units embedded before ``--budget-s`` ran out (whole chunks of 50,000, tokenization
included), ``question_p50_ms`` / ``question_p95_ms`` for single questions, one call each after a warm-up,
and with ``--reference`` the lowest and median cosine of the first units' vectors to vectors of the same
units made on a CPU by the torch path in fp32.
"""
from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import sys
import time

import numpy as np

BENCH = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, BENCH)
from reindex import _sentence  # noqa: E402  (the re-index benchmark's sentences)

# bench/ off the path again (Python put it first too): bench/kernels.py would shadow the package
# `kernels` that transformers probes for.
sys.path[:] = [p for p in sys.path if os.path.abspath(p or ".") != BENCH]

CHUNK = 50_000


def make_units(n: int, seed: int = 0) -> list[str]:
    """``n`` units; sentences drawn from a pool of 50,000 so that a million units are made in seconds."""
    rng = random.Random(seed)
    pool = [_sentence(rng) for _ in range(50_000)]
    return [" ".join(rng.choices(pool, k=rng.randint(2, 4))) for _ in range(n)]


def load(device: str, batch: int, precision: str):
    from asmr.embed import MiniLMEmbedder

    embedder = MiniLMEmbedder(batch_size=batch, device=device, runtime="torch")
    model = embedder._model  # the sentence-transformers model the torch runtime wraps
    model.half() if precision == "fp16" else model.float()
    return embedder


def row(embedder, units: list[str], questions: list[str], budget_s: float, reference: np.ndarray | None,
        precision: str, batch: int, device: str) -> dict:
    import torch

    embedder.embed(units[:2 * batch])  # warm-up: kernels chosen, memory taken
    done, vectors, start = 0, [], time.perf_counter()
    while done < len(units) and time.perf_counter() - start < budget_s:
        out = embedder.embed(units[done:done + CHUNK])
        if done == 0:
            vectors.append(out[:len(reference) if reference is not None else 0])
        done += len(out)
    if device == "cuda":
        torch.cuda.synchronize()
    seconds = time.perf_counter() - start
    times = []
    for q in questions:
        t = time.perf_counter()
        embedder.embed_questions([q])
        times.append((time.perf_counter() - t) * 1e3)
    times = times[10:]  # warm-up
    result = {"precision": precision, "batch": batch, "units": done, "seconds": round(seconds, 2),
              "units_per_s": round(done / seconds), "question_p50_ms": round(statistics.median(times), 2),
              "question_p95_ms": round(float(np.percentile(times, 95)), 2)}
    if reference is not None:
        first = vectors[0]
        cos = np.sum(first * reference[:len(first)], axis=1)
        result.update(min_cosine_to_cpu_fp32=round(float(cos.min()), 5),
                      median_cosine_to_cpu_fp32=round(float(np.median(cos)), 5))
    return result


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--units", type=int, default=1_000_000, help="units made (default 1,000,000)")
    ap.add_argument("--budget-s", type=float, default=90.0, help="seconds of embedding per row (whole chunks)")
    ap.add_argument("--rows", default="fp32:128,fp16:128,fp16:512", help="precision:batch, comma-separated")
    ap.add_argument("--device", default="cuda", help="torch device (default cuda; cpu to try the script)")
    ap.add_argument("--questions", type=int, default=210, help="single questions timed (the first 10 warm up)")
    ap.add_argument("--reference", help=".npy of CPU fp32 vectors of the first units (--write-reference)")
    ap.add_argument("--write-reference", metavar="F", help="write that .npy here (CPU, torch fp32) and stop")
    ap.add_argument("--reference-units", type=int, default=2000)
    ap.add_argument("--json-out", default=None, help="JSON path (default: $OUT/gpu_embed.json when $OUT is set)")
    args = ap.parse_args()
    specs = []
    for spec in args.rows.split(","):
        precision, _, batch = spec.partition(":")
        if precision not in ("fp32", "fp16") or not batch.isdigit() or int(batch) < 1:
            ap.error(f"--rows {spec!r}: each row is PRECISION:BATCH, PRECISION fp32 or fp16, BATCH a positive number")
        specs.append((precision, int(batch)))
    if args.units < 1 or args.budget_s <= 0:
        ap.error("--units and --budget-s must be positive")
    if args.questions < 11:
        ap.error(f"--questions {args.questions}: at least 11 (the first 10 warm up)")
    if args.reference and not os.path.isfile(args.reference):
        ap.error(f"--reference {args.reference}: no such file (write one with --write-reference)")
    if args.device.startswith("cuda") and not args.write_reference:
        import torch
        if not torch.cuda.is_available():
            ap.error(f"--device {args.device}: torch sees no CUDA device (use --device cpu to try the script)")

    if args.write_reference:
        embedder = load("cpu", 128, "fp32")
        np.save(args.write_reference, embedder.embed(make_units(args.reference_units)))
        return
    t = time.perf_counter()
    units = make_units(args.units)
    print(f"{len(units)} units made in {time.perf_counter() - t:.1f} s", flush=True)
    questions = [f"Which {u.split()[0].lower()} {u.split()[1]} holds {u.split()[-1][:-1]}?" for u in units[:args.questions]]
    reference = np.load(args.reference) if args.reference else None
    rows = []
    for precision, batch in specs:
        t = time.perf_counter()
        embedder = load(args.device, batch, precision)
        load_s = time.perf_counter() - t
        rows.append(row(embedder, units, questions, args.budget_s, reference, precision, batch, args.device))
        rows[-1]["load_s"] = round(load_s, 2)
        print(json.dumps(rows[-1]), flush=True)
        del embedder
    device = args.device
    if device == "cuda":
        import torch
        device = torch.cuda.get_device_name()
    result = {"device": device, "units_made": len(units), "rows": rows}
    path = args.json_out or (os.path.join(os.environ["OUT"], "gpu_embed.json") if os.environ.get("OUT") else None)
    if path:
        with open(path, "w") as f:
            json.dump(result, f, indent=1)
    print(json.dumps(result))


if __name__ == "__main__":
    main()
