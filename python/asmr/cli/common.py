"""What several ``asmr`` subcommands share: exit codes, argument groups, the memory directory,
the input walk of ``asmr ingest`` and ``asmr reindex``, and the one-line error.

Only the standard library is imported here at module level: every ``asmr`` call imports this
module, and start-up time matters.
"""
from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path
from typing import Iterator


def _process_age() -> float:
    """Seconds since this process started (Linux: /proc), else 0: the interpreter's own start-up and the
    imports before this module count as waiting too."""
    try:
        with open("/proc/self/stat") as f:
            ticks = int(f.read().rsplit(")", 1)[1].split()[19])  # field 22, starttime, in clock ticks
        with open("/proc/uptime") as f:
            uptime = float(f.read().split()[0])
        return max(0.0, uptime - ticks / os.sysconf("SC_CLK_TCK"))
    except (OSError, ValueError, IndexError):
        return 0.0


# When the command started: the time a user waited is measured from here.
STARTED = time.perf_counter() - _process_age()

EXIT_OK, EXIT_CHECK_FAILED, EXIT_BAD_INPUT, EXIT_NOT_FOUND, EXIT_MEMORY = 0, 1, 2, 3, 4
EXIT_SKIPPED = 5  # --skip-bad: the good inputs are in the memory, the bad ones were reported and skipped
EXIT_BROKEN_PIPE = 141  # the reader of stdout went away (`| head`); what a shell reports for SIGPIPE
MAX_QUESTION = 2000  # characters; the server's --max-question has the same default
INPUT_SUFFIXES = (".md", ".markdown", ".txt", ".text", ".rst", ".html", ".htm", ".jsonl")
CHAT_SUFFIXES = (".json", ".jsonl")  # what --format chat reads in a directory


def fail(message: str, code: int) -> int:
    """Print ``asmr: message`` to standard error; returns ``code`` (the handler returns it)."""
    print(f"asmr: {message}", file=sys.stderr)
    return code


# What a new memory's embedder is when none is asked for (``store.Writer``, ``embed.model_for_text``).
EMBEDDER_DEFAULT = ("all-MiniLM-L6-v2, or multilingual-e5-small when MiniLM reads less than half of the "
                    "first text")


def memory_arg(p) -> None:
    p.add_argument("--memory", metavar="DIR", type=Path, default=None,
                   help="memory directory (default: $ASMR_MEMORY, else ./asmr-memory)")


def memory_dir(args) -> Path:
    from ..paths import default_memory_dir
    return args.memory if args.memory is not None else default_memory_dir()


def question_args(p) -> None:
    """The question of search and ask, its length limit, and where it is answered (here or a server)."""
    p.add_argument("question")
    p.add_argument("--max-question", type=positive_int, default=MAX_QUESTION, metavar="CHARS",
                   help=f"longest question accepted (default {MAX_QUESTION} characters)")
    g = p.add_argument_group("a running server (see asmr serve)")
    g.add_argument("--server", metavar="URL", default=None,
                   help="ask the asmr serve at URL (its API key from $ASMR_API_KEY) instead of loading the "
                        "memory here; default: the server that holds --memory now, if one does")
    g.add_argument("--no-server", action="store_true", help="answer here even when a server holds the memory")


def check_question(args) -> str | None:
    """What is wrong with the question (one line naming the limit), or None."""
    if not args.question.strip():
        return "question: empty"
    if len(args.question) > args.max_question:
        return (f"question: {len(args.question)} characters, longer than the limit of {args.max_question} "
                "(--max-question)")
    return None


def waited(work_seconds: float, server: str | None = None) -> str:
    """The time the user waited, for the last line of search and ask: from the start of the command,
    with how much of it went to starting (imports, the memory, models) rather than the question."""
    total = time.perf_counter() - STARTED
    if server:
        return f"({_duration(total)}, answered by the server at {server})"
    start = total - work_seconds
    if start < 0.05:
        return f"({_duration(total)})"
    return f"({_duration(total)}, of which {_duration(start)} starting: imports, the memory and its models)"


def _duration(seconds: float) -> str:
    return f"{seconds * 1e3:.0f} ms" if seconds < 1 else f"{seconds:.1f} s"


def document_args(p, effective_default: str, chat: bool = False) -> None:
    """The flags of how documents are read and stored, shared by `asmr ingest` and `asmr reindex`;
    ``chat``: --format also takes chat (conversations, read by asmr.units.chat)."""
    p.add_argument("--kb", default=None, help="knowledge base name, the <kb> of memo://<kb>/<doc>/<key> (default: kb)")
    p.add_argument("--type", dest="doc_type", choices=("spec", "manual", "faq", "changelog", "notes", "other"),
                   help="document type, overriding front matter (default: front matter, else other)")
    p.add_argument("--format", dest="fmt", choices=("markdown", "text", "html", "chat") if chat else
                   ("markdown", "text", "html"),
                   help="treat every file as this format (default: from the extension)" + (
                       "; chat: JSON or JSONL conversations, a session a document, a turn a unit, "
                       "relative dates resolved (see docs/memory.md)" if chat else ""))
    p.add_argument("--effective-date", metavar="DATE",
                   help=f"ISO date for documents that do not carry one (default: {effective_default})")
    p.add_argument("--errors", choices=("strict", "replace"), default="strict",
                   help="invalid UTF-8: strict stops with the file and byte offset; replace uses U+FFFD")
    p.add_argument("--skip-bad", action="store_true", help="report bad inputs and ingest the rest")
    p.add_argument("--embedder", default=None,
                   help="embedding model of a new memory: all-MiniLM-L6-v2 (English), multilingual-e5-small "
                        "(Chinese and ~100 other languages; slower ingest) or hash-<dim> (default: "
                        f"{EMBEDDER_DEFAULT})")
    p.add_argument("--flat-max", type=int, default=None, metavar="N",
                   help="exact (flat) dense index up to N active units, HNSW above (default: 20000)")


def _fitted_threshold() -> float:
    """The default model's refusal threshold, read from its file (no numpy import for --help)."""
    import json

    path = Path(__file__).resolve().parents[1] / "retrieve" / "confidence_model.json"
    return json.loads(path.read_text())["threshold"]


def retrieve_args(p) -> None:
    """The retrieval flags (search, ask, chat, eval retrieval, serve); ``retrieve_config`` reads them."""
    g = p.add_argument_group("retrieval settings (defaults: asmr.retrieve.RetrieveConfig)")
    g.add_argument("--k", type=int, default=None, help="units returned (default 10)")
    g.add_argument("--seeds", type=int, default=None, help="fused dense+BM25 seeds (default 20)")
    g.add_argument("--depth", type=int, default=None, help="spreading hops (default 2)")
    g.add_argument("--edge-threshold", type=float, default=None, help="edges below it are not followed (0.65)")
    g.add_argument("--confidence-threshold", type=float, default=None, metavar="P",
                   help="below this confidence the result is 'not found' (default: the threshold fitted "
                        f"for the memory's embedder, {_fitted_threshold()} for all-MiniLM-L6-v2)")
    g.add_argument("--mix", default=None, metavar="SIM,PATH,CENT",
                   help="score weights of similarity, path strength, centrality (default 0.5,0.5,0)")
    g.add_argument("--no-learned-edges", dest="learned_edges", action="store_false",
                   help="recall without the usage edges learned by `asmr graph learn`")


def retrieve_config(args):
    """The RetrieveConfig of the retrieval flags. RetrieveConfig checks the values; its ConfigError
    becomes a ValueError naming the flag (``--k 0: must be at least 1``)."""
    from dataclasses import replace

    from ..retrieve import ConfigError, RetrieveConfig

    cfg = RetrieveConfig()
    # one flag at a time, in this order, so that of several bad flags the same one is reported first
    for name in ("confidence_threshold", "k", "seeds", "depth", "edge_threshold", "mix"):
        value = getattr(args, name)
        if value is None:
            continue
        if name == "mix":  # "SIM,PATH,CENT"; a part that is not a number is left for RetrieveConfig to refuse
            value = tuple(_float_or_text(x) for x in value.split(","))
        try:
            cfg = replace(cfg, **{name: value})
        except ConfigError as exc:
            shown = repr(args.mix) if name == "mix" else value
            raise ValueError(f"--{name.replace('_', '-')} {shown}: {exc.reason}") from None
    if not getattr(args, "learned_edges", True):
        cfg = replace(cfg, graph=replace(cfg.graph, usage=False))
    return cfg


def _float_or_text(text: str) -> float | str:
    try:
        return float(text)
    except ValueError:
        return text


def generator_args(p, default: str, help: str) -> None:
    """--generator and the openai generator's endpoint flags (ask, chat, eval answers, serve)."""
    p.add_argument("--generator", choices=("local", "extractive", "openai"), default=default, help=help)
    p.add_argument("--base-url", default=None, help="openai generator: endpoint (or ASMR_OPENAI_BASE_URL)")
    p.add_argument("--model", default=None, help="openai generator: model name (or ASMR_OPENAI_MODEL)")


def positive_int(text: str) -> int:
    """An argparse ``type``: an integer of at least 1."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not an integer") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"{value}: must be at least 1")
    return value


def iter_inputs(paths: list[str], root: Path | None = None,
                suffixes: tuple[str, ...] = INPUT_SUFFIXES) -> Iterator[tuple[Path, Path | None]]:
    """(file, root) pairs: a directory is walked (hidden entries skipped) and is the root of its files,
    unless ``root`` is given (``--root``): then every file's document id is its path relative to it."""
    for raw in paths:
        path = Path(raw)
        if path.is_dir():
            for dirpath, dirnames, filenames in os.walk(path):
                dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
                for name in sorted(filenames):
                    if not name.startswith(".") and name.lower().endswith(suffixes):
                        yield Path(dirpath) / name, root or path
        else:
            yield path, root


def read_inputs(args, errors: list[str]) -> Iterator:
    """Documents of the command's paths, streamed. A bad input raises InputError (the ingest then
    writes nothing), or with --skip-bad is reported, appended to ``errors`` and skipped."""
    from ..units.chat import iter_chat
    from ..units.model import InputError
    from ..units.read import iter_jsonl, read_path

    def bad(exc: InputError) -> None:
        if not args.skip_bad:
            raise exc
        errors.append(str(exc))
        print(f"asmr {getattr(args, 'command', 'ingest')}: skipped {exc}", file=sys.stderr)

    chat = args.fmt == "chat"
    suffixes = CHAT_SUFFIXES if chat else INPUT_SUFFIXES
    for path, root in iter_inputs(args.paths, getattr(args, "root", None), suffixes):
        try:
            if not path.exists():
                raise InputError(f"{path}: no such file or directory")
            if path.is_dir():
                raise InputError(f"{path}: is a directory")
            if chat:  # a session without a date takes --effective-date (other documents: the writer's)
                docs = iter_chat(path, errors=args.errors, doc_type=args.doc_type,
                                 default_date=args.effective_date, on_error=bad,
                                 join_turns=getattr(args, "join_turns", True))
            elif path.suffix.lower() == ".jsonl" and args.fmt is None:
                docs = iter_jsonl(path, errors=args.errors, doc_type=args.doc_type, on_error=bad,
                                  default_date=args.effective_date)
            else:
                docs = [read_path(path, root=root, errors=args.errors, doc_type=args.doc_type, fmt=args.fmt,
                                  default_date=args.effective_date)]
            # --effective-date is the writer's default for documents without a date, and what their
            # relative time is resolved against
            yield from docs
        except InputError as exc:
            bad(exc)
