"""An Embedder that serves the vectors a re-index computed in parallel, for the commit step.

The commit is ``Writer.ingest`` itself (same ids, versions and lifecycle as ``asmr ingest``):
only the embedder differs. It answers from the shards by text, and asks the real model only
for texts no shard holds (counted in ``misses``; none are expected unless an input changed
between the embedding stage and the commit). Its ``name`` is the real model's, so the store
records the model that made the vectors.
"""
from __future__ import annotations

from typing import Callable, Sequence

import numpy as np

from ..embed import Embedder
from .shards import VectorTable
from .tasks import text_key


class PrecomputedEmbedder:
    """Vectors from a VectorTable, falling back to ``fallback()`` (built on first need) for misses."""

    def __init__(self, name: str, table: VectorTable | None, fallback: Callable[[], Embedder],
                 dim: int | None = None):
        self.name = name
        self._fallback_factory = fallback
        self._fallback: Embedder | None = None
        self._dim = dim
        self.table = VectorTable([])
        if table is not None:
            self.set_table(table)
        self.hits = 0
        self.misses = 0

    def set_table(self, table: VectorTable) -> None:
        """Serve ``table`` from now on (the shards are complete only after the embedding stage)."""
        if self._dim is not None and table.dim is not None and table.dim != self._dim:
            raise RuntimeError(f"precomputed vectors have {table.dim} dimensions, the memory {self._dim}")
        self.table = table
        self._dim = self._dim or table.dim

    @property
    def dim(self) -> int:
        if self._dim is None:  # nothing precomputed and a new memory: the model says
            self._dim = self.fallback().dim
        return self._dim

    def fallback(self) -> Embedder:
        if self._fallback is None:
            self._fallback = self._fallback_factory()
            if self._fallback.name != self.name:
                raise RuntimeError(f"fallback embedder {self._fallback.name!r} is not {self.name!r}")
        return self._fallback

    def embed(self, texts: Sequence[str], *, progress: bool = False) -> np.ndarray:
        vectors, found = self.table.get([text_key(t) for t in texts])
        self.hits += int(found.sum())
        if not found.all():
            missing = np.flatnonzero(~found)
            self.misses += len(missing)
            model = self.fallback()
            if vectors.shape[1] == 0:
                vectors = np.zeros((len(texts), model.dim), np.float32)
            vectors[missing] = model.embed([texts[i] for i in missing], progress=progress)
        return vectors
