"""Graph build after a small ingest: incremental (from the last graph's parts) against a full build.

    python bench/retrieval.py          # first: writes the 1,000,000-unit memory this reuses
    python bench/graph.py              # copies it, ingests a change, builds the graph both ways
    python bench/graph.py --memory /tmp/asmr-bench-retrieval/memory-100000-3 --new-docs 50

The retrieval bench's memory (generated units naming people, cities and
projects, clustered precomputed vectors) is copied to --workdir, so the
original stays as it was. The copy (without the original's graph files) gets
its graph by a full build, timed, then one ingest of --new-docs
new documents of 20 units and --revised-docs revised ones (one unit of each
replaced). Then the graph of the new generation is built from the last
graph's parts (--repeats times, median), and once from scratch. Reported: both
times, their ratio, and how many edges of each kind the two graphs share.
"""
from __future__ import annotations

import argparse
import shutil
import statistics
import time
from pathlib import Path

import numpy as np
from retrieval import TOPICS, ClusteredEmbedder, unit_text


def edge_keys(g, kind: int) -> np.ndarray:
    """The edges of one kind as sorted int64 keys src * num_nodes + dst (nodes are numbered alike in
    both graphs: units by row, then entities in name order, and both find the same entities)."""
    src = np.repeat(np.arange(g.num_nodes, dtype=np.int64), np.diff(g.indptr))
    sel = g.kinds == kind
    return np.unique(src[sel] * g.num_nodes + g.indices[sel].astype(np.int64))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--memory", type=Path, default=Path("/tmp/asmr-bench-retrieval/memory-1000000-3"),
                    help="a memory written by bench/retrieval.py (left unchanged: the bench works on a copy)")
    ap.add_argument("--workdir", type=Path, default=Path("/tmp/asmr-bench-graph"))
    ap.add_argument("--new-docs", type=int, default=200, help="new documents of 20 units each")
    ap.add_argument("--revised-docs", type=int, default=100, help="stored documents with one unit replaced")
    ap.add_argument("--repeats", type=int, default=3, help="incremental builds (median reported)")
    ap.add_argument("--seed", type=int, default=11)
    args = ap.parse_args()
    if not (args.memory / "memory.sqlite").exists():
        raise SystemExit(f"--memory {args.memory}: no memory there; run bench/retrieval.py first")

    from asmr.graph import EDGE_KINDS, build_graph, load_or_build
    from asmr.graph.build import graph_path
    from asmr.retrieve import RetrieveConfig
    from asmr.store import Memory, Writer
    from asmr.units.model import Document

    config = RetrieveConfig().graph
    copy = args.workdir / "memory"
    shutil.rmtree(copy, ignore_errors=True)
    t = time.perf_counter()
    # Without its graph files: the first build is a full one by this code, and it leaves the parts.
    shutil.copytree(args.memory, copy, ignore=shutil.ignore_patterns("write.lock", "graph.*"))
    print(f"# copied {args.memory} in {time.perf_counter() - t:.1f} s")

    with Memory(copy) as m:
        before = m.count_units("active")
        t = time.perf_counter()
        load_or_build(m, config)
        first_s = time.perf_counter() - t
        kb = m.documents()[0][0]
        docs = [d for b, d in m.documents() if b == kb]
        rng = np.random.default_rng(args.seed)
        revised = []
        for doc_id in rng.choice(docs, size=min(args.revised_docs, len(docs)), replace=False).tolist():
            texts = [u.content for u in m.units_of(kb, doc_id)]
            texts[int(rng.integers(0, len(texts)))] = unit_text(rng, int(rng.integers(0, TOPICS)))
            revised.append(Document(doc_id, "\n\n".join(texts), "text", title=f"Document {doc_id[1:]}",
                                    source=doc_id))
    print(f"# {before:,} active units; full graph build of the copy: {first_s:.1f} s")
    new = [Document(f"new{d}", "\n\n".join(unit_text(rng, int(rng.integers(0, TOPICS))) for _ in range(20)),
                    "text", title=f"New document {d}", source=f"new{d}") for d in range(args.new_docs)]
    t = time.perf_counter()
    with Writer(copy, embedder=ClusteredEmbedder()) as w:
        w.ingest(new + revised, kb=kb)
    print(f"# ingest of {len(new)} new and {len(revised)} revised documents: {time.perf_counter() - t:.1f} s")

    with Memory(copy) as m:
        path = graph_path(m, config)
        inc_s = []
        for _ in range(args.repeats):
            path.unlink(missing_ok=True)
            t = time.perf_counter()
            inc = load_or_build(m, config)
            inc_s.append(time.perf_counter() - t)
        t = time.perf_counter()
        full = build_graph(m, config)
        full_s = time.perf_counter() - t
        after = m.count_units("active")
    changed = after - inc.reused + (before - inc.reused)
    print(f"\n## Graph build after an ingest ({after:,} active units; {changed:,} new or retired, "
          f"{inc.reused:,} reused)\n")
    print("| build | seconds | |\n|---|---:|---|")
    print(f"| incremental, from the last graph's parts (median of {len(inc_s)}) | "
          f"{statistics.median(inc_s):.1f} | runs {', '.join(f'{s:.1f}' for s in inc_s)} |")
    print(f"| full | {full_s:.1f} | ratio {full_s / statistics.median(inc_s):.1f}x |")
    print("\n| edge kind | full build | incremental | shared | |\n|---|---:|---:|---:|---|")
    if full.entities != inc.entities:
        print("entity nodes differ: edges to them are not comparable by number")
    for k, name in enumerate(EDGE_KINDS):
        a, b = edge_keys(full, k), edge_keys(inc, k)
        shared = len(np.intersect1d(a, b, assume_unique=True))
        union = len(a) + len(b) - shared
        share = shared / max(union, 1)
        print(f"| {name} | {len(a):,} | {len(b):,} | {shared:,} | {share:.4%} of the union |")
    shutil.rmtree(args.workdir, ignore_errors=True)


if __name__ == "__main__":
    main()
