"""Conflicts between a true passage and its counterfeit twin: does recall mark them, does the answer say so?

    python bench/conflicts.py --corpus ../shared/data/hotpotqa_train.corpus.jsonl \\
                              --queries ../shared/data/hotpotqa_train.queries.jsonl
    python bench/conflicts.py --corpus ../shared/data/cmrc2018_trial.corpus.jsonl \\
                              --queries ../shared/data/cmrc2018_trial.queries.jsonl --json

``asmr.eval.counterfeit`` writes, for a share of the questions, a twin of one gold passage (the same
words, one value swapped, no date); the corpus with the twins is ingested into a new memory in one
batch (so every document has the same effective date: nothing but the texts tells which holds) and
every question with a twin is answered by the extractive generator. Reported:

- ``both_recalled``: the share of those questions whose top-k hits hold both statements: a unit of
  the gold passage that states the original value and the twin's unit that states the swapped one
  (a long passage is several units, and two other units of the twins disagree on nothing);
- among those, ``marked``: recall marks the pair (``disagrees_with`` or ``alternative_to`` between a
  unit of each), and ``stated``: the answer states the disagreement (``Answer.disagreement`` holds a
  unit of each); ``stated_when_cited``: the same among the answers that cite one of the twins (an
  answer drawn from other passages, or a refusal, has no reason to state it);
- ``counterfeit_cited`` / ``counterfeit_cited_alone``: answers that cite the twin, and that cite it
  without stating the disagreement (most of the twin's sentences are the gold's, word for word, so
  citing the twin is often citing a true sentence);
- ``counterfeit_value_alone``: of those, the answers that state the twin's swapped value (as whole
  words and numbers): the lie a reader would take home;
- ``plain``: the same corpus without twins, all its questions asked: the share with a disagreement
  marked (false ones, or real ones between the corpus's own passages);
- ``conflict_ms``: the time of the conflict step alone, per question (median and P95), measured
  by re-running it on the same top-k hits.

The embedder defaults to ``hash-384`` (no model, fast); ``--embedder all-MiniLM-L6-v2`` for the real one.
"""
from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path

from asmr.answer.answerer import Answerer
from asmr.decoding.markers import DEFAULT_MARKERS, marker_pattern
from asmr.embed.models import get_embedder
from asmr.eval.answers import states
from asmr.eval.counterfeit import counterfeit_corpus, read_jsonl, write_jsonl
from asmr.generate.extractive import ExtractiveGenerator
from asmr.retrieve import RetrieveConfig
from asmr.retrieve.bridge import document_subjects
from asmr.retrieve.conflicts import resolve_conflicts
from asmr.store.memory import Memory
from asmr.store.writer import ingest
from asmr.units.read import iter_jsonl


def _doc(unit_id: str) -> str:
    return unit_id.split("/")[-2]


def _share(n: int, d: int) -> float | None:
    return round(n / d, 4) if d else None


def run(corpus_path: str, queries_path: str, *, share: float, seed: int, embedder_name: str, k: int,
        limit: int | None, workdir: Path) -> dict:
    corpus, queries = read_jsonl(corpus_path), read_jsonl(queries_path)
    new_corpus, twins = counterfeit_corpus(corpus, queries, share=share, seed=seed)
    path = workdir / "corpus.jsonl"
    write_jsonl(path, new_corpus)
    t0 = time.perf_counter()
    ingest(workdir / "memory", list(iter_jsonl(path)), embedder=embedder_name, progress=False)
    ingest_s = time.perf_counter() - t0
    memory = Memory(workdir / "memory")
    embedder = get_embedder(memory.embed_model)
    answerer = Answerer(memory, ExtractiveGenerator(embedder), embedder=embedder,
                        retrieve_config=RetrieveConfig(k=k))
    subjects = document_subjects(memory)
    documents = memory.document_titles_and_types()
    undated = memory.undated_documents()
    question = {q["qid"]: q["question"] for q in queries}
    counts = dict.fromkeys(("questions", "both_recalled", "marked", "marked_disagrees", "marked_alternative",
                            "stated", "answer_cites_a_twin", "answered", "counterfeit_cited", "counterfeit_cited_alone",
                            "counterfeit_value_alone"), 0)
    conflict_ms = []
    twins = [t for t in twins if question[t.qid].strip()]  # a data set may hold a blank question
    twins = twins[:limit] if limit else twins
    for t in twins:
        counts["questions"] += 1
        ans = answerer.ask(question[t.qid])
        hits = ans.retrieval.hits
        docs = {h.unit_id: _doc(h.unit_id) for h in hits}
        gold, twin = t.gold_pid, t.pid
        if not ans.refused:
            counts["answered"] += 1
        cited = {_doc(c.unit_id) for c in ans.citations}
        stated = {_doc(u) for u in ans.disagreement}
        if twin in cited:
            counts["counterfeit_cited"] += 1
            if not {gold, twin} <= stated:
                counts["counterfeit_cited_alone"] += 1
                if states(marker_pattern(DEFAULT_MARKERS).sub("", ans.text), [t.replacement]):
                    counts["counterfeit_value_alone"] += 1
        # the conflict step alone, on these hits again (cleared of their marks)
        units = memory.units_at_rows([h.row for h in hits])
        clean = [replace(h, alternative_to=None, disagrees_with=None) for h in hits]
        c0 = time.perf_counter()
        resolve_conflicts(clean, units, memory.vectors, subjects, answerer.retriever.config.conflict_similarity,
                          documents, undated)
        conflict_ms.append((time.perf_counter() - c0) * 1e3)
        # both statements recalled: a unit of the gold with the value and the twin's unit with the swap
        if not (any(_doc(u.id) == gold and t.original in u.content for u in units)
                and any(_doc(u.id) == twin and t.replacement in u.content for u in units)):
            continue
        counts["both_recalled"] += 1
        pair = {gold, twin}

        def links(attr: str) -> bool:
            return any(getattr(h, attr) and {docs[h.unit_id], _doc(getattr(h, attr))} == pair for h in hits)
        dis, alt = links("disagrees_with"), links("alternative_to")
        counts["marked"] += dis or alt
        counts["marked_disagrees"] += dis
        counts["marked_alternative"] += alt
        counts["stated"] += pair <= stated
        counts["answer_cites_a_twin"] += bool(pair & cited)
    # The same questions on the corpus without twins: every disagreement marked there is a false one
    # (or a real one between passages of the corpus: the JSON report lists a few).
    ingest(workdir / "plain", list(iter_jsonl(corpus_path)), embedder=embedder_name, progress=False)
    plain = Memory(workdir / "plain")
    plain_retriever = Answerer(plain, ExtractiveGenerator(embedder), embedder=embedder,
                               retrieve_config=RetrieveConfig(k=k)).retriever
    asked = [q["question"] for q in queries if q["question"].strip()]
    plain_marked = []
    for text in asked:
        hits = plain_retriever.search(text).hits
        pairs = [(h.unit_id, h.disagrees_with) for h in hits if h.disagrees_with and h.unit_id < h.disagrees_with]
        if pairs:
            plain_marked.append({"question": text, "pairs": pairs})
    both = counts["both_recalled"]
    return {
        "plain": {"questions": len(asked), "with_a_disagreement_marked": len(plain_marked),
                  "share": _share(len(plain_marked), len(asked)), "examples": plain_marked[:5]},
        "corpus": corpus_path, "queries": queries_path, "share": share, "seed": seed, "embedder": embedder_name,
        "k": k, "twins": len(twins), "ingest_s": round(ingest_s, 1), "counts": counts,
        "both_recalled": _share(both, counts["questions"]),
        "marked": _share(counts["marked"], both), "stated": _share(counts["stated"], both),
        "stated_when_cited": _share(counts["stated"], counts["answer_cites_a_twin"]),
        "counterfeit_cited": _share(counts["counterfeit_cited"], counts["questions"]),
        "counterfeit_cited_alone": _share(counts["counterfeit_cited_alone"], counts["questions"]),
        "counterfeit_value_alone": _share(counts["counterfeit_value_alone"], counts["questions"]),
        "conflict_ms": {"median": round(statistics.median(conflict_ms), 3) if conflict_ms else None,
                        "p95": round(sorted(conflict_ms)[int(0.95 * (len(conflict_ms) - 1))], 3)
                        if conflict_ms else None},
    }


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--corpus", required=True, help="JSONL corpus: {pid, title, text}")
    ap.add_argument("--queries", required=True, help="JSONL queries: {qid, question, gold_pids}")
    ap.add_argument("--share", type=float, default=1.0, help="share of the questions given a twin (default 1)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--embedder", default="hash-384", help="hash-384 (default) or all-MiniLM-L6-v2")
    ap.add_argument("--k", type=int, default=10, help="hits recalled (default 10)")
    ap.add_argument("--limit", type=int, default=None, help="at most this many twinned questions")
    ap.add_argument("--json", action="store_true", help="print the report as JSON")
    args = ap.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="asmr-conflicts-") as tmp:
        report = run(args.corpus, args.queries, share=args.share, seed=args.seed, embedder_name=args.embedder,
                     k=args.k, limit=args.limit, workdir=Path(tmp))
    if args.json:
        print(json.dumps(report, indent=2))
        return 0
    c = report["counts"]
    print(f"{Path(args.corpus).name}: {report['twins']} twinned questions, embedder {args.embedder}, k {args.k}")
    print(f"  both twins recalled    {c['both_recalled']:4} / {c['questions']:<4} {report['both_recalled']}")
    print(f"  conflict marked        {c['marked']:4} / {c['both_recalled']:<4} {report['marked']}"
          f"  (disagrees_with {c['marked_disagrees']}, alternative_to {c['marked_alternative']})")
    print(f"  answer states it       {c['stated']:4} / {c['both_recalled']:<4} {report['stated']}"
          f"  (of the answers citing a twin: {c['stated']} / {c['answer_cites_a_twin']})")
    print(f"  counterfeit cited      {c['counterfeit_cited']:4} / {c['questions']:<4} "
          f"(without the disagreement: {c['counterfeit_cited_alone']})")
    print(f"  its value stated alone {c['counterfeit_value_alone']:4} / {c['questions']:<4}")
    p = report["plain"]
    print(f"  without twins: questions with a disagreement marked {p['with_a_disagreement_marked']} / "
          f"{p['questions']}")
    print(f"  conflict step          median {report['conflict_ms']['median']} ms, "
          f"P95 {report['conflict_ms']['p95']} ms")
    return 0


if __name__ == "__main__":
    sys.exit(main())
