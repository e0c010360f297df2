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
