"""The ``asmr`` command line.

Exit codes: 0 done; 1 ``asmr check`` found inconsistencies; 2 bad arguments or
bad input (nothing was written); 3 the unit or document asked for does not
exist; 4 the memory cannot be used (newer schema, another writer, not a memory).
"""
from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import Iterator

from . import __version__

EXIT_OK, EXIT_CHECK_FAILED, EXIT_BAD_INPUT, EXIT_NOT_FOUND, EXIT_MEMORY = 0, 1, 2, 3, 4
INPUT_SUFFIXES = (".md", ".markdown", ".txt", ".text", ".rst", ".html", ".htm", ".jsonl")


def _memory_arg(p: argparse.ArgumentParser) -> None:
    p.add_argument("--memory", metavar="DIR", type=Path, default=None,
                   help="memory directory (default: $ASMR_MEMORY, else ./asmr-memory)")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="asmr", description="ASMR: a memory of addressable, versioned units with citations that cannot lie.",
        epilog="Exit codes: 0 ok, 1 check failed, 2 bad input, 3 not found, 4 memory unusable.")
    parser.add_argument("--version", action="version", version=f"asmr {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)

    p = sub.add_parser("ingest", help="add or revise documents (Markdown, text, HTML, JSONL corpora)",
                       description="Parse documents into units and store them. A revised document keeps the ids "
                                   "of unchanged units, supersedes changed ones and deprecates removed ones; an "
                                   "unchanged document is skipped. Any bad input stops the ingest before anything "
                                   "is written, unless --skip-bad.")
    p.add_argument("paths", nargs="+", metavar="PATH",
                   help="files or directories (searched for " + ", ".join(INPUT_SUFFIXES) + ")")
    _memory_arg(p)
    p.add_argument("--kb", default=None, help="knowledge base name, the <kb> of memo://<kb>/<doc>/<key> (default: kb)")
    p.add_argument("--type", dest="doc_type", choices=("spec", "manual", "faq", "changelog", "notes", "other"),
                   help="document type, overriding front matter (default: front matter, else other)")
    p.add_argument("--format", dest="fmt", choices=("markdown", "text", "html"),
                   help="treat every file as this format (default: from the extension)")
    p.add_argument("--effective-date", metavar="DATE",
                   help="ISO date for documents that do not carry one (default: the time of ingest)")
    p.add_argument("--errors", choices=("strict", "replace"), default="strict",
                   help="invalid UTF-8: strict stops with the file and byte offset; replace uses U+FFFD")
    p.add_argument("--skip-bad", action="store_true", help="report bad inputs and ingest the rest")
    p.add_argument("--embedder", default=None,
                   help="embedding model: all-MiniLM-L6-v2 (default for a new memory) or hash-<dim>")
    p.add_argument("--flat-max", type=int, default=None, metavar="N",
                   help="exact (flat) dense index up to N active units, HNSW above (default: 200000)")
    p.add_argument("--json", action="store_true", help="print the report as JSON")
    p.add_argument("--no-progress", action="store_true", help="no progress bars")

    p = sub.add_parser("units", help="look at units")
    usub = p.add_subparsers(dest="units_command", metavar="SUBCOMMAND", required=True)
    ps = usub.add_parser("show", help="show one unit by its address")
    ps.add_argument("unit_id", metavar="ID", help="memo://<kb>/<doc>/<key>")
    _memory_arg(ps)
    ps.add_argument("--json", action="store_true", help="print the unit as JSON")

    p = sub.add_parser("doc", help="look at documents")
    dsub = p.add_subparsers(dest="doc_command", metavar="SUBCOMMAND", required=True)
    ph = dsub.add_parser("history", help="the versions of a document and what each changed")
    ph.add_argument("doc_id", metavar="DOC")
    ph.add_argument("--kb", default=None, help="knowledge base (needed only when several hold DOC)")
    _memory_arg(ph)
    ph.add_argument("--json", action="store_true", help="print the history as JSON")

    p = sub.add_parser("check", help="verify the memory's integrity; exits 1 on any inconsistency")
    _memory_arg(p)
    p.add_argument("--json", action="store_true", help="print the report as JSON")
    return parser


def _memory_dir(args) -> Path:
    from .store import default_memory_dir
    return args.memory if args.memory is not None else default_memory_dir()


def _iter_inputs(paths: list[str]) -> Iterator[tuple[Path, Path | None]]:
    """(file, root) pairs: a directory is walked (hidden entries skipped) and is the root of its files."""
    for raw in paths:
        path = Path(raw)
        if path.is_dir():
            for dirpath, dirnames, filenames in os.walk(path):
                dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
                for name in sorted(filenames):
                    if not name.startswith(".") and name.lower().endswith(INPUT_SUFFIXES):
                        yield Path(dirpath) / name, path
        else:
            yield path, None


def _read_inputs(args, errors: list[str]) -> Iterator:
    """Documents of the command's paths, streamed. A bad input raises InputError (the ingest then
    writes nothing), or with --skip-bad is reported, appended to ``errors`` and skipped."""
    from .units.model import InputError
    from .units.read import iter_jsonl, read_path

    def bad(exc: InputError) -> None:
        if not args.skip_bad:
            raise exc
        errors.append(str(exc))
        print(f"asmr ingest: skipped {exc}", file=sys.stderr)

    for path, root in _iter_inputs(args.paths):
        try:
            if not path.exists():
                raise InputError(f"{path}: no such file or directory")
            if path.is_dir():
                raise InputError(f"{path}: is a directory")
            if path.suffix.lower() == ".jsonl" and args.fmt is None:
                docs = iter_jsonl(path, errors=args.errors, doc_type=args.doc_type, on_error=bad)
            else:
                docs = [read_path(path, root=root, errors=args.errors, doc_type=args.doc_type, fmt=args.fmt)]
            for d in docs:
                d.effective_date = d.effective_date or args.effective_date
                yield d
        except InputError as exc:
            bad(exc)


def cmd_ingest(args) -> int:
    from .embed import check_embedder_name
    from .store import DEFAULT_KB, Writer
    from .units.model import InputError
    from .units.read import check_date

    try:
        if args.effective_date:
            check_date("--effective-date", args.effective_date)
        if args.embedder:
            check_embedder_name(args.embedder)
    except ValueError as exc:
        return _fail(str(exc), EXIT_BAD_INPUT)
    errors: list[str] = []
    if args.flat_max is not None and args.flat_max < 0:
        return _fail(f"--flat-max {args.flat_max}: must be >= 0", EXIT_BAD_INPUT)
    options = {} if args.flat_max is None else {"flat_max": args.flat_max}
    with Writer(_memory_dir(args), embedder=args.embedder, progress=False if args.no_progress else None,
                **options) as w:
        try:
            report = w.ingest(_read_inputs(args, errors), kb=args.kb or DEFAULT_KB)
        except InputError as exc:
            print(f"asmr ingest: {exc}", file=sys.stderr)
            return _fail("nothing was written (--skip-bad ingests the good inputs and reports the bad)",
                         EXIT_BAD_INPUT)
    if not report.documents and not errors:
        return _fail("no documents found in " + ", ".join(args.paths), EXIT_BAD_INPUT)
    if args.json:
        print(json.dumps({**report.to_dict(), "bad_inputs": errors}, indent=2))
    else:
        c = report.counts()
        changes = [f"{sum(getattr(d, k) for d in report.documents)} {k}"
                   for k in ("added", "kept", "superseded", "deprecated")]
        print(f"{len(report.documents)} documents: {c['new']} new, {c['revised']} revised, {c['unchanged']} "
              f"unchanged; units {', '.join(changes)}; {report.embedded} embedded, {report.reused_vectors} "
              f"vectors reused; {report.active_units} active units; {report.seconds:.2f} s")
    if errors:
        print(f"asmr ingest: {len(errors)} bad input(s) skipped", file=sys.stderr)
    return EXIT_BAD_INPUT if errors else EXIT_OK


def cmd_units_show(args) -> int:
    from .store import Memory
    from .units.ids import parse_unit_id
    from .units.model import InputError

    try:
        parse_unit_id(args.unit_id)
    except InputError as exc:
        return _fail(str(exc), EXIT_BAD_INPUT)
    with Memory(_memory_dir(args), load_indexes=False) as m:
        unit = m.unit(args.unit_id)
        if unit is None:
            return _fail(f"unit {args.unit_id}: not in memory {m.directory}", EXIT_NOT_FOUND)
        links = m.links_from(unit.id)
    if args.json:
        print(json.dumps({**unit.to_dict(), "links": links}, indent=2, ensure_ascii=False))
        return EXIT_OK
    print(f"{unit.id}  [{unit.status}]")
    if unit.superseded_by:
        print(f"  superseded by  {unit.superseded_by}")
    print(f"  document       {unit.kb}/{unit.doc_id} v{unit.doc_version}, characters "
          f"{unit.offset_start}-{unit.offset_end}")
    print(f"  kind           {unit.kind}" + (f", parent {unit.parent_id}" if unit.parent_id else ""))
    if unit.section_path:
        print(f"  section        {' > '.join(unit.section_path)}")
    print(f"  created        {unit.created_at}, effective {unit.effective_at}, embedded by {unit.embed_model}")
    for ln in links:
        print(f"  links to       {ln['kind']} {ln['target']!r}" + (f" (document {ln['target_doc']})"
                                                                  if ln["target_doc"] else ""))
    print()
    print(unit.content)
    return EXIT_OK


def cmd_doc_history(args) -> int:
    from .store import Memory

    with Memory(_memory_dir(args), load_indexes=False) as m:
        kbs = [args.kb] if args.kb else m.find_documents(args.doc_id)
        if len(kbs) > 1:
            return _fail(f"document {args.doc_id!r} is in several knowledge bases ({', '.join(kbs)}); pass --kb",
                         EXIT_BAD_INPUT)
        history = m.history(kbs[0], args.doc_id) if kbs else []
    if not history:
        return _fail(f"document {args.doc_id!r}: not in memory {m.directory}", EXIT_NOT_FOUND)
    if args.json:
        print(json.dumps([v.to_dict() for v in history], indent=2, ensure_ascii=False))
        return EXIT_OK
    print(f"{history[0].kb}/{args.doc_id}: {len(history)} version(s)")
    for v in history:
        print(f"  v{v.version}  {v.ingested_at}  effective {v.effective_date}  {v.doc_type}  {v.title!r}")
        print(f"       {v.units_total} units: {v.units_added} added, {v.units_kept} kept, {v.units_superseded} "
              f"superseding, {v.units_deprecated} deprecated  (from {v.source})")
    return EXIT_OK


def cmd_check(args) -> int:
    from .store import check_memory

    report = check_memory(_memory_dir(args))
    if args.json:
        print(json.dumps(report.to_dict(), indent=2))
    else:
        counts = ", ".join(f"{k} {v}" for k, v in report.counts.items())
        for p in report.problems:
            print(f"PROBLEM  {p}")
        for n in report.notes:
            print(f"note     {n}")
        print(("ok" if report.ok else f"{len(report.problems)} problem(s)") + f": {counts}")
    return EXIT_OK if report.ok else EXIT_CHECK_FAILED


def _fail(message: str, code: int) -> int:
    print(f"asmr: {message}", file=sys.stderr)
    return code


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    from .store import MemoryStateError
    from .units.model import InputError

    handlers = {"ingest": cmd_ingest, "check": cmd_check,
                "units": {"show": cmd_units_show}.get(getattr(args, "units_command", None)),
                "doc": {"history": cmd_doc_history}.get(getattr(args, "doc_command", None))}
    try:
        return handlers[args.command](args)
    except MemoryStateError as exc:
        return _fail(str(exc), EXIT_MEMORY)
    except InputError as exc:
        return _fail(f"{exc}; nothing was written", EXIT_BAD_INPUT)
    except KeyboardInterrupt:
        return _fail("interrupted; the memory is as it was before this command", 130)


if __name__ == "__main__":
    sys.exit(main())
