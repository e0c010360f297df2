"""Re-indexing throughput: units per second and peak memory, local backend vs Ray with 1 and 2 workers.

    python bench/reindex.py                          # 20,000 passages, all-MiniLM-L6-v2, 3 runs each
    python bench/reindex.py --docs 2000 --repeats 1
    python bench/reindex.py --embedder hash-384      # the pipeline without the model's cost
    python bench/reindex.py --corpus ../shared/data/hotpotqa_train.corpus.jsonl

A synthetic JSONL corpus of passages (one to three paragraphs each) is written once to
--workdir, unless --corpus names one. Each run is ``asmr reindex`` in a child process into
a fresh memory, with a Ray it starts itself (``--num-cpus``), so Ray's start is part of the
run's wall time; the table also gives the embedding stage's own rate. Peak memory is the
highest sum, over the child and all its descendants (Ray's GCS, raylet and workers), of
proportional set sizes (PSS: shared pages split among their users, so the Ray object store
and shared libraries are not counted once per process), sampled every 0.25 s.
Figures are medians over --repeats runs.
"""
from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

from peak_memory import PeakMemory

WORDS = ("server port worker queue cache index shard replica backup restore token quota limit region "
         "cluster node disk memory latency throughput request response policy version release rollout "
         "migration schema table column record field value default option setting timeout retry").split()


def _sentence(rng: random.Random) -> str:
    words = rng.choices(WORDS, k=rng.randint(8, 18))
    return " ".join(words).capitalize() + f" {rng.randint(1, 99999)}."


def write_corpus(path: Path, docs: int, seed: int = 0) -> None:
    """``docs`` passages ``{"pid", "title", "text"}``: one to three paragraphs of two to five sentences."""
    rng = random.Random(seed)
    tmp = path.with_suffix(".tmp")
    with open(tmp, "w", encoding="utf-8") as f:
        for i in range(docs):
            paragraphs = [" ".join(_sentence(rng) for _ in range(rng.randint(2, 5)))
                          for _ in range(rng.randint(1, 3))]
            f.write(json.dumps({"pid": f"p{i}", "title": f"Passage {i}", "text": "\n\n".join(paragraphs)}) + "\n")
    os.replace(tmp, path)


def run_once(corpus: Path, memory: Path, extra: list[str], args) -> dict:
    shutil.rmtree(memory, ignore_errors=True)
    cmd = [sys.executable, "-m", "asmr.cli", "reindex", str(corpus), "--memory", str(memory), "--json",
           "--no-progress", "--embedder", args.embedder, "--batch-size", str(args.batch_size), *extra]
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1] / "python")}
    t = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    with PeakMemory(proc.pid) as mem:
        out, err = proc.communicate()
    wall = time.perf_counter() - t
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)}: exit {proc.returncode}\n{err[-3000:]}")
    report = json.loads(out)
    units = report["active_units"]
    stage = report["reindex"]
    return {"units": units, "wall": wall, "units_s": units / wall,
            "embed_s": stage["embedded"] / stage["timings"]["embed"] if stage["timings"]["embed"] else 0.0,
            "commit": stage["timings"]["commit"], "peak_mib": mem.peak / 2**20, "workers": stage["workers"]}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--docs", type=int, default=20_000, help="passages in the synthetic corpus (default: 20000)")
    ap.add_argument("--corpus", type=Path, default=None, help="a JSONL corpus to use instead of the synthetic one")
    ap.add_argument("--embedder", default="all-MiniLM-L6-v2",
                    help="all-MiniLM-L6-v2 (default), multilingual-e5-small or hash-<dim>")
    ap.add_argument("--batch-size", type=int, default=256)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--num-cpus", type=int, default=2, help="CPUs of the Ray each run starts (default: 2)")
    ap.add_argument("--workdir", type=Path, default=Path("/tmp/asmr-bench-reindex"))
    ap.add_argument("--configs", default="local,ray1,ray2",
                    help="comma-separated: local, ray<N> (N embedding workers) (default: local,ray1,ray2)")
    args = ap.parse_args()

    args.workdir.mkdir(parents=True, exist_ok=True)
    corpus = args.corpus
    if corpus is None:
        corpus = args.workdir / f"passages-{args.docs}.jsonl"
        if not corpus.exists():
            write_corpus(corpus, args.docs)
    configs = {}
    for name in args.configs.split(","):
        if name == "local":
            configs[name] = ["--backend", "local"]
        elif name.startswith("ray") and name[3:].isdigit():
            configs[name] = ["--backend", "ray", "--workers", name[3:], "--num-cpus", str(args.num_cpus)]
        else:
            ap.error(f"--configs: unknown {name!r}")

    print(f"corpus {corpus} ({corpus.stat().st_size / 2**20:.1f} MiB), embedder {args.embedder}, "
          f"{os.cpu_count()} CPUs, Ray with {args.num_cpus} CPUs, {args.repeats} run(s) each", flush=True)
    rows = []
    for name, extra in configs.items():
        runs = [run_once(corpus, args.workdir / "memory", extra, args) for _ in range(args.repeats)]
        med = {k: statistics.median(r[k] for r in runs) for k in ("wall", "units_s", "embed_s", "commit", "peak_mib")}
        rows.append((name, runs[0]["units"], med))
        print(f"  {name}: {[round(r['units_s'], 1) for r in runs]} units/s", flush=True)
    shutil.rmtree(args.workdir / "memory", ignore_errors=True)

    base = rows[0][2]["units_s"]
    print()
    print(f"| backend | units | wall s | units/s | vs {rows[0][0]} | embedding stage texts/s | commit s | peak MiB |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    for name, units, m in rows:
        print(f"| {name} | {units} | {m['wall']:.1f} | {m['units_s']:.0f} | {m['units_s'] / base:.2f}x | "
              f"{m['embed_s']:.0f} | {m['commit']:.1f} | {m['peak_mib']:.0f} |")


if __name__ == "__main__":
    main()
