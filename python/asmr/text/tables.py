"""What a table row is about: the key of its first cell ("| Events officer | Wu Ting | 8033 |" is
about "events officer", "| 活动专员 | 吴婷婷 | 8033 |" about 活动专员), and where a text names such
keys. Recall's bridge follows a hit to the rows it names; the extractive answer reads on to them.
And what a row says (``row_statements``): each value under its column's name, as the support check
reads a table.
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
    return row_key(cells(lines[1])[0])


# A pipe table's rule line, under its header: "|---|:--:|" (``units.chunk`` reads tables by it too)
TABLE_RULE = re.compile(r"\|?[ \t]*:?-+:?[ \t]*(?:\|[ \t]*:?-+:?[ \t]*)*\|?$")


def cells(line: str) -> list[str]:
    """The cells of one line of a pipe table, stripped ("| Oak room | 12 |" → ["Oak room", "12"])."""
    return [c.strip() for c in line.strip().strip("|").split("|")]


def _statements(header: list[str], row: list[str]) -> list[str]:
    """One body row as what it states: a line for each cell after the first, which is said of the row's
    first cell behind its column's name ("Oak room: Seats 12", "少儿证借期21天"; the name left out where
    the cell already says it)."""
    out = []
    for name, cell in zip(header[1:] + [""] * len(row), row[1:]):
        if not cell:
            continue
        if name and name.lower() not in cell.lower():
            cell = name + ("" if CJK_CHAR.match(name[-1]) else " ") + cell
        # Chinese is written without a break between the subject and what is said of it
        out.append(row[0] + ("" if CJK_CHAR.match(row[0][-1:]) and CJK_CHAR.match(cell) else ": ") + cell)
    return out or ["| " + " | ".join(row) + " |"]


def _tables(lines: list[str], lone_row: bool = True):
    """The pipe tables of ``lines``: (first line, line after the last, header cells, body rows' cells),
    for a header line with its rule line under it; with ``lone_row``, also for a text of just two such
    lines (the unit ``units.chunk`` gives each row of a table: its header line, then the row)."""
    if lone_row and len(lines) == 2 and all(ln.strip().startswith("|") for ln in lines):
        yield 0, 2, cells(lines[0]), [cells(lines[1])]
        return
    i = 0
    while i + 1 < len(lines):
        line, rule = lines[i].strip(), lines[i + 1].strip()
        if line.startswith("|") and "-" in rule and TABLE_RULE.match(rule):
            j = i + 2
            while j < len(lines) and lines[j].strip().startswith("|"):
                j += 1
            yield i, j, cells(line), [cells(ln) for ln in lines[i + 2:j]]
            i = j
        else:
            i += 1


def row_statements(text: str) -> str:
    """``text`` with each pipe table read out as statements, a line for each cell of a body row after
    the first: "Oak room: Seats 12" and "Oak room: Floor 2" for the columns Room, Seats and
    Floor and the row | Oak room | 12 | 2 |; the header and its rule line dropped. A row states its
    values under names it does not repeat, so "the Oak room seats 12" is said by it only as a reader
    reads it; and each cell is a statement of its own, so a "no" in one column denies nothing of the
    others. A text of a header line and one row (the unit ``units.chunk`` gives each row of a table) is
    read the same way; any other text is left as it is."""
    if "|" not in text:
        return text
    lines = text.split("\n")
    out, done = [], 0
    for i, j, header, rows in _tables(lines):
        out.extend(lines[done:i])
        out.extend(s for row in rows for s in _statements(header, row))
        done = j
    return "\n".join(out + lines[done:])


def body_rows(text: str) -> list[list[str]]:
    """The body rows of the pipe tables in ``text`` (the rows after a header and its |---| line), each as
    its cells."""
    return [row for *_, rows in _tables(text.splitlines(), lone_row=False) for row in rows if len(row) > 1]


def column_names(text: str) -> list[str]:
    """The names of the columns after the first of ``text``'s pipe tables (what ``row_statements`` puts
    before a row's values)."""
    return [name for *_, header, _ in _tables(text.split("\n")) for name in header[1:] if name]


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
