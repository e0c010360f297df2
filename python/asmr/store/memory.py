"""Reading a memory: one consistent snapshot from open until ``reopen``.

A reader pins a SQLite read transaction (WAL keeps its snapshot while writers
commit) and the index files of the generation that snapshot names, so an ingest
that commits meanwhile changes nothing it sees.
"""
from __future__ import annotations

import json
import os
import sqlite3
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import NamedTuple

import numpy as np

from asmr_kernels import pair_cosine

from ..index import DenseIndex, LexicalIndex
from ..paths import DEFAULT_MEMORY, default_memory_dir  # noqa: F401 (both: read from here too)
from ..units.model import DOCUMENT_STATUSES  # noqa: F401 (defined with the data model; read from here too)
from . import schema
from .schema import MemoryStateError


UNIT_COLUMNS = ("row, id, kb, doc_id, doc_version, ord, kind, parent_id, section_path, offset_start, "
                "offset_end, content, content_hash, created_at, effective_at, status, superseded_by, embed_model")


@dataclass(frozen=True, slots=True)
class Unit:
    row: int
    id: str
    kb: str
    doc_id: str
    doc_version: int
    ord: int
    kind: str
    parent_id: str | None
    section_path: tuple[str, ...]
    offset_start: int
    offset_end: int
    content: str
    content_hash: str
    created_at: str
    effective_at: str
    status: str
    superseded_by: str | None
    embed_model: str

    @classmethod
    def from_row(cls, r: tuple) -> "Unit":
        r = list(r)
        r[8] = tuple(json.loads(r[8]))
        return cls(*r)

    def to_dict(self) -> dict:
        d = {name: getattr(self, name) for name in self.__slots__}
        d["section_path"] = list(self.section_path)
        return d


@dataclass(frozen=True, slots=True)
class Version:
    kb: str
    doc_id: str
    version: int
    sha256: str
    fmt: str
    title: str
    doc_type: str
    effective_date: str
    source: str
    ingested_at: str
    units_total: int
    units_kept: int
    units_added: int
    units_superseded: int
    units_deprecated: int

    def to_dict(self) -> dict:
        return {name: getattr(self, name) for name in self.__slots__}


@dataclass(frozen=True, slots=True)
class DocumentSummary:
    """A document as ``asmr docs list`` shows it: its current version, and whether it is retired
    (``asmr ingest --prune`` found its file gone: a current version without units)."""
    kb: str
    doc_id: str
    title: str
    doc_type: str
    version: int
    status: str  # active or retired
    units: int  # active units
    effective_date: str
    source: str
    updated_at: str

    def to_dict(self) -> dict:
        return {name: getattr(self, name) for name in self.__slots__}




class UnitState(NamedTuple):
    """What checking a citation reads of a unit."""

    row: int
    id: str
    status: str
    superseded_by: str | None
    content: str


VERSION_COLUMNS = ("kb, doc_id, version, sha256, fmt, title, doc_type, effective_date, source, ingested_at, "
                   "units_total, units_kept, units_added, units_superseded, units_deprecated")


class Memory:
    """A read-only snapshot of a memory directory."""

    def __init__(self, directory: str | os.PathLike | None = None, *, load_indexes: bool = True):
        self.directory = Path(directory) if directory is not None else default_memory_dir()
        self._load_indexes = load_indexes
        self._conn: sqlite3.Connection | None = None
        self._open()

    def _open(self) -> None:
        if self.directory.exists() and not self.directory.is_dir():
            raise MemoryStateError(f"memory {self.directory}: is a file, not a memory directory")
        if not self.directory.is_dir():
            raise MemoryStateError(f"memory {self.directory}: no such directory; run `asmr ingest` to create one")
        conn = schema.connect(self.directory, create=False)
        conn.execute("BEGIN")  # the snapshot: every read below sees this one state
        self.generation = int(schema.get_meta(conn, "generation", "0"))
        self.embed_model = schema.get_meta(conn, "embed_model")
        # which runtimes of the model made the vectors (asmr.embed.RUNTIMES); empty for memories written
        # before the record was kept (theirs are fp32) and for embedders with one runtime
        self.embed_runtimes = tuple(filter(None, (schema.get_meta(conn, "embed_runtimes") or "").split(",")))
        self.dim = int(schema.get_meta(conn, "dim", "0"))
        self.num_rows = int(schema.get_meta(conn, "rows", "0"))
        self._conn = conn
        self.dense: DenseIndex | None = None
        self.lexical: LexicalIndex | None = None
        self.vectors = np.zeros((0, self.dim), np.float32)
        if self.num_rows and self.dim:
            self.vectors = np.memmap(self.directory / schema.VECTORS_FILE, dtype=np.float32, mode="r",
                                     shape=(self.num_rows, self.dim))
        self.active = np.zeros(self.num_rows, dtype=bool)
        if self._load_indexes and self.generation > 0:
            self.load_indexes()

    def load_indexes(self) -> None:
        """Load this snapshot's index files (a reader that skipped them at open may still want them)."""
        if self.dense is not None or self.generation == 0:
            return
        self.dense = DenseIndex.load(self.directory / schema.dense_file(self.generation))
        self.lexical = LexicalIndex.load(self.directory / schema.lexical_dir(self.generation))
        self.active[:] = False
        self.active[np.asarray(self.lexical.rows)] = True  # the lexical index holds exactly the active rows

    def reopen(self) -> None:
        """Move to the newest committed state."""
        self.close()
        self._open()

    def close(self) -> None:
        if self._conn is not None:
            self._conn.rollback()
            self._conn.close()
            self._conn = None

    def __enter__(self) -> "Memory":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    @property
    def _db(self) -> sqlite3.Connection:
        """The snapshot's connection; private so that every query on the schema lives in this package."""
        if self._conn is None:
            raise MemoryStateError(f"memory {self.directory}: closed")
        return self._conn

    # Units and documents
    def unit(self, uid: str) -> Unit | None:
        r = self._db.execute(f"SELECT {UNIT_COLUMNS} FROM units WHERE id=?", (uid,)).fetchone()
        return None if r is None else Unit.from_row(r)

    def units_at_rows(self, rows) -> list[Unit]:
        rows = [int(r) for r in rows]
        if not rows:
            return []
        marks = ",".join("?" * len(rows))
        found = {r[0]: Unit.from_row(r) for r in
                 self._db.execute(f"SELECT {UNIT_COLUMNS} FROM units WHERE row IN ({marks})", rows)}
        return [found[r] for r in rows]

    def ids_at_rows(self, rows) -> dict[int, str]:
        """Unit ids by row, without the rest of the units (for labelling recall paths)."""
        rows = sorted({int(r) for r in rows})
        if not rows:
            return {}
        marks = ",".join("?" * len(rows))
        return dict(self._db.execute(f"SELECT row, id FROM units WHERE row IN ({marks})", rows))

    def units_of(self, kb: str, doc_id: str, *, status: str | None = "active") -> list[Unit]:
        sql = f"SELECT {UNIT_COLUMNS} FROM units WHERE kb=? AND doc_id=?"
        args: tuple = (kb, doc_id)
        if status is not None:
            sql += " AND status=?"
            args += (status,)
        return [Unit.from_row(r) for r in self._db.execute(sql + " ORDER BY status, ord, row", args)]

    def count_units(self, status: str | None = None) -> int:
        if status is None:
            return self._db.execute("SELECT count(*) FROM units").fetchone()[0]
        return self._db.execute("SELECT count(*) FROM units WHERE status=?", (status,)).fetchone()[0]

    def documents(self, kb: str | None = None) -> list[tuple[str, str]]:
        if kb is None:
            return list(self._db.execute("SELECT kb, doc_id FROM documents ORDER BY kb, doc_id"))
        return list(self._db.execute("SELECT kb, doc_id FROM documents WHERE kb=? ORDER BY doc_id", (kb,)))

    def document_summaries(self, *, kb: str | None = None, doc_id: str | None = None, status: str | None = None,
                           doc_type: str | None = None) -> list[DocumentSummary]:
        """The documents, by kb and id, with the filters given (None: any)."""
        where, args = _filters(("d.kb", kb), ("d.doc_id", doc_id), ("d.doc_type", doc_type),
                               ("CASE WHEN v.units_total = 0 THEN 'retired' ELSE 'active' END", status))
        return [DocumentSummary(*r) for r in self._db.execute(
            "SELECT d.kb, d.doc_id, d.title, d.doc_type, d.current_version, CASE WHEN v.units_total = 0 THEN "
            "'retired' ELSE 'active' END, v.units_total, v.effective_date, v.source, d.updated_at FROM documents d "
            "JOIN versions v ON v.kb=d.kb AND v.doc_id=d.doc_id AND v.version=d.current_version"
            f"{where} ORDER BY d.kb, d.doc_id", args)]

    def iter_units(self, *, kb: str | None = None, doc_id: str | None = None, status: str | None = None,
                   kind: str | None = None, doc_type: str | None = None) -> Iterator[Unit]:
        """The units with the filters given (None: any), by document and in document order; read as
        consumed, so a million units are never all in memory."""
        where, args = _filters(("u.kb", kb), ("u.doc_id", doc_id), ("u.status", status), ("u.kind", kind),
                               ("d.doc_type", doc_type))
        columns = ", ".join(f"u.{c.strip()}" for c in UNIT_COLUMNS.split(","))
        join = " JOIN documents d ON d.kb=u.kb AND d.doc_id=u.doc_id" if doc_type is not None else ""
        cursor = self._db.execute(f"SELECT {columns} FROM units u{join}{where} ORDER BY u.kb, u.doc_id, "
                                  "u.status, u.ord, u.row", args)
        return (Unit.from_row(r) for r in cursor)

    def find_documents(self, doc_id: str) -> list[str]:
        """The knowledge bases that hold a document called ``doc_id``."""
        return [r[0] for r in self._db.execute("SELECT kb FROM documents WHERE doc_id=? ORDER BY kb", (doc_id,))]

    def history(self, kb: str, doc_id: str) -> list[Version]:
        return [Version(*r) for r in self._db.execute(
            f"SELECT {VERSION_COLUMNS} FROM versions WHERE kb=? AND doc_id=? ORDER BY version", (kb, doc_id))]

    def document_text(self, kb: str, doc_id: str, version: int | None = None) -> str | None:
        if version is None:
            r = self._db.execute("SELECT current_version FROM documents WHERE kb=? AND doc_id=?",
                                 (kb, doc_id)).fetchone()
            if r is None:
                return None
            version = r[0]
        r = self._db.execute("SELECT text FROM versions WHERE kb=? AND doc_id=? AND version=?",
                             (kb, doc_id, version)).fetchone()
        return None if r is None else r[0]

    def links_from(self, uid: str) -> list[dict]:
        return [dict(kind=k, target=t, target_doc=d, text=x) for k, t, d, x in self._db.execute(
            "SELECT kind, target, target_doc, text FROM links WHERE source_id=?", (uid,))]

    def units_with_status(self, status: str) -> list[Unit]:
        """Every unit with ``status``, in row order."""
        return [Unit.from_row(r) for r in self._db.execute(
            f"SELECT {UNIT_COLUMNS} FROM units WHERE status=? ORDER BY row", (status,))]

    def unit_states(self, ids: Iterable[str]) -> list[UnitState]:
        """The units called ``ids`` (unknown ids are absent), in one query."""
        ids = list(ids)
        if not ids:
            return []
        marks = ",".join("?" * len(ids))
        return [UnitState._make(r) for r in self._db.execute(
            f"SELECT row, id, status, superseded_by, content FROM units WHERE id IN ({marks})", ids)]

    def predecessors(self, ids: Iterable[str]) -> dict[str, str]:
        """For each of ``ids`` that superseded a unit, the id of that unit (of several, the newest)."""
        ids = list(ids)
        if not ids:
            return {}
        marks = ",".join("?" * len(ids))
        out: dict[str, str] = {}
        for old, new in self._db.execute(
                f"SELECT id, superseded_by FROM units WHERE superseded_by IN ({marks}) ORDER BY row", ids):
            out[new] = old
        return out

    def contents_at_rows(self, rows: Iterable[int]) -> dict[int, str]:
        """The text of the units at ``rows``, by row (a query per 500 rows)."""
        rows = list(rows)
        out: dict[int, str] = {}
        for lo in range(0, len(rows), 500):
            part = rows[lo:lo + 500]
            out.update(self._db.execute(
                f"SELECT row, content FROM units WHERE row IN ({','.join('?' * len(part))})", part))
        return out

    def first_units_of(self, kb: str, doc_id: str, limit: int) -> list[tuple[int, str, str]]:
        """(row, kind, content) of the first ``limit`` active units of a document, in document order."""
        return self._db.execute("SELECT row, kind, content FROM units WHERE kb=? AND doc_id=? "
                                "AND status='active' ORDER BY ord LIMIT ?", (kb, doc_id, limit)).fetchall()

    def rows_of_document(self, kb: str, doc_id: str) -> np.ndarray:
        """The rows of a document's active units (ascending)."""
        return np.fromiter((r for (r,) in self._db.execute(
            "SELECT row FROM units WHERE kb=? AND doc_id=? AND status='active' ORDER BY row", (kb, doc_id))),
            np.int64)

    def headings_of(self, kb: str, doc_id: str) -> list[tuple[int, str]]:
        """(row, content) of the active heading units of a document, in document order."""
        return self._db.execute("SELECT row, content FROM units WHERE kb=? AND doc_id=? AND kind='heading' "
                                "AND status='active' ORDER BY ord", (kb, doc_id)).fetchall()

    # Whole-memory reads (for what is built once per snapshot). The iterators read as they are
    # consumed: a million units' rows are never all in memory at once.
    def document_titles_and_types(self) -> dict[tuple[str, str], tuple[str, str]]:
        """(title, doc_type) of every document, by (kb, doc_id)."""
        return {(kb, doc): (title, doc_type) for kb, doc, title, doc_type in self._db.execute(
            "SELECT kb, doc_id, title, doc_type FROM documents")}

    def undated_documents(self) -> frozenset[tuple[str, str]]:
        """(kb, doc_id) of every document whose current version stated no date: neither its own nor one
        given to its ingest, so its effective date is when that ingest began (``Writer.ingest``)."""
        return frozenset(self._db.execute(
            "SELECT v.kb, v.doc_id FROM documents d JOIN versions v ON v.kb=d.kb AND v.doc_id=d.doc_id "
            "AND v.version=d.current_version WHERE v.effective_date = v.ingested_at"))

    def active_unit_outline(self) -> list[tuple[int, str, str, str, str | None, str]]:
        """(row, id, kb, doc_id, parent_id, effective_at) of every active unit, in document order."""
        return self._db.execute("SELECT row, id, kb, doc_id, parent_id, effective_at FROM units "
                                "WHERE status='active' ORDER BY kb, doc_id, ord").fetchall()

    def active_contents(self, starting: str | None = None) -> Iterator[tuple[int, str]]:
        """(row, content) of every active unit; with ``starting``, only of those whose text starts with it
        (a chat turn's "[": the store skips the others without handing them over)."""
        if starting is None:
            return iter(self._db.execute("SELECT row, content FROM units WHERE status='active'"))
        return iter(self._db.execute("SELECT row, content FROM units WHERE status='active' AND "
                                     "substr(content, 1, ?) = ?", (len(starting), starting)))

    def sample_active_contents(self, n: int) -> list[str]:
        """The contents of about ``n`` active units spread evenly over the rows (for statistics of the text)."""
        active = self.count_units("active")
        stride = max(1, active // max(n, 1))
        return [r[0] for r in self._db.execute("SELECT content FROM units WHERE status='active' AND row % ? = 0 "
                                               "LIMIT ?", (stride, n))]

    def active_table_rows(self) -> Iterator[tuple[int, str, str, str]]:
        """(row, kb, doc_id, content) of every active table row unit (its header line, then the row)."""
        return iter(self._db.execute("SELECT row, kb, doc_id, content FROM units WHERE status='active' AND "
                                     "kind='table_row'"))

    def active_effective_dates(self) -> Iterator[tuple[int, str]]:
        """(row, effective_at) of every active unit."""
        return iter(self._db.execute("SELECT row, effective_at FROM units WHERE status='active'"))

    def active_links(self) -> Iterator[tuple[str, str, str, str | None]]:
        """(source_id, kind, target, target_doc) of every link from an active unit."""
        return iter(self._db.execute(
            "SELECT l.source_id, l.kind, l.target, l.target_doc FROM links l "
            "JOIN units u ON u.id = l.source_id WHERE u.status='active'"))

    # Search (retrieval proper lives in asmr.retrieve)
    def cosines(self, rows, vector: np.ndarray) -> np.ndarray:
        """The cosine of ``vector`` (unit norm) and the stored vector of each of ``rows`` (float32), read in
        place on the calling thread: recall reaches thousands of rows, and gathering them into a copy
        before one product cost twice as much."""
        rows = np.asarray(rows, np.int64)
        if not len(rows):
            return np.zeros(0, np.float32)
        return pair_cosine(np.asarray(vector, np.float32)[None], self.vectors, np.zeros(len(rows), np.int64), rows,
                           prenormalized=True, num_threads=1)

    def search_dense(self, query_vectors: np.ndarray, k: int = 10):
        self.load_indexes()
        if self.dense is None:
            m = len(np.atleast_2d(query_vectors))
            return np.full((m, k), -1, np.int64), np.full((m, k), -np.inf, np.float32)
        return self.dense.search(query_vectors, k, active=self.active)

    def search_lexical(self, query: str, k: int = 10):
        self.load_indexes()
        if self.lexical is None:
            return np.zeros(0, np.int64), np.zeros(0, np.float32)
        return self.lexical.search(query, k)

    def rows_with_words(self, words: list[str]) -> np.ndarray:
        """Active unit rows (ascending) whose text holds every one of ``words`` (tokens as ``tokenize``
        gives; ``LexicalIndex.rows_with_all``)."""
        self.load_indexes()
        if self.lexical is None:
            return np.zeros(0, np.int64)
        rows = self.lexical.rows_with_all(words)
        return rows[self.active[rows]]

    def inverse_document_frequencies(self, words: list[str]) -> np.ndarray:
        """The lexical index's idf of each of ``words`` (``LexicalIndex.inverse_document_frequencies``)."""
        self.load_indexes()
        if self.lexical is None:
            return np.zeros(len(words), np.float64)
        return self.lexical.inverse_document_frequencies(words)


def _filters(*pairs: tuple[str, str | None]) -> tuple[str, tuple]:
    """`` WHERE a=? AND b=?`` and its values for the (column, value) pairs whose value is not None."""
    given = [(column, value) for column, value in pairs if value is not None]
    if not given:
        return "", ()
    return " WHERE " + " AND ".join(f"{column} = ?" for column, _ in given), tuple(v for _, v in given)


def stored_model(directory: str | os.PathLike) -> tuple[str | None, int | None]:
    """(embedding model, dim) recorded by the memory in ``directory``, else (None, None)."""
    directory = Path(directory)
    if not (directory / schema.DB_FILE).exists():
        return None, None
    conn = schema.connect(directory, create=False)
    try:
        return schema.get_meta(conn, "embed_model"), int(schema.get_meta(conn, "dim", "0")) or None
    finally:
        conn.close()


class CommitWatch:
    """The generation the last commit wrote, read outside any snapshot (so it sees every commit) on
    one connection kept between reads: a poll is one indexed read. Unlocked: share it under a lock."""

    def __init__(self, directory: str | os.PathLike):
        self.directory = Path(directory)
        self._conn: sqlite3.Connection | None = None

    def generation(self) -> int:
        if self._conn is None:
            if not (self.directory / schema.DB_FILE).exists():
                return 0
            try:
                self._conn = schema.connect(self.directory, create=False)
            except MemoryStateError:
                return 0  # a first ingest is creating the file right now: nothing committed yet
        return int(schema.get_meta(self._conn, "generation", "0"))

    def close(self) -> None:
        if self._conn is not None:
            self._conn.close()
            self._conn = None
