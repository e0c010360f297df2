"""What both framework retrievers share: opening a memory, one locked search, a hit's metadata.

Thread safety: a ``MemoryRecall`` may be shared between threads (a LangChain
``ainvoke`` runs the search in an executor thread); its searches are serialized
by a lock, because the memory's SQLite snapshot and the retriever's question
cache are not made for concurrent use. For searches in parallel, give each
thread its own retriever (each opens its own snapshot of the same directory).
"""
from __future__ import annotations

import os
import threading
from dataclasses import dataclass

from ..embed import get_embedder
from ..retrieve import Hit, Result, RetrieveConfig, Retriever
from ..store import Memory, MemoryStateError, Unit


def hit_metadata(hit: Hit, unit: Unit, result: Result, rank: int) -> dict:
    """The metadata of one recalled unit: its address and place in the memory, its scores, its
    recall path, and the verdict on the whole result. Plain JSON values only."""
    return {
        "id": hit.unit_id,  # memo://<kb>/<doc>/<key>: what an answer cites
        "kb": unit.kb,
        "doc_id": unit.doc_id,
        "doc_version": unit.doc_version,
        "section_path": list(unit.section_path),
        "kind": unit.kind,
        "rank": rank,  # 1-based, in the engine's order
        "score": hit.score,
        "similarity": hit.similarity,
        "path_strength": hit.strength,
        "centrality": hit.centrality,
        "hop": hit.hop,
        "seed": hit.seed,
        "recall_path": [{"node": p.node, "edge_kind": p.edge_kind, "edge_weight": p.edge_weight}
                        for p in hit.path],
        "effective_at": hit.effective_at,
        "offset_start": unit.offset_start,  # document_text[offset_start:offset_end] is the unit's span
        "offset_end": unit.offset_end,
        "alternative_to": hit.alternative_to,  # an older unit contradicted by this newer recalled one
        "previous_version": hit.previous_version,  # the superseded unit this one replaced
        "disagrees_with": hit.disagrees_with,  # a unit of another document giving another value, undecided
        "found": result.found,
        "confidence": result.confidence,
        "reason": result.reason,  # why "not found" (empty when found)
    }


@dataclass(frozen=True)
class Recalled:
    """One unit handed to a framework: its text, its metadata and its score."""
    unit: Unit
    metadata: dict
    score: float


class MemoryRecall:
    """A memory snapshot and a ``Retriever`` over it, searched under a lock.

    ``memory`` is a directory (opened here, closed by ``close``) or an open ``Memory`` (borrowed:
    ``close`` leaves it open). ``embedder`` defaults to the memory's own model."""

    def __init__(self, memory: str | os.PathLike | Memory, config: RetrieveConfig | None = None,
                 embedder=None):
        if config is not None and not isinstance(config, RetrieveConfig):
            raise TypeError(f"config: expected an asmr.retrieve.RetrieveConfig, got {type(config).__name__}")
        if isinstance(memory, Memory):
            self.memory, self._owned = memory, False
        elif isinstance(memory, (str, os.PathLike)):
            # MemoryStateError when missing or not a memory
            self.memory, self._owned = Memory(memory), True
        else:
            raise TypeError(f"memory: expected a directory or an asmr.store.Memory, "
                            f"got {type(memory).__name__}")
        try:
            if self.memory.generation == 0:
                raise MemoryStateError(f"memory {self.memory.directory}: empty; run `asmr ingest` first")
            self.retriever = Retriever(self.memory, embedder or get_embedder(self.memory.embed_model), config)
        except BaseException:
            self.close()
            raise
        self._lock = threading.Lock()

    @property
    def config(self) -> RetrieveConfig:
        return self.retriever.config

    def search(self, question: str, k: int | None, include_not_found: bool) -> tuple[Result, list[Recalled]]:
        """The engine's result for ``question`` and the units to hand on, in the engine's order
        (an alternative comes right after the newer unit that contradicts it, so scores fall
        except there). Nothing when the result is "not found", unless ``include_not_found``."""
        if not isinstance(question, str) or not question.strip():
            raise ValueError("question: empty")
        if k is not None and k < 1:
            raise ValueError(f"k must be at least 1, got {k}")
        with self._lock:
            result = self.retriever.search(question, k)
            if not (result.found or include_not_found):
                return result, []
            units = {u.id: u for u in self.memory.units_at_rows([h.row for h in result.hits])}
        return result, [Recalled(units[h.unit_id], hit_metadata(h, units[h.unit_id], result, rank), h.score)
                        for rank, h in enumerate(result.hits, 1)]

    def reopen(self) -> None:
        """Move to the memory's newest committed state (after an ingest) and rebuild the retriever."""
        with self._lock:
            self.memory.reopen()
            if self.memory.generation == 0:
                raise MemoryStateError(f"memory {self.memory.directory}: empty; run `asmr ingest` first")
            r = self.retriever
            self.retriever = Retriever(self.memory, r.embedder, r.config)

    def close(self) -> None:
        """Close the memory if it was opened here."""
        if self._owned:
            self.memory.close()


class RecallHandle:
    """reopen/close/with for a retriever that keeps its ``MemoryRecall`` in ``self._recall``."""

    _recall: MemoryRecall

    def reopen(self) -> None:
        """Read the memory's newest committed state from now on."""
        self._recall.reopen()

    def close(self) -> None:
        """Close the memory if this retriever opened it."""
        self._recall.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self.close()
