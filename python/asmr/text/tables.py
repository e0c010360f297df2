"""What a table row is about: the key of its first cell ("| Events officer | Wu Ting | 8033 |" is
about "events officer", "| 活动专员 | 吴婷婷 | 8033 |" about 活动专员), and where a text names such
keys. Recall's bridge follows a hit to the rows it names; the extractive answer reads on to them.
"""
from __future__ import annotations

import re

from .cjk import CJK_CHAR
from .entities import COMMON_WORDS, normalize

_BRACKETED = re.compile(r"[(（][^)）]*[)）]")
# A longer first cell is a sentence, not a name (and bounds the lookups of ``keys_named``)
ROW_KEY_MAX_CHARS, ROW_KEY_MAX_WORDS = 12, 5
# A run of CJK characters and the Latin letters and digits written into it without spaces ("it联络人",
# "3号楼"): where a CJK key is looked for
_CJK_RUN = re.compile(f"(?:{CJK_CHAR.pattern}|[a-z0-9])+")
_ASCII_WORD = re.compile(r"[a-z0-9]")


def row_key(cell: str) -> str | None:
    """A table row's first cell as a key ("副馆长（排班、人事）" as 副馆长, "Facilities supervisor" as
    "facilities supervisor"); None for one that names nothing: a number, a date, a common word, or a
    sentence."""
    key = normalize(_BRACKETED.sub(" ", cell))
    if CJK_CHAR.search(key):
        # Latin letters and digits may be part of it ("IT联络人"), two CJK characters at least
        ok = len(key) <= ROW_KEY_MAX_CHARS and _CJK_RUN.fullmatch(key) is not None \
            and sum(bool(CJK_CHAR.match(c)) for c in key) >= 2
        return key if ok else None
    words = key.split()
    if not words or len(words) > ROW_KEY_MAX_WORDS or not all(w.isalpha() for w in words) or len(key) < 3:
        return None
    return None if len(words) == 1 and words[0] in COMMON_WORDS else key


def table_row_key(text: str) -> str | None:
    """The key of a table row unit (its table's header line, then the row: the form the chunker gives
    each row of a pipe table); None for other text."""
    lines = text.strip().split("\n")
    if len(lines) != 2 or "|" not in lines[0] or "|" not in lines[1]:
        return None
    return row_key(lines[1].strip().strip("|").split("|")[0])


def body_rows(text: str) -> list[list[str]]:
    """The body rows of the pipe tables in ``text`` (the rows after a header and its |---| line), each as
    its cells."""
    rows, body = [], False
    for line in text.splitlines():
        line = line.strip()
        if not line.startswith("|"):
            body = False
            continue
        cells = [c.strip() for c in line.strip("|").split("|")]
        if all(set(c) <= set("-: ") for c in cells):
            body = True  # the header's rule: rows follow
        elif body and len(cells) > 1:
            rows.append(cells)
    return rows


def longest_keys(keys) -> tuple[int, int]:
    """The longest of ``keys``: Latin ones in words, CJK ones in characters (what ``keys_named`` reads)."""
    return (max((len(k.split()) for k in keys if not CJK_CHAR.search(k)), default=0),
            max((len(k) for k in keys if CJK_CHAR.search(k)), default=0))


def keys_named(text: str, keys, most_words: int, most_chars: int) -> set[str]:
    """The ``keys`` (a container of ``row_key`` keys) that ``text`` names: a Latin key as a run of
    whole words (``most_words`` at most), a CJK key as a substring (``most_chars`` at most;
    ``longest_keys``)."""
    text = normalize(text)
    found: set[str] = set()
    words = text.split()
    for i in range(len(words)):
        for n in range(1, min(most_words, len(words) - i) + 1):
            if (key := " ".join(words[i:i + n])) in keys:
                found.add(key)
    if most_chars:
        for run in _CJK_RUN.findall(text):
            if not CJK_CHAR.search(run):
                continue  # a Latin word alone: every CJK key holds two CJK characters
            for i in range(len(run)):
                if i and _ASCII_WORD.match(run[i]) and _ASCII_WORD.match(run[i - 1]):
                    continue  # a key does not start inside a Latin word ("edit联络人" names no "it联络人")
                for n in range(2, min(most_chars, len(run) - i) + 1):
                    end = i + n
                    if end < len(run) and _ASCII_WORD.match(run[end - 1]) and _ASCII_WORD.match(run[end]):
                        continue  # nor end inside one
                    if run[i:end] in keys:
                        found.add(run[i:end])
    return found


def names_key(text: str, key: str) -> bool:
    """Whether ``text`` (normalised, between spaces, as a question is read) names ``key``."""
    return f" {key} " in text or bool(CJK_CHAR.search(key)) and key in text
