"""Spreading activation from sparse seeds (CPU): only reached nodes are touched."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np

from . import _cpu
from .checks import check_monotone, check_range, count, float_array, index_array, real
from .cpu_graph import as_graph


class SpreadQuery:
    """The reached nodes of one query (views into the batch arrays)."""

    __slots__ = ("node", "activation", "hop", "strength", "predecessor", "_where")

    def __init__(self, node, activation, hop, strength, predecessor) -> None:
        self.node, self.activation, self.hop = node, activation, hop
        self.strength, self.predecessor = strength, predecessor
        self._where: tuple[np.ndarray, np.ndarray] | None = None  # nodes sorted, their positions

    def __len__(self) -> int:
        return int(self.node.size)

    def path(self, node: int) -> list[int]:
        """The recall path seed -> ... -> node, as node ids."""
        k = self._position(int(node))
        if k < 0:
            raise ValueError(f"node {node} was not reached by this query")
        path = [int(node)]
        while self.predecessor[k] >= 0:
            path.append(int(self.predecessor[k]))
            k = self._position(path[-1])
        return path[::-1]

    def _position(self, node: int) -> int:
        """Where ``node`` is in this query's arrays, -1 if it was not reached. The nodes are sorted once,
        on the first call: a caller asks for the paths of a few of thousands of reached nodes."""
        if self._where is None:
            order = np.argsort(self.node, kind="stable")
            self._where = (self.node[order], order)
        ordered, order = self._where
        i = int(np.searchsorted(ordered, node))
        return int(order[i]) if i < len(ordered) and ordered[i] == node else -1


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
    seed_ptr = index_array("seed_ptr", seed_ptr)
    seed_nodes = index_array("seed_nodes", seed_nodes)
    seed_scores = float_array("seed_scores", seed_scores, ndim=(1,), nonnegative=True)
    if seed_ptr.size == 0:
        raise ValueError("seed_ptr must have num_queries + 1 entries, got an empty array")
    if int(seed_ptr[0]) != 0:
        raise ValueError(f"seed_ptr must start at 0, got {int(seed_ptr[0])}")
    check_monotone("seed_ptr", seed_ptr)
    if int(seed_ptr[-1]) != seed_nodes.size:
        raise ValueError(f"seed_ptr ends at {int(seed_ptr[-1])} but seed_nodes has {seed_nodes.size} entries")
    if seed_scores.size != seed_nodes.size:
        raise ValueError(f"seed_scores has {seed_scores.size} entries but seed_nodes has {seed_nodes.size}")
    check_range("seed_nodes", seed_nodes, g.num_nodes, "nodes")
    depth = count("depth", depth, maximum=1 << 20)
    decay = real("decay", decay, minimum=0.0)
    restart = real("restart", restart, minimum=0.0)
    edge_threshold = real("edge_threshold", edge_threshold)
    node_threshold = real("node_threshold", node_threshold)
    num_threads = count("num_threads", num_threads, maximum=4096)
    out = _cpu.spread(g.indptr, g.indices, g.weights, seed_ptr.astype(np.int64, copy=False),
                      seed_nodes.astype(g.indices.dtype, copy=False), seed_scores, depth, decay,
                      restart, edge_threshold, node_threshold, num_threads)
    return SpreadResult(*out)


class SpreadSession(_cpu.SpreadSessionBase):
    """:func:`spread` for one query at a time, with the graph and the parameters
    validated once: ``run(seed_nodes, seed_scores=None)`` returns the
    :class:`SpreadQuery` that ``spread(graph, [0, k], seed_nodes, seed_scores,
    ...).query(0)`` would, computed the same way (the same nodes, order and
    values), but through a C-level entry: the seeds are checked in typed loops,
    the kernel runs on the calling thread with the GIL released in a pooled
    workspace, and only the result's arrays are allocated. Safe to share across
    threads. ``seed_scores`` defaults to 1.0 per seed; ``edges_touched`` is the
    last run's edge count.
    """

    def __init__(self, graph, *, depth: int = 2, decay: float = 0.5, restart: float = 1.0,
                 edge_threshold: float = 0.0, node_threshold: float = 0.0) -> None:
        g = as_graph(graph)
        self.graph = g
        self.depth = count("depth", depth, maximum=1 << 20)
        self.decay = real("decay", decay, minimum=0.0)
        self.restart = real("restart", restart, minimum=0.0)
        self.edge_threshold = real("edge_threshold", edge_threshold)
        self.node_threshold = real("node_threshold", node_threshold)
        self._bind(g.indptr, g.indices, g.weights, self.depth, self.decay, self.restart,
                   self.edge_threshold, self.node_threshold, SpreadQuery)

    def __repr__(self) -> str:
        return (f"SpreadSession({self.graph!r}, depth={self.depth}, decay={self.decay}, restart={self.restart}, "
                f"edge_threshold={self.edge_threshold}, node_threshold={self.node_threshold})")
