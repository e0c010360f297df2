"""What a parsed document and its chunks look like before the store gives them ids.

Offsets are Python string indices (code points) into ``Document.text``, the text
stored as ingested: ``text[chunk.offset_start:chunk.offset_end]`` is exactly the
chunk's source span.
"""
from __future__ import annotations

from dataclasses import dataclass, field

UNIT_KINDS = ("paragraph", "sentence", "list", "list_item", "table", "table_row", "heading")
DOC_TYPES = ("spec", "manual", "faq", "changelog", "notes", "other")
DOCUMENT_STATUSES = ("active", "retired")  # what `asmr docs list --status` tells apart
DOC_FORMATS = ("markdown", "text", "html", "chat")  # chat: a conversation as units.chat renders it
FILE_FORMATS = ("markdown", "text", "html")  # what a file read as one document may be
LINK_KINDS = ("section", "document")


class InputError(ValueError):
    """Bad input: the message names the input and the reason."""


@dataclass(slots=True)
class Document:
    doc_id: str
    text: str  # the text units point into; for HTML, the extracted text
    fmt: str  # one of DOC_FORMATS
    title: str = ""
    doc_type: str = "other"
    effective_date: str | None = None  # ISO 8601 date or datetime
    source: str = ""  # where it came from: a path, or "file.jsonl:LINE"
    raw: str | None = None  # the original markup when it differs from ``text`` (HTML)
    path: str | None = None  # path relative to the ingest root, for resolving relative links


@dataclass(slots=True)
class Chunk:
    kind: str  # one of UNIT_KINDS
    offset_start: int
    offset_end: int
    content: str  # == text[offset_start:offset_end], except table_row: header line + "\n" + row line
    section_path: tuple[str, ...] = ()
    parent: int | None = None  # index of the parent chunk in the same list; parents precede children


@dataclass(slots=True)
class Link:
    source: int  # index of the chunk that holds the reference
    kind: str  # "section": "see section 4" in the same document; "document": a link to another file
    target: str  # section number ("4", "4.2"), or the link's href as written
    text: str  # the reference as it appears in the chunk


@dataclass(slots=True)
class Chunked:
    chunks: list[Chunk] = field(default_factory=list)
    links: list[Link] = field(default_factory=list)
