"""Which turns of a conversation make one unit: consecutive short turns of one speaker join.

A chat document (``Document.fmt == "chat"``, written by ``units.chat``) holds one turn a paragraph,
``[2023-05-08 14:02] Alice: text``, so the chunker makes each turn a unit. A short turn ("ok", "at
7?", "the blue one") says little alone: its vector is mostly the stamp and the speaker's name, and
BM25 barely scores it. ``join_turns`` makes a run of such turns of one speaker one unit, whose
span runs from the first turn's stamp to the last turn's end (so ``text[start:end] == content``
holds as for every unit).

Joining must never change a stored unit: a unit id names one text for life (DESIGN §3), and
appending turns to a conversation must keep the ids of the turns already stored. So the units
the memory already holds for the document (``stored``: their contents) are taken as they are
wherever they recur, and a turn never joins onto one of them: a turn appended after a stored
short turn of the same speaker starts a unit of its own (joining the turns appended with it).
A log ingested in two steps may therefore be cut differently from the same log ingested at once;
both keep every id they ever gave.
"""
from __future__ import annotations

import re
from collections.abc import Collection
from datetime import datetime
from typing import NamedTuple

from ..text.cjk import CJK_CLASS
from .model import Chunk, Chunked, Link

# A turn of at most this many words joins. About one short sentence: "Sure, see you at the harbour
# at 7." is 9; a turn over it states something on its own and stays its own unit, so that a
# citation points at exactly what was said.
SHORT_TURN_WORDS = 12
# A joined unit stays under this many characters, stamps included: a few short turns, far under the
# chunker's unit size (1200, which 400 CJK characters, counting 3 each, just reach), so it never gets
# sentence children, and within the embedder's window.
JOINED_MAX_CHARS = 400
# Turns stamped further apart than this are separate utterances, not one statement typed in parts.
JOIN_GAP_MINUTES = 10

# The head ``units.chat.render_turn`` writes: "[2023-05-08 14:02] Alice: " or "[2023-05-08] Alice: ".
_HEAD = re.compile(r"\[(\d{4}-\d{2}-\d{2})(?: (\d{2}:\d{2}))?\] (.+?): ")
# A word: one CJK character, or a run of letters and digits ("2023-05-07", "don't" and "14:02" are one).
_WORD = re.compile(rf"[{CJK_CLASS}]|[^\W_{CJK_CLASS}]+(?:[-'.:/][^\W_{CJK_CLASS}]+)*")


class _Turn(NamedTuple):
    speaker: str
    day: str  # 2023-05-08
    minute: datetime | None  # None when the stamp is a date only
    short: bool  # at most SHORT_TURN_WORDS words


def _turn(chunk: Chunk) -> _Turn | None:
    """The speaker, stamp and shortness of a top-level paragraph that is a turn; None for anything else."""
    if chunk.kind != "paragraph" or chunk.parent is not None:
        return None
    m = _HEAD.match(chunk.content)
    if m is None:
        return None
    day, clock, speaker = m.groups()
    try:
        minute = datetime.fromisoformat(f"{day} {clock}") if clock else None
    except ValueError:
        return None
    words = len(_WORD.findall(chunk.content, m.end()))
    return _Turn(speaker, day, minute, words <= SHORT_TURN_WORDS)


def _close_in_time(a: _Turn, b: _Turn) -> bool:
    if a.day != b.day:
        return False
    if a.minute is None or b.minute is None:  # a session's date only: the same day is all we know
        return True
    return abs((b.minute - a.minute).total_seconds()) <= JOIN_GAP_MINUTES * 60


def join_turns(chunked: Chunked, text: str, *, stored: Collection[str] = ()) -> Chunked:
    """``chunked`` (the chunks of a chat document's ``text``) with runs of short turns of one speaker
    joined, and every stored unit (``stored``: contents) kept as it is."""
    chunks = chunked.chunks
    n = len(chunks)
    turns = [_turn(c) for c in chunks]
    stored = set(stored)
    joined_stored = [s for s in stored if "\n\n" in s]  # stored units of several turns
    longest = max(map(len, joined_stored), default=0)

    def span(i: int, j: int) -> str:
        return text[chunks[i].offset_start:chunks[j].offset_end]

    def stored_end(i: int) -> int | None:
        """The last turn of the longest stored unit that starts at turn ``i``, if one does."""
        if turns[i] is None:
            return None
        end = i if chunks[i].content in stored else None
        j = i + 1
        while longest and j < n and turns[j] is not None \
                and chunks[j].offset_end - chunks[i].offset_start <= longest:
            if span(i, j) in stored:
                end = j
            j += 1
        return end

    groups: list[tuple[int, int]] = []
    i = 0
    while i < n:
        end = stored_end(i)
        if end is None:
            end, first = i, turns[i]
            if first is not None and first.short:
                while end + 1 < n:
                    nxt = turns[end + 1]
                    if (nxt is None or not nxt.short or nxt.speaker != first.speaker
                            or not _close_in_time(first, nxt)
                            or chunks[end + 1].offset_end - chunks[i].offset_start > JOINED_MAX_CHARS
                            or stored_end(end + 1) is not None):
                        break
                    end += 1
        groups.append((i, end))
        i = end + 1
    if len(groups) == n:
        return chunked
    new_index: list[int] = [0] * n
    out: list[Chunk] = []
    for g, (a, b) in enumerate(groups):
        for k in range(a, b + 1):
            new_index[k] = g
        c = chunks[a]
        if a == b:
            out.append(Chunk(c.kind, c.offset_start, c.offset_end, c.content, c.section_path,
                             None if c.parent is None else new_index[c.parent]))
        else:  # only top-level paragraphs join: they have no parent and no children
            out.append(Chunk("paragraph", c.offset_start, chunks[b].offset_end, span(a, b), c.section_path,
                             None))
    links = [Link(new_index[ln.source], ln.kind, ln.target, ln.text) for ln in chunked.links]
    return Chunked(out, links)
