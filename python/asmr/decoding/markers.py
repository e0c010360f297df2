"""Citation markers: the opener and closer that wrap a unit id in an answer.

One definition shared by the decoder (which forces a marker to spell an
allowed id and close) and the verifier (which parses markers back out).
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Iterable, Sequence

from asmr.text.sentences import SENTENCE_END

# The longest id a marker may hold, in characters: the decoder's compile refuses a longer id and the
# verifier looks no further past an opener for its closer, so an id the decoder can spell is always
# parsed back whole. A unit id (memo://<kb>/<doc>/<key>, names of at most 128 characters) is under 300;
# the bound keeps an unclosed marker from eating a paragraph.
MAX_ID_CHARS = 512


@dataclass(frozen=True)
class Marker:
    """``opener + id + closer``, for example ``[cite:`` ``memo://kb/doc/key`` ``]``."""

    opener: str
    closer: str

    def __post_init__(self) -> None:
        if not self.opener or not self.closer:
            raise ValueError(f"marker {self.opener!r}…{self.closer!r}: opener and closer must be non-empty")
        if any(c.isspace() for c in self.opener + self.closer):
            raise ValueError(f"marker {self.opener!r}…{self.closer!r}: opener and closer may not hold whitespace")

    def spell(self, unit_id: str) -> str:
        return f"{self.opener}{unit_id}{self.closer}"


CITE = Marker("[cite:", "]")
CITE_ZH = Marker("【引用:", "】")
DEFAULT_MARKERS: tuple[Marker, ...] = (CITE, CITE_ZH)


def check_markers(markers: Sequence[Marker]) -> tuple[Marker, ...]:
    """Refuse marker sets whose openers would make a parse ambiguous."""
    markers = tuple(markers)
    if not markers:
        raise ValueError("markers: at least one marker is needed")
    for i, a in enumerate(markers):
        for j, b in enumerate(markers):
            if i != j and a.opener in b.opener:
                raise ValueError(f"markers: opener {a.opener!r} lies inside opener {b.opener!r}; "
                                 "a marker could not be told apart from the other")
    return markers


def _shown(unit_id: str) -> str:
    return repr(unit_id[:60]) + ("…" if len(unit_id) > 60 else "")


def check_citable_id(unit_id: str, markers: Iterable[Marker] = DEFAULT_MARKERS) -> str:
    """An id that can sit between an opener and a closer without ending the marker early."""
    if not isinstance(unit_id, str) or not unit_id:
        raise ValueError(f"citable id {unit_id!r}: must be a non-empty string")
    if len(unit_id) > MAX_ID_CHARS:
        raise ValueError(f"citable id {_shown(unit_id)}: {len(unit_id)} characters, more than "
                         f"MAX_ID_CHARS ({MAX_ID_CHARS}), the most the verifier reads between an opener "
                         "and its closer")
    if any(c.isspace() for c in unit_id):
        raise ValueError(f"citable id {unit_id!r}: may not hold whitespace")
    for m in markers:
        if m.closer in unit_id or m.opener in unit_id:
            raise ValueError(f"citable id {unit_id!r}: holds the marker text {m.opener!r} or {m.closer!r}")
    return unit_id


def marker_pattern(markers: Sequence[Marker] = DEFAULT_MARKERS) -> re.Pattern[str]:
    """A regex matching a complete marker; group ``id`` is the cited id.

    Ids hold no whitespace and no closer, so the shortest run up to the closer is the id.
    """
    alts = [f"{re.escape(m.opener)}(?P<id{i}>[^\\s{re.escape(m.closer)}]+){re.escape(m.closer)}"
            for i, m in enumerate(markers)]
    return re.compile("|".join(alts))


def cite(sentence: str, uid: str, marker: Marker = CITE) -> str:
    """``sentence`` with the marker before its final punctuation: "Text [cite:ID]."."""
    body = sentence.rstrip()
    end = ""
    while body and body[-1] in SENTENCE_END:
        end = body[-1] + end
        body = body[:-1]
    return f"{body} {marker.spell(uid)}{end or '.'}"
