"""The redundancy block: the key facts of the allowed units, restated after the sources.

A small model skips facts that sit in the middle of a long context ("token
erasure"). The block repeats the facts that matter for this question (the
numbers, dates, versions, codes and names of the best sentences) in a short
list, each with its unit's marker, within a token budget. ``full`` adds a
hypothetical question-and-answer pair (a question made from a fact's sentence
with the fact blanked out, answered by the fact and its marker) and, when the
generator can paraphrase, one paraphrase of the best fact's sentence that
states the same facts; both only where the budget leaves room.

Sentences are ranked by TF-IDF cosine to the question over the sentences of
this turn's sources; only sentences holding at least one key fact (entities
alone count less) are candidates.
"""
from __future__ import annotations

import math
import re
import threading
from collections import Counter, OrderedDict
from dataclasses import dataclass
from functools import lru_cache
from typing import Callable, Sequence

from asmr.decoding.markers import CITE, Marker, cite
from asmr.generate.base import Source
from asmr.text.sentences import SENTENCE_END, split_sentences
from asmr.text.words import content_words

from ..text.cjk import CJK_CHAR
from ..text.facts import Fact, key_facts, missing_facts

MODES = ("off", "list", "full")
# Facts other than bare names weigh more: they are what answers get wrong.
_KIND_WEIGHT = {"number": 1.0, "date": 1.0, "version": 1.0, "code": 1.0, "entity": 0.3}


@dataclass(frozen=True)
class KeyFact:
    unit_id: str
    sentence: str
    facts: tuple[Fact, ...]
    score: float


@lru_cache(maxsize=4096)
def _unit_sentences(unit_id: str, text: str) -> tuple[tuple[str, tuple[Fact, ...]], ...]:
    """Sentences of a unit with their facts; cached by unit id (and text, which an id fixes)."""
    return tuple((s, tuple(key_facts(s))) for s in split_sentences(text))


def select_key_facts(question: str, sources: Sequence[Source], *, max_facts: int = 6) -> list[KeyFact]:
    cands = [(src.id, s, facts) for src in sources for s, facts in _unit_sentences(src.id, src.text) if facts]
    if not cands:
        return []
    docs = [Counter(content_words(s)) for _, s, _ in cands]
    df = Counter(w for d in docs for w in d)
    n = len(docs)
    idf = {w: math.log((1 + n) / (1 + c)) + 1.0 for w, c in df.items()}
    q = {w: idf.get(w, math.log(1 + n) + 1.0) for w in content_words(question)}
    qn = math.sqrt(sum(v * v for v in q.values())) or 1.0
    ranked = []
    for (uid, s, facts), d in zip(cands, docs):
        vec = {w: c * idf[w] for w, c in d.items()}
        dn = math.sqrt(sum(v * v for v in vec.values())) or 1.0
        cos = sum(q[w] * vec[w] for w in q.keys() & vec.keys()) / (qn * dn)
        weight = max(_KIND_WEIGHT.get(f.kind, 0.5) for f in facts)
        ranked.append(KeyFact(uid, s, facts, cos * (0.5 + 0.5 * weight)))
    ranked.sort(key=lambda k: -k.score)
    seen: set[str] = set()
    out = []
    for k in ranked:
        if k.score <= 0 or k.sentence in seen:
            continue
        seen.add(k.sentence)
        out.append(k)
        if len(out) == max_facts:
            break
    return out


_NUMBER_LEAD = re.compile(r"^(?P<currency>[$€£¥￥])?\s*[0-9][0-9.,]*\s*")
_MONEY_UNITS = frozenset("dollar dollars usd eur euro euros rmb yuan yen 元".split())
_VERSION_WORD = re.compile(r"(?:\b(?:version|release|ver\.?)\s*|\bv)$", re.IGNORECASE)


def _blank_order(fact: Fact) -> int:
    """Numbers with units, dates, versions and codes are blanked first (they are what answers get
    wrong), then bare numbers ("Limit 3"), then names."""
    if fact.kind == "entity":
        return 2
    return 1 if fact.kind == "number" and fact.text.strip().replace(",", "").replace(".", "").isdigit() else 0


_TIME_NORMS = frozenset("s min h day week month year decade century duration".split())
_MONEY_NORMS = frozenset("usd eur gbp cny yen".split())


def _asks_for_words(fact: Fact, cjk: bool) -> str:
    """The question words for a number written in words, from its norm ("every 1 day": how often)."""
    unit = fact.norm.rpartition(" ")[2]
    if fact.norm.startswith("every "):
        return "多久一次" if cjk else "how often"
    if unit in _TIME_NORMS:
        return "多久" if cjk else "how long"
    if cjk:
        return "多少"
    if unit in _MONEY_NORMS:
        return "how much"
    return "what percentage" if unit == "%" else f"how many {fact.text.split()[-1]}"


def _asks_for(fact: Fact, cjk: bool, after: str) -> str:
    """The question words that stand in for ``fact``: "how many minutes", "what year", "哪个版本"."""
    if fact.kind == "number":
        lead = _NUMBER_LEAD.match(fact.text)
        if lead is None:  # written in words: "fourteen days", "daily", "forever", "five percent", "三十天"
            return _asks_for_words(fact, cjk)
        unit = fact.text[lead.end():].strip()
        if cjk:
            return "多少" + unit
        if (lead and lead.group("currency")) or unit.lower() in _MONEY_UNITS:
            return "how much"
        if unit in ("%", "percent", "per cent"):
            return "what percentage"
        if unit:
            return f"how many {unit}"
        # "12 regions" asks "how many regions"; "port 9090" asks "what number"
        return "how many" if re.match(r"\s+[A-Za-z]+s\b", after) else "what number"
    if fact.kind == "date":
        precision = fact.norm.count("-") - fact.norm.startswith("--")  # "--03": a month of no stated year
        if cjk:
            return ("哪一年", "哪个月", "哪一天")[min(precision, 2)]
        return ("what year", "what month", "what date")[min(precision, 2)]
    if fact.kind == "version":
        return "哪个版本" if cjk else "which version"
    if fact.kind == "code":
        return "哪个代码" if cjk else "which code"
    return "什么" if cjk else "what"


def _standalone(sentence: str, start: int, end: int) -> bool:
    """Whether ``sentence[start:end]`` is a whole token: "02" of "02:00" and "5" of "2.5" are not."""
    before = sentence[start - 1] if start else " "
    after = sentence[end] if end < len(sentence) else " "
    after2 = sentence[end + 1] if end + 1 < len(sentence) else " "
    if (before.isalnum() and not CJK_CHAR.match(before)) or before in ":.,":
        return False
    return not ((after.isalnum() and not CJK_CHAR.match(after)) or after == ":"
                or (after in ".," and after2.isdigit()))


def _occurrences(text: str, part: str):
    start = text.find(part) if part else -1
    while start >= 0:
        yield start
        start = text.find(part, start + 1)


def hypothetical_question(sentence: str, facts: Sequence[Fact]) -> tuple[str, Fact] | None:
    """A question the sentence answers, made by putting question words in place of one of its facts
    ("Rollbacks must finish within 15 minutes." → "Rollbacks must finish within how many minutes?"),
    with the fact it asks for; None when no fact stands alone in the sentence."""
    cjk = bool(CJK_CHAR.search(sentence))
    for fact in sorted(facts, key=_blank_order):
        # the first place the fact stands alone: "0 GB" is also inside "100 GB"
        start = next((i for i in _occurrences(sentence, fact.text)
                      if _standalone(sentence, i, i + len(fact.text))), -1)
        if start < 0:
            continue
        end = start + len(fact.text)
        if fact.kind == "version":  # "Version 2.4.1" → "which version", not "Version which version"
            word = _VERSION_WORD.search(sentence, 0, start)
            start = word.start() if word else start
        body = sentence[:start] + _asks_for(fact, cjk, sentence[end:]) + sentence[end:]
        body = body.rstrip().rstrip(SENTENCE_END).rstrip()
        if not cjk and start == 0:
            body = body[:1].upper() + body[1:]
        return body + ("？" if cjk else "?"), fact
    return None


class ParaphraseCache:
    """A generator's paraphrases of key-fact sentences, kept per (unit id, sentence).

    A unit id fixes its text, so a paraphrase stays right as long as the id exists;
    a paraphrase costs a model call (seconds on a CPU). "None" (no paraphrase) is kept too.
    """

    def __init__(self, paraphrase: Callable[[str], str | None], *, size: int = 1024) -> None:
        if size < 1:
            raise ValueError(f"size must be at least 1, got {size}")
        self._paraphrase = paraphrase
        self._size = size
        self._items: OrderedDict[tuple[str, str], str | None] = OrderedDict()
        self._lock = threading.Lock()  # a server shares one Answerer between threads

    def __call__(self, unit_id: str, sentence: str) -> str | None:
        key = (unit_id, sentence)
        with self._lock:
            if key in self._items:
                self._items.move_to_end(key)
                return self._items[key]
        text = self._paraphrase(sentence)  # outside the lock: a model call
        with self._lock:
            self._items[key] = text
            while len(self._items) > self._size:
                self._items.popitem(last=False)
        return text


def _states_the_same_facts(paraphrase: str, sentence: str) -> bool:
    """The paraphrase keeps every number, date, version and code of the sentence and adds none
    (names may be reworded: the support model weighs them, not this check)."""
    def hard(facts: list[Fact]) -> list[Fact]:
        return [f for f in facts if f.kind != "entity"]
    return not hard(missing_facts(sentence, paraphrase)) and not hard(missing_facts(paraphrase, sentence))


def approx_tokens(text: str) -> int:
    """A tokenizer-free estimate (about 4 characters a token; a CJK character is one)."""
    cjk = sum(1 for c in text if "\u3400" <= c <= "\u9fff")
    return cjk + (len(text) - cjk + 3) // 4


def redundancy_block(question: str, sources: Sequence[Source], *, mode: str = "list",
                     budget_tokens: int = 160, max_facts: int = 6, marker: Marker = CITE,
                     paraphrase: Callable[[str, str], str | None] | None = None) -> str:
    """The block placed after the sources ("" when off or when no source holds a key fact).

    ``paraphrase(unit_id, sentence)`` (``full`` only) restates a sentence, or returns None; a
    ``ParaphraseCache`` around a generator's ``paraphrase`` is one. The first fact is always
    listed; every other line only while the block stays within ``budget_tokens``.
    """
    if mode not in MODES:
        raise ValueError(f"redundancy mode {mode!r}: must be one of {', '.join(MODES)}")
    if budget_tokens < 1:
        raise ValueError(f"budget_tokens must be positive, got {budget_tokens}")
    if max_facts < 1:
        raise ValueError(f"max_facts must be at least 1, got {max_facts}")
    if mode == "off":
        return ""
    facts = select_key_facts(question, sources, max_facts=max_facts)
    if not facts:
        return ""
    extra: list[list[str]] = []  # groups of lines that go in together or not at all
    if mode == "full":
        for k in facts:
            asked = hypothetical_question(k.sentence, k.facts)
            if asked is not None:
                extra.append([f"Example question: {asked[0]}",
                              f"Example answer: {cite(asked[1].text, k.unit_id, marker)}"])
                break
        best = facts[0]
        restated = paraphrase(best.unit_id, best.sentence) if paraphrase is not None else None
        restated = " ".join(restated.split()) if restated else ""
        if restated and restated != best.sentence and _states_the_same_facts(restated, best.sentence):
            extra.append([f"In other words: {cite(restated, best.unit_id, marker)}"])
    # In full mode the pair and the paraphrase are kept room for: more facts come after them.
    reserved = sum(approx_tokens(line) for group in extra for line in group)
    lines = ["Key facts:"]
    used = approx_tokens(lines[0])
    for k in facts:
        line = f"- {', '.join(f.text for f in k.facts)}: {cite(k.sentence, k.unit_id, marker)}"
        cost = approx_tokens(line)
        if used + cost + reserved > budget_tokens and len(lines) > 1:
            break
        lines.append(line)
        used += cost
    for group in extra:
        cost = sum(approx_tokens(line) for line in group)
        if used + cost <= budget_tokens:
            lines += group
            used += cost
    return "\n".join(lines)
