"""CPU kernels: the public, validating face of asmr_kernels._cpu.

Every function here checks its inputs (shapes, dtypes, index ranges, finite and
non-negative weights) and raises ValueError naming the argument; only then are
contiguous arrays handed to the typed Cython layer, which releases the GIL and
calls C++. A graph is validated once, when its CSRGraph is built.
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass
from typing import Sequence

import numpy as np

from . import _cpu

_I32_MAX = np.iinfo(np.int32).max


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
        check = _cpu.first_out_of_range_i32 if idx.dtype == np.int32 else _cpu.first_out_of_range_i64
        bad = check(idx, upper)
        if bad >= 0:
            raise ValueError(f"{name} holds index {int(idx[bad])} at position {bad}, out of range for {upper} {what}")


def _check_monotone(name: str, idx: np.ndarray) -> None:
    check = _cpu.first_decrease_i32 if idx.dtype == np.int32 else _cpu.first_decrease_i64
    bad = check(idx)
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

    ``diffuse`` pulls along in-edges, so it uses :meth:`transpose`, which is
    computed once and cached.
    """

    __slots__ = ("indptr", "indices", "weights", "num_nodes", "_transpose")

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
        if self._transpose is None:
            t = object.__new__(CSRGraph)
            t.indptr = np.empty_like(self.indptr)
            t.indices = np.empty_like(self.indices)
            t.weights = np.empty_like(self.weights)
            t.num_nodes = self.num_nodes
            fn = _cpu.transpose_i32 if self.indices.dtype == np.int32 else _cpu.transpose_i64
            fn(self.indptr, self.indices, self.weights, self.num_nodes, t.indptr, t.indices, t.weights)
            t._transpose = self
            self._transpose = t
        return self._transpose

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
    out = np.empty_like(x2)
    work = np.empty_like(x2) if steps > 1 else None
    t = g.transpose()
    fn = _cpu.diffuse_i32 if t.indices.dtype == np.int32 else _cpu.diffuse_i64
    fn(t.indptr, t.indices, t.weights, x2, p, steps, decay, restart, edge_threshold, node_threshold,
       out, work, num_threads)
    return out.reshape(x.shape)


# ---- spread -------------------------------------------------------------------


class SpreadQuery:
    """The reached nodes of one query (views into the batch arrays)."""

    __slots__ = ("node", "activation", "hop", "strength", "predecessor")

    def __init__(self, node, activation, hop, strength, predecessor) -> None:
        self.node, self.activation, self.hop = node, activation, hop
        self.strength, self.predecessor = strength, predecessor

    def __len__(self) -> int:
        return int(self.node.size)

    def path(self, node: int) -> list[int]:
        """The recall path seed -> ... -> node, as node ids."""
        where = {int(v): k for k, v in enumerate(self.node)}
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
    fn = _cpu.spread_i32 if g.indices.dtype == np.int32 else _cpu.spread_i64
    out = fn(g.indptr, g.indices, g.weights, seed_ptr.astype(np.int64, copy=False),
             seed_nodes.astype(g.indices.dtype, copy=False), seed_scores, depth, decay, restart,
             edge_threshold, node_threshold, num_threads)
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


def max_threads() -> int:
    """Threads a kernel uses when num_threads=0."""
    return _cpu.max_threads()
