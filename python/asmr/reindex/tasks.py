"""Splitting the inputs of a re-index into tasks, and turning one task into the texts to embed.

A task is a group of small files or a byte range of a JSONL corpus (a chat log is read whole: the
turns of one session may be on any of its lines): enough work to be worth
scheduling on another process or node, small enough that a lost task costs little. A worker
reads its task exactly as ``asmr ingest`` reads the inputs (same readers, same options),
chunks each document with the chunker the store's writer uses, and keeps only the texts the
memory has not embedded yet: what the writer would send to the embedder at commit.
"""
from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator, Sequence

import numpy as np

from ..units.chat import iter_chat
from ..units.ids import content_hash
from ..units.model import Document, InputError
from ..units.read import chunk_document, iter_jsonl, read_path

TASK_BYTES = 8 << 20  # at most this much input per task: seconds of chunking, a minute or so of CPU embedding
MIN_TASK_BYTES = 256 << 10  # and at least this much, unless the input is smaller ...
TARGET_TASKS = 64  # ... so that a small corpus still makes enough tasks to keep every worker busy
TASK_FILES = 64  # small files per task, so tiny documents do not each cost a scheduling round-trip
KEY_DTYPE = "S32"  # hex blake2b-128 digests; hex never holds the NUL bytes that numpy's S type strips


@dataclass(frozen=True, slots=True)
class ReadOptions:
    """How inputs are read: the ``asmr ingest`` flags that change documents' text or chunks."""
    errors: str = "strict"
    doc_type: str | None = None
    fmt: str | None = None  # "chat": conversations, read by ``units.chat.iter_chat`` as ingest reads them
    join_turns: bool = True  # chat: consecutive short turns of one speaker make one unit (--no-join-turns)
    # --effective-date: the date of a chat session that gives none, and what relative time in a document
    # without a date of its own is resolved against
    default_date: str | None = None


@dataclass(frozen=True, slots=True)
class Task:
    """Files read whole (``files``: (path, root or None) pairs), or one JSONL byte range."""
    files: tuple[tuple[str, str | None], ...] = ()
    jsonl: str | None = None
    start: int = 0
    stop: int | None = None
    first_line: int = 1


def text_key(text: str) -> str:
    """The key of an embedded text in the shards: 32 hex digits of its blake2b-128."""
    return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16).hexdigest()


def plan_tasks(inputs: Sequence[tuple[Path, Path | None]], options: ReadOptions,
               task_bytes: int | None = None, task_files: int | None = None) -> list[Task]:
    """Tasks for ``inputs`` ((file, root) pairs as ``asmr ingest`` walks them), in input order.

    A JSONL corpus (read as JSONL unless a --format is forced) is cut at line starts into
    ranges of about ``task_bytes`` (default: the input's size over TARGET_TASKS, within
    MIN_TASK_BYTES..TASK_BYTES); the line count before each cut is kept so that errors name
    ``path:line`` exactly as a sequential read would. A missing or unreadable path is planned
    like any other: the worker reports it with the reader's message.
    """
    if task_bytes is None:
        total = sum(_size(path) for path, _ in inputs)
        task_bytes = min(TASK_BYTES, max(MIN_TASK_BYTES, total // TARGET_TASKS))
    task_files = task_files or TASK_FILES
    tasks: list[Task] = []
    group: list[tuple[str, str | None]] = []
    group_bytes = 0

    def flush() -> None:
        nonlocal group, group_bytes
        if group:
            tasks.append(Task(files=tuple(group)))
            group, group_bytes = [], 0

    for path, root in inputs:
        if path.suffix.lower() == ".jsonl" and options.fmt is None and path.is_file():
            flush()
            try:
                tasks.extend(_jsonl_tasks(path, task_bytes))
            except OSError:  # unreadable: one task, whose worker reports it as the reader words it
                tasks.append(Task(jsonl=str(path)))
            continue
        group.append((str(path), None if root is None else str(root)))
        group_bytes += _size(path)
        if len(group) >= task_files or group_bytes >= task_bytes:
            flush()
    flush()
    return tasks


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:  # missing: the worker reports it
        return 0


def _jsonl_tasks(path: Path, task_bytes: int) -> Iterator[Task]:
    """Byte ranges of one JSONL file, cut at line starts, with the number of each range's first line."""
    start, line = 0, 1
    with open(path, "rb") as f:
        size = os.fstat(f.fileno()).st_size
        while True:
            f.seek(start + task_bytes)
            f.readline()  # the rest of the line the cut falls in: the range ends after it
            stop = f.tell()
            if stop >= size:
                yield Task(jsonl=str(path), start=start, stop=None, first_line=line)
                return
            yield Task(jsonl=str(path), start=start, stop=stop, first_line=line)
            f.seek(start)
            line += _count_newlines(f, stop - start)
            start = stop


def _count_newlines(f, n: int) -> int:
    count = 0
    while n > 0:
        block = f.read(min(n, 1 << 22))
        if not block:
            break
        count += block.count(b"\n")
        n -= len(block)
    return count


def read_task(task: Task, options: ReadOptions, on_error) -> Iterator[Document]:
    """The documents of one task, read as ``asmr ingest`` reads them; bad inputs go to ``on_error``."""
    if task.jsonl is not None:
        try:
            yield from iter_jsonl(task.jsonl, errors=options.errors, doc_type=options.doc_type,
                                  on_error=on_error, start=task.start, stop=task.stop,
                                  first_line=task.first_line, default_date=options.default_date)
        except InputError as exc:  # the file as a whole (cannot be opened): reported, not a crashed task
            on_error(exc)
        return
    for raw, root in task.files:
        path = Path(raw)
        try:
            if not path.exists():
                raise InputError(f"{path}: no such file or directory")
            if path.is_dir():
                raise InputError(f"{path}: is a directory")
            if options.fmt == "chat":
                yield from iter_chat(path, errors=options.errors, doc_type=options.doc_type,
                                     default_date=options.default_date, on_error=on_error,
                                     join_turns=options.join_turns)
                continue
            yield read_path(path, root=None if root is None else Path(root), errors=options.errors,
                            doc_type=options.doc_type, fmt=options.fmt, default_date=options.default_date)
        except InputError as exc:
            on_error(exc)


def task_texts(task: Task, options: ReadOptions, skip_units: np.ndarray, skip_texts: np.ndarray
               ) -> tuple[list[str], list[str], list[str]]:
    """(keys, texts, errors) of one task: the distinct unit texts to embed, and the bad inputs met.

    A unit is skipped when the memory already holds its content hash (``skip_units``: the
    writer copies its vector instead of embedding) or a finished shard holds its text
    (``skip_texts``: done by an earlier, interrupted run). Both are sorted ``KEY_DTYPE`` arrays.
    """
    errors: list[str] = []
    hashes: list[str] = []
    texts: list[str] = []
    for doc in read_task(task, options, lambda exc: errors.append(str(exc))):
        chunked = chunk_document(doc)  # the chunker Writer._plan uses: the same texts, byte for byte
        if not chunked.chunks:
            errors.append(f"{doc.source or doc.doc_id}: no text to store (the document has no units)")
            continue
        for c in chunked.chunks:
            hashes.append(content_hash(c.kind, c.content))
            texts.append(c.content)
    if not texts:
        return [], [], errors
    keep = ~_member(np.array(hashes, KEY_DTYPE), skip_units)
    by_key: dict[str, str] = {}
    for text, k in zip(texts, keep):
        if k:
            by_key.setdefault(text_key(text), text)
    keys = list(by_key)
    if keys:
        fresh = ~_member(np.array(keys, KEY_DTYPE), skip_texts)
        keys = [k for k, f in zip(keys, fresh) if f]
    return keys, [by_key[k] for k in keys], errors


def _member(values: np.ndarray, sorted_set: np.ndarray) -> np.ndarray:
    """``values`` in ``sorted_set``, element-wise, by binary search."""
    if len(sorted_set) == 0:
        return np.zeros(len(values), bool)
    pos = np.searchsorted(sorted_set, values)
    pos[pos == len(sorted_set)] = 0
    return sorted_set[pos] == values
