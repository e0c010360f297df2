"""HTML pages as the Markdown-like text the chunker reads (headings, paragraphs, list items, pipe tables)."""
from __future__ import annotations

import re
from html.parser import HTMLParser

_DROPPED = frozenset({"script", "style", "noscript", "template"})
_BLOCKS = frozenset({"p", "div", "section", "article", "header", "footer", "main", "nav", "aside",
                     "blockquote", "figure", "figcaption", "form", "address", "dl", "dt", "dd",
                     "fieldset", "details", "summary", "body", "html", "caption", "hr", "br"})
_HEADINGS = {f"h{n}": n for n in range(1, 7)}
_TABLE_TAGS = frozenset({"table", "tr", "td", "th"})
_ABSOLUTE_HREF = re.compile(r"[A-Za-z][A-Za-z0-9+.\-]*:|//")


class _HtmlToText(HTMLParser):
    """Turns HTML into the Markdown the chunker reads: headings, paragraphs, list items, pipe tables.

    Text is collected per block and its whitespace collapsed when the block ends. Lines of
    one list or one table stay on adjacent lines; other blocks are separated by a blank line.
    Inside a table cell, block tags are only spaces, and a nested table is flattened into the
    cell's text.
    """

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.out: list[tuple[str, str]] = []  # (group, line); group is "block", "list" or "table"
        self.buf: list[str] = []
        self.links: list[tuple[int, str | None]] = []  # (position in buf, href) of each open <a>
        self.dropped = 0  # depth inside script/style/noscript/template
        self.in_head = False
        self.title: str | None = None
        self.in_title = False
        self.h1: str | None = None
        self.heading = 0  # level of the open heading, 0 if none
        self.lists: list[str] = []  # "ul"/"ol", innermost last
        self.item_open = False  # the open <li> has not written its marker line yet
        self.pre = 0
        self.tables: list[int] = []  # rows written so far, per open table
        self.row: list[str] | None = None
        self.cell_open = False
        self.nested_tables = 0  # tables inside a cell, flattened into its text

    def take_text(self) -> str:
        text = "".join(self.buf)
        self.buf = []
        self.links = []
        return text if self.pre else " ".join(text.split())

    def flush(self) -> None:
        """End the current block of text."""
        if self.cell_open:
            self.buf.append(" ")
            return
        text = self.take_text()
        if not text.strip():
            return
        if self.heading:
            self.out.append(("block", "#" * self.heading + " " + text))
            if self.heading == 1 and self.h1 is None:
                self.h1 = text
        elif self.pre:
            self.out.append(("block", "```\n" + text.strip("\n") + "\n```"))
        elif self.lists and self.item_open:
            marker = "1." if self.lists[-1] == "ol" else "-"
            self.out.append(("list", "  " * (len(self.lists) - 1) + f"{marker} {text}"))
            self.item_open = False
        elif self.lists:  # more text of an item, after a nested list or a second paragraph
            self.out.append(("list", "  " * len(self.lists) + text))
        else:
            self.out.append(("block", text))

    def end_cell(self) -> None:
        if self.cell_open:
            self.cell_open = False
            self.row.append(self.take_text().replace("|", "\\|"))

    def end_row(self) -> None:
        self.end_cell()
        if self.row is None:
            return
        cells, self.row = self.row, None
        if not cells or not self.tables:
            return
        self.out.append(("table", "| " + " | ".join(cells) + " |"))
        self.tables[-1] += 1
        if self.tables[-1] == 1:  # the first row is the header
            self.out.append(("table", "|" + "---|" * len(cells)))

    def handle_starttag(self, tag, attrs):
        if tag in _DROPPED:
            self.dropped += 1
        elif tag == "head":
            self.in_head = True
        elif tag == "body":
            self.in_head = False
        elif tag == "title":
            self.in_title = True
            self.title = ""
        if self.dropped or self.in_head or tag in ("head", "title") or tag in _DROPPED:
            return
        if tag == "a":
            self.links.append((len(self.buf), dict(attrs).get("href")))
        elif self.cell_open and (tag in _TABLE_TAGS and (tag == "table" or self.nested_tables)):
            self.nested_tables += tag == "table"
            self.buf.append(" ")
        elif tag == "br" and self.pre:
            self.buf.append("\n")
        elif tag in _HEADINGS:
            self.flush()
            self.heading = _HEADINGS[tag] if not self.cell_open else 0
        elif tag in ("ul", "ol"):
            self.flush()
            self.lists.append(tag)
        elif tag == "li":
            self.flush()
            self.item_open = True
        elif tag == "pre":
            self.flush()
            self.pre += 1
        elif tag == "table":
            self.flush()
            self.tables.append(0)
        elif tag == "tr":
            self.end_row()
            self.flush()
            self.row = []
        elif tag in ("td", "th"):
            self.end_cell()
            self.flush()
            self.cell_open = self.row is not None
        elif tag in _BLOCKS:
            self.flush()

    def handle_endtag(self, tag):
        if tag in _DROPPED:
            self.dropped = max(self.dropped - 1, 0)
            return
        if tag == "head":
            self.in_head = False
            return
        if tag == "title":
            self.in_title = False
            return
        if self.dropped or self.in_head:
            return
        if tag == "a":
            if self.links:
                at, href = self.links.pop()
                inner = "".join(self.buf[at:])
                label = " ".join(inner.split())
                if label and href and not _ABSOLUTE_HREF.match(href) and not any(c in label for c in "[]"):
                    href = f"<{href}>" if any(c in href for c in " ()") else href
                    # Whitespace at the label's edges stays outside the brackets.
                    before = " " if inner[:1].isspace() else ""
                    after = " " if inner[-1:].isspace() else ""
                    self.buf[at:] = [f"{before}[{label}]({href}){after}"]
        elif self.cell_open and self.nested_tables and tag in _TABLE_TAGS:
            self.nested_tables -= tag == "table"
            self.buf.append(" ")
        elif tag in _HEADINGS:
            self.flush()
            self.heading = 0
        elif tag in ("ul", "ol"):
            self.flush()
            if self.lists:
                self.lists.pop()
        elif tag == "li":
            self.flush()
            self.item_open = False
        elif tag == "pre":
            self.flush()
            self.pre = max(self.pre - 1, 0)
        elif tag in ("td", "th"):
            self.end_cell()
        elif tag == "tr":
            self.end_row()
        elif tag == "table":
            self.end_row()
            if self.tables:
                self.tables.pop()
        elif tag in _BLOCKS:
            self.flush()

    def handle_data(self, data):
        if self.in_title:
            self.title += data
        elif not self.dropped and not self.in_head:
            self.buf.append(data)

    def result(self) -> tuple[str, str]:
        self.close()
        self.end_row()
        self.flush()
        parts = []
        previous = None
        for group, line in self.out:
            if parts:
                parts.append("\n" if group == previous and group != "block" else "\n\n")
            parts.append(line)
            previous = group
        title = " ".join((self.title or "").split()) or self.h1 or ""
        return "".join(parts) + "\n", title


def html_to_text(html: str) -> tuple[str, str]:
    """Markdown-like text of an HTML page and its title (<title>, else the first <h1>)."""
    parser = _HtmlToText()
    parser.feed(html)
    return parser.result()
