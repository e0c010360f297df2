"""The extractive generator: answers with the allowed units' own sentences, each cited.

No model writes anything, so nothing can be invented: every sentence of the
answer is a sentence of a source, followed by that source's marker. Sentences
are ranked by cosine to the question (the memory's embedder) plus the share
of the question's content words they contain; the best one is always taken,
the next ones only when they score near it. Questions (an FAQ's headings) and
whole tables (their rows are units of their own) are never quoted.
Deterministic.
"""
from __future__ import annotations

import re
import time
from typing import Sequence

import numpy as np

from asmr.decoding.markers import CITE, Marker
from asmr.units.sentences import sentence_ends, trim

from .base import Generation, Source, check_sources

_WORD = re.compile(r"[0-9A-Za-z][0-9A-Za-z_.\-]*|[\u3400-\u9fff]")
_STOP = frozenset("""a an the of to in on at for by with from and or is are was were be been what which who whom
whose when where why how does do did many much is it its this that these those there their as into than
please tell me about""".split())
_END = ".!?。！？"


def split_sentences(text: str) -> list[str]:
    """The sentences of a unit's text; a table row (header line + row line) stays one sentence."""
    flat = text.replace("\r\n", "\n")
    lines = [ln for ln in flat.split("\n") if ln.strip()]
    if len(lines) >= 2 and all("|" in ln for ln in lines):
        if len(lines) > 2:  # a whole table: its rows are units of their own, each read below
            return []
        cells = [[c.strip() for c in ln.strip().strip("|").split("|")] for ln in lines]
        return ["; ".join(f"{h}: {v}" if h else v for h, v in zip(*cells) if v)]
    out, start = [], 0
    for end in sentence_ends(flat) + [len(flat)]:
        piece = trim(flat, start, end)
        if piece and not piece[2].endswith(("?", "？")):  # a question (FAQ heading) answers nothing
            out.append(" ".join(piece[2].split()))
        start = end
    return out


def _stem(word: str) -> str:
    """Plural and third-person "s" off, so that "rollback" meets "rollbacks"."""
    return word[:-1] if len(word) > 3 and word.endswith("s") and not word.endswith("ss") else word


def content_words(text: str) -> set[str]:
    return {_stem(w.lower().rstrip(".")) for w in _WORD.findall(text)} - _STOP


def cite(sentence: str, uid: str, marker: Marker = CITE) -> str:
    """``sentence`` with the marker before its final punctuation: "Text [cite:ID]."."""
    body = sentence.rstrip()
    end = ""
    while body and body[-1] in _END:
        end = body[-1] + end
        body = body[:-1]
    return f"{body} {marker.spell(uid)}{end or '.'}"


class ExtractiveGenerator:
    name = "extractive"

    def __init__(self, embedder=None, *, max_sentences: int = 3, min_score: float = 0.25,
                 relative_score: float = 0.8, lexical_weight: float = 0.5) -> None:
        if max_sentences < 1:
            raise ValueError(f"max_sentences must be at least 1, got {max_sentences}")
        if embedder is None:
            from asmr.embed.models import get_embedder
            embedder = get_embedder()
        self.embedder = embedder
        self.max_sentences = max_sentences
        self.min_score = min_score
        self.relative_score = relative_score
        self.lexical_weight = lexical_weight

    def _ranked(self, question: str, sources: Sequence[Source]) -> list[tuple[float, int, str]]:
        cands = [(i, s) for i, src in enumerate(sources) for s in split_sentences(src.text)]
        if not cands:
            return []
        vecs = self.embedder.embed([question] + [s for _, s in cands])
        cos = vecs[1:] @ vecs[0]
        q_words = content_words(question)
        ranked = []
        for (i, s), c in zip(cands, np.asarray(cos, dtype=np.float64)):
            overlap = len(q_words & content_words(s)) / len(q_words) if q_words else 0.0
            ranked.append((float(c) + self.lexical_weight * overlap, i, s))
        # ties go to the better-ranked source, then to the earlier sentence: deterministic
        return sorted(ranked, key=lambda r: -r[0])

    def generate(self, question: str, sources: Sequence[Source], *, redundancy: str = "",
                 marker: Marker = CITE, require_citation: bool = True) -> Generation:
        t0 = time.perf_counter()
        sources = check_sources(sources)
        ranked = self._ranked(question, sources)
        chosen, seen = [], set()
        for score, i, s in ranked:
            # After the best sentence, only near-equals join it: a second fact, not filler.
            if len(chosen) == self.max_sentences or (chosen and (
                    score < self.min_score or score < self.relative_score * ranked[0][0])):
                break
            if s.lower() in seen:
                continue
            seen.add(s.lower())
            chosen.append(cite(s, sources[i].id, marker))
        return Generation(" ".join(chosen), self.name, time.perf_counter() - t0,
                          info={"candidates": len(ranked), "sentences": len(chosen)})

    def rewrite(self, sentence: str, unit_text: str) -> str:
        """The unit's own sentence closest to ``sentence`` (the verifier puts the marker back)."""
        ranked = self._ranked(sentence, [Source("unit", unit_text)])
        return ranked[0][2] if ranked else ""
