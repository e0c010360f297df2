"""Corrections within one conversation: is the corrected value recalled and answered, not the wrong one?

    python bench/chat_corrections.py --seeds 0 1 --corrections 8 [--embedder all-MiniLM-L6-v2] [--json]
    python bench/chat_corrections.py --logs DIR ...   # the logs DIR/chat-<seed> already written (to run
                                                      # another version of the engine on the same data)

For each seed, ``asmr eval synth --chat --corrections N`` writes a chat log in which N facts are
first stated with a wrong value and corrected by the same person later in the same session
(question category ``correction``; ``current`` and ``previous`` are the changes told in a later
session). The log is ingested two ways:

- ``turns``: one turn a document, as ``asmr eval retrieval --corpus`` reads it (every turn of a
  session has the session's date: nothing in the store orders two turns of one session);
- ``sessions``: one session a document, as ``asmr ingest --format chat`` reads it (the turns of a
  session are units of one chat document, in the order they were said).

Per category (``correction`` also by its form, ``restated`` or ``terse``), over the answerable
questions of ``--categories``:

- ``recall@5``: the share of gold turns among the units of the top 5 hits;
- ``accuracy``: the extractive answer, verified, given even below the confidence threshold (as
  ``eval answers``' plain ``asmr``), states the answer, states no stale value, and cites a gold
  turn;
- ``stale``: the share of answers that state the stale value (the wrong or the earlier one), a
  value named only after "not" aside ("Bologna, not Tartu" states Bologna);
- ``outdated``: of the questions whose hits hold a gold turn and a stale turn (one of the
  subject's earlier turns that states a stale value), the share whose stale turn is marked the
  older side of a conflict with the gold one (``Hit.alternative_to``); in brackets, how many such
  questions there were.

A turn is mapped to the unit that holds it by its place in the session's text; a unit of joined
short turns holds several.
"""
from __future__ import annotations

import argparse
import json
import re
import sys
import tempfile
from pathlib import Path

from asmr.answer.answerer import AnswerConfig, Answerer
from asmr.decoding.markers import DEFAULT_MARKERS, marker_pattern
from asmr.embed import get_embedder
from asmr.eval.answers import states
from asmr.eval.synth_chat import generate_chat
from asmr.generate import get_generator
from asmr.retrieve import Retriever
from asmr.store import Memory, ingest
from asmr.units.chat import iter_chat
from asmr.units.read import iter_jsonl

K = 5
# "not Tartu", "not the 12th", "不是塔尔图": the value after the negation, up to punctuation.
_NEGATED = re.compile(r"\bnot\s+[^,;:.!?]+|不是[^，。；！？,;.!?]+", re.IGNORECASE)


def _turn_offsets(corpus: Path) -> dict[str, dict[str, int]]:
    """By session document id, the offset of each turn (by pid) in the document's text."""
    records = [json.loads(line) for line in corpus.read_text(encoding="utf-8").splitlines() if line.strip()]
    out: dict[str, dict[str, int]] = {}
    for doc in iter_chat(corpus):
        turns = [r for r in records if f"{corpus.stem}.session-{r['session']}" == doc.doc_id]
        starts, at = {}, 0
        for r, paragraph in zip(turns, doc.text.split("\n\n")):
            starts[r["pid"]] = at
            at += len(paragraph) + 2
        out[doc.doc_id] = starts
    return out


def _share(flags: list) -> float | None:
    return sum(flags) / len(flags) if flags else None


def run(seed: int, corrections: int, embedder: str, categories: list[str], work: Path,
        logs: Path | None = None) -> dict:
    if logs is None:
        out = work / f"chat-{seed}"
        generate_chat(out, seed=seed, corrections=corrections)
    else:
        out = logs / f"chat-{seed}"
    corpus = out / "corpus.jsonl"
    queries = [q for q in map(json.loads, (out / "queries.jsonl").read_text().splitlines())
               if q["answerable"] and q["category"] in categories]
    turns = [json.loads(line) for line in corpus.read_text(encoding="utf-8").splitlines() if line.strip()]
    place = {t["pid"]: i for i, t in enumerate(turns)}
    offsets = _turn_offsets(corpus)
    report = {}
    for layout, docs in (("turns", lambda: iter_jsonl(corpus)), ("sessions", lambda: iter_chat(corpus))):
        directory = work / f"mem-{seed}-{layout}"
        ingest(directory, docs(), embedder=embedder, progress=False)
        with Memory(directory) as m:
            emb = get_embedder(m.embed_model)
            retriever = Retriever(m, emb)
            answerer = Answerer(m, get_generator("extractive", embedder=emb), retriever=retriever,
                                embedder=emb, config=AnswerConfig(refuse=False))
            markers = marker_pattern(DEFAULT_MARKERS)

            def pids(unit_id: str) -> set[str]:
                u = m.unit(unit_id)
                if layout == "turns":
                    return {u.doc_id}
                return {pid for pid, at in offsets[u.doc_id].items() if u.offset_start <= at < u.offset_end}

            rows: dict[str, list[tuple[float, bool, bool, bool | None]]] = {}
            for q in queries:
                result = retriever.search(q["question"])
                top = set().union(*(pids(h.unit_id) for h in result.hits[:K])) if result.hits else set()
                gold = set(q["gold_pids"])
                ans = answerer.answer(q["question"], result)
                cited = set().union(*(pids(c.unit_id) for c in ans.citations if c.doc_id)) \
                    if ans.citations else set()
                said = markers.sub("", ans.text)
                # a value the answer names only to deny it ("Bologna, not Tartu") is not stated
                stale = any(states(_NEGATED.sub(" ", said), [s]) for s in q["stale_answers"])
                right = not ans.refused and states(said, q["answers"]) and not stale and bool(cited & gold)
                first = min(place[g] for g in gold)
                stale_turns = {t["pid"] for t in turns[:first] if t["speaker"] == q["subject"]
                               and any(states(t["text"], [s]) for s in q["stale_answers"])}
                held = [(h, pids(h.unit_id)) for h in result.hits]
                by_id = {h.unit_id: p for h, p in held}
                both = any(p & gold for _, p in held) and any(p & stale_turns for _, p in held)
                marked = any(p & stale_turns and h.alternative_to
                             and by_id.get(h.alternative_to, set()) & gold for h, p in held) if both else None
                row = (len(gold & top) / len(gold), right, stale, marked)
                rows.setdefault(q["category"], []).append(row)
                if q.get("correction_form"):  # restated, or terse: reported apart too
                    rows.setdefault(f"{q['category']} ({q['correction_form']})", []).append(row)
        report[layout] = {c: {"questions": len(r), "recall@5": sum(x[0] for x in r) / len(r),
                              "accuracy": sum(x[1] for x in r) / len(r),
                              "stale": sum(x[2] for x in r) / len(r),
                              "outdated": _share([x[3] for x in r if x[3] is not None]),
                              "both_recalled": sum(x[3] is not None for x in r)}
                          for c, r in sorted(rows.items(), key=lambda kv: (categories.index(kv[0].split()[0]),
                                                                           kv[0]))}
    return report


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--seeds", type=int, nargs="+", default=[0, 1])
    p.add_argument("--corrections", type=int, default=8)
    p.add_argument("--embedder", default="all-MiniLM-L6-v2")
    p.add_argument("--categories", default="correction,current,previous",
                   help="comma-separated question categories (default correction,current,previous)")
    p.add_argument("--logs", type=Path, default=None, metavar="DIR",
                   help="read the logs from DIR/chat-<seed> instead of writing them")
    p.add_argument("--json", action="store_true")
    args = p.parse_args(argv)
    categories = args.categories.split(",")
    with tempfile.TemporaryDirectory(prefix="asmr-corrections-") as tmp:
        reports = {seed: run(seed, args.corrections, args.embedder, categories, Path(tmp), args.logs)
                   for seed in args.seeds}
    if args.json:
        print(json.dumps(reports, indent=2))
        return 0
    print("| seed | layout | category | questions | Recall@5 | accuracy | stale stated | outdated |")
    print("|---|---|---|---:|---:|---:|---:|---:|")
    for seed, report in reports.items():
        for layout, by_category in report.items():
            for c, x in by_category.items():
                marked = "-" if x["outdated"] is None else f"{x['outdated']:.2f}"
                print(f"| {seed} | {layout} | {c} | {x['questions']} | {x['recall@5']:.2f} | "
                      f"{x['accuracy']:.2f} | {x['stale']:.2f} | {marked} ({x['both_recalled']}) |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
