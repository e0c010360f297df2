"""Chunking a document into memory units by meaning: headings, paragraphs, sentence groups,
lists and tables.

A hand-written line scanner, not a Markdown library: units must point at exact offsets in
the text as ingested (CRLF included), and ingest needs tens of thousands of units a second.
Only the block structure that shapes meaning is recognised (ATX and setext headings,
paragraphs, fenced code, lists, pipe tables, thematic breaks); everything else, blockquotes
and indented code included, is paragraph text.

Every chunk satisfies ``text[offset_start:offset_end] == content`` except ``table_row``,
whose content is the header line, a newline and the row line (its span is the row line).
Spans carry no surrounding whitespace. No chunk spans more than ``hard_max_chars``: a
paragraph, list item or table row longer than ``max_unit_chars`` also gets ``sentence``
children (groups of whole sentences), and one longer than ``hard_max_chars`` is replaced
by them; lists and tables longer than that lose their own chunk but keep their items and
rows. A sentence is only ever cut when it alone is longer than ``hard_max_chars`` (a huge
line with no sentence end); a fenced code block is only cut, at line ends, when it is.
``max_unit_chars`` and ``target_sentence_chars`` measure what a text says: a CJK character counts as
``text.cjk.CJK_CHAR_SIZE`` characters (``text.cjk.TextSizes``), so a Chinese paragraph gets children where an
English one as long in the embedder's tokens does (a whole paragraph's vector blurs the sentence a
question matches). ``hard_max_chars`` bounds a span's characters.
"""
from __future__ import annotations

import re
from bisect import bisect_right
from itertools import accumulate

from .model import Chunk, Chunked, Link
from ..text.cjk import TextSizes
from ..text.sentences import cut_long, sentence_groups, trim
from ..text.tables import TABLE_RULE

FORMATS = ("markdown", "text")

# Lines whose first non-blank character is not one of these (and that hold no '|') are
# plain paragraph text: the common case, decided without a regex.
_SPECIAL_FIRST = frozenset("#`~-*+_=0123456789")
# The patterns below match a line with its surrounding whitespace stripped.
_ATX = re.compile(r"(#{1,6})(?:[ \t]+|$)")
_ATX_CLOSE = re.compile(r"(?:^|[ \t]+)#+$")
_FENCE = re.compile(r"`{3,}|~{3,}")
_THEMATIC_BREAK = re.compile(r"([-*_])(?:[ \t]*\1){2,}$")
_SETEXT = re.compile(r"=+$|-{2,}$")
_ITEM = re.compile(r"([-*+]|(\d{1,9})[.)])(?:([ \t]+)|$)")
# Plain text paragraphs end at a blank line; CRLF, LF and CR-only line ends all count.
_NEWLINE = r"(?:\r\n|\r(?!\n)|\n)"
_PARA_BREAK = re.compile(rf"{_NEWLINE}[^\S\r\n]*{_NEWLINE}")

# [text](href "title"), not an image; the text holds no brackets, so "[cite:memo://...]"
# (citation markers are plain text) never matches.
_MD_LINK = re.compile(r"(?<!!)\[([^\[\]\n]*)\]\([ \t]*(<[^<>\n]*>|[^\s()<>]+)"
                      r"(?:[ \t]+(?:\"[^\"\n]*\"|'[^'\n]*'))?[ \t]*\)")
_ABSOLUTE_HREF = re.compile(r"[A-Za-z][A-Za-z0-9+.\-]*:|//")
# "section 4.2", "Sec. 3", "§3", "第3节"; "see (also)" / "参见" before it joins the link's text.
# Each branch opens with one character ([sS], §, 第) so the engine can skip to candidates;
# the lookbehind then refuses an "s" inside a word ("intersection 4").
_SECTION_REF = re.compile(r"[sS](?<![A-Za-z].)(?i:ections?|ecs?\.)[ \t]*(\d+(?:\.\d+)*)"
                          r"|§+[ \t]*(\d+(?:\.\d+)*)|第[ \t]*(\d+(?:\.\d+)*)[ \t]*[节章]")
_SEE_BEFORE = re.compile(r"(?:(?<![A-Za-z])(?i:see)(?:[ \t]+(?i:also))?[ \t]+|参见|参看|参阅|详见|见)\Z")


def chunk_text(text: str, fmt: str, *, max_unit_chars: int = 1200, target_sentence_chars: int = 400,
               hard_max_chars: int = 4000, body_start: int = 0) -> Chunked:
    """Split ``text[body_start:]`` into units; ``fmt`` is "markdown" or "text" (no markup)."""
    if fmt not in FORMATS:
        raise ValueError(f"fmt {fmt!r}: must be one of {FORMATS}")
    if not 0 < target_sentence_chars <= hard_max_chars or not 0 < max_unit_chars <= hard_max_chars:
        raise ValueError("need 0 < target_sentence_chars <= hard_max_chars and "
                         "0 < max_unit_chars <= hard_max_chars")
    if not 0 <= body_start <= len(text):
        raise ValueError(f"body_start {body_start} is outside the text (length {len(text)})")
    chunker = _Chunker(text, fmt == "markdown", max_unit_chars, target_sentence_chars, hard_max_chars)
    if fmt == "markdown":
        chunker.scan_markdown(body_start)
    else:
        chunker.scan_text(body_start)
    return Chunked(chunker.chunks, chunker.links)


def _cell_count(row: str) -> int:
    inner = row[1:] if row.startswith("|") else row
    if inner.endswith("|") and not inner.endswith("\\|"):
        inner = inner[:-1]
    return inner.count("|") - inner.count("\\|") + 1


def _indent_width(line: str, lead: int) -> int:
    return lead if "\t" not in line[:lead] else len(line[:lead].expandtabs(4))


class _Chunker:
    """Emits chunks in document order while tracking the heading stack."""

    def __init__(self, text: str, markdown: bool, max_unit: int, target: int, hard_max: int):
        self.text = text
        self.markdown = markdown
        self.max_unit = max_unit
        self.target = target
        self.hard_max = hard_max
        self.size = TextSizes(text)  # a span's size against max_unit and target (CJK characters count more)
        self.chunks: list[Chunk] = []
        self.links: list[Link] = []
        self.headings: list[tuple[int, int, str]] = []  # (level, chunk index, title), outer first
        self.path: tuple[str, ...] = ()
        self.parent: int | None = None  # the innermost heading: parent of top-level blocks
        self.pending: tuple[int, int, str] | None = None  # a paragraph that may lead in a list

    # -- emitting ---------------------------------------------------------------------------

    def add(self, kind: str, start: int, end: int, content: str, parent: int | None) -> int:
        self.chunks.append(Chunk(kind, start, end, content, self.path, parent))
        return len(self.chunks) - 1

    def heading(self, level: int, start: int, end: int, content: str) -> None:
        while self.headings and self.headings[-1][0] >= level:
            self.headings.pop()
        parent = self.headings[-1][1] if self.headings else None
        title = content if "\n" not in content else " ".join(content.split())
        self.path = (*self.path[:len(self.headings)], title)
        index = len(self.chunks)
        self.headings.append((level, index, title))
        self.add("heading", start, end, content, parent)
        self.parent = index
        self.find_links(index, content, sections=False)

    def unit(self, kind: str, start: int, end: int, span: str, parent: int | None,
             content: str | None = None) -> int | None:
        """Emit a paragraph, list item or table row, with sentence groups when it is long.

        Returns the unit's index, or None when it was too long to emit whole.
        """
        content = span if content is None else content
        if self.size(start, end) <= self.max_unit:
            index = self.add(kind, start, end, content, parent)
            self.find_links(index, span)
            return index
        groups = sentence_groups(self.text, start, end, self.target, self.hard_max, self.size)
        index = None
        if end - start <= self.hard_max:
            index = self.add(kind, start, end, content, parent)
            if len(groups) <= 1:  # one sentence: a child would repeat its parent
                self.find_links(index, span)
                return index
            parent = index
        first = len(self.chunks)
        for a, b, sentence in groups:
            self.add("sentence", a, b, sentence, parent)
        # A reference belongs to the sentence group that holds its first character.
        group_starts = [g[0] for g in groups]
        for pos, kind_, target, text in self.links_in(span, sections=True):
            group = max(bisect_right(group_starts, start + pos) - 1, 0)
            self.links.append(Link(first + group, kind_, target, text))
        return index

    def paragraph(self, piece: tuple[int, int, str]) -> None:
        self.unit("paragraph", *piece, self.parent)

    def flush_pending(self) -> None:
        if self.pending is not None:
            self.paragraph(self.pending)
            self.pending = None

    def close_paragraph(self, lines_start: int, lines_end: int, offs: list[int]) -> None:
        """A paragraph ended: keep it back in case it leads in a list that follows."""
        self.flush_pending()
        self.pending = trim(self.text, offs[lines_start], offs[lines_end])

    # -- cross-references -------------------------------------------------------------------

    def links_in(self, span: str, sections: bool = True):
        """(position in span, kind, target, text) for each cross-reference in ``span``."""
        if self.markdown and "](" in span:
            for m in _MD_LINK.finditer(span):
                label, href = m.group(1), m.group(2)
                if href.startswith("<"):
                    href = href[1:-1].strip()
                if not href or _ABSOLUTE_HREF.match(href) or label.startswith("cite:"):
                    continue
                yield m.start(), ("section" if href.startswith("#") else "document"), href, label
        # Most spans name no section: rule them out with substring tests before the regex runs.
        if sections and ("§" in span or "第" in span or "sec" in span.lower()):
            for m in _SECTION_REF.finditer(span):
                start = m.start()
                see = _SEE_BEFORE.search(span, max(0, start - 12), start)
                if see is not None:
                    start = see.start()
                yield start, "section", m.group(1) or m.group(2) or m.group(3), span[start:m.end()]

    def find_links(self, index: int, span: str, sections: bool = True) -> None:
        for _, kind, target, text in self.links_in(span, sections):
            self.links.append(Link(index, kind, target, text))

    # -- plain text -------------------------------------------------------------------------

    def scan_text(self, body_start: int) -> None:
        text = self.text
        if text.find("\n", body_start) < 0 and text.find("\r", body_start) < 0:  # one line: one paragraph
            piece = trim(text, body_start, len(text))
            if piece is not None:
                self.paragraph(piece)
            return
        pos = body_start
        for m in _PARA_BREAK.finditer(self.text, body_start):
            piece = trim(self.text, pos, m.start())
            if piece is not None:
                self.paragraph(piece)
            pos = m.end()
        piece = trim(self.text, pos, len(self.text))
        if piece is not None:
            self.paragraph(piece)

    # -- markdown ---------------------------------------------------------------------------

    def scan_markdown(self, body_start: int) -> None:
        text = self.text
        lines = text[body_start:].splitlines(True)
        offs = list(accumulate(map(len, lines), initial=body_start))  # offs[i]: start of line i
        n = len(lines)
        para = -1  # first line of the open paragraph, -1 when none is open
        i = 0
        while i < n:
            line = lines[i]
            s = line.strip()
            if not s:
                if para >= 0:
                    self.close_paragraph(para, i, offs)
                    para = -1
                i += 1
                continue
            if s[0] not in _SPECIAL_FIRST and "|" not in s:  # plain text: the common case
                if para < 0:
                    para = i
                i += 1
                continue
            lead = len(line) - len(line.lstrip())
            if lead <= 3:
                if para >= 0 and _SETEXT.match(s):
                    self.flush_pending()
                    piece = trim(text, offs[para], offs[i])
                    self.heading(1 if s[0] == "=" else 2, *piece)
                    para = -1
                    i += 1
                    continue
                m = _ATX.match(s)
                fence = None if m else _FENCE.match(s)
                if m or (fence and not (s[0] == "`" and "`" in s[fence.end():])) \
                        or _THEMATIC_BREAK.match(s):
                    if para >= 0:
                        self.close_paragraph(para, i, offs)
                        para = -1
                    self.flush_pending()
                    if m:
                        self.atx_heading(s, m, offs[i] + lead)
                        i += 1
                    elif fence:
                        i = self.fenced_code(lines, offs, i, fence.group())
                    else:
                        i += 1  # a thematic break only separates blocks
                    continue
                m = _ITEM.match(s)
                # Inside a paragraph only a bullet or "1." starts a list ("2024. was..." does not).
                if m and (para < 0 or m.group(2) is None or int(m.group(2)) == 1):
                    if para >= 0:
                        self.close_paragraph(para, i, offs)
                        para = -1
                    i = self.list_block(lines, offs, i)
                    continue
            if "|" in s and i + 1 < n and self.is_table_start(s, lines[i + 1]):
                if para >= 0:
                    self.close_paragraph(para, i, offs)
                    para = -1
                self.flush_pending()
                i = self.table(lines, offs, i)
                continue
            if para < 0:
                para = i
            i += 1
        if para >= 0:
            self.close_paragraph(para, n, offs)
        self.flush_pending()

    def atx_heading(self, s: str, m: re.Match, line_start: int) -> None:
        title = s[m.end():]
        if title.endswith("#"):
            close = _ATX_CLOSE.search(title)
            if close is not None:
                title = title[:close.start()].rstrip()
        if title:  # a bare "#" is no heading worth a unit
            start = line_start + m.end()
            self.heading(len(m.group(1)), start, start + len(title), title)

    def fenced_code(self, lines: list[str], offs: list[int], i: int, fence: str) -> int:
        """A fenced code block is one paragraph, never split unless longer than hard_max."""
        j, n = i + 1, len(lines)
        while j < n:
            s = lines[j].strip()
            j += 1
            if s.startswith(fence) and not s.strip(fence[0]):
                break
        start, end = offs[i], offs[j]
        if end - start <= self.hard_max:
            piece = trim(self.text, start, end)
            if piece is not None:
                self.add("paragraph", *piece, self.parent)
        else:
            for piece in cut_long(self.text, start, end, self.hard_max, prefer_newline=True):
                self.add("paragraph", *piece, self.parent)
        return j

    def starts_block(self, s: str, lines: list[str], j: int, width: int) -> bool:
        """Whether a non-blank, non-item line starts a heading, fence, break or table."""
        if width <= 3 and (_ATX.match(s) or _FENCE.match(s) or _THEMATIC_BREAK.match(s)):
            return True
        return "|" in s and j + 1 < len(lines) and self.is_table_start(s, lines[j + 1])

    def list_block(self, lines: list[str], offs: list[int], i: int) -> int:
        """Consume the list starting at line ``i``; return the line after it.

        Items are its top-level items: an item line indented less than the current item's
        content column. Deeper items and indented or lazy continuation lines belong to the
        current item.
        """
        n = len(lines)
        items: list[list[int]] = []  # [content start offset, last line of the item]
        ordered = None
        content_col = 0
        last = i
        blank = False
        j = i
        while j < n:
            line = lines[j]
            s = line.strip()
            if not s:
                blank = True
                j += 1
                continue
            lead = len(line) - len(line.lstrip())
            width = _indent_width(line, lead)
            if items and width >= content_col:  # nested item or continuation
                items[-1][1] = last = j
                blank = False
                j += 1
                continue
            m = _ITEM.match(s) if width <= 3 or items else None
            if m and _THEMATIC_BREAK.match(s):
                m = None
                if width <= 3:
                    break
            if m:
                if ordered is not None and (m.group(2) is not None) != ordered:
                    break  # a bullet list after a numbered one is another list
                ordered = m.group(2) is not None
                spaces = m.group(3) or ""
                content_col = width + len(m.group(1)) + (len(spaces) if 0 < len(spaces) <= 4 else 1)
                items.append([offs[j] + lead + m.end(), j])
                last = j
                blank = False
                j += 1
                continue
            if blank or self.starts_block(s, lines, j, width):
                break
            items[-1][1] = last = j  # lazy continuation of the item's paragraph
            j += 1

        text = self.text
        lead_in = self.pending
        self.pending = None
        if lead_in is not None and (not lead_in[2].endswith((":", "："))
                                    or self.size(lead_in[0], lead_in[1]) > self.max_unit):
            self.paragraph(lead_in)
            lead_in = None
        first_item = offs[i] + len(lines[i]) - len(lines[i].lstrip())
        list_end = offs[last + 1]
        whole = trim(text, lead_in[0] if lead_in else first_item, list_end)
        if lead_in is not None and whole[1] - whole[0] > self.hard_max:
            self.paragraph(lead_in)  # too long together: the lead-in stands alone
            lead_in = None
            whole = trim(text, first_item, list_end)
        parent = self.parent
        if whole[1] - whole[0] <= self.hard_max:
            parent = self.add("list", *whole, self.parent)
            if lead_in is not None:
                self.find_links(parent, lead_in[2])
        for start, item_last in items:
            piece = trim(text, start, offs[item_last + 1])
            if piece is not None:
                self.unit("list_item", *piece, parent)
        return last + 1

    def is_table_start(self, s: str, next_line: str) -> bool:
        sep = next_line.strip()
        return ("|" in sep and "-" in sep and TABLE_RULE.match(sep) is not None
                and _cell_count(sep) == _cell_count(s))

    def table(self, lines: list[str], offs: list[int], i: int) -> int:
        """A pipe table: one chunk for the table, one per body row carrying the header line."""
        j, n = i + 2, len(lines)
        while j < n and "|" in lines[j] and lines[j].strip():
            j += 1
        text = self.text
        whole = trim(text, offs[i], offs[j])
        header = lines[i].strip()
        parent = self.parent
        if whole[1] - whole[0] <= self.hard_max:
            parent = self.add("table", *whole, self.parent)
            self.find_links(parent, header)
        for r in range(i + 2, j):
            start, end, row = trim(text, offs[r], offs[r + 1])
            self.unit("table_row", start, end, row, parent, content=f"{header}\n{row}")
        return j
