"""CPU kernels: the public, validating face of asmr_kernels._cpu.

Every function here checks its inputs (shapes, dtypes, index ranges, finite and
non-negative weights) and raises ValueError naming the argument; only then are
contiguous arrays handed to the typed Cython layer, which releases the GIL and
calls C++. A graph is validated once, when its CSRGraph is built.
"""

from __future__ import annotations

import math
import numbers
import os
import threading
from dataclasses import dataclass
from typing import Sequence

import numpy as np

from . import _cpu

_I32_MAX = np.iinfo(np.int32).max
# Serialises building a graph's cached layouts (transpose, tiles): they are
# built once, then only read, so the lock is off the hot path.
_build_lock = threading.Lock()


# ---- argument checks ----------------------------------------------------------


def _index_array(name: str, a) -> np.ndarray:
    """A 1-D integer array (int32 or int64, C-contiguous)."""
    arr = np.asarray(a)
    if arr.ndim != 1:
        raise ValueError(f"{name} must be 1-D, got shape {arr.shape}")
    if arr.dtype.kind not in "iu":
        if arr.size == 0 and arr.dtype.kind == "f":  # e.g. np.array([]) defaults to float64
            return np.zeros(0, dtype=np.int64)
        raise ValueError(f"{name} must hold integers, got dtype {arr.dtype} (cannot be safely cast)")
    if arr.dtype == np.int32 or arr.dtype == np.int64:
        return np.ascontiguousarray(arr)
    if arr.dtype.kind == "u" and arr.dtype.itemsize == 8 and arr.size and arr.max() > np.iinfo(np.int64).max:
        raise ValueError(f"{name} holds values beyond int64")
    return np.ascontiguousarray(arr, dtype=np.int64 if arr.dtype.itemsize >= 4 else np.int32)


def _float_array(name: str, a, *, ndim: tuple[int, ...], finite: bool = True,
                 nonnegative: bool = False) -> np.ndarray:
    """A float32, C-contiguous array of one of the given ranks."""
    arr = np.asarray(a)
    if arr.ndim not in ndim:
        want = " or ".join(f"{d}-D" for d in ndim)
        raise ValueError(f"{name} must be {want}, got shape {arr.shape}")
    if arr.dtype.kind not in "fiu":
        raise ValueError(f"{name} must hold real numbers, got dtype {arr.dtype} (cannot be safely cast)")
    arr = np.ascontiguousarray(arr, dtype=np.float32)
    if finite and arr.size:
        bad = _cpu.first_bad_value(arr.reshape(-1), not nonnegative)
        if bad >= 0:
            v = arr.reshape(-1)[bad]
            what = "negative values" if np.isfinite(v) else "NaN or infinite values"
            raise ValueError(f"{name} contains {what} (first at flat position {bad}: {v})")
    return arr


def _real(name: str, value, *, minimum: float | None = None) -> float:
    if type(value) is not float and (isinstance(value, bool) or not isinstance(value, numbers.Real)):
        raise ValueError(f"{name} must be a real number, got {value!r}")
    v = float(value)
    if not math.isfinite(v):
        raise ValueError(f"{name} must be finite, got {value!r}")
    if minimum is not None and v < minimum:
        raise ValueError(f"{name} must be >= {minimum}, got {value!r}")
    return v


def _count(name: str, value, *, maximum: int = _I32_MAX) -> int:
    if type(value) is not int and (isinstance(value, bool) or not isinstance(value, numbers.Integral)):
        raise ValueError(f"{name} must be an integer, got {value!r}")
    v = int(value)
    if v < 0:
        raise ValueError(f"{name} must be >= 0, got {v}")
    if v > maximum:
        raise ValueError(f"{name} must be <= {maximum}, got {v}")
    return v


def _check_range(name: str, idx: np.ndarray, upper: int, what: str) -> None:
    if idx.size:
        bad = _cpu.first_out_of_range(idx, upper)
        if bad >= 0:
            raise ValueError(f"{name} holds index {int(idx[bad])} at position {bad}, out of range for {upper} {what}")


def _check_monotone(name: str, idx: np.ndarray) -> None:
    bad = _cpu.first_decrease(idx)
    if bad >= 0:
        raise ValueError(f"{name} must be monotone non-decreasing, but drops from {int(idx[bad - 1])} to {int(idx[bad])} at position {bad}")


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
        indptr = _index_array("indptr", indptr)
        indices = _index_array("indices", indices)
        if indptr.size == 0:
            raise ValueError("indptr must have num_nodes + 1 entries, got an empty array")
        n = indptr.size - 1
        if num_nodes is not None and _count("num_nodes", num_nodes, maximum=np.iinfo(np.int64).max) != n:
            raise ValueError(f"indptr has {indptr.size} entries, so the graph has {n} nodes, not num_nodes={num_nodes}")
        if int(indptr[0]) != 0:
            raise ValueError(f"indptr must start at 0, got {int(indptr[0])}")
        _check_monotone("indptr", indptr)
        if int(indptr[-1]) != indices.size:
            raise ValueError(f"indptr ends at {int(indptr[-1])} but indices has {indices.size} entries")
        if weights is None:
            weights = np.ones(indices.size, dtype=np.float32)
        weights = _float_array("weights", weights, ndim=(1,), nonnegative=True)
        if weights.size != indices.size:
            raise ValueError(f"weights has {weights.size} entries but indices has {indices.size}")
        _check_range("indices", indices, n, "nodes")
        small = indices.dtype == np.int32 and indices.size <= _I32_MAX and n <= _I32_MAX
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
    x = _float_array("x", x, ndim=(1, 2))
    vector = x.ndim == 1
    x2 = x.reshape(-1, 1) if vector else x
    if x2.shape[0] != g.num_nodes:
        raise ValueError(f"x has {x2.shape[0]} rows but the graph has {g.num_nodes} nodes")
    steps = _count("steps", steps)
    decay = _real("decay", decay, minimum=0.0)
    restart = _real("restart", restart, minimum=0.0)
    edge_threshold = _real("edge_threshold", edge_threshold)
    node_threshold = _real("node_threshold", node_threshold)
    num_threads = _count("num_threads", num_threads, maximum=4096)
    p = None
    if restart != 0.0:
        if personalization is None:
            p = x2
        else:
            p = _float_array("personalization", personalization, ndim=(x.ndim,))
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


# ---- spread -------------------------------------------------------------------


class SpreadQuery:
    """The reached nodes of one query (views into the batch arrays)."""

    __slots__ = ("node", "activation", "hop", "strength", "predecessor", "_where")

    def __init__(self, node, activation, hop, strength, predecessor) -> None:
        self.node, self.activation, self.hop = node, activation, hop
        self.strength, self.predecessor = strength, predecessor
        self._where: dict[int, int] | None = None  # node -> position, built on the first path()

    def __len__(self) -> int:
        return int(self.node.size)

    def path(self, node: int) -> list[int]:
        """The recall path seed -> ... -> node, as node ids."""
        if self._where is None:
            self._where = {int(v): k for k, v in enumerate(self.node.tolist())}
        where = self._where
        if int(node) not in where:
            raise ValueError(f"node {node} was not reached by this query")
        path = [int(node)]
        k = where[int(node)]
        while self.predecessor[k] >= 0:
            path.append(int(self.predecessor[k]))
            k = where[path[-1]]
        return path[::-1]


@dataclass
class SpreadResult:
    """Reached nodes of a batch of queries, CSR-style: query ``q`` owns
    ``[ptr[q], ptr[q+1])`` of each array.

    activation: value after the last step; hop: first step at which the node
    was active (seeds 0); strength: seed score times the product of edge
    weights along the recall path; predecessor: previous node on that path
    (-1 at a seed). Nodes of a query come in the order they first became
    active. elapsed_ns: time the kernel spent on each query; edges_touched:
    edges read over all queries.
    """

    ptr: np.ndarray
    node: np.ndarray
    activation: np.ndarray
    hop: np.ndarray
    strength: np.ndarray
    predecessor: np.ndarray
    elapsed_ns: np.ndarray
    edges_touched: int

    def __len__(self) -> int:
        return int(self.ptr.size - 1)

    def query(self, q: int) -> SpreadQuery:
        if not 0 <= q < len(self):
            raise IndexError(f"query {q} out of range for {len(self)} queries")
        s = slice(int(self.ptr[q]), int(self.ptr[q + 1]))
        return SpreadQuery(self.node[s], self.activation[s], self.hop[s], self.strength[s],
                           self.predecessor[s])


def pack_seeds(nodes: Sequence, scores: Sequence | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(seed_ptr, seed_nodes, seed_scores) from one sequence of seed nodes per
    query (and optionally one of scores; default 1.0)."""
    lengths = [len(s) for s in nodes]
    ptr = np.zeros(len(lengths) + 1, dtype=np.int64)
    np.cumsum(lengths, out=ptr[1:])
    flat = np.concatenate([np.asarray(s, dtype=np.int64).ravel() for s in nodes]) if lengths else np.zeros(0, np.int64)
    if scores is None:
        sc = np.ones(flat.size, dtype=np.float32)
    else:
        if len(scores) != len(nodes):
            raise ValueError(f"scores has {len(scores)} queries but nodes has {len(nodes)}")
        for q, (a, b) in enumerate(zip(nodes, scores)):
            if len(a) != len(b):
                raise ValueError(f"query {q}: {len(a)} seed nodes but {len(b)} scores")
        sc = np.concatenate([np.asarray(s, dtype=np.float32).ravel() for s in scores]) if lengths else np.zeros(0, np.float32)
    return ptr, flat, sc


def spread(graph, seed_ptr, seed_nodes, seed_scores, *, depth: int = 2, decay: float = 0.5,
           restart: float = 1.0, edge_threshold: float = 0.0, node_threshold: float = 0.0,
           num_threads: int = 0) -> SpreadResult:
    """Spreading activation from sparse seeds, touching only reached nodes.

    The rule of :func:`diffuse` with ``x = personalization = the seed vector``
    runs for ``depth`` steps over the nodes that carry activation; edges are
    followed from source to target. Query ``q`` has seeds
    ``seed_nodes[seed_ptr[q]:seed_ptr[q+1]]`` with ``seed_scores`` (>= 0;
    duplicates add up). See :class:`SpreadResult` for what comes back.
    Queries run in parallel, one thread each.
    """
    g = as_graph(graph)
    seed_ptr = _index_array("seed_ptr", seed_ptr)
    seed_nodes = _index_array("seed_nodes", seed_nodes)
    seed_scores = _float_array("seed_scores", seed_scores, ndim=(1,), nonnegative=True)
    if seed_ptr.size == 0:
        raise ValueError("seed_ptr must have num_queries + 1 entries, got an empty array")
    if int(seed_ptr[0]) != 0:
        raise ValueError(f"seed_ptr must start at 0, got {int(seed_ptr[0])}")
    _check_monotone("seed_ptr", seed_ptr)
    if int(seed_ptr[-1]) != seed_nodes.size:
        raise ValueError(f"seed_ptr ends at {int(seed_ptr[-1])} but seed_nodes has {seed_nodes.size} entries")
    if seed_scores.size != seed_nodes.size:
        raise ValueError(f"seed_scores has {seed_scores.size} entries but seed_nodes has {seed_nodes.size}")
    _check_range("seed_nodes", seed_nodes, g.num_nodes, "nodes")
    depth = _count("depth", depth, maximum=1 << 20)
    decay = _real("decay", decay, minimum=0.0)
    restart = _real("restart", restart, minimum=0.0)
    edge_threshold = _real("edge_threshold", edge_threshold)
    node_threshold = _real("node_threshold", node_threshold)
    num_threads = _count("num_threads", num_threads, maximum=4096)
    out = _cpu.spread(g.indptr, g.indices, g.weights, seed_ptr.astype(np.int64, copy=False),
                      seed_nodes.astype(g.indices.dtype, copy=False), seed_scores, depth, decay,
                      restart, edge_threshold, node_threshold, num_threads)
    return SpreadResult(*out)


# ---- pair_cosine ----------------------------------------------------------------


def _matrix(name: str, a) -> np.ndarray:
    arr = np.asarray(a)
    if arr.ndim != 2:
        raise ValueError(f"{name} must be 2-D (rows x dim), got shape {arr.shape}")
    if arr.dtype == np.float16:
        return np.ascontiguousarray(arr).view(np.uint16)
    if arr.dtype.kind not in "fiu":
        raise ValueError(f"{name} must be float32 or float16, got dtype {arr.dtype} (cannot be safely cast)")
    return np.ascontiguousarray(arr, dtype=np.float32)


def pair_cosine(claims, units, claim_idx, unit_idx, *, prenormalized: bool = False,
                num_threads: int = 0) -> np.ndarray:
    """``out[k] = cos(claims[claim_idx[k]], units[unit_idx[k]])``.

    ``claims`` and ``units`` are row matrices of the same width, float32 or
    float16 (other real types are converted to float32); rows are read in
    place, never gathered into a copy. A zero row has cosine 0. With
    ``prenormalized=True`` rows are taken to have unit norm and only the dot
    product is computed. Returns float32 ``(num_pairs,)``.
    """
    c = _matrix("claims", claims)
    u = _matrix("units", units)
    if c.shape[1] != u.shape[1]:
        raise ValueError(f"claims has rows of {c.shape[1]} values but units has rows of {u.shape[1]}")
    ci = _index_array("claim_idx", claim_idx)
    ui = _index_array("unit_idx", unit_idx)
    if ci.size != ui.size:
        raise ValueError(f"claim_idx has {ci.size} entries but unit_idx has {ui.size}")
    _check_range("claim_idx", ci, c.shape[0], "claim rows")
    _check_range("unit_idx", ui, u.shape[0], "unit rows")
    num_threads = _count("num_threads", num_threads, maximum=4096)
    dtype = np.int32 if ci.dtype == np.int32 and ui.dtype == np.int32 else np.int64
    out = np.empty(ci.size, dtype=np.float32)
    if ci.size and c.shape[1]:
        _cpu.pair_cosine(c, u, ci.astype(dtype, copy=False), ui.astype(dtype, copy=False),
                          bool(prenormalized), out, num_threads)
    elif ci.size:
        out[:] = 0.0
    return out


# ---- BM25 --------------------------------------------------------------------------


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
        self.num_units = _count("num_units", num_units, maximum=np.iinfo(np.int64).max)
        self.indptr = np.ascontiguousarray(_index_array("indptr", indptr), dtype=np.int64)
        self.indices = _index_array("indices", indices)
        self.data = _float_array("data", data, ndim=(1,))
        if len(self.indptr) < 1 or self.indptr[0] != 0:
            raise ValueError("indptr must start at 0")
        _check_monotone("indptr", self.indptr)
        if self.indptr[-1] != len(self.indices) or len(self.data) != len(self.indices):
            raise ValueError(f"indptr ends at {int(self.indptr[-1])} but indices has {len(self.indices)} "
                             f"entries and data {len(self.data)}")
        _check_range("indices", self.indices, self.num_units, "units")
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
            self.rows = np.ascontiguousarray(_index_array("rows", rows), dtype=np.int64)
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
        t = _index_array("tokens", tokens).astype(np.int64, copy=False)
        _check_range("tokens", t, self.num_tokens, "tokens")
        k = _count("k", k, maximum=np.iinfo(np.int64).max)
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


class KeyFactExtractor:
    """Key facts of ASCII text, found natively (the fast path of asmr.redundancy.facts).

    ``common_words``: lower-case ASCII words that name nothing when capitalised;
    ``fact_type(kind, text, norm)`` builds each fact, ``kind`` taken from ``kinds`` by index
    (number, date, version, code, entity). Calling it with a text returns a tuple of facts,
    or None for a text the Python extractor must take (a digit run over 300 characters).
    """

    KINDS = ("number", "date", "version", "code", "entity")

    def __init__(self, common_words, fact_type=tuple, kinds=KINDS):
        words = list(common_words)
        bad = next((w for w in words if not isinstance(w, str) or not w.isascii() or w != w.lower()), None)
        if bad is not None:
            raise ValueError(f"common_words: {bad!r} is not a lower-case ASCII string")
        if len(kinds) != len(self.KINDS):
            raise ValueError(f"kinds: need {len(self.KINDS)} names ({', '.join(self.KINDS)}), got {len(kinds)}")
        self._native = _cpu.KeyFactExtractor(words, fact_type, tuple(kinds))

    def __call__(self, text: str):
        if not isinstance(text, str):
            raise ValueError(f"text must be a string, got {type(text).__name__}")
        if not text.isascii():
            raise ValueError("text must be ASCII (other text goes to the Python extractor)")
        return self._native.extract(text)


def max_threads() -> int:
    """Threads a kernel uses when num_threads=0."""
    return _cpu.max_threads()
