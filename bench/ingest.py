"""Ingest throughput: parse + chunk + store + indexes, with embeddings precomputed; then embedding alone.

    python bench/ingest.py                      # 1,000,000 units, 3 runs
    python bench/ingest.py --units 100000 --repeats 1

A generated Markdown corpus (front matter, sections, paragraphs, lists, tables,
cross-references) is written once to --workdir. Each run ingests it into a fresh
memory in a child process; the run's peak resident memory is that child's plus
its planner process's (the sum of the two peaks: an upper bound).
"Precomputed" embeddings are random unit vectors handed out in call order: the
store sees real 384-d vectors and the model costs nothing; the embedding
section measures the model on the same texts separately.
"""
from __future__ import annotations

import argparse
import json
import os
import random
import resource
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
from peak_memory import PeakMemory

UNITS_PER_DOC_APPROX = 50
WORDS = ("server port worker queue cache index shard replica backup restore token quota limit region "
         "cluster node disk memory latency throughput request response policy version release rollout "
         "migration schema table column record field value default option setting timeout retry").split()


def _sentence(rng: random.Random, i: int) -> str:
    words = rng.choices(WORDS, k=rng.randint(6, 14))
    words[0] = words[0].capitalize()
    return " ".join(words) + f" {rng.randint(1, 9999)}" + rng.choice([".", ".", ".", "!", "?"])


def generate_doc(rng: random.Random, d: int) -> str:
    """About 50 units: headings, paragraphs, a list with items, a table with rows."""
    out = [f"---\ntitle: Document {d}\ntype: {rng.choice(['spec', 'manual', 'faq', 'notes'])}\n"
           f"effective_date: 2026-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}\n---\n",
           f"# Document {d}\n"]
    for s in range(1, 6):
        out.append(f"## {s}. Section {s} of document {d}\n")
        for _ in range(3):
            out.append(" ".join(_sentence(rng, d) for _ in range(rng.randint(1, 3))) + "\n")
        if s % 2:
            out.append(f"The options for section {s} are:\n\n" +
                       "\n".join(f"- {_sentence(rng, d)}" for _ in range(3)) + "\n")
        else:
            out.append("| Setting | Default | Notes |\n|---|---|---|\n" + "\n".join(
                f"| {rng.choice(WORDS)}_{r} | {rng.randint(1, 500)} | {_sentence(rng, d)} |" for r in range(3))
                + "\n")
        if s == 3:
            out.append(f"See section {rng.randint(1, 5)} and [the next document](doc{d + 1}.md).\n")
    return "\n".join(out)


def write_corpus(directory: Path, units: int, seed: int) -> int:
    """Write Markdown files until chunking them gives ``units`` units; return the count of files."""
    from asmr.units.read import chunk_document, read_path

    marker = directory / "corpus.json"
    if marker.exists():
        meta = json.loads(marker.read_text())
        if meta == {"units": units, "seed": seed, **{k: meta[k] for k in ("files", "chunked")}}:
            return meta["files"]
    shutil.rmtree(directory, ignore_errors=True)
    directory.mkdir(parents=True)
    rng = random.Random(seed)
    total = files = 0
    while total < units:
        path = directory / f"doc{files}.md"
        path.write_text(generate_doc(rng, files))
        total += len(chunk_document(read_path(path)).chunks)
        files += 1
    marker.write_text(json.dumps({"units": units, "seed": seed, "files": files, "chunked": total}))
    return files


class PrecomputedEmbedder:
    """Hands out rows of a fixed pool of random unit vectors: embeddings "already computed"."""

    def __init__(self, dim: int, pool: int = 65536, seed: int = 0):
        rng = np.random.default_rng(seed)
        self.pool = rng.standard_normal((pool, dim), dtype=np.float32)
        self.pool /= np.linalg.norm(self.pool, axis=1, keepdims=True)
        self.dim, self.name, self._next = dim, f"precomputed-{dim}", 0

    def embed(self, texts, *, progress=False):
        idx = (np.arange(len(texts)) + self._next) % len(self.pool)
        self._next += len(texts)
        return self.pool[idx]


def child(corpus: Path, memory: Path, dim: int, flat_max: int) -> None:
    from asmr.store import Writer
    from asmr.units.read import read_path

    files = sorted(corpus.glob("*.md"), key=lambda p: int(p.stem[3:]))
    t0 = time.perf_counter()
    with Writer(memory, embedder=PrecomputedEmbedder(dim), flat_max=flat_max, progress=False) as w:
        report = w.ingest((read_path(p, root=corpus) for p in files), total=len(files))
    seconds = time.perf_counter() - t0
    units = sum(d.units for d in report.documents)
    # The writer's planner process (if it started one) has exited: its peak is the children's.
    own = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    planner = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    print(json.dumps({"units": units, "documents": len(report.documents), "seconds": seconds,
                      "timings": report.timings, "peak_rss_mb": own + planner, "writer_rss_mb": own,
                      "planner_rss_mb": planner,
                      "dense": "hnsw" if report.active_units > flat_max else "flat"}))


def embedding_throughput(corpus: Path, sample: int) -> list[tuple[str, float, int]]:
    from asmr.embed import get_embedder
    from asmr.units.read import chunk_document, read_path

    texts: list[str] = []
    for p in sorted(corpus.glob("*.md"), key=lambda p: int(p.stem[3:])):
        texts.extend(c.content for c in chunk_document(read_path(p)).chunks)
        if len(texts) >= sample:
            break
    texts = texts[:sample]
    rows = []
    for name in ("hash-384", "all-MiniLM-L6-v2"):
        try:
            emb = get_embedder(name)
        except (RuntimeError, ImportError) as exc:
            print(f"# {name}: not measured ({exc})")
            continue
        emb.embed(texts[:64])  # warm-up: first call pays one-time costs
        t = time.perf_counter()
        emb.embed(texts)
        rows.append((name, len(texts) / (time.perf_counter() - t), len(texts)))
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--units", type=int, default=1_000_000, help="units in the generated corpus")
    ap.add_argument("--repeats", type=int, default=3, help="full ingest runs (median reported)")
    ap.add_argument("--dim", type=int, default=384, help="vector dimension (all-MiniLM-L6-v2: 384)")
    ap.add_argument("--flat-max", type=int, default=None,
                    help="active units above which the dense index is HNSW (default: the store's default)")
    ap.add_argument("--embed-sample", type=int, default=2000, help="texts for the embedding throughput rows")
    ap.add_argument("--workdir", type=Path, default=Path("/tmp/asmr-bench-ingest"))
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--child", nargs=2, type=Path, help=argparse.SUPPRESS)
    args = ap.parse_args()
    from asmr.store.writer import DEFAULT_FLAT_MAX

    flat_max = DEFAULT_FLAT_MAX if args.flat_max is None else args.flat_max
    if args.child:
        child(args.child[0], args.child[1], args.dim, flat_max)
        return

    corpus = args.workdir / f"corpus-{args.units}-{args.seed}"
    t = time.perf_counter()
    files = write_corpus(corpus, args.units, args.seed)
    print(f"# corpus: {files} Markdown files in {corpus} ({time.perf_counter() - t:.1f} s to generate or check)")
    runs = []
    for r in range(args.repeats):
        memory = args.workdir / "memory"
        shutil.rmtree(memory, ignore_errors=True)
        proc = subprocess.Popen([sys.executable, __file__, "--child", str(corpus), str(memory), "--dim",
                                 str(args.dim), "--flat-max", str(flat_max)], stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True)
        with PeakMemory(proc.pid, interval=0.1) as tree:
            stdout, stderr = proc.communicate()
        if proc.returncode:
            sys.exit(f"run {r + 1} failed:\n{stderr}")
        run = json.loads(stdout.strip().splitlines()[-1])
        run["sampled_mb"] = tree.peak / 2**20
        runs.append(run)
        print(f"# run {r + 1}: {run['units']:,} units in {run['seconds']:.1f} s = "
              f"{run['units'] / run['seconds']:,.0f} units/s, peak RSS {run['peak_rss_mb']:,.0f} MB "
              f"(writer {run['writer_rss_mb']:,.0f} + planner process {run['planner_rss_mb']:,.0f}; "
              f"both together, sampled: {run['sampled_mb']:,.0f}), "
              f"stages {', '.join(f'{k} {v:.1f}' for k, v in run['timings'].items())}")
    shutil.rmtree(args.workdir / "memory", ignore_errors=True)

    med = statistics.median
    rate = med(r["units"] / (r["seconds"] - r["timings"]["dense"]) for r in runs)
    rate_all = med(r["units"] / r["seconds"] for r in runs)
    print(f"\n## Ingest, embeddings precomputed ({runs[0]['units']:,} units, {runs[0]['documents']:,} documents, "
          f"dense index {runs[0]['dense']}, median of {len(runs)} runs, {os.cpu_count()} cores)\n")
    print("| measure | value | goal |\n|---|---:|---|")
    print(f"| units/s: parse + chunk + store + BM25 | {rate:,.0f} | ≥ 20,000 "
          f"{'met' if rate >= 20000 else 'missed'} |")
    print(f"| units/s: the same and the dense index ({runs[0]['dense']}) | {rate_all:,.0f} | |")
    peak = med(r["peak_rss_mb"] for r in runs)
    print(f"| peak resident memory (writer's peak + planner's peak) | {peak:,.0f} MB | "
          f"< 4,096 MB {'met' if peak < 4096 else 'missed'} |")
    print(f"| peak memory (both processes' PSS, sampled every 0.1 s) | "
          f"{med(r['sampled_mb'] for r in runs):,.0f} MB | |")
    for stage in runs[0]["timings"]:
        print(f"| stage: {stage} | {med(r['timings'][stage] for r in runs):.1f} s | |")

    print(f"\n## Embedding throughput ({args.embed_sample:,} unit texts of the same corpus)\n")
    print("| embedder | units/s |\n|---|---:|")
    for name, per_s, n in embedding_throughput(corpus, args.embed_sample):
        print(f"| {name} | {per_s:,.0f} |")


if __name__ == "__main__":
    main()
