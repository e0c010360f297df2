"""Writing a memory: documents in, versioned units, vectors and index files out, crash-safe.

The order of one ingest (see schema.py for the files):

1. parse and chunk every changed document, relate its units to the stored ones;
2. embed only texts the memory has never embedded with this model;
3. append their vectors past the committed rows of ``vectors.f32``;
4. write the next generation's lexical and dense index files;
5. one SQLite transaction: units, versions, documents, links, and the new
   generation number: the commit point;
6. remove index files older than the previous generation (readers opened
   before this ingest still use that one).

Step 1 and the lexical index of step 4 are a ``Planner``'s work (plan.py): for a large
ingest on a machine with two or more cores it runs in a child process, so that chunking
overlaps inserting (and BM25 tokenizing, done here as rows are stored), and the BM25
matrix is built while the unit indexes are.

A crash before 5 leaves the last commit untouched: the next writer truncates
the vector tail and removes the unreferenced files. A crash after 5 leaves only
leftovers to remove. ``ASMR_FAULT=<point>`` kills the process with SIGKILL at a
named point, for the crash tests.
"""
from __future__ import annotations

import fcntl
import itertools
import os
import shutil
import signal
import sys
import time
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable, Iterator, Sequence

import numpy as np
from tqdm import tqdm

from ..embed import DEFAULT_EMBEDDER, Embedder, get_embedder, in_context, model_for_text
from ..index import DenseIndex
from ..index.lexical import Tokens
from ..units.ids import check_name
from ..units.model import Document, InputError
from . import schema
from .plan import (CONSTANT_COLUMNS, INSERT_COLUMNS, RETIRED_SHA, InProcessPlanner, PlannedBatch,
                   PlannerProcess, utc_now)
from .schema import MemoryStateError

DEFAULT_KB = "kb"
DEFAULT_FLAT_MAX = 20_000  # above this many active units the dense index is HNSW (flat: ~5 ms a query here)
FAULT_POINTS = ("after-embed", "after-vectors", "after-lexical", "after-dense", "in-transaction",
                "after-commit")


def _fault(point: str) -> None:
    if os.environ.get("ASMR_FAULT") == point:  # read at each point: set after import, it still counts
        os.kill(os.getpid(), signal.SIGKILL)


def _fsync_dir(directory: Path) -> None:
    fd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


@dataclass(slots=True)
class DocumentReport:
    kb: str
    doc_id: str
    version: int
    status: str  # new, revised, unchanged, retired (by prune: its file is gone)
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
            out[d.status] = out.get(d.status, 0) + 1  # "retired" only when an ingest with prune retired some
        return out

    def to_dict(self) -> dict:
        return {"documents": [{k: getattr(d, k) for k in d.__slots__} for d in self.documents],
                "counts": self.counts(), "embedded": self.embedded, "reused_vectors": self.reused_vectors,
                "generation": self.generation, "active_units": self.active_units,
                "seconds": round(self.seconds, 3), "timings": {k: round(v, 3) for k, v in self.timings.items()}}


class Writer:
    """The single writer of a memory directory (an exclusive lock file enforces one)."""

    def __init__(self, directory: str | os.PathLike, *, embedder: Embedder | str | None = None,
                 flat_max: int = DEFAULT_FLAT_MAX, progress: bool | None = None, workers: int | None = None):
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
            self._conn = schema.connect(self.directory, create=True)
        except Exception:
            self._release()
            raise
        self._conn.execute("PRAGMA cache_size=-262144")  # 256 MiB of pages: large ingests insert into big b-trees
        self.flat_max = flat_max
        self.progress = progress
        # Planner processes: None lets the ingest decide (ASMR_INGEST_WORKER=0/1 overrides), 0 never, 1 one.
        self.workers = workers
        self._embedder_arg = embedder
        # For a new memory whose model the ingest chose (none asked for): the share of its text the
        # default model reads; None otherwise.
        self.default_share: float | None = None
        self._embedder: Embedder | None = embedder if not isinstance(embedder, (str, type(None))) else None
        self.embed_model = schema.get_meta(self._conn, "embed_model")
        wanted = embedder if isinstance(embedder, str) else getattr(embedder, "name", None)
        if self.embed_model and wanted and wanted != self.embed_model:
            self._release()
            raise MemoryStateError(f"memory {self.directory}: its vectors come from {self.embed_model!r}, not "
                                   f"{wanted!r}; use --embedder {self.embed_model} or a new memory directory")
        self.recover()

    # Lifecycle of the writer
    def _release(self) -> None:
        if getattr(self, "_conn", None) is not None:
            self._conn.close()
            self._conn = None
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
        return int(schema.get_meta(self._conn, "generation", "0"))

    @property
    def num_rows(self) -> int:
        return int(schema.get_meta(self._conn, "rows", "0"))

    def content_hashes(self) -> list[str]:
        """The distinct content hashes of every unit the memory holds, whatever its status."""
        return [h for h, in self._conn.execute("SELECT DISTINCT content_hash FROM units")]

    def _runtimes(self, embedder: Embedder, embedded: int) -> str:
        """The runtimes whose vectors the memory holds, with this ingest's if it embedded anything.

        MiniLM's runtimes (``asmr.embed.RUNTIMES``) give vectors within the tolerance of one another
        (lowest cosine of 8-bit to fp32 0.98, the same Recall@5, in ``bench/embed.py``), so they mix in
        one memory; the record says which made its vectors."""
        had = set(filter(None, (schema.get_meta(self._conn, "embed_runtimes") or "").split(",")))
        runtime = getattr(embedder, "runtime", None)
        return ",".join(sorted(had | ({runtime} if runtime and embedded else set())))

    def current_document(self, kb: str, doc_id: str) -> Document | None:
        """The current version of a stored document, as committed (this writer holds the lock, so it
        stays so until this writer's ingest); None when there is none, or it was retired."""
        row = self._conn.execute(
            "SELECT v.text, v.raw, v.fmt, v.title, v.doc_type, v.effective_date, v.source, v.sha256 "
            "FROM documents d JOIN versions v ON v.kb=d.kb AND v.doc_id=d.doc_id "
            "AND v.version=d.current_version WHERE d.kb=? AND d.doc_id=?", (kb, doc_id)).fetchone()
        if row is None or row[7] == RETIRED_SHA:
            return None
        text, raw, fmt, title, doc_type, effective_date, source, _ = row
        return Document(doc_id=doc_id, text=text, fmt=fmt, title=title, doc_type=doc_type,
                        effective_date=effective_date, source=source, raw=raw)

    def _embedder_for(self, batches: list[list[Document]]) -> Embedder:
        """The embedder of this ingest: the one asked for, else the memory's, else, for a new memory,
        the model that reads the text read ahead (``embed.model_for_text``)."""
        if self._embedder_arg is None and self.embed_model is None:
            self._embedder_arg, self.default_share = model_for_text([d.text for b in batches for d in b])
            if self._embedder is not None and self._embedder.name != self._embedder_arg:
                self._embedder = None  # one made before the text was seen
        return self.embedder()

    def embedder(self) -> Embedder:
        if self._embedder is None:
            name = self._embedder_arg if isinstance(self._embedder_arg, str) else None
            self._embedder = get_embedder(name or self.embed_model or DEFAULT_EMBEDDER)
        return self._embedder

    def recover(self) -> list[str]:
        """Undo what an interrupted ingest left: the uncommitted vector tail and unreferenced index files."""
        removed = []
        dim = int(schema.get_meta(self._conn, "dim", "0"))
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
    def ingest(self, documents: Iterable[Document], *, kb: str = DEFAULT_KB, total: int | None = None,
               effective_date: str | None = None, prune: Sequence[str | os.PathLike] = ()) -> IngestReport:
        """Ingest ``documents`` (any iterable, streamed in batches) as one transaction.

        ``effective_date`` is the date of new versions of documents that carry none (default: the
        time of this ingest). It is not part of a document: an unchanged document ingested with
        another default date stays unchanged. ``prune``: directories whose documents in ``kb``
        are retired (``Planner.retire``) when their source file is gone and no document of this
        ingest has their id. An InputError from the documents or the chunker
        (bad input, duplicate id) rolls everything back: the memory stays as it was.
        """
        start = time.perf_counter()
        # Every version this ingest writes records its start as ingested_at, and a document without a
        # date of its own (nor a default given here) takes that as its effective date: the two are
        # equal exactly when no date was stated (Memory.undated_documents).
        self._ingest_started = utc_now()
        self._ingest_time = effective_date or self._ingest_started  # one default effective date for this ingest
        check_name(kb, "knowledge base")
        report = IngestReport(generation=self.generation)
        clock = _Clock(report.timings)
        seen: dict[str, str] = {}
        first_row = next_row = self.num_rows
        gone_rows: list[int] = []
        tokens = Tokens()  # BM25 tokens of the new units in row order: made here, indexed by the planner
        changed = False
        gen = self.generation + 1
        vec_path = self.directory / schema.VECTORS_FILE
        lexical_tmp = self.directory / (schema.lexical_dir(gen) + ".tmp")
        if total is None and hasattr(documents, "__len__"):
            total = len(documents)
        batches = _batches(clock.each("read", self._bar(documents, total)), BATCH_DOCUMENTS)
        planner = None
        self._conn.execute("BEGIN IMMEDIATE")
        bulk = first_row == 0  # an empty memory: build the unit indexes once, after the inserts
        try:
            if bulk:
                for name in schema.UNIT_INDEXES:
                    self._conn.execute(f"DROP INDEX IF EXISTS {name}")
            ahead, chars = [], 0  # read ahead: a large ingest is worth a planner process, a small one not
            for batch in batches:
                ahead.append(batch)
                chars += sum(len(d.text) for d in batch)
                if chars >= WORKER_MIN_CHARS:
                    break
            embedder = self._embedder_for(ahead)
            if self.embed_model is None:
                self.embed_model = embedder.name
            planner = self._planner(chars, dict(directory=str(self.directory), kb=kb,
                                                committed_rows=first_row, embed_model=self.embed_model,
                                                ingest_time=self._ingest_time,
                                                ingested_at=self._ingest_started))
            in_process = isinstance(planner, InProcessPlanner)
            waiting = "chunk" if in_process else "wait"  # what the writer's time on a plan is
            with open(vec_path, "ab") as vec_file:
                vec_file.truncate(first_row * embedder.dim * 4)  # drop any uncommitted tail first
                for batch in itertools.chain(ahead, batches):
                    _check_unique(batch, seen)
                    with clock(waiting):
                        planner.submit(batch)
                    while planner.pending > (0 if in_process else LOOKAHEAD_BATCHES):
                        with clock(waiting):
                            planned = planner.result()
                        changed |= self._store_batch(planned, next_row, vec_file, report, clock, gone_rows,
                                                     tokens)
                        next_row += len(planned.inserts)
                while planner.pending:
                    with clock(waiting):
                        planned = planner.result()
                    changed |= self._store_batch(planned, next_row, vec_file, report, clock, gone_rows,
                                                 tokens)
                    next_row += len(planned.inserts)
                gone_docs = self._gone_documents(kb, prune, seen) if prune else []
                if gone_docs:
                    planner.retire(gone_docs)
                    with clock(waiting):
                        planned = planner.result()
                    changed |= self._store_batch(planned, next_row, vec_file, report, clock, gone_rows,
                                                 tokens)
                if not changed:
                    planner.close()
                    self._conn.execute("ROLLBACK")
                    report.active_units = self._active_count()
                    report.seconds = time.perf_counter() - start
                    return report
                planner.start_lexical(lexical_tmp, tokens)  # a planner process builds it while the rest runs
                tokens = None  # a planner process has its copy; one in this process keeps a reference
                with clock("store"):
                    vec_file.flush()
                    os.fsync(vec_file.fileno())
            if bulk:
                with clock("store"):
                    for ddl in schema.UNIT_INDEXES.values():
                        self._conn.execute(ddl)  # a repeated unit id fails here and rolls back
            _fault("after-vectors")
            # The BM25 index first: a planner process has been building it meanwhile, and the dense
            # index (its own stage in the timings) then runs alone.
            with clock("lexical" if in_process else "wait"):
                report.active_units, _ = planner.lexical()
            with clock("lexical"):
                final = self.directory / schema.lexical_dir(gen)
                if final.exists():
                    shutil.rmtree(final)
                os.replace(lexical_tmp, final)
            if not in_process:  # the planner process's own time, spent while the writer worked
                report.timings["planner chunk"] = planner.seconds["chunk"]
                report.timings["planner lexical"] = planner.seconds["lexical"]
            planner.close()
            _fault("after-lexical")
            with clock("dense"):
                self._write_dense(gen, first_row, next_row, np.asarray(gone_rows, np.int64))
            _fault("after-dense")
            with clock("commit"):
                _fsync_dir(self.directory)
                for key, value in (("generation", gen), ("rows", next_row), ("embed_model", self.embed_model),
                                   ("dim", embedder.dim),
                                   ("embed_runtimes", self._runtimes(embedder, report.embedded))):
                    self._conn.execute("INSERT INTO meta VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET "
                                       "value=excluded.value", (key, str(value)))
                _fault("in-transaction")
                self._conn.execute("COMMIT")
        except BaseException:
            if planner is not None:
                planner.close(failed=True)
            self._conn.execute("ROLLBACK")
            raise
        _fault("after-commit")
        self._remove_old(gen)
        report.generation = gen
        report.seconds = time.perf_counter() - start
        return report

    def _gone_documents(self, kb: str, directories: Sequence[str | os.PathLike], produced: dict[str, str]
                        ) -> list[tuple[str, str]]:
        """(doc_id, source) of the documents of ``kb`` whose current version was read from a file under
        one of ``directories`` that no longer exists, and that this ingest did not produce again (a moved
        file keeps its document). Sources are paths as given, relative to the working directory."""
        roots = tuple(os.path.join(os.path.abspath(d), "") for d in directories)
        out = []
        for doc_id, source, total in self._conn.execute(
                "SELECT d.doc_id, v.source, v.units_total FROM documents d JOIN versions v ON v.kb=d.kb AND "
                "v.doc_id=d.doc_id AND v.version=d.current_version WHERE d.kb=? ORDER BY d.doc_id", (kb,)):
            if doc_id in produced or total == 0:  # read again now, or retired already
                continue
            path, sep, line = source.rpartition(":")
            path = path if sep and line.isdigit() else source  # a JSONL record: "corpus.jsonl:LINE"
            full = os.path.abspath(path)
            if full.startswith(roots) and not os.path.lexists(full):
                out.append((doc_id, source))
        return out

    def _planner(self, chars: int, config: dict):
        """A planner process when the ingest is large (``chars`` of text read ahead) and a second core is
        free, else one in this process."""
        workers = self.workers
        if workers is None:
            env = os.environ.get("ASMR_INGEST_WORKER", "")
            if env in ("0", "1"):
                workers = int(env)
            else:
                cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
                workers = int((cores or 1) >= 2 and chars >= WORKER_MIN_CHARS)
        return PlannerProcess(**config) if workers and chars else InProcessPlanner(**config)

    def _store_batch(self, planned: PlannedBatch, next_row: int, vec_file, report: IngestReport,
                     clock: "_Clock", gone_rows: list[int], tokens: Tokens) -> bool:
        """Embed and write one planned batch; returns whether it changed anything."""
        if planned.changed and planned.first_row != next_row:
            raise RuntimeError(f"ingest planner out of step: its rows start at {planned.first_row}, "
                               f"not {next_row}")
        if planned.changed:
            vec_file.flush()
            with clock("embed"):
                vectors = self._vectors(planned, next_row)
            report.embedded += len(planned.texts)
            report.reused_vectors += planned.reused
            _fault("after-embed")
            with clock("store"):
                vec_file.write(memoryview(vectors))
                gone_rows.extend(planned.gone_rows)
                self._write_rows(planned)
            with clock("lexical"):
                content = INSERT_COLUMNS.index("content")
                tokens.add_many(range(next_row, next_row + len(planned.inserts)),
                                [row[content] for row in planned.inserts])
        report.documents.extend(DocumentReport(*r) for r in planned.reports)
        return planned.changed

    def _vectors(self, planned: PlannedBatch, rows_written: int) -> np.ndarray:
        """Vectors of a batch's new units: copied when the memory holds the same unit text, else embedded."""
        embedder = self.embedder()
        dim = embedder.dim
        texts, src = planned.texts, planned.src
        if texts:
            show = self.progress if self.progress is not None else len(texts) >= 256 and sys.stderr.isatty()
            vecs = in_context(embedder, texts, planned.windows, progress=bool(show))
            if vecs.shape != (len(texts), dim) or not np.isfinite(vecs).all():
                raise RuntimeError(f"embedder {embedder.name} returned {vecs.shape} or non-finite values")
            if len(texts) == len(src):
                return np.ascontiguousarray(vecs, np.float32)  # all new, all distinct, in order
        out = np.empty((len(src), dim), np.float32)
        reuse = src >= 0
        if reuse.any():  # rows written by this ingest count: they were flushed before this batch
            stored = np.memmap(self.directory / schema.VECTORS_FILE, dtype=np.float32, mode="r",
                               shape=(rows_written, dim))
            out[reuse] = stored[src[reuse]]
        if texts:
            out[~reuse] = vecs[-1 - src[~reuse]]
        return out

    def _bar(self, items=None, total: int | None = None, desc: str = "ingest", unit: str = "doc"):
        """A progress bar on standard error: where ``progress`` says, else on a terminal, whatever the
        number of items (a directory walk does not know it); it appears only once the work has taken a
        second, so that short work stays quiet."""
        show = self.progress if self.progress is not None else sys.stderr.isatty()
        return tqdm(items, total=total, desc=desc, unit=unit, disable=not show, file=sys.stderr, leave=False,
                    mininterval=0.5, delay=1.0)

    def _active_count(self) -> int:
        return self._conn.execute("SELECT count(*) FROM units WHERE status='active'").fetchone()[0]

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
            rows = np.fromiter((r for r, in self._conn.execute(
                "SELECT row FROM units WHERE status='active' ORDER BY row")), np.int64)
        else:
            index.remove(gone_rows)
            rows = np.arange(first_new, end_row, dtype=np.int64)
        # Chunk by chunk: faiss keeps its own copy, and a whole-file mapping would count twice in memory.
        # HNSW inserts are slow (graph search per vector): smaller chunks move its progress bar.
        chunk = 8192 if index.kind == "hnsw" else 65536
        with self._bar(total=len(rows), desc=f"dense index ({index.kind})", unit="unit") as bar:
            for i in range(0, len(rows), chunk):
                part = rows[i:i + chunk]
                index.add(part, _read_rows(self.directory / schema.VECTORS_FILE, part, dim))
                bar.update(len(part))
        tmp = self.directory / (schema.dense_file(gen) + ".tmp")
        index.save(tmp)
        os.replace(tmp, self.directory / schema.dense_file(gen))

    def _write_rows(self, p: PlannedBatch) -> None:
        """One batch's units, versions, documents and links, inside the ingest's transaction."""
        c = self._conn
        if p.inserts:
            literals = ", ".join("'" + str(v).replace("'", "''") + "'" for v in p.constants)
            columns = ", ".join(INSERT_COLUMNS + CONSTANT_COLUMNS)
            c.executemany(f"INSERT INTO units ({columns}, superseded_by) "
                          f"VALUES ({', '.join('?' * len(INSERT_COLUMNS))}, {literals}, NULL)", p.inserts)
        c.executemany("UPDATE units SET doc_version=?, ord=?, parent_id=?, section_path=?, offset_start=?, "
                      "offset_end=? WHERE id=?", p.kept)
        c.executemany("UPDATE units SET status='superseded', superseded_by=? WHERE id=?", p.superseded)
        c.executemany("UPDATE units SET status='deprecated' WHERE id=?", p.deprecated)
        c.executemany(f"INSERT INTO versions VALUES ({','.join('?' * 17)})", p.versions)
        c.executemany("INSERT INTO documents VALUES (?,?,?,?,?,?,?) ON CONFLICT (kb, doc_id) DO UPDATE SET "
                      "title=excluded.title, doc_type=excluded.doc_type, "
                      "current_version=excluded.current_version, updated_at=excluded.updated_at", p.documents)
        c.executemany("DELETE FROM links WHERE source_id=?", p.unlinks)
        c.executemany("INSERT INTO links VALUES (?,?,?,?,?)", p.links)

    def _remove_old(self, gen: int) -> None:
        for old in range(gen - 2, max(gen - 4, 0) - 1, -1):
            for p in (self.directory / schema.dense_file(old), self.directory / schema.lexical_dir(old)):
                if p.is_dir():
                    shutil.rmtree(p)
                elif p.exists():
                    p.unlink()


BATCH_DOCUMENTS = 512
LOOKAHEAD_BATCHES = 2  # batches a planner process may be ahead of the writer (bounds memory)
# Less text than this (some 40,000 units of prose) is planned in the writer's process: starting
# the planner process costs about a second, more than it saves on a small ingest.
WORKER_MIN_CHARS = 8_000_000


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


def _check_unique(documents: Sequence[Document], seen: dict[str, str]) -> None:
    for d in documents:
        if d.doc_id in seen:
            raise InputError(f"{d.source or d.doc_id}: document id {d.doc_id!r} is also the id of "
                             f"{seen[d.doc_id]}; ids in one ingest must be unique")
        seen[d.doc_id] = d.source or d.doc_id


def ingest(directory: str | os.PathLike, documents: Sequence[Document], *, kb: str = DEFAULT_KB,
           embedder: Embedder | str | None = None, progress: bool | None = None,
           flat_max: int = DEFAULT_FLAT_MAX, workers: int | None = None) -> IngestReport:
    """Ingest ``documents`` into the memory at ``directory`` (created if missing)."""
    with Writer(directory, embedder=embedder, progress=progress, flat_max=flat_max, workers=workers) as w:
        return w.ingest(documents, kb=kb)
