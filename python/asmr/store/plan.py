"""Planning an ingest: what the writer will store for each batch of documents, worked out from the
committed memory alone, so that it can run in a second process while the writer inserts.

For a batch, the planner chunks each changed document, gives its units ids and rows, relates
them to the stored units (``plan_revision``), finds which new texts already have a vector,
and builds the rows the writer inserts and updates. At the end it builds the next
generation's BM25 index over every unit that stays active, from the new units' tokens (the
writer tokenizes them while it stores them: that balances the two processes' work). It reads
the memory through its own connection, which sees the last commit: the writer holds the write
lock, so nothing else commits meanwhile, and document ids are unique in one ingest, so no
document is planned against this ingest's own writes. It never writes to the database; its
one file is the BM25 index under a ``.tmp`` name, which the writer renames.

``Planner`` runs in the writer's process; ``PlannerProcess`` runs one in a child process (an
interpreter started for it, spoken to over two pipes) with the same calls: ``submit``, ``retire``,
``result``, ``start_lexical``, ``lexical``, ``close``. The child dies with the writer: a
SIGKILLed writer leaves no planner behind to touch the directory.
"""
from __future__ import annotations

import gc
import hashlib
import json
import os
import pickle
import queue
import shutil
import sqlite3
import subprocess
import sys
import threading
import time
import traceback
from collections import deque
from dataclasses import dataclass, field
from datetime import datetime, timezone
from multiprocessing.connection import Connection
from pathlib import Path

import numpy as np

from ..index.lexical import LexicalIndex, Tokens
from ..text.turns import parse_turn, question_answered, speaker_names
from ..units.ids import content_hash, unit_id
from ..units.lifecycle import Revision, assign_keys, plan_revision
from ..units.model import Document, InputError
from ..units.read import chunk_document
from . import schema


def utc_now() -> str:
    """The time stamps a memory records: UTC, ISO 8601, to the second."""
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


RETIRED_SHA = "retired"  # the sha256 column of a version that retired its document: no text has it


def _vector_keys(doc: Document, chunks, hashes: list[str], last_turn: str | None, speakers: set[str]):
    """Per chunk, the key its vector is shared under, and the window it is embedded with: None, or the
    question it answers then the chunk (``text.turns.question_answered``). A turn unit answers the unit
    before it in its document; a document of one turn, ``last_turn`` (the one-turn document before it).
    ``speakers``: those of the turns read so far, which this adds to (a question that calls one of them
    by name is theirs to answer).

    A text's key is its content hash, and the memory's stored vector of that hash is copied. A turn's
    key is another hash, which no unit has: its vector may have been read with a question, so turns
    share a vector only within one ingest, and a reply only with the same reply to the same question."""
    keys, windows = list(hashes), [None] * len(chunks)
    previous = last_turn if "\n\n" not in doc.text else None
    for j, chunk in enumerate(chunks):
        if chunk.parent is not None:
            continue
        if (turn := parse_turn(chunk.content)) is None:
            previous = None
            continue
        speakers.update(speaker_names(turn.speaker))
        question = question_answered(previous, chunk.content, speakers) if previous is not None else None
        if question is not None:
            windows[j] = f"{question}\n\n{chunk.content}"
        keys[j] = content_hash("turn", windows[j] or chunk.content)
        previous = chunk.content
    return keys, windows


def document_sha(doc: Document) -> str:
    """What makes two versions the same: text, title, type and effective date."""
    h = hashlib.sha256()
    for part in (doc.text, doc.title, doc.doc_type, doc.effective_date or "", doc.raw or ""):
        h.update(part.encode("utf-8", "surrogatepass"))
        h.update(b"\x00")
    return h.hexdigest()


# A new unit's row as the planner sends it; the columns every row of a batch shares come apart
# (PlannedBatch.constants, CONSTANT_COLUMNS), and the writer puts them in the statement as literals:
# five fewer values to bind per row, a sixth of the insert's cost.
INSERT_COLUMNS = ("row", "id", "doc_id", "doc_version", "ord", "kind", "parent_id", "section_path",
                  "offset_start", "offset_end", "content", "content_hash", "effective_at")
CONSTANT_COLUMNS = ("kb", "created_at", "status", "embed_model")


@dataclass(slots=True)
class PlannedBatch:
    """What the writer does for one batch of documents, in its transaction."""
    reports: list[tuple] = field(default_factory=list)  # DocumentReport fields, in report order
    first_row: int = 0  # the row of the first new unit; new units take the rows that follow
    texts: list[str] = field(default_factory=list)  # new texts to embed (distinct, in order)
    # per text: None, or the text after the question it answers (``text.turns.question_answered``),
    # embedded too: the unit's vector is read with it (``embed.in_context``)
    windows: list[str | None] = field(default_factory=list)
    src: np.ndarray | None = None  # per new unit: >= 0 the row to copy its vector from, < 0 -(1 + text index)
    reused: int = 0  # new units whose vector is copied from a stored row
    gone_rows: list[int] = field(default_factory=list)  # rows of units that stop being active
    inserts: list[tuple] = field(default_factory=list)  # units rows: the INSERT_COLUMNS, then ``constants``
    constants: tuple = ()  # the same for every row of the batch: kb, created_at, status, embed_model
    kept: list[tuple] = field(default_factory=list)
    superseded: list[tuple] = field(default_factory=list)
    deprecated: list[tuple] = field(default_factory=list)
    versions: list[tuple] = field(default_factory=list)
    documents: list[tuple] = field(default_factory=list)
    links: list[tuple] = field(default_factory=list)
    unlinks: list[tuple] = field(default_factory=list)
    seconds: float = 0.0  # planning time

    @property
    def changed(self) -> bool:
        return bool(self.versions)


class Planner:
    """Plans the batches of one ingest, in order, against the committed memory."""

    def __init__(self, directory: str, kb: str, committed_rows: int, embed_model: str, ingest_time: str,
                 ingested_at: str | None = None):
        self.directory = Path(directory)
        self.kb = kb
        self.committed_rows = committed_rows
        self.next_row = committed_rows
        self.embed_model = embed_model
        self.ingest_time = ingest_time  # the default effective date of every document of this ingest
        self.ingested_at = ingested_at or utc_now()  # when the ingest began: every version's ingested_at
        self.conn = sqlite3.connect(self.directory / schema.DB_FILE, isolation_level=None,
                                    check_same_thread=False)
        self.conn.execute("PRAGMA busy_timeout=10000")
        self.conn.execute("PRAGMA query_only=1")
        self.written: dict[str, int] = {}  # vector key -> a row with its vector (stored, or this ingest's)
        # The last document's text when it is one turn: a conversation stored a turn a document (as eval
        # corpora are) is read across documents, a reply with the question before it.
        self.last_turn: str | None = None
        self.speakers: set[str] = set()  # of the turns planned so far, normalised, and their first names
        self.gone: set[int] = set()  # rows of stored units this ingest supersedes or deprecates
        self.changed = False
        self.seconds = {"chunk": 0.0, "lexical": 0.0}

    def close(self) -> None:
        if self.conn is not None:
            self.conn.close()
            self.conn = None

    # One batch
    def plan(self, batch: list[Document]) -> PlannedBatch:
        t0 = time.perf_counter()
        kb = self.kb
        out = PlannedBatch(first_row=self.next_row)
        known = self._known_documents([d.doc_id for d in batch])
        plans = []
        for doc in batch:
            sha = document_sha(doc)
            prev = known.get(doc.doc_id)
            if prev is not None and prev[1] == sha:
                out.reports.append((kb, doc.doc_id, prev[0], "unchanged", prev[2], 0, 0, 0, 0))
            else:
                plans.append(self._plan_document(doc, sha, prev, self.last_turn, self.speakers))
            self.last_turn = doc.text if "\n\n" not in doc.text and parse_turn(doc.text) else None
        if plans:
            self.changed = True
            self._rows(plans, out)
        out.seconds = time.perf_counter() - t0
        self.seconds["chunk"] += out.seconds
        return out

    def retire(self, docs: list[tuple[str, str]]) -> PlannedBatch:
        """Retire documents (``(doc_id, source)`` pairs) whose source is gone: a new version without
        units, every active unit deprecated. Nothing is deleted; the text comes back as a revision."""
        t0 = time.perf_counter()
        kb, now = self.kb, utc_now()
        out = PlannedBatch(first_row=self.next_row, src=np.zeros(0, np.int64), constants=(kb, now, "active",
                                                                                          self.embed_model))
        for doc_id, source in docs:
            version, fmt, title, doc_type = self.conn.execute(
                "SELECT d.current_version, v.fmt, v.title, v.doc_type FROM documents d JOIN versions v ON "
                "v.kb=d.kb AND v.doc_id=d.doc_id AND v.version=d.current_version WHERE d.kb=? AND d.doc_id=?",
                (kb, doc_id)).fetchone()
            units = self.conn.execute("SELECT id, row FROM units WHERE kb=? AND doc_id=? AND status='active'",
                                      (kb, doc_id)).fetchall()
            out.deprecated.extend((uid,) for uid, _ in units)
            out.gone_rows.extend(row for _, row in units)
            out.versions.append((kb, doc_id, version + 1, RETIRED_SHA, "", None, fmt, title, doc_type,
                                 self.ingest_time, f"{source} (gone; retired by --prune)", self.ingested_at,
                                 0, 0, 0, 0, len(units)))
            out.documents.append((kb, doc_id, title, doc_type, version + 1, now, now))
            out.reports.append((kb, doc_id, version + 1, "retired", 0, 0, 0, 0, len(units)))
        self.gone.update(out.gone_rows)
        self.changed = self.changed or bool(docs)
        out.seconds = time.perf_counter() - t0
        return out

    def _known_documents(self, doc_ids: list[str]) -> dict[str, tuple[int, str, int]]:
        """doc id -> (current version, its sha256, its unit count) for documents already stored."""
        out = {}
        for part in _slices(doc_ids):
            marks = ",".join("?" * len(part))
            for doc_id, version, sha, total in self.conn.execute(
                    f"SELECT d.doc_id, d.current_version, v.sha256, v.units_total FROM documents d "
                    f"JOIN versions v ON v.kb=d.kb AND v.doc_id=d.doc_id AND v.version=d.current_version "
                    f"WHERE d.kb=? AND d.doc_id IN ({marks})", (self.kb, *part)):
                out[doc_id] = (version, sha, total)
        return out

    def _plan_document(self, doc: Document, sha: str, prev, last_turn: str | None,
                       speakers: set[str]) -> tuple:
        old, taken = [], set()
        if prev is not None:
            for uid, kind, content, status in self.conn.execute(
                    "SELECT id, kind, content, status FROM units WHERE kb=? AND doc_id=? ORDER BY ord, row",
                    (self.kb, doc.doc_id)):
                if status == "active":
                    old.append((uid, kind, content))
                else:
                    taken.add(uid.rsplit("/", 1)[1])
        # a conversation keeps its stored units as they are (units.turns); other formats ignore them
        chunked = chunk_document(doc, stored=[o[2] for o in old] if doc.fmt == "chat" else ())
        chunks = chunked.chunks
        if not chunks:
            raise InputError(f"{doc.source or doc.doc_id}: no text to store (the document has no units)")
        hashes = [content_hash(c.kind, c.content) for c in chunks]
        keys, windows = _vector_keys(doc, chunks, hashes, last_turn, speakers)
        prefix = unit_id(self.kb, doc.doc_id, "")
        ids = [prefix + k for k in assign_keys(hashes, taken)]
        revision = plan_revision(old, ids, [(c.kind, c.content) for c in chunks]) if old else \
            Revision(added=list(range(len(ids))))
        return (doc, sha, 1 if prev is None else prev[0] + 1, prev is None, chunked, ids, hashes, revision,
                doc.effective_date or self.ingest_time, keys, windows)

    def _rows(self, plans: list[tuple], out: PlannedBatch) -> None:
        """The batch's rows to write and its vector sources."""
        kb, model, now = self.kb, self.embed_model, utc_now()
        have = self.written
        if self.committed_rows:  # texts the memory already holds a vector for (not turns: _vector_keys)
            lookup = list(dict.fromkeys(h for p in plans for j in _new_chunks(p[7])
                                        if (h := p[9][j]) == p[6][j] and h not in have))
            for part in _slices(lookup):
                marks = ",".join("?" * len(part))
                have.update(self.conn.execute(
                    f"SELECT content_hash, min(row) FROM units WHERE content_hash IN ({marks}) "
                    f"GROUP BY content_hash", part).fetchall())
            gone_ids = [uid for p in plans
                        for uid in (*p[7].deprecated, *(old for old, _ in p[7].superseded))]
            for part in _slices(gone_ids):
                marks = ",".join("?" * len(part))
                out.gone_rows.extend(r for r, in self.conn.execute(
                    f"SELECT row FROM units WHERE id IN ({marks})", part))
            self.gone.update(out.gone_rows)
        first: dict[str, int] = {}  # vector key -> its position among this batch's texts to embed
        firsts: list[tuple[str, int]] = []  # (vector key, row) of those texts
        texts, windows = out.texts, out.windows
        src = []
        inserts, links = out.inserts, out.links
        paths: dict[tuple, str] = {}  # units of a section share its path: encode it once
        row = self.next_row
        for doc, sha, version, created, chunked, ids, hashes, rev, effective, keys, window_of in plans:
            chunks = chunked.chunks
            doc_id = doc.doc_id
            for j in _new_chunks(rev):
                ch = chunks[j]
                h = keys[j]
                if (stored := have.get(h)) is not None:
                    src.append(stored)
                    out.reused += 1
                elif (pos := first.get(h)) is not None:
                    src.append(-1 - pos)
                else:
                    pos = first[h] = len(texts)
                    texts.append(ch.content)
                    windows.append(window_of[j])
                    firsts.append((h, row))
                    src.append(-1 - pos)
                section_path = ch.section_path
                if (path := paths.get(section_path)) is None:
                    path = paths[section_path] = json.dumps(section_path, ensure_ascii=False)
                parent = None if ch.parent is None else ids[ch.parent]
                inserts.append((row, ids[j], doc_id, version, j, ch.kind, parent, path, ch.offset_start,
                                ch.offset_end, ch.content, hashes[j], effective))
                row += 1
            for j, uid in rev.kept:
                ch = chunks[j]
                section_path = ch.section_path
                if (path := paths.get(section_path)) is None:
                    path = paths[section_path] = json.dumps(section_path, ensure_ascii=False)
                out.kept.append((version, j, None if ch.parent is None else ids[ch.parent], path,
                                 ch.offset_start, ch.offset_end, uid))
            out.superseded.extend((ids[j], old) for old, j in rev.superseded)
            out.deprecated.extend((u,) for u in rev.deprecated)
            out.versions.append((kb, doc_id, version, sha, doc.text, doc.raw, doc.fmt, doc.title,
                                 doc.doc_type, effective, doc.source, self.ingested_at, len(ids), len(rev.kept),
                                 len(rev.added), len(rev.superseded), len(rev.deprecated)))
            out.documents.append((kb, doc_id, doc.title, doc.doc_type, version, now, now))
            if not created:
                out.unlinks.extend((u,) for _, u in rev.kept)
            links.extend((ids[ln.source], ln.kind, ln.target, _link_doc(doc, ln.kind, ln.target), ln.text)
                         for ln in chunked.links)
            out.reports.append((kb, doc_id, version, "new" if created else "revised", len(ids), len(rev.kept),
                                len(rev.added), len(rev.superseded), len(rev.deprecated)))
        for h, r in firsts:
            have[h] = r  # later batches copy this ingest's vector of the text
        out.constants = (kb, now, "active", model)
        out.src = np.asarray(src, np.int64)
        self.next_row = row

    # The end of the ingest
    def lexical(self, tmp: str | os.PathLike, new: Tokens) -> tuple[int, float]:
        """Write the BM25 index over every unit active after this ingest to ``tmp``; (units, seconds).

        ``new``: the tokens of this ingest's new units, in row order (the writer tokenizes them
        as it stores them).
        """
        t0 = time.perf_counter()
        self.written.clear()  # the last call: its memory goes to the index
        tmp = Path(tmp)
        if tmp.exists():
            shutil.rmtree(tmp)
        stored = Tokens(new.vocab)  # the stored units that stay active: rows below the new ones
        if self.committed_rows:
            gone = self.gone
            add = stored.add
            for row, content in self.conn.execute("SELECT row, content FROM units WHERE status='active' "
                                                  "ORDER BY row"):
                if row not in gone:
                    add(row, content)
        index = LexicalIndex.from_tokens(stored.join(new) if len(stored) else new)
        index.save(tmp)
        seconds = time.perf_counter() - t0
        self.seconds["lexical"] += seconds
        return index.size, seconds


def _new_chunks(rev: Revision) -> list[int]:
    """Chunk indices that become new units: added and successors, in document order."""
    if not rev.superseded:
        return rev.added
    return sorted([*rev.added, *(j for _, j in rev.superseded)])


def _slices(items: list, n: int = 500):
    for i in range(0, len(items), n):
        yield items[i:i + n]


def _link_doc(doc: Document, kind: str, target: str) -> str | None:
    """The document a link points to: this one for a section reference, else the resolved relative path."""
    import posixpath

    from ..units.ids import doc_id_from_path

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


class InProcessPlanner:
    """A Planner in the writer's process, behind PlannerProcess's calls."""

    def __init__(self, **config):
        self._planner = Planner(**config)
        self._done: deque = deque()

    @property
    def pending(self) -> int:
        return len(self._done)

    @property
    def seconds(self) -> dict[str, float]:
        return self._planner.seconds

    def submit(self, batch: list[Document]) -> None:
        self._done.append(self._planner.plan(batch))

    def retire(self, docs: list[tuple[str, str]]) -> None:
        self._done.append(self._planner.retire(docs))

    def result(self) -> PlannedBatch:
        return self._done.popleft()

    def start_lexical(self, tmp: Path, new: Tokens) -> None:
        self._lexical = (tmp, new)

    def lexical(self) -> tuple[int, float]:
        return self._planner.lexical(*self._lexical)

    def close(self, *, failed: bool = False) -> None:
        self._planner.close()


class PlannerProcess:
    """A Planner in a child process: batches go down one pipe, their plans come back up the other.

    Calls are queued: ``submit`` returns at once, ``result`` returns the oldest plan not yet
    returned; ``start_lexical`` queues the BM25 build behind the batches and ``lexical`` waits
    for it. An exception in the child is raised by the call that returns its result.
    """

    def __init__(self, **config):
        package_root = str(Path(__file__).resolve().parents[2])  # the directory holding asmr/
        down_r, down_w = os.pipe()
        up_r, up_w = os.pipe()
        code = ("import sys; sys.path.insert(0, sys.argv[1]); from asmr.store.plan import serve; "
                "serve(int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]))")
        try:
            self._proc = subprocess.Popen(
                [sys.executable, "-c", code, package_root, str(down_r), str(up_w), str(os.getpid())],
                pass_fds=(down_r, up_w), stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL)
        finally:
            os.close(down_r)
            os.close(up_w)
        self._down = Connection(down_w, readable=False)
        self._up = Connection(up_r, writable=False)
        self.pending = 0
        self.seconds = {"chunk": 0.0, "lexical": 0.0}
        self._send(("config", config))

    def _send(self, message) -> None:
        try:
            self._down.send(message)
        except (BrokenPipeError, ConnectionResetError, OSError):
            self._raise_dead()

    def _receive(self):
        try:
            status, value = self._up.recv()
        except (EOFError, ConnectionResetError, OSError):
            self._raise_dead()
        if status == "error":
            exc, tb = value
            if not isinstance(exc, InputError):
                exc.add_note(f"in the ingest planner process:\n{tb}")
            raise exc
        return value

    def _raise_dead(self):
        code = self._proc.wait(timeout=30)
        raise RuntimeError(f"the ingest planner process exited (code {code}) before it finished")

    def submit(self, batch: list[Document]) -> None:
        self._send(("plan", batch))
        self.pending += 1

    def retire(self, docs: list[tuple[str, str]]) -> None:
        self._send(("retire", docs))
        self.pending += 1

    def result(self) -> PlannedBatch:
        out = self._receive()
        self.pending -= 1
        self.seconds["chunk"] += out.seconds
        return out

    def start_lexical(self, tmp: Path, new: Tokens) -> None:
        self._send(("lexical", (str(tmp), new)))

    def lexical(self) -> tuple[int, float]:
        while self.pending:  # never the case in the writer's order; kept for safety
            self.result()
        out = self._receive()
        self.seconds["lexical"] += out[1]
        return out

    def close(self, *, failed: bool = False) -> None:
        if self._proc is None:
            return
        try:
            if failed:
                self._proc.kill()
            else:
                self._send(("close", None))
        except RuntimeError:
            pass
        finally:
            self._down.close()
            self._up.close()
            try:
                self._proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self._proc.kill()
                self._proc.wait()
            self._proc = None


def _die_with_parent(parent: int) -> None:
    """Have the kernel SIGKILL this process when the writer's process dies (Linux), and check it lives."""
    if sys.platform.startswith("linux"):
        try:
            import ctypes
            import signal

            ctypes.CDLL(None, use_errno=True).prctl(1, int(signal.SIGKILL))  # PR_SET_PDEATHSIG
        except (OSError, AttributeError):
            pass
    if os.getppid() != parent:  # the writer died before the line above
        os._exit(1)


def serve(down_fd: int, up_fd: int, parent: int) -> None:
    """The child process: plan what arrives on ``down_fd`` until told to close or the pipe ends."""
    _die_with_parent(parent)
    # This process lives for one ingest and makes no reference cycles worth collecting; the
    # collector's passes over the chunks it allocates cost about a fifth of the chunking.
    gc.disable()
    down = Connection(down_fd, writable=False)
    up = Connection(up_fd, readable=False)
    inbox: queue.Queue = queue.Queue()

    def receive() -> None:  # drains the pipe, so the writer never blocks sending while we send
        try:
            while True:
                message = down.recv()
                inbox.put(message)
                if message[0] == "close":
                    return
        except (EOFError, OSError):
            inbox.put(("close", None))

    threading.Thread(target=receive, daemon=True).start()
    planner = None
    try:
        while True:
            op, arg = inbox.get()
            if op == "close":
                return
            try:
                if op == "config":
                    planner = Planner(**arg)
                    continue
                value = (planner.plan(arg) if op == "plan" else planner.retire(arg) if op == "retire" else
                         planner.lexical(*arg))
            except BaseException as exc:  # noqa: BLE001 - every failure goes to the writer
                tb = traceback.format_exc()
                try:
                    pickle.dumps(exc)
                except Exception:  # noqa: BLE001
                    exc = RuntimeError(f"{type(exc).__name__}: {exc}")
                up.send(("error", (exc, tb)))
                return
            up.send(("ok", value))
    except (BrokenPipeError, ConnectionResetError, EOFError):
        return
    finally:
        if planner is not None:
            planner.close()
        os._exit(0)
