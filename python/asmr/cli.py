"""The ``asmr`` command line.

Exit codes: 0 done; 1 ``asmr check`` found inconsistencies, or ``asmr eval
verifier`` missed an injected fault; 2 bad arguments or bad input (nothing was
written), or the generator cannot load or its endpoint failed (nothing of that
question was written; ``asmr chat`` keeps the turns before it); 3 the unit,
document or audit record asked for does not exist; 4 the memory cannot be used
(newer schema, another writer, not a memory).
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
    document_args(p, "the time of ingest")
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

    p = sub.add_parser("search", help="recall units for a question: ranked, with scores and recall paths",
                       description="Seeds from dense and BM25 search, spread over the unit graph, scored by "
                                   "similarity and path strength. Prints the ranked units with their recall "
                                   "paths (seed -> ... -> unit, with edge kinds and weights).")
    p.add_argument("question")
    _memory_arg(p)
    _retrieve_args(p)
    p.add_argument("--json", action="store_true", help="print the result as JSON")

    p = sub.add_parser("ask", help="answer a question from the memory, with verified citations",
                       description="Recalls units for the question, lets only those be cited in this turn, asks "
                                   "the generator (the citation-closure processor keeps every marker on an "
                                   "allowed id), verifies every cited sentence and prints the answer with "
                                   "numbered citations. Below the retrieval confidence threshold the answer is "
                                   "'not found', with the closest candidates.")
    p.add_argument("question")
    _memory_arg(p)
    _answer_args(p)
    p.add_argument("--explain", action="store_true", help="also print the recall path of each cited unit and "
                                                          "the verifier's decisions")
    p.add_argument("--json", action="store_true", help="print the answer, citations and audit as JSON")

    p = sub.add_parser("chat", help="a conversation: one question a line, turn-scoped allowlists",
                       description="Reads questions from standard input, one a line, and answers each as "
                                   "`asmr ask` does. A unit allowed in one turn is citable in the next only if "
                                   "that turn recalls it again. --conversation keeps the turns in a JSON file "
                                   "across runs.")
    _memory_arg(p)
    _answer_args(p)
    p.add_argument("--conversation", type=Path, default=None, metavar="FILE",
                   help="JSON file holding the conversation's turns (created if missing)")

    p = sub.add_parser("eval", help="evaluate retrieval, the citation verifier or answers; generate the "
                                    "synthetic knowledge base")
    esub = p.add_subparsers(dest="eval_command", metavar="SUBCOMMAND", required=True)
    pe = esub.add_parser("retrieval", help="Recall@2/@5 and latency of bm25, dense, hybrid, ppr and asmr",
                         description="Ingests the corpus (or reuses a memory that already holds it; unchanged "
                                     "documents are skipped), runs every question with each method and reports "
                                     "Recall@2, Recall@5 over gold documents and P50/P95 latency. The settings "
                                     "are the shipped defaults unless flags say otherwise; never refitted.")
    pe.add_argument("--corpus", required=True, type=Path, help='JSONL of {"pid"|"id", "title", "text"}')
    pe.add_argument("--queries", required=True, type=Path, help='JSONL of {"qid", "question", "gold_pids"}')
    _memory_arg(pe)
    pe.add_argument("--embedder", default=None, help="embedding model for a new memory (default all-MiniLM-L6-v2)")
    pe.add_argument("--methods", default=",".join(("bm25", "dense", "hybrid", "ppr", "asmr")),
                    help="comma-separated subset of bm25,dense,hybrid,ppr,asmr")
    pe.add_argument("--unanswerable", type=float, default=None, metavar="FRACTION",
                    help="also remove the gold documents of this share of the questions (in a second memory) "
                         "and report refusal precision, recall and false-refusal rate")
    pe.add_argument("--seed", type=int, default=0, help="which questions --unanswerable picks (default 0)")
    _retrieve_args(pe)
    pe.add_argument("--json", action="store_true", help="print one JSON object")
    pv = esub.add_parser("verifier", help="citation faults injected into real answers, and the support check on "
                                          "AttributionBench",
                         description="Structural: builds answers from the memory's units and the units each turn "
                                     "recalls, injects invented, deprecated, superseded and earlier-turn ids, "
                                     "truncated and malformed markers, and markers hidden in quoted or copied source "
                                     "text, and counts how many the verifier catches (all must be). Attribution: "
                                     "the shipped support model and thresholds, never refitted, as a classifier "
                                     "over an AttributionBench file. Exits 1 if an injected fault was missed.")
    pv.add_argument("--memory", metavar="DIR", type=Path, default=None,
                    help="memory to build answers from (default: a temporary one built from examples/handbook "
                         "and its revision examples/handbook-v2)")
    pv.add_argument("--attribution", metavar="FILE", type=Path, default=None,
                    help="AttributionBench JSONL (default: ../shared/data/attributionbench_dev.jsonl if it "
                         "exists, else the attribution check is skipped)")
    pv.add_argument("--embedder", default=None,
                    help="embedder of the temporary memory (default all-MiniLM-L6-v2; hash-<dim> is faster)")
    pv.add_argument("--turns", type=int, default=8, help="conversation turns, one real answer each (default 8)")
    pv.add_argument("--json", action="store_true", help="print one JSON object")

    ps = esub.add_parser("synth", help="generate the synthetic enterprise knowledge base and its questions",
                         description="Writes OUT/docs/v1 and OUT/docs/v2 (Markdown with sections, lists and "
                                     "tables; v2 revises v1), OUT/queries.jsonl (single-fact, multi-document, "
                                     "conflict and unanswerable questions) and OUT/README.md. Deterministic "
                                     "for a seed.")
    ps.add_argument("--out", required=True, type=Path, metavar="DIR", help="output folder")
    ps.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    ps.add_argument("--units", type=int, default=5000, help="units after chunking, about (default 5000)")
    ps.add_argument("--questions", type=int, default=800, help="questions (default 800)")
    ps.add_argument("--json", action="store_true", help="print the report as JSON")
    pa = esub.add_parser("answers", help="answer accuracy of dense RAG, hybrid RAG, ASMR and verified ASMR",
                         description="Answers every question with each method and the same generator and "
                                     "reports memory accuracy, hallucination rate, refusal rates, citation "
                                     "precision and recall, key-fact recall and latency (definitions in the "
                                     "report). Data: --synth DIR from `asmr eval synth` (v1 then v2 are ingested) "
                                     "or --corpus/--queries in the format of ../shared/data.")
    src = pa.add_mutually_exclusive_group(required=True)
    src.add_argument("--synth", type=Path, metavar="DIR", help="output of asmr eval synth")
    src.add_argument("--corpus", type=Path, help='JSONL of {"pid"|"id", "title", "text"} (with --queries)')
    pa.add_argument("--queries", type=Path, help='JSONL of {"qid", "question", "answers", "gold_pids"}')
    pa.add_argument("--unanswerable", type=float, default=None, metavar="FRACTION",
                    help="with --corpus: remove the gold passages of this share of the questions")
    pa.add_argument("--seed", type=int, default=0, help="which questions --unanswerable picks (default 0)")
    _memory_arg(pa)
    pa.add_argument("--embedder", default=None, help="embedding model for a new memory (default all-MiniLM-L6-v2)")
    generator_args(pa, "extractive", "generator for every method (default extractive: no model, fast)")
    pa.add_argument("--methods", default="dense_rag,hybrid_rag,asmr,asmr_verified",
                    help="comma-separated subset of dense_rag,hybrid_rag,asmr,asmr_verified")
    pa.add_argument("--redundancy", choices=("list", "full"), default="list",
                    help="the block the +redundancy variants add (model generators only): list = key facts; "
                         "full = also an example question and answer, and the model's paraphrase (default list)")
    pa.add_argument("--limit", type=int, default=None, metavar="N", help="only the first N questions")
    pa.add_argument("--out", type=Path, default=None, metavar="DIR",
                    help="write report.md, report.json, outcomes.jsonl and PNG charts here")
    pa.add_argument("--json", action="store_true", help="print one JSON object")
    pa.add_argument("--no-progress", action="store_true", help="no progress bar")
    pa.set_defaults(check_combination=lambda args: _check_answers_data(pa, args))

    p = sub.add_parser("audit", help="print the verifier's audit records: every sentence, citation, check and "
                                     "outcome",
                       description="Every verified answer leaves one record in <memory>/audit/<date>.jsonl: each "
                                   "sentence, its citations, the exists/active/allowed/supports checks with "
                                   "scores, and the outcome. Exits 3 when there is no record to print.")
    _memory_arg(p)
    p.add_argument("--last", type=int, default=None, metavar="N", help="only the last N records")
    p.add_argument("--turn", default=None, metavar="ID",
                   help="only the records of one turn (<conversation>/<n>) or of one conversation")
    p.add_argument("--json", action="store_true", help="print the records as a JSON array")

    p = sub.add_parser("check", help="verify the memory's integrity; exits 1 on any inconsistency")
    _memory_arg(p)
    p.add_argument("--json", action="store_true", help="print the report as JSON")

    # the HTTP face and the batch re-indexer own their subcommands (each sets its handler)
    from .reindex.cli import register as register_reindex
    from .server.cli import register as register_serve
    register_serve(sub, _memory_arg)
    register_reindex(sub, _memory_arg)
    return parser


def _check_answers_data(parser: argparse.ArgumentParser, args) -> None:
    """Flags that only --corpus reads are an error with --synth, not silently dropped."""
    if args.synth is None:
        return
    if args.unanswerable is not None:
        parser.error("--unanswerable: only with --corpus/--queries; --synth DIR brings its own unanswerable "
                     "questions (the fields asmr eval synth leaves out)")
    if args.queries is not None:
        parser.error("--queries: only with --corpus; --synth DIR reads DIR/queries.jsonl")


def document_args(p, effective_default: str) -> None:
    """The flags of how documents are read and stored, shared by `asmr ingest` and `asmr reindex`."""
    p.add_argument("--kb", default=None, help="knowledge base name, the <kb> of memo://<kb>/<doc>/<key> (default: kb)")
    p.add_argument("--type", dest="doc_type", choices=("spec", "manual", "faq", "changelog", "notes", "other"),
                   help="document type, overriding front matter (default: front matter, else other)")
    p.add_argument("--format", dest="fmt", choices=("markdown", "text", "html"),
                   help="treat every file as this format (default: from the extension)")
    p.add_argument("--effective-date", metavar="DATE",
                   help=f"ISO date for documents that do not carry one (default: {effective_default})")
    p.add_argument("--errors", choices=("strict", "replace"), default="strict",
                   help="invalid UTF-8: strict stops with the file and byte offset; replace uses U+FFFD")
    p.add_argument("--skip-bad", action="store_true", help="report bad inputs and ingest the rest")
    p.add_argument("--embedder", default=None,
                   help="embedding model: all-MiniLM-L6-v2 (default for a new memory) or hash-<dim>")
    p.add_argument("--flat-max", type=int, default=None, metavar="N",
                   help="exact (flat) dense index up to N active units, HNSW above (default: 20000)")


def _retrieve_args(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("retrieval settings (defaults: asmr.retrieve.RetrieveConfig)")
    g.add_argument("--k", type=int, default=None, help="units returned (default 10)")
    g.add_argument("--seeds", type=int, default=None, help="fused dense+BM25 seeds (default 20)")
    g.add_argument("--depth", type=int, default=None, help="spreading hops (default 2)")
    g.add_argument("--edge-threshold", type=float, default=None, help="edges below it are not followed (0.65)")
    g.add_argument("--confidence-threshold", type=float, default=None, metavar="P",
                   help="below this confidence the result is 'not found' (default 0.75, calibrated for "
                        "all-MiniLM-L6-v2)")
    g.add_argument("--mix", default=None, metavar="SIM,PATH,CENT",
                   help="score weights of similarity, path strength, centrality (default 0.5,0.5,0)")


def _retrieve_config(args):
    from dataclasses import replace

    from .retrieve import RetrieveConfig

    cfg = RetrieveConfig()
    changes = {name: getattr(args, name) for name in ("k", "seeds", "depth", "edge_threshold",
                                                      "confidence_threshold")
               if getattr(args, name) is not None}
    if not 0.0 <= changes.get("confidence_threshold", 0.0) <= 1.0:
        raise ValueError(f"--confidence-threshold {changes['confidence_threshold']}: must be in [0, 1]")
    for name in ("k", "seeds"):
        if name in changes and changes[name] < 1:
            raise ValueError(f"--{name} {changes[name]}: must be at least 1")
    if "depth" in changes and not 0 <= changes["depth"] <= 8:
        raise ValueError(f"--depth {changes['depth']}: must be in 0..8")
    if args.mix is not None:
        try:
            mix = tuple(float(x) for x in args.mix.split(","))
        except ValueError:
            mix = ()
        if len(mix) != 3 or any(x < 0 for x in mix) or sum(mix) <= 0:
            raise ValueError(f"--mix {args.mix!r}: must be three non-negative numbers, not all zero")
        changes["mix"] = mix
    return replace(cfg, **changes)


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
        print(f"asmr {getattr(args, 'command', 'ingest')}: skipped {exc}", file=sys.stderr)

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


def cmd_search(args) -> int:
    from .embed import get_embedder
    from .retrieve import Retriever
    from .store import Memory

    try:
        config = _retrieve_config(args)
    except ValueError as exc:
        return _fail(str(exc), EXIT_BAD_INPUT)
    if not args.question.strip():
        return _fail("question: empty", EXIT_BAD_INPUT)
    with Memory(_memory_dir(args)) as m:
        if m.generation == 0:
            return _fail(f"memory {m.directory}: empty; run asmr ingest first", EXIT_NOT_FOUND)
        retriever = Retriever(m, get_embedder(m.embed_model), config)
        result = retriever.search(args.question)
        units = {u.id: u for u in m.units_at_rows([h.row for h in result.hits])}
    if args.json:
        print(json.dumps({**result.to_dict(), "params": config.to_dict()}, indent=2, ensure_ascii=False))
        return EXIT_OK
    if not result.found:
        print(f"not found ({result.reason})" + ("; the closest candidates:" if result.hits else ""))
    else:
        print(f"confidence {result.confidence:.2f}")
    for rank, h in enumerate(result.hits, 1):
        u = units[h.unit_id]
        print(f"{rank:2}. {h.score:.3f}  {h.unit_id}  ({u.kind}, {' > '.join(u.section_path) or u.doc_id})")
        print(f"      similarity {h.similarity:.3f}, path strength {h.strength:.3f}, hop {h.hop}, "
              f"effective {h.effective_at}")
        if h.alternative_to:
            print(f"      ALTERNATIVE: older than {h.alternative_to}, which says otherwise")
        if h.previous_version:
            print(f"      replaces {h.previous_version} (superseded)")
        if h.hop:
            path = " -> ".join(f"[{p.edge_kind} {p.edge_weight:.2f}] {p.node}" if p.edge_kind else p.node
                               for p in h.path)
            print(f"      path: {path}")
        text = u.content.replace("\n", " ")
        print(f"      {text[:200]}{'...' if len(text) > 200 else ''}")
    print(f"({result.seconds * 1000:.1f} ms)")
    return EXIT_OK


def cmd_eval_retrieval(args) -> int:
    from .embed import get_embedder
    from .eval.retrieval import (METHODS, evaluate, load_queries, refusal_features, refusal_report,
                                 split_unanswerable)
    from .store import Memory, Writer
    from .units.read import iter_jsonl

    try:
        config = _retrieve_config(args)
        methods = tuple(x.strip() for x in args.methods.split(",") if x.strip())
        unknown = [x for x in methods if x not in METHODS]
        if unknown or not methods:
            raise ValueError(f"--methods {args.methods!r}: unknown {unknown or 'none given'}; "
                             f"choose from {','.join(METHODS)}")
        queries = load_queries(args.queries)
        if args.unanswerable is not None:
            unanswerable, removed = split_unanswerable(queries, args.unanswerable, args.seed)
    except (ValueError, OSError) as exc:
        return _fail(str(exc), EXIT_BAD_INPUT)
    memory = args.memory or Path(f"asmr-eval-{args.corpus.stem}")
    with Writer(memory, embedder=args.embedder, progress=None if not args.json else False) as w:
        w.ingest(iter_jsonl(args.corpus), kb="eval")
    with Memory(memory) as m:
        report = evaluate(m, get_embedder(m.embed_model), queries, config, methods)
    report["params"]["corpus"], report["params"]["memory"] = str(args.corpus), str(memory)
    if args.unanswerable is not None:
        reduced = Path(f"{memory}-unanswerable-{args.unanswerable}-{args.seed}")
        with Writer(reduced, embedder=args.embedder, progress=False) as w:
            w.ingest((d for d in iter_jsonl(args.corpus) if d.doc_id not in removed), kb="eval")
        with Memory(reduced) as m:
            rows = refusal_features(m, get_embedder(m.embed_model), queries, config)
        report["refusal"] = refusal_report(rows, unanswerable)
        report["params"]["unanswerable"] = {"fraction": args.unanswerable, "seed": args.seed,
                                            "memory": str(reduced)}
    if args.json:
        print(json.dumps(report, indent=2))
        return EXIT_OK
    print(f"{len(queries)} questions, memory {memory}, embedder {report['params']['embedder']}")
    print(f"{'method':8} {'R@2':>6} {'R@5':>6} {'P50 ms':>8} {'P95 ms':>8}")
    for name, r in report["methods"].items():
        print(f"{name:8} {r['recall@2']:6.3f} {r['recall@5']:6.3f} {r['p50_ms']:8.1f} {r['p95_ms']:8.1f}")
    if "refusal" in report:
        r = report["refusal"]
        print(f"refusal on {r['unanswerable']} unanswerable / {r['answerable']} answerable questions: "
              f"precision {r['precision']:.3f}, recall {r['recall']:.3f}, "
              f"false-refusal rate {r['false_refusal_rate']:.3f}")
    print("params: " + json.dumps(report["params"]["retrieve"]))
    return EXIT_OK


DEFAULT_ATTRIBUTION = Path("..") / "shared" / "data" / "attributionbench_dev.jsonl"


def cmd_eval_verifier(args) -> int:
    from .embed import DEFAULT_EMBEDDER, check_embedder_name
    from .eval.verifier import evaluate

    attribution = args.attribution
    try:
        if args.turns < 1:
            raise ValueError(f"--turns {args.turns}: must be at least 1")
        if args.embedder:
            check_embedder_name(args.embedder)
        if attribution is not None and not attribution.is_file():
            raise ValueError(f"--attribution {attribution}: no such file")
        if attribution is None and DEFAULT_ATTRIBUTION.is_file():
            attribution = DEFAULT_ATTRIBUTION
        report = evaluate(args.memory, attribution, embedder=args.embedder or DEFAULT_EMBEDDER, turns=args.turns)
    except ValueError as exc:
        return _fail(str(exc), EXIT_BAD_INPUT)
    s, a = report["structural"], report["attribution"]
    if args.json:
        print(json.dumps(report, indent=2, ensure_ascii=False))
    else:
        print(f"structural faults, {s['turns']} turns over memory {report['params']['memory']} "
              f"({report['params']['embedder']}): {s['caught']}/{s['injected']} caught")
        for kind, k in s["kinds"].items():
            print(f"  {kind:13} {k['caught']:4}/{k['injected']:<4}")
        b = s["baseline"]
        print(f"clean answers: {b['valid']}/{b['citations']} citations kept in {b['answers']} answers")
        if a["n"]:
            print(f"attribution ({a['file']}): n {a['n']}, accuracy {a['accuracy']:.3f}, "
                  f"macro-F1 {a['macro_f1']:.3f} (hard threshold {a['threshold']:.3f})")
        else:
            print(f"attribution: skipped ({a['skipped']})")
        for miss in s["missed"]:
            print(f"MISSED {miss['kind']}: {miss['answer']!r} -> {miss['text']!r}")
    return EXIT_OK if s["caught"] == s["injected"] else EXIT_CHECK_FAILED


def cmd_audit(args) -> int:
    from .verify import audit

    if args.last is not None and args.last < 1:
        return _fail(f"--last {args.last}: must be at least 1", EXIT_BAD_INPUT)
    records = audit.load(_memory_dir(args), last=args.last, turn=args.turn)
    if not records:
        what = f"turn {args.turn}" if args.turn else "any answer"
        return _fail(f"memory {_memory_dir(args)}: no audit record of {what}", EXIT_NOT_FOUND)
    if args.json:
        print(json.dumps(records, indent=2, ensure_ascii=False))
        return EXIT_OK
    print("\n\n".join(audit.format_record(r) for r in records))
    return EXIT_OK


def generator_args(p, default: str, help: str) -> None:
    """--generator and the openai generator's endpoint flags (ask, chat, eval answers, serve)."""
    p.add_argument("--generator", choices=("local", "extractive", "openai"), default=default, help=help)
    p.add_argument("--base-url", default=None, help="openai generator: endpoint (or ASMR_OPENAI_BASE_URL)")
    p.add_argument("--model", default=None, help="openai generator: model name (or ASMR_OPENAI_MODEL)")


def _answer_args(p: argparse.ArgumentParser) -> None:
    generator_args(p, "local", "local: SmolLM2-135M with the citation processor (default); extractive: no "
                               "model, the units' own sentences; openai: an OpenAI-compatible endpoint")
    p.add_argument("--redundancy", choices=("off", "list", "full"), default="list",
                   help="key-fact block after the sources (default list); full adds a question-and-answer "
                        "pair made from a fact and, with a model generator, a paraphrase of the best fact")
    p.add_argument("--redundancy-budget", type=_positive_int, default=160, metavar="TOKENS",
                   help="the redundancy block's size, estimated tokens (default 160)")
    p.add_argument("--redundancy-facts", type=_positive_int, default=6, metavar="N",
                   help="key facts listed in the redundancy block, at most (default 6)")
    p.add_argument("--no-verify", action="store_true", help="show the generator's answer unverified")
    p.add_argument("--no-audit", action="store_true", help="do not append the audit record to <memory>/audit")
    _retrieve_args(p)


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not an integer") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"{value}: must be at least 1")
    return value


def _answerer(args, memory):
    """The Answerer the flags ask for; raises GeneratorError when the generator cannot load."""
    from .answer import AnswerConfig, Answerer
    from .embed import get_embedder
    from .generate import get_generator

    embedder = get_embedder(memory.embed_model)
    options = {"base_url": args.base_url, "model": args.model} if args.generator == "openai" else {}
    generator = get_generator(args.generator, embedder=embedder, **options)
    config = AnswerConfig(redundancy=args.redundancy, verify=not args.no_verify,
                          redundancy_budget_tokens=args.redundancy_budget,
                          redundancy_max_facts=args.redundancy_facts)
    return Answerer(memory, generator, embedder=embedder, retrieve_config=_retrieve_config(args),
                    config=config)


def _print_answer(ans, explain: bool) -> None:
    if not ans.found:
        print(f"Not found in memory ({ans.retrieval.reason}). The closest candidates:")
        for h in ans.retrieval.hits[:3]:
            print(f"  {h.score:.3f}  {h.unit_id}")
        return
    print(ans.numbered() or "(no sentence of the answer could be confirmed)")
    for c in ans.citations:
        text = " ".join(c.text.split())
        print(f"\n[{c.number}] {c.unit_id}\n    {c.doc_id}{' > ' + c.section if c.section else ''}\n    "
              f"{text[:300]}{'...' if len(text) > 300 else ''}")
    if explain:
        hits = {h.unit_id: h for h in ans.retrieval.hits}
        print(f"\nrecall: confidence {ans.retrieval.confidence:.2f}")
        for c in ans.citations:
            h = hits.get(c.unit_id)
            if h is not None:
                path = " -> ".join(f"[{p.edge_kind} {p.edge_weight:.2f}] {p.node}" if p.edge_kind else p.node
                                   for p in h.path) or c.unit_id
                print(f"  [{c.number}] score {h.score:.3f}, hop {h.hop}: {path}")
        if ans.verification is not None:
            print("verifier:")
            for rec in ans.verification.audit:
                print(f"  {rec['outcome']:>6}  {rec['sentence'][:100]}")
    print(f"\n({ans.timings.get('total_ms', 0):.0f} ms)")


def _audit(args, memory, ans) -> None:
    if ans.verification is not None and not args.no_audit:
        from .verify import audit
        audit.append(memory.directory, ans.verification, answer=ans.generation.text if ans.generation else None,
                     question=ans.question)


def cmd_ask(args) -> int:
    from .generate import GeneratorError
    from .store import Memory

    if not args.question.strip():
        return _fail("question: empty", EXIT_BAD_INPUT)
    with Memory(_memory_dir(args)) as m:
        if m.generation == 0:
            return _fail(f"memory {m.directory}: empty; run asmr ingest first", EXIT_NOT_FOUND)
        try:
            answerer = _answerer(args, m)
            ans = answerer.ask(args.question)
        except (ValueError, GeneratorError) as exc:
            return _fail(str(exc), EXIT_BAD_INPUT)
        _audit(args, m, ans)
    if args.json:
        print(json.dumps(ans.to_dict(), indent=2, ensure_ascii=False))
    else:
        _print_answer(ans, args.explain)
    return EXIT_OK


def cmd_chat(args) -> int:
    from .generate import GeneratorError
    from .store import Memory
    from .verify.allowlist import Conversation

    try:
        conv = (Conversation.load(args.conversation) if args.conversation and args.conversation.exists()
                else Conversation())
    except (ValueError, OSError) as exc:  # not JSON, not a conversation, unreadable
        reason = str(exc).removeprefix(f"conversation file {args.conversation}: ")
        return _fail(f"--conversation {args.conversation}: cannot be resumed: {reason}", EXIT_BAD_INPUT)
    with Memory(_memory_dir(args)) as m:
        if m.generation == 0:
            return _fail(f"memory {m.directory}: empty; run asmr ingest first", EXIT_NOT_FOUND)
        try:
            answerer = _answerer(args, m)
        except (ValueError, GeneratorError) as exc:
            return _fail(str(exc), EXIT_BAD_INPUT)
        interactive = sys.stdin.isatty()
        while True:
            if interactive:
                print("> ", end="", flush=True)
            line = sys.stdin.readline()
            if not line:
                break
            if not line.strip():
                continue
            try:
                ans = answerer.ask(line.strip(), conv)
            except GeneratorError as exc:  # the turns answered so far are saved already
                return _fail(str(exc), EXIT_BAD_INPUT)
            _audit(args, m, ans)
            print(f"[turn {ans.allowlist.turn_id}]")
            _print_answer(ans, False)
            if args.conversation:
                conv.save(args.conversation)
    return EXIT_OK


def cmd_eval_synth(args) -> int:
    from .eval.synth import generate

    try:
        report = generate(args.out, seed=args.seed, units_target=args.units, questions=args.questions)
    except ValueError as exc:
        return _fail(str(exc), EXIT_BAD_INPUT)
    d = report.to_dict()
    print(json.dumps(d, indent=2) if args.json else
          f"wrote {args.out}: {d['documents']} documents a version, {d['units_v2']} units in v2, "
          f"questions {d['questions']}")
    return EXIT_OK


def cmd_eval_answers(args) -> int:
    from tqdm import tqdm

    from .embed import get_embedder
    from .eval.answers import METHODS, AnswerEval, queries_from_corpus, queries_from_synth, write_report
    from .generate import GeneratorError, get_generator
    from .store import Memory
    from .store.schema import DB_FILE, never_committed
    from .store.writer import ingest
    from .units.read import read_path

    methods = [x.strip() for x in args.methods.split(",") if x.strip()]
    bad = [x for x in methods if x not in METHODS]
    if bad or not methods:
        return _fail(f"--methods: unknown {bad}; choose from {', '.join(METHODS)}", EXIT_BAD_INPUT)
    memory_dir = args.memory
    unanswerable: set[str] = set()
    if args.synth:
        if not (args.synth / "queries.jsonl").is_file():
            return _fail(f"--synth {args.synth}: no queries.jsonl (run asmr eval synth --out {args.synth})",
                         EXIT_BAD_INPUT)
        memory_dir = Path(memory_dir or args.synth / "memory")
        # v1 goes only into a new memory: over a memory that already holds v2 it would publish v1's
        # text again as new versions (new unit ids), and the next v2 would do so once more.
        fresh = not (memory_dir / DB_FILE).exists() or never_committed(memory_dir)
        for version in ("v1", "v2") if fresh else ("v2",):
            root = args.synth / "docs" / version
            ingest(memory_dir, [read_path(p, root=root) for p in sorted(root.rglob("*.md"))],
                   embedder=args.embedder, progress=not args.no_progress)
        queries = queries_from_synth(args.synth / "queries.jsonl")
    else:
        if args.queries is None:
            return _fail("--corpus needs --queries", EXIT_BAD_INPUT)
        from .eval.retrieval import load_queries, split_unanswerable
        from .units.read import iter_jsonl
        drop: set[str] = set()
        if args.unanswerable is not None:
            unanswerable, drop = split_unanswerable(load_queries(args.queries), args.unanswerable, args.seed)
        memory_dir = memory_dir or Path(f"{args.corpus}.answers-memory")
        ingest(memory_dir, [d for d in iter_jsonl(args.corpus) if d.doc_id not in drop],
               embedder=args.embedder, progress=not args.no_progress)
        queries = queries_from_corpus(args.queries, unanswerable)
    if args.limit:
        queries = queries[:args.limit]
    with Memory(memory_dir) as m:
        embedder = get_embedder(m.embed_model)
        options = {"base_url": args.base_url, "model": args.model} if args.generator == "openai" else {}
        try:
            generator = get_generator(args.generator, embedder=embedder, **options)
        except (ValueError, GeneratorError) as exc:
            return _fail(str(exc), EXIT_BAD_INPUT)
        bar = None if args.no_progress else tqdm(total=0, unit="q", leave=False)

        def progress(name, i, n):
            if bar is not None:
                if i == 0:
                    bar.reset(total=n)
                    bar.set_description(name)
                bar.update(1)
        try:
            report = AnswerEval(m, generator, embedder=embedder).run(
                queries, methods, progress=progress, redundancy_mode=args.redundancy)
        except GeneratorError as exc:
            return _fail(str(exc), EXIT_BAD_INPUT)
        finally:
            if bar is not None:
                bar.close()
    if args.out:
        write_report(report, args.out)
    slim = {k: v for k, v in report.items() if k != "outcomes"}
    if args.json:
        print(json.dumps(slim, indent=2))
    else:
        from .eval.answers import METRICS
        print(f"{report['questions']} questions, generator {report['generator']}")
        print(f"{'method':<26}" + "".join(f"{k[:14]:>15}" for k in METRICS))
        for name, row in report["methods"].items():
            print(f"{name:<26}" + "".join(f"{row[k]:>15.3f}" for k in METRICS))
        if args.out:
            print(f"report: {args.out / 'report.md'}")
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
    check_combination = getattr(args, "check_combination", None)
    if check_combination is not None:  # flags that are valid alone but not together (exits 2)
        check_combination(args)
    # Before any native library loads: OpenMP runtimes read their settings once, when loaded.
    for name, value in getattr(args, "environment", {}).items():
        os.environ.setdefault(name, value)
    from .store import MemoryStateError
    from .units.model import InputError

    handlers = {"ingest": cmd_ingest, "check": cmd_check, "search": cmd_search, "audit": cmd_audit,
                "ask": cmd_ask, "chat": cmd_chat,
                "eval": {"retrieval": cmd_eval_retrieval, "verifier": cmd_eval_verifier, "synth": cmd_eval_synth,
                         "answers": cmd_eval_answers}.get(getattr(args, "eval_command", None)),
                "units": {"show": cmd_units_show}.get(getattr(args, "units_command", None)),
                "doc": {"history": cmd_doc_history}.get(getattr(args, "doc_command", None))}
    handler = getattr(args, "handler", None) or handlers[args.command]
    try:
        return handler(args)
    except MemoryStateError as exc:
        return _fail(str(exc), EXIT_MEMORY)
    except InputError as exc:
        return _fail(f"{exc}; nothing was written", EXIT_BAD_INPUT)
    except KeyboardInterrupt:
        return _fail("interrupted; the memory is as it was before this command", 130)


if __name__ == "__main__":
    sys.exit(main())
