"""Load on the HTTP face: `/v1/search` requests per second against P95 latency, and a soak.

    python bench/serve.py                         # 100,000 units, the full ladder and a 5-minute soak
    python bench/serve.py --units 20000 --step-seconds 10 --soak-seconds 60   # a quick look

The memory holds generated units that name people, places and projects (built
once with the real embedder and kept in --workdir). `asmr serve` runs it in its
own process on a free loopback port; this script is the second process: an
asyncio client (aiohttp) that sends requests open-loop at a fixed rate, so a
slow server cannot slow the offered load down (latency is measured from each
request's scheduled send time, which counts queueing in the client too). Each
rate of the ladder runs for --step-seconds; every request asks a different
question of a pool larger than the server's question cache, so no answer comes
from the cache. The soak holds 80% of the highest rate that met P95 <= 25 ms and
samples the server's resident memory (all its processes) every 5 seconds; the memory's slope is
given over all samples and over those after the first minute (warm-up).

The ladder ends after the first rate whose P95 passes --stop-ms (the server is
saturated: higher rates only queue longer). Printed: one row per offered rate (achieved rate, P50/P95/P99, errors), the
sustained rate at P95 <= 25 ms, the highest rate before P95 passes 50 ms, and the
soak's memory samples with their least-squares slope.
"""
from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

WORDS = ("alpha beta gamma delta river stone forest harbor engine signal garden bridge tower field "
         "market valley winter summer copper silver").split()
TOPICS = 5000
CACHED_POOL = 200  # the cached row's questions: asked first in the warm-up, fewer than the cache's 1,024


def unit_text(rng, topic: int) -> str:
    def name(kind: str) -> str:
        return f"{kind.capitalize()} {rng.choice(['Ka', 'Lo', 'Mi', 'Ta', 'Ve', 'Zo'])}{rng.integers(0, 3000)}"
    return (f"{name('person')} met {name('city')} officials about project t{topic} and "
            f"{' '.join(rng.choice(WORDS, size=6))}.")


def build_memory(directory: Path, units: int, embedder: str, seed: int) -> None:
    from asmr.store import Writer
    from asmr.units.model import Document

    rng = np.random.default_rng(seed)
    per_doc = 20
    docs = (Document(f"d{d}", "\n\n".join(unit_text(rng, int(rng.integers(0, TOPICS))) for _ in range(per_doc)),
                     "text", title=f"Document {d}", source=f"d{d}") for d in range(units // per_doc))
    shutil.rmtree(directory, ignore_errors=True)
    t = time.perf_counter()
    with Writer(directory, embedder=embedder, progress=True) as w:
        r = w.ingest(docs, total=units // per_doc)
    print(f"# built {r.active_units:,} units with {embedder} in {time.perf_counter() - t:.0f} s", flush=True)


def questions_of(directory: Path, n: int, seed: int) -> list[str]:
    """Partial restatements of random units: a realistic question mix, all different."""
    from asmr.store import Memory

    rng = np.random.default_rng(seed + 1)
    with Memory(directory, load_indexes=False) as m:
        rows = rng.choice(m.num_rows, size=min(n, m.num_rows), replace=False)
        out = []
        for u in m.units_at_rows(rows):
            words = u.content.rstrip(".").split()
            keep = sorted(rng.choice(len(words), size=max(4, len(words) * 2 // 3), replace=False))
            out.append(" ".join(words[i] for i in keep))
    return out


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def server_rss(pid: int) -> int:
    import psutil
    p = psutil.Process(pid)
    return sum(q.memory_info().rss for q in [p, *p.children(recursive=True)])


async def run_rate(url: str, questions: list[str], start: int, rate: float, seconds: float, k: int,
                   concurrency: int) -> tuple[np.ndarray, int, float, int]:
    """Offer ``rate`` requests/s for ``seconds``; returns (latencies ms, errors, achieved rate, next question)."""
    import aiohttp

    n = int(rate * seconds)
    latencies: list[float] = []
    errors = 0
    connector = aiohttp.TCPConnector(limit=concurrency)
    async with aiohttp.ClientSession(connector=connector, timeout=aiohttp.ClientTimeout(total=30)) as session:
        loop = asyncio.get_running_loop()
        t0 = loop.time() + 0.05

        async def one(i: int) -> None:
            nonlocal errors
            due = t0 + i / rate
            await asyncio.sleep(max(0.0, due - loop.time()))
            q = questions[(start + i) % len(questions)]
            try:
                async with session.post(url, json={"question": q, "k": k}) as resp:
                    await resp.read()
                    if resp.status != 200:
                        errors += 1
            except (aiohttp.ClientError, asyncio.TimeoutError):
                errors += 1
            latencies.append((loop.time() - due) * 1000)

        await asyncio.gather(*(one(i) for i in range(n)))
        elapsed = loop.time() - t0
    return np.array(latencies), errors, n / elapsed, start + n


def client_main(args) -> None:
    """The load process: reads its plan as JSON on stdin, prints one JSON line per step."""
    plan = json.loads(sys.stdin.read())
    questions = plan["questions"]
    url = plan["url"]
    nxt = 0
    for rate, seconds in plan["steps"]:
        lat, errors, achieved, nxt = asyncio.run(run_rate(url, questions, nxt, rate, seconds, plan["k"],
                                                          plan["concurrency"]))
        p95 = float(np.percentile(lat, 95))
        print(json.dumps({"rate": rate, "seconds": seconds, "achieved": achieved, "errors": errors,
                          "n": len(lat), "p50": float(np.percentile(lat, 50)), "p95": p95,
                          "p99": float(np.percentile(lat, 99))}), flush=True)
        if p95 > plan["stop_ms"]:
            break  # saturated: higher rates only queue longer


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--units", type=int, default=100_000, help="units in the memory (default 100,000)")
    ap.add_argument("--embedder", default="all-MiniLM-L6-v2",
                    help="embedder of the memory and of every question (default all-MiniLM-L6-v2)")
    ap.add_argument("--workdir", type=Path, default=Path("/tmp/asmr-bench-serve"))
    ap.add_argument("--workers", type=int, default=1, help="asmr serve --workers (default 1)")
    ap.add_argument("--rates", default="10,20,25,30,35,40,45,50,60,80",
                    help="offered requests/s, comma-separated, in order (default %(default)s)")
    ap.add_argument("--step-seconds", type=float, default=20.0, help="seconds per rate (default 20)")
    ap.add_argument("--soak-seconds", type=float, default=300.0, help="soak length (default 300; 0: none)")
    ap.add_argument("--soak-rate", type=float, default=0.0,
                    help="soak requests/s (default: 80%% of the sustained rate of the ladder)")
    ap.add_argument("--stop-ms", type=float, default=500.0,
                    help="end the ladder after a rate whose P95 passes this (saturated; default 500)")
    ap.add_argument("--k", type=int, default=10, help="units per search (default 10)")
    ap.add_argument("--concurrency", type=int, default=64, help="client connections at most (default 64)")
    ap.add_argument("--seed", type=int, default=3)
    ap.add_argument("--client", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.client:
        client_main(args)
        return

    memory = args.workdir / f"memory-{args.units}-{args.embedder}-{args.seed}"
    if not (memory / "memory.sqlite").exists():
        build_memory(memory, args.units, args.embedder, args.seed)
    questions = questions_of(memory, 20_000, args.seed)  # the last ones warm the server up
    port = free_port()
    env = {**os.environ, "ASMR_API_KEYS": ""}
    server = subprocess.Popen([sys.executable, "-m", "asmr.cli", "serve", "--memory", str(memory), "--port",
                               str(port), "--workers", str(args.workers), "--rate-limit", "0"], env=env,
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    base = f"http://127.0.0.1:{port}"
    try:
        import urllib.request
        t = time.perf_counter()
        while True:
            if server.poll() is not None:
                sys.exit(f"asmr serve exited: {server.stderr.read().decode()[-2000:]}")
            try:
                urllib.request.urlopen(base + "/healthz", timeout=1).read()
                break
            except OSError:
                if time.perf_counter() - t > 300:
                    sys.exit("asmr serve did not answer /healthz within 300 s")
                time.sleep(0.5)
        # warm-up, one request at a time for at least 20 s: the first searches load the graph and
        # the indexes (in every worker) while the verifier's model loads in the background, none of
        # which is load; then until /healthz says the background start-up is over
        warm = []
        t_warm = time.perf_counter()
        for i, q in enumerate(questions[-CACHED_POOL:] + questions[-2000:-CACHED_POOL]):
            if i >= 200 and time.perf_counter() - t_warm > 20:
                break
            req = urllib.request.Request(base + "/v1/search", data=json.dumps({"question": q, "k": args.k}).encode(),
                                         headers={"Content-Type": "application/json"})
            t1 = time.perf_counter()
            urllib.request.urlopen(req, timeout=300).read()
            warm.append((time.perf_counter() - t1) * 1000)
        ready = 0  # a probe reaches any worker: several in a row must say so
        while ready < 4 * args.workers:
            ready = ready + 1 if json.loads(urllib.request.urlopen(base + "/healthz").read())["warmed_up"] else 0
            if time.perf_counter() - t > 600:
                sys.exit("the server's warm-up did not end within 600 s")
            time.sleep(0.1 if ready else 0.5)
        print(f"# server up in {time.perf_counter() - t:.1f} s (pid {server.pid}, {args.workers} worker(s)); "
              f"first search {warm[0]:.0f} ms, then one at a time P50 {np.median(warm[-100:]):.1f} ms; "
              f"rss {server_rss(server.pid) / 2**20:.0f} MiB", flush=True)
        rates = [float(r) for r in args.rates.split(",")]
        rows = run_client(base, questions, [(r, args.step_seconds) for r in rates], args)
        print(f"\n## /v1/search under load ({args.units:,} units, {args.embedder}, {args.workers} worker(s), "
              f"{args.step_seconds:.0f} s per rate, open loop)\n")
        print("| offered req/s | achieved req/s | P50 ms | P95 ms | P99 ms | errors |\n|---:|---:|---:|---:|---:|---:|")
        for r in rows:
            print(f"| {r['rate']:.0f} | {r['achieved']:.1f} | {r['p50']:.1f} | {r['p95']:.1f} | {r['p99']:.1f} | "
                  f"{r['errors']} |")
        ok25 = [r for r in rows if r["p95"] <= 25 and r["errors"] == 0]
        sustained = max((r["rate"] for r in ok25), default=None)
        under50 = [r for r in rows if r["p95"] <= 50 and r["errors"] == 0]
        print(f"\nsustained at P95 <= 25 ms: {sustained if sustained is not None else 'none of the rates'} req/s; "
              f"highest before P95 passes 50 ms: {max((r['rate'] for r in under50), default='none')} req/s; "
              f"errors in all steps: {sum(r['errors'] for r in rows)}")
        # cached questions apart: the warm-up's first questions, asked again, all in the question cache
        top = sustained or (max(r["rate"] for r in under50) if under50 else min(rates))
        cached = run_client(base, questions[-CACHED_POOL:], [(top, args.step_seconds)], args,
                            on_line=lambda r: None, stop_ms=float("inf"))[0]
        print(f"\ncached questions ({CACHED_POOL} asked again, answered from the question cache) at {top:.0f} "
              f"req/s: "
              f"achieved {cached['achieved']:.1f}, P50 {cached['p50']:.1f} ms, P95 {cached['p95']:.1f} ms, "
              f"P99 {cached['p99']:.1f} ms, {cached['errors']} errors")
        if args.soak_seconds > 0:
            # a ladder step is short: the soak runs below the sustained rate, as a service would be run
            soak(base, questions, args.soak_rate or max(1.0, float(int(top * 0.8))), args, server.pid)
    finally:
        server.terminate()
        try:
            server.wait(10)
        except subprocess.TimeoutExpired:
            server.kill()


def run_client(base: str, questions: list[str], steps, args, on_line=None, stop_ms: float | None = None
               ) -> list[dict]:
    plan = {"url": base + "/v1/search", "questions": questions, "steps": steps, "k": args.k,
            "concurrency": args.concurrency, "stop_ms": args.stop_ms if stop_ms is None else stop_ms}
    client = subprocess.Popen([sys.executable, __file__, "--client"], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, text=True)
    client.stdin.write(json.dumps(plan))
    client.stdin.close()
    rows = []
    for line in client.stdout:
        rows.append(json.loads(line))
        if on_line:
            on_line(rows[-1])
        else:
            r = rows[-1]
            print(f"# {r['rate']:.0f} req/s offered: {r['achieved']:.1f} achieved, P95 {r['p95']:.1f} ms, "
                  f"{r['errors']} errors", flush=True)
    if client.wait() != 0:
        sys.exit("the load client failed")
    return rows


def soak(base: str, questions: list[str], rate: float, args, pid: int) -> None:
    """``rate`` for --soak-seconds in 30-second steps, the server's resident memory sampled every 5 s."""
    import threading

    samples: list[tuple[float, int]] = []
    done = threading.Event()
    t0 = time.perf_counter()

    def sample() -> None:
        while not done.wait(5.0):
            samples.append((time.perf_counter() - t0, server_rss(pid)))

    sampler = threading.Thread(target=sample, daemon=True)
    samples.append((0.0, server_rss(pid)))
    sampler.start()
    step = 30.0
    rows = run_client(base, questions, [(rate, step)] * max(1, int(args.soak_seconds // step)), args,
                      on_line=lambda r: None, stop_ms=float("inf"))
    done.set()
    sampler.join()
    t = np.array([s[0] for s in samples])
    mib = np.array([s[1] for s in samples]) / 2**20
    slope = float(np.polyfit(t, mib, 1)[0]) * 60 if len(t) > 2 else float("nan")
    warm = t >= 60  # the first minute still fills caches (questions, vectors, SQLite pages)
    slope_warm = float(np.polyfit(t[warm], mib[warm], 1)[0]) * 60 if warm.sum() > 2 else float("nan")
    lat_p95 = [r["p95"] for r in rows]
    print(f"\n## Soak: {rate:.0f} req/s for {args.soak_seconds:.0f} s\n")
    print(f"requests {sum(r['n'] for r in rows):,}, errors {sum(r['errors'] for r in rows)}, P95 per 30 s "
          f"median {np.median(lat_p95):.1f} ms (max {max(lat_p95):.1f})")
    print(f"server resident memory: start {mib[0]:.0f} MiB, after the first minute "
          f"{mib[warm][0] if warm.any() else mib[-1]:.0f} MiB, end {mib[-1]:.0f} MiB, max {mib.max():.0f} MiB; "
          f"least-squares slope {slope:+.2f} MiB/min over {len(samples)} samples, {slope_warm:+.2f} MiB/min "
          f"after the first minute")


if __name__ == "__main__":
    main()
