"""Terse corrections in a conversation: a short turn that gives a value in place of one said before.

"Correction: Bologna, not Tartu!", "Sorry, I meant Friday", "No wait, it's the 14th, not the 12th",
"不对，是周五" say only the new value (and perhaps the old one): the statement they correct is one
the speaker made earlier. ``read_correction`` reads such a turn's words (without the turn's head) into
the value it gives and the value it names as replaced, if it names one; ``replaced_span`` finds
the span of an earlier turn's words that the value replaces:

- the replaced value, where the correction names it ("X, not Y"), as whole words, and the new
  value not said there already;
- else a span of the same kind as the new value: a weekday, a date (a month, a day of the month),
  a time of day, a number, a name (a capitalised word inside a sentence); a value of no such kind
  (a lower-case word: "I meant a cello") replaces no span it can point to, and takes the earlier
  turn whole (the caller limits how far back that reaches).

A turn is a correction only where it is short (``_MAX_WORDS``) and says so: one of the markers
below, or the contrast alone ("Bologna, not Tartu!"). Two true values are no correction: "I visited
Paris too" after "I visited Rome" has no marker and no contrast.
"""
from __future__ import annotations

import re
from typing import NamedTuple

from .cjk import CJK_CHAR

# What marks a correction, English and Chinese: the speaker says they said it wrong, or what they
# meant ("actually" only before "it was" / "it's": alone it opens any remark).
_MARKERS = re.compile(
    r"\b(?:correction|i\s+meant|i\s+misspoke|my\s+mistake|my\s+bad|typo|scratch\s+that|make\s+that|"
    r"correct\s+(?:that|this|it|myself)|no\s+wait|wait\s*,?\s+no|i\s+was\s+wrong|i\s+got\s+(?:that|it)\s+wrong|wrong\s+one|"
    r"actually\s*,?\s+(?:it\s+was|it'?s|it\s+is))\b"
    r"|不对|我是说|我的意思是|更正|纠正|说错了|口误|打错了", re.IGNORECASE)
# Lead-ins that mark a correction only together with a contrast ("Sorry, Friday, not Thursday").
_SOFT_MARKERS = re.compile(r"\b(?:sorry|oops|actually|wait|no)\b|其实|应该是", re.IGNORECASE)
# "X, not Y" / "X! Not Y" / "X rather than Y" / "X instead of Y" / "not Y but X";
# 是X，不是Y / 不是Y，是X / 不是Y而是X.
_CONTRAST = (
    re.compile(r"(?P<v>[^,;:!?.]+?)\s*[,;!.—–-]?\s*\b(?:not|rather\s+than|instead\s+of)\s+(?P<w>[^,;:!?.]+)",
               re.IGNORECASE),
    re.compile(r"\bnot\s+(?P<w>[^,;:!?.]+?)\s*,?\s+but\s+(?P<v>[^,;:!?.]+)", re.IGNORECASE),
    re.compile(r"不是(?P<w>[^，,。！!？?；;而]+?)[，,]?(?:而)?是(?P<v>[^，,。！!？?；;]+)"),
    re.compile(r"是(?P<v>[^，,。！!？?；;]+?)[，,]?(?:而)?不是(?P<w>[^，,。！!？?；;]+)"),
)
# The words before the value, after a marker: "I meant", "it's", "it was a", "make that the".
_LEAD = re.compile(
    r"^(?:[\s,;:!.—–\-：，。！、]|(?:oh|ah|um|hmm|sorry|oops|no|wait|well|actually|correction|typo|my\s+bad|my\s+mistake|"
    r"i\s+misspoke|scratch\s+that|hang\s+on|i\s+meant|make\s+that|i\s+was\s+wrong|wrong\s+one|"
    r"it'?s|it\s+is|it\s+was|that'?s|that\s+is|that\s+was|i\s+said|the|a|an)\b"
    r"|不对|不是的|我是说|我的意思是|更正|纠正|说错了|口误|打错了|应该是|其实|是)+", re.IGNORECASE)
_TRAIL = re.compile(r"(?:[\s,;:!?.。！？，；~]|\b(?:sorry|then|haha|lol|please|instead)\b)+$", re.IGNORECASE)
_MAX_WORDS = 14  # a correction says the value and little else; a longer turn is a statement
_MAX_VALUE_WORDS = 4  # words of a value (CJK: characters over two)
_WORD = re.compile(r"[^\W_]+")

_WEEKDAY = (r"monday|tuesday|wednesday|thursday|friday|saturday|sunday|mon|tue|wed|thu|fri|sat|sun"
            r"|(?:周|星期|礼拜)[一二三四五六日天]")
_MONTH = (r"january|february|march|april|may|june|july|august|september|october|november|december"
          r"|jan|feb|mar|apr|jun|jul|aug|sep|sept|oct|nov|dec")
_KINDS = (  # (kind, its pattern), the first that a value matches is its kind
    ("weekday", re.compile(rf"\b(?:{_WEEKDAY})\b|(?:周|星期|礼拜)[一二三四五六日天]", re.IGNORECASE)),
    ("date", re.compile(rf"\b(?:{_MONTH})\b|\b\d{{1,2}}(?:st|nd|rd|th)\b|\b\d{{4}}-\d{{2}}-\d{{2}}\b"
                        r"|\d{1,2}月\d{1,2}[日号]|\d{1,2}[日号]", re.IGNORECASE)),
    ("time", re.compile(r"\b\d{1,2}(?::\d{2})?\s*(?:am|pm|a\.m\.|p\.m\.)|\b\d{1,2}:\d{2}\b|\d{1,2}点",
                        re.IGNORECASE)),
    ("number", re.compile(r"\d|[零〇一二三四五六七八九十百千万两]+(?:个|岁|元|块|次|人|天|年)")),
)


# Words that add a value to one said before rather than replace it ("I visited Paris too").
_ADDITIVE = re.compile(r"\b(?:too|also|as\s+well|another|besides)\b|也|还|另外", re.IGNORECASE)


def marks_correction(said: str) -> bool:
    """Whether the words say they correct something said before (a marker, or a lead-in such as "sorry")."""
    return _MARKERS.search(said) is not None or _SOFT_MARKERS.search(said) is not None


def adds_value(said: str) -> bool:
    """Whether the words say they add to what was said ("too", "also", 也)."""
    return _ADDITIVE.search(said) is not None


class Correction(NamedTuple):
    value: str  # the value said now
    replaced: str | None  # the value it replaces, where the correction names it


def _value(text: str) -> str:
    """``text`` without the lead-in words before a value and the filler after it."""
    prev = None
    while prev != text:
        prev, text = text, _TRAIL.sub("", _LEAD.sub("", text.strip()))
    return text.strip()


def _short(value: str) -> bool:
    if not value:
        return False
    cjk = sum(1 for c in value if CJK_CHAR.match(c))
    return len(_WORD.findall(value)) + cjk // 2 <= _MAX_VALUE_WORDS


def read_correction(said: str) -> Correction | None:
    """The correction that the words of a turn make, if they make one (see the module doc)."""
    said = " ".join(said.split())
    if not said or len(_WORD.findall(said)) + sum(1 for c in said if CJK_CHAR.match(c)) // 2 > _MAX_WORDS:
        return None  # a CJK run is one word to _WORD: two of its characters count as one
    marked = _MARKERS.search(said) is not None
    softly = marked or _SOFT_MARKERS.search(said) is not None
    for at, pattern in enumerate(_CONTRAST):
        m = pattern.search(said)
        if m is None:
            continue
        value, replaced = _value(m.group("v")), _value(m.group("w"))
        # "X, not Y" alone is a correction where it is all the turn says ("Not bad, but tiring" is not)
        alone = (at == 0 and not said[:m.start()].strip(" ,;:!.")
                 and not said[m.end():].strip(" ,;:!?.。！？，"))
        if _short(value) and _short(replaced) and value.lower() != replaced.lower() and (softly or alone):
            return Correction(value, replaced)
    if not marked:
        return None
    m = _MARKERS.search(said)
    value = _value(said[m.start():])
    return Correction(value, None) if _short(value) and value.lower() not in {"that", "this", "it"} else None


def value_kind(value: str) -> str:
    """weekday, date, time, number, name (a capitalised word) or word."""
    for kind, pattern in _KINDS:
        if pattern.search(value):
            return kind
    if any(w[0].isupper() for w in _WORD.findall(value)) or (CJK_CHAR.search(value) and len(value) <= 8):
        return "name"
    return "word"


def _occurs(value: str, text: str) -> re.Match | None:
    if CJK_CHAR.search(value):
        at = text.find(value)
        return re.search(re.escape(value), text) if at >= 0 else None
    pattern = r"(?<![^\W_])" + r"\s+".join(re.escape(w) for w in value.split()) + r"(?![^\W_])"
    return re.search(pattern, text, re.IGNORECASE)


def replaced_span(correction: Correction, earlier: str) -> tuple[int, int] | None:
    """The span of ``earlier`` (an earlier turn's words) whose value ``correction`` replaces; the whole
    text for a value of no kind that can be pointed to; None where it replaces nothing there."""
    if _occurs(correction.value, earlier):
        return None  # the value is said there already: nothing of it is replaced
    if correction.replaced is not None:
        m = _occurs(correction.replaced, earlier)
        return m.span() if m else None
    kind = value_kind(correction.value)
    if kind == "word":
        return (0, len(earlier))
    if kind == "name":
        for m in _WORD.finditer(earlier):
            before = earlier[:m.start()].rstrip()
            inside = before and before[-1] not in ".!?:"  # not the capital that opens a sentence
            if m.group(0)[0].isupper() and inside and m.group(0) != "I":
                return m.span()
        return None
    m = dict(_KINDS)[kind].search(earlier)
    return m.span() if m else None
