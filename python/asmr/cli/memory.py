"""``asmr ingest``, ``units show|list``, ``doc history|list``, ``search`` and ``check``: writing the
memory and looking into it."""
from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

from . import remote
from .common import (EXIT_BAD_INPUT, EXIT_CHECK_FAILED, EXIT_NOT_FOUND, EXIT_OK, EXIT_SKIPPED, INPUT_SUFFIXES,
                     check_question, document_args, fail, memory_arg, memory_dir, question_args, read_inputs,
                     retrieve_args, retrieve_config, waited)


def add_ingest(sub) -> None:
    """``asmr ingest``."""
    p = sub.add_parser("ingest", help="add or revise documents (Markdown, text, HTML, JSONL corpora)",
                       description="Parse documents into units and store them. A revised document keeps the ids "
                                   "of unchanged units, supersedes changed ones and deprecates removed ones; an "
                                   "unchanged document is skipped. Any bad input stops the ingest before anything "
                                   "is written, unless --skip-bad.")
    p.add_argument("paths", nargs="+", metavar="PATH",
                   help="files or directories (searched for " + ", ".join(INPUT_SUFFIXES) + ")")
    memory_arg(p)
    document_args(p, "the time of ingest", chat=True)
    p.add_argument("--root", metavar="DIR", type=Path, default=None,
                   help="document ids are paths relative to DIR (asmr ingest kb/ops/deploy.md --root kb revises "
                        "ops.deploy); default: each directory PATH is the root of its files, a file is its name")
    p.add_argument("--prune", action="store_true",
                   help="retire (deprecate, never delete) the documents of --kb that were ingested from a "
                        "directory PATH and whose files are gone")
    p.add_argument("--join-turns", action=argparse.BooleanOptionalAction, default=True,
                   help="--format chat: consecutive short turns (up to 12 words) of one speaker make one "
                        "unit "
                        "(default); --no-join-turns makes every turn a unit of its own")
    p.add_argument("--json", action="store_true", help="print the report as JSON")
    p.add_argument("--no-progress", action="store_true",
                   help="no progress bars (by default they show on a terminal, for work over a second, and "
                        "never with --json)")
    p.set_defaults(handler=cmd_ingest, check_combination=lambda args: _check_ingest_flags(p, args))


def _check_ingest_flags(parser, args) -> None:
    if not args.join_turns and args.fmt != "chat":
        parser.error("--no-join-turns: only with --format chat (other documents have no turns)")


UNIT_STATUSES = ("active", "superseded", "deprecated")


def add_units(sub) -> None:
    """``asmr units show`` and ``asmr units list``."""
    from ..units.model import DOC_TYPES, UNIT_KINDS

    p = sub.add_parser("units", help="look at units")
    usub = p.add_subparsers(dest="units_command", metavar="SUBCOMMAND", required=True)
    ps = usub.add_parser("show", help="show one unit by its address")
    ps.add_argument("unit_id", metavar="ID", help="memo://<kb>/<doc>/<key>")
    memory_arg(ps)
    ps.add_argument("--json", action="store_true", help="print the unit as JSON")
    ps.set_defaults(handler=cmd_units_show)
    pl = usub.add_parser("list", help="list units: address, status, kind, text (by document, in document order)",
                         description="Lists the units the memory holds, every status unless --status; exits 3 "
                                     "when none matches.")
    pl.add_argument("--kb", default=None, help="only this knowledge base")
    pl.add_argument("--doc", dest="doc_id", default=None, metavar="DOC", help="only this document")
    pl.add_argument("--status", choices=UNIT_STATUSES, default=None, help="only units with this status")
    pl.add_argument("--type", dest="doc_type", choices=DOC_TYPES, default=None,
                    help="only units of documents of this type")
    pl.add_argument("--kind", choices=UNIT_KINDS, default=None, help="only units of this kind")
    memory_arg(pl)
    pl.add_argument("--json", action="store_true", help="print a JSON array of units")
    pl.set_defaults(handler=cmd_units_list)


def add_doc(sub) -> None:
    """``asmr doc history`` and ``asmr doc list`` (``asmr docs ...`` is the same command)."""
    from ..units.model import DOCUMENT_STATUSES  # not from the store: every command builds this parser
    from ..units.model import DOC_TYPES

    p = sub.add_parser("doc", aliases=["docs"], help="look at documents")
    dsub = p.add_subparsers(dest="doc_command", metavar="SUBCOMMAND", required=True)
    pl = dsub.add_parser("list", help="list documents: current version, type, status, units, title",
                         description="Lists the documents the memory holds; a retired document (its file was "
                                     "gone at an `asmr ingest --prune`) has no active units. Exits 3 when none "
                                     "matches.")
    pl.add_argument("--kb", default=None, help="only this knowledge base")
    pl.add_argument("--doc", dest="doc_id", default=None, metavar="DOC", help="only this document")
    pl.add_argument("--status", choices=DOCUMENT_STATUSES, default=None, help="only active or only retired")
    pl.add_argument("--type", dest="doc_type", choices=DOC_TYPES, default=None, help="only this document type")
    memory_arg(pl)
    pl.add_argument("--json", action="store_true", help="print a JSON array of documents")
    pl.set_defaults(handler=cmd_docs_list)
    ph = dsub.add_parser("history", help="the versions of a document and what each changed")
    ph.add_argument("doc_id", metavar="DOC")
    ph.add_argument("--kb", default=None, help="knowledge base (needed only when several hold DOC)")
    memory_arg(ph)
    ph.add_argument("--json", action="store_true", help="print the history as JSON")
    ph.set_defaults(handler=cmd_doc_history)


def add_search(sub) -> None:
    """``asmr search``."""
    p = sub.add_parser("search", help="recall units for a question: ranked, with scores and recall paths",
                       description="Seeds from dense and BM25 search, spread over the unit graph, scored by "
                                   "similarity and path strength. Prints the ranked units with their recall "
                                   "paths (seed -> ... -> unit, with edge kinds and weights). A running "
                                   "`asmr serve` that holds the memory answers instead, in milliseconds "
                                   "(--server, --no-server).")
    question_args(p)
    memory_arg(p)
    retrieve_args(p)
    p.add_argument("--json", action="store_true", help="print the result as JSON")
    p.set_defaults(handler=cmd_search, exit_at_once=True)


def add_check(sub) -> None:
    """``asmr check``."""
    p = sub.add_parser("check", help="verify the memory's integrity; exits 1 on any inconsistency")
    memory_arg(p)
    p.add_argument("--json", action="store_true", help="print the report as JSON")
    p.set_defaults(handler=cmd_check)


def cmd_ingest(args) -> int:
    from ..embed import DEFAULT_EMBEDDER, MULTILINGUAL_EMBEDDER, check_embedder_name
    from ..store import DEFAULT_KB, Writer
    from ..text.scripts import READ_FOR_COSINE
    from ..units.model import InputError
    from ..units.read import check_date

    try:
        if args.effective_date:
            check_date("--effective-date", args.effective_date)
        if args.embedder:
            check_embedder_name(args.embedder)
    except ValueError as exc:
        return fail(str(exc), EXIT_BAD_INPUT)
    errors: list[str] = []
    if args.flat_max is not None and args.flat_max < 0:
        return fail(f"--flat-max {args.flat_max}: must be >= 0", EXIT_BAD_INPUT)
    options = {} if args.flat_max is None else {"flat_max": args.flat_max}
    prune = [p for p in args.paths if Path(p).is_dir()] if args.prune else []
    if args.prune and not prune:
        return fail("--prune: no directory among the paths (it retires the documents of files gone from a "
                    "directory)", EXIT_BAD_INPUT)
    # bars on a terminal only, and never with --json (its reader wants the report alone)
    progress = False if args.no_progress or args.json else None
    with Writer(memory_dir(args), embedder=args.embedder, progress=progress, **options) as w:
        try:
            report = w.ingest(read_inputs(args, errors), kb=args.kb or DEFAULT_KB, effective_date=args.effective_date,
                              prune=prune)
        except InputError as exc:
            print(f"asmr ingest: {exc}", file=sys.stderr)
            return fail("nothing was written (--skip-bad ingests the good inputs and reports the bad)",
                         EXIT_BAD_INPUT)
    if not report.documents and not errors:
        return fail("no documents found in " + ", ".join(args.paths), EXIT_BAD_INPUT)
    model, unread, share = _unread_scripts(memory_dir(args))
    if args.json:
        print(json.dumps({**report.to_dict(), "bad_inputs": errors, "embed_model": model,
                          "embed_runtime": getattr(w.embedder(), "runtime", None) if report.embedded else None,
                          "readable_share": round(share, 3)}, indent=2))
    else:
        c = report.counts()
        changes = [f"{sum(getattr(d, k) for d in report.documents)} {k}"
                   for k in ("added", "kept", "superseded", "deprecated")]
        retired = f", {c['retired']} retired (their files are gone)" if c.get("retired") else ""
        print(f"{len(report.documents)} documents: {c['new']} new, {c['revised']} revised, {c['unchanged']} "
              f"unchanged{retired}; units {', '.join(changes)}; {report.embedded} embedded, {report.reused_vectors} "
              f"vectors reused; {report.active_units} active units; {report.seconds:.2f} s")
        if w.default_share is not None and model != DEFAULT_EMBEDDER:
            print(f"asmr ingest: note: a new memory made with {model}: {1 - w.default_share:.0%} of its text "
                  f"is in scripts {DEFAULT_EMBEDDER} does not read (--embedder {DEFAULT_EMBEDDER} to choose "
                  "it anyway)", file=sys.stderr)
        if share < READ_FOR_COSINE:
            print(f"asmr ingest: note: {1 - share:.0%} of this memory's text is in scripts {model} does not read "
                  f"({', '.join(unread)}); recall leans on BM25 there. A memory made with --embedder "
                  f"{MULTILINGUAL_EMBEDDER} reads them.", file=sys.stderr)
    if errors:
        print(f"asmr ingest: {len(errors)} bad input(s) skipped", file=sys.stderr)
    return (EXIT_SKIPPED if report.documents else EXIT_BAD_INPUT) if errors else EXIT_OK


def _unread_scripts(directory) -> tuple[str, list[str], float]:
    """The memory's embedding model, the scripts of its text that the model does not read (most words
    first), and the share of its text the model reads."""
    from ..embed import scripts_of
    from ..retrieve.pipeline import memory_script_words
    from ..store import Memory
    from ..text.scripts import readable_share_of

    with Memory(directory) as m:
        model = m.embed_model
        scripts = scripts_of(model)
        counts = {} if scripts is None else memory_script_words(m)
    unread = sorted((s for s in counts if s not in scripts), key=lambda s: -counts[s]) if counts else []
    return model, unread, readable_share_of(counts, scripts)


def cmd_units_show(args) -> int:
    from ..store import Memory
    from ..units.ids import parse_unit_id
    from ..units.model import InputError

    try:
        parse_unit_id(args.unit_id)
    except InputError as exc:
        return fail(str(exc), EXIT_BAD_INPUT)
    with Memory(memory_dir(args), load_indexes=False) as m:
        unit = m.unit(args.unit_id)
        if unit is None:
            return fail(f"unit {args.unit_id}: not in memory {m.directory}", EXIT_NOT_FOUND)
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


def cmd_units_list(args) -> int:
    from ..store import Memory

    shown = 0
    with Memory(memory_dir(args), load_indexes=False) as m:
        units = m.iter_units(kb=args.kb, doc_id=args.doc_id, status=args.status, kind=args.kind,
                             doc_type=args.doc_type)
        for unit in units:  # streamed: a large memory's units are printed as they are read
            if args.json:
                print(("[" if shown == 0 else ",") + json.dumps(unit.to_dict(), ensure_ascii=False))
            else:
                text = unit.content.replace("\n", " ")
                print(f"{unit.id}  [{unit.status}]  {unit.kind}  {text[:80]}{'...' if len(text) > 80 else ''}")
            shown += 1
    if args.json:
        print("[]" if shown == 0 else "]")
    return EXIT_OK if shown else fail("no unit matches", EXIT_NOT_FOUND)


def cmd_docs_list(args) -> int:
    from ..store import Memory

    with Memory(memory_dir(args), load_indexes=False) as m:
        docs = m.document_summaries(kb=args.kb, doc_id=args.doc_id, status=args.status, doc_type=args.doc_type)
    if args.json:
        print(json.dumps([d.to_dict() for d in docs], indent=2, ensure_ascii=False))
    for d in [] if args.json else docs:
        print(f"{d.kb}/{d.doc_id}  v{d.version}  {d.doc_type}  [{d.status}]  {d.units} units  effective "
              f"{d.effective_date}  {d.title!r}")
    return EXIT_OK if docs else fail("no document matches", EXIT_NOT_FOUND)


def cmd_doc_history(args) -> int:
    from ..store import Memory

    with Memory(memory_dir(args), load_indexes=False) as m:
        kbs = [args.kb] if args.kb else m.find_documents(args.doc_id)
        if len(kbs) > 1:
            return fail(f"document {args.doc_id!r} is in several knowledge bases ({', '.join(kbs)}); pass --kb",
                         EXIT_BAD_INPUT)
        history = m.history(kbs[0], args.doc_id) if kbs else []
    if not history:
        return fail(f"document {args.doc_id!r}: not in memory {m.directory}", EXIT_NOT_FOUND)
    if args.json:
        print(json.dumps([v.to_dict() for v in history], indent=2, ensure_ascii=False))
        return EXIT_OK
    print(f"{history[0].kb}/{args.doc_id}: {len(history)} version(s)")
    for v in history:
        print(f"  v{v.version}  {v.ingested_at}  effective {v.effective_date}  {v.doc_type}  {v.title!r}")
        print(f"       {v.units_total} units: {v.units_added} added, {v.units_kept} kept, {v.units_superseded} "
              f"superseding, {v.units_deprecated} deprecated  (from {v.source})")
    return EXIT_OK


def cmd_search(args) -> int:
    problem = check_question(args)
    if problem:
        return fail(problem, EXIT_BAD_INPUT)
    url, named = remote.server_for(args)
    if url is not None:  # before the retrieval settings are read: that loads the retriever (most of a second)
        code = _search_server(args, url, named)
        if code is not None:
            return code
    try:
        config = retrieve_config(args)
    except ValueError as exc:
        return fail(str(exc), EXIT_BAD_INPUT)
    from ..embed import get_embedder
    from ..retrieve import Retriever
    from ..store import Memory

    with Memory(memory_dir(args)) as m:
        if m.generation == 0:
            return fail(f"memory {m.directory}: empty; run asmr ingest first", EXIT_NOT_FOUND)
        retriever = Retriever(m, get_embedder(m.embed_model), config)
        # the model loads here, not in the search, so that the time line can tell the two apart
        retriever.embedder.embed(["warm up"])
        asked = time.perf_counter()
        result = retriever.search(args.question)
        searching = time.perf_counter() - asked
        units = {u.id: u for u in m.units_at_rows([h.row for h in result.hits])}
    if args.json:
        print(json.dumps({**result.to_dict(), "params": retriever.config.to_dict()}, indent=2, ensure_ascii=False))
        return EXIT_OK
    hits = [{**h.to_dict(), "kind": u.kind, "doc_id": u.doc_id, "section": list(u.section_path),
             "text": u.content} for h, u in ((h, units[h.unit_id]) for h in result.hits)]
    _print_search({**result.to_dict(), "hits": hits})
    print(waited(searching))
    return EXIT_OK


# Retrieval flags a server cannot honour (it recalls with its own settings; --k it takes)
SEARCH_LOCAL_ONLY = {"seeds": None, "depth": None, "edge_threshold": None, "confidence_threshold": None,
                     "mix": None}


def _search_server(args, url: str, named: bool) -> int | None:
    """Search at the server ``url``; None when a server found by itself cannot (this process searches)."""
    body = {"question": args.question} if args.k is None else {"question": args.question, "k": args.k}
    result = remote.exchange(args, url, named, "/v1/search", body, SEARCH_LOCAL_ONLY, "recalls")
    if not isinstance(result, dict):
        return result
    if args.json:
        print(json.dumps(result, indent=2, ensure_ascii=False))
        return EXIT_OK
    _print_search(result)
    print(waited(0, url))
    return EXIT_OK


def _print_search(result: dict) -> None:
    """A recall as ``Result.to_dict`` gives it, each hit with its unit's kind, doc_id, section and text
    (as the server's /v1/search gives it)."""
    if not result["found"]:
        print(f"not found ({result['reason']})" + ("; the closest candidates:" if result["hits"] else ""))
    else:
        print(f"confidence {result['confidence']:.2f}")
    for rank, h in enumerate(result["hits"], 1):
        print(f"{rank:2}. {h['score']:.3f}  {h['unit_id']}  ({h.get('kind') or 'unit'}, "
              f"{' > '.join(h['section']) or h['doc_id']})")
        print(f"      similarity {h['similarity']:.3f}, path strength {h['strength']:.3f}, hop {h['hop']}, "
              f"effective {h['effective_at']}")
        if h["alternative_to"]:
            print(f"      ALTERNATIVE: {h['alternative_to']} says otherwise and is newer or current")
        if h["disagrees_with"]:
            print(f"      DISAGREES with {h['disagrees_with']}: another value, and nothing tells which holds")
        if h["previous_version"]:
            print(f"      replaces {h['previous_version']} (superseded)")
        if h["hop"]:
            path = " -> ".join(f"[{p['edge_kind']} {p['edge_weight']:.2f}] {p['node']}" if p["edge_kind"]
                               else p["node"] for p in h["path"])
            print(f"      path: {path}")
        text = h["text"].replace("\n", " ")
        print(f"      {text[:200]}{'...' if len(text) > 200 else ''}")


def cmd_check(args) -> int:
    from ..store import check_memory

    report = check_memory(memory_dir(args))
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
