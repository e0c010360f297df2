"""Every example in README.md and docs/*.md runs, so that none goes stale.

Each page's fenced blocks run in order, in a temporary directory of the page's own that holds
``examples/handbook`` and ``docs/`` (two copies of the bundled handbook, as the examples name
them), ``corpus.jsonl`` and ``chats.jsonl`` (one record each, for the ingest examples of
docs/memory.md) and, for docs/*.md, ``asmr-memory``, the default memory, built from ``docs/`` in
the knowledge base ``handbook`` (as the first example of docs/memory.md does) with the
model-free ``hash-384`` embedder, so that the reference pages' examples never load MiniLM: an
``asmr ingest`` without ``--embedder`` takes the model a memory records, so no example line is
rewritten for it. README.md's tour builds its memory itself, with the default model (MiniLM),
as a newcomer would: that page takes about 25 s of this file's 30.

``sh``/``console`` blocks, a line at a time (a leading ``$ `` is dropped; ``#`` starts a comment):

- ``asmr ...`` runs in this process, ``asmr.cli.main(shlex.split(line)[1:])``, and must exit 0,
  or N when its comment says ``# exit N`` (``printf ... | asmr ...`` feeds the left side's output
  to it as stdin).
- ``asmr serve ... &`` needs a process of its own and never returns: it starts in the background
  (with ``--port`` set to a free port, so that tests beside it do not collide), the page waits
  for its ``server.json``, and every ``asmr search``/``asmr ask`` after it must say it was
  answered by the server. It stops at the end of the page.
- A block with a synopsis (``[optional]`` parts, ``a|b`` choices, ``...``, placeholders such as
  ``DIR``) does not run: each of its ``asmr`` lines is checked against ``asmr.cli.build_parser()``
  (every subcommand and ``--flag`` named must exist, every ``a|b`` choice must be one the flag
  takes; a line without optional parts must parse as written).
- Other commands run with bash (``cp``, ``sed``, ``printf`` ...) unless ``SKIPPED`` names them
  with the reason they cannot run here; a command in neither fails the test.

``python`` blocks are exec'd (docs/kernels.md's names its inputs: ``KERNEL_INPUTS`` defines
them on a small random graph). Blocks tagged ``markdown``/``text`` are not code; an untagged
block fails the test, so that no example escapes it.
"""
from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import re
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
SHELL = {"sh", "console", "bash", "shell"}
NOT_CODE = {"markdown", "text", "json", "yaml"}

# Commands the docs show that cannot run in a test, by first word: the reason.
SKIPPED = {
    "make": "builds .venv and runs the whole suite or the demo (minutes)",
    "pip": "installs into the environment",
    "curl": "needs a server on the fixed port 8000; `asmr serve` itself is run by the README's tour",
    "bash": "bench/gpu_check.sh needs an NVIDIA GPU",
    "python": "bench scripts run for minutes",
    "ray": "starts a Ray cluster",
}
# The shell commands the examples may use, run with bash in the page's directory.
RUN_WITH_BASH = {"cp", "sed", "printf", "echo", "cat", "mkdir", "rm", "mv", "ls"}

CORPUS = {"pid": "backups", "title": "Backups", "type": "manual",
          "text": "Backups run every night at 02:00 and are kept for 14 days."}
CHAT = {"id": "standup-1", "date_time": "2026-03-02T09:30",
        "turns": [{"speaker": "Alice", "text": "I moved the rollout of release 2.4 to Friday yesterday."},
                  {"speaker": "Bob", "text": "Then I page the on-call engineer on Thursday."}]}

KERNEL_INPUTS = """
import numpy as np
rng = np.random.default_rng(0)
n, per = 64, 4
indptr = np.arange(0, n * per + 1, per, dtype=np.int64)
indices = np.array([(i + d) % n for i in range(n) for d in (1, 2, 5, 11)], dtype=np.int32)
weights = rng.uniform(0.5, 1.0, n * per).astype(np.float32)
p = np.zeros((n, 2), np.float32); p[0, 0] = p[7, 1] = 1.0
claim_vecs = rng.standard_normal((3, 16)).astype(np.float32)
unit_vecs = rng.standard_normal((n, 16)).astype(np.float32)
claim_idx = np.array([0, 1, 2, 2], dtype=np.int64)
unit_idx = np.array([5, 9, 17, 3], dtype=np.int64)
num_units, num_tokens = n, 8
m = {"indptr": np.arange(0, num_tokens * 4 + 1, 4, dtype=np.int64),
     "indices": np.array([(t * 3 + j * 7) % n for t in range(num_tokens) for j in range(4)], dtype=np.int32),
     "data": rng.uniform(0.1, 2.0, num_tokens * 4).astype(np.float32)}
for t in range(num_tokens):  # bm25s keeps each token's list sorted by unit
    s = slice(t * 4, t * 4 + 4); m["indices"][s] = np.sort(m["indices"][s])
unit_rows = np.arange(n, dtype=np.int64)
token_ids = np.array([1, 3, 3], dtype=np.int64)
active_rows = np.ones(n, bool)
"""
PRELUDES = {"kernels.md": KERNEL_INPUTS}


# --- reading the pages ---------------------------------------------------------------------------

def fenced_blocks(path: Path):
    """(language, first line number, lines) of every fenced block of a page."""
    lang, start, body = None, 0, []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        fence = re.match(r"^```(\S*)\s*$", line)
        if fence and lang is None:
            lang, start, body = fence.group(1), number + 1, []
        elif line.startswith("```") and lang is not None:
            yield lang, start, body
            lang = None
        elif lang is not None:
            body.append(line)
    assert lang is None, f"{path.name}: a fence opened at line {start - 1} never closes"


def command_of(line: str) -> tuple[str, int]:
    """The command on a shell line without its comment, and the exit code its comment implies."""
    line = line.strip().removeprefix("$ ")
    expected = re.search(r"#\s*exit (\d+)(?::|\s*$)", line)
    cut, quote = len(line), None  # the comment starts at a '#' after a space, outside quotes
    for i, ch in enumerate(line):
        if quote:
            quote = None if ch == quote else quote
        elif ch in "'\"":
            quote = ch
        elif ch == "#" and (i == 0 or line[i - 1].isspace()):
            cut = i
            break
    return line[:cut].strip(), int(expected.group(1)) if expected else 0


def shell_lines(lang: str, start: int, lines: list[str]) -> list[tuple[int, str]]:
    """(line number, command line) of a shell block: in ``console`` blocks only ``$ `` lines are
    commands (the rest is their output); a line ending in a backslash continues on the next."""
    out: list[tuple[int, str]] = []
    pending = None
    for number, line in enumerate(lines, start):
        if pending is not None:
            out[-1] = (pending, out[-1][1][:-1] + " " + line.strip())
        elif lang == "console" and not line.startswith("$ "):
            continue
        else:
            out.append((number, line))
        pending = out[-1][0] if out and out[-1][1].rstrip().endswith("\\") else None
        if pending is not None:
            out[-1] = (pending, out[-1][1].rstrip())
    return out


def is_synopsis(command: str) -> bool:
    return "[" in command or "..." in command or re.search(r"[\w-]\|[\w-]", command) is not None


# --- checking against the parser -----------------------------------------------------------------

def _subparsers(parser: argparse.ArgumentParser):
    return next((a for a in parser._actions if isinstance(a, argparse._SubParsersAction)), None)


def check_synopsis(command: str) -> None:
    """Every subcommand, --flag and a|b choice a synopsis names exists in ``asmr``'s parser."""
    from asmr.cli import build_parser

    words = shlex.split(command.replace("[", " ").replace("]", " "))
    assert words and words[0] == "asmr", command
    parser, i = build_parser(), 1
    while (sub := _subparsers(parser)) is not None:
        assert i < len(words) and words[i] in sub.choices, \
            f"{command!r}: {words[i] if i < len(words) else '(nothing)'!r} is not a subcommand " \
            f"of {parser.prog!r} ({', '.join(sub.choices)})"
        parser, i = sub.choices[words[i]], i + 1
    options = parser._option_string_actions
    for j, word in enumerate(words[i:], i):
        if word.startswith("-") and word not in ("-", "|"):
            flag = word.split("=", 1)[0]
            assert flag in options, f"{command!r}: {parser.prog} has no option {flag}"
            action = options[flag]
            if action.choices and j + 1 < len(words) and not words[j + 1].startswith("-"):
                for choice in words[j + 1].split("|"):
                    if choice.islower():  # not a placeholder such as N or DIR
                        assert choice in action.choices, \
                            f"{command!r}: {flag} takes {sorted(action.choices)}, not {choice!r}"


def parse_exactly(command: str) -> None:
    """A command without optional parts parses as written (argparse exits 2 on an unknown flag)."""
    from asmr.cli import build_parser

    words = shlex.split(command)
    with contextlib.redirect_stderr(io.StringIO()) as err:
        try:
            build_parser().parse_args(words[1:])
        except SystemExit as exc:
            pytest.fail(f"{command!r} does not parse (exit {exc.code}): {err.getvalue().strip()}")


# --- running -------------------------------------------------------------------------------------

def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Page:
    """The running state of one page: its directory, the server it started, what ran."""

    def __init__(self, directory: Path):
        self.dir = directory
        self.server: subprocess.Popen | None = None
        self.ran: list[str] = []

    def env(self) -> dict:
        env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT / "python"), str(ROOT)]))
        env.pop("ASMR_MEMORY", None)
        return env

    def asmr(self, command: str, expected: int, where: str, stdin: str | None = None) -> None:
        from asmr.cli import main

        argv = shlex.split(command)[1:]
        out, err = io.StringIO(), io.StringIO()
        old_stdin = sys.stdin
        sys.stdin = io.StringIO(stdin) if stdin is not None else io.StringIO("")
        try:
            with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
                try:
                    code = main(argv)
                except SystemExit as exc:
                    code = exc.code if isinstance(exc.code, int) else 2
        finally:
            sys.stdin = old_stdin
        assert code == expected, (f"{where}: `{command}` exited {code}, the docs imply {expected}\n"
                                  f"stdout: {out.getvalue()[-2000:]}\nstderr: {err.getvalue()[-2000:]}")
        if self.server is not None and argv and argv[0] in ("search", "ask"):
            assert "answered by the server" in out.getvalue(), \
                f"{where}: `{command}` ran while `asmr serve` did, but was not answered by it:\n{out.getvalue()}"
        self.ran.append(command)

    def serve(self, command: str, where: str) -> None:
        words = shlex.split(command)
        if "--port" in words:
            words[words.index("--port") + 1] = str(_free_port())
        else:
            words += ["--port", str(_free_port())]
        with open(self.dir / "serve.log", "w") as log:  # the child keeps its own descriptor
            self.server = subprocess.Popen([sys.executable, "-m", "asmr.cli", *words[1:]], cwd=self.dir,
                                           env=self.env(), stdout=log, stderr=subprocess.STDOUT,
                                           start_new_session=True)
        memory = self.dir / (words[words.index("--memory") + 1] if "--memory" in words else "asmr-memory")
        deadline = time.monotonic() + 90
        while not (memory / "server.json").exists():
            assert self.server.poll() is None, f"{where}: `{command}` stopped: {(self.dir / 'serve.log').read_text()}"
            assert time.monotonic() < deadline, f"{where}: `{command}` wrote no server.json in 90 s"
            time.sleep(0.2)
        url = json.loads((memory / "server.json").read_text())["url"]
        import urllib.request
        while True:  # server.json is written before the socket answers
            try:
                with urllib.request.urlopen(url + "/healthz", timeout=2) as r:
                    if json.loads(r.read()).get("warmed_up", True):
                        break
            except OSError:
                pass
            assert time.monotonic() < deadline, f"{where}: the server at {url} did not warm up in 90 s"
            time.sleep(0.2)
        self.ran.append(command)

    def stop(self) -> None:
        if self.server is not None and self.server.poll() is None:
            os.killpg(self.server.pid, signal.SIGTERM)
            try:
                self.server.wait(timeout=20)
            except subprocess.TimeoutExpired:
                os.killpg(self.server.pid, signal.SIGKILL)
                self.server.wait()
        self.server = None

    def shell_line(self, raw: str, where: str) -> None:
        command, expected = command_of(raw)
        if not command:
            return
        background = command.endswith("&")
        command = command.rstrip("&").strip()
        if "| asmr " in command:  # printf 'q1\nq2\n' | asmr chat ...
            left, right = command.split("| asmr ", 1)
            feed = subprocess.run(["bash", "-c", left], cwd=self.dir, capture_output=True, text=True, check=True)
            return self.asmr("asmr " + right, expected, where, stdin=feed.stdout)
        first = shlex.split(command)[0]
        if first == "asmr":
            words = shlex.split(command)
            if len(words) > 1 and words[1] == "serve":
                assert background, f"{where}: `{command}` never returns; the docs should run it with `&`"
                parse_exactly(command)
                return self.serve(command, where)
            return self.asmr(command, expected, where)
        if first in SKIPPED:
            return
        assert first in RUN_WITH_BASH, (f"{where}: `{first}` is neither run by this test nor skipped with a "
                                        f"reason: add it to RUN_WITH_BASH or SKIPPED")
        done = subprocess.run(["bash", "-c", command], cwd=self.dir, capture_output=True, text=True, check=False)
        assert done.returncode == expected, f"{where}: `{command}` exited {done.returncode}: {done.stderr}"
        self.ran.append(command)


def make_directory(tmp: Path, page: Path) -> Path:
    from asmr.store import Writer
    from asmr.units.read import read_path

    (tmp / "examples").mkdir(parents=True)
    shutil.copytree(ROOT / "examples" / "handbook", tmp / "examples" / "handbook")
    shutil.copytree(ROOT / "examples" / "handbook", tmp / "docs")
    (tmp / "corpus.jsonl").write_text(json.dumps(CORPUS) + "\n", encoding="utf-8")
    (tmp / "chats.jsonl").write_text(json.dumps(CHAT) + "\n", encoding="utf-8")
    if page == ROOT / "README.md":
        return tmp  # the tour builds its memory
    docs = tmp / "docs"
    with Writer(tmp / "asmr-memory", embedder="hash-384") as w:
        w.ingest([read_path(p, root=docs) for p in sorted(docs.rglob("*")) if p.is_file()], kb="handbook")
    return tmp


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_examples_run(page: Path, tmp_path, monkeypatch):
    monkeypatch.delenv("ASMR_MEMORY", raising=False)
    monkeypatch.setenv("ASMR_CACHE_DIR", str(tmp_path / "cache"))
    directory = make_directory(tmp_path / "page", page)
    monkeypatch.chdir(directory)
    state, name = Page(directory), page.relative_to(ROOT)
    try:
        for lang, start, lines in fenced_blocks(page):
            where = f"{name}:{start}"
            if lang in NOT_CODE:
                assert not any(line.startswith("asmr ") for line in lines), \
                    f"{where}: an `asmr` command in a ```{lang} block is never run; tag it ```sh"
                continue
            assert lang, f"{where}: tag the block (```sh, ```python, ```text ...) so that this test knows it"
            if lang == "python":
                namespace: dict = {"__name__": "__docs__"}
                exec(PRELUDES.get(page.name, ""), namespace)  # noqa: S102 - running the docs is the point
                exec(compile("\n".join(lines), where, "exec"), namespace)  # noqa: S102
                state.ran.append(f"python block at {where}")
                continue
            assert lang in SHELL, f"{where}: no rule for ```{lang} blocks"
            numbered = shell_lines(lang, start, lines)
            commands = [command_of(line)[0] for _, line in numbered]
            if any(is_synopsis(c) for c in commands):
                for c in commands:
                    if "asmr " not in c:
                        continue
                    c = "asmr " + c.split("asmr ", 1)[1]  # printf ... | asmr chat ...
                    check_synopsis(c)
                    if not is_synopsis(c):
                        parse_exactly(c)
                    state.ran.append(f"parsed: {c}")
                continue
            for number, line in numbered:
                state.shell_line(line, f"{name}:{number}")
    finally:
        state.stop()
    code = [lang for lang, _, _ in fenced_blocks(page) if lang not in NOT_CODE]
    assert state.ran or not code, f"{name}: it has examples, but none ran"


def test_checker_catches_a_missing_flag_or_subcommand():
    """What the page test relies on: a doc naming what ``asmr`` lacks fails."""
    check_synopsis("asmr search QUESTION [--k 10] [--server URL | --no-server]")
    with pytest.raises(AssertionError, match="no option --kk"):
        check_synopsis("asmr search QUESTION [--kk 10]")
    with pytest.raises(AssertionError, match="not a subcommand"):
        check_synopsis("asmr units shw ID")
    with pytest.raises(AssertionError, match="takes"):
        check_synopsis("asmr ask Q [--generator extractive|remote]")
    with pytest.raises(pytest.fail.Exception):
        parse_exactly("asmr docs list --kbb handbook")


def test_links_resolve_and_every_page_is_reachable():
    """Relative links of README.md and docs/ name files that exist; README and docs/README.md link every page."""
    for page in PAGES:
        for target in re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", page.read_text(encoding="utf-8")):
            if "://" in target or target.startswith(("../shared/", "../../shared/")):
                continue
            assert (page.parent / target).exists(), f"{page.relative_to(ROOT)}: link to {target} names no file"
    readme, index = (ROOT / "README.md").read_text(), (ROOT / "docs" / "README.md").read_text()
    for page in PAGES[1:]:
        if page.name != "README.md":
            assert f"docs/{page.name}" in readme, f"README.md does not link docs/{page.name}"
            assert f"({page.name})" in index, f"docs/README.md does not link {page.name}"
