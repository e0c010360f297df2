"""One question end to end: retrieve → allowlist → prompt → generate → verify.

The allowlist of the turn is built from what retrieval recalled; the generator
sees only the recalled units that are not superseded alternatives; the answer
it writes is verified against the same allowlist, and what the verifier
cannot confirm is weakened or dropped. Where the answer cites one of two
recalled units that disagree (``Hit.disagrees_with``: one slot, two values,
and nothing tells which holds), the sentences it drew from them give way to
a statement that the sources disagree, with each side's sentence and its own
citation, whatever the generator; ``Answer.disagreement`` names the sides. When retrieval is not confident the
answer is "not found", with the closest candidates, and no generator runs.

``declines`` is the one definition of an answer that declines to answer
(the evaluation's "refused"), whoever declined: retrieval, the generator or
the verifier.
"""
from __future__ import annotations

import re
import time
import uuid
from dataclasses import dataclass, field, replace

from asmr.decoding.markers import DEFAULT_MARKERS, cite, marker_pattern
from asmr.generate.base import Generation, Source
from asmr.redundancy.block import MODES, ParaphraseCache, redundancy_block
from asmr.retrieve import Result, Retriever, RetrieveConfig
from asmr.retrieve.conflicts import disagreeing_sentences
from asmr.text.cjk import CJK_CHAR
from asmr.text.corrections import read_correction
from asmr.text.sentences import sentence_ends, split_sentences
from asmr.text.turns import parse_turn
from asmr.verify.citations import parse_answer
from asmr.verify.allowlist import Allowlist, Conversation
from asmr.verify.verifier import DROPPED, DROPPED_CJK, Verification, Verifier

NOT_FOUND = "Not found in memory."
# The lead of an answer whose sources disagree; its own sentence, so that each side is verified alone.
DISAGREE = "The sources disagree."
DISAGREE_CJK = "资料说法不一。"

# A sentence that says the answer is not there, as the pipeline (NOT_FOUND), the verifier (DROPPED)
# and models (SmolLM2, chat endpoints) word it. Each pattern names the sources or the speaker as
# what lacks the answer, so that an answer stating an absence ("The policy does not cover
# contractors.", "Error 404 means the page was not found.") is not taken for a refusal.
_WHERE = (r"(?:the |any |these |my )?"
          r"(?:memory|sources?|context|documents?|(?:provided|given) (?:text|information))")
_DECLINING = re.compile(
    rf"^not found\W*$|\bnot found in {_WHERE}"
    rf"|\b(?:cannot|can't|could not|couldn't) be (?:confirmed|determined|answered)\b"
    rf"|\b(?:cannot|can't|could not|couldn't) be found in {_WHERE}"
    r"|\b(?:i|we) (?:do not|don't|cannot|can't|could not|couldn't|am unable to|are unable to) "
    r"(?:know|find|answer|tell|say|determine|confirm|have (?:any |enough )?information)\b"
    r"|\b(?:i'm|i am) (?:sorry|not sure|unable)\b"
    r"|\b(?:the|these|provided|given) (?:sources?|context|documents?|memory|text|information) "
    r"(?:do|does|did) ?(?:not|n't) (?:say|mention|state|specify|contain|provide|include|give|cover)\b"
    rf"|\bnot (?:mentioned|stated|specified|provided|given|available) in {_WHERE}"
    r"|\bthere (?:is|was|'s) no (?:information|answer|mention)\b|\b(?:i|we) (?:have|found) no information\b"
    r"|未找到|没有找到|找不到|无法确认|无法回答|无法确定|不知道|没有提到|未提及|没有相关信息",
    re.IGNORECASE)
_NOTICES = re.compile("|".join(re.escape(n) for n in (DROPPED, DROPPED_CJK)))


def declines(text: str) -> bool:
    """Whether an answer's text declines to answer: nothing is left once its citation markers and the
    verifier's "cannot be confirmed" notices are cut out, or every sentence left says the answer is
    not there (``NOT_FOUND``, "the sources do not mention ...", "I don't know", "未找到" ...)."""
    rest = _NOTICES.sub(" ", marker_pattern(DEFAULT_MARKERS).sub("", text)).strip()
    if not rest:
        return True
    cuts = [0, *sentence_ends(rest), len(rest)]
    sentences = [rest[a:b].strip() for a, b in zip(cuts, cuts[1:]) if rest[a:b].strip(" \t\n.!?。！？")]
    return all(_DECLINING.search(s) for s in sentences)


@dataclass(frozen=True)
class AnswerConfig:
    redundancy: str = "list"     # off | list | full
    verify: bool = True          # run the verifier (off: the raw generation is the answer)
    refuse: bool = True          # say "not found" below the retrieval confidence threshold
    max_sources: int = 6         # recalled units shown to the generator
    require_citation: bool = True
    redundancy_budget_tokens: int = 160  # the redundancy block's size, estimated tokens
    redundancy_max_facts: int = 6        # key facts listed in it, at most

    def __post_init__(self) -> None:
        if self.redundancy not in MODES:
            raise ValueError(f"redundancy {self.redundancy!r}: must be one of {', '.join(MODES)}")
        for name in ("max_sources", "redundancy_budget_tokens", "redundancy_max_facts"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"{name} must be an integer of at least 1, got {value!r}")


# A turn outside any conversation (``asmr ask``, one eval question) is turn 1 of a conversation of
# its own, so that each has its own audit id (``standalone-<hex>/1``), never a bare "1" shared by all.
STANDALONE = "standalone"


@dataclass
class Citation:
    number: int
    unit_id: str
    doc_id: str
    section: str
    text: str
    # The cited unit replaced an older version that said otherwise: {"unit_id", "text" (its sentence
    # that changed), "until" (the date this unit took effect)}; None when the unit has no earlier version.
    previous: dict | None = None
    # A recalled unit that said otherwise before this one (an older document, a statement of history,
    # an earlier turn of a conversation), kept out of the answer as the older side of the conflict:
    # {"unit_id", "text" (its sentence that gives the other value), "effective_at"}; else None.
    older: dict | None = None


@dataclass
class Answer:
    question: str
    text: str            # the verified answer, markers as written ([cite:ID])
    found: bool
    citations: list[Citation]
    retrieval: Result
    allowlist: Allowlist
    generation: Generation | None = None
    verification: Verification | None = None
    redundancy: str = ""
    timings: dict = field(default_factory=dict)
    # unit ids of the sides the answer cites as disagreeing (two per disagreement; empty when none)
    disagreement: tuple[str, ...] = ()

    @property
    def refused(self) -> bool:
        """Retrieval was not confident, or the answer's text declines (``declines``)."""
        return not self.found or declines(self.text)

    def numbered(self) -> str:
        """The answer with each marker replaced by its citation number, ``[1]``."""
        return _numbered(self.text, self.citations)

    def sentences(self) -> list[tuple[str, bool]]:
        """Each sentence of the answer, numbered as in ``numbered``, and whether the memory confirms
        it: a verified sentence that kept a citation, or a notice of the pipeline's own (a dropped
        part, the lead of a disagreement). An uncited or weakened sentence, and every sentence of an
        answer that was not verified, is unconfirmed: it must not be shown as the memory's word."""
        if not self.found:
            return [(self.text, True)]
        by_id = {c.unit_id: c.number for c in self.citations}
        out = []
        parsed = parse_answer(self.text)
        for s in parsed.sentences:
            cited = [c.unit_id for c in s.cited if c.unit_id in by_id]
            notice = s.text.strip() in (DROPPED, DROPPED_CJK, DISAGREE, DISAGREE_CJK)
            confirmed = self.verification is not None and (bool(cited) or notice)
            out.append((_numbered(parsed.text[s.start:s.end], self.citations).strip(), confirmed))
        return [(text, ok) for text, ok in out if text]

    def unconfirmed(self) -> list[str]:
        """The sentences of the answer the memory does not confirm (``sentences``)."""
        return [text for text, ok in self.sentences() if not ok]

    def to_dict(self) -> dict:
        return {"question": self.question, "answer": self.text, "answer_numbered": self.numbered(),
                "found": self.found, "refused": self.refused, "confidence": self.retrieval.confidence,
                "reason": self.retrieval.reason,
                "citations": [c.__dict__ for c in self.citations],
                "candidates": [h.unit_id for h in self.retrieval.hits] if not self.found else [],
                # why each unit came back: its score and its path from a seed (edge kinds and weights)
                "recall": [{"unit_id": h.unit_id, "score": h.score, "similarity": h.similarity, "hop": h.hop,
                            "seed": h.seed, "path": [{"node": p.node, "edge_kind": p.edge_kind,
                                                      "edge_weight": p.edge_weight} for p in h.path],
                            "alternative_to": h.alternative_to, "disagrees_with": h.disagrees_with}
                           for h in self.retrieval.hits],
                "disagreement": list(self.disagreement),
                # the answer split as a reader must see it: what the memory confirms, and what it does not
                "confirmed": " ".join(t for t, ok in self.sentences() if ok),
                "unconfirmed": self.unconfirmed(),
                "turn": self.allowlist.turn_id, "redundancy": self.redundancy,
                "verification": self.verification.to_dict() if self.verification else None,
                "generator": self.generation.backend if self.generation else None, "timings": self.timings}


class Answerer:
    """Answers questions from one memory snapshot with one generator."""

    def __init__(self, memory, generator, *, config: AnswerConfig | None = None,
                 retrieve_config: RetrieveConfig | None = None, embedder=None,
                 retriever: Retriever | None = None, verifier: Verifier | None = None) -> None:
        from asmr.embed.models import get_embedder
        self.memory = memory
        self.generator = generator
        self.config = config or AnswerConfig()
        embedder = embedder or get_embedder(memory.embed_model)
        self.retriever = retriever or Retriever(memory, embedder, retrieve_config)
        self.verifier = verifier or Verifier(memory, embedder=embedder, rewrite=getattr(generator, "rewrite", None))
        # Paraphrases cost a model call each: kept per unit id across questions.
        paraphrase = getattr(generator, "paraphrase", None)
        self.paraphrases = ParaphraseCache(paraphrase) if callable(paraphrase) else None

    def warm_up(self) -> None:
        """Load now what the first answer would load on its way (the embedder's model, the support
        model's), so that a caller can tell the time spent loading from the time spent answering."""
        self.retriever.embedder.embed(["warm up"])
        if self.config.verify:
            self.verifier.warm_up()

    def ask(self, question: str, conversation: Conversation | None = None) -> Answer:
        if not isinstance(question, str) or not question.strip():
            raise ValueError("question: must be a non-empty string")
        t0 = time.perf_counter()
        return self.answer(question, self.retriever.search(question), conversation, started=t0)

    def answer(self, question: str, result: Result, conversation: Conversation | None = None, *,
               started: float | None = None) -> Answer:
        """Answer from a given recall (ASMR's, or a baseline's ranked units)."""
        t0 = time.perf_counter() if started is None else started
        t_retrieve = time.perf_counter()
        # Without refusal (a baseline), the best candidates are answered from all the same.
        recalled = result if result.found or self.config.refuse else replace(result, found=True)
        allowlist = (conversation.new_turn(recalled) if conversation is not None
                     else Allowlist.from_result(recalled, turn=1,
                                                conversation=f"{STANDALONE}-{uuid.uuid4().hex[:12]}"))
        timings = {"retrieve_ms": (t_retrieve - t0) * 1e3}
        if not recalled.found or not allowlist.ids:
            timings["total_ms"] = (time.perf_counter() - t0) * 1e3
            return Answer(question, NOT_FOUND, False, [], result, allowlist, timings=timings)
        hits = [h for h in result.hits if h.unit_id in allowlist and not h.alternative_to]
        units = {u.id: u for u in self.memory.units_at_rows([h.row for h in hits])}
        # A heading states nothing (its text is in the section path of the units under it): no source slot.
        hits = [h for h in hits if h.unit_id in units and units[h.unit_id].kind != "heading"] or hits
        corrected = self._corrected(result.hits, units)
        sources = [Source(h.unit_id, units[h.unit_id].content, units[h.unit_id].doc_id,
                          " / ".join(units[h.unit_id].section_path), h.score, corrected.get(h.unit_id, ""))
                   for h in _with_partners(hits, self.config.max_sources) if h.unit_id in units]
        block = redundancy_block(question, sources, mode=self.config.redundancy,
                                 budget_tokens=self.config.redundancy_budget_tokens,
                                 max_facts=self.config.redundancy_max_facts, paraphrase=self.paraphrases)
        t_gen = time.perf_counter()
        generation = self.generator.generate(question, sources, redundancy=block,
                                             require_citation=self.config.require_citation)
        timings["generate_ms"] = (time.perf_counter() - t_gen) * 1e3
        verification = None
        text, sides = _state_disagreements(question, generation.text, hits, units,
                                           {s.id for s in sources})
        if self.config.verify:
            t_ver = time.perf_counter()
            verification = self.verifier.verify(text, allowlist)
            text = verification.text
            timings["verify_ms"] = (time.perf_counter() - t_ver) * 1e3
        citations = self._citations(text, units, result.hits)
        cited = {c.unit_id for c in citations}
        disagreement = tuple(u for a, b in sides if a in cited and b in cited for u in (a, b))
        timings["total_ms"] = (time.perf_counter() - t0) * 1e3
        return Answer(question, text, True, citations, result, allowlist, generation, verification, block,
                      timings, disagreement)

    def _corrected(self, recalled, units: dict) -> dict[str, str]:
        """By unit id, the sentence of the older unit that a recalled terse correction corrects (what
        "Sorry, I meant Friday" is about, for the generator to rank it by: ``Source.context``)."""
        out: dict[str, str] = {}
        for h in recalled:
            unit = units.get(h.alternative_to) if h.alternative_to else None
            turn = parse_turn(unit.content) if unit is not None else None
            if turn is None or h.alternative_to in out or read_correction(turn.body) is None:
                continue
            old = self.memory.unit(h.unit_id)
            said = disagreeing_sentences(old.content, unit.content) if old is not None else None
            if said:
                out[h.alternative_to] = said[0]
        return out

    def _citations(self, text: str, units: dict, recalled) -> list[Citation]:
        hits = {h.unit_id: h for h in recalled}
        older: dict = {}
        for h in recalled:  # the best-ranked of the units a cited one outdates
            if h.alternative_to:
                older.setdefault(h.alternative_to, h)
        out: list[Citation] = []
        seen: set[str] = set()
        for m in marker_pattern(DEFAULT_MARKERS).finditer(text):
            uid = next(g for g in m.groups() if g)
            if uid in seen:
                continue
            seen.add(uid)
            unit = units.get(uid) or self.memory.unit(uid)
            if unit is None:  # only reachable without verification: say so rather than invent
                out.append(Citation(len(out) + 1, uid, "", "", "(no such unit)"))
                continue
            out.append(Citation(len(out) + 1, uid, unit.doc_id, " / ".join(unit.section_path), unit.content,
                                self._previous(unit, hits.get(uid)), self._older(unit, older.get(uid))))
        return out

    def _older(self, unit, hit) -> dict | None:
        """What the recalled unit that lost a conflict to ``unit`` said (``Citation.older``)."""
        old = self.memory.unit(hit.unit_id) if hit is not None else None
        if old is None:
            return None
        said = disagreeing_sentences(old.content, unit.content)
        return {"unit_id": old.id, "text": " ".join((said[0] if said else old.content).split()),
                "effective_at": old.effective_at}

    def _previous(self, unit, hit) -> dict | None:
        """What the unit's previous version said that this one changed (``Citation.previous``)."""
        old = self.memory.unit(hit.previous_version) if hit is not None and hit.previous_version else None
        if old is None:
            return None
        now = {" ".join(x.split()) for x in split_sentences(unit.content)}
        changed = [x for x in split_sentences(old.content) if " ".join(x.split()) not in now]
        return {"unit_id": old.id, "text": " ".join((changed[0] if changed else old.content).split()),
                "until": unit.effective_at}


def _numbered(text: str, citations: list[Citation]) -> str:
    """``text`` with each marker replaced by its citation's number, ``[1]`` (an uncited id: nothing)."""
    by_id = {c.unit_id: c.number for c in citations}

    def number(m):
        uid = next(g for g in m.groups() if g)
        return f"[{by_id[uid]}]" if uid in by_id else ""
    return marker_pattern(DEFAULT_MARKERS).sub(number, text)


def _with_partners(hits: list, limit: int) -> list:
    """The first ``limit`` hits, each that disagrees with a recalled unit followed by it (a pair is
    never cut in two: the answer must be able to cite both sides)."""
    by_id = {h.unit_id: h for h in hits}
    out, seen = [], set()
    for h in hits:
        if len(out) >= limit:
            break
        for x in (h, by_id.get(h.disagrees_with)):
            if x is not None and x.unit_id not in seen:
                seen.add(x.unit_id)
                out.append(x)
    return out


def _state_disagreements(question: str, text: str, hits: list, units: dict,
                         shown: set[str]) -> tuple[str, list[tuple[str, str]]]:
    """``text`` with the sentences that cite one side of a disagreeing pair of sources replaced by
    the lead and each side's sentence with its citation; and the pairs so stated."""
    pattern = marker_pattern(DEFAULT_MARKERS)
    cited = {next(g for g in m.groups() if g) for m in pattern.finditer(text)}
    pairs, statements, done = [], [], set()
    for h in hits:  # in rank order: the better-ranked side is stated first
        other = h.disagrees_with
        if h.unit_id in done or h.unit_id not in shown or other not in shown or not {h.unit_id, other} & cited:
            continue
        done.update((h.unit_id, other))
        said = disagreeing_sentences(units[h.unit_id].content, units[other].content)
        if said is None:
            continue
        pairs.append((h.unit_id, other))
        statements.append(f"{cite(said[0], h.unit_id)} {cite(said[1], other)}")
    if not pairs:
        return text, []
    sides = {u for p in pairs for u in p}
    # What a marker cites runs from the previous marker to it (a quote of two sentences carries one
    # marker, after the second), with the punctuation that closes it.
    rest, start = [], 0
    for m in pattern.finditer(text):
        end = m.end()
        while end < len(text) and text[end] in ".!?。！？":
            end += 1
        if next(g for g in m.groups() if g) not in sides and text[start:end].strip():
            rest.append(text[start:end].strip())
        start = end
    if text[start:].strip():
        rest.append(text[start:].strip())
    lead = DISAGREE_CJK if CJK_CHAR.search(question) else DISAGREE
    return " ".join([lead, *statements, *rest]), pairs
