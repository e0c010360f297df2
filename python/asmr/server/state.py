"""The snapshot a request answers from, and how the server moves to a newer one.

A ``Snapshot`` is one memory generation opened read-only (``Memory`` pins a SQLite
read transaction and that generation's index files) with its retriever and
verifiers. Requests take a reference once, at their start, through
``SnapshotHolder.use()``, and use only that snapshot: a search never mixes units of two
generations. An ingest (``SnapshotHolder.ingest``) writes with the single ``Writer``,
then opens the new generation and swaps the reference; requests already running
finish on the old snapshot, which is closed when the last of them lets go.

Other processes (``asmr ingest``, other ``--workers``) commit too: a watcher thread
reads the committed generation every ``poll_seconds`` (one indexed SQLite read) and
swaps in the same way.

Learning from use (``learn_seconds``): a learner thread folds the audit records written since the
last fold into ``<memory>/usage.sqlite`` (``asmr.graph.learn``, what ``asmr graph learn`` does), every
``learn_seconds``. A snapshot lays the usage edges over its graph when it opens, so a change of the
usage log's version (a fold that counted something, or a forget, by this process or another) makes
the watcher open the same generation again with the new edges. Folds are idempotent (a question
counts once), so several workers may fold the same records.

Threads: handlers run in a thread pool and share a snapshot. Its SQLite connection
is opened with ``check_same_thread=False`` and SQLite is built serialized
(``sqlite3.threadsafety == 3``), so concurrent reads on it are safe. Searches run
concurrently (the retriever locks its own question cache); the support model's vector
cache is unlocked, so verification holds a lock; unit reads and generation run outside
it (a local model has its own lock).
"""
from __future__ import annotations

import fcntl
import logging
import threading
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Callable, Iterator

from ..store import CommitWatch, Memory, MemoryStateError, UsageLog, Writer
from ..store import schema
from ..text.facts import load_cjk_numerals
from ..verify.verifier import Verifier
from .errors import ApiError

log = logging.getLogger("asmr.server")


# Asked of the memory at a worker's start (``SnapshotHolder.warm_up``), by the script of its text
_WARM_UP_QUESTIONS = {"latin": "What does this memory say?", "cjk": "这里写了什么？"}


@contextmanager
def _file_lock(path: Path):
    """An exclusive flock on ``path``, if the memory directory lets us create it."""
    try:
        f = open(path, "a+")
    except OSError:
        yield
        return
    try:
        fcntl.flock(f, fcntl.LOCK_EX)
        yield
    finally:
        f.close()  # closing releases the lock


class _LockedVerifier(Verifier):
    """A Verifier whose ``verify`` runs under a lock: its cache of unit records is an unlocked LRU that
    concurrent evictions could break."""

    def __init__(self, lock: threading.Lock, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._lock = lock

    def verify(self, answer, allowlist):
        with self._lock:
            return super().verify(answer, allowlist)

    def warm_up(self) -> None:
        with self._lock:
            super().warm_up()


class Snapshot:
    """One generation of a memory, with what answering from it needs. Empty when the memory
    directory holds no committed generation yet (``memory`` is None or generation 0)."""

    def __init__(self, memory: Memory | None, embedder=None, retrieve_config=None, support=None,
                 verify_lock: threading.Lock | None = None, usage_version: int = 0):
        from ..retrieve import Retriever

        self.memory = memory
        self.usage_version = usage_version  # of the usage log, read before the edges were laid
        self._verify_lock = verify_lock or threading.Lock()
        self.generation = memory.generation if memory is not None else 0
        self.embedder, self.support = embedder, support
        self.retriever = None
        if self.generation > 0:
            # Several workers notice a commit at once; the first builds the unit graph and saves it,
            # the others wait and load the file instead of building it again.
            with _file_lock(memory.directory / "graph.lock"):
                self.retriever = Retriever(memory, embedder, retrieve_config)
            self.active_units = int(memory.active.sum())
        else:
            self.active_units = 0
        self._cache_lock = threading.Lock()
        self._verifiers: dict[str, object] = {}
        self._answerers: dict[str, object] = {}
        self.refs = 0
        self.retired = False

    @property
    def empty(self) -> bool:
        return self.retriever is None

    def require(self) -> "Snapshot":
        if self.empty:
            raise ApiError(409, "memory_empty", "the memory holds no documents yet; POST /v1/ingest first")
        return self

    def search(self, question: str, k: int | None = None):
        return self.require().retriever.search(question, k)

    def verifier(self, generator=None):
        """The verifier of this snapshot; with a generator, one that may ask it to rewrite a sentence."""
        name = getattr(generator, "name", "") if generator is not None else ""
        with self._cache_lock:
            v = self._verifiers.get(name)
            if v is None:
                v = self._verifiers[name] = _LockedVerifier(self._verify_lock, self.require().memory,
                                                             support=self.support, embedder=self.embedder,
                                                             rewrite=getattr(generator, "rewrite", None))
            return v

    def answerer(self, generator, config):
        """An Answerer over this snapshot that reuses its retriever and verifier (cheap to make)."""
        from ..answer import Answerer

        with self._cache_lock:
            a = self._answerers.get(generator.name)
        if a is None:
            a = Answerer(self.require().memory, generator, config=config, embedder=self.embedder,
                         retriever=self.retriever, verifier=self.verifier(generator))
            with self._cache_lock:
                a = self._answerers.setdefault(generator.name, a)
        return a

    def close(self) -> None:
        if self.memory is not None:
            self.memory.close()


class SnapshotHolder:
    """Holds the current snapshot, swaps in newer ones, and runs the server's ingests."""

    def __init__(self, directory: str | Path, *, retrieve_config=None, poll_seconds: float = 0.2,
                 embedder_factory: Callable | None = None, new_embedder: str | None = None,
                 learn_seconds: float = 0.0):
        from ..embed import get_embedder
        from ..verify.support_model import SupportModel

        self.directory = Path(directory)
        self.new_embedder = new_embedder
        self.retrieve_config = retrieve_config
        self.poll_seconds = poll_seconds
        self.learn_seconds = learn_seconds
        self._usage: UsageLog | None = None  # read-only, for its version; opened once the file exists
        self._usage_lock = threading.Lock()
        self._learner: threading.Thread | None = None
        self._get_embedder = embedder_factory or get_embedder
        self._embedder = None
        self.support = SupportModel.load()
        self._verify_lock = threading.Lock()  # every snapshot's verifier: they share the support model
        self._refs_lock = threading.Lock()  # guards every snapshot's refs/retired and _current
        self._swap_lock = threading.Lock()  # one snapshot is built at a time
        self._ingest_lock = threading.Lock()  # one ingest at a time in this process
        self._commits = CommitWatch(self.directory)
        self._watch_lock = threading.Lock()
        self._stop = threading.Event()
        self.warmed_up = threading.Event()  # set when warm_up() is over, however it ended
        self._watcher: threading.Thread | None = None
        self.on_swap: Callable[[Snapshot], None] | None = None
        self._current = self._open()

    # Snapshots
    def embedder(self, name: str):
        if self._embedder is None or self._embedder.name != name:
            self._embedder = self._get_embedder(name)
        return self._embedder

    def _open(self) -> Snapshot:
        # No database, or one whose first ingest has not committed (it may be running in another worker
        # right now): both are an empty memory to a reader.
        if not (self.directory / schema.DB_FILE).exists() or schema.never_committed(self.directory):
            return Snapshot(None)
        memory = Memory(self.directory)
        try:
            if memory.generation == 0:
                return Snapshot(memory)
            return Snapshot(memory, self.embedder(memory.embed_model), self.retrieve_config, self.support,
                            self._verify_lock, self.usage_version())
        except BaseException:
            memory.close()
            raise

    @property
    def current(self) -> Snapshot:
        return self._current

    @contextmanager
    def use(self) -> Iterator[Snapshot]:
        """The current snapshot, kept open until the block ends even if a newer one is swapped in."""
        with self._refs_lock:
            snap = self._current
            snap.refs += 1
        try:
            yield snap
        finally:
            with self._refs_lock:
                snap.refs -= 1
                done = snap.retired and snap.refs == 0
            if done:
                snap.close()

    def refresh(self) -> Snapshot:
        """Swap in the newest committed generation, if it is not the one being served, or the same one
        again if the usage log changed since the served snapshot laid its learned edges."""
        with self._swap_lock:
            if not self._stale():
                return self._current
            new = self._open()
            with self._refs_lock:
                old, self._current = self._current, new
                old.retired = True
                done = old.refs == 0
            if done:
                old.close()
            if self.on_swap is not None:
                self.on_swap(new)
            log.info("serving generation %d", new.generation)
            return new

    def _stale(self) -> bool:
        current = self._current
        return self.committed_generation() != current.generation or (
            not current.empty and self.usage_version() != current.usage_version)

    def usage_version(self) -> int:
        """The version of the memory's usage log (0 while it has none)."""
        with self._usage_lock:
            if self._usage is None:
                usage = UsageLog(self.directory)  # opens nothing while the file does not exist
                if not usage.exists:
                    return 0
                self._usage = usage
            return self._usage.version()

    def learn(self) -> dict | None:
        """Fold the audit records written since the last fold into the usage log, then serve the new
        edges (``asmr graph learn``'s report; None while the memory is empty)."""
        from ..graph import learn
        from ..verify import audit

        with self.use() as snap:
            if snap.empty:
                return None
            graph = getattr(self.retrieve_config, "graph", None)
            with UsageLog(self.directory, create=True) as usage:
                records, offsets = audit.read_new(self.directory, usage.offsets())
                report = learn(snap.memory, usage, records, offsets, graph)
        if report["questions"]:
            log.info("learned from %d audit records: %d questions, %d pairs newly counted", report["records"],
                     report["questions"], report["pairs"])
        self.refresh()
        return report

    def committed_generation(self) -> int:
        """The generation the last commit wrote (one read outside any snapshot: sees every commit)."""
        with self._watch_lock:
            return self._commits.generation()

    # Watching other writers
    def warm_up(self) -> None:
        """Load now, rather than in the first question and the first verified answer, what they load
        first: the support model's embedder (seconds; the memory's own where it is that model, as a
        verification hands it over), and what recall reads on its first question
        (lemmas and synonyms; for a memory with Chinese text, jieba and the bilingual tables: about a
        second), by recalling one question in each language the memory is written in (``recall``:
        nothing cached, nothing counted); and what the first answer reads after recall (the embedder's
        batch sessions, cn2an for a memory with Chinese text: a third of a second)."""
        try:
            with self.use() as snap:
                if snap.empty:
                    with self._verify_lock:
                        self.support.score(["The server is starting."], ["The server is starting."])
                else:
                    snap.verifier().warm_up()  # with the memory's embedder where it is the support model's
        except Exception:
            log.exception("warm-up of the support model failed; the first verified answer will retry")
        try:
            with self.use() as snap:
                if not snap.empty:
                    from ..embed import question_vectors

                    retriever = snap.retriever
                    written = retriever.memory_languages()[1]  # what the first recall reads anyway
                    for script, question in _WARM_UP_QUESTIONS.items():
                        if script == "latin" or written.get(script):
                            retriever.recall(question, question_vectors(retriever.embedder, [question])[0], 1)
                    # and what the first answer reads on its way: the embedder's one-core sessions (the
                    # generator and the support check embed sentences in batches) and, for Chinese
                    # text, the reader of Chinese numerals in the key facts
                    retriever.embedder.embed(list(_WARM_UP_QUESTIONS.values()))
                    if written.get("cjk"):
                        load_cjk_numerals()
        except Exception:
            log.exception("warm-up of recall failed; the first question will load what it needs")
        finally:
            self.warmed_up.set()

    def start_watching(self) -> None:
        if self._watcher is None and self.poll_seconds > 0:
            self._watcher = threading.Thread(target=self._watch, name="asmr-snapshot-watcher", daemon=True)
            self._watcher.start()
        if self._learner is None and self.learn_seconds > 0:
            self._learner = threading.Thread(target=self._learn_loop, name="asmr-learner", daemon=True)
            self._learner.start()

    def _watch(self) -> None:
        while not self._stop.wait(self.poll_seconds):
            try:
                if self._stale():
                    self.refresh()
            except Exception:  # a half-removed generation, a locked file: try again at the next tick
                log.exception("could not move to the newest generation; retrying")

    def _learn_loop(self) -> None:
        while not self._stop.wait(self.learn_seconds):
            try:
                self.learn()
            except Exception:  # a locked usage file, an audit file being rotated: the next fold reads it
                log.exception("could not learn from the audit records; retrying at the next fold")

    def close(self) -> None:
        self._stop.set()
        for thread in (self._watcher, self._learner):
            if thread is not None:
                thread.join(timeout=5)
        with self._usage_lock:
            if self._usage is not None:
                self._usage.close()
        with self._swap_lock:
            with self._watch_lock:
                self._commits.close()
            with self._refs_lock:
                snap = self._current
                snap.retired = True
                done = snap.refs == 0
            if done:
                snap.close()

    # Writing
    def ingest(self, documents: list | Callable[[Writer], list], kb: str, *, wait_seconds: float = 10.0):
        """Ingest ``documents`` as one transaction, then serve the new generation.

        ``documents`` may be a function of the open writer that makes them: what it reads of the
        memory (``Writer.current_document``) no other writer changes before they are stored.
        Another process holding the writer lock is waited for up to ``wait_seconds`` (then 409).
        An InputError leaves the memory as it was and propagates.
        """
        with self._ingest_lock:
            deadline = time.monotonic() + wait_seconds
            while True:
                try:
                    embed_model = self._current.memory.embed_model if self._current.memory else None
                    writer = Writer(self.directory, progress=False,
                                    embedder=self.embedder(embed_model) if embed_model else self.new_embedder)
                    break
                except MemoryStateError as exc:
                    if "another ingest" not in str(exc) or time.monotonic() > deadline:
                        raise ApiError(409, "ingest_busy", f"cannot write the memory now: {exc}") from None
                    time.sleep(0.05)
            try:
                report = writer.ingest(documents(writer) if callable(documents) else documents, kb=kb)
            finally:
                writer.close()
            self.refresh()
            return report
