"""BM25 top-k over posting lists (CPU)."""

from __future__ import annotations

import numpy as np

from . import _cpu
from .checks import I64_MAX, check_monotone, check_range, count, float_array, index_array


class Postings:
    """BM25 posting lists of ``num_units`` units, validated once: CSC per token, token ``t``'s
    units are ``indices[indptr[t]:indptr[t + 1]]`` with weights ``data`` (bm25s's score matrix).

    ``rows`` (optional) maps each unit of the index to a row of the store, so that ``top_k`` can
    leave out rows that are no longer active. Arrays are kept as given when they already have
    the kernel's types (a memory-mapped index stays mapped). When every list is sorted by unit
    and no weight is negative, queries whose long lists cannot change the top k skip them
    (MaxScore; same result).
    """

    def __init__(self, indptr, indices, data, num_units: int, rows=None):
        self.num_units = count("num_units", num_units, maximum=I64_MAX)
        self.indptr = np.ascontiguousarray(index_array("indptr", indptr), dtype=np.int64)
        self.indices = index_array("indices", indices)
        self.data = float_array("data", data, ndim=(1,))
        if len(self.indptr) < 1 or self.indptr[0] != 0:
            raise ValueError("indptr must start at 0")
        check_monotone("indptr", self.indptr)
        if self.indptr[-1] != len(self.indices) or len(self.data) != len(self.indices):
            raise ValueError(f"indptr ends at {int(self.indptr[-1])} but indices has {len(self.indices)} "
                             f"entries and data {len(self.data)}")
        check_range("indices", self.indices, self.num_units, "units")
        self.num_tokens = len(self.indptr) - 1
        # MaxScore pruning needs each token's largest weight and every list sorted by unit
        lengths = np.diff(self.indptr)
        steps = np.diff(self.indices)
        starts = self.indptr[1:-1]
        inner = np.ones(len(steps), bool)
        inner[starts[(starts > 0) & (starts < len(self.indices))] - 1] = False  # list boundaries
        self.upper = None
        if not (steps[inner] <= 0).any() and not (self.data < 0).any():
            self.upper = np.zeros(self.num_tokens, np.float32)
            filled = lengths > 0
            if filled.any():
                self.upper[filled] = np.maximum.reduceat(self.data, self.indptr[:-1][filled])
        self.pruned = 0  # queries answered by the pruned path (a statistic, for tests and benchmarks)
        self.rows, self._row_bound = None, 0
        if rows is not None:
            self.rows = np.ascontiguousarray(index_array("rows", rows), dtype=np.int64)
            if len(self.rows) != self.num_units:
                raise ValueError(f"rows has {len(self.rows)} entries for {self.num_units} units")
            if self.num_units:
                if int(self.rows.min()) < 0:
                    raise ValueError("rows holds negative row numbers")
                self._row_bound = int(self.rows.max()) + 1

    def top_k(self, tokens, k: int, *, active=None) -> tuple[np.ndarray, np.ndarray]:
        """The ``k`` best units for the query ``tokens`` (token ids; a repeat counts again) and
        their scores, best first; units scoring 0 are left out. ``active`` (bool per store row,
        needs ``rows``) leaves out units whose row is False. Returns (int64 units, float32 scores).
        """
        t = index_array("tokens", tokens).astype(np.int64, copy=False)
        check_range("tokens", t, self.num_tokens, "tokens")
        k = count("k", k, maximum=I64_MAX)
        act = None
        if active is not None:
            if self.rows is None:
                raise ValueError("active needs the rows the Postings were built with")
            act = np.asarray(active)
            if act.ndim != 1 or act.dtype != np.bool_:
                raise ValueError(f"active must be a 1-D bool array, got {act.dtype} of shape {act.shape}")
            if len(act) < self._row_bound:
                raise ValueError(f"active has {len(act)} rows but the index names row {self._row_bound - 1}")
            act = np.ascontiguousarray(act).view(np.uint8)
        k = min(k, self.num_units)
        if k == 0 or len(t) == 0 or len(self.indices) == 0:
            return np.zeros(0, np.int64), np.zeros(0, np.float32)
        units, scores = np.empty(k, np.int64), np.empty(k, np.float32)
        n, pruned = _cpu.bm25_top_k(self.num_units, self.indptr, self.indices, self.data, self.upper, t,
                                    self.rows if act is not None else None, act, k, units, scores)
        self.pruned += pruned
        return units[:n], scores[:n]
