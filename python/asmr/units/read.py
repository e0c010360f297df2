"""Reading inputs into Documents: Markdown, plain text and HTML files, and JSONL corpora.

Text is stored as ingested (no newline or Unicode normalisation), so units can point at
exact offsets in it. Files are decoded in blocks through an incremental UTF-8 decoder,
which streams a 50 MB single-line file and reports the byte offset of the first invalid
byte. Every problem with an input is an InputError whose message starts with the input's
name: a path, or ``path:line`` for a JSONL record.

A document with an effective date (its own: front matter, a record's ``effective_date``; else the
``default_date`` a reader is given: ``--effective-date``) has its relative time resolved as chat
turns have (``with_resolved_time``): "last week" is followed by "(2023-05-01 to 2023-05-07)". The
date is part of what the text says then: the same file read with the same date gives the same
text, so the same unit ids.
"""
from __future__ import annotations

import codecs
import io
import json
import os
import re
import stat
from collections.abc import Callable, Collection, Iterator
from dataclasses import replace
from datetime import datetime
from pathlib import Path
from typing import BinaryIO

from ..text.facts import key_facts
from ..text.relative_time import annotate
from .chunk import chunk_text
from .html_text import html_to_text
from .ids import check_name, doc_id_from_path
from .model import DOC_TYPES, FILE_FORMATS, Chunked, Document, InputError
from .turns import join_turns

BLOCK_BYTES = 1 << 20
ERROR_MODES = ("strict", "replace")
FORMAT_BY_SUFFIX = {".md": "markdown", ".markdown": "markdown", ".txt": "text", ".text": "text",
                    ".rst": "text", "": "text", ".html": "html", ".htm": "html"}

# Front matter: a "---" line at the very start, "key: value" lines, a closing "---" or "...".
_FRONT_MATTER = re.compile(r"---[ \t]*\r?\n(.*?)^(?:---|\.\.\.)[ \t]*(?:\r?\n|\Z)", re.S | re.M)
_FRONT_MATTER_KEY = re.compile(r"^[A-Za-z_][\w.-]*[ \t]*:", re.M)
_FRONT_MATTER_SCAN = 64 * 1024  # front matter is short: never scan a huge file for its end
_NON_BLANK = re.compile(r"\S")
# The first H1 of a Markdown body: "# Title" or "Title" over "===", outside code fences.
# Searching from a newline lets the regex engine skip ahead to candidates.
_H1_OR_FENCE = r"[ ]{0,3}(?:#[ \t]+([^\r\n]*)|(`{3,}|~{3,})|([^\s][^\r\n]*)\r?\n[ ]{0,3}=+[ \t]*(?:\r?\n|\r|$))"
_H1_AT_START = re.compile(_H1_OR_FENCE)
_ATX_CLOSING = re.compile(r"(?:^|[ \t]+)#+[ \t]*$")
_H1_AFTER_NEWLINE = re.compile("\n" + _H1_OR_FENCE)
# A JSON string may escape half of a surrogate pair ("\ud800"); UTF-8 cannot encode it, so the store cannot hold it.
_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def _input_error(name: str, reason: str) -> InputError:
    return InputError(f"{name}: {reason}")


# -- decoding -------------------------------------------------------------------------------

def _decode_file(path: Path | BinaryIO, name: str, errors: str) -> str:
    """The text of the file at ``path`` (or of an open binary file, which this closes), decoded in
    blocks; the BOM, if any, is dropped."""
    with (open(path, "rb") if isinstance(path, (str, os.PathLike)) else path) as f:
        try:
            want = min(os.fstat(f.fileno()).st_size + 1, BLOCK_BYTES)  # not a 1 MB buffer for a 4 kB file
        except (OSError, ValueError, io.UnsupportedOperation):
            want = BLOCK_BYTES
        block = f.read(want)
        if len(block) < want:  # the whole file: a buffered read stops short only at the end
            nul = block.find(b"\0")
            if nul >= 0:
                raise _input_error(name, f"binary file (NUL byte at offset {nul})")
            try:
                text = block.decode("utf-8", errors)
            except UnicodeDecodeError as e:
                raise _input_error(name, f"invalid UTF-8 at byte offset {e.start}; "
                                         "pass --errors replace to accept it") from None
            return text[1:] if text.startswith("\ufeff") else text
        decoder = codecs.getincrementaldecoder("utf-8")(errors=errors)
        parts = []
        offset = 0  # bytes read before the current block
        while True:
            nul = block.find(b"\0")
            if nul >= 0:
                raise _input_error(name, f"binary file (NUL byte at offset {offset + nul})")
            buffered = len(decoder.getstate()[0])  # an incomplete character held from the last block
            try:
                parts.append(decoder.decode(block, final=not block))
            except UnicodeDecodeError as e:
                raise _input_error(name, f"invalid UTF-8 at byte offset {offset - buffered + e.start}; "
                                         "pass --errors replace to accept it") from None
            if not block:
                break
            offset += len(block)
            block = f.read(BLOCK_BYTES)
    text = "".join(parts)
    return text[1:] if text.startswith("\ufeff") else text


def _realpath(path: str, fd: int | None = None, directory: bool = False) -> str:
    """``os.path.realpath(path)``; for an open file (or an existing directory) the kernel's own answer
    (one readlink of /proc/self/fd instead of an lstat per path component), where Linux gives it."""
    own = None
    try:
        if fd is None and directory:
            fd = own = os.open(path, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
        if fd is not None:
            real = os.readlink(f"/proc/self/fd/{fd}")
            if real.startswith("/") and not real.endswith(" (deleted)"):
                return real
    except (OSError, AttributeError):
        pass
    finally:
        if own is not None:
            os.close(own)
    return os.path.realpath(path)


_FILE_KINDS = ((stat.S_ISDIR, "a directory"), (stat.S_ISFIFO, "a FIFO"), (stat.S_ISSOCK, "a socket"),
               (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"))


def _open_regular(name: str) -> int:
    """A descriptor of the regular file ``name``, else an InputError saying what it is. Opened without
    blocking: a FIFO named ``x.md`` would otherwise wait for a writer forever."""
    try:
        fd = os.open(name, os.O_RDONLY | os.O_CLOEXEC | os.O_NONBLOCK)
    except OSError as e:
        raise _input_error(name, f"cannot read: {e.strerror or e}") from None
    mode = os.fstat(fd).st_mode
    if not stat.S_ISREG(mode):
        os.close(fd)
        kind = next((what for test, what in _FILE_KINDS if test(mode)), "not a regular file")
        raise _input_error(name, f"is {kind}, not a regular file")
    os.set_blocking(fd, True)
    return fd


def _check_errors(errors: str) -> None:
    if errors not in ERROR_MODES:
        raise ValueError(f"errors {errors!r}: must be one of {ERROR_MODES}")


def read_text_file(path: str | Path, errors: str = "strict") -> str:
    """The text of the regular file at ``path``, decoded as ``read_path`` decodes it; an InputError
    naming the file if it cannot be read."""
    _check_errors(errors)
    name = str(path)
    f = open(_open_regular(name), "rb")
    try:
        return _decode_file(f, name, errors)
    except OSError as e:
        raise _input_error(name, f"cannot read: {e.strerror or e}") from None


# -- metadata -------------------------------------------------------------------------------

def _check_type(name: str, value: str) -> str:
    if value not in DOC_TYPES:
        raise _input_error(name, f"document type {value!r} is not one of {', '.join(DOC_TYPES)}")
    return value


def check_encodable(name: str, field: str, value: str, errors: str | None = None) -> str:
    """``value`` if UTF-8 can encode it; a lone surrogate is an InputError naming ``name`` and ``field``,
    or with ``errors="replace"`` becomes U+FFFD (``errors="strict"``: the message says how to accept it)."""
    bad = _LONE_SURROGATE.search(value)
    if bad is None:
        return value
    if errors == "replace":
        return _LONE_SURROGATE.sub("\ufffd", value)
    hint = "; pass --errors replace to accept it" if errors == "strict" else ""
    raise _input_error(name, f"{field} holds a lone surrogate (U+{ord(bad.group()):04X}) at character "
                             f"{bad.start()}, which UTF-8 cannot encode{hint}")


# A Markdown fenced code block, from its opening fence to the closing one (or the end of the text).
_CODE_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})[^\n]*\n(?:.*?\n)?(?: {0,3}\1[`~]*[ \t]*$|\Z)",
                         re.MULTILINE | re.DOTALL)


_HEADING = re.compile(r"^ {0,3}(#{1,6})[ \t]+(.*)$", re.MULTILINE)


def _dated_sections(text: str, start: int, code: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """The spans of ``text`` (from ``start``) under a Markdown heading that states a date ("## September
    2026", "## 2026年9月", "### 2026-03-01"), to the next heading of its level or above: a changelog's
    "this month" under "September 2026" is September, whatever the page's own date. A line of fenced
    ``code`` (spans) is no heading ("# 2026-09-01 backup" in a shell block)."""
    spans, level, opened = [], 0, 0
    for m in _HEADING.finditer(text, start):
        if any(a <= m.start() < b for a, b in code):
            continue
        depth = len(m.group(1))
        if level and depth <= level:
            spans.append((opened, m.start()))
            level = 0
        if not level and any(f.kind == "date" for f in key_facts(m.group(2))):
            level, opened = depth, m.start()
    if level:
        spans.append((opened, len(text)))
    return spans


def _merged(spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """``spans`` sorted, overlapping ones joined (a code block inside a dated section)."""
    out: list[tuple[int, int]] = []
    for a, b in sorted(spans):
        if out and a <= out[-1][1]:
            out[-1] = (out[-1][0], max(out[-1][1], b))
        else:
            out.append((a, b))
    return out


def with_resolved_time(doc: Document, default_date: str | None = None) -> Document:
    """``doc`` with each relative time expression of its text ("yesterday", "last week", "next
    month", 上周) followed by the day or range it means on the document's effective date, else on
    ``default_date`` (both ISO 8601, checked by the reader): ``text.relative_time.annotate``, as a chat
    turn is written, so that BM25, the vectors, key facts and the verifier see the date. Markdown
    front matter is left as it is (the title and date were read from it). Without a date, or
    without relative time, the document is returned as it is; a conversation (``chat``) resolves
    each turn against its own time when it is read."""
    date = doc.effective_date or default_date
    if date is None or doc.fmt == "chat":
        return doc
    day = datetime.fromisoformat(date).date()
    body = front_matter(doc.text)[1] if doc.fmt == "markdown" else 0
    # fenced code says what it says: "yesterday" in a shell line or a string literal stays as written;
    # a section under a dated heading counts from its own date, which the words do not give
    code = [m.span() for m in _CODE_FENCE.finditer(doc.text, body)] if doc.fmt == "markdown" else []
    kept = code + _dated_sections(doc.text, body, code) if doc.fmt == "markdown" else []
    text, pos = doc.text[:body], body
    for start, end in [*_merged(kept), (len(doc.text), len(doc.text))]:
        text += annotate(doc.text[pos:start], day, skip_reference_day=False) + doc.text[start:end]
        pos = end
    if text == doc.text:
        return doc
    return replace(doc, text=text)


def check_date(name: str, value: str) -> str:
    try:
        datetime.fromisoformat(value)
    except (TypeError, ValueError):
        raise _input_error(name, f"effective date {value!r} is not an ISO 8601 date or datetime") from None
    return value


def front_matter(text: str) -> tuple[dict[str, str], int]:
    """Simple ``key: value`` front matter at the very start of ``text``, and where the body starts.

    Keys are lowercased and values lose surrounding quotes; lines that are not ``key: value``
    (comments, YAML lists) are ignored. Returns ``({}, 0)`` when there is none.
    """
    if not text.startswith("---"):
        return {}, 0
    window = min(len(text), _FRONT_MATTER_SCAN)
    m = _FRONT_MATTER.match(text, 0, window)
    # A document that merely opens with a thematic break has no "key:" line before the next one.
    if m is None or not _FRONT_MATTER_KEY.search(m.group(1)) or (m.end() == window < len(text)):
        return {}, 0
    fields = {}
    for line in m.group(1).splitlines():
        key, sep, value = line.partition(":")
        key = key.strip().lower()
        if not sep or not key or key.startswith("#") or line[:1].isspace():
            continue
        value = value.strip()
        if len(value) >= 2 and value[0] == value[-1] and value[0] in "\"'":
            value = value[1:-1]
        fields[key] = value
    return fields, m.end()


def first_h1(text: str, start: int = 0) -> str:
    """The text of the first level-1 heading at or after ``start``, outside code fences; "" if none."""
    fence = None
    m = _H1_AT_START.match(text, start)
    pos = start
    while True:
        if m is not None:
            if m.group(2):
                if fence is None:
                    fence = m.group(2)[0]
                elif m.group(2)[0] == fence:
                    fence = None
            elif fence is None:
                if m.group(1) is not None:
                    title = _ATX_CLOSING.sub("", m.group(1)).strip()
                else:
                    title = m.group(3).strip()
                if title:
                    return title
            # Continue at the line after the match start: a setext candidate spans two lines.
            pos = text.find("\n", m.start() + 1)
            if pos < 0:
                return ""
        m = _H1_AFTER_NEWLINE.search(text, pos)
        if m is None:
            return ""
        pos = m.start() + 1
        m = _H1_AT_START.match(text, pos)


# -- files ----------------------------------------------------------------------------------

def read_path(path: str | Path, *, root: Path | None = None, errors: str = "strict",
              doc_type: str | None = None, fmt: str | None = None,
              default_date: str | None = None) -> Document:
    """Read one Markdown, text or HTML file into a Document.

    The format comes from the extension unless ``fmt`` is given. The document id comes from
    the path relative to ``root`` (the file name without ``root``), or from an ``id`` in the
    front matter. ``doc_type`` overrides the front matter's ``type``. Relative time is resolved
    against the front matter's date, else ``default_date`` (``with_resolved_time``).
    """
    _check_errors(errors)
    path = Path(path)
    name = str(path)
    fd = opened = None
    try:
        fd = _open_regular(name)
    except InputError as e:
        opened = e
    try:
        if root is not None:
            real, base = _realpath(name, fd), _realpath(os.fspath(root), directory=True)
            prefix = base.rstrip("/") + "/"
            if real == base:
                relpath = "."
            elif real.startswith(prefix):
                relpath = real[len(prefix):]
            else:
                raise _input_error(name, f"is not under the ingest root {str(root)!r}")
        else:
            relpath = path.name
        if fmt is None:
            fmt = FORMAT_BY_SUFFIX.get(path.suffix.lower())
            if fmt is None:
                known = ", ".join(s or "no extension" for s in FORMAT_BY_SUFFIX)
                raise _input_error(name, f"unknown file type {path.suffix!r} (known: {known})")
        elif fmt not in FILE_FORMATS:
            raise _input_error(name, f"format {fmt!r} is not one of {', '.join(FILE_FORMATS)}")
        if doc_type is not None:
            _check_type(name, doc_type)
        if opened is not None:
            raise opened
        try:
            f = open(fd, "rb")  # owns the descriptor from here
        except OSError as e:
            raise _input_error(name, f"cannot read: {e.strerror or e}") from None
        fd = None
        try:
            raw = _decode_file(f, name, errors)
        except OSError as e:
            raise _input_error(name, f"cannot read: {e.strerror or e}") from None
    finally:
        if fd is not None:
            os.close(fd)
    try:
        doc_id = doc_id_from_path(relpath)
    except InputError as e:
        raise _input_error(name, str(e)) from None

    if fmt == "html":
        text, title = html_to_text(raw)
        if not _NON_BLANK.search(text):
            raise _input_error(name, "empty document (no text outside markup)")
        return with_resolved_time(Document(doc_id=doc_id, text=text, fmt="html", title=title or path.stem,
                                           doc_type=doc_type or "other", source=name, raw=raw, path=relpath),
                                  default_date)

    if not _NON_BLANK.search(raw):
        raise _input_error(name, "empty document")
    fields, body_start = front_matter(raw) if fmt == "markdown" else ({}, 0)
    if "id" in fields:
        try:
            doc_id = check_name(fields["id"], "document id")
        except InputError as e:
            raise _input_error(name, f"front matter: {e}") from None
    if doc_type is None:
        doc_type = _check_type(name, fields["type"]) if fields.get("type") else "other"
    date = fields.get("effective_date") or fields.get("date") or None
    if date is not None:
        check_date(name, date)
    title = fields.get("title") or (first_h1(raw, body_start) if fmt == "markdown" else "") or path.stem
    return with_resolved_time(Document(doc_id=doc_id, text=raw, fmt=fmt, title=title, doc_type=doc_type,
                                       effective_date=date, source=name, path=relpath), default_date)


def chunk_document(doc: Document, *, stored: Collection[str] = (), **options) -> Chunked:
    """Chunk a Document: Markdown after its front matter, HTML as the Markdown it was turned into, a
    conversation (``chat``) one turn a unit with short turns of one speaker joined (``units.turns``).

    ``stored``: the contents of the document's units the memory holds now, which a conversation
    keeps as they are. ``options`` are chunk_text's size limits.
    """
    if doc.fmt == "markdown":
        return chunk_text(doc.text, "markdown", body_start=front_matter(doc.text)[1], **options)
    chunked = chunk_text(doc.text, "markdown" if doc.fmt == "html" else "text", **options)
    return join_turns(chunked, doc.text, stored=stored) if doc.fmt == "chat" else chunked


# -- JSONL corpora --------------------------------------------------------------------------

JSONL_FORMATS = ("text", "markdown")  # what a JSONL record's "format" may say


def iter_jsonl(path: str | Path, *, errors: str = "strict", doc_type: str | None = None,
               on_error: Callable[[InputError], None] | None = None, start: int = 0, stop: int | None = None,
               first_line: int = 1, default_date: str | None = None) -> Iterator[Document]:
    """Documents from a JSONL corpus: one ``{"pid"|"id", "title", "text", "type"?, "effective_date"?,
    "format"?}`` object a line; ``"format": "markdown"`` chunks the text as Markdown (headings give
    units their section path, as ``asmr ingest`` of a ``.md`` file does), the default ``"text"`` as
    plain text. Blank lines are skipped; anything else wrong is an InputError naming ``path:line``,
    raised, or passed to ``on_error`` and the line skipped.

    A record with a ``"speaker"`` is one turn of a conversation (as ``asmr eval synth --chat``
    writes them): its text is the turn as chat ingest renders it (``units.chat.render_turn``:
    ``[2023-05-08] Alice: I moved yesterday (2023-05-07).``, relative time resolved against the
    record's ``effective_date``, which a turn needs), so that who speaks and when is in the unit
    whatever the title says. A text that already starts with ``"<speaker>: "`` does not repeat it.
    Another record's relative time is resolved against its ``effective_date``, else ``default_date``
    (``with_resolved_time``).

    ``start``/``stop`` read only the lines that begin in that byte range (``start`` must be the
    start of a line, numbered ``first_line``), so that parallel readers can split one corpus.
    """
    _check_errors(errors)
    path = Path(path)
    if doc_type is not None:
        _check_type(str(path), doc_type)
    offset = start
    f = open(_open_regular(str(path)), "rb")
    with f:
        f.seek(start)
        for number, data in enumerate(f, start=first_line):
            if stop is not None and offset >= stop:
                break
            where = f"{path}:{number}"
            if offset == 0 and data.startswith(codecs.BOM_UTF8):
                data = data[3:]
                offset += 3
            try:
                try:
                    line = data.decode("utf-8", errors)
                except UnicodeDecodeError as e:
                    raise _input_error(where, f"invalid UTF-8 at byte offset {offset + e.start}; "
                                              "pass --errors replace to accept it") from None
                finally:
                    offset += len(data)
                doc = _jsonl_document(line, where, doc_type, errors, default_date) if line.strip() else None
            except InputError as e:
                if on_error is None:
                    raise
                on_error(e)
                continue
            if doc is not None:
                yield doc


def _turn_text(speaker, text: str, date: str | None, where: str, errors: str) -> str:
    """A turn record's text as chat ingest renders a turn (see ``iter_jsonl``)."""
    from .chat import parse_time, render_turn  # chat reads files through this module
    if not isinstance(speaker, str) or not speaker.strip():
        raise _input_error(where, '"speaker" must be a non-empty string')
    if date is None:
        raise _input_error(where, 'a turn (a record with "speaker") needs an "effective_date"')
    speaker = check_encodable(where, '"speaker"', speaker, errors)
    if text.startswith(f"{speaker}: "):
        text = text[len(speaker) + 2:]
    return render_turn(parse_time(date, f"{where}: \"effective_date\""), speaker, text)


def _jsonl_document(line: str, where: str, doc_type: str | None, errors: str = "strict",
                    default_date: str | None = None) -> Document:
    try:
        record = json.loads(line)
    except json.JSONDecodeError as e:
        raise _input_error(where, f"bad JSON: {e.msg} at column {e.colno}") from None
    if not isinstance(record, dict):
        raise _input_error(where, f"expected a JSON object, got {type(record).__name__}")
    pid = record.get("pid")
    if pid is None:
        pid = record.get("id")
    if pid is None or isinstance(pid, (bool, dict, list, float)):
        raise _input_error(where, 'needs a "pid" or "id" (a string or an integer)')
    try:
        doc_id = check_name(str(pid), "document id")
    except InputError as e:
        raise _input_error(where, str(e)) from None
    text = record.get("text")
    if not isinstance(text, str):
        raise _input_error(where, 'needs a "text" string')
    text = check_encodable(where, '"text"', text, errors)
    if not _NON_BLANK.search(text):
        raise _input_error(where, "empty document")
    title = record.get("title") or ""
    if not isinstance(title, str):
        raise _input_error(where, '"title" must be a string')
    title = check_encodable(where, '"title"', title, errors)
    kind = doc_type or record.get("type") or "other"
    _check_type(where, kind)
    date = record.get("effective_date")
    if date is not None:
        if not isinstance(date, str):
            raise _input_error(where, '"effective_date" must be a string')
        check_date(where, date)
    fmt = record.get("format", "text")
    if fmt not in JSONL_FORMATS:
        raise _input_error(where, f'"format" must be one of {", ".join(JSONL_FORMATS)}, got {fmt!r}')
    doc = Document(doc_id=doc_id, text=text, fmt=fmt, title=title, doc_type=kind, effective_date=date,
                   source=where)
    if record.get("speaker") is not None:  # a turn: resolved against its date when rendered
        return replace(doc, text=_turn_text(record["speaker"], text, date, where, errors))
    return with_resolved_time(doc, default_date)
