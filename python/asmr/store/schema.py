"""SQLite schema of a memory directory and the names of its files.

A memory directory holds::

    memory.sqlite        documents, versions, units, links, meta (WAL journal)
    vectors.f32          float32 [rows, dim], row r = unit with row r; append-only
    dense.<gen>.faiss    faiss index of active unit rows for generation <gen>
    lexical.<gen>/       BM25 index (bm25s files + rows.npy + analysis.json) for generation <gen>
    write.lock           held by the one writer

``meta.generation`` is the commit pointer: an ingest writes the next
generation's index files under their final names (each via a temporary name
and rename), then commits the rows and the new generation number in one
transaction. Files of any other generation are leftovers and are removed by the
next writer; vector rows past the committed row count are truncated.
"""
from __future__ import annotations

import fcntl
import os
import sqlite3
from pathlib import Path

SCHEMA_VERSION = 1
DB_FILE = "memory.sqlite"
VECTORS_FILE = "vectors.f32"
LOCK_FILE = "write.lock"


def dense_file(gen: int) -> str:
    return f"dense.{gen}.faiss"


def lexical_dir(gen: int) -> str:
    return f"lexical.{gen}"


# Kept apart from the table so that a bulk load into an empty memory can build them
# once at the end (a sort) instead of row by row (random b-tree inserts, ~35% of insert time).
UNIT_INDEXES = {
    "units_by_id": "CREATE UNIQUE INDEX IF NOT EXISTS units_by_id ON units (id)",
    "units_by_doc": "CREATE INDEX IF NOT EXISTS units_by_doc ON units (kb, doc_id, status, ord)",
    "units_by_hash": "CREATE INDEX IF NOT EXISTS units_by_hash ON units (content_hash)",
    # Partial: most units have no successor. `superseded_by = ?` and `superseded_by IN (...)` still use it.
    "units_by_successor": "CREATE INDEX IF NOT EXISTS units_by_successor ON units (superseded_by) "
                          "WHERE superseded_by IS NOT NULL",
}

DDL = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS documents (
    kb TEXT NOT NULL, doc_id TEXT NOT NULL, title TEXT NOT NULL, doc_type TEXT NOT NULL,
    current_version INTEGER NOT NULL, created_at TEXT NOT NULL, updated_at TEXT NOT NULL,
    PRIMARY KEY (kb, doc_id));
CREATE TABLE IF NOT EXISTS versions (
    kb TEXT NOT NULL, doc_id TEXT NOT NULL, version INTEGER NOT NULL,
    sha256 TEXT NOT NULL, text TEXT NOT NULL, raw TEXT, fmt TEXT NOT NULL,
    title TEXT NOT NULL, doc_type TEXT NOT NULL, effective_date TEXT NOT NULL,
    source TEXT NOT NULL, ingested_at TEXT NOT NULL,
    units_total INTEGER NOT NULL, units_kept INTEGER NOT NULL, units_added INTEGER NOT NULL,
    units_superseded INTEGER NOT NULL, units_deprecated INTEGER NOT NULL,
    PRIMARY KEY (kb, doc_id, version));
CREATE TABLE IF NOT EXISTS units (
    row INTEGER PRIMARY KEY, id TEXT NOT NULL,
    kb TEXT NOT NULL, doc_id TEXT NOT NULL, doc_version INTEGER NOT NULL, ord INTEGER NOT NULL,
    kind TEXT NOT NULL, parent_id TEXT, section_path TEXT NOT NULL,
    offset_start INTEGER NOT NULL, offset_end INTEGER NOT NULL, content TEXT NOT NULL,
    content_hash TEXT NOT NULL, created_at TEXT NOT NULL, effective_at TEXT NOT NULL,
    status TEXT NOT NULL CHECK (status = 'active' OR status = 'superseded' OR status = 'deprecated'),
    superseded_by TEXT, embed_model TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS links (
    source_id TEXT NOT NULL, kind TEXT NOT NULL, target TEXT NOT NULL,
    target_doc TEXT, text TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS links_by_source ON links (source_id);
""" + "".join(f"{ddl};\n" for ddl in UNIT_INDEXES.values())
# The status CHECK is spelled with OR: SQLite evaluates `status IN (<list>)` in a CHECK by building
# a small table for every row written (~7 us of the ~18 us an insert cost). Both spellings accept
# the same rows, so memories created with the IN spelling (or the full index on superseded_by)
# are the same schema version and are used as they are.


class MemoryStateError(RuntimeError):
    """The memory directory cannot be used as asked (newer schema, another writer, missing)."""


def connect(directory: Path, *, create: bool) -> sqlite3.Connection:
    path = directory / DB_FILE
    if not path.exists():
        if not create:
            raise MemoryStateError(f"memory {directory}: no {DB_FILE} here; run `asmr ingest` to create one")
        directory.mkdir(parents=True, exist_ok=True)
    conn = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    try:
        conn.execute("PRAGMA journal_mode=WAL")
        conn.execute("PRAGMA synchronous=FULL")  # a committed ingest survives power loss, not only a crash
        conn.execute("PRAGMA busy_timeout=10000")
        tables = _tables(conn)
        if tables and "meta" not in tables:  # never add tables to somebody else's database
            raise MemoryStateError(f"memory {directory}: {DB_FILE} is not an ASMR memory (no meta table)")
        if _never_committed(conn, tables):
            if not create:
                raise MemoryStateError(f"memory {directory}: no ingest has committed here yet (the first one "
                                       "is still running or was interrupted); run `asmr ingest` to create the memory")
        else:
            check_schema(conn, directory)  # before any DDL: never touch a newer schema
        if create:
            _create(conn)
            check_schema(conn, directory)
    except BaseException:
        conn.close()
        raise
    return conn


def _tables(conn: sqlite3.Connection) -> set[str]:
    return {name for name, in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}


def _never_committed(conn: sqlite3.Connection, tables: set[str]) -> bool:
    """No ingest ever committed here: a file with no tables (killed before the creation committed)
    or, from versions that created the tables one statement at a time, a meta table without rows."""
    return not tables or ("meta" in tables and conn.execute("SELECT 1 FROM meta LIMIT 1").fetchone() is None)


def never_committed(directory: Path) -> bool:
    """True when ``directory`` holds a memory database that no ingest has committed to yet."""
    path = directory / DB_FILE
    if not path.exists():
        return False
    conn = sqlite3.connect(path, isolation_level=None)
    try:
        return _never_committed(conn, _tables(conn))
    finally:
        conn.close()


def _create(conn: sqlite3.Connection) -> None:
    """The tables, indexes and first meta rows, in one transaction: a process killed in the middle
    leaves either none of them or all (each statement on its own would commit, and fsync, alone)."""
    try:
        conn.executescript(f"BEGIN IMMEDIATE;\n{DDL}"
                           f"INSERT OR IGNORE INTO meta VALUES ('schema_version', '{SCHEMA_VERSION}');\n"
                           "INSERT OR IGNORE INTO meta VALUES ('generation', '0');\nCOMMIT;")
    except BaseException:
        if conn.in_transaction:
            conn.rollback()
        raise


def check_schema(conn: sqlite3.Connection, directory: Path) -> None:
    try:
        row = conn.execute("SELECT value FROM meta WHERE key='schema_version'").fetchone()
    except sqlite3.DatabaseError as exc:
        raise MemoryStateError(f"memory {directory}: {DB_FILE} is not an ASMR memory ({exc})") from exc
    if row is None:
        raise MemoryStateError(f"memory {directory}: {DB_FILE} has no schema version")
    version = int(row[0])
    if version > SCHEMA_VERSION:
        raise MemoryStateError(
            f"memory {directory}: written by a newer ASMR (schema {version}; this one reads up to "
            f"{SCHEMA_VERSION}); upgrade asmr to use it")


def ingest_running(directory: Path) -> bool:
    """Whether a writer holds ``directory``'s lock now. A shared lock taken and dropped at once: it
    never waits, and it could make a writer starting in that microsecond say "another ingest"."""
    try:
        fd = os.open(directory / LOCK_FILE, os.O_RDONLY | os.O_CLOEXEC)
    except OSError:
        return False  # no lock file: no writer has ever opened this memory
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    finally:
        os.close(fd)  # drops the shared lock, if taken
    return False


def get_meta(conn: sqlite3.Connection, key: str, default: str | None = None) -> str | None:
    row = conn.execute("SELECT value FROM meta WHERE key=?", (key,)).fetchone()
    return default if row is None else row[0]


__all__ = ["SCHEMA_VERSION", "DB_FILE", "VECTORS_FILE", "LOCK_FILE", "MemoryStateError",
           "connect", "check_schema", "get_meta", "ingest_running", "dense_file", "lexical_dir"]
