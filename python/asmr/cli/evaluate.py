"""``asmr eval retrieval|verifier|synth|answers``: the benchmarks, and the synthetic knowledge base."""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from .common import (EMBEDDER_DEFAULT, EXIT_BAD_INPUT, EXIT_CHECK_FAILED, EXIT_OK, fail, generator_args,
                     memory_arg, retrieve_args, retrieve_config)

DEFAULT_ATTRIBUTION = Path("..") / "shared" / "data" / "attributionbench_dev.jsonl"
# The kb a --corpus goes into, for eval retrieval and eval answers alike: one memory serves both
# without holding the corpus twice.
CORPUS_KB = "eval"


def add_eval(sub) -> None:
    """``asmr eval retrieval|verifier|synth|answers``."""
    p = sub.add_parser("eval", help="evaluate retrieval, the citation verifier or answers; generate the "
                                    "synthetic knowledge base")
    esub = p.add_subparsers(dest="eval_command", metavar="SUBCOMMAND", required=True)
    pe = esub.add_parser("retrieval", help="Recall@2/@5 and latency of bm25, dense, hybrid, ppr and asmr",
                         description="Ingests the corpus (or reuses a memory that already holds it; unchanged "
                                     "documents are skipped), runs every question with each method and reports "
                                     "Recall@2, Recall@5 over gold documents (answerable questions only) and "
                                     "P50/P95 latency. Where questions have no answer (in --queries, or made by "
                                     "--unanswerable), it reports refusal of dense, hybrid and asmr: precision, "
                                     "recall, false-refusal rate and ROC AUC. The settings are the shipped "
                                     "defaults unless flags say otherwise; never refitted.")
    pe.add_argument("--corpus", required=True, type=Path, help='JSONL of {"pid"|"id", "title", "text"}')
    pe.add_argument("--queries", required=True, type=Path,
                    help='JSONL of {"qid", "question", "gold_pids", "answers"?, "answerable"?, "category"?}; '
                         'gold_pids [] or "answerable": false is a question without an answer (scored for '
                         "refusal, left out of recall); with category, recall is also reported per category")
    memory_arg(pe)
    pe.add_argument("--embedder", default=None,
                    help=f"embedding model for a new memory (default {EMBEDDER_DEFAULT})")
    pe.add_argument("--methods", default=",".join(("bm25", "dense", "hybrid", "ppr", "asmr")),
                    help="comma-separated subset of bm25,dense,hybrid,ppr,asmr")
    pe.add_argument("--unanswerable", type=float, default=None, metavar="FRACTION",
                    help="also make this share of the answerable questions unanswerable (--unanswerable-mode) "
                         "and report refusal precision, recall, false-refusal rate and ROC AUC of dense, "
                         "hybrid and asmr (questions without an answer in --queries are reported without it)")
    pe.add_argument("--unanswerable-mode", choices=("removed", "sentence", "swap", "all"), default=None,
                    help="removed: their gold passages left out of a second memory (default); sentence: the "
                         "sentences of their gold passages that state an answer cut out (a second memory); "
                         "swap: the name of a gold passage in the question replaced by another passage's "
                         "title (same memory); all: each, reported apart (refusal = removed's)")
    pe.add_argument("--seed", type=int, default=0, help="which questions --unanswerable picks (default 0)")
    pe.add_argument("--per-question", type=Path, default=None, metavar="FILE",
                    help="also write one JSON line a question to FILE: its first five documents by method, "
                         "whether they hold its gold documents, and where it was scored for refusal ASMR's "
                         "confidence, whether it was refused and the terms no recalled unit holds")
    retrieve_args(pe)
    pe.add_argument("--json", action="store_true", help="print one JSON object")
    pe.add_argument("--no-progress", action="store_true", help="no progress bar")
    pe.set_defaults(handler=cmd_eval_retrieval)
    pv = esub.add_parser("verifier", help="citation faults injected into real answers, and the support check on "
                                          "AttributionBench",
                         description="Structural: builds answers from the memory's units and the units each turn "
                                     "recalls, injects invented, deprecated, superseded and earlier-turn ids, "
                                     "truncated and malformed markers, and markers hidden in quoted or copied source "
                                     "text, and counts how many the verifier catches (all must be). Contradictions: "
                                     "claims generated from the memory's units (supported paraphrases, contradicted "
                                     "perturbations, unsupported claims), and how many of each kind keep their "
                                     "citation. Attribution: "
                                     "the shipped support model and thresholds, never refitted, as a classifier "
                                     "over an AttributionBench file. Exits 1 if an injected fault was missed.")
    pv.add_argument("--memory", metavar="DIR", type=Path, default=None,
                    help="memory to build answers from (default: a temporary one built from examples/handbook "
                         "and its revision examples/handbook-v2)")
    pv.add_argument("--attribution", metavar="FILE", type=Path, default=None,
                    help="AttributionBench JSONL (default: ../shared/data/attributionbench_dev.jsonl if it "
                         "exists, else the attribution check is skipped)")
    pv.add_argument("--embedder", default=None,
                    help="embedder of the temporary memory (default all-MiniLM-L6-v2; multilingual-e5-small; "
                         "hash-<dim> is faster)")
    pv.add_argument("--turns", type=int, default=8, help="conversation turns, one real answer each (default 8)")
    pv.add_argument("--json", action="store_true", help="print one JSON object")
    pv.set_defaults(handler=cmd_eval_verifier)

    ps = esub.add_parser("synth", help="generate the synthetic enterprise knowledge base and its questions",
                         description="Writes OUT/docs/v1 and OUT/docs/v2 (Markdown with sections, lists and "
                                     "tables; v2 revises v1), OUT/queries.jsonl (single-fact, multi-document, "
                                     "conflict and unanswerable questions, then three- and four-document "
                                     "chains), OUT/corpus.jsonl and OUT/corpus.queries.jsonl (the v2 documents "
                                     "and the questions for eval retrieval --corpus --queries) and "
                                     "OUT/README.md. Deterministic for a seed and family.")
    ps.add_argument("--out", required=True, type=Path, metavar="DIR", help="output folder")
    ps.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    ps.add_argument("--units", type=int, default=5000, help="units after chunking, about (default 5000)")
    ps.add_argument("--questions", type=int, default=800, help="questions (default 800)")
    ps.add_argument("--deep-questions", type=int, default=None, metavar="N",
                    help="multi3 and multi4 questions (three- and four-document chains) added after the "
                         "others (default a tenth of --questions)")
    ps.add_argument("--family", choices=("A", "B"), default=None,
                    help="template family: A (default) or B, the same company worded by another writer")
    ps.add_argument("--chat", action="store_true",
                    help="write a generated multi-session chat log instead (OUT/corpus.jsonl, one turn a "
                         "passage, and OUT/queries.jsonl; see asmr/eval/synth_chat.py)")
    ps.add_argument("--sessions", type=int, default=None, help="with --chat: dated sessions (default 20)")
    ps.add_argument("--people", type=int, default=None, help="with --chat: people in the group (default 10)")
    ps.add_argument("--turns", type=int, default=None, help="with --chat: turns, about (default 400)")
    ps.add_argument("--titles", choices=("speaker", "session"), default=None,
                    help="with --chat: passage titles '<speaker>, <date>' (default) or 'Group chat <n>, <date>' "
                         "with the speaker at the start of the text")
    ps.add_argument("--corrections", type=int, default=None, metavar="N",
                    help="with --chat: N facts first stated with a wrong value and corrected by the same "
                         "person later in the same session (question category correction; default 0: the log "
                         "is the same as without)")
    ps.add_argument("--handbook", type=Path, metavar="EXAMPLES", default=None,
                    help="write the bundled handbook instead: EXAMPLES/handbook revised by EXAMPLES/handbook-v2, "
                         "with the sentences its questions name cut, as OUT/corpus.jsonl, and "
                         "EXAMPLES/handbook-questions.jsonl as OUT/queries.jsonl (see asmr/eval/sources.py)")
    ps.add_argument("--json", action="store_true", help="print the report as JSON")
    ps.set_defaults(handler=cmd_eval_synth)
    pa = esub.add_parser("answers", help="answer accuracy of dense RAG, hybrid RAG, ASMR and verified ASMR",
                         description="Answers every question with each method and the same generator and "
                                     "reports memory accuracy, hallucination rate, refusal rates, citation "
                                     "precision and recall, key-fact recall and latency, answerable and "
                                     "unanswerable questions apart, and the conflict rate (definitions in the "
                                     "report). Dense and hybrid RAG refuse below their similarity threshold. "
                                     "Data: --synth DIR from `asmr eval synth` (v1 then v2 are ingested) "
                                     "or --corpus/--queries in the format of ../shared/data.")
    src = pa.add_mutually_exclusive_group(required=True)
    src.add_argument("--synth", type=Path, metavar="DIR", help="output of asmr eval synth")
    src.add_argument("--corpus", type=Path, help='JSONL of {"pid"|"id", "title", "text"} (with --queries)')
    pa.add_argument("--queries", type=Path,
                    help='JSONL of {"qid", "question", "answers", "gold_pids", "answerable"?}; gold_pids [] or '
                         '"answerable": false is a question without an answer (the right answer is a refusal)')
    pa.add_argument("--unanswerable", type=float, default=None, metavar="FRACTION",
                    help="with --corpus: make this share of the answerable questions unanswerable "
                         "(--unanswerable-mode)")
    pa.add_argument("--unanswerable-mode", choices=("removed", "sentence", "swap"), default=None,
                    help="removed: their gold passages left out of the memory (default); sentence: the sentences "
                         "of their gold passages that state an answer cut out; swap: the name of a gold passage "
                         "in the question replaced by another passage's title")
    pa.add_argument("--seed", type=int, default=0, help="which questions --unanswerable picks (default 0)")
    memory_arg(pa)
    pa.add_argument("--embedder", default=None,
                    help=f"embedding model for a new memory (default {EMBEDDER_DEFAULT})")
    generator_args(pa, "extractive", "generator for every method (default extractive: no model, fast)")
    pa.add_argument("--methods", default="dense_rag,hybrid_rag,asmr,asmr_verified",
                    help="comma-separated subset of dense_rag,hybrid_rag,asmr,asmr_verified")
    pa.add_argument("--redundancy", choices=("list", "full"), default="list",
                    help="the block the +redundancy variants add (model generators only): list = key facts; "
                         "full = also an example question and answer, and the model's paraphrase (default list)")
    pa.add_argument("--limit", type=int, default=None, metavar="N", help="only the first N questions")
    pa.add_argument("--equal-refusal", action=argparse.BooleanOptionalAction, default=None,
                    help="also compare the refusing methods at equal refusal, answering the questions each "
                         "refuses once more without refusal, untimed (default: with the extractive generator)")
    pa.add_argument("--out", type=Path, default=None, metavar="DIR",
                    help="write report.md, report.json, outcomes.jsonl and PNG charts here")
    pa.add_argument("--json", action="store_true", help="print one JSON object")
    pa.add_argument("--no-progress", action="store_true", help="no progress bar")
    pa.set_defaults(handler=cmd_eval_answers, check_combination=lambda args: _check_answers_data(pa, args))


def _check_answers_data(parser, args) -> None:
    """Flags that only --corpus reads are an error with --synth, not silently dropped."""
    if args.synth is None:
        return
    if args.unanswerable is not None or args.unanswerable_mode is not None:
        flag = "--unanswerable" if args.unanswerable is not None else "--unanswerable-mode"
        parser.error(f"{flag}: only with --corpus/--queries; --synth DIR brings its own unanswerable "
                     "questions (the fields asmr eval synth leaves out)")
    if args.queries is not None:
        parser.error("--queries: only with --corpus; --synth DIR reads DIR/queries.jsonl")


def cmd_eval_retrieval(args) -> int:
    from ..embed import get_embedder
    from ..eval.retrieval import METHODS, evaluate, load_queries
    from ..eval.unanswerable import make
    from ..store import Memory, Writer
    from ..units.read import iter_jsonl

    try:
        config = retrieve_config(args)
        methods = tuple(x.strip() for x in args.methods.split(",") if x.strip())
        unknown = [x for x in methods if x not in METHODS]
        if unknown or not methods:
            raise ValueError(f"--methods {args.methods!r}: unknown {unknown or 'none given'}; "
                             f"choose from {','.join(METHODS)}")
        queries = load_queries(args.queries)
        modes = _unanswerable_modes(args)
        documents = list(iter_jsonl(args.corpus))  # read once: ingested, and cut for unanswerable questions
        built = {mode: make(mode, queries, documents, args.unanswerable, args.seed) for mode in modes}
        if args.per_question and not args.per_question.parent.is_dir():  # before the work, not after it
            raise ValueError(f"--per-question {args.per_question}: no folder {args.per_question.parent}")
    except (ValueError, OSError) as exc:
        return fail(str(exc), EXIT_BAD_INPUT)
    memory = args.memory or Path(f"asmr-eval-{args.corpus.stem}")
    quiet = args.json or args.no_progress
    with Writer(memory, embedder=args.embedder, progress=False if quiet else None) as w:
        w.ingest(documents, kb=CORPUS_KB)
    shown: dict = {}  # qid -> method -> first documents, for --per-question
    with Memory(memory) as m:
        others = _other_documents(m, documents, args.corpus)
        report = evaluate(m, get_embedder(m.embed_model), queries, config, methods,
                          shown=shown if args.per_question else None)
    report["params"]["corpus"], report["params"]["memory"] = str(args.corpus), str(memory)
    report["params"]["other_documents"] = others
    scored = _refusal(report, args, memory, queries, built, documents, config)
    if args.per_question:
        try:
            _write_per_question(args.per_question, queries, built, shown, scored)
        except OSError as exc:
            return fail(f"--per-question {args.per_question}: {exc.strerror or exc}", EXIT_BAD_INPUT)
    if args.json:
        print(json.dumps(report, indent=2))
        return EXIT_OK
    print(f"{len(queries)} questions ({report['params']['answerable']} answerable), memory {memory}, "
          f"embedder {report['params']['embedder']}")
    print(f"{'method':8} {'R@2':>6} {'R@5':>6} {'P50 ms':>8} {'P95 ms':>8}")
    for name, r in report["methods"].items():
        print(f"{name:8} {_num(r['recall@2'])} {_num(r['recall@5'])} {r['p50_ms']:8.1f} {r['p95_ms']:8.1f}")
    _print_categories(report)
    if "refusal" in report:
        r = report["refusal"]
        print(f"refusal on {r['unanswerable']} unanswerable / {r['answerable']} answerable questions:")
        _print_refusal(report["refusal_by_method"])
        for mode, by_method in report.get("refusal_modes", {}).items():
            print(f"refusal, unanswerable by {mode} ({by_method['asmr']['unanswerable']} questions):")
            _print_refusal(by_method)
    print("params: " + json.dumps(report["params"]["retrieve"]))
    return EXIT_OK


def _print_categories(report: dict) -> None:
    """Per category: each method's recall of the answerable questions, and each refusing system's share
    refused (answerable and unanswerable apart) and ROC AUC (the category's unanswerable questions
    against all answerable ones)."""
    refusal = report.get("refusal_by_category", {})
    for category, by_method in report.get("by_category", {}).items():
        counts = refusal.get(category, {})
        head = f"category {category}"
        if counts:
            head += f" ({counts['answerable']} answerable, {counts['unanswerable']} unanswerable)"
        mixed = bool(counts.get("answerable")) and bool(counts.get("unanswerable"))
        parts = []
        for name, r in by_method.items():
            said = []
            if r["recall@5"] is not None:
                said.append(f"R@2 {_num(r['recall@2'], 0)} R@5 {_num(r['recall@5'], 0)}")
            ref = counts.get(name)
            if ref:
                for key, kind in (("refused_answerable", "answerable"), ("refused_unanswerable", "unanswerable")):
                    if ref[key] is not None:
                        said.append(f"refused{' ' + kind if mixed else ''} {ref[key]:.3f}")
                if ref["roc_auc"] is not None:
                    said.append(f"AUC {ref['roc_auc']:.3f}")
            if said:  # a method that neither recalls nor refuses here has nothing to show
                parts.append(f"{name} " + " ".join(said))
        print(f"{head}: " + ", ".join(parts))


def _other_documents(memory, documents, corpus: Path) -> int:
    """How many documents ``memory`` holds beside ``documents`` (those of ``corpus``: a memory reused for
    another corpus keeps the first one's); said on stderr, since they are recalled too."""
    ours = {(CORPUS_KB, d.doc_id) for d in documents}
    others = sum(1 for key in memory.documents() if key not in ours)
    if others:
        print(f"asmr eval: note: memory {memory.directory} holds {others} documents that are not in {corpus}; "
              "they are recalled too (use a new --memory for this corpus alone)", file=sys.stderr)
    return others


def _constructed(memory: Path, mode: str, args, documents) -> Path:
    """The memory made beside ``memory`` for unanswerable questions of ``mode`` (``documents``: what it
    holds), named by a digest of its documents: other questions (another --queries over the same
    --memory) remove other passages, and ingest never deletes what a reused memory holds."""
    import hashlib

    h = hashlib.blake2b(digest_size=4)
    for d in sorted(documents, key=lambda d: d.doc_id):
        h.update(f"{d.doc_id}\0{len(d.text)}\0".encode())
        h.update(d.text.encode("utf-8", "surrogatepass"))
    return Path(f"{memory}-unanswerable-{mode}-{args.unanswerable}-{args.seed}-{h.hexdigest()}")


def _refusal(report: dict, args, memory: Path, queries, built: dict, documents: list, config) -> tuple:
    """Adds refusal to an ``eval retrieval`` report where some questions have no answer: ``refusal``
    (asmr's) and ``refusal_by_method`` over the first construction together with the file's own
    no-answer questions; ``refusal_modes``, each construction (and the file's own, ``natural``)
    against the answerable questions alone. Returns what ``refusal`` was computed on: (each question's
    row of ``refusal_features``, the qids without an answer there), or ((), set()) without refusal."""
    from ..embed import get_embedder
    from ..eval.retrieval import BASELINES, refusal_by_category, refusal_by_method, refusal_features
    from ..store import Memory, Writer

    natural = {q.qid for q in queries if not q.answerable}
    model = report["params"]["embedder"]

    def rows_over(directory, asked):
        with Memory(directory) as m:
            return refusal_features(m, get_embedder(m.embed_model), list(asked), config, baselines=BASELINES)

    primary = None  # (rows, unanswerable qids) of report["refusal"]
    if built:
        report["refusal_modes"], report["params"]["unanswerable"] = {}, {
            "fraction": args.unanswerable, "seed": args.seed, "mode": args.unanswerable_mode, "modes": {}}
    for mode, made in built.items():
        where = memory
        if made.changes_memory:  # beside the main memory, reused when it was built from the same documents
            kept = list(made.documents(documents))
            where = _constructed(memory, mode, args, kept)
            with Writer(where, embedder=model, progress=False) as w:  # the main memory's model, given or not
                w.ingest(kept, kb=CORPUS_KB)
        rows = rows_over(where, made.queries)
        report["refusal_modes"][mode] = refusal_by_method([r for r in rows if r["qid"] not in natural],
                                                          set(made.qids), embedder=model)
        report["params"]["unanswerable"]["modes"][mode] = {"memory": str(where), "questions": len(made.qids)}
        if primary is None:
            primary = rows, natural | made.qids
            report["params"]["unanswerable"]["memory"] = str(where)
    if natural and primary is not None:
        report["refusal_modes"]["natural"] = refusal_by_method(
            [r for r in primary[0] if r["qid"] not in primary[1] - natural], natural, embedder=model)
    elif natural:
        primary = rows_over(memory, queries), natural
        if any(q.category is not None for q in queries):  # the file's own questions, per category
            report["refusal_by_category"] = refusal_by_category(primary[0], queries, embedder=model)
    if primary is not None:
        report["refusal_by_method"] = refusal_by_method(*primary, embedder=model)
        report["refusal"] = report["refusal_by_method"]["asmr"]
        return primary
    return (), set()


# What --per-question copies from a question's refusal row (eval.retrieval.refusal_features)
_PER_QUESTION_SIGNALS = ("top_similarity", "term_alignment", "kind_alignment", "unheld_terms")


def _write_per_question(path: Path, queries, built: dict, shown: dict, scored: tuple) -> None:
    """One JSON line a question: the first five documents each method showed, ``recall@5`` of an
    answerable one, and how ASMR's refusal scored it (the questions of ``report["refusal"]``: those
    --unanswerable made are marked ``"made_unanswerable"`` with the construction's name, with
    ``"asked"`` where it rewrote the question, and ``"answerable_here"`` is false for them)."""
    rows, unanswerable = scored
    by_qid = {r["qid"]: r for r in rows}
    first = next(iter(built.values()), None)  # the construction report["refusal"] was computed on
    made = {qid: first.mode for qid in first.qids} if first else {}
    asked = {q.qid: q.question for q in first.queries} if first else {}  # swap rewrites the question
    with open(path, "w", encoding="utf-8", newline="\n") as f:
        for q in queries:
            line: dict = {"qid": q.qid, "question": q.question, "answerable": q.answerable,
                          "category": q.category, "gold": list(q.gold)}
            if q.qid in made:
                line["made_unanswerable"] = made[q.qid]
                if asked.get(q.qid, q.question) != q.question:
                    line["asked"] = asked[q.qid]
            if q.qid in shown:
                line["documents"] = shown[q.qid]
                if q.answerable and q.gold:
                    line["recall@5"] = {m: len(set(q.gold) & set(d)) / len(set(q.gold))
                                        for m, d in shown[q.qid].items()}
            row = by_qid.get(q.qid)
            if row is not None:
                line.update({"answerable_here": q.qid not in unanswerable,
                             "confidence": round(float(row["confidence"]), 4),
                             "refused": bool(row["refused"]),
                             **{k: (round(float(row[k]), 4) if isinstance(row[k], float) else row[k])
                                for k in _PER_QUESTION_SIGNALS if k in row}})
            f.write(json.dumps(line, ensure_ascii=False) + "\n")


# Column heads that stay apart in 14 characters.
_SHORT = {"answerable_accuracy": "acc answerable", "unanswerable_accuracy": "acc unanswer.",
          "hallucination_answerable": "halluc answer.", "hallucination_unanswerable": "halluc unanswer"}


def _num(value: float | None, width: int = 6) -> str:
    """A rate for the plain-text tables; "-" where there is none (no question to average)."""
    return f"{'-':>{width}}" if value is None else f"{value:{width}.3f}"


def _print_refusal(by_method: dict) -> None:
    for name, r in by_method.items():
        print(f"  {name:8} precision {r['precision']:.3f}, recall {r['recall']:.3f}, "
              f"false-refusal rate {r['false_refusal_rate']:.3f}, ROC AUC {_num(r.get('roc_auc'), 0)}")


def _unanswerable_modes(args) -> tuple[str, ...]:
    """The constructions --unanswerable/--unanswerable-mode ask for; () without --unanswerable."""
    from ..eval.unanswerable import MODES
    if args.unanswerable is None:
        if args.unanswerable_mode is not None:
            raise ValueError(f"--unanswerable-mode {args.unanswerable_mode}: needs --unanswerable FRACTION")
        return ()
    if args.seed < 0:
        raise ValueError(f"--seed {args.seed}: must be 0 or more")
    mode = args.unanswerable_mode or "removed"
    return MODES if mode == "all" else (mode,)


def cmd_eval_verifier(args) -> int:
    from ..embed import DEFAULT_EMBEDDER, check_embedder_name
    from ..eval.verification import evaluate

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
        return fail(str(exc), EXIT_BAD_INPUT)
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
        c = report["contradictions"]
        print(f"generated claims from the memory's units (support model fitted on {c['fitted_on']}): "
              f"contradicted kept {c['kept']}/{c['n']}, supported kept {c['supported_kept']}/{c['supported_n']}, "
              f"unsupported kept {c['unsupported']['kept']}/{c['unsupported']['n']}")
        for kind, k in {**c["by_kind"], **c["unsupported"]["by_kind"]}.items():
            print(f"  {kind:13} kept {k['kept']:4}/{k['n']:<4}")
        if a["n"]:
            print(f"attribution ({a['file']}): n {a['n']}, accuracy {a['accuracy']:.3f}, "
                  f"macro-F1 {a['macro_f1']:.3f} (hard threshold {a['threshold']:.3f})")
        else:
            print(f"attribution: skipped ({a['skipped']})")
        for miss in s["missed"]:
            print(f"MISSED {miss['kind']}: {miss['answer']!r} -> {miss['text']!r}")
    return EXIT_OK if s["caught"] == s["injected"] else EXIT_CHECK_FAILED


def cmd_eval_synth(args) -> int:
    from ..eval.synth import generate

    # Flags of one source are an error with another, not silently dropped.
    chat_flags = [f for f, v in (("--sessions", args.sessions), ("--people", args.people),
                                 ("--turns", args.turns), ("--titles", args.titles),
                                 ("--corrections", args.corrections)) if v is not None]
    kb_flags = [f for f, v in (("--family", args.family), ("--deep-questions", args.deep_questions))
                if v is not None]
    if args.chat and args.handbook:
        return fail("--chat and --handbook: one source at a time", EXIT_BAD_INPUT)
    if chat_flags and not args.chat:
        return fail(f"{', '.join(chat_flags)}: only with --chat", EXIT_BAD_INPUT)
    if kb_flags and (args.chat or args.handbook):
        return fail(f"{', '.join(kb_flags)}: only for the knowledge base, not with --chat or --handbook",
                    EXIT_BAD_INPUT)
    if args.chat:
        return _eval_synth_chat(args)
    if args.handbook:
        return _eval_synth_handbook(args)
    try:
        report = generate(args.out, seed=args.seed, units_target=args.units, questions=args.questions,
                          deep_questions=args.deep_questions, family=args.family or "A")
    except ValueError as exc:
        return fail(str(exc), EXIT_BAD_INPUT)
    d = report.to_dict()
    print(json.dumps(d, indent=2) if args.json else
          f"wrote {args.out}: {d['documents']} documents a version, {d['units_v2']} units in v2, "
          f"questions {d['questions']}")
    return EXIT_OK


def _eval_synth_chat(args) -> int:
    from ..eval.synth_chat import generate_chat

    try:
        given = {k: v for k, v in (("sessions", args.sessions), ("people", args.people),
                                   ("turns", args.turns), ("titles", args.titles),
                                   ("corrections", args.corrections)) if v is not None}
        report = generate_chat(args.out, seed=args.seed, **given)
    except ValueError as exc:
        return fail(str(exc), EXIT_BAD_INPUT)
    d = report.to_dict()
    print(json.dumps(d, indent=2) if args.json else
          f"wrote {args.out}: {d['turns']} turns in {d['sessions']} sessions, questions {d['questions']}")
    return EXIT_OK


def _eval_synth_handbook(args) -> int:
    from ..eval.sources import handbook_source, write_source

    try:
        docs, queries = handbook_source(args.handbook)
    except (OSError, ValueError) as exc:
        return fail(str(exc), EXIT_BAD_INPUT)
    write_source(docs, queries, args.out)
    counts: dict[str, int] = {}
    for q in queries:
        counts[q["category"]] = counts.get(q["category"], 0) + 1
    d = {"out_dir": str(args.out), "documents": len(docs), "questions": counts}
    print(json.dumps(d, indent=2) if args.json else
          f"wrote {args.out}: {len(docs)} documents, questions {counts}")
    return EXIT_OK


def answers_memory_dir(corpus: Path, suffix: str = "") -> Path:
    """The memory ``asmr eval answers --corpus`` builds when no --memory is given: in the cache
    (``$ASMR_CACHE_DIR``, else ``~/.cache/asmr``), one per corpus path (its name and a hash of where it is)."""
    import hashlib

    from ..paths import cache_dir

    where = hashlib.blake2b(str(corpus.resolve()).encode("utf-8", "surrogateescape"), digest_size=4).hexdigest()
    # "eval-corpus": the folder's memories hold the corpus under CORPUS_KB; those of "eval-answers",
    # from before, under the default kb, and are not reused (the corpus would be held twice)
    return cache_dir() / "eval-corpus" / f"{corpus.stem}-{where}{suffix}"


def cmd_eval_answers(args) -> int:
    from tqdm import tqdm

    from ..embed import get_embedder
    from ..eval.answers import METHODS, AnswerEval, answer_queries, queries_from_synth, write_report
    from ..generate import GeneratorError, get_generator
    from ..store import Memory
    from ..store.memory import stored_model
    from ..store.schema import DB_FILE, never_committed
    from ..store.writer import DEFAULT_KB, ingest
    from ..units.read import read_path

    methods = [x.strip() for x in args.methods.split(",") if x.strip()]
    bad = [x for x in methods if x not in METHODS]
    if bad or not methods:
        return fail(f"--methods: unknown {bad}; choose from {', '.join(METHODS)}", EXIT_BAD_INPUT)
    if args.limit is not None and args.limit < 1:
        return fail(f"--limit {args.limit}: must be 1 or more", EXIT_BAD_INPUT)
    memory_dir = args.memory
    unanswerable: set[str] = set()
    if args.synth:
        if not (args.synth / "queries.jsonl").is_file():
            return fail(f"--synth {args.synth}: no queries.jsonl (run asmr eval synth --out {args.synth})",
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
            return fail("--corpus needs --queries", EXIT_BAD_INPUT)
        from ..eval.retrieval import load_queries
        from ..eval.unanswerable import make
        from ..units.read import iter_jsonl
        try:
            asked = load_queries(args.queries)
            modes = _unanswerable_modes(args)
            made = (make(modes[0], asked, list(iter_jsonl(args.corpus)) if modes[0] != "removed" else [],
                         args.unanswerable, args.seed) if modes else None)
            if made is not None:
                asked, unanswerable = list(made.queries), set(made.qids)
            queries = answer_queries(asked, unanswerable, args.queries)
        except (ValueError, OSError) as exc:
            return fail(str(exc), EXIT_BAD_INPUT)
        # A memory of its own for each construction: one built without some passages, or with some
        # sentences cut, must not be reused for another (``_constructed``: the name eval retrieval gives
        # it beside the same --memory). In the cache, not beside the corpus: a data folder may be
        # read-only or shared.
        documents = list(iter_jsonl(args.corpus))
        base = memory_dir or answers_memory_dir(args.corpus)
        embedder = args.embedder or stored_model(base)[0]  # a memory made beside it reads with its model
        if made is not None and made.changes_memory:
            documents = list(made.documents(documents))
            memory_dir = _constructed(base, made.mode, args, documents)
        memory_dir = memory_dir or base
        ingest(memory_dir, documents, kb=CORPUS_KB, embedder=embedder, progress=not args.no_progress)
        if made is None or not made.changes_memory:
            with Memory(memory_dir) as m:
                _other_documents(m, documents, args.corpus)
    if args.limit:
        queries = queries[:args.limit]
    with Memory(memory_dir) as m:
        embedder = get_embedder(m.embed_model)
        options = {"base_url": args.base_url, "model": args.model} if args.generator == "openai" else {}
        try:
            generator = get_generator(args.generator, embedder=embedder, **options)
        except (ValueError, GeneratorError) as exc:
            return fail(str(exc), EXIT_BAD_INPUT)
        bar = None if args.no_progress else tqdm(total=0, unit="q", leave=False)

        def progress(name, i, n):
            if bar is not None:
                if i == 0:
                    bar.reset(total=n)
                    bar.set_description(name)
                bar.update(1)
        try:
            report = AnswerEval(m, generator, embedder=embedder, kb=DEFAULT_KB if args.synth else CORPUS_KB).run(
                queries, methods, progress=progress, redundancy_mode=args.redundancy,
                equal_refusal=args.equal_refusal)
        except GeneratorError as exc:
            return fail(str(exc), EXIT_BAD_INPUT)
        finally:
            if bar is not None:
                bar.close()
    report["memory"] = str(memory_dir)  # which memory answered: one of its own for removed or cut passages
    if args.out:
        write_report(report, args.out)
    slim = {k: v for k, v in report.items() if k != "outcomes"}
    if args.json:
        print(json.dumps(slim, indent=2))
    else:
        from ..eval.answers import METRICS, SPLIT_METRICS
        first = next(iter(report["methods"].values()))
        print(f"{report['questions']} questions ({first['answerable']} answerable, {first['unanswerable']} "
              f"unanswerable), generator {report['generator']}")
        for columns in (METRICS, SPLIT_METRICS):
            print(f"{'method':<26}" + "".join(f"{_SHORT.get(k, k)[:14]:>15}" for k in columns))
            for name, row in report["methods"].items():
                print(f"{name:<26}" + "".join(_num(row[k], 15) for k in columns))
        categories = sorted({c for row in report["methods"].values() for c in row.get("by_category", {})})
        if categories:
            print("by category: memory accuracy / refused / hallucinated")
            print(f"{'method':<26}" + "".join(f"{c[:20]:>22}" for c in categories))
            for name, row in report["methods"].items():
                cells = [row["by_category"].get(c) for c in categories]
                print(f"{name:<26}" + "".join(f"{'-':>22}" if x is None else
                                              f"{x['accuracy']:.2f} / {x['refused']:.2f} / {x['hallucination']:.2f}"
                                              .rjust(22) for x in cells))
        if report.get("at_equal_refusal"):
            print("at equal refusal (each at its own threshold that refuses as many unanswerable questions as the "
                  "other at its fitted one): answerable accuracy, against the other's")
            for a, row in report["at_equal_refusal"].items():
                for b, x in row.items():
                    print(f"{a:<26}{'vs ' + b:<18}{x['answerable_accuracy']:>7.3f}"
                          f"{x['against_answerable_accuracy']:>8.3f}   (unanswerable refused "
                          f"{x['unanswerable_refused']:.3f} / {x['against_unanswerable_refused']:.3f})")
        if args.out:
            print(f"report: {args.out / 'report.md'}")
    return EXIT_OK
