"""Writing a memory: documents in, versioned units, vectors and index files out, crash-safe.

The order of one ingest (see schema.py for the files):

1. parse and chunk every changed document, relate its units to the stored ones;
2. embed only texts the memory has never embedded with this model;
3. append their vectors past the committed rows of ``vectors.f32``;
4. write the next generation's dense and lexical index files;
5. one SQLite transaction: units, versions, documents, links, and the new
   generation number: the commit point;
6. remove index files older than the previous generation (readers opened
   before this ingest still use that one).

A crash before 5 leaves the last commit untouched: the next writer truncates
the vector tail and removes the unreferenced files. A crash after 5 leaves only
leftovers to remove. ``ASMR_FAULT=<point>`` kills the process with SIGKILL at a
named point, for the crash tests.
"""
from __future__ import annotations

import fcntl
import hashlib
import itertools
import json
import os
import posixpath
import shutil
import signal
import sys
import time
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Iterable, Iterator, Sequence

import numpy as np
from tqdm import tqdm

from ..embed import DEFAULT_EMBEDDER, Embedder, get_embedder
from ..index import DenseIndex, LexicalIndex
from ..units.ids import check_name, content_hash, doc_id_from_path, unit_id
from ..units.lifecycle import Revision, assign_keys, plan_revision
from ..units.model import Chunked, Document, InputError
from ..units.read import chunk_document
from . import schema
from .schema import MemoryStateError

DEFAULT_KB = "kb"
DEFAULT_FLAT_MAX = 20_000  # above this many active units the dense index is HNSW (flat: ~5 ms a query here)
FAULT_POINTS = ("after-embed", "after-vectors", "after-dense", "after-lexical", "in-transaction",
                "after-commit")
_FAULT = os.environ.get("ASMR_FAULT")


def _fault(point: str) -> None:
    if _FAULT == point:
        os.kill(os.getpid(), signal.SIGKILL)


def _now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


def _fsync_dir(directory: Path) -> None:
    fd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def document_sha(doc: Document) -> str:
    """What makes two versions the same: text, title, type and effective date."""
    h = hashlib.sha256()
    for part in (doc.text, doc.title, doc.doc_type, doc.effective_date or "", doc.raw or ""):
        h.update(part.encode("utf-8", "surrogatepass"))
        h.update(b"\x00")
    return h.hexdigest()


@dataclass(slots=True)
class DocumentReport:
    kb: str
    doc_id: str
    version: int
    status: str  # new, revised, unchanged
    units: int
    kept: int = 0
    added: int = 0
    superseded: int = 0
    deprecated: int = 0


@dataclass(slots=True)
class IngestReport:
    documents: list[DocumentReport] = field(default_factory=list)
    embedded: int = 0  # texts sent to the embedder
    reused_vectors: int = 0  # new units whose text this memory had already embedded
    generation: int = 0
    active_units: int = 0
    seconds: float = 0.0
    timings: dict[str, float] = field(default_factory=dict)  # seconds per stage

    def counts(self) -> dict[str, int]:
        out = {"new": 0, "revised": 0, "unchanged": 0}
        for d in self.documents:
            out[d.status] += 1
        return out

    def to_dict(self) -> dict:
        return {"documents": [{k: getattr(d, k) for k in d.__slots__} for d in self.documents],
                "counts": self.counts(), "embedded": self.embedded, "reused_vectors": self.reused_vectors,
                "generation": self.generation, "active_units": self.active_units,
                "seconds": round(self.seconds, 3), "timings": {k: round(v, 3) for k, v in self.timings.items()}}


@dataclass(slots=True)
class _Planned:
    doc: Document
    sha: str
    version: int
    created: bool
    chunked: Chunked
    ids: list[str]
    hashes: list[str]  # content_hash(kind, content) per chunk: the key's source and the vector's
    revision: Revision
    effective: str


class Writer:
    """The single writer of a memory directory (an exclusive lock file enforces one)."""

    def __init__(self, directory: str | os.PathLike, *, embedder: Embedder | str | None = None,
                 flat_max: int = DEFAULT_FLAT_MAX, progress: bool | None = None):
        self.directory = Path(directory)
        if self.directory.exists() and not self.directory.is_dir():
            raise MemoryStateError(f"memory {self.directory}: exists and is not a directory")
        self.directory.mkdir(parents=True, exist_ok=True)
        self._lock = open(self.directory / schema.LOCK_FILE, "a+")
        try:
            fcntl.flock(self._lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            self._lock.close()
            raise MemoryStateError(f"memory {self.directory}: another ingest is writing it; try again when "
                                   "it has finished") from None
        try:
            self.conn = schema.connect(self.directory, create=True)
        except Exception:
            self._release()
            raise
        self.conn.execute("PRAGMA cache_size=-262144")  # 256 MiB of pages: large ingests insert into big b-trees
        self.flat_max = flat_max
        self.progress = progress
        self._embedder_arg = embedder
        self._embedder: Embedder | None = embedder if not isinstance(embedder, (str, type(None))) else None
        self.embed_model = schema.get_meta(self.conn, "embed_model")
        wanted = embedder if isinstance(embedder, str) else getattr(embedder, "name", None)
        if self.embed_model and wanted and wanted != self.embed_model:
            self._release()
            raise MemoryStateError(f"memory {self.directory}: its vectors come from {self.embed_model!r}, not "
                                   f"{wanted!r}; use --embedder {self.embed_model} or a new memory directory")
        self.recover()

    # Lifecycle of the writer
    def _release(self) -> None:
        if getattr(self, "conn", None) is not None:
            self.conn.close()
            self.conn = None
        if self._lock is not None:
            fcntl.flock(self._lock, fcntl.LOCK_UN)
            self._lock.close()
            self._lock = None

    def close(self) -> None:
        self._release()

    def __enter__(self) -> "Writer":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    @property
    def generation(self) -> int:
        return int(schema.get_meta(self.conn, "generation", "0"))

    @property
    def num_rows(self) -> int:
        return int(schema.get_meta(self.conn, "rows", "0"))

    def embedder(self) -> Embedder:
        if self._embedder is None:
            name = self._embedder_arg if isinstance(self._embedder_arg, str) else None
            self._embedder = get_embedder(name or self.embed_model or DEFAULT_EMBEDDER)
        return self._embedder

    def recover(self) -> list[str]:
        """Undo what an interrupted ingest left: the uncommitted vector tail and unreferenced index files."""
        removed = []
        dim = int(schema.get_meta(self.conn, "dim", "0"))
        vec_path = self.directory / schema.VECTORS_FILE
        committed = self.num_rows * dim * 4
        if vec_path.exists() and vec_path.stat().st_size > committed:
            with open(vec_path, "r+b") as f:
                f.truncate(committed)
                os.fsync(f.fileno())
            removed.append(f"{schema.VECTORS_FILE} tail")
        gen = self.generation
        keep = {schema.dense_file(gen), schema.lexical_dir(gen),
                schema.dense_file(gen - 1), schema.lexical_dir(gen - 1)}
        for p in self.directory.iterdir():
            if (p.name.startswith(("dense.", "lexical.")) or p.name.endswith(".tmp")) and p.name not in keep:
                shutil.rmtree(p) if p.is_dir() else p.unlink()
                removed.append(p.name)
        return removed

    # Ingest
    def ingest(self, documents: Iterable[Document], *, kb: str = DEFAULT_KB, total: int | None = None
               ) -> IngestReport:
        """Ingest ``documents`` (any iterable, streamed in batches) as one transaction.

        An InputError from the documents or the chunker (bad input, duplicate id)
        rolls everything back: the memory stays as it was.
        """
        start = time.perf_counter()
        self._ingest_time = _now()  # one default effective date for all documents of this ingest
        check_name(kb, "knowledge base")
        report = IngestReport(generation=self.generation)
        clock = _Clock(report.timings)
        embedder = self.embedder()
        if self.embed_model is None:
            self.embed_model = embedder.name
        seen: dict[str, str] = {}
        first_row = next_row = self._committed_rows = self.num_rows
        self._written: dict[str, int] = {}
        gone_rows: list[int] = []
        changed = False
        vec_path = self.directory / schema.VECTORS_FILE
        self.conn.execute("BEGIN IMMEDIATE")
        bulk = first_row == 0  # an empty memory: build the unit indexes once, after the inserts
        try:
            if bulk:
                for name in schema.UNIT_INDEXES:
                    self.conn.execute(f"DROP INDEX IF EXISTS {name}")
            with open(vec_path, "ab") as vec_file:
                vec_file.truncate(first_row * embedder.dim * 4)  # drop any uncommitted tail first
                if total is None and hasattr(documents, "__len__"):
                    total = len(documents)
                for batch in _batches(clock.each("read", self._bar(documents, total)), BATCH_DOCUMENTS):
                    with clock("chunk"):
                        _check_unique(batch, seen)
                        known = self._known_documents(kb, [d.doc_id for d in batch])
                        plans = []
                        for doc in batch:
                            sha = document_sha(doc)
                            prev = known.get(doc.doc_id)
                            if prev is not None and prev[1] == sha:
                                report.documents.append(DocumentReport(kb, doc.doc_id, prev[0], "unchanged",
                                                                       prev[2]))
                            else:
                                plans.append(self._plan(kb, doc, sha, prev))
                    if not plans:
                        continue
                    changed = True
                    new_units = [(p, j) for p in plans for j in
                                 sorted([*p.revision.added, *(j for _, j in p.revision.superseded)])]
                    texts = [p.chunked.chunks[j].content for p, j in new_units]
                    hashes = [p.hashes[j] for p, j in new_units]
                    vec_file.flush()
                    with clock("embed"):
                        vectors, embedded, reused = self._vectors_for(texts, hashes, next_row)
                    report.embedded += embedded
                    report.reused_vectors += reused
                    _fault("after-embed")
                    with clock("store"):
                        vec_file.write(memoryview(vectors))
                        rows = range(next_row, next_row + len(new_units))
                        gone_rows.extend(self._rows_of([uid for p in plans for uid in
                                                        [*p.revision.deprecated,
                                                         *(old for old, _ in p.revision.superseded)]]))
                        self._write_rows(kb, plans, new_units, rows, hashes)
                    next_row += len(new_units)
                    for p in plans:
                        r = p.revision
                        report.documents.append(DocumentReport(
                            kb, p.doc.doc_id, p.version, "new" if p.created else "revised", len(p.ids),
                            len(r.kept), len(r.added), len(r.superseded), len(r.deprecated)))
                if not changed:
                    self.conn.execute("ROLLBACK")
                    report.active_units = self._active_count()
                    report.seconds = time.perf_counter() - start
                    return report
                with clock("store"):
                    vec_file.flush()
                    os.fsync(vec_file.fileno())
            if bulk:
                with clock("store"):
                    for ddl in schema.UNIT_INDEXES.values():
                        self.conn.execute(ddl)  # a repeated unit id fails here and rolls back
            _fault("after-vectors")
            gen = self.generation + 1
            with clock("dense"):
                self._write_dense(gen, first_row, next_row, np.asarray(gone_rows, np.int64))
            _fault("after-dense")
            with clock("lexical"):
                report.active_units = self._write_lexical(gen)
            _fault("after-lexical")
            with clock("commit"):
                _fsync_dir(self.directory)
                for key, value in (("generation", gen), ("rows", next_row), ("embed_model", self.embed_model),
                                   ("dim", embedder.dim)):
                    self.conn.execute("INSERT INTO meta VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET "
                                      "value=excluded.value", (key, str(value)))
                _fault("in-transaction")
                self.conn.execute("COMMIT")
        except BaseException:
            self.conn.execute("ROLLBACK")
            raise
        _fault("after-commit")
        self._remove_old(gen)
        report.generation = gen
        report.seconds = time.perf_counter() - start
        return report

    def _bar(self, items, total: int | None):
        show = self.progress if self.progress is not None else (total or 0) >= 200 and sys.stderr.isatty()
        return tqdm(items, total=total, desc="ingest", unit="doc", disable=not show, file=sys.stderr,
                    leave=False, mininterval=0.5)

    def _known_documents(self, kb: str, doc_ids: list[str]) -> dict[str, tuple[int, str, int]]:
        """doc id -> (current version, its sha256, its unit count) for documents already stored."""
        out = {}
        for part in _slices(doc_ids):
            marks = ",".join("?" * len(part))
            for doc_id, version, sha, total in self.conn.execute(
                    f"SELECT d.doc_id, d.current_version, v.sha256, v.units_total FROM documents d "
                    f"JOIN versions v ON v.kb=d.kb AND v.doc_id=d.doc_id AND v.version=d.current_version "
                    f"WHERE d.kb=? AND d.doc_id IN ({marks})", (kb, *part)):
                out[doc_id] = (version, sha, total)
        return out

    def _plan(self, kb: str, doc: Document, sha: str, prev) -> _Planned:
        chunked = chunk_document(doc)
        if not chunked.chunks:
            raise InputError(f"{doc.source or doc.doc_id}: no text to store (the document has no units)")
        old, taken = [], set()
        if prev is not None:
            for uid, kind, content, status in self.conn.execute(
                    "SELECT id, kind, content, status FROM units WHERE kb=? AND doc_id=? ORDER BY ord, row",
                    (kb, doc.doc_id)):
                if status == "active":
                    old.append((uid, kind, content))
                else:
                    taken.add(uid.rsplit("/", 1)[1])
        hashes = [content_hash(c.kind, c.content) for c in chunked.chunks]
        ids = [unit_id(kb, doc.doc_id, k) for k in assign_keys(hashes, taken)]
        revision = plan_revision(old, ids, [(c.kind, c.content) for c in chunked.chunks]) if old else \
            Revision(added=list(range(len(ids))))
        return _Planned(doc, sha, 1 if prev is None else prev[0] + 1, prev is None, chunked, ids, hashes,
                        revision, doc.effective_date or self._ingest_time)

    def _vectors_for(self, texts: list[str], hashes: list[str], rows_written: int
                     ) -> tuple[np.ndarray, int, int]:
        """Vectors for ``texts``: copied when the memory already holds the same unit text, else embedded."""
        embedder = self.embedder()
        dim = embedder.dim
        have = self._written  # texts this ingest already stored
        lookup = [h for h in dict.fromkeys(hashes) if h not in have] if self._committed_rows else []
        for part in _slices(lookup):
            marks = ",".join("?" * len(part))
            have.update(self.conn.execute(
                f"SELECT content_hash, min(row) FROM units WHERE content_hash IN ({marks}) GROUP BY content_hash",
                part).fetchall())
        first: dict[str, int] = {}  # hash -> its position among the texts to embed
        firsts: list[int] = []  # those texts, by index into ``texts``
        src = np.empty(len(texts), np.int64)  # >= 0: a stored row; < 0: -(1 + position among those to embed)
        for i, h in enumerate(hashes):
            if (row := have.get(h)) is not None:
                src[i] = row
                continue
            if (pos := first.get(h)) is None:
                pos = first[h] = len(firsts)
                firsts.append(i)
            src[i] = -1 - pos
        for i in firsts:
            have[hashes[i]] = rows_written + i  # where this batch will write it
        out = np.empty((len(texts), dim), np.float32)
        reuse = src >= 0
        if reuse.any():  # rows written by this ingest count: the transaction sees its own inserts
            stored = np.memmap(self.directory / schema.VECTORS_FILE, dtype=np.float32, mode="r",
                               shape=(rows_written, dim))
            out[reuse] = stored[src[reuse]]
        if firsts:
            show = self.progress if self.progress is not None else len(firsts) >= 256 and sys.stderr.isatty()
            vecs = embedder.embed([texts[i] for i in firsts], progress=bool(show))
            if vecs.shape != (len(firsts), dim) or not np.isfinite(vecs).all():
                raise RuntimeError(f"embedder {embedder.name} returned {vecs.shape} or non-finite values")
            if len(firsts) == len(texts):
                return np.ascontiguousarray(vecs, np.float32), len(firsts), 0  # all new, all distinct
            out[~reuse] = vecs[-1 - src[~reuse]]
        return out, len(firsts), int(reuse.sum())

    def _rows_of(self, uids: list[str]) -> list[int]:
        rows = []
        for part in _slices(uids):
            marks = ",".join("?" * len(part))
            rows.extend(r[0] for r in self.conn.execute(f"SELECT row FROM units WHERE id IN ({marks})", part))
        return rows

    def _active_count(self) -> int:
        return self.conn.execute("SELECT count(*) FROM units WHERE status='active'").fetchone()[0]

    def _write_dense(self, gen: int, first_new: int, end_row: int, gone_rows: np.ndarray) -> None:
        """The next generation's faiss index: the previous one patched, or a fresh build."""
        dim = self.embedder().dim
        active = self._active_count()
        kind = "hnsw" if active > self.flat_max else "flat"
        prev_path = self.directory / schema.dense_file(gen - 1)
        index = DenseIndex.load(prev_path) if prev_path.exists() else None
        if index is not None:
            stale = 0 if index.kind == "flat" else index.size + (end_row - first_new) - active
            if index.kind != kind or stale > 0.25 * max(active, 1):
                index = None  # changed kind, or too many dead rows in HNSW: rebuild
        if index is None:
            index = DenseIndex.build(dim, kind)
            rows = np.fromiter((r for r, in self.conn.execute(
                "SELECT row FROM units WHERE status='active' ORDER BY row")), np.int64)
        else:
            index.remove(gone_rows)
            rows = np.arange(first_new, end_row, dtype=np.int64)
        # Chunk by chunk: faiss keeps its own copy, and a whole-file mapping would count twice in memory.
        for i in range(0, len(rows), 65536):
            part = rows[i:i + 65536]
            index.add(part, _read_rows(self.directory / schema.VECTORS_FILE, part, dim))
        tmp = self.directory / (schema.dense_file(gen) + ".tmp")
        index.save(tmp)
        os.replace(tmp, self.directory / schema.dense_file(gen))

    def _write_lexical(self, gen: int) -> int:
        """The next generation's BM25 index over every active unit; returns their number."""
        final = self.directory / schema.lexical_dir(gen)
        tmp = self.directory / (schema.lexical_dir(gen) + ".tmp")
        for p in (tmp, final):
            if p.exists():
                shutil.rmtree(p)
        index = LexicalIndex.build(self.conn.execute(
            "SELECT row, content FROM units WHERE status='active' ORDER BY row"))
        index.save(tmp)
        os.replace(tmp, final)
        return index.size

    def _write_rows(self, kb: str, plans: list[_Planned], new_units, rows, hashes) -> None:
        """One batch's units, versions, documents and links, inside the ingest's transaction."""
        now = _now()
        row_of = {(id(p), j): r for (p, j), r in zip(new_units, rows)}
        hash_of = {(id(p), j): h for (p, j), h in zip(new_units, hashes)}
        c = self.conn
        inserts, kept, superseded, deprecated, versions, docs, links, unlinks = [], [], [], [], [], [], [], []
        paths: dict[tuple, str] = {}  # units of a section share its path: encode it once

        def path_json(section_path: tuple) -> str:
            if (out := paths.get(section_path)) is None:
                out = paths[section_path] = json.dumps(section_path, ensure_ascii=False)
            return out

        for p in plans:
            doc, chunks, ids, rev = p.doc, p.chunked.chunks, p.ids, p.revision
            parent = [None if ch.parent is None else ids[ch.parent] for ch in chunks]
            for j in sorted([*rev.added, *(j for _, j in rev.superseded)]):
                ch = chunks[j]
                inserts.append((row_of[(id(p), j)], ids[j], kb, doc.doc_id, p.version, j, ch.kind, parent[j],
                                path_json(ch.section_path), ch.offset_start, ch.offset_end,
                                ch.content, hash_of[(id(p), j)], now, p.effective, "active", None,
                                self.embed_model))
            kept.extend((p.version, j, parent[j], path_json(chunks[j].section_path),
                         chunks[j].offset_start, chunks[j].offset_end, uid) for j, uid in rev.kept)
            superseded.extend((ids[j], old) for old, j in rev.superseded)
            deprecated.extend((u,) for u in rev.deprecated)
            versions.append((kb, doc.doc_id, p.version, p.sha, doc.text, doc.raw, doc.fmt, doc.title, doc.doc_type,
                             p.effective, doc.source, now, len(ids), len(rev.kept), len(rev.added),
                             len(rev.superseded), len(rev.deprecated)))
            docs.append((kb, doc.doc_id, doc.title, doc.doc_type, p.version, now, now))
            if not p.created:
                unlinks.extend((u,) for _, u in rev.kept)
            links.extend((ids[ln.source], ln.kind, ln.target, _link_doc(doc, ln.kind, ln.target), ln.text)
                         for ln in p.chunked.links)
        c.executemany(f"INSERT INTO units VALUES ({','.join('?' * 18)})", inserts)
        c.executemany("UPDATE units SET doc_version=?, ord=?, parent_id=?, section_path=?, offset_start=?, "
                      "offset_end=? WHERE id=?", kept)
        c.executemany("UPDATE units SET status='superseded', superseded_by=? WHERE id=?", superseded)
        c.executemany("UPDATE units SET status='deprecated' WHERE id=?", deprecated)
        c.executemany(f"INSERT INTO versions VALUES ({','.join('?' * 17)})", versions)
        c.executemany("INSERT INTO documents VALUES (?,?,?,?,?,?,?) ON CONFLICT (kb, doc_id) DO UPDATE SET "
                      "title=excluded.title, doc_type=excluded.doc_type, "
                      "current_version=excluded.current_version, updated_at=excluded.updated_at", docs)
        c.executemany("DELETE FROM links WHERE source_id=?", unlinks)
        c.executemany("INSERT INTO links VALUES (?,?,?,?,?)", links)

    def _remove_old(self, gen: int) -> None:
        for old in range(gen - 2, max(gen - 4, 0) - 1, -1):
            for p in (self.directory / schema.dense_file(old), self.directory / schema.lexical_dir(old)):
                if p.is_dir():
                    shutil.rmtree(p)
                elif p.exists():
                    p.unlink()


BATCH_DOCUMENTS = 2048


class _Clock:
    """Adds the seconds spent in each named stage to a dict."""

    def __init__(self, timings: dict[str, float]):
        self.timings = timings

    @contextmanager
    def __call__(self, stage: str):
        t = time.perf_counter()
        try:
            yield
        finally:
            self.timings[stage] = self.timings.get(stage, 0.0) + time.perf_counter() - t

    def each(self, stage: str, items: Iterable) -> Iterator:
        """Yield from ``items``, timing the work of producing each (reading files, parsing records)."""
        it = iter(items)
        while True:
            with self(stage):
                item = next(it, _END)
            if item is _END:
                return
            yield item


_END = object()


def _batches(items: Iterable, n: int) -> Iterator[list]:
    it = iter(items)
    while batch := list(itertools.islice(it, n)):
        yield batch


def _read_rows(path: Path, rows: np.ndarray, dim: int) -> np.ndarray:
    """A copy of some rows of the vector file, through a mapping of just their span, dropped at once."""
    span = np.memmap(path, dtype=np.float32, mode="r", offset=int(rows[0]) * dim * 4,
                     shape=(int(rows[-1] - rows[0]) + 1, dim))
    out = np.array(span[rows - rows[0]])
    del span
    return out


def _slices(items: list, n: int = 500) -> Iterator[list]:
    for i in range(0, len(items), n):
        yield items[i:i + n]


def _check_unique(documents: Sequence[Document], seen: dict[str, str]) -> None:
    for d in documents:
        if d.doc_id in seen:
            raise InputError(f"{d.source or d.doc_id}: document id {d.doc_id!r} is also the id of "
                             f"{seen[d.doc_id]}; ids in one ingest must be unique")
        seen[d.doc_id] = d.source or d.doc_id


def _link_doc(doc: Document, kind: str, target: str) -> str | None:
    """The document a link points to: this one for a section reference, else the resolved relative path."""
    if kind == "section":
        return doc.doc_id
    path = target.split("#", 1)[0].split("?", 1)[0]
    if not path:
        return doc.doc_id
    base = posixpath.dirname(doc.path or "")
    try:
        return doc_id_from_path(posixpath.normpath(posixpath.join(base, path)))
    except InputError:
        return None


def ingest(directory: str | os.PathLike, documents: Sequence[Document], *, kb: str = DEFAULT_KB,
           embedder: Embedder | str | None = None, progress: bool | None = None,
           flat_max: int = DEFAULT_FLAT_MAX) -> IngestReport:
    """Ingest ``documents`` into the memory at ``directory`` (created if missing)."""
    with Writer(directory, embedder=embedder, progress=progress, flat_max=flat_max) as w:
        return w.ingest(documents, kb=kb)
