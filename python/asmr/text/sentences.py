"""Sentence boundaries in Latin and CJK text, and grouping sentences into units.

All functions work on a span ``text[start:end]`` of a larger string and return absolute
offsets into ``text``, so callers never copy a paragraph just to split it.

A sentence ends at ``。！？`` (CJK text has no spaces after them), or at ``.!?`` followed by
whitespace or the end of the span; closing quotes and brackets stay with their sentence.
A ``.`` does not end a sentence after a one-letter word ("J. Smith"), a dotted abbreviation
("e.g.", "U.S."), a known abbreviation ("Dr.", "Fig."), or before a lowercase word
("approx. five"). Decimals and versions ("3.14", "v1.2") never split: no space follows the dot.
"""
from __future__ import annotations

import re
from typing import Callable

from .cjk import text_size
from .tables import cells

_CLOSERS = "\"')\\]」』）〕】”’"
# One character class first lets the regex engine skip quickly to candidates; whether a
# Latin mark is followed by whitespace is checked afterwards.
_MARK = re.compile(rf"[.!?。！？][.!?。！？]*[{_CLOSERS}]*")
_CJK_MARKS = "。！？"
SENTENCE_END = ".!?。！？"  # the marks that may end a sentence
_LOWERCASE_NEXT = re.compile(r"\s*[a-z]")
_LEADING_PUNCTUATION = "([{\"'“‘«"
_ABBREVIATIONS = frozenset("""
    mr mrs ms dr prof sr jr st mt vs cf fig figs eq eqs no nos vol vols pp ch sec sect art
    approx ca inc ltd co corp dept est al resp esp viz jan feb mar apr jun jul aug sep sept
    oct nov dec
""".split())
# Whitespace a too-long sentence may be cut at; one rfind per character in a window.
_CUT_CHARS = (" ", "\n", "\t", "\u3000", "\r")


def _is_abbreviation(text: str, dot: int, lo: int) -> bool:
    """True if the '.' at ``dot`` closes an abbreviation rather than a sentence."""
    before = text[max(lo, dot - 8):dot]
    if not before or not (before[-1].isascii() and before[-1].isalpha()):
        return False  # "in 2020." or "(see above)."
    word = before.split()[-1].lstrip(_LEADING_PUNCTUATION)
    return len(word) == 1 or "." in word or word.lower() in _ABBREVIATIONS


def sentence_ends(text: str, start: int = 0, end: int | None = None) -> list[int]:
    """Offsets just past each sentence end inside ``text[start:end]`` (after closing quotes)."""
    end = len(text) if end is None else end
    ends = []
    for m in _MARK.finditer(text, start, end):
        mark, after = m.group(), m.end()
        if mark[0] not in _CJK_MARKS:
            if after < end and not text[after].isspace():
                continue  # "3.14", "v1.2", "e.g.,"
            if mark == "." and (_is_abbreviation(text, m.start(), start)
                                or _LOWERCASE_NEXT.match(text, after, end)):
                continue
        ends.append(after)
    return ends


def trim(text: str, start: int, end: int) -> tuple[int, int, str] | None:
    """``(start, end, content)`` of ``text[start:end]`` without surrounding whitespace; None if blank."""
    seg = text[start:end]
    content = seg.strip()
    if not content:
        return None
    # The first non-blank character cannot occur inside the leading whitespace, so find() is exact.
    start += seg.find(content[0])
    return start, start + len(content), content


def cut_long(text: str, start: int, end: int, hard_max: int,
             prefer_newline: bool = False) -> list[tuple[int, int, str]]:
    """Cut ``text[start:end]`` into trimmed pieces of at most ``hard_max`` characters.

    This is the one place a sentence (or a code block) may be cut: it is longer than any unit
    may be. Cuts fall on the last whitespace in each window (the last newline first, if
    ``prefer_newline``), or anywhere when the window has none, as in CJK text without spaces.
    """
    pieces = []
    while end - start > hard_max:
        limit = start + hard_max
        cut = text.rfind("\n", start + 1, limit + 1) if prefer_newline else -1
        if cut <= start:
            cut = max(text.rfind(c, start + 1, limit + 1) for c in _CUT_CHARS)
        if cut <= start:
            cut = limit
        piece = trim(text, start, cut)
        if piece is not None:
            pieces.append(piece)
        start = cut
    piece = trim(text, start, end)
    if piece is not None:
        pieces.append(piece)
    return pieces


def sentence_groups(text: str, start: int, end: int, target: int, hard_max: int,
                    size: Callable[[int, int], int] | None = None) -> list[tuple[int, int, str]]:
    """Consecutive whole sentences of ``text[start:end]`` grouped to about ``target`` characters, a
    CJK character counting as ``cjk.CJK_CHAR_SIZE`` (``cjk.text_size``: a group holds about as much
    in either script; ``size``, a ``cjk.TextSizes`` of ``text``, measures spans without reading them).

    A group grows while it stays within ``target``; a sentence longer than ``target`` is a
    group of its own, and one longer than ``hard_max`` is cut by :func:`cut_long`. Returns
    trimmed ``(start, end, content)`` spans in order.
    """
    size = size or (lambda a, b: text_size(text, a, b))
    groups: list[tuple[int, int, str]] = []

    def close(a: int, b: int) -> None:
        piece = trim(text, a, b)
        if piece is not None:
            groups.append(piece)

    group = prev = start  # the open group is text[group:prev]
    bounds = sentence_ends(text, start, end)
    if not bounds or bounds[-1] != end:
        bounds.append(end)
    for cut in bounds:
        if cut - prev > hard_max:  # one sentence longer than any unit may be
            if prev > group:
                close(group, prev)
            groups.extend(cut_long(text, prev, cut, hard_max))
            group = prev = cut
            continue
        if size(group, cut) > target and prev > group:
            close(group, prev)
            group = prev
        prev = cut
    if prev > group:
        close(group, prev)
    return groups


def split_sentences(text: str) -> list[str]:
    """The sentences of a unit's text; a table row (header line + row line) stays one sentence."""
    flat = text.replace("\r\n", "\n")
    lines = [ln for ln in flat.split("\n") if ln.strip()]
    if len(lines) >= 2 and all("|" in ln for ln in lines):
        if len(lines) > 2:  # a whole table: its rows are units of their own, each read below
            return []
        header, row = (cells(ln) for ln in lines)
        return ["; ".join(f"{h}: {v}" if h else v for h, v in zip(header, row) if v)]
    out, start = [], 0
    for end in sentence_ends(flat) + [len(flat)]:
        piece = trim(flat, start, end)
        if piece and not piece[2].endswith(("?", "？")):  # a question (FAQ heading) answers nothing
            out.append(" ".join(piece[2].split()))
        start = end
    return out
