"""Numbered turns of conversations in one SQLite file, shared by every process that opens it.

Each turn's record (text the caller makes from the turn's number) is written with that number in
one transaction that holds SQLite's writer lock, so two processes never hand out the same number.
WAL: readers never wait. Past ``capacity`` conversations, the least recently used are dropped.
"""
from __future__ import annotations

import sqlite3
import threading
import time
from collections.abc import Callable
from pathlib import Path

# The record column keeps the name it has in the files already written: ``allowlist``.
_SCHEMA = """
CREATE TABLE IF NOT EXISTS conversations (id TEXT PRIMARY KEY, updated REAL NOT NULL) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS conversations_updated ON conversations(updated);
CREATE TABLE IF NOT EXISTS turns (
    conversation TEXT NOT NULL, turn INTEGER NOT NULL, allowlist TEXT NOT NULL,
    PRIMARY KEY (conversation, turn)) WITHOUT ROWID;
"""
PRUNE_EVERY = 256  # turns added between two prunes (each prune scans the conversation index)


class TurnLog:
    """The turns file ``path``, through one connection per process."""

    def __init__(self, path: str | Path, *, capacity: int, prune_every: int = PRUNE_EVERY):
        self.path = Path(path)
        self.capacity, self.prune_every = capacity, prune_every
        self._lock = threading.Lock()  # one connection per process, used by one thread at a time
        self._conn: sqlite3.Connection | None = None
        self._added = 0

    def _connect(self) -> sqlite3.Connection:
        if self._conn is None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            conn = sqlite3.connect(self.path, timeout=30, isolation_level=None, check_same_thread=False)
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute("PRAGMA synchronous=NORMAL")  # a crash may lose the last turns, never corrupt
            conn.executescript(_SCHEMA)
            self._conn = conn
        return self._conn

    def add(self, conversation: str, record: Callable[[int], str]) -> None:
        """Store ``record(n)`` as turn ``n``, the next of ``conversation``. ``record`` runs inside the
        transaction: what it raises propagates and stores nothing."""
        with self._lock:
            conn = self._connect()
            conn.execute("BEGIN IMMEDIATE")  # the writer lock across processes: numbers stay unique
            try:
                last = conn.execute("SELECT MAX(turn) FROM turns WHERE conversation=?", (conversation,)).fetchone()[0]
                n = (last or 0) + 1
                conn.execute("INSERT INTO turns VALUES (?, ?, ?)", (conversation, n, record(n)))
                conn.execute("INSERT OR REPLACE INTO conversations VALUES (?, ?)", (conversation, time.time()))
                self._added += 1
                if self._added % self.prune_every == 0:
                    self._prune(conn)
                conn.execute("COMMIT")
            except BaseException:
                conn.execute("ROLLBACK")
                raise

    def records(self, conversation: str) -> list[str]:
        """The records of the conversation's turns in order; empty when it is unknown (or was dropped)."""
        with self._lock:
            rows = self._connect().execute("SELECT allowlist FROM turns WHERE conversation=? ORDER BY turn",
                                           (conversation,)).fetchall()
        return [r[0] for r in rows]

    def _prune(self, conn: sqlite3.Connection) -> None:
        old = "SELECT id FROM conversations ORDER BY updated DESC LIMIT -1 OFFSET ?"
        conn.execute(f"DELETE FROM turns WHERE conversation IN ({old})", (self.capacity,))
        conn.execute(f"DELETE FROM conversations WHERE id IN ({old})", (self.capacity,))

    def close(self) -> None:
        with self._lock:
            if self._conn is not None:
                self._conn.close()
                self._conn = None
