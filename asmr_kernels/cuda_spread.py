"""Spreading activation from sparse seeds on a CUDA device, one thread block per query."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from .checks import I32_MAX, count, real
from .cuda_checks import Checks, float_array, index_array, itype, raise_range, raise_real
from .cuda_frameworks import Frame, frame
from .cuda_graph import graph_for, graph_probe
from .cuda_runtime import INT32, native, require, sm_count

# Memory spread may use per launch for its hash tables and for staging its
# results; queries are launched in chunks that fit.
_SPREAD_WORKSPACE_BYTES = 512 << 20
_SPREAD_STAGING_BYTES = 512 << 20
_SPREAD_BYTES_PER_RESULT = 8 + 4 + 4 + 4 + 8


@dataclass
class SpreadResult:
    """Reached nodes of a batch of queries, CSR-style, as device arrays:
    query ``q`` owns ``[ptr[q], ptr[q+1])`` of each array. Fields as in
    :class:`asmr_kernels.SpreadResult`, except that the nodes of a query come
    in no particular order and ``elapsed_ns`` is None (no per-query timing on
    the GPU). :meth:`to_cpu` copies it into an ``asmr_kernels.SpreadResult``.
    """

    ptr: Any
    node: Any
    activation: Any
    hop: Any
    strength: Any
    predecessor: Any
    elapsed_ns: Any
    edges_touched: int

    def __len__(self) -> int:
        return int(self.ptr.shape[0]) - 1

    def to_cpu(self):
        from .cpu import SpreadResult as CpuSpreadResult

        def host(a):
            return a.get() if hasattr(a, "get") and not hasattr(a, "cpu") else a.detach().cpu().numpy()

        return CpuSpreadResult(host(self.ptr), host(self.node), host(self.activation), host(self.hop),
                               host(self.strength), host(self.predecessor),
                               np.zeros(len(self), dtype=np.int64), int(self.edges_touched))


def _pow2_at_least(v: int) -> int:
    p = 1
    while p < v:
        p <<= 1
    return p


def _initial_capacity(max_seeds: int, avg_degree: float, depth: int, n: int, cap_max: int) -> int:
    # Nodes a query may touch: seeds * (1 + d + ... + d^depth), at most n.
    reach, frontier = float(max(max_seeds, 1)), float(max(max_seeds, 1))
    for _ in range(depth):
        if reach >= n:
            break
        frontier *= max(avg_degree, 1.0)
        reach += frontier
    reach = min(reach, float(n))
    return min(max(_pow2_at_least(int(2 * reach) + 1), 64), cap_max)


def spread(graph, seed_ptr, seed_nodes, seed_scores, *, depth: int = 2, decay: float = 0.5,
           restart: float = 1.0, edge_threshold: float = 0.0, node_threshold: float = 0.0,
           num_threads: int = 0, capacity: int | None = None) -> SpreadResult:
    """Spreading activation from sparse seeds on the GPU, one thread block per query.

    Same rule, arguments and fields as :func:`asmr_kernels.spread` (see
    :class:`SpreadResult` for the differences). ``capacity`` (GPU only) is the
    initial hash-table size per query (rounded up to a power of two; default:
    estimated from the seeds, the average degree and ``depth``); a query that
    reaches more than ``capacity / 2`` nodes is rerun with twice the capacity,
    up to ``2 * num_nodes``. Needs fewer than 2^31 nodes.
    """
    require()
    fr = frame(graph_probe(graph), seed_ptr, seed_nodes, seed_scores)
    with fr.scope():
        g = graph_for(graph, fr)
        sp = index_array(fr, "seed_ptr", seed_ptr)
        sn = index_array(fr, "seed_nodes", seed_nodes)
        ss = float_array(fr, "seed_scores", seed_scores, ndim=(1,))
        if fr.size(sp) == 0:
            raise ValueError("seed_ptr must have num_queries + 1 entries, got an empty array")
        num_seeds = fr.size(sn)
        if fr.size(ss) != num_seeds:
            raise ValueError(f"seed_scores has {fr.size(ss)} entries but seed_nodes has {num_seeds}")
        depth = count("depth", depth, maximum=1 << 20)
        decay = real("decay", decay, minimum=0.0)
        restart = real("restart", restart, minimum=0.0)
        edge_threshold = real("edge_threshold", edge_threshold)
        node_threshold = real("node_threshold", node_threshold)
        count("num_threads", num_threads, maximum=4096)
        if capacity is not None:
            capacity = count("capacity", capacity, maximum=1 << 30)
        n = g.num_nodes
        if n > I32_MAX:
            raise ValueError(f"graph has {n} nodes; the CUDA spread supports at most {I32_MAX}")
        checks = Checks(fr)
        r_sp = checks.index(sp, 0, num_seeds + 1)
        r_ss = checks.real(ss)
        r_sn = checks.index(sn, 0, n)
        st = checks.run()
        raise_real(st, r_ss, "seed_scores", nonnegative=True)
        if st[r_sp, 3] != 0:
            raise ValueError(f"seed_ptr must start at 0, got {int(st[r_sp, 3])}")
        if st[r_sp, 1] >= 0:
            raise ValueError("seed_ptr must be monotone non-decreasing")
        if st[r_sp, 4] != num_seeds:
            raise ValueError(f"seed_ptr ends at {int(st[r_sp, 4])} but seed_nodes has {num_seeds} entries")
        raise_range(fr, st, r_sn, "seed_nodes", sn, n, "nodes")

        it = itype(fr, g.indices)
        sp = fr.fw.contiguous(sp, np.int64)
        sn = fr.fw.contiguous(sn, np.int32 if it == INT32 else np.int64)
        q_total = fr.size(sp) - 1
        cap_max = max(2, min(1 << 30, _pow2_at_least(2 * max(n, 1))))
        if capacity is None:
            cap = _initial_capacity(int(st[r_sp, 2]), g.num_edges / max(n, 1), depth, n, cap_max)
        else:
            cap = min(max(_pow2_at_least(capacity), 2), cap_max)
        return _spread_batches(fr, g, it, sp, sn, ss, q_total, cap, cap_max, depth, decay, restart,
                               edge_threshold, node_threshold)


def _spread_launch(fr, g, it, sp, sn, ss, qids, cap, depth, decay, restart, et, nt):
    m = int(qids.size)
    half = cap // 2
    slice_bytes = int(native.spread_workspace_bytes(1, cap))
    blocks = max(1, min(m, 4 * sm_count(fr.device), _SPREAD_WORKSPACE_BYTES // slice_bytes))
    ws_bytes = int(native.spread_workspace_bytes(blocks, cap))
    ws = fr.empty((ws_bytes,), np.uint8)
    # The first round runs queries 0..m-1 in order: no id list needed.
    identity = m > 0 and int(qids[0]) == 0 and int(qids[-1]) == m - 1 and bool(np.all(np.diff(qids) == 1))
    qdev = None if identity else fr.fw.upload(qids.astype(np.int64))
    count_dev = fr.empty((m,), np.int64)
    edges = fr.empty((m,), np.int64)
    staging = (fr.empty((m * half,), np.int64), fr.empty((m * half,), np.float32),
               fr.empty((m * half,), np.int32), fr.empty((m * half,), np.float32),
               fr.empty((m * half,), np.int64))
    native.spread(fr.device, it, g.num_nodes, fr.ptr(g.indptr), fr.ptr(g.indices), fr.ptr(g.weights),
                  m, fr.ptr(qdev), fr.ptr(sp), fr.ptr(sn), fr.ptr(ss), depth, decay, restart, et, nt,
                  cap, blocks, fr.ptr(ws), ws_bytes, fr.ptr(count_dev), fr.ptr(edges),
                  *(fr.ptr(a) for a in staging), fr.stream)
    return count_dev, edges, staging, half


def _result_arrays(fr: Frame, size: int):
    return (fr.empty((size,), np.int64), fr.empty((size,), np.float32), fr.empty((size,), np.int32),
            fr.empty((size,), np.float32), fr.empty((size,), np.int64))


def _spread_batches(fr, g, it, sp, sn, ss, q_total, cap, cap_max, depth, decay, restart, et, nt):
    counts = np.full(q_total, -1, dtype=np.int64)
    edges_h = np.zeros(q_total, dtype=np.int64)
    # Per launch: (query ids, device counts, device source offsets, arrays).
    parts = []
    pending = np.arange(q_total, dtype=np.int64)
    first_round = True
    while pending.size:
        half = cap // 2
        chunk = max(1, _SPREAD_STAGING_BYTES // (half * _SPREAD_BYTES_PER_RESULT))
        overflowed = []
        for start in range(0, pending.size, chunk):
            qids = pending[start:start + chunk]
            m = int(qids.size)
            count_dev, edges, staging, half = _spread_launch(fr, g, it, sp, sn, ss, qids, cap, depth,
                                                         decay, restart, et, nt)
            ch = fr.fw.download(count_dev)
            eh = fr.fw.download(edges)
            ok = ch >= 0
            counts[qids[ok]] = ch[ok]
            edges_h[qids[ok]] = eh[ok]
            overflowed.append(qids[~ok])
            src = fr.fw.upload(np.arange(m, dtype=np.int64) * half)
            if first_round and m == q_total and ok.all():
                parts.append((qids, count_dev, src, staging))  # the only launch: place directly
            elif ok.any():
                # Compact now, so that the staging is freed before the next launch.
                sizes = np.where(ok, ch, 0)
                local = np.zeros(m, dtype=np.int64)
                np.cumsum(sizes[:-1], out=local[1:])
                compact = _result_arrays(fr, int(sizes.sum()))
                local_dev = fr.fw.upload(local)
                native.spread_gather(fr.device, m, fr.ptr(count_dev), fr.ptr(src), fr.ptr(local_dev),
                                     *(fr.ptr(a) for a in staging), *(fr.ptr(a) for a in compact),
                                     fr.stream)
                parts.append((qids, count_dev, local_dev, compact))
            del staging
        pending = np.concatenate(overflowed) if overflowed else pending[:0]
        first_round = False
        if pending.size:
            if cap >= cap_max:  # cannot happen: cap_max slots hold every node at load 1/2
                raise RuntimeError(f"spread: {pending.size} queries overflow a hash table of {cap} slots")
            cap = min(cap * 2, cap_max)
    ptr = np.zeros(q_total + 1, dtype=np.int64)
    np.cumsum(counts, out=ptr[1:])
    out = _result_arrays(fr, int(ptr[-1]))
    for qids, count_dev, src, arrays in parts:
        dst = fr.fw.upload(ptr[qids])
        native.spread_gather(fr.device, int(qids.size), fr.ptr(count_dev), fr.ptr(src), fr.ptr(dst),
                             *(fr.ptr(a) for a in arrays), *(fr.ptr(a) for a in out), fr.stream)
    return SpreadResult(fr.fw.upload(ptr), *out, elapsed_ns=None, edges_touched=int(edges_h.sum()))
