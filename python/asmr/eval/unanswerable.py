"""Questions made unanswerable three ways, over a corpus in the format of ../shared/data.

A refusal signal that detects one construction only is no refusal signal, so the evaluation
builds each and reports them apart (``MODES``):

- ``removed``: a question's gold passages are left out of the memory; the question is unchanged.
  Everything the memory held about its entities goes with them.
- ``sentence``: the gold passages stay, but each of their sentences that states one of the
  question's accepted answers (as whole words, ``asmr.eval.answers.states``) is cut out; the other
  sentences stay word for word, so the entity and its other facts are still in memory. Only
  questions whose answer is found that way are chosen: a gold passage states it, and no other
  passage of the corpus does (else the memory would still hold it); a yes/no answer is stated by
  no sentence, and a passage with nothing left but its answer would be removed, not kept, so
  such questions are not chosen.
- ``swap``: the memory is unchanged; the question's name of one of its gold passages (the
  passage's title, without a trailing "(...)" qualifier) is replaced by the title of another
  passage of the corpus that is not gold for it and does not state the accepted answer. The
  question then asks a real entity about an attribute that another entity has. Only questions
  that spell out a gold title are chosen.

Each picks ``round(fraction * answerable questions)`` questions (at least one, at most as many as
can be built) with ``numpy.random.default_rng(seed)``: deterministic for a seed. Questions that
are unanswerable already are never picked.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from typing import Iterable, Iterator

import numpy as np

from ..text.sentences import sentence_ends
from .answers import find_whole, states
from .retrieval import Query, split_unanswerable

MODES = ("removed", "sentence", "swap")
_YES_NO = {"yes", "no"}
_QUALIFIER = re.compile(r"\s*[(（][^()（）]*[)）]\s*$")  # "Mercury (planet)": the name is "Mercury"


@dataclass(frozen=True)
class Unanswerable:
    """One construction: the questions made unanswerable and what changed to make them so."""
    mode: str
    qids: frozenset[str]               # the questions made unanswerable
    queries: tuple[Query, ...]         # every question, the chosen ones rewritten where the mode rewrites them
    removed: frozenset[str] = frozenset()                  # documents left out of the memory
    rewritten: dict[str, str] = field(default_factory=dict)  # doc_id: its text without the answering sentences

    @property
    def changes_memory(self) -> bool:
        return bool(self.removed or self.rewritten)

    def documents(self, docs: Iterable) -> Iterator:
        """The corpus's documents as this construction's memory holds them."""
        for d in docs:
            if d.doc_id in self.removed:
                continue
            yield replace(d, text=self.rewritten[d.doc_id]) if d.doc_id in self.rewritten else d


def make(mode: str, queries: list[Query], docs: list, fraction: float, seed: int = 0) -> Unanswerable:
    """The ``mode`` construction (``MODES``) over ``queries`` and the corpus ``docs``; a ValueError
    says why when it cannot be built."""
    if mode == "removed":
        qids, removed = split_unanswerable(queries, fraction, seed)
        return Unanswerable(mode, frozenset(qids), tuple(queries), removed=frozenset(removed))
    if mode == "sentence":
        return _sentence(queries, docs, fraction, seed)
    if mode == "swap":
        return _swap(queries, docs, fraction, seed)
    raise ValueError(f"--unanswerable-mode {mode!r}: must be one of {', '.join(MODES)}")


def _pick(eligible: list, queries: list[Query], fraction: float, rng, mode: str) -> list:
    """``fraction`` of the answerable questions, drawn from those ``mode`` can build."""
    if not 0.0 < fraction < 1.0:
        raise ValueError(f"--unanswerable {fraction}: must be between 0 and 1")
    if not eligible:
        raise ValueError(f"--unanswerable-mode {mode}: no question can be made unanswerable this way "
                         f"({_WHY[mode]})")
    n = min(len(eligible), max(1, round(fraction * sum(q.answerable for q in queries))))
    return [eligible[i] for i in sorted(rng.choice(len(eligible), size=n, replace=False))]


_WHY = {"sentence": "none has an accepted answer that a sentence of its gold passages states and no other "
                    "passage does",
        "swap": "none spells out the title of one of its gold passages"}


def cut_sentences(text: str, answers: tuple[str, ...]) -> str | None:
    """``text`` without its sentences that state one of ``answers``; None when none does."""
    ends = sentence_ends(text)
    if not ends or ends[-1] != len(text):
        ends.append(len(text))
    kept, cut, start = [], False, 0
    for end in ends:
        if states(text[start:end], answers):
            cut = True
        else:
            kept.append(text[start:end])
        start = end
    return "".join(kept).strip() if cut else None


def _sentence(queries: list[Query], docs: list, fraction: float, seed: int) -> Unanswerable:
    text = {d.doc_id: d.text for d in docs}
    lowered = {d.doc_id: d.text.lower() for d in docs}  # a cheap test before the whole-word one

    def stated_elsewhere(q: Query) -> bool:
        forms = [a.lower() for a in q.answers if a.strip()]
        return any(doc not in q.gold and any(f in low for f in forms) and states(text[doc], q.answers)
                   for doc, low in lowered.items())

    def cuts(q: Query, texts: dict[str, str]) -> dict[str, str] | None:
        """The gold passages of ``q`` without its answering sentences; None if one would be left empty."""
        out = {d: c for d in q.gold if d in texts and (c := cut_sentences(texts[d], q.answers)) is not None}
        return None if any(not c for c in out.values()) else out

    eligible = [q for q in queries if q.answerable and q.answers and {a.strip().lower() for a in q.answers} - _YES_NO
                and cuts(q, text) and not stated_elsewhere(q)]
    chosen = _pick(eligible, queries, fraction, np.random.default_rng(seed), "sentence")
    rewritten: dict[str, str] = {}
    qids = set()
    for q in chosen:  # a passage gold for several chosen questions loses each one's sentences
        cut = cuts(q, {**text, **rewritten})
        if cut is not None:  # None: the others' cuts left too little of a passage for this one
            rewritten.update(cut)
            qids.add(q.qid)
    return Unanswerable("sentence", frozenset(qids), tuple(queries), rewritten=rewritten)


def _name(title: str) -> str:
    return _QUALIFIER.sub("", title).strip()


def _spelled(name: str, question: str) -> int:
    """Where the question spells ``name`` out as whole words (CJK: anywhere); -1 if it does not."""
    return find_whole(name, question) if name else -1


def _swap(queries: list[Query], docs: list, fraction: float, seed: int) -> Unanswerable:
    rng = np.random.default_rng(seed)
    names = {d.doc_id: _name(d.title) for d in docs}

    def gold_name(q: Query) -> str | None:  # the longest gold title the question spells out
        spelled = [names[d] for d in q.gold if d in names and _spelled(names[d], q.question) >= 0]
        return max(spelled, key=len) if spelled else None

    eligible = [q for q in queries if q.answerable and gold_name(q)]
    chosen = _pick(eligible, queries, fraction, rng, "swap")
    others = [d for d in docs if names[d.doc_id]]
    rewritten: dict[str, Query] = {}
    for q in chosen:
        old = gold_name(q)
        gold_names = {names[d] for d in q.gold if d in names}
        for i in rng.permutation(len(others)):
            d = others[int(i)]
            new = names[d.doc_id]
            if (d.doc_id not in q.gold and new not in gold_names and _spelled(new, q.question) < 0
                    and not (q.answers and states(d.text, q.answers))):
                at = _spelled(old, q.question)
                rewritten[q.qid] = replace(q, question=q.question[:at] + new + q.question[at + len(old):],
                                           gold=(), answerable=False)
                break
    if not rewritten:
        raise ValueError("--unanswerable-mode swap: no other passage's title fits any chosen question")
    return Unanswerable("swap", frozenset(rewritten), tuple(rewritten.get(q.qid, q) for q in queries))
