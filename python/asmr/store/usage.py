"""What verified answers taught: co-citation counts in ``<memory>/usage.sqlite``, beside the memory.

Its own file, like the audit trail it is learned from: learning never takes the memory's write lock and
never writes ``memory.sqlite``, so it cannot change what a unit says. Counts are of distinct questions
(a question asked again adds nothing), decayed with a half-life: a count ``c`` last raised at ``t``
is worth ``c * 2 ** -(days / half_life)`` after ``days`` whole days. Each fold of new audit records,
and the offsets of the audit files read so far, commit in one transaction: a crash loses the fold,
never half of it, and the next fold reads those records again.
"""
from __future__ import annotations

import sqlite3
from collections.abc import Iterable
from pathlib import Path

USAGE_FILE = "usage.sqlite"
DAY = 86400.0

# ``seen`` holds (question, a, b) once counted: b = '' for a unit cited, a = b = '' for the question.
_SCHEMA = """
CREATE TABLE IF NOT EXISTS usage_units (
    id TEXT PRIMARY KEY, count REAL NOT NULL, at REAL NOT NULL) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS usage_pairs (
    a TEXT NOT NULL, b TEXT NOT NULL, count REAL NOT NULL, at REAL NOT NULL,
    PRIMARY KEY (a, b)) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS usage_pairs_by_b ON usage_pairs (b);
CREATE TABLE IF NOT EXISTS usage_seen (
    question TEXT NOT NULL, a TEXT NOT NULL, b TEXT NOT NULL, PRIMARY KEY (question, a, b)) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS usage_read (source TEXT PRIMARY KEY, offset INTEGER NOT NULL) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS usage_meta (key TEXT PRIMARY KEY, value INTEGER NOT NULL) WITHOUT ROWID;
"""
# Raised by every fold that counts something and by every forget: a server holding a snapshot whose
# edges were laid at another version opens a new one.
_BUMP = ("INSERT INTO usage_meta VALUES ('version', 1) "
         "ON CONFLICT(key) DO UPDATE SET value = value + 1")
_TOTAL = ("", "")  # the usage_pairs row that counts the questions


def usage_path(memory_dir: str | Path) -> Path:
    return Path(memory_dir) / USAGE_FILE


def _decayed(count: float, at: float, now: float, half_life: float) -> float:
    """``count`` at ``at``, decayed to ``now`` by whole days (two questions of this morning count 2)."""
    days = max(now - at, 0.0) // DAY
    return count * 2.0 ** (-days * DAY / half_life) if half_life > 0 else count


class UsageLog:
    """The usage file of the memory directory ``memory_dir``; ``create``: make it if missing (a reader
    of a memory that never learned gets an empty log without writing anything)."""

    def __init__(self, memory_dir: str | Path, *, create: bool = False):
        self.path = usage_path(memory_dir)
        self._conn: sqlite3.Connection | None = None
        if self.path.exists() or create:
            conn = sqlite3.connect(self.path, timeout=30, isolation_level=None, check_same_thread=False)
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute("PRAGMA synchronous=FULL")
            conn.executescript(_SCHEMA)
            self._conn = conn

    def __enter__(self) -> "UsageLog":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def close(self) -> None:
        if self._conn is not None:
            self._conn.close()
            self._conn = None

    @property
    def exists(self) -> bool:
        """Whether there was a file to open (a log opened without ``create`` before any learning is not)."""
        return self._conn is not None

    def version(self) -> int:
        """How many times the counts changed (0 for a log that never learned)."""
        if self._conn is None:
            return 0
        row = self._conn.execute("SELECT value FROM usage_meta WHERE key = 'version'").fetchone()
        return row[0] if row else 0

    def offsets(self) -> dict[str, int]:
        """How far each audit file was read."""
        if self._conn is None:
            return {}
        return dict(self._conn.execute("SELECT source, offset FROM usage_read").fetchall())

    def fold(self, answers: Iterable[tuple[str, float, list[str]]], offsets: dict[str, int],
             half_life: float) -> dict[str, int]:
        """Count ``answers`` — (question key, time in seconds, cited unit ids) — and record ``offsets``,
        in one transaction. Returns what changed: questions, units and pairs newly counted."""
        if self._conn is None:
            raise RuntimeError(f"{self.path}: opened without create")
        conn = self._conn
        counted = {"questions": 0, "units": 0, "pairs": 0}
        conn.execute("BEGIN IMMEDIATE")
        try:
            for question, t, ids in answers:
                ids = sorted(set(ids))
                keys = [_TOTAL] + [(x, "") for x in ids]
                keys += [(a, b) for i, a in enumerate(ids) for b in ids[i + 1:]]
                for a, b in keys:
                    if conn.execute("INSERT OR IGNORE INTO usage_seen VALUES (?, ?, ?)",
                                    (question, a, b)).rowcount == 0:
                        continue  # this question counted it already
                    counted["questions" if not a else "pairs" if b else "units"] += 1
                    table, where, args = ("usage_units", "id=?", (a,)) if a and not b else \
                        ("usage_pairs", "a=? AND b=?", (a, b))
                    row = conn.execute(f"SELECT count, at FROM {table} WHERE {where}", args).fetchone()
                    if row is None:
                        count, at = 1.0, t
                    elif t >= row[1]:
                        count, at = _decayed(row[0], row[1], t, half_life) + 1.0, t
                    else:  # an older record read late: it adds what it is worth at the newer time
                        count, at = row[0] + _decayed(1.0, t, row[1], half_life), row[1]
                    marks = ", ".join("?" * (len(args) + 2))
                    conn.execute(f"INSERT OR REPLACE INTO {table} VALUES ({marks})", (*args, count, at))
            conn.executemany("INSERT OR REPLACE INTO usage_read VALUES (?, ?)", sorted(offsets.items()))
            if any(counted.values()):
                conn.execute(_BUMP)
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        return counted

    def counts(self, now: float, half_life: float
               ) -> tuple[float, dict[str, float], list[tuple[str, str, float]]]:
        """(questions, citations per unit, co-citations per pair), each decayed to ``now``."""
        if self._conn is None:
            return 0.0, {}, []
        total, units, pairs = 0.0, {}, []
        for uid, count, at in self._conn.execute("SELECT id, count, at FROM usage_units"):
            units[uid] = _decayed(count, at, now, half_life)
        for a, b, count, at in self._conn.execute("SELECT a, b, count, at FROM usage_pairs"):
            if not a:
                total = _decayed(count, at, now, half_life)
            else:
                pairs.append((a, b, _decayed(count, at, now, half_life)))
        return total, units, pairs

    def pairs_of(self, uid: str, now: float, half_life: float) -> dict[str, tuple[float, float]]:
        """The units cited with ``uid``: (decayed count, time last counted) of each."""
        if self._conn is None:
            return {}
        rows = self._conn.execute("SELECT b, count, at FROM usage_pairs WHERE a=? UNION ALL "
                                  "SELECT a, count, at FROM usage_pairs WHERE b=? AND a != ''", (uid, uid))
        return {other: (_decayed(count, at, now, half_life), at) for other, count, at in rows}

    def forget(self) -> int:
        """Drop every count (the files read stay read: what was forgotten is not learned again).
        Returns the pairs dropped."""
        if self._conn is None:
            return 0
        conn = self._conn
        conn.execute("BEGIN IMMEDIATE")
        try:
            n = conn.execute("SELECT COUNT(*) FROM usage_pairs WHERE a != ''").fetchone()[0]
            for table in ("usage_units", "usage_pairs", "usage_seen"):
                conn.execute(f"DELETE FROM {table}")
            conn.execute(_BUMP)
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        return n
