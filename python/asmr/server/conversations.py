"""Conversations' turns, shared by every worker of a server: ``<memory>/conversations.sqlite``.

With ``--workers N`` the turns of one conversation land on any worker, and /v1/verify may ask a
worker that did not answer the turn. So a turn's allowlist is written to one SQLite file beside
the memory (WAL: readers never wait) when the turn opens, before the model generates, and its
number is taken in the same transaction, so two workers never hand out the same turn. The file
also outlives a restart. Past ``capacity`` conversations, the least recently used are dropped.
"""
from __future__ import annotations

import json
import sqlite3
import threading
import time
from pathlib import Path

from ..verify.allowlist import Allowlist

FILE = "conversations.sqlite"
_SCHEMA = """
CREATE TABLE IF NOT EXISTS conversations (id TEXT PRIMARY KEY, updated REAL NOT NULL) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS conversations_updated ON conversations(updated);
CREATE TABLE IF NOT EXISTS turns (
    conversation TEXT NOT NULL, turn INTEGER NOT NULL, allowlist TEXT NOT NULL,
    PRIMARY KEY (conversation, turn)) WITHOUT ROWID;
"""
_PRUNE_EVERY = 256  # turns opened between two prunes (each prune scans the conversation index)


class TurnLimit(Exception):
    """The conversation already has the most turns allowed."""


class ConversationStore:
    def __init__(self, directory: str | Path, *, capacity: int, max_turns: int):
        self.path = Path(directory) / FILE
        self.capacity, self.max_turns = capacity, max_turns
        self._lock = threading.Lock()  # one connection per process, used by one thread at a time
        self._conn: sqlite3.Connection | None = None
        self._opened = 0

    def _connect(self) -> sqlite3.Connection:
        if self._conn is None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            conn = sqlite3.connect(self.path, timeout=30, isolation_level=None, check_same_thread=False)
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute("PRAGMA synchronous=NORMAL")  # a crash may lose the last turns, never corrupt
            conn.executescript(_SCHEMA)
            self._conn = conn
        return self._conn

    def open_turn(self, conversation: str, result) -> Allowlist:
        """The next turn of ``conversation`` with the units ``result`` recalled, numbered and saved."""
        with self._lock:
            conn = self._connect()
            conn.execute("BEGIN IMMEDIATE")  # the writer lock across workers: numbers stay unique
            try:
                last = conn.execute("SELECT MAX(turn) FROM turns WHERE conversation=?", (conversation,)).fetchone()[0]
                n = (last or 0) + 1
                if n > self.max_turns:
                    raise TurnLimit(f"conversation: has reached the limit of {self.max_turns} turns; start a new one")
                allowlist = Allowlist.from_result(result, n, conversation)
                conn.execute("INSERT INTO turns VALUES (?, ?, ?)",
                             (conversation, n, json.dumps(allowlist.to_dict(), ensure_ascii=False)))
                conn.execute("INSERT OR REPLACE INTO conversations VALUES (?, ?)", (conversation, time.time()))
                self._opened += 1
                if self._opened % _PRUNE_EVERY == 0:
                    self._prune(conn)
                conn.execute("COMMIT")
            except BaseException:
                conn.execute("ROLLBACK")
                raise
        return allowlist

    def turns(self, conversation: str) -> list[Allowlist]:
        """The conversation's turns in order; empty when it is unknown (or was dropped)."""
        with self._lock:
            rows = self._connect().execute("SELECT allowlist FROM turns WHERE conversation=? ORDER BY turn",
                                           (conversation,)).fetchall()
        return [Allowlist.from_dict(json.loads(r[0])) for r in rows]

    def _prune(self, conn: sqlite3.Connection) -> None:
        old = "SELECT id FROM conversations ORDER BY updated DESC LIMIT -1 OFFSET ?"
        conn.execute(f"DELETE FROM turns WHERE conversation IN ({old})", (self.capacity,))
        conn.execute(f"DELETE FROM conversations WHERE id IN ({old})", (self.capacity,))

    def close(self) -> None:
        with self._lock:
            if self._conn is not None:
                self._conn.close()
                self._conn = None


class TurnOpener:
    """What ``Answerer.answer`` asks of a conversation (``new_turn``), backed by the shared store."""

    def __init__(self, store: ConversationStore, conversation: str):
        self.store, self.id = store, conversation

    def new_turn(self, result) -> Allowlist:
        return self.store.open_turn(self.id, result)
