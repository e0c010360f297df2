"""Recall latency on a generated memory: P50/P95 of asmr.retrieve, and the graph build time.

    python bench/retrieval.py                          # 1,000,000 units
    python bench/retrieval.py --units 100000 --queries 300

The memory holds generated units that name people, places and projects
(so the real graph builder finds entities) with precomputed clustered vectors:
a unit's vector is its topic's centre plus noise, derived from the text, so a
question gets its vector the same way at no cost. Latency is measured without
the question's embedding (the issue's first figure), and the embedding of one
question by all-MiniLM-L6-v2 is timed separately and added for the second.
Reported beside it, in the same run: dense search alone (faiss) and BM25 alone.
"""
from __future__ import annotations

import argparse
import re
import shutil
import statistics
import time
import zlib
from pathlib import Path

import numpy as np

TOPICS = 5000
WORDS = ("alpha beta gamma delta river stone forest harbor engine signal garden bridge tower field "
         "market valley winter summer copper silver").split()


def name(rng, kind: str) -> str:
    return f"{kind.capitalize()} {rng.choice(['Ka', 'Lo', 'Mi', 'Ta', 'Ve', 'Zo'])}{rng.integers(0, 3000)}"


def unit_text(rng, topic: int) -> str:
    words = " ".join(rng.choice(WORDS, size=6))
    return (f"{name(rng, 'person')} met {name(rng, 'city')} officials about project t{topic} "
            f"and {words}.")


class ClusteredEmbedder:
    """A unit's vector: the centre of its topic ("project tN" in the text) plus text-seeded noise."""

    def __init__(self, dim: int = 384, noise: float = 0.6, seed: int = 0):
        rng = np.random.default_rng(seed)
        self.centres = rng.standard_normal((TOPICS, dim), dtype=np.float32)
        self.dim, self.noise, self.name = dim, noise, f"clustered-{dim}"
        self._topic = re.compile(r"project t(\d+)")

    def embed(self, texts, *, progress=False):
        out = np.empty((len(texts), self.dim), np.float32)
        for i, t in enumerate(texts):
            m = self._topic.search(t)
            c = self.centres[int(m.group(1)) % TOPICS] if m else 0
            noise = np.random.default_rng(zlib.crc32(t.encode())).standard_normal(self.dim, dtype=np.float32)
            out[i] = c + self.noise * noise
        out /= np.linalg.norm(out, axis=1, keepdims=True)
        return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--units", type=int, default=1_000_000)
    ap.add_argument("--queries", type=int, default=500)
    ap.add_argument("--workdir", type=Path, default=Path("/tmp/asmr-bench-retrieval"))
    ap.add_argument("--seed", type=int, default=3)
    args = ap.parse_args()

    from asmr.embed import get_embedder
    from asmr.graph import load_or_build
    from asmr.retrieve import RetrieveConfig, Retriever
    from asmr.store import Memory, Writer
    from asmr.units.model import Document

    rng = np.random.default_rng(args.seed)
    memory = args.workdir / f"memory-{args.units}-{args.seed}"
    embedder = ClusteredEmbedder()
    if not (memory / "memory.sqlite").exists():
        shutil.rmtree(memory, ignore_errors=True)
        per_doc = 20
        docs = (Document(f"d{d}", "\n\n".join(unit_text(rng, int(rng.integers(0, TOPICS))) for _ in range(per_doc)),
                         "text", title=f"Document {d}", source=f"d{d}") for d in range(args.units // per_doc))
        t = time.perf_counter()
        with Writer(memory, embedder=embedder) as w:
            w.ingest(docs, total=args.units // per_doc)
        print(f"# ingest: {time.perf_counter() - t:.1f} s")
    with Memory(memory) as m:
        t = time.perf_counter()
        for old in memory.glob("graph.*.npz"):
            old.unlink()
        graph = load_or_build(m, RetrieveConfig().graph)
        build_s = time.perf_counter() - t
        r = Retriever(m, embedder, RetrieveConfig(), graph=graph)
        rows = rng.choice(np.flatnonzero(m.active), size=args.queries, replace=False)
        questions = []
        for u in m.units_at_rows(rows):
            words = u.content.split()
            keep = sorted(rng.choice(len(words), size=max(4, len(words) * 2 // 3), replace=False))
            questions.append(" ".join(words[i] for i in keep))  # a partial restatement of the unit
        qvecs = embedder.embed(questions)
        timings = {"asmr": [], "dense": [], "bm25": []}
        for q, v in zip(questions, qvecs):
            t = time.perf_counter()
            r.recall(q, v, 10)
            timings["asmr"].append(time.perf_counter() - t)
            t = time.perf_counter()
            m.search_dense(v[None], 10)
            timings["dense"].append(time.perf_counter() - t)
            t = time.perf_counter()
            m.search_lexical(q, 10)
            timings["bm25"].append(time.perf_counter() - t)
        try:
            minilm = get_embedder("all-MiniLM-L6-v2")
            minilm.embed(["warm up"])
            emb = []
            for q in questions[:100]:
                t = time.perf_counter()
                minilm.embed([q])
                emb.append(time.perf_counter() - t)
            emb_p95 = float(np.percentile(emb, 95)) * 1000
        except (RuntimeError, ImportError):
            emb_p95 = float("nan")
        ms = {k: np.array(v) * 1000 for k, v in timings.items()}
        print(f"\n## Recall latency ({m.count_units('active'):,} active units, graph {graph.num_nodes:,} nodes / "
              f"{graph.num_edges:,} edges, dense index {m.dense.kind}, {args.queries} questions)\n")
        print("| measure | P50 ms | P95 ms | goal |\n|---|---:|---:|---|")
        p95 = float(np.percentile(ms["asmr"], 95))
        print(f"| asmr recall, without the question's embedding | {np.percentile(ms['asmr'], 50):.2f} | "
              f"{p95:.2f} | P95 ≤ 10: {'met' if p95 <= 10 else 'missed'} |")
        print(f"| asmr recall + MiniLM embedding (P95s added) | | {p95 + emb_p95:.2f} | P95 ≤ 25: "
              f"{'met' if p95 + emb_p95 <= 25 else 'missed'} |")
        for k in ("dense", "bm25"):
            print(f"| {k} search alone | {np.percentile(ms[k], 50):.2f} | {np.percentile(ms[k], 95):.2f} | |")
        print(f"| MiniLM embedding of one question | | {emb_p95:.2f} | |")
        print(f"\ngraph build: {build_s:.1f} s; median recall {statistics.median(ms['asmr']):.2f} ms")


if __name__ == "__main__":
    main()
