"""An answer taken apart into sentences and the citation markers each one carries.

Markers are found first (complete, malformed, or hidden in quoted or copied
source text); the text is then split into sentences with every marker blanked
out (same length, so offsets stay those of the answer). A marker inside a
sentence belongs to it; a marker between sentences belongs to the sentence
before it, since models write both "… 8080 [cite:A]." and "… 8080. [cite:A]"
(and one at the very start of the answer belongs to the first sentence).
Blocks are split as well (paragraphs, and lines that open a list item, heading,
table row or quote), so every item of a list is its own sentence; a single line
break inside a paragraph is a wrapped line.

Malformed markers — an opener that is never closed (``[cite:`` at the end of a
truncated answer, ``[cite:memo://kb`` followed by a space), an empty or blank
id (``[cite:]``, ``[cite: A]``), an id holding another marker's text or a lone
surrogate — and a proper prefix of an opener at the very end of the answer
(``…[ci``) are reported so that they are never shown. An unclosed marker ends
at the first blank, line end or next opener, so it never swallows the text
after it. The closer is looked for up to ``MAX_ID_CHARS`` past the opener: the
decoder spells no longer id.

Hidden markers. A marker is the model's citation only if it stands in the
model's own words. One inside a quotation (between paired “ ”, 「 」, 『 』,
« », or two ``"`` or two backticks on the same line) or whose exact text occurs
in the content of a unit the answer draws on (``sources``: the model copied a
unit that itself contains a marker) is source text: it cites nothing, and the
verifier removes it (still asking the unit it names, which can drop the
sentence). Getting this wrong in the safe direction (a real citation that a
source also happens to contain) costs one marker, never a false citation.
"""
from __future__ import annotations

import re
from bisect import bisect_right
from dataclasses import dataclass, replace
from functools import lru_cache
from typing import Iterable, Sequence

from ..decoding.markers import DEFAULT_MARKERS, LONE_SURROGATE, MAX_ID_CHARS, Marker, check_markers, id_screen
from ..text.sentences import sentence_ends

_PAIRED_QUOTES = {"“": "”", "「": "」", "『": "』", "«": "»"}
_LINE_QUOTES = ('"', "`")
_BLOCK_START = re.compile(r"[ \t]*(?:[-*+•][ \t]|\d+[.)][ \t]|#|\||>)")
_BLANK_LINE = re.compile(r"[ \t]*(?:\n|$)")
# A removed marker takes the space before it along when punctuation or the end follows:
# "8080 [cite:A]." -> "8080.", not "8080 .".
_TIGHT_AFTER = ".,;:!?)]}»”’\"'。，、；：！？）】」』"


@dataclass(frozen=True)
class CitationMarker:
    """A complete marker. ``hidden`` is "" for the model's own citation, else "quoted" or "copied"."""

    unit_id: str
    marker: Marker
    start: int
    end: int
    hidden: str = ""

    def to_dict(self) -> dict:
        return {"id": self.unit_id, "marker": self.marker.spell(self.unit_id), "span": [self.start, self.end],
                "hidden": self.hidden}


@dataclass(frozen=True)
class Malformed:
    """A marker that does not parse; ``reason`` says how."""

    start: int
    end: int
    text: str
    reason: str  # "truncated", "unclosed", "empty id", "blank in id", "marker text in id", "surrogate in id"

    def to_dict(self) -> dict:
        return {"text": self.text, "span": [self.start, self.end], "reason": self.reason}


@dataclass(frozen=True)
class Sentence:
    """A sentence's span in the answer (markers that follow it included) and its text without markers."""

    start: int
    end: int
    text: str
    citations: tuple[CitationMarker, ...]
    malformed: tuple[Malformed, ...]

    @property
    def cited(self) -> tuple[CitationMarker, ...]:
        """The model's own citations (hidden markers left out)."""
        return tuple(c for c in self.citations if not c.hidden)


@dataclass(frozen=True)
class ParsedAnswer:
    text: str
    sentences: tuple[Sentence, ...]

    @property
    def citations(self) -> tuple[CitationMarker, ...]:
        return tuple(c for s in self.sentences for c in s.citations)

    @property
    def malformed(self) -> tuple[Malformed, ...]:
        return tuple(m for s in self.sentences for m in s.malformed)

    def copied_from(self, sources: Iterable[str]) -> "ParsedAnswer":
        """The same answer with every citation whose marker text occurs in one of ``sources`` hidden."""
        cites = [c for c in self.citations if not c.hidden]
        openers = {c.marker.opener for c in cites}
        # A source can hold a marker only if it holds its opener: most hold none.
        sources = [s for s in sources if s and any(o in s for o in openers)]
        copied = {c for c in cites if any(self.text[c.start:c.end] in s for s in sources)}
        if not copied:
            return self
        return ParsedAnswer(self.text, tuple(
            replace(s, citations=tuple(replace(c, hidden="copied") if c in copied else c for c in s.citations))
            for s in self.sentences))


_BLANK = re.compile(r"\s")


def _id_problem(uid: str, markers: tuple[Marker, ...]) -> str:
    if uid and id_screen(markers).search(uid) is None:
        return ""  # no blank, surrogate or first character of a marker: none of the reasons below
    if not uid.strip():
        return "empty id"
    if _BLANK.search(uid):
        return "blank in id"
    if any(m.opener in uid or m.closer in uid for m in markers):
        return "marker text in id"
    if LONE_SURROGATE.search(uid):
        return "surrogate in id"  # no unit can have it: the store's ids are UTF-8
    return ""


@lru_cache(maxsize=64)
def _checked(markers: tuple[Marker, ...]) -> tuple[Marker, ...]:
    """``check_markers`` once per marker set: every answer of a turn is parsed with the same one."""
    return check_markers(markers)


@lru_cache(maxsize=64)
def _openers(markers: tuple[Marker, ...]) -> tuple[re.Pattern[str], dict[str, Marker]]:
    """A pattern finding any opener, and each opener's marker (made once per marker set)."""
    return re.compile("|".join(re.escape(m.opener) for m in markers)), {m.opener: m for m in markers}


def scan_markers(text: str, markers: Sequence[Marker] = DEFAULT_MARKERS
                 ) -> tuple[list[CitationMarker], list[Malformed]]:
    """Every marker in ``text``, complete or malformed, in order of position (no hiding decided)."""
    if not isinstance(text, str):
        raise ValueError(f"answer: must be a string, got {type(text).__name__}")
    markers = _checked(tuple(markers))
    openers, by_opener = _openers(markers)
    cites: list[CitationMarker] = []
    bad: list[Malformed] = []
    pos = 0
    while True:
        hit = openers.search(text, pos)
        if hit is None:
            break
        start, m = hit.start(), by_opener[hit.group()]
        body = hit.end()
        # The closer is looked for as far as the longest id the decoder may spell allows.
        limit = min(len(text), body + MAX_ID_CHARS + len(m.closer))
        nl = text.find("\n", body, limit)
        nxt = openers.search(text, body, limit)
        stop = min(limit, nl if nl >= 0 else limit, nxt.start() if nxt else limit)
        close = text.find(m.closer, body, stop)
        if close >= 0:
            uid, end = text[body:close], close + len(m.closer)
            problem = _id_problem(uid, markers)
            if problem:
                bad.append(Malformed(start, end, text[start:end], problem))
            else:
                cites.append(CitationMarker(uid, m, start, end))
        else:
            # No closer where one could be: the marker runs to the end of its non-blank run.
            end = body
            while end < stop and not text[end].isspace():
                end += 1
            reason = "truncated" if end == len(text) else "unclosed"
            bad.append(Malformed(start, end, text[start:end], reason))
        pos = end
    tail = _opener_prefix_at_end(text, markers, cites, bad)
    if tail:
        bad.append(tail)
    return cites, bad


def _opener_prefix_at_end(text: str, markers: Sequence[Marker], cites, bad) -> Malformed | None:
    """``…[ci``: an answer cut off inside an opener (trailing blanks aside: the shown text is stripped)."""
    taken = max([c.end for c in cites] + [b.end for b in bad] + [0])
    end = len(text.rstrip())
    for m in markers:
        for n in range(len(m.opener) - 1, 0, -1):
            if end - n >= taken and text.startswith(m.opener[:n], end - n):
                return Malformed(end - n, end, text[end - n:end], "truncated")
    return None


def _quoted_spans(text: str) -> list[tuple[int, int]]:
    spans = []
    for op, cl in _PAIRED_QUOTES.items():
        i = text.find(op)
        while i >= 0:
            j = text.find(cl, i + 1)
            if j < 0:
                break
            spans.append((i, j + 1))
            i = text.find(op, j + 1)
    for q in _LINE_QUOTES:
        if q in text:
            spans.extend(m.span() for m in re.finditer(f"{q}[^{q}\n]*{q}", text))
    return spans


def _hide_quoted(text: str, cites: list[CitationMarker]) -> list[CitationMarker]:
    quoted = _quoted_spans(text)
    if not quoted:
        return cites
    return [replace(c, hidden="quoted") if any(a < c.start and c.end < b for a, b in quoted) else c
            for c in cites]


def _blocks(text: str) -> list[tuple[int, int]]:
    """Spans of ``text`` that no sentence crosses: paragraphs, list items, headings, table rows.

    A single line break inside a paragraph is just a wrapped line; one before a list
    bullet, heading, table row or quote, or a blank line, ends whatever came before.
    """
    cuts = [0]
    for m in re.finditer(r"\n", text):
        if _BLOCK_START.match(text, m.end()) or _BLANK_LINE.match(text, m.end()) \
                or not text[cuts[-1]:m.start()].strip():
            cuts.append(m.end())
    cuts.append(len(text))
    return list(zip(cuts, cuts[1:]))


def _sentence_spans(masked: str) -> list[tuple[int, int]]:
    """Trimmed (start, end) of each sentence of ``masked``, block by block."""
    spans = []
    for lo, hi in _blocks(masked):
        cuts = [lo] + sentence_ends(masked, lo, hi) + [hi]
        for a, b in zip(cuts, cuts[1:]):
            seg = masked[a:b]
            stripped = seg.strip()
            if stripped:
                s = a + (len(seg) - len(seg.lstrip()))
                spans.append((s, s + len(stripped)))
    return spans


def cut_spans(text: str, spans: Iterable[tuple[int, int]], start: int = 0, end: int | None = None) -> str:
    """``text[start:end]`` without the given spans, tidying the space a removed marker leaves."""
    end = len(text) if end is None else end
    out: list[str] = []
    pos = start
    for a, b in sorted(spans):
        a, b = max(a, pos), min(b, end)
        if a >= b:
            continue
        out.append(text[pos:a])
        pos = b
        if pos == end or text[pos] in _TIGHT_AFTER or text[pos].isspace():
            joined = "".join(out)
            out = [joined.rstrip(" \t\u3000")]
    out.append(text[pos:end])
    return "".join(out)


def strip_markers(text: str, markers: Sequence[Marker] = DEFAULT_MARKERS) -> str:
    """``text`` without any marker, complete or malformed (for claims and rewritten sentences)."""
    cites, bad = scan_markers(text, markers)
    return cut_spans(text, [(c.start, c.end) for c in cites] + [(b.start, b.end) for b in bad]).strip()


def parse_answer(text: str, markers: Sequence[Marker] = DEFAULT_MARKERS, *,
                 sources: Iterable[str] = ()) -> ParsedAnswer:
    """Sentences of ``text`` with their citations and malformed markers.

    ``sources`` are the texts the answer was written from (this turn's units); a marker
    copied out of one of them is hidden, not a citation.
    """
    cites, bad = scan_markers(text, markers)
    cites = _hide_quoted(text, cites)
    found: list[CitationMarker | Malformed] = sorted(cites + bad, key=lambda x: x.start)
    pieces, pos = [], 0
    for x in found:  # markers never overlap: each is blanked out in place
        pieces += (text[pos:x.start], " " * (x.end - x.start))
        pos = x.end
    pieces.append(text[pos:])
    spans = _sentence_spans("".join(pieces))
    if not spans and found:  # nothing but markers: one empty sentence owns them
        spans = [(found[0].start, found[0].start)]
    owned: list[list] = [[] for _ in spans]
    ends = [e for _, e in spans]
    starts = [s for s, _ in spans]
    for x in found:
        # the last sentence starting at or before the marker; else the first one
        i = max(bisect_right(starts, x.start) - 1, 0)
        owned[i].append(x)
        ends[i] = max(ends[i], x.end)
    sentences = []
    for (s, _), e, xs in zip(spans, ends, owned):
        s = min([s] + [x.start for x in xs])
        text_only = cut_spans(text, [(x.start, x.end) for x in xs], s, e).strip()
        sentences.append(Sentence(s, e, text_only, tuple(x for x in xs if isinstance(x, CitationMarker)),
                                  tuple(x for x in xs if isinstance(x, Malformed))))
    parsed = ParsedAnswer(text, tuple(sentences))
    return parsed.copied_from(sources) if sources else parsed


def confirmed_sentences(text: str, cited: Iterable[str]) -> list[str]:
    """The sentences of a verified answer ``text`` that keep a citation of a unit in ``cited`` (the
    answer's citations), as plain text without their markers: what the memory confirms of it."""
    cited = set(cited)
    return [s.text for s in parse_answer(text).sentences
            if s.text and any(c.unit_id in cited for c in s.cited)]
