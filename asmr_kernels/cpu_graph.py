"""CSR graphs and dense diffusion over them (CPU).

A graph is validated once, when its :class:`CSRGraph` is built; ``diffuse``
reads its in-edges from layouts built on first use and cached on the graph.
"""

from __future__ import annotations

import os
import threading

import numpy as np

from . import _cpu
from .checks import I32_MAX, I64_MAX, check_monotone, check_range, count, float_array, index_array, real

# Serialises building a graph's cached layouts (transpose, tiles): they are
# built once, then only read, so the lock is off the hot path.
_build_lock = threading.Lock()


# ---- graph --------------------------------------------------------------------


class CSRGraph:
    """A weighted directed graph in CSR form, validated once.

    Row ``i`` of ``(indptr, indices, weights)`` lists the edges ``i -> j``
    leaving node ``i``: the CSR of the adjacency ``A`` with ``A[i, j]`` the
    edge weight. Weights must be finite and non-negative; duplicate edges and
    self-loops are allowed (duplicates add up). ``weights=None`` means 1 for
    every edge. Indices are kept as int32 when the given ``indices`` are int32
    and the edge count fits, else int64.

    ``diffuse`` reads the in-edges, in one of two forms built on first use and
    cached on the graph:

    * small graphs (``x`` fits in L2) and batches of several columns pull
      over :meth:`transpose`, the CSR of the reversed graph (index size + 4
      bytes per edge, plus the index pointer), prefetching rows of ``x``;
    * large graphs with one column (``x`` over 2 MB) use a 2-D tiled layout of
      the in-edges (propagation blocking): edges grouped by (destination
      tile, source tile), each a packed 32-bit (destination, source) offset
      pair and a float32 weight: 8 bytes per edge plus 8 bytes per tile pair,
      i.e. about 80 MB for 10M edges. The transpose is not built for it.
      Building it takes two cache-friendly counting-sort passes, in parallel
      (about 0.2 s for 10M edges on one core).

    A graph used both ways holds both. ``diffuse`` also keeps up to two
    scratch buffers of ``x``'s size between calls (module-wide, not per graph).
    """

    __slots__ = ("indptr", "indices", "weights", "num_nodes", "_transpose", "_tiles")

    def __init__(self, indptr, indices, weights=None, num_nodes: int | None = None) -> None:
        indptr = index_array("indptr", indptr)
        indices = index_array("indices", indices)
        if indptr.size == 0:
            raise ValueError("indptr must have num_nodes + 1 entries, got an empty array")
        n = indptr.size - 1
        if num_nodes is not None and count("num_nodes", num_nodes, maximum=I64_MAX) != n:
            raise ValueError(f"indptr has {indptr.size} entries, so the graph has {n} nodes, not num_nodes={num_nodes}")
        if int(indptr[0]) != 0:
            raise ValueError(f"indptr must start at 0, got {int(indptr[0])}")
        check_monotone("indptr", indptr)
        if int(indptr[-1]) != indices.size:
            raise ValueError(f"indptr ends at {int(indptr[-1])} but indices has {indices.size} entries")
        if weights is None:
            weights = np.ones(indices.size, dtype=np.float32)
        weights = float_array("weights", weights, ndim=(1,), nonnegative=True)
        if weights.size != indices.size:
            raise ValueError(f"weights has {weights.size} entries but indices has {indices.size}")
        check_range("indices", indices, n, "nodes")
        small = indices.dtype == np.int32 and indices.size <= I32_MAX and n <= I32_MAX
        dtype = np.int32 if small else np.int64
        self.indptr = np.ascontiguousarray(indptr, dtype=dtype)
        self.indices = np.ascontiguousarray(indices, dtype=dtype)
        self.weights = weights
        self.num_nodes = n
        self._transpose: CSRGraph | None = None
        self._tiles: dict[tuple[int, int, float], tuple[np.ndarray, np.ndarray, np.ndarray]] = {}

    @classmethod
    def from_scipy(cls, matrix) -> "CSRGraph":
        """From a square SciPy sparse matrix (any format; converted to CSR)."""
        m = matrix.tocsr()
        if m.shape[0] != m.shape[1]:
            raise ValueError(f"matrix must be square, got shape {m.shape}")
        m.sum_duplicates()
        return cls(m.indptr, m.indices, m.data, num_nodes=m.shape[0])

    @property
    def num_edges(self) -> int:
        return int(self.indices.size)

    @property
    def index_dtype(self) -> np.dtype:
        return self.indices.dtype

    def transpose(self) -> "CSRGraph":
        """The graph with every edge reversed (cached)."""
        if self._transpose is not None:
            return self._transpose
        with _build_lock:  # two threads on one graph build it once
            return self._build_transpose()

    def _build_transpose(self) -> "CSRGraph":
        if self._transpose is None:
            t = object.__new__(CSRGraph)
            t.indptr = np.empty_like(self.indptr)
            t.indices = np.empty_like(self.indices)
            t.weights = np.empty_like(self.weights)
            t.num_nodes = self.num_nodes
            t._tiles = {}
            _cpu.transpose(self.indptr, self.indices, self.weights, self.num_nodes, t.indptr,
                           t.indices, t.weights)
            t._transpose = self
            self._transpose = t
        return self._transpose

    def _tiled(self, dst_shift: int, src_shift: int, edge_threshold: float = 0.0,
               num_threads: int = 0):
        """(group_ptr, packed, weights) of the tiled in-edge layout with tiles of
        2**dst_shift and 2**src_shift nodes, holding only the edges of weight >=
        edge_threshold (cached for the two most recent layouts; see asmr/diffuse.h).
        Dropping the masked edges once here costs about what one masked step
        does, and every later step reads fewer bytes."""
        key = (dst_shift, src_shift, edge_threshold if edge_threshold > 0 else 0.0)
        tiles = self._tiles.get(key)
        if tiles is not None:
            return tiles
        with _build_lock:
            return self._build_tiles(key, num_threads)

    def _build_tiles(self, key: tuple[int, int, float], num_threads: int):
        dst_shift, src_shift = key[0], key[1]
        tiles = self._tiles.get(key)
        if tiles is None:
            indptr, indices, weights = self.indptr, self.indices, self.weights
            if key[2] > 0:
                keep = weights >= key[2]
                if not keep.all():
                    rows = np.repeat(np.arange(self.num_nodes, dtype=np.int64), np.diff(indptr))
                    counts = np.bincount(rows[keep], minlength=self.num_nodes)
                    indptr = np.zeros(self.num_nodes + 1, dtype=indptr.dtype)
                    np.cumsum(counts, out=indptr[1:])
                    indices, weights = indices[keep], weights[keep]
            n = self.num_nodes
            groups = _tile_count(n, dst_shift) * _tile_count(n, src_shift)
            group_ptr = np.empty(groups + 1, dtype=np.int64)
            packed = np.empty(indices.size, dtype=np.uint32)
            tile_weights = np.empty(indices.size, dtype=np.float32)
            _cpu.build_tiles(indptr, indices, weights, dst_shift, src_shift, group_ptr, packed,
                             tile_weights, num_threads)
            while len(self._tiles) >= 2:
                self._tiles.pop(next(iter(self._tiles)))
            tiles = self._tiles[key] = (group_ptr, packed, tile_weights)
        return tiles

    def __repr__(self) -> str:
        return f"CSRGraph(num_nodes={self.num_nodes}, num_edges={self.num_edges}, index_dtype={self.index_dtype})"


def as_graph(graph) -> CSRGraph:
    """A CSRGraph from a CSRGraph, a SciPy sparse matrix or (indptr, indices[, weights])."""
    if isinstance(graph, CSRGraph):
        return graph
    if hasattr(graph, "tocsr"):
        return CSRGraph.from_scipy(graph)
    if isinstance(graph, tuple) and len(graph) in (2, 3):
        return CSRGraph(*graph)
    raise ValueError(f"graph must be a CSRGraph, a SciPy sparse matrix or (indptr, indices, weights), got {type(graph).__name__}")


# ---- diffuse ------------------------------------------------------------------

# The tiled layout pays when x no longer fits in L2. A thread then keeps the
# output slice of one destination tile (_TILE_BYTES) in L2 and walks the groups
# of that tile, each reading the x slice of a source tile a quarter that size.
# Few, large destination tiles mean few re-reads of x (each destination tile
# reads all of it once); small source tiles keep the random gathers close to L1.
# On a 2-core Skylake-SP (1 MB L2 per core), 10M random edges over 1M nodes:
# tiles of 2^16 / 2^14 nodes take ~20-27 ms a step on one core, most of it
# streaming the 8 bytes per edge; the pull takes ~55-75 ms. For wider batches the
# tiles get so small that a tile pair holds about one edge per row, so there is
# nothing to reuse: the pull, prefetching rows of x ahead, wins there.
_TILE_BYTES = 256 << 10
_TILED_MIN_BYTES = 2 << 20
_TILED_MAX_B = 1


def _parse_tile_override(value: str | None):
    """ASMR_DIFFUSE_TILES: unset/"auto" (choose), "off" (always pull), or
    "DST_SHIFT,SRC_SHIFT" (always tile, with tiles of 2**shift nodes; for tests)."""
    if value is None or value.strip().lower() in ("", "auto"):
        return None
    if value.strip().lower() == "off":
        return False
    ds, ss = (int(v) for v in value.split(","))
    return ds, ss


_TILE_OVERRIDE = _parse_tile_override(os.environ.get("ASMR_DIFFUSE_TILES"))


def _aligned_empty(size: int) -> np.ndarray:
    """A flat float32 array whose data starts on a 64-byte cache line."""
    buf = np.empty(size + 16, dtype=np.float32)
    start = (-buf.ctypes.data % 64) // 4
    return buf[start:start + size]


# diffuse's step-to-step scratch (n x b floats), kept between calls: a fresh
# buffer costs a page fault per 4 KB, about as much as a step on a large graph.
# At most _SCRATCH_KEEP buffers of at most _SCRATCH_MAX_BYTES each are kept.
_SCRATCH_KEEP = 2
_SCRATCH_MAX_BYTES = 256 << 20
_scratch_lock = threading.Lock()
_scratch: list[np.ndarray] = []


def _take_scratch(size: int) -> np.ndarray:
    with _scratch_lock:
        fits = [k for k, a in enumerate(_scratch) if a.size >= size]
        if fits:
            return _scratch.pop(min(fits, key=lambda k: _scratch[k].size))
    return _aligned_empty(size)


def _give_scratch(buf: np.ndarray) -> None:
    if 4 * buf.size > _SCRATCH_MAX_BYTES:
        return
    with _scratch_lock:
        _scratch.append(buf)
        _scratch.sort(key=lambda a: a.size, reverse=True)
        del _scratch[_SCRATCH_KEEP:]


def _tile_count(n: int, shift: int) -> int:
    return (n + (1 << shift) - 1) >> shift


def _tile_shifts(n: int, nnz: int, b: int) -> tuple[int, int] | None:
    """(dst_shift, src_shift) of the tiled layout to use, or None to pull."""
    override = _TILE_OVERRIDE
    if override is False:
        return None
    if override is not None:
        ds, ss = override
        if not (0 <= ds <= 31 and 1 <= ss <= 31 and ds + ss <= 32):
            raise ValueError(f"tile shifts must be in [0, 31] (source >= 1) and sum to <= 32, got {override}")
        return ds, ss
    if b > _TILED_MAX_B or n * b * 4 <= _TILED_MIN_BYTES or nnz == 0:
        return None
    ds = max(3, min(16, (_TILE_BYTES // (4 * b)).bit_length() - 1))
    ss = ds - 2
    # Tile pairs must stay few next to the edges (8 bytes of index each).
    if _tile_count(n, ds) * _tile_count(n, ss) > nnz:
        return None
    return ds, ss


def diffuse(graph, x, *, steps: int = 1, decay: float = 1.0, restart: float = 0.0,
            personalization=None, edge_threshold: float = 0.0, node_threshold: float = 0.0,
            num_threads: int = 0) -> np.ndarray:
    """Dense diffusion of a batch of vectors over the graph.

    Runs ``steps`` times ``X <- decay * (A_masked^T X) + restart * P`` and then
    sets entries below ``node_threshold`` to zero, where ``A_masked`` keeps the
    edges of weight >= ``edge_threshold`` and ``P`` is ``personalization``
    (default: ``x`` itself). Activation flows along edges: node ``j`` receives
    ``w * X[i]`` over its in-edges ``i -> j``. Personalized PageRank is
    ``decay = damping, restart = 1 - damping`` over a row-normalised graph.

    ``x`` is ``(n,)`` or ``(n, b)``; the result is float32 of the same shape.
    """
    g = as_graph(graph)
    x = float_array("x", x, ndim=(1, 2))
    vector = x.ndim == 1
    x2 = x.reshape(-1, 1) if vector else x
    if x2.shape[0] != g.num_nodes:
        raise ValueError(f"x has {x2.shape[0]} rows but the graph has {g.num_nodes} nodes")
    steps = count("steps", steps)
    decay = real("decay", decay, minimum=0.0)
    restart = real("restart", restart, minimum=0.0)
    edge_threshold = real("edge_threshold", edge_threshold)
    node_threshold = real("node_threshold", node_threshold)
    num_threads = count("num_threads", num_threads, maximum=4096)
    p = None
    if restart != 0.0:
        if personalization is None:
            p = x2
        else:
            p = float_array("personalization", personalization, ndim=(x.ndim,))
            if p.shape != x.shape:
                raise ValueError(f"personalization has shape {p.shape} but x has shape {x.shape}")
            p = p.reshape(x2.shape)
    n, b = x2.shape
    out = _aligned_empty(n * b).reshape(n, b)
    # Rows of a whole number of cache lines are gathered per edge: a misaligned x
    # would cost two lines per row, so a large one is copied to an aligned buffer
    # first: the one the first step does not write (out when steps is even).
    align_x = (steps > 0 and (4 * b) % 64 == 0 and x2.ctypes.data % 64 != 0
               and 4 * n * b > _TILED_MIN_BYTES)
    scratch = _take_scratch(n * b) if steps > 1 or (align_x and steps % 2 == 1) else None
    work = None if scratch is None else scratch[:n * b].reshape(n, b)
    try:
        x0 = x2
        if align_x:
            x0 = out if steps % 2 == 0 else work
            np.copyto(x0, x2)
        shifts = _tile_shifts(g.num_nodes, g.num_edges, b) if steps else None
        if shifts is not None:
            # The layout holds only the edges that pass edge_threshold: no mask per step.
            group_ptr, packed, weights = g._tiled(*shifts, edge_threshold, num_threads)
            _cpu.diffuse_tiles(shifts[0], shifts[1], group_ptr, packed, weights, x0, p, steps,
                               decay, restart, 0.0, node_threshold, out, work, num_threads)
        else:
            t = g.transpose()
            _cpu.diffuse(t.indptr, t.indices, t.weights, x0, p, steps, decay, restart,
                         edge_threshold, node_threshold, out, work, num_threads)
    finally:
        if scratch is not None:
            _give_scratch(scratch)
    return out.reshape(x.shape)
