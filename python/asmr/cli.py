"""The ``asmr`` command line.

Exit codes: 0 done; 1 ``asmr check`` found inconsistencies, or ``asmr eval
verifier`` missed an injected fault; 2 bad arguments or bad input (nothing was
written); 3 the unit, document or audit record asked for does not exist; 4 the
memory cannot be used (newer schema, another writer, not a memory).
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
                   help="exact (flat) dense index up to N active units, HNSW above (default: 20000)")
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

    p = sub.add_parser("eval", help="evaluate retrieval on a corpus and its questions, or the citation verifier")
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
    return parser


def _retrieve_args(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("retrieval settings (defaults: asmr.retrieve.RetrieveConfig)")
    g.add_argument("--k", type=int, default=None, help="units returned (default 10)")
    g.add_argument("--seeds", type=int, default=None, help="fused dense+BM25 seeds (default 20)")
    g.add_argument("--depth", type=int, default=None, help="spreading hops (default 2)")
    g.add_argument("--edge-threshold", type=float, default=None, help="edges below it are not followed (0.65)")
    g.add_argument("--mix", default=None, metavar="SIM,PATH,CENT",
                   help="score weights of similarity, path strength, centrality (default 0.5,0.5,0)")


def _retrieve_config(args):
    from dataclasses import replace

    from .retrieve import RetrieveConfig

    cfg = RetrieveConfig()
    changes = {name: getattr(args, name) for name in ("k", "seeds", "depth", "edge_threshold")
               if getattr(args, name) is not None}
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

    handlers = {"ingest": cmd_ingest, "check": cmd_check, "search": cmd_search, "audit": cmd_audit,
                "eval": {"retrieval": cmd_eval_retrieval,
                         "verifier": cmd_eval_verifier}.get(getattr(args, "eval_command", None)),
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
