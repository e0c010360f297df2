"""``asmr ask``, ``chat`` and ``audit``: answers with verified citations, and the verifier's records."""
from __future__ import annotations

import json
import sys
import time
from datetime import datetime
from pathlib import Path

from . import remote
from .common import (EXIT_BAD_INPUT, EXIT_MEMORY, EXIT_NOT_FOUND, EXIT_OK, MAX_QUESTION, check_question, fail,
                     generator_args, memory_arg, memory_dir, positive_int, question_args, retrieve_args,
                     retrieve_config, waited)

# Flags a server cannot honour (it answers with its own settings): given, the question is answered here.
ASK_LOCAL_ONLY = {"seeds": None, "depth": None, "edge_threshold": None, "confidence_threshold": None,
                  "mix": None, "redundancy": "list", "redundancy_budget": 160, "redundancy_facts": 6,
                  "no_verify": False, "no_audit": False, "base_url": None, "model": None}


ASK_DESCRIPTION = (
    "Recalls units for the question, lets only those be cited in this turn, asks the generator (the "
    "citation-closure processor keeps every marker on an allowed id), verifies every cited sentence and "
    "prints the answer with numbered citations; a sentence the memory does not confirm is listed apart, "
    "under 'Not confirmed by the memory'. Below the retrieval confidence threshold the answer is 'not "
    "found', with the closest candidates. A running `asmr serve` that holds the memory answers instead, in "
    "milliseconds (--server, --no-server).")


def add_ask(sub) -> None:
    """``asmr ask``."""
    p = sub.add_parser("ask", help="answer a question from the memory, with verified citations",
                       description=ASK_DESCRIPTION)
    question_args(p)
    memory_arg(p)
    _answer_args(p)
    p.add_argument("--explain", action="store_true", help="also print the recall path of each cited unit and "
                                                          "the verifier's decisions")
    p.add_argument("--json", action="store_true", help="print the answer, citations and audit as JSON")
    p.set_defaults(handler=cmd_ask, exit_at_once=True)


def add_chat(sub) -> None:
    """``asmr chat``."""
    p = sub.add_parser("chat", help="a conversation: one question a line, turn-scoped allowlists",
                       description="Reads questions from standard input, one a line, and answers each as "
                                   "`asmr ask` does. A unit allowed in one turn is citable in the next only if "
                                   "that turn recalls it again. --conversation keeps the turns in a JSON file "
                                   "across runs. --remember writes each question and the confirmed part of "
                                   "its answer back into the memory, as the conversation's document.")
    memory_arg(p)
    _answer_args(p)
    p.add_argument("--max-question", type=positive_int, default=MAX_QUESTION, metavar="CHARS",
                   help=f"longest question asked (default {MAX_QUESTION} characters; a longer line is "
                        "skipped, with a line on stderr)")
    p.add_argument("--conversation", type=Path, default=None, metavar="FILE",
                   help="JSON file holding the conversation's turns (created if missing)")
    p.add_argument("--remember", action="store_true",
                   help="after each answer, write the question and the sentences of the answer the memory "
                        "confirmed (as shown, without citation markers) into the memory: document "
                        "conversation.<id> of kb, a chat session of speakers user and assistant, dated now; "
                        "with --conversation, a later run appends to the same document and every stored unit "
                        "keeps its id. Later questions, and later commands, recall it")
    p.set_defaults(handler=cmd_chat, check_combination=lambda args: _check_chat_flags(p, args))


def _check_chat_flags(parser, args) -> None:
    if args.remember and args.no_verify:
        parser.error("--remember: remembers only what verification confirmed; it cannot be used with "
                     "--no-verify")


def add_audit(sub) -> None:
    """``asmr audit``."""
    p = sub.add_parser("audit", help="print the verifier's audit records: every sentence, citation, check and "
                                     "outcome",
                       description="Every verified answer leaves one record in <memory>/audit/<date>.jsonl: each "
                                   "sentence, its citations, the exists/active/allowed/supports checks with "
                                   "scores, and the outcome. Exits 3 when there is no record to print.")
    memory_arg(p)
    p.add_argument("--last", type=int, default=None, metavar="N", help="only the last N records")
    p.add_argument("--turn", default=None, metavar="ID",
                   help="only the records of one turn (<conversation>/<n>) or of one conversation")
    p.add_argument("--json", action="store_true", help="print the records as a JSON array")
    p.set_defaults(handler=cmd_audit)


def _answer_args(p) -> None:
    """The flags of ask and chat: generator, redundancy block, verification, retrieval."""
    generator_args(p, "extractive", "extractive (default): no model, the units' own sentences, each "
                                    "cited; local: SmolLM2-135M with the citation processor (small: often "
                                    "wrong; what the memory does not confirm is listed apart); openai: "
                                    "an OpenAI-compatible endpoint")
    p.add_argument("--redundancy", choices=("off", "list", "full"), default="list",
                   help="key-fact block after the sources (default list); full adds a question-and-answer "
                        "pair made from a fact and, with a model generator, a paraphrase of the best fact")
    p.add_argument("--redundancy-budget", type=positive_int, default=160, metavar="TOKENS",
                   help="the redundancy block's size, estimated tokens (default 160)")
    p.add_argument("--redundancy-facts", type=positive_int, default=6, metavar="N",
                   help="key facts listed in the redundancy block, at most (default 6)")
    p.add_argument("--no-verify", action="store_true", help="show the generator's answer unverified")
    p.add_argument("--no-audit", action="store_true", help="do not append the audit record to <memory>/audit")
    retrieve_args(p)


def _answerer(args, memory, *, generator=None, embedder=None):
    """The Answerer the flags ask for (with ``generator`` and ``embedder`` when given: one already
    loaded); raises GeneratorError when the generator cannot load."""
    from ..answer import AnswerConfig, Answerer
    from ..embed import get_embedder
    from ..generate import get_generator

    embedder = embedder or get_embedder(memory.embed_model)
    if generator is None:
        options = {"base_url": args.base_url, "model": args.model} if args.generator == "openai" else {}
        generator = get_generator(args.generator, embedder=embedder, **options)
    config = AnswerConfig(redundancy=args.redundancy, verify=not args.no_verify,
                          redundancy_budget_tokens=args.redundancy_budget,
                          redundancy_max_facts=args.redundancy_facts)
    return Answerer(memory, generator, embedder=embedder, retrieve_config=retrieve_config(args),
                    config=config)


def _print_answer(ans: dict, explain: bool) -> None:
    """An answer as ``Answer.to_dict`` (or the server's /v1/answer) gives it."""
    if not ans["found"]:
        print(f"Not found in memory ({ans['reason']}). The closest candidates:")
        for h in ans["recall"][:3]:
            print(f"  {h['score']:.3f}  {h['unit_id']}")
        return
    unconfirmed = ans["unconfirmed"]
    if ans["verification"] is None:
        print("Not verified (--no-verify): nothing below is confirmed by the memory.")
        print(ans["answer_numbered"])
    else:
        print(ans["confirmed"] or "(no sentence of the answer could be confirmed)")
    for c in ans["citations"]:
        if c.get("previous"):
            was = c["previous"]
            print(f"  [{c['number']}] changed on {was['until']}; before, the memory said: {was['text']}")
        if c.get("older"):
            was = c["older"]
            print(f"  [{c['number']}] said later than {was['unit_id']}, which said otherwise and is not the "
                  f"answer: {was['text']}")
    if unconfirmed and ans["verification"] is not None:
        print("\nNot confirmed by the memory (uncited or unsupported; do not rely on it):")
        for sentence in unconfirmed:
            print(f"  - {sentence}")
    for c in ans["citations"]:
        text = " ".join(c["text"].split())
        where = c["doc_id"] + (" > " + c["section"] if c["section"] else "")
        print(f"\n[{c['number']}] {c['unit_id']}\n    {where}\n    "
              f"{text[:300]}{'...' if len(text) > 300 else ''}")
    if explain:
        hits = {h["unit_id"]: h for h in ans["recall"]}
        print(f"\nrecall: confidence {ans['confidence']:.2f}")
        for c in ans["citations"]:
            h = hits.get(c["unit_id"])
            if h is not None:
                path = " -> ".join(f"[{p['edge_kind']} {p['edge_weight']:.2f}] {p['node']}" if p["edge_kind"]
                                   else p["node"] for p in h["path"]) or c["unit_id"]
                print(f"  [{c['number']}] score {h['score']:.3f}, hop {h['hop']}: {path}")
        if ans["verification"] is not None:
            print("verifier:")
            for rec in ans["verification"]["audit"]:
                print(f"  {rec['outcome']:>6}  {rec['sentence'][:100]}")


def _audit(args, memory, ans) -> None:
    if ans.verification is not None and not args.no_audit:
        from ..verify import audit
        audit.append(memory.directory, ans.verification, answer=ans.generation.text if ans.generation else None,
                     question=ans.question)


def cmd_ask(args) -> int:
    problem = check_question(args)
    if problem:
        return fail(problem, EXIT_BAD_INPUT)
    url, named = remote.server_for(args)
    if url is not None:
        code = _ask_server(args, url, named)
        if code is not None:
            return code
    from ..generate import GeneratorError
    from ..store import Memory

    with Memory(memory_dir(args)) as m:
        if m.generation == 0:
            return fail(f"memory {m.directory}: empty; run asmr ingest first", EXIT_NOT_FOUND)
        try:
            answerer = _answerer(args, m)
            answerer.warm_up()
            asked = time.perf_counter()
            ans = answerer.ask(args.question)
        except (ValueError, GeneratorError) as exc:
            return fail(str(exc), EXIT_BAD_INPUT)
        _audit(args, m, ans)
        answering = time.perf_counter() - asked
    if args.json:
        print(json.dumps(ans.to_dict(), indent=2, ensure_ascii=False))
    else:
        _print_answer(ans.to_dict(), args.explain)
        print(f"\n{waited(answering)}")
    return EXIT_OK


def _ask_server(args, url: str, named: bool) -> int | None:
    """Ask the server at ``url``; None when a server found by itself cannot (this process answers then)."""
    body = {"question": args.question, "generator": args.generator}
    if args.k is not None:
        body["k"] = args.k
    ans = remote.exchange(args, url, named, "/v1/answer", body, ASK_LOCAL_ONLY, "answers")
    if not isinstance(ans, dict):
        return ans
    if args.json:
        print(json.dumps(ans, indent=2, ensure_ascii=False))
    else:
        _print_answer(ans, args.explain)
        print(f"\n{waited(0, url)}")
    return EXIT_OK


def cmd_chat(args) -> int:
    from ..generate import GeneratorError
    from ..store import Memory, MemoryStateError
    from ..units.model import InputError
    from ..verify.allowlist import Conversation

    try:
        conv = (Conversation.load(args.conversation) if args.conversation and args.conversation.exists()
                else Conversation())
    except (ValueError, OSError) as exc:  # not JSON, not a conversation, unreadable
        reason = str(exc).removeprefix(f"conversation file {args.conversation}: ")
        return fail(f"--conversation {args.conversation}: cannot be resumed: {reason}", EXIT_BAD_INPUT)
    with Memory(memory_dir(args)) as m:
        if m.generation == 0:
            return fail(f"memory {m.directory}: empty; run asmr ingest first", EXIT_NOT_FOUND)
        try:
            answerer = _answerer(args, m)
        except (ValueError, GeneratorError) as exc:
            return fail(str(exc), EXIT_BAD_INPUT)
        interactive = sys.stdin.isatty()
        while True:
            if interactive:
                print("> ", end="", flush=True)
            line = sys.stdin.readline()
            if not line:
                break
            if not line.strip():
                continue
            if len(line.strip()) > args.max_question:  # said, and the conversation goes on
                print(f"asmr: question: {len(line.strip())} characters, longer than the limit of "
                      f"{args.max_question} (--max-question); not asked", file=sys.stderr)
                continue
            asked = datetime.now()
            try:
                ans = answerer.ask(line.strip(), conv)
            except GeneratorError as exc:  # the turns answered so far are saved already
                return fail(str(exc), EXIT_BAD_INPUT)
            _audit(args, m, ans)
            print(f"[turn {ans.allowlist.turn_id}]")
            _print_answer(ans.to_dict(), False)
            print(f"\n({ans.timings.get('total_ms', 0):.0f} ms)")
            if args.conversation:
                conv.save(args.conversation)
            if args.remember:
                try:
                    _remember(m.directory, conv.id, line.strip(), ans, answerer.retriever.embedder, asked)
                except (InputError, MemoryStateError) as exc:  # the turns remembered so far stay
                    return fail(f"--remember: turn {ans.allowlist.turn_id} not remembered: {exc}",
                                EXIT_MEMORY)
                # the next question is answered from the memory that holds this turn too
                m.reopen()
                answerer = _answerer(args, m, generator=answerer.generator,
                                     embedder=answerer.retriever.embedder)
    return EXIT_OK


def _remember(directory, conversation: str, question: str, ans, embedder, asked: datetime) -> None:
    """Append the question and what the memory confirmed of the answer (the sentences that kept a
    citation, markers removed) to the conversation's document, in one ingest."""
    from ..store import DEFAULT_KB, Writer
    from ..units.chat import SaidTurn, conversation_doc_id, conversation_document
    from ..verify.citations import confirmed_sentences

    reply = " ".join(confirmed_sentences(ans.text, [c.unit_id for c in ans.citations])) if ans.found else ""
    turns = [SaidTurn(asked, "user", question), SaidTurn(datetime.now(), "assistant", reply, resolve=False)]
    doc_id = conversation_doc_id(conversation)
    with Writer(directory, embedder=embedder, progress=False) as w:  # read and write under the writer lock
        doc = conversation_document(doc_id, w.current_document(DEFAULT_KB, doc_id), turns,
                                    source="asmr chat --remember")
        w.ingest([doc], kb=DEFAULT_KB)


def cmd_audit(args) -> int:
    from ..verify import audit

    if args.last is not None and args.last < 1:
        return fail(f"--last {args.last}: must be at least 1", EXIT_BAD_INPUT)
    records = audit.load(memory_dir(args), last=args.last, turn=args.turn)
    if not records:
        what = f"turn {args.turn}" if args.turn else "any answer"
        return fail(f"memory {memory_dir(args)}: no audit record of {what}", EXIT_NOT_FOUND)
    if args.json:
        print(json.dumps(records, indent=2, ensure_ascii=False))
        return EXIT_OK
    print("\n\n".join(audit.format_record(r) for r in records))
    return EXIT_OK
