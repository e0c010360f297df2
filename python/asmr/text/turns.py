"""Turns of a conversation as units hold them: who speaks, and whom a turn is about.

A chat turn is stored as one paragraph (``asmr.units.chat.render_turn``)::

    [2023-05-08 14:02] Alice: I moved to Porto yesterday (2023-05-07).

``parse_turn`` reads that form back (the stamp, the speaker, the words said), and is the one
place that does: recall's speaker signal, the "when" boost and the answerer all read a turn
through it, never through a document's title. A text in any other form is no turn (None).

A turn is about its speaker unless it says otherwise: ``about(text, name)`` is true when ``name``
speaks the turn or the words said name it ("Congrats, Alice!" is about Alice as well).
"""
from __future__ import annotations

import re
from typing import NamedTuple

from .cjk import CJK_CHAR, fold_han
from .entities import mentions, normalize

# "[2023-05-08] " or "[2023-05-08 14:02] ", then a speaker of one line without ": ", then ": ".
_TURN = re.compile(r"\[(\d{4}-\d{2}-\d{2}(?: \d{2}:\d{2})?)\] ([^\n:\[\]]{1,80}?): ")


class Turn(NamedTuple):
    stamp: str  # "2023-05-08" or "2023-05-08 14:02"
    speaker: str  # as written
    body: str  # what was said (relative times already followed by their dates)


def parse_turn(text: str) -> Turn | None:
    """The stamp, speaker and words of a rendered chat turn; None for a text that is not one."""
    m = _TURN.match(text)
    if m is None:
        return None
    return Turn(m.group(1), m.group(2).strip(), text[m.end():])


def without_heads(text: str) -> str:
    """``text`` without the head of each turn it holds (its own, joined ones, quoted ones): what was
    said. Every turn of a speaker holds their name and a stamp, so the head tells no turn from another."""
    return _TURN.sub("", text)


def said_turns(text: str) -> list[tuple[Turn, bool]]:
    """The turns a unit states, each with its own stamp and speaker, and whether it is quoted: the
    unit's turn and the turns joined to it (each starts the text or follows a blank line, as chat
    ingest writes them), and the turns a turn quotes (an answer remembered in a conversation
    quotes the memory's turns: "[...] assistant: [2023-05-08] Alice: I moved."). A head followed at
    once by another (an answer that only quotes) states nothing of its own. Empty for a text that
    is no turn."""
    if _TURN.match(text) is None:
        return []
    heads = [m for m in _TURN.finditer(text) if m.start() == 0 or text[m.start() - 1].isspace()]
    out = []
    for m, nxt in zip(heads, [*heads[1:], None]):
        body = text[m.end():nxt.start() if nxt is not None else len(text)].strip()
        if body:
            quoted = m.start() > 0 and not text[:m.start()].endswith("\n\n")
            out.append((Turn(m.group(1), m.group(2).strip(), body), quoted))
    return out


# A turn that ends in a question: a question mark, or Chinese's question particle 吗 (a chat often writes
# no mark after it), then closing quotes and brackets, an image caption (``render_turn`` writes
# "[image: ...]" after the words), and spaces.
_ASKS = re.compile(r"(?:[?？]|吗[。～~…]*)[\s\"'”’)）」』]*(?:\[image: [^\]]*\])?\s*$")


# A name a question calls someone by: the words before its first comma, or after its last comma before
# the question mark ("Ana, did you go?", "did you go, Ana?").
_CALLED_FIRST = re.compile(r"^\s*([^,，?？\n]{1,40})[,，]")
_CALLED_LAST = re.compile(r"[,，]\s*([^,，?？\n]{1,40}?)\s*[?？]")


def _addressee(body: str, speakers) -> str | None:
    """The speaker (a key of ``speakers``: normalised names and first names) ``body`` calls by name."""
    for called in (_CALLED_FIRST.search(body), *_CALLED_LAST.finditer(body)):
        if called is not None and (key := normalize(called.group(1))) in speakers:
            return key
    return None


def only_asks(text: str) -> bool:
    """Whether every turn the unit ``text`` states ends in a question ("How's Priya?"): it asks, and states
    nothing a question could be answered with but what its words assume. False for a text that is no turn."""
    said = [t for t, quoted in said_turns(text) if not quoted]
    return bool(said) and all(_ASKS.search(t.body) is not None for t in said)


def question_answered(previous: str, text: str, speakers=frozenset()) -> str | None:
    """The question the unit ``text`` answers: the last turn of the unit before it, ``previous`` (as
    written there, head included), where that turn ends in a question and the first turn of ``text``
    is another speaker's, the same day, and the question calls nobody else by name (``speakers``:
    the conversation's, normalised, first names too); else None. A reply ("two hours, four minutes!",
    "she got the job") often says nothing of what it is about; the question before it does."""
    asked, said = said_turns(previous), said_turns(text)
    if not asked or not said or asked[-1][1] or said[0][1]:
        return None
    question, reply = asked[-1][0], said[0][0]
    if (question.stamp[:10] != reply.stamp[:10] or normalize(question.speaker) == normalize(reply.speaker)
            or _ASKS.search(question.body) is None):
        return None
    called = _addressee(question.body, speakers)
    if called is not None and called not in speaker_names(reply.speaker):
        return None
    return previous[previous.rfind("\n\n") + 2:] if "\n\n" in previous else previous


def speaker_names(speaker: str) -> frozenset[str]:
    """The keys a speaker goes by: their normalised name and its first word ("alice smith", "alice");
    none for a name that normalises to nothing."""
    key = normalize(speaker)
    return frozenset((key, key.split(" ", 1)[0])) if key else frozenset()


def speaker_key(text: str) -> str | None:
    """The normalised name (``entities.normalize``) of the turn's speaker; None for a text that is no turn."""
    turn = parse_turn(text)
    return normalize(turn.speaker) if turn is not None else None


def about(text: str, name: str) -> bool:
    """Whether the turn ``text`` is about the person whose normalised name is ``name``: spoken by them
    (the speaker's name, or its first word: "Alice" speaks as "Alice Smith"), or naming them in what
    is said. A text that is no turn is about whatever it mentions."""
    turn = parse_turn(text)
    if turn is not None:
        if name in speaker_names(turn.speaker):
            return True
        text = turn.body
    return any(name == m or name in m.split() for m in mentions(text))


def named_speakers(question: str, speakers) -> list[str]:
    """The keys of ``speakers`` (normalised names, or first names) that ``question`` names: inside a
    capitalised name it mentions ("What is Yara's job?" names "yara"), never a lower-case word; the
    longest key first, and no key inside words a longer one took ("Yara Smith" is not also "yara").
    Chinese writes names with neither capitals nor spaces: a key in CJK characters (two or more) is
    named where the question holds it ("周静的仓鼠叫什么" names 周静), a longer such key first."""
    out = []
    folded = fold_han(question)
    for key in sorted((k for k in speakers if len(k) >= 2 and CJK_CHAR.match(k)), key=len, reverse=True):
        if fold_han(key) in folded and not any(key in taken for taken in out):
            out.append(key)
    for m in sorted(mentions(question)):
        words = m.split()
        taken = [False] * len(words)
        for n in range(len(words), 0, -1):
            for i in range(len(words) - n + 1):
                key = " ".join(words[i:i + n])
                if key in speakers and not any(taken[i:i + n]):
                    taken[i:i + n] = [True] * n
                    if key not in out:
                        out.append(key)
    return out


def without_names(question: str, names, stand_in: str = "someone") -> str:
    """``question`` with every name of ``names`` (normalised keys, as ``named_speakers`` gives them)
    written as ``stand_in``: "What is Yara's job?" -> "What is someone's job?". Among one person's turns
    the name says nothing, and an embedding of a short turn is mostly its speaker's name."""
    for name in sorted(names, key=len, reverse=True):
        pattern = r"(?<![\w])" + r"[\W_]+".join(re.escape(w) for w in name.split()) + r"(?![\w])"
        question = re.sub(pattern, stand_in, question, flags=re.IGNORECASE)
    return question
