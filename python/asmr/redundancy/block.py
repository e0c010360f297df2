"""The redundancy block: the key facts of the allowed units, restated after the sources.

A small model skips facts that sit in the middle of a long context ("token
erasure"). The block repeats the facts that matter for this question (the
numbers, dates, versions, codes and names of the best sentences) in a short
list, each with its unit's marker, within a token budget. ``full`` adds a
hypothetical question-and-answer pair built from the best fact, and a
paraphrase when a paraphraser is given.

Sentences are ranked by TF-IDF cosine to the question over the sentences of
this turn's sources; only sentences holding at least one key fact (entities
alone count less) are candidates.
"""
from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass
from functools import lru_cache
from typing import Callable, Sequence

from asmr.decoding.markers import CITE, Marker
from asmr.generate.base import Source
from asmr.generate.extractive import cite, content_words, split_sentences

from .facts import Fact, key_facts

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


def approx_tokens(text: str) -> int:
    """A tokenizer-free estimate (about 4 characters a token; a CJK character is one)."""
    cjk = sum(1 for c in text if "\u3400" <= c <= "\u9fff")
    return cjk + (len(text) - cjk + 3) // 4


def redundancy_block(question: str, sources: Sequence[Source], *, mode: str = "list",
                     budget_tokens: int = 160, max_facts: int = 6, marker: Marker = CITE,
                     paraphrase: Callable[[str], str] | None = None) -> str:
    """The block placed after the sources ("" when off or when no source holds a key fact)."""
    if mode not in MODES:
        raise ValueError(f"redundancy mode {mode!r}: must be one of {', '.join(MODES)}")
    if budget_tokens < 1:
        raise ValueError(f"budget_tokens must be positive, got {budget_tokens}")
    if mode == "off":
        return ""
    facts = select_key_facts(question, sources, max_facts=max_facts)
    if not facts:
        return ""
    lines = ["Key facts:"]
    used = approx_tokens(lines[0])
    for k in facts:
        line = f"- {', '.join(f.text for f in k.facts)}: {cite(k.sentence, k.unit_id, marker)}"
        cost = approx_tokens(line)
        if used + cost > budget_tokens and len(lines) > 1:
            break
        lines.append(line)
        used += cost
    if mode == "full":
        best = facts[0]
        extra = [f"Example question: {question}", f"Example answer: {cite(best.sentence, best.unit_id, marker)}"]
        if paraphrase is not None:
            extra.append(f"In other words: {cite(paraphrase(best.sentence), best.unit_id, marker)}")
        for line in extra:
            if used + approx_tokens(line) > budget_tokens:
                break
            lines.append(line)
            used += approx_tokens(line)
    return "\n".join(lines)
