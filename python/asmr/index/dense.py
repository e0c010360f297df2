"""Dense search over unit vectors with faiss: exact (flat) up to a size, HNSW above it.

Vectors are unit-norm, so inner product is cosine. Ids inside faiss are unit rows.
"""
from __future__ import annotations

import os

import faiss
import numpy as np

# Batched flat search goes through BLAS only above this many queries; the default
# (20) makes batches of a few queries about 18x slower (DESIGN.md section 5).
faiss.cvar.distance_compute_blas_threshold = 2

# Build cost grows with M and efConstruction: at 1,000,000 x 384 on 2 cores, M=32 with
# efConstruction=80 took over 15 minutes; 16/40 keeps the build to a few minutes.
HNSW_M = 16
HNSW_EF_CONSTRUCTION = 40
HNSW_EF_SEARCH = 96


class DenseIndex:
    def __init__(self, index: faiss.Index, kind: str, owner: faiss.Index | None = None):
        self._index = index
        self._owner = owner  # a downcast wrapper does not own its index: keep the one that does
        self.kind = kind

    @classmethod
    def build(cls, dim: int, kind: str = "flat") -> "DenseIndex":
        if kind == "flat":
            inner = faiss.IndexFlatIP(dim)
        elif kind == "hnsw":
            inner = faiss.IndexHNSWFlat(dim, HNSW_M, faiss.METRIC_INNER_PRODUCT)
            inner.hnsw.efConstruction = HNSW_EF_CONSTRUCTION
            inner.hnsw.efSearch = HNSW_EF_SEARCH
        else:
            raise ValueError(f"dense index kind {kind!r}: choose flat or hnsw")
        return cls(faiss.IndexIDMap2(inner), kind)

    @property
    def size(self) -> int:
        return int(self._index.ntotal)

    @property
    def dim(self) -> int:
        return int(self._index.d)

    def add(self, rows: np.ndarray, vectors: np.ndarray) -> None:
        if len(rows):
            self._index.add_with_ids(np.ascontiguousarray(vectors, dtype=np.float32),
                                     np.ascontiguousarray(rows, dtype=np.int64))

    def remove(self, rows: np.ndarray) -> None:
        """Drop rows from a flat index; HNSW cannot remove, so its searches filter by ``active``."""
        if len(rows) and self.kind == "flat":
            self._index.remove_ids(np.ascontiguousarray(rows, dtype=np.int64))

    def rows(self) -> np.ndarray:
        return faiss.vector_to_array(self._index.id_map).astype(np.int64)

    def save(self, path: str | os.PathLike) -> None:
        faiss.write_index(self._index, os.fspath(path))
        with open(path, "rb") as f:
            os.fsync(f.fileno())

    @classmethod
    def load(cls, path: str | os.PathLike) -> "DenseIndex":
        index = faiss.read_index(os.fspath(path))
        inner = faiss.downcast_index(faiss.downcast_index(index).index)
        kind = "hnsw" if isinstance(inner, faiss.IndexHNSWFlat) else "flat"
        if kind == "hnsw":
            inner.hnsw.efSearch = HNSW_EF_SEARCH
        return cls(faiss.downcast_index(index), kind, owner=index)

    def search(self, queries: np.ndarray, k: int, *, active: np.ndarray | None = None,
               ef_search: int | None = None) -> tuple[np.ndarray, np.ndarray]:
        """Top-k rows and cosines per query ([m, k]; -1 and -inf pad when fewer exist).

        ``active`` (bool per unit row) drops rows that are no longer active; the search
        over-fetches so that k active rows come back when the index holds them.
        ``ef_search`` overrides HNSW's search breadth for this call (bulk neighbour
        searches trade a little recall for speed).
        """
        if ef_search is not None and self.kind == "hnsw":
            hnsw = faiss.downcast_index(self._index.index).hnsw
            saved, hnsw.efSearch = hnsw.efSearch, max(ef_search, k)
            try:
                return self.search(queries, k, active=active)
            finally:
                hnsw.efSearch = saved
        q = np.ascontiguousarray(np.atleast_2d(queries), dtype=np.float32)
        m = q.shape[0]
        if self.size == 0 or k <= 0:
            return np.full((m, max(k, 0)), -1, np.int64), np.full((m, max(k, 0)), -np.inf, np.float32)
        fetch = k
        while True:
            scores, rows = self._index.search(q, min(fetch, self.size))
            if active is None:
                keep = rows >= 0
            else:
                keep = (rows >= 0) & active[np.maximum(rows, 0)]
            if keep.sum(axis=1).min() >= min(k, self.size) or fetch >= self.size:
                break
            fetch *= 4
        out_rows = np.full((m, k), -1, np.int64)
        out_scores = np.full((m, k), -np.inf, np.float32)
        for i in range(m):
            r, s = rows[i][keep[i]][:k], scores[i][keep[i]][:k]
            out_rows[i, :len(r)], out_scores[i, :len(s)] = r, s
        return out_rows, out_scores
