"""Citation markers: the opener and closer that wrap a unit id in an answer.

One definition shared by the decoder (which forces a marker to spell an
allowed id and close) and the verifier (which parses markers back out), with
the rules that make the two read a marker the same way: the decoder's
``compile`` refuses, with the reason, every id the verifier would parse as
something else (``check_citable_id``), and no marker set may let an opener
start inside a marker (``check_markers``).
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Iterable, Sequence

from asmr.text.cjk import SPACELESS_CHAR
from asmr.text.sentences import SENTENCE_END

# The longest id a marker may hold, in characters: the decoder's compile refuses a longer id and the
# verifier looks no further past an opener for its closer, so an id the decoder can spell is always
# parsed back whole. A unit id (memo://<kb>/<doc>/<key>, names of at most 128 characters) is under 300;
# the bound keeps an unclosed marker from eating a paragraph.
MAX_ID_CHARS = 512
# UTF-8 cannot encode a lone surrogate: the decoder could not spell such an id, nor the store hold one.
LONE_SURROGATE = re.compile(r"[\ud800-\udfff]")
_BAD_ID_CHAR = re.compile(r"[\s\ud800-\udfff]")


@dataclass(frozen=True)
class Marker:
    """``opener + id + closer``, for example ``[cite:`` ``memo://kb/doc/key`` ``]``."""

    opener: str
    closer: str

    def __post_init__(self) -> None:
        if not self.opener or not self.closer:
            raise ValueError(f"marker {self.opener!r}…{self.closer!r}: opener and closer must be non-empty")
        if _BAD_ID_CHAR.search(self.opener + self.closer):
            raise ValueError(f"marker {self.opener!r}…{self.closer!r}: opener and closer may not hold whitespace "
                             "or a lone surrogate")

    def spell(self, unit_id: str) -> str:
        return f"{self.opener}{unit_id}{self.closer}"


CITE = Marker("[cite:", "]")
CITE_ZH = Marker("【引用:", "】")
DEFAULT_MARKERS: tuple[Marker, ...] = (CITE, CITE_ZH)


def check_markers(markers: Sequence[Marker]) -> tuple[Marker, ...]:
    """Refuse marker sets whose openers would make a parse ambiguous.

    The verifier ends a marker's id at the first closer and cuts the marker short at the next opener,
    so no opener may lie inside another or begin inside a closer (the text after a marker would open
    another before the first had closed), and no opener may hold a closer (an id ending in the start
    of such an opener would run into it).
    """
    markers = tuple(markers)
    if not markers:
        raise ValueError("markers: at least one marker is needed")
    for i, a in enumerate(markers):
        for j, b in enumerate(markers):
            if i != j and a.opener in b.opener:
                raise ValueError(f"markers: opener {a.opener!r} lies inside opener {b.opener!r}; "
                                 "a marker could not be told apart from the other")
            c, o = a.closer, b.opener
            if c in o or any(c.startswith(o, k) or o.startswith(c[k:]) for k in range(len(c))):
                raise ValueError(f"markers: closer {c!r} and opener {o!r} overlap; the verifier could "
                                 "not tell where a marker ends")
    return markers


@lru_cache(maxsize=64)
def id_screen(markers: tuple[Marker, ...]) -> re.Pattern[str]:
    """Whitespace, a lone surrogate, or the first character of an opener or closer: an id holding
    none of them holds no marker text and cannot run into the closer that follows it."""
    firsts = "".join(sorted({t[0] for m in markers for t in (m.opener, m.closer)}))
    return re.compile(f"[\\s\\ud800-\\udfff{re.escape(firsts)}]")


def _shown(unit_id: str) -> str:
    return repr(unit_id[:60]) + ("…" if len(unit_id) > 60 else "")


def check_citable_id(unit_id: str, markers: Iterable[Marker] = DEFAULT_MARKERS) -> str:
    """An id that reads back as itself between any of the markers' openers and closers.

    ValueError, naming the id and the reason, otherwise: the verifier would take the marker for
    another id or a malformed one (the decoder's compile checks each id with this).
    """
    if not isinstance(unit_id, str) or not unit_id:
        raise ValueError(f"citable id {unit_id!r}: must be a non-empty string")
    markers = tuple(markers)
    if len(unit_id) > MAX_ID_CHARS:
        raise ValueError(f"citable id {_shown(unit_id)}: {len(unit_id)} characters, more than "
                         f"MAX_ID_CHARS ({MAX_ID_CHARS}), the most the verifier reads between an opener "
                         "and its closer")
    bad = _BAD_ID_CHAR.search(unit_id)
    if bad and bad.group().isspace():
        raise ValueError(f"citable id {_shown(unit_id)}: may not hold whitespace")
    if bad:
        raise ValueError(f"citable id {_shown(unit_id)}: holds a lone surrogate "
                         f"(U+{ord(bad.group()):04X}), which UTF-8 cannot encode")
    for m in markers:
        if m.closer in unit_id or m.opener in unit_id:
            raise ValueError(f"citable id {_shown(unit_id)}: holds the marker text {m.opener!r} or "
                             f"{m.closer!r}")
    heads = tuple(t[:n] for m in markers for t in (m.opener, m.closer) for n in range(1, len(t)))
    if unit_id.endswith(heads):  # the closer that follows could complete a marker text
        for m in markers:
            spelled = unit_id + m.closer
            if spelled.find(m.closer) < len(unit_id):
                raise ValueError(f"citable id {_shown(unit_id)}: ends in part of the closer {m.closer!r}; "
                                 f"the verifier would end the id early")
            hit = next((o.opener for o in markers if o.opener in spelled), None)
            if hit:
                raise ValueError(f"citable id {_shown(unit_id)}: ends in part of the opener {hit!r}; "
                                 f"the verifier would read another marker opening")
    return unit_id


def check_citable_ids(ids: Iterable[str], markers: Iterable[Marker] = DEFAULT_MARKERS) -> tuple[str, ...]:
    """``check_citable_id`` over a turn's allowlist: 1,000 ids in a fraction of a millisecond."""
    ids, markers = tuple(ids), tuple(markers)
    screen = id_screen(markers)
    for uid in ids:
        # A cheap test clears the usual id; whatever it flags gets the exact check, which names the reason.
        if not isinstance(uid, str) or not 0 < len(uid) <= MAX_ID_CHARS or screen.search(uid):
            check_citable_id(uid, markers)
    return ids


def marker_pattern(markers: Sequence[Marker] = DEFAULT_MARKERS) -> re.Pattern[str]:
    """A regex matching a complete marker; group ``id`` is the cited id.

    Ids hold no whitespace and no closer, so the shortest run up to the closer is the id.
    """
    alts = [f"{re.escape(m.opener)}(?P<id{i}>[^\\s{re.escape(m.closer)}]+){re.escape(m.closer)}"
            for i, m in enumerate(markers)]
    return re.compile("|".join(alts))


def cite(sentence: str, uid: str, marker: Marker = CITE) -> str:
    """``sentence`` with the marker before its final punctuation: "Text [cite:ID].", "文本[cite:ID]。"
    (Chinese and Japanese put no space before it)."""
    body = sentence.rstrip()
    end = ""
    while body and body[-1] in SENTENCE_END:
        end = body[-1] + end
        body = body[:-1]
    if body and SPACELESS_CHAR.match(body[-1]):
        return f"{body}{marker.spell(uid)}{end or '。'}"
    return f"{body} {marker.spell(uid)}{end or '.'}"


def join_sentences(sentences: Iterable[str]) -> str:
    """Sentences as one text: a space between two, none after a full-width end ("。", "！", "？"), which
    the scripts written without spaces put."""
    out = ""
    for s in sentences:
        out += s if not out or out[-1] in "。！？" else " " + s
    return out
