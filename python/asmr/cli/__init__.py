"""The ``asmr`` command line.

Exit codes: 0 done; 1 ``asmr check`` found inconsistencies, or ``asmr eval
verifier`` missed an injected fault; 2 bad arguments or bad input (nothing was
written), or the generator cannot load or its endpoint failed (nothing of that
question was written; ``asmr chat`` keeps the turns before it); 3 the unit,
document or audit record asked for does not exist; 4 the memory cannot be used
(newer schema, another writer, not a memory); 5 ``--skip-bad`` wrote the good
inputs and skipped some bad ones; 130 interrupted; 141 the reader of the output
went away (``| head``), which is not reported.

One module a command family: ``memory`` (ingest, units, doc, search, check), ``answers``
(ask, chat, audit), ``evaluate`` (eval), ``graph`` (learn, show, forget), ``serve``, ``reindex``;
``common`` holds what they share. Each subcommand's parser sets its ``handler``; ``main``
calls it. Handlers import the heavy modules (models, indexes, the server) when they run, so
that ``asmr --help`` and argument errors stay fast.
"""
from __future__ import annotations

import argparse
import os
import sys

from .. import __version__
from . import answers, evaluate, graph, memory, reindex, serve
from .common import (EXIT_BAD_INPUT, EXIT_BROKEN_PIPE, EXIT_CHECK_FAILED, EXIT_MEMORY, EXIT_NOT_FOUND, EXIT_OK,
                     EXIT_SKIPPED, fail)

__all__ = ["EXIT_BAD_INPUT", "EXIT_BROKEN_PIPE", "EXIT_CHECK_FAILED", "EXIT_MEMORY", "EXIT_NOT_FOUND", "EXIT_OK",
           "EXIT_SKIPPED", "build_parser", "main"]

# in the order `asmr --help` lists them
SUBCOMMANDS = (memory.add_ingest, memory.add_units, memory.add_doc, memory.add_search, answers.add_ask,
               answers.add_chat, evaluate.add_eval, answers.add_audit, graph.add_graph, memory.add_check,
               serve.add_serve, reindex.add_reindex)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="asmr", description="ASMR: a memory of addressable, versioned units with citations that cannot lie.",
        epilog="Exit codes: 0 ok, 1 check failed, 2 bad input (nothing written), 3 not found, 4 memory "
               "unusable, 5 written but some inputs skipped (--skip-bad).")
    parser.add_argument("--version", action="version", version=f"asmr {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for add in SUBCOMMANDS:
        add(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    check_combination = getattr(args, "check_combination", None)
    if check_combination is not None:  # flags that are valid alone but not together (exits 2)
        check_combination(args)
    # Before any native library loads: OpenMP runtimes read their settings once, when loaded.
    for name, value in getattr(args, "environment", {}).items():
        os.environ.setdefault(name, value)
    try:
        code = args.handler(args)
        sys.stdout.flush()  # here, so that a reader gone away is caught below and not at exit
        if argv is None and getattr(args, "exit_at_once", False):
            # search and ask have written all they write: the interpreter's teardown of torch and the
            # other model libraries would keep the user waiting seconds (3 s here) after the answer
            sys.stderr.flush()
            os._exit(code)
        return code
    except BrokenPipeError:
        # The reader of the output went away (`asmr search ... | head`): stop quietly, as Unix tools do;
        # stdout goes to /dev/null so that the interpreter's own flush at exit does not fail again.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
        return EXIT_BROKEN_PIPE
    except KeyboardInterrupt:
        return fail("interrupted; the memory is as it was before this command", 130)
    except Exception as exc:
        # The memory's and the input's errors are imported only once something was raised: importing
        # them loads the whole store (most of a second), which a question sent to a server never needs.
        from ..store import MemoryStateError
        from ..units.model import InputError

        if isinstance(exc, MemoryStateError):
            return fail(str(exc), EXIT_MEMORY)
        if isinstance(exc, InputError):
            return fail(f"{exc}; nothing was written", EXIT_BAD_INPUT)
        raise


if __name__ == "__main__":
    sys.exit(main())
