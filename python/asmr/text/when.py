"""Questions that ask when, and texts that say when.

``asks_when(question)``: the question asks for a time: when, what / which date, day, month or
year, how long ago; 什么时候, 何时, 哪天, 哪一天, 哪年, 哪一年, 哪个月, 几月, 几号.

``says_when(text)``: the text dates something: it states a date (a key fact of kind ``date``:
"2023-05-07", "7 May 2023", "2021", "2023年5月") or a relative time that
``relative_time.resolve`` reads ("yesterday", "two years ago", 上周五; at ingest a chat turn's
are followed by their dates already). The stamp that opens a chat turn (``turns.parse_turn``) is
not counted: every turn has one, and it says when the words were written, not when what they tell
happened.
"""
from __future__ import annotations

import re
from datetime import date

from .facts import key_facts
from .relative_time import resolve
from .turns import parse_turn

_ASKS_WHEN = re.compile(
    r"(?<![A-Za-z])(?:when|(?:what|which)\s+(?:date|day|month|year|time|week|season)|how\s+long\s+ago"
    r"|in\s+what\s+year)(?![A-Za-z])"
    r"|什么时候|什么时间|何时|哪天|哪一天|哪年|哪一年|哪个月|几月|几号|哪日",
    re.IGNORECASE)
_ANY_DAY = date(2000, 1, 1)  # relative time is found whatever day it is resolved against


def asks_when(question: str) -> bool:
    """Whether ``question`` asks for a time (a date, a day, a month, a year)."""
    return _ASKS_WHEN.search(question) is not None


def says_when(text: str) -> bool:
    """Whether ``text`` (a chat turn: what is said, without its stamp) states a date or a relative time."""
    turn = parse_turn(text)
    if turn is not None:
        text = turn.body
    if any(f.kind == "date" for f in key_facts(text)):
        return True
    return bool(resolve(text, _ANY_DAY))


MONTH_NAMES = ("January", "February", "March", "April", "May", "June", "July", "August", "September",
                "October", "November", "December")


def _day_words(d: date) -> str:
    return f"{d.day} {MONTH_NAMES[d.month - 1]} {d.year}"


def date_words(start: date, end: date, unit: str) -> str:
    """A resolved time (``relative_time.ResolvedTime``'s ``start``, ``end``, ``unit``) in words:
    "7 May 2023", "the week of 1 May 2023", "May 2023", "2022", "6 May 2023 to 7 May 2023"."""
    if unit == "year":
        return f"{start.year}"
    if unit == "month":
        return f"{MONTH_NAMES[start.month - 1]} {start.year}"
    if unit == "week":
        return f"the week of {_day_words(start)}"
    return _day_words(start) if start == end else f"{_day_words(start)} to {_day_words(end)}"


def with_dates(sentence: str, reference: date | None = None) -> str:
    """``sentence`` with the date each relative time means written out after it, in words.

    An expression already followed by its absolute form (as chat ingest writes it: "yesterday
    (2023-05-07)") gets the words beside it ("yesterday (2023-05-07, 7 May 2023)"); one that is
    not ("today", or text ingested without resolving) is resolved against ``reference`` (None:
    left as it is)."""
    out, pos = [], 0
    for r in resolve(sentence, reference or _ANY_DAY):
        after = sentence[r.span[1]:]
        m = re.match(r"\s*\(([^()]{4,40})\)", after)
        if m is not None:  # already resolved at ingest: read the label back, add the words
            found = _label_time(m.group(1))
            if found is None or date_words(*found) == m.group(1).strip():  # "2021" says it in words already
                continue
            out.append(sentence[pos:r.span[1] + m.end(1)])
            out.append(f", {date_words(*found)}")
            pos = r.span[1] + m.end(1)
        elif reference is not None:
            out.append(sentence[pos:r.span[1]])
            out.append(f" ({date_words(r.start, r.end, r.unit)})")
            pos = r.span[1]
    out.append(sentence[pos:])
    return "".join(out)


_LABEL = re.compile(r"(\d{4})(?:-(\d{2})(?:-(\d{2}))?)?(?: to (\d{4})-(\d{2})-(\d{2}))?")


def _label_time(label: str) -> tuple[date, date, str] | None:
    """(start, end, unit) of an absolute label as ``ResolvedTime.label`` writes it; None for other text."""
    m = _LABEL.fullmatch(label.strip())
    if m is None:
        return None
    y, mo, d, y2, mo2, d2 = m.groups()
    try:
        if mo is None:
            return date(int(y), 1, 1), date(int(y), 12, 31), "year"
        if d is None:
            return date(int(y), int(mo), 1), date(int(y), int(mo), 1), "month"
        start = date(int(y), int(mo), int(d))
        if y2 is None:
            return start, start, "day"
        end = date(int(y2), int(mo2), int(d2))
        return start, end, "week" if start.weekday() == 0 and (end - start).days == 6 else "day"
    except ValueError:
        return None
