"""Answer accuracy: retrieval + generation + verification, per method, side by side.

Methods (all with the same generator, over the same memory):

- ``dense_rag``: the top units of the faiss index, no verification;
- ``hybrid_rag``: dense and BM25 fused by reciprocal rank, no verification;
- ``asmr``: ASMR's recall (graph spreading, conflicts), no refusal, no verification;
- ``asmr_verified``: ASMR's recall with refusal below the confidence threshold and the
  verifier (unsupported citations weakened or dropped).

The two baselines refuse as a user's RAG would: "not found", without generating, when the
cosine of the question and the best unit they show (``asmr.eval.retrieval.baseline_score``, over
the same source budget) is below their threshold (``fitted_model`` in
``asmr.retrieve.confidence``, fitted for the memory's embedder the same way as ASMR's).

With a model generator each also runs with the redundancy block (``NAME+redundancy``);
the extractive generator ignores the prompt, so it runs each method once.

Metrics, fractions in [0, 1]:

- refused: the system declined: retrieval said "not found", or nothing of the answer is left
  once markers and the verifier's "cannot be confirmed" notices are cut out, or every sentence
  left says the answer is not there ("not found", "the sources do not mention ...", "I don't
  know"; ``asmr.answer.answerer.declines``). Anything else is answered, with or without a
  citation;
- a key fact is stated when one of its accepted forms occurs in the answer as whole words and
  numbers ("yes" is not in "eyes", "2 GB" not in "12 GB", "2.4" not in "2.4.1"; in CJK text,
  where words are not spaced, as a substring);
- ``memory_accuracy``: answerable question: answered, the answer states every key fact, does
  not state a stale value, and cites a unit that holds the answer; unanswerable question:
  refused;
- ``answerable_accuracy`` / ``unanswerable_accuracy``: memory accuracy on the answerable /
  unanswerable questions alone (on the latter: the share refused); none without such questions;
- ``hallucination_rate``: share of all questions answered although no cited unit holds the
  answer (an answer without citations included), or answered although memory has no answer;
  ``hallucination_answerable`` / ``hallucination_unanswerable``: the same share among the
  answerable / unanswerable questions;
- ``conflict_rate``: of the answered questions, the share whose answer says its sources disagree
  and cites both sides (``Answer.disagreement`` names two units or more);
- ``refusal_rate_answerable`` / ``refusal_rate_unanswerable``: share refused among answerable /
  unanswerable questions;
- ``citation_precision``: of all citations in answers (not refusals) to answerable questions,
  the share whose unit holds the answer (a gold unit, a unit stating a key fact, or one spanning part
  of a gold text: a sentence group of the paragraph whose two sentences answer);
- ``citation_recall``: per answerable question whose gold units resolve in the memory, the
  share of the statements they make cited (a unit within another's span, a paragraph's sentence
  group, states what its parent does: citing either counts), averaged (questions whose gold units do
  not resolve are left out;
  ``citation_recall_questions`` says how many were scored);
- ``key_fact_recall``: per answerable question, the share of its key facts stated, averaged;
- ``p50_ms`` / ``p95_ms``: latency per question, retrieval to verified answer.

``at_equal_refusal`` (with the extractive generator, or ``equal_refusal=True``, ``--equal-refusal``):
every fitted threshold puts its method at some rate of refusal, and a method that refuses more answers fewer
answerable questions whatever it recalls. So each refusing method is also scored at the threshold
of its own score where it refuses at least as many unanswerable questions as another method does
at its fitted one: its answerable accuracy there beside the other's. The questions refused at the
fitted threshold are answered once more without refusal (not timed) to know what they would have
been.
"""
from __future__ import annotations

import json
import statistics
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Sequence

import numpy as np

from asmr.answer.answerer import Answerer, AnswerConfig
from asmr.decoding.markers import DEFAULT_MARKERS, marker_pattern
from asmr.embed.models import question_vectors
from asmr.text.cjk import CJK_CHAR
from asmr.retrieve import Hit, Result, RetrieveConfig, Retriever

METHODS = ("dense_rag", "hybrid_rag", "asmr", "asmr_verified")
METRICS = ("memory_accuracy", "hallucination_rate", "refusal_rate_answerable", "refusal_rate_unanswerable",
           "citation_precision", "citation_recall", "key_fact_recall", "p50_ms", "p95_ms")
# Answerable and unanswerable apart; None where a report has no question of the kind.
SPLIT_METRICS = ("answerable_accuracy", "unanswerable_accuracy", "hallucination_answerable",
                 "hallucination_unanswerable", "conflict_rate")


@dataclass(frozen=True)
class AnswerQuery:
    qid: str
    question: str
    type: str                              # single | multi | conflict | unanswerable
    key_facts: tuple[tuple[str, ...], ...]  # each fact: its accepted surface forms
    gold_docs: tuple[str, ...] = ()
    gold_texts: tuple[str, ...] = ()
    stale: tuple[str, ...] = ()
    category: str | None = None  # the file's own category of the question, where it gives one

    @property
    def answerable(self) -> bool:
        return self.type != "unanswerable"


def queries_from_synth(path: str | Path) -> list[AnswerQuery]:
    """The questions of ``asmr eval synth`` (queries.jsonl)."""
    from .synth import load_queries, surface_forms
    return [AnswerQuery(q["qid"], q["question"], q["type"],
                        tuple(tuple(surface_forms(f)) for f in q["key_facts"]),
                        tuple(q["gold_docs"]), tuple(q["gold_texts"]), tuple(q.get("stale_answers", ())))
            for q in load_queries(path)]


def queries_from_corpus(path: str | Path, unanswerable: set[str] = frozenset()) -> list[AnswerQuery]:
    """Questions in the format of ../shared/data (answers any of, gold passages); qids in
    ``unanswerable`` were made unanswerable (their gold passages removed from the memory, say), and
    a question with ``gold_pids: []`` or ``"answerable": false`` has no answer anyway."""
    from .retrieval import load_queries
    return answer_queries(load_queries(path), unanswerable, path)


def answer_queries(queries, unanswerable: set[str] = frozenset(), source: str | Path = "queries") -> list[AnswerQuery]:
    """``asmr.eval.retrieval.Query``s as questions to answer; those in ``unanswerable`` or not
    ``answerable`` are to be refused. An answerable one without answers is a ValueError naming
    ``source`` and its qid."""
    out = []
    for q in queries:
        if not q.answerable or q.qid in unanswerable:
            out.append(AnswerQuery(q.qid, q.question, "unanswerable", (), category=q.category))
            continue
        if not q.answers:
            raise ValueError(f"{source}: question {q.qid} has no answers to grade against")
        out.append(AnswerQuery(q.qid, q.question, "multi", (q.answers,), tuple(q.gold), category=q.category))
    return out


def _norm(text: str) -> str:
    return " ".join(text.lower().split())


def _joins(a: str, b: str) -> bool:
    """Whether ``a`` and ``b`` (neighbouring characters) belong to one word or number.

    Letters and digits join ("eyes", "12"); a CJK character joins nothing, since CJK words are
    not spaced; "." and "," join digits ("2.4.1", "1,200")."""
    def word(c: str) -> bool:
        return (c.isalnum() or c == "_") and not CJK_CHAR.match(c)
    return word(a) and word(b)


def _occurs(form: str, text: str) -> bool:
    """``form`` occurs in ``text`` as whole words and numbers (both normalised)."""
    return find_whole(form, text) >= 0


def find_whole(form: str, text: str) -> int:
    """Where ``form`` first occurs in ``text`` as whole words and numbers (CJK text: anywhere); -1
    if it does not. Case and spacing count: normalise both first to ignore them."""
    start = text.find(form)
    while start >= 0:
        end = start + len(form)
        before = text[start - 1] if start else " "
        after = text[end] if end < len(text) else " "
        # "2" in "1.2" or "1,2" and "2.4" in "2.4.1": a number goes on past a separator
        number_before = form[0].isdigit() and before in ".," and text[start - 2:start - 1].isdigit()
        number_after = form[-1].isdigit() and after in ".," and text[end + 1:end + 2].isdigit()
        if not (_joins(before, form[0]) or _joins(form[-1], after) or number_before or number_after):
            return start
        start = text.find(form, start + 1)
    return -1


def states(text: str, forms: Sequence[str]) -> bool:
    """Whether ``text`` states one of ``forms`` (a key fact's accepted forms), as whole words and
    numbers, case and spacing aside."""
    t = _norm(text)
    return any(_occurs(_norm(f), t) for f in forms if f.strip())


@dataclass
class _Outcome:
    qid: str
    method: str
    refused: bool
    stated: list[bool]
    stale: bool
    cited: list[str]
    cited_ok: list[bool]
    gold_cited: float | None   # None: the question's gold units do not resolve in this memory
    seconds: float
    answer: str = ""
    disagreement: bool = False  # the answer says its sources disagree, citing both sides
    extra: dict = field(default_factory=dict)


def _flat_result(memory, question: str, rows: np.ndarray, scores: np.ndarray, seconds: float, score: float,
                 threshold: float) -> Result:
    """A baseline's ranked units as a retrieval Result, "not found" when its ``score`` is below
    ``threshold``."""
    ids = memory.ids_at_rows(rows)
    hits = tuple(Hit(ids[int(r)], int(r), float(s), float(s), 0.0, 0.0, 0, True, ())
                 for r, s in zip(rows, scores) if int(r) in ids)
    found = score >= threshold
    return Result(question, hits, seconds, confidence=score, found=found,
                  reason="" if found else f"best similarity {score:.2f} < {threshold:.2f}")


class AnswerEval:
    """Runs every method over the questions and scores the answers."""

    def __init__(self, memory, generator, *, embedder=None, retrieve_config: RetrieveConfig | None = None,
                 kb: str = "kb", max_sources: int = 6, baseline_thresholds: dict[str, float] | None = None) -> None:
        """``baseline_thresholds``: the refusal threshold of ``dense`` and ``hybrid`` (default
        those fitted for the memory's embedder)."""
        from asmr.embed.models import get_embedder
        from asmr.retrieve import confidence as confidence_model
        self.memory = memory
        self.generator = generator
        self.embedder = embedder or get_embedder(memory.embed_model)
        self.retriever = Retriever(memory, self.embedder, retrieve_config)
        self.kb = kb
        self.max_sources = max_sources
        self.baseline_thresholds = dict(confidence_model.fitted_model(self.embedder.name)[2]
                                        if baseline_thresholds is None else baseline_thresholds)
        self._unit_text: dict[str, str] = {}
        self._gold_units: dict[str, set[str]] = {}
        self._gold_statements: dict[str, list[set[str]]] = {}
        self._gold_spans: dict[str, set[tuple[str, int, int]]] = {}

    def _answerer(self, *, verify: bool, refuse: bool, redundancy: str) -> Answerer:
        cfg = AnswerConfig(redundancy=redundancy, verify=verify, refuse=refuse, max_sources=self.max_sources)
        return Answerer(self.memory, self.generator, config=cfg, embedder=self.embedder, retriever=self.retriever)

    def _recall(self, method: str, question: str) -> Result:
        t0 = time.perf_counter()
        if method in ("asmr", "asmr_verified"):
            return self.retriever.search(question)
        from .retrieval import baseline_rows, best_cosine
        qvec = question_vectors(self.embedder, [question])[0]
        baseline = method.removesuffix("_rag")
        rows, scores = baseline_rows(baseline, self.memory, self.retriever, question, qvec, self.max_sources)
        return _flat_result(self.memory, question, rows, scores, time.perf_counter() - t0,
                            best_cosine(self.memory, qvec, rows), float(self.baseline_thresholds.get(baseline, 0.0)))

    def _text(self, uid: str) -> str:
        if uid not in self._unit_text:
            u = self.memory.unit(uid)
            self._unit_text[uid] = u.content if u is not None else ""
        return self._unit_text[uid]

    def gold_units(self, q: AnswerQuery) -> set[str]:
        """Active units of the gold documents that hold a gold text."""
        if q.qid not in self._gold_units:
            found: set[str] = set()
            spans: set[tuple[str, int, int]] = set()  # (document, start, end) of each gold text or answer
            for doc, text in zip(q.gold_docs, q.gold_texts or [""] * len(q.gold_docs)):
                text = text.strip()
                for u in self.memory.units_of(self.kb, doc):
                    if (text and text in u.content) or (not text and q.key_facts and any(
                            states(u.content, forms) for forms in q.key_facts)):
                        found.add(u.id)
                        if u.kind == "table_row":  # a row's content is not its span
                            continue
                        # the gold text, or an answer as the unit writes it (a key fact's form)
                        for said in [text] if text else [f for forms in q.key_facts for f in forms]:
                            if (start := u.content.find(said)) >= 0:
                                at = u.offset_start + start
                                spans.add((u.doc_id, at, at + len(said)))
            self._gold_units[q.qid], self._gold_spans[q.qid] = found, spans
        return self._gold_units[q.qid]

    def _states_part(self, q: AnswerQuery, u) -> bool:
        """Whether the unit ``u`` spans part of a gold text, or of an answer as a gold unit writes it: a
        sentence group of the paragraph that holds an answer of two sentences states one of them."""
        self.gold_units(q)
        return any(doc == u.doc_id and start < u.offset_end and u.offset_start < end
                   for doc, start, end in self._gold_spans[q.qid])

    def gold_statements(self, q: AnswerQuery) -> list[set[str]]:
        """The gold units grouped by what they state: a unit whose span lies within another's (a
        paragraph's sentence group, a list's item) states what its parent does, and one of them that
        spans part of a gold text (``_states_part``) a part of it, so citing any of them cites that
        statement."""
        if q.qid not in self._gold_statements:
            gold = (self.memory.unit(uid) for uid in self.gold_units(q))
            units = sorted((u for u in gold if u is not None),
                           key=lambda u: (u.doc_id, u.offset_start, -u.offset_end))
            groups: list[tuple[object, set[str]]] = []  # (the outermost unit, the ids of its statement)
            for u in units:
                within = next((ids for o, ids in groups if o.doc_id == u.doc_id
                               and o.offset_start <= u.offset_start and u.offset_end <= o.offset_end), None)
                if within is None:
                    groups.append((u, {u.id}))
                else:
                    within.add(u.id)
            for outer, ids in groups:
                ids.update(u.id for u in self.memory.units_of(self.kb, outer.doc_id)
                           if outer.offset_start <= u.offset_start and u.offset_end <= outer.offset_end
                           and self._states_part(q, u))
            self._gold_statements[q.qid] = [ids for _, ids in groups]
        return self._gold_statements[q.qid]

    def _holds(self, q: AnswerQuery, uid: str) -> bool:
        if uid in self.gold_units(q) or any(states(self._text(uid), forms) for forms in q.key_facts):
            return True
        u = self.memory.unit(uid) if self._gold_spans[q.qid] else None
        return u is not None and self._states_part(q, u)

    def run(self, queries: Sequence[AnswerQuery], methods: Sequence[str] = METHODS, *,
            redundancy_variants: bool | None = None, redundancy_mode: str = "list",
            progress: Callable[[str, int, int], None] | None = None, equal_refusal: bool | None = None) -> dict:
        """``{"methods": {name: metrics}, "questions": n, ...}`` plus per-question outcomes.

        ``equal_refusal`` (default: with the extractive generator, whose answers cost little): the
        refusing methods also answer the questions they refuse, untimed, so that ``at_equal_refusal``
        can compare them at any threshold (:func:`equal_refusal_table`)."""
        for m in methods:
            if m not in METHODS:
                raise ValueError(f"method {m!r}: must be one of {', '.join(METHODS)}")
        if redundancy_mode not in ("list", "full"):
            raise ValueError(f"redundancy_mode {redundancy_mode!r}: must be list or full")
        if redundancy_variants is None:
            redundancy_variants = self.generator.name != "extractive"
        variants = [(m, "off") for m in methods] + (
            [(m, redundancy_mode) for m in methods] if redundancy_variants else [])
        pat = marker_pattern(DEFAULT_MARKERS)
        report: dict = {"methods": {}, "questions": len(queries), "generator": self.generator.name,
                        "redundancy_mode": redundancy_mode if redundancy_variants else None,
                        "types": {t: sum(q.type == t for q in queries) for t in sorted({q.type for q in queries})}}
        if equal_refusal is None:
            equal_refusal = self.generator.name == "extractive"
        outcomes: list[_Outcome] = []
        by_qid = {q.qid: q for q in queries}
        for method, redundancy in variants:
            name = method + ("+redundancy" if redundancy != "off" else "")
            # Plain asmr answers even below its confidence threshold; the baselines' own "not found"
            # (_flat_result) and asmr_verified's are refusals.
            refusing = method != "asmr"
            answerer = self._answerer(verify=method == "asmr_verified", refuse=refusing, redundancy=redundancy)
            unrefused = self._answerer(verify=method == "asmr_verified", refuse=False, redundancy=redundancy) \
                if refusing and equal_refusal else None
            self.retriever.clear_cache()  # every method pays for its own recall
            rows = []
            for i, q in enumerate(queries):
                if progress:
                    progress(name, i, len(queries))
                t0 = time.perf_counter()
                result = self._recall(method, q.question)
                ans = answerer.answer(q.question, result, started=t0)
                rows.append(self._outcome(q, name, ans, time.perf_counter() - t0, pat))
                if unrefused is not None:
                    # the score refusal reads, and what would have been answered below the threshold
                    rows[-1].extra["score"] = float(result.confidence)
                    if not result.found:
                        below = self._outcome(q, name, unrefused.answer(q.question, result), 0.0, pat)
                        rows[-1].extra["unrefused"] = {"refused": below.refused, "correct": _correct(below, q)}
            report["methods"][name] = _metrics(rows, by_qid)
            outcomes += rows
        if equal_refusal:
            report["at_equal_refusal"] = equal_refusal_table(outcomes, by_qid)
        report["outcomes"] = [o.__dict__ for o in outcomes]
        return report

    def _outcome(self, q: AnswerQuery, name: str, ans, seconds: float, pat) -> _Outcome:
        cited = [next(g for g in m.groups() if g) for m in pat.finditer(ans.text)]
        plain = pat.sub("", ans.text)
        gold = self.gold_statements(q)
        return _Outcome(q.qid, name, ans.refused, [states(plain, forms) for forms in q.key_facts],
                        any(states(plain, [s]) for s in q.stale), cited, [self._holds(q, c) for c in cited],
                        sum(bool(g & set(cited)) for g in gold) / len(gold) if gold else None, seconds,
                        ans.text, len(getattr(ans, "disagreement", ())) >= 2)


def _correct(r: _Outcome, q: AnswerQuery) -> bool:
    """Memory accuracy of one outcome: an answerable question answered with every key fact, no stale
    value and a citation of a unit that holds the answer; an unanswerable one refused."""
    if not q.answerable:
        return r.refused
    return not r.refused and all(r.stated) and not r.stale and any(r.cited_ok)


def _at_thresholds(rows: list[_Outcome], queries: dict[str, AnswerQuery]):
    """For a refusing method's outcomes (with ``extra["score"]``): a function of a threshold giving
    (answerable accuracy, share of unanswerable questions refused), and the thresholds where either
    changes (the scores)."""
    score = np.array([r.extra["score"] for r in rows])
    answerable = np.array([queries[r.qid].answerable for r in rows])
    # below its own threshold an outcome is a refusal; what it would have been is in extra["unrefused"]
    refused = np.array([r.extra.get("unrefused", {"refused": r.refused})["refused"] for r in rows])
    correct = np.array([r.extra["unrefused"]["correct"] if "unrefused" in r.extra
                        else _correct(r, queries[r.qid]) for r in rows])

    def at(t: float) -> tuple[float | None, float | None]:
        declines = refused | (score < t)
        acc = float(np.mean(correct[answerable] & ~declines[answerable])) if answerable.any() else None
        una = float(np.mean(declines[~answerable])) if (~answerable).any() else None
        return acc, una
    return at, np.unique(np.concatenate([score, [np.inf]]))


def equal_refusal_table(outcomes: list[_Outcome], queries: dict[str, AnswerQuery]) -> dict:
    """Each refusing method against each other at equal refusal: for every pair (A, B), A's answerable
    accuracy at the lowest threshold of its own score at which it refuses at least the share of
    unanswerable questions that B refuses at B's fitted threshold, beside B's answerable accuracy
    there. Where the fitted thresholds put two methods at different refusal rates, this compares what
    they answer rather than how much they refuse. ``{A: {B: {"unanswerable_refused", "answerable_accuracy",
    "threshold", "against_unanswerable_refused", "against_answerable_accuracy"}}}``; empty without
    unanswerable questions."""
    by_method: dict[str, list[_Outcome]] = {}
    for r in outcomes:
        if "score" in r.extra:
            by_method.setdefault(r.method, []).append(r)
    if not any(not q.answerable for q in queries.values()):
        return {}
    fitted = {b: _metrics(rows_b, queries) for b, rows_b in by_method.items()}  # each at its own threshold
    table: dict[str, dict] = {}
    for a, rows_a in by_method.items():
        at_a, thresholds = _at_thresholds(rows_a, queries)
        for b, m in fitted.items():
            if a == b:
                continue
            target = m["refusal_rate_unanswerable"]
            t = next(t for t in thresholds if at_a(t)[1] >= target - 1e-12)
            acc, una = at_a(t)
            table.setdefault(a, {})[b] = {
                "unanswerable_refused": una, "answerable_accuracy": acc,
                "threshold": None if np.isinf(t) else float(t),
                "against_unanswerable_refused": target, "against_answerable_accuracy": m["answerable_accuracy"]}
    return table


def _metrics(rows: list[_Outcome], queries: dict[str, AnswerQuery]) -> dict:
    ans = [r for r in rows if queries[r.qid].answerable]
    una = [r for r in rows if not queries[r.qid].answerable]

    def correct(r: _Outcome) -> bool:
        return _correct(r, queries[r.qid])

    def hallucinated(r: _Outcome) -> bool:
        return not r.refused and (not queries[r.qid].answerable or not any(r.cited_ok))

    answered = [r for r in ans if not r.refused]
    split = lambda xs: float(statistics.fmean(xs)) if xs else None  # noqa: E731  (None: no such question)
    cites = [ok for r in answered for ok in r.cited_ok]
    recalls = [r.gold_cited for r in ans if r.gold_cited is not None]
    ms = [r.seconds * 1e3 for r in rows]
    mean = lambda xs: float(statistics.fmean(xs)) if xs else 0.0  # noqa: E731
    return {
        "memory_accuracy": mean([correct(r) for r in rows]),
        "answerable_accuracy": split([correct(r) for r in ans]),
        "unanswerable_accuracy": split([correct(r) for r in una]),
        "hallucination_rate": mean([hallucinated(r) for r in rows]),
        "hallucination_answerable": split([hallucinated(r) for r in ans]),
        "hallucination_unanswerable": split([hallucinated(r) for r in una]),
        "conflict_rate": split([r.disagreement for r in rows if not r.refused]),
        "answerable": len(ans), "unanswerable": len(una),
        "refusal_rate_answerable": mean([r.refused for r in ans]),
        "refusal_rate_unanswerable": mean([r.refused for r in una]),
        "citation_precision": mean(cites),
        "citation_recall": mean(recalls),
        "citation_recall_questions": len(recalls),
        "key_fact_recall": mean([mean(r.stated) if r.stated else 0.0 for r in ans]),
        "p50_ms": float(np.percentile(ms, 50)) if ms else 0.0,
        "p95_ms": float(np.percentile(ms, 95)) if ms else 0.0,
        "by_type": {t: mean([correct(r) for r in rows if queries[r.qid].type == t])
                    for t in sorted({q.type for q in queries.values()})},
        # Per category of the question file: memory accuracy, share refused, share hallucinated.
        "by_category": {c: {"questions": len(rs), "accuracy": mean([correct(r) for r in rs]),
                            "refused": mean([r.refused for r in rs]),
                            "hallucination": mean([hallucinated(r) for r in rs])}
                        for c in sorted({q.category for q in queries.values() if q.category is not None})
                        for rs in [[r for r in rows if queries[r.qid].category == c]]},
        "stale_rate": mean([r.stale for r in ans if queries[r.qid].type == "conflict"]),
    }


def write_report(report: dict, out: str | Path) -> list[Path]:
    """report.md, report.json and PNG charts (accuracy and hallucination per method, the effect
    of redundancy, latency) in ``out``; returns the files written."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    names = list(report["methods"])
    written = []

    def bars(path: str, labels: list[str], groups: dict[str, list[float]], **axes) -> None:
        """One chart of side-by-side bars (two groups), values in [0, 1]."""
        fig, ax = plt.subplots(figsize=(8, 4))
        x = np.arange(len(labels))
        for off, (label, values) in zip((-0.2, 0.2), groups.items()):
            ax.bar(x + off, values, 0.4, label=label)
        ax.set_xticks(x, labels, rotation=20, ha="right")
        ax.set_ylim(0, 1)
        ax.set(**axes)
        ax.legend()
        save(fig, path)

    def save(fig, path: str) -> None:
        fig.tight_layout()
        fig.savefig(out / path, dpi=120)
        plt.close(fig)
        written.append(out / path)

    m = report["methods"]
    bars("accuracy.png", names, {k.replace("_", " "): [m[n][k] for n in names]
                                 for k in ("memory_accuracy", "hallucination_rate")},
         title=f"Answers ({report['generator']} generator, {report['questions']} questions)")
    pairs = [(n, n + "+redundancy") for n in names if n + "+redundancy" in m]
    if pairs:
        bars("redundancy.png", [a for a, _ in pairs],
             {"redundancy off": [m[a]["key_fact_recall"] for a, _ in pairs],
              "redundancy on": [m[b]["key_fact_recall"] for _, b in pairs]}, ylabel="key-fact recall")
    fig, ax = plt.subplots(figsize=(8, 4))
    for n in names:
        ms = [o["seconds"] * 1e3 for o in report.get("outcomes", []) if o["method"] == n]
        if ms:
            ax.hist(ms, bins=40, histtype="step", label=n)
    ax.set_xlabel("ms per question")
    ax.legend()
    save(fig, "latency.png")

    lines = [f"# Answer accuracy ({report['generator']} generator)", "",
             f"{report['questions']} questions: " + ", ".join(f"{n} {t}" for t, n in report["types"].items()), "",
             *([f"`+redundancy`: the prompt carries the {report['redundancy_mode']} redundancy block.", ""]
               if report.get("redundancy_mode") else []),
             "| method | " + " | ".join(METRICS) + " |", "|---|" + "---:|" * len(METRICS)]
    for n in names:
        lines.append(f"| {n} | " + " | ".join(f"{m[n][k]:.1f}" if k.endswith("_ms") else f"{m[n][k]:.3f}"
                                             for k in METRICS) + " |")
    lines += ["", "Answerable and unanswerable questions apart (- where there is none):", "",
              "| method | " + " | ".join(SPLIT_METRICS) + " |", "|---|" + "---:|" * len(SPLIT_METRICS)]
    for n in names:
        lines.append(f"| {n} | " + " | ".join("-" if m[n][k] is None else f"{m[n][k]:.3f}" for k in SPLIT_METRICS)
                     + " |")
    lines += ["", "Memory accuracy by question type:", "", "| method | " + " | ".join(report["types"]) + " |",
              "|---|" + "---:|" * len(report["types"])]
    for n in names:
        lines.append(f"| {n} | " + " | ".join(f"{report['methods'][n]['by_type'][t]:.3f}" for t in report["types"])
                     + " |")
    categories = sorted({c for n in names for c in m[n].get("by_category", {})})
    if categories:
        lines += ["", "By category of the question file: memory accuracy / refused / hallucinated:", "",
                  "| method | " + " | ".join(categories) + " |", "|---|" + "---:|" * len(categories)]
        for n in names:
            cells = [m[n]["by_category"].get(c) for c in categories]
            lines.append(f"| {n} | " + " | ".join("-" if x is None else
                                                   f"{x['accuracy']:.2f} / {x['refused']:.2f} / {x['hallucination']:.2f}"
                                                   for x in cells) + " |")
    if report.get("at_equal_refusal"):
        lines += ["", "At equal refusal: each refusing method at the threshold of its own score where it refuses at",
                  "least as many unanswerable questions as the other method does at its fitted threshold:", "",
                  "| method | against | unanswerable refused | answerable accuracy | the other's answerable accuracy |",
                  "|---|---|---:|---:|---:|"]
        for a, row in report["at_equal_refusal"].items():
            for b, x in row.items():
                lines.append(f"| {a} | {b} | {x['unanswerable_refused']:.3f} (against "
                             f"{x['against_unanswerable_refused']:.3f}) | {x['answerable_accuracy']:.3f} | "
                             f"{x['against_answerable_accuracy']:.3f} |")
    lines += ["", (__doc__ or "").split("Metrics, fractions in [0, 1]:")[1].strip() if __doc__ else "", "",
              "![accuracy](accuracy.png)", "![latency](latency.png)"]
    if pairs:
        lines.append("![redundancy](redundancy.png)")
    (out / "report.md").write_text("\n".join(lines) + "\n", encoding="utf-8")
    slim = {k: v for k, v in report.items() if k != "outcomes"}
    (out / "report.json").write_text(json.dumps(slim, indent=2), encoding="utf-8")
    (out / "outcomes.jsonl").write_text("".join(json.dumps(o) + "\n" for o in report.get("outcomes", [])),
                                        encoding="utf-8")
    return written + [out / "report.md", out / "report.json", out / "outcomes.jsonl"]
