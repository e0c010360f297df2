"""A command's wait from its start: `asmr search` / `asmr ask` answering by itself in a fresh process,
as a user at a shell runs it (no server), against one or more trees of the code side by side; or, with
``--server``, the first question to a fresh `asmr serve`.

    python bench/start.py --memory DIR --question "how long are logs kept?" [--command search|ask]
                          [--rounds 7] [--code PYTHON_DIR ...] [--hide numba] [--server] [--json]

Each round runs the command once per ``--code`` tree (a ``python/`` folder put first on ``PYTHONPATH``;
default: this checkout's), in the order given, so that trees alternate and a slow spell of a shared host
falls on each of them. Reported per tree: the wall time of the process (``time.perf_counter`` around
``subprocess.run``, interpreter start to exit) as median, min and max over the rounds, and the median of
what the command says of itself on its last line ("of which … starting": imports, the memory and its
models). ``--hide MODULE`` makes a module unimportable in the child, as an install without it (numba
comes only with the bench extra's python-graphblas, and bm25s imports it when it is there).

``--server``: each round starts ``asmr serve`` on a free loopback port, waits until ``/healthz`` says
``warmed_up`` (the worker's background start-up is over), and times the first ``POST /v1/search`` of
the question (``--command ask``: the first ``POST /v1/answer``, the server's default generator);
reported as the wall time of that request, and in the "starting" column the seconds from the server's
start until it said ``warmed_up``.

Each tree's modules are compiled first (``python -m compileall``): where bytecode is not written as a
process runs (``PYTHONDONTWRITEBYTECODE``, a read-only tree) a tree whose compiled modules are stale
recompiles every module it imports at every start, a few tenths of a second that are not the code's.

The caches that a first use fills (``$ASMR_CACHE_DIR``, else ``~/.cache/asmr``: ONNX graphs, jieba's and
simplemma's tables, the bilingual tables) are filled by one untimed run per tree before the rounds: the
figures are those of every later command, not of the first one on a machine.
"""
from __future__ import annotations

import argparse
import json
import os
import re
import socket
import statistics
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

HERE = Path(__file__).resolve().parent.parent
_STARTING = re.compile(r"of which ([\d.]+) (ms|s) starting")


def run_once(code: Path, command: str, memory: str, question: str, hide: list[str]) -> tuple[float, float | None]:
    """Wall seconds of one fresh ``asmr COMMAND`` process, and the seconds it says it spent starting."""
    script = "".join(f"import sys; sys.modules[{m!r}] = None; " for m in hide) + \
        "import sys; from asmr.cli import main; sys.exit(main())"
    env = {**os.environ, "PYTHONPATH": str(code)}
    argv = [sys.executable, "-c", script, command, "--memory", memory, "--no-server", question]
    start = time.perf_counter()
    done = subprocess.run(argv, env=env, capture_output=True, text=True)
    wall = time.perf_counter() - start
    if done.returncode != 0:
        raise SystemExit(f"bench/start.py: {command} with {code} exited {done.returncode}: "
                         f"{done.stderr.strip().splitlines()[-1] if done.stderr.strip() else ''}")
    said = _STARTING.search(done.stdout + done.stderr)
    starting = None if said is None else float(said.group(1)) / (1000.0 if said.group(2) == "ms" else 1.0)
    return wall, starting


def first_question(code: Path, command: str, memory: str, question: str, hide: list[str], timeout: float = 120.0
                   ) -> tuple[float, float]:
    """Seconds of the first search (``command`` "ask": answer) of a fresh ``asmr serve`` (started and
    warmed up outside the timing), and seconds from its start until ``/healthz`` said ``warmed_up``
    (polled every 0.05 s)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    script = "".join(f"import sys; sys.modules[{m!r}] = None; " for m in hide) + \
        "import sys; from asmr.cli import main; sys.exit(main())"
    argv = [sys.executable, "-c", script, "serve", "--memory", memory, "--port", str(port), "--log-level", "warning"]
    started = time.perf_counter()
    proc = subprocess.Popen(argv, env={**os.environ, "PYTHONPATH": str(code)}, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + timeout
        while True:
            if proc.poll() is not None or time.monotonic() > deadline:
                raise SystemExit(f"bench/start.py: asmr serve with {code} did not warm up "
                                 f"(exit {proc.returncode})")
            try:
                with urllib.request.urlopen(base + "/healthz", timeout=2) as r:
                    if json.load(r).get("warmed_up"):
                        warmed = time.perf_counter() - started
                        break
            except (urllib.error.URLError, OSError, ValueError):
                pass
            time.sleep(0.05)
        route = "/v1/answer" if command == "ask" else "/v1/search"
        request = urllib.request.Request(base + route, data=json.dumps({"question": question}).encode(),
                                         headers={"Content-Type": "application/json"})
        start = time.perf_counter()
        with urllib.request.urlopen(request, timeout=timeout) as r:
            r.read()
        return time.perf_counter() - start, warmed
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--memory", required=True, help="a memory directory (asmr ingest made it)")
    ap.add_argument("--question", required=True)
    ap.add_argument("--command", choices=("search", "ask"), default="search")
    ap.add_argument("--rounds", type=int, default=7, help="runs per tree (default 7)")
    ap.add_argument("--code", action="append", type=Path,
                    help="a python/ folder to run (repeat to compare; default this checkout's)")
    ap.add_argument("--hide", action="append", default=[], help="a module the child cannot import")
    ap.add_argument("--server", action="store_true",
                    help="time the first search (--command ask: answer) of a fresh asmr serve, once it "
                         "says warmed_up")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    if args.rounds < 1:
        ap.error(f"--rounds {args.rounds}: must be >= 1")
    if not Path(args.memory).is_dir():
        ap.error(f"--memory {args.memory}: no such directory")
    trees = args.code or [HERE / "python"]
    for code in trees:
        if not (code / "asmr" / "__init__.py").is_file():
            ap.error(f"--code {code}: holds no asmr package")
        subprocess.run([sys.executable, "-m", "compileall", "-q", str(code)], check=True, stdout=subprocess.DEVNULL)
        run_once(code, args.command, args.memory, args.question, args.hide)  # fills the caches
    command = f"first {'answer' if args.command == 'ask' else 'search'} of a server" if args.server else args.command
    runs: dict[Path, list[tuple[float, float | None]]] = {code: [] for code in trees}
    for r in range(args.rounds):
        for code in trees:
            runs[code].append(first_question(code, args.command, args.memory, args.question, args.hide) if args.server
                              else run_once(code, args.command, args.memory, args.question, args.hide))
        print(f"round {r + 1}/{args.rounds}: " + ", ".join(f"{runs[c][-1][0]:.2f} s" for c in trees),
              file=sys.stderr, flush=True)
    rows = []
    for code in trees:
        walls = [w for w, _ in runs[code]]
        said = [s for _, s in runs[code] if s is not None]
        rows.append({"code": str(code), "command": command, "rounds": args.rounds,
                     "wall_s_median": round(statistics.median(walls), 3), "wall_s_min": round(min(walls), 3),
                     "wall_s_max": round(max(walls), 3),
                     "starting_s_median": round(statistics.median(said), 3) if said else None})
    if args.json:
        print(json.dumps({"rows": rows, "hidden": args.hide}, indent=2))
        return
    print("| code | command | wall s, median [min–max] | of which starting, median |")
    print("|---|---|---:|---:|")
    for row in rows:
        starting = "–" if row["starting_s_median"] is None else f"{row['starting_s_median']:.2f} s"
        print(f"| {row['code']} | {row['command']} | {row['wall_s_median']:.2f} [{row['wall_s_min']:.2f}–"
              f"{row['wall_s_max']:.2f}] | {starting} |")


if __name__ == "__main__":
    main()
