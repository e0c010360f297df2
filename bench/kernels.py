#!/usr/bin/env python3
"""Benchmark ASMR's CPU kernels against the tools a user would otherwise use.

One run builds seeded, reproducible inputs, measures our kernels and their peers
side by side on the same data, checks that both compute the same thing, and
prints one table: our time, the peer's time, the ratio (peer / ours), the thread
counts on both sides, and for the memory-bound kernels the bandwidth we achieve
against the machine's own copy bandwidth, measured in the same run. Every time
is the median of the timed runs, with their min and max beside it.

Rows (see bench/README.md for the byte formulas and the fairness choices):

  diffuse_b1, diffuse_b16   2 steps of X <- 0.5 * (A_masked^T X), node threshold,
                            b = 1 and b = 16 vectors; peer: SciPy CSR matvec /
                            matmat (one thread) on a pre-masked, pre-transposed
                            matrix + NumPy
  diffuse_b1_graphblas,     the same against SuiteSparse:GraphBLAS
  diffuse_b16_graphblas     (python-graphblas) at our thread count: mxv / mxm
  spread                    1,000 queries of 20 seeds, depth 2 (decay 0.5,
                            restart 1.0); peer: a frontier-only NumPy version of
                            the same rule; per call through SpreadSession (p50,
                            p95, speedup_single); for scale also python-igraph
                            personalized PageRank (whole graph per query)
  spread_graphblas          the same rule in GraphBLAS at our thread count: all
                            queries as one sparse seed matrix times A per step
                            (batched), and per call a sparse seed vector times A
  pair_cosine_fp32/_fp16    100,000 (claim, unit) cosines, d = 384; peer: NumPy
                            fancy indexing + einsum

The GraphBLAS rows need python-graphblas (the package's `bench-graphblas` extra,
which `make bench` installs); without it they are skipped with one line saying
why. They run on the random graph.

With --graph both (the default) the graph rows are run on a uniformly random
graph (names as above) and on a locality-ordered one (names with "_local").

Progress goes to stderr; stdout holds only the machine line and the table, or
with --json only the JSON object.
"""

from __future__ import annotations

if __name__ == "kernels":
    # Imported by name by another script of this folder: transformers imports the installed `kernels`
    # package, and a script's own folder comes first on sys.path. Hand that package over in this
    # module's place (the import returns what sys.modules holds once this file has run).
    import importlib.machinery
    import importlib.util
    import os.path
    import sys

    _here = os.path.dirname(os.path.abspath(__file__))
    _spec = importlib.machinery.PathFinder.find_spec(
        "kernels", [p for p in sys.path if os.path.abspath(p or ".") != _here])
    if _spec is None:
        raise ImportError("no package `kernels` outside bench/ (bench/kernels.py is a script, not that package)")
    sys.modules["kernels"] = importlib.util.module_from_spec(_spec)
    _spec.loader.exec_module(sys.modules["kernels"])

import argparse
import json
import os
import platform
import sys
import time

import numpy as np

# Fixed parameters of the rows (the issue's benchmark definitions).
DIFFUSE_STEPS = 2
DIFFUSE_DECAY = 0.5
DIFFUSE_EDGE_THRESHOLD = 0.1
DIFFUSE_NODE_THRESHOLD = 1e-4
SPREAD_DEPTH = 2
SPREAD_DECAY = 0.5
SPREAD_RESTART = 1.0
IGRAPH_DAMPING = 0.5
COPY_BYTES = 256 << 20  # one array of the copy-bandwidth test
GOALS = {"diffuse": 3.0, "spread": 5.0, "pair_cosine": 3.0, "graphblas": 2.0}
SPREAD_P95_GOAL_US = 20.0
DIFFUSE_B1_COPY_GOAL_PCT = 70.0  # of the copy bandwidth: what a streaming SpMV can reach

_T0 = time.perf_counter()


def log(msg: str) -> None:
    """A progress line on stderr (stdout stays clean for the table / JSON)."""
    print(f"[bench {time.perf_counter() - _T0:7.1f}s] {msg}", file=sys.stderr, flush=True)


# --------------------------------------------------------------------------- options

FULL = dict(nodes=1_000_000, repeats=5, queries=1000, pairs=100_000, units=200_000,
            igraph_queries=3)
QUICK = dict(nodes=100_000, repeats=3, queries=1000, pairs=100_000, units=50_000,
             igraph_queries=2)


def parse_args(argv=None) -> argparse.Namespace:
    p = argparse.ArgumentParser(
        prog="python bench/kernels.py",
        description="Benchmark ASMR's CPU kernels (diffuse, spread, pair_cosine) against "
                    "SciPy / NumPy / python-igraph, measured side by side in one run.",
        epilog="Sizes default to the issue's full benchmark (1,000,000 nodes); --quick "
               "switches the defaults to a small run (100,000 nodes) for `make demo`. "
               "Any size given explicitly wins over both. No timing is asserted.")
    g = p.add_argument_group("graph rows (diffuse, spread)")
    g.add_argument("--nodes", type=int, default=None,
                   help=f"graph size (default {FULL['nodes']:,}; {QUICK['nodes']:,} with --quick)")
    g.add_argument("--degree", type=int, default=10, help="out-edges per node (default 10)")
    g.add_argument("--graph", choices=("random", "local", "both"), default="both",
                   help="uniformly random targets, locality-ordered targets, or both (default both)")
    g.add_argument("--window", type=int, default=32,
                   help="locality-ordered graph: targets lie within +-window of the source id (default 32)")
    g.add_argument("--queries", type=int, default=None,
                   help=f"spread queries per batch (default {FULL['queries']:,})")
    g.add_argument("--seeds", type=int, default=20, help="seed nodes per spread query (default 20)")
    g.add_argument("--skip-igraph", action="store_true",
                   help="do not run the python-igraph personalized PageRank comparison")
    g.add_argument("--skip-graphblas", action="store_true",
                   help="do not run the GraphBLAS rows (they are also skipped, with a note, when "
                        "python-graphblas is not installed)")
    g.add_argument("--igraph-queries", type=int, default=None,
                   help=f"igraph PPR queries to time; each solves the whole graph "
                        f"(default {FULL['igraph_queries']})")
    c = p.add_argument_group("pair_cosine rows")
    c.add_argument("--pairs", type=int, default=None,
                   help=f"(claim, unit) pairs (default {FULL['pairs']:,})")
    c.add_argument("--dim", type=int, default=384, help="vector dimension d (default 384)")
    c.add_argument("--claims", type=int, default=1000, help="rows of the claim matrix (default 1000)")
    c.add_argument("--units", type=int, default=None,
                   help=f"rows of the unit matrix, large so rows do not stay in cache "
                        f"(default {FULL['units']:,}; {QUICK['units']:,} with --quick)")
    r = p.add_argument_group("run")
    r.add_argument("--threads", type=int, default=2,
                   help="num_threads passed to our kernels (0 = all cores) and GraphBLAS's thread "
                        "count; SciPy sparse and NumPy use one thread (default 2)")
    r.add_argument("--repeats", type=int, default=None,
                   help=f"timed runs per measurement after one warm-up; medians are reported, "
                        f"with min and max "
                        f"(default {FULL['repeats']}; {QUICK['repeats']} with --quick)")
    r.add_argument("--seed", type=int, default=0, help="RNG seed for all inputs (default 0)")
    r.add_argument("--quick", action="store_true",
                   help="small defaults for a demo run (100,000 nodes, 50,000 unit rows, 3 repeats)")
    r.add_argument("--json", action="store_true",
                   help='print only {"copy_gbps": x, "rows": [...]} (plus "machine" and "params") '
                        "on stdout")
    a = p.parse_args(argv)
    base = QUICK if a.quick else FULL
    for k, v in base.items():
        if getattr(a, k) is None:
            setattr(a, k, v)
    for k in ("nodes", "degree", "queries", "seeds", "pairs", "dim", "claims", "units", "repeats"):
        if getattr(a, k) < 1:
            p.error(f"--{k} must be at least 1")
    if a.threads < 0:
        p.error("--threads must be >= 0 (0 = all cores)")
    if a.seeds > a.nodes:
        p.error("--seeds must not exceed --nodes")
    return a


# --------------------------------------------------------------------------- machine

def cpu_model() -> str:
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def _loadavg():
    """1-minute load average: other work on a shared machine shows up here."""
    try:
        return round(os.getloadavg()[0], 2)
    except (AttributeError, OSError):
        return None


def machine_info(threads: int) -> dict:
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:
        cores = os.cpu_count() or 1
    info = {
        "cpu": cpu_model(),
        "cores": cores,
        "threads": threads if threads > 0 else cores,
        "python": platform.python_version(),
        "numpy": np.__version__,
    }
    try:
        import scipy
        info["scipy"] = scipy.__version__
    except ImportError:
        info["scipy"] = None
    try:
        import igraph
        info["igraph"] = igraph.__version__
    except ImportError:
        info["igraph"] = None
    try:
        import graphblas
        info["graphblas"] = f"python-graphblas {graphblas.__version__}, SuiteSparse:GraphBLAS " \
                            f"{'.'.join(map(str, graphblas.ss.about['library_version']))}"
    except ImportError:
        info["graphblas"] = None
    try:
        import asmr_kernels
        version = getattr(asmr_kernels, "__version__", None)
        if version is None:
            from importlib.metadata import PackageNotFoundError, version as dist_version
            try:
                version = dist_version("asmr")
            except PackageNotFoundError:
                version = "?"
        info["asmr_kernels"] = version
        backend = getattr(asmr_kernels, "backend_info", None)
        if backend is not None:
            try:
                b = backend()
                info["openmp"] = b.get("openmp")
                info["max_threads"] = b.get("max_threads")
            except Exception:  # informational only
                pass
    except ImportError:
        info["asmr_kernels"] = None
    try:
        from threadpoolctl import threadpool_info
        blas = [f"{d.get('internal_api')} {d.get('version') or ''} {d.get('architecture') or ''}"
                f" x{d.get('num_threads')}".replace("  ", " ")
                for d in threadpool_info() if d.get("user_api") == "blas"]
        info["blas"] = "; ".join(blas) or None
    except ImportError:
        info["blas"] = None
    env = {k: os.environ[k] for k in ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE", "OMP_NUM_THREADS")
           if k in os.environ}
    if env:
        info["env"] = env
    return info


# --------------------------------------------------------------------------- timing

# Pause before each timed call: OpenMP (ours, GraphBLAS's) and OpenBLAS workers
# spin for a while after a parallel region, and on a 2-core machine a call timed
# right after another runtime's call competes with those spinning threads (ours
# measured up to 1.3x slower right after a GraphBLAS call than 0.05 s later).
SETTLE_S = 0.05


def time_interleaved(fns: dict, repeats: int) -> tuple[dict, dict, dict]:
    """Warm each function up once (its result is returned), then time `repeats`
    rounds in which every function runs once, so that a noisy moment on a
    shared machine hits ours and the peer alike. Returns (median seconds, warm-up
    results, [min, max] seconds)."""
    results = {k: f() for k, f in fns.items()}
    times = {k: [] for k in fns}
    for _ in range(repeats):
        for k, f in fns.items():
            time.sleep(SETTLE_S)
            t0 = time.perf_counter()
            f()
            times[k].append(time.perf_counter() - t0)
    return ({k: float(np.median(v)) for k, v in times.items()}, results,
            {k: [float(min(v)), float(max(v))] for k, v in times.items()})


def scaled(span: list, factor: float) -> list:
    """A [min, max] in other units (seconds -> ms, or per query)."""
    return [span[0] * factor, span[1] * factor]


def copy_samples(repeats: int) -> list:
    """GB/s of single np.copyto calls between two 256 MiB float32 arrays, counted
    as bytes read + bytes written (2 x 256 MiB per copy). One thread (NumPy's
    copy is single-threaded). Called at the start and at the end of the run;
    the reported copy bandwidth is the median of all samples."""
    n = COPY_BYTES // 4
    src = np.full(n, 1.5, dtype=np.float32)
    dst = np.zeros(n, dtype=np.float32)
    np.copyto(dst, src)  # warm-up: every page touched
    out = []
    for _ in range(max(repeats, 5)):
        t0 = time.perf_counter()
        np.copyto(dst, src)
        out.append(2 * src.nbytes / (time.perf_counter() - t0) / 1e9)
    return out


# --------------------------------------------------------------------------- inputs

def make_graph(kind: str, n: int, degree: int, window: int, rng: np.random.Generator) -> dict:
    """Out-edge CSR (row i lists edges i -> j) with `degree` edges per node and
    float32 weights in (0, 1]. kind "random": uniform targets; kind "local":
    targets (i + offset) mod n with offset uniform in [-window, window].
    Targets are sorted within each row (canonical CSR); duplicates may occur."""
    nnz = n * degree
    idx = np.int32 if nnz < 2**31 - 1 else np.int64
    indptr = np.arange(0, nnz + 1, degree, dtype=idx)
    if kind == "random":
        indices = rng.integers(0, n, size=nnz, dtype=idx)
    else:
        off = rng.integers(-window, window + 1, size=nnz, dtype=np.int64)
        src = np.repeat(np.arange(n, dtype=np.int64), degree)
        indices = ((src + off) % n).astype(idx)
        del off, src
    indices.reshape(n, degree).sort(axis=1)
    weights = (np.float32(1.0) - rng.random(nnz, dtype=np.float32))  # (0, 1]
    return {"kind": kind, "n": n, "indptr": indptr, "indices": indices, "weights": weights}


def make_seeds(n: int, queries: int, seeds: int, rng: np.random.Generator, idx_dtype):
    """seed_ptr int64 (q+1,), seed_nodes (q*s,) distinct within a query,
    seed_scores float32 in (0, 1]."""
    nodes = rng.integers(0, n, size=(queries, seeds), dtype=np.int64)
    while True:
        s = np.sort(nodes, axis=1)
        dup = (s[:, 1:] == s[:, :-1]).any(axis=1)
        if not dup.any():
            break
        nodes[dup] = rng.integers(0, n, size=(int(dup.sum()), seeds), dtype=np.int64)
    scores = np.float32(1.0) - rng.random((queries, seeds), dtype=np.float32)
    ptr = np.arange(0, queries * seeds + 1, seeds, dtype=np.int64)
    return ptr, nodes.reshape(-1).astype(idx_dtype), scores.reshape(-1)


# --------------------------------------------------------------------------- peers

def scipy_masked_transpose(graph: dict, edge_threshold: float):
    """The peer's best form, built once outside timing: CSR of A^T with the edges
    under the threshold removed (our kernel applies the threshold on the fly)."""
    import scipy.sparse as sp
    n = graph["n"]
    # copy=True: eliminate_zeros compacts indices in place, and they must not be
    # the graph's own arrays, which our kernel and the other peers read.
    A = sp.csr_matrix((graph["weights"], graph["indices"], graph["indptr"]), shape=(n, n),
                      copy=True)
    A.data[A.data < edge_threshold] = 0  # per edge, before any duplicate summation
    A.eliminate_zeros()
    return A.T.tocsr()


def scipy_diffuse(AT, x, steps: int, decay: float, node_threshold: float):
    y = x
    for _ in range(steps):
        y = AT @ y
        y *= decay
        y[y < node_threshold] = 0
    return y


def graphblas_threads(threads: int) -> int:
    """GraphBLAS's thread count for our num_threads (0 = all cores), set globally."""
    import graphblas as gb
    n = resolved_threads(threads)
    gb.ss.config["nthreads"] = n
    return n


def graphblas_matrix(csr):
    """A GraphBLAS matrix, held by row, from a SciPy CSR matrix (duplicates summed, as
    GraphBLAS requires; a product is the same)."""
    import graphblas as gb
    m = csr.copy()
    m.sum_duplicates()
    return gb.Matrix.from_csr(m.indptr.astype(np.int64), m.indices.astype(np.int64), m.data,
                              nrows=m.shape[0], ncols=m.shape[1])


def graphblas_diffuse(ATg, x, steps: int, decay: float, node_threshold: float):
    """The diffuse row in GraphBLAS on its own containers (x a full Vector or Matrix,
    converted outside the timing): y = AT @ x (mxv, a dot product per row: the pull;
    mxm for b columns), y *= decay in place, entries under the node threshold
    dropped (select). float32 throughout."""
    import graphblas as gb
    d, t = np.float32(decay), np.float32(node_threshold)
    for _ in range(steps):
        y = (ATg.mxv(x) if isinstance(x, gb.Vector) else ATg.mxm(x)).new()
        y << y.apply(gb.binary.times, right=d)
        x = y.select(">=", t).new()
    return x


def _graphblas_spread(P, Ag, depth: int, decay: float, restart: float):
    """`depth` times X <- decay * (X A) + restart * P, for a seed vector (vxm: a sparse vector times
    the out-edge matrix reads only the rows of x's entries) or a matrix of seed rows (mxm)."""
    import graphblas as gb
    vector = isinstance(P, gb.Vector)
    rP = P.apply(gb.binary.times, right=np.float32(restart)).new()
    d = np.float32(decay)
    X = P
    for _ in range(depth):
        Y = (X.vxm(Ag) if vector else X.mxm(Ag)).new()
        Y << Y.apply(gb.binary.times, right=d)
        Y(accum=gb.binary.plus) << rP
        X = Y
    return X


def graphblas_spread_one(Ag, n: int, seeds, scores, depth: int, decay: float, restart: float):
    """One spread query in GraphBLAS from its seed vector (sparse; duplicates add up). Node
    threshold 0."""
    import graphblas as gb
    p = gb.Vector.from_coo(seeds, scores, size=n, dtype="FP32", dup_op=gb.binary.plus)
    return _graphblas_spread(p, Ag, depth, decay, restart)


def graphblas_spread_batch(Ag, n: int, seed_ptr, seed_nodes, seed_scores, depth: int,
                           decay: float, restart: float):
    """All queries at once: row q of the sparse q x n matrix P holds query q's seeds."""
    import graphblas as gb
    q = seed_ptr.size - 1
    rows = np.repeat(np.arange(q, dtype=np.int64), np.diff(seed_ptr))
    P = gb.Matrix.from_coo(rows, seed_nodes.astype(np.int64), seed_scores, nrows=q, ncols=n,
                           dtype="FP32", dup_op=gb.binary.plus)
    return _graphblas_spread(P, Ag, depth, decay, restart)


def numpy_frontier_spread(indptr, indices, weights, seed_nodes, seed_scores, depth: int,
                          decay: float, restart: float, edge_threshold: float = 0.0,
                          node_threshold: float = 0.0):
    """The spread rule in NumPy, touching only active nodes and their out-edges:
    X0 = P = seeds; each step X <- decay * (A_masked^T X) + restart * P, then
    X[X < node_threshold] = 0, computed on the compact set of active nodes (no
    n-length array per query). Duplicate seeds add up. Returns (sorted node ids,
    activations, edges gathered).

    The contributions of a step are merged per target node with one argsort and
    np.add.reduceat; on this kind of machine that is about 1.3x faster than
    np.unique(return_inverse=True) + np.bincount, and faster than scattering
    into a preallocated n-length slot map (random writes miss the cache)."""
    p_nodes = np.asarray(seed_nodes)
    p_vals = np.asarray(seed_scores, dtype=np.float64)
    act_nodes, act_vals = p_nodes, p_vals
    touched = 0
    for _ in range(depth):
        starts = indptr[act_nodes]
        lens = indptr[act_nodes + 1] - starts
        ends = np.cumsum(lens)
        total = int(ends[-1]) if ends.size else 0
        touched += total
        # positions of the out-edges of every active node, without a Python loop
        pos = np.arange(total) + np.repeat(starts - (ends - lens), lens)
        tgt = indices[pos]
        w = weights[pos]
        contrib = (decay * w) * np.repeat(act_vals, lens)
        if edge_threshold > 0:
            keep = w >= edge_threshold
            tgt, contrib = tgt[keep], contrib[keep]
        nodes = np.concatenate((tgt, p_nodes))
        vals = np.concatenate((contrib, restart * p_vals))
        order = np.argsort(nodes)
        nodes = nodes[order]
        first = np.empty(nodes.size, dtype=bool)
        first[:1] = True
        np.not_equal(nodes[1:], nodes[:-1], out=first[1:])
        heads = np.flatnonzero(first)
        act_nodes = nodes[heads]
        act_vals = np.add.reduceat(vals[order], heads) if heads.size else vals[:0]
        if node_threshold > 0:
            live = act_vals >= node_threshold
            act_nodes, act_vals = act_nodes[live], act_vals[live]
    return act_nodes, act_vals, touched


def numpy_pair_cosine(C, U, ci, uj):
    """What a NumPy user writes: gather the rows, einsum the dot products and the
    norms. fp16 inputs are gathered as fp16 (half the bytes) and upcast to
    float32: einsum on fp16 rows is slower and overflows in the norm product."""
    a = C[ci]
    b = U[uj]
    if a.dtype != np.float32:
        a = a.astype(np.float32)
        b = b.astype(np.float32)
    dot = np.einsum("ij,ij->i", a, b)
    return dot / np.sqrt(np.einsum("ij,ij->i", a, a) * np.einsum("ij,ij->i", b, b))


# --------------------------------------------------------------------------- rows

def check_close(name: str, ours, peer, rtol: float, atol: float, allowed_frac: float = 0.0):
    ours = np.asarray(ours, dtype=np.float64)
    peer = np.asarray(peer, dtype=np.float64)
    if ours.shape != peer.shape:
        raise RuntimeError(f"{name}: ours has shape {ours.shape}, peer {peer.shape}")
    bad = np.abs(ours - peer) > atol + rtol * np.abs(peer)
    nbad = int(bad.sum())
    if nbad > allowed_frac * bad.size:
        i = int(np.argmax(bad))
        raise RuntimeError(f"{name}: ours and the peer disagree at {nbad} of {bad.size} entries "
                           f"(first at {i}: ours {ours.flat[i]!r}, peer {peer.flat[i]!r}); "
                           "the benchmark would compare different computations")
    log(f"  check {name}: ours == peer (max abs diff {float(np.max(np.abs(ours - peer), initial=0)):.2e}"
        + (f", {nbad} entries at the node-threshold boundary" if nbad else "") + ")")


def bench_diffuse(ak, graph, g_ours, AT, b: int, args, rng, suffix: str, gbx=None) -> list:
    """The diffuse_b{b} row against SciPy and, with gbx (the GraphBLAS context), the
    diffuse_b{b}_graphblas row; ours is timed once, interleaved with both peers."""
    n = graph["n"]
    threads = resolved_threads(args.threads)
    x = (np.float32(1.0) - rng.random((n, b) if b > 1 else n, dtype=np.float32))
    fns = {
        "ours": lambda: ak.diffuse(g_ours, x, steps=DIFFUSE_STEPS, decay=DIFFUSE_DECAY, restart=0.0,
                                   edge_threshold=DIFFUSE_EDGE_THRESHOLD,
                                   node_threshold=DIFFUSE_NODE_THRESHOLD, num_threads=args.threads),
        "peer": lambda: scipy_diffuse(AT, x, DIFFUSE_STEPS, DIFFUSE_DECAY, DIFFUSE_NODE_THRESHOLD),
    }
    if gbx is not None:
        import graphblas as gb
        # The peer's own containers, built outside the timing (as SciPy's matrix is).
        xg = gb.Vector.from_dense(x) if b == 1 else gb.Matrix.from_dense(x)
        fns["graphblas"] = lambda: graphblas_diffuse(gbx["AT"], xg, DIFFUSE_STEPS, DIFFUSE_DECAY,
                                                     DIFFUSE_NODE_THRESHOLD)
    log(f"diffuse b={b} on the {graph['kind']} graph: warm-up + {args.repeats} timed runs each "
        f"({', '.join(fns)})")
    t, res, span = time_interleaved(fns, args.repeats)
    # Summation order differs, so an entry within rounding of the node threshold
    # may be zeroed on one side only: allow a handful of those.
    check_close(f"diffuse_b{b}{suffix}", res["ours"], res["peer"], rtol=1e-4, atol=1e-6,
                allowed_frac=1e-5)
    nbytes = DIFFUSE_STEPS * (graph["indptr"].nbytes + graph["indices"].nbytes
                              + graph["weights"].nbytes + 2 * n * b * 4)
    ours = {"graph": graph["kind"], "ours_ms": t["ours"] * 1e3, "ours_ms_range": scaled(span["ours"], 1e3),
            "threads": threads, "gbps": nbytes / t["ours"] / 1e9, "bytes": nbytes}
    rows = [{"name": f"diffuse_b{b}{suffix}", **ours,
             "peer": f"scipy csr {'matvec' if b == 1 else 'matmat'} + numpy", "peer_threads": 1,
             "peer_ms": t["peer"] * 1e3, "peer_ms_range": scaled(span["peer"], 1e3),
             "speedup": t["peer"] / t["ours"], "goal": GOALS["diffuse"]}]
    if b == 1:
        rows[0]["goal_pct_copy"] = DIFFUSE_B1_COPY_GOAL_PCT
    if gbx is not None:
        got = res["graphblas"].to_dense(fill_value=0).reshape(x.shape)
        check_close(f"diffuse_b{b}{suffix}_graphblas", res["ours"], got, rtol=1e-4, atol=1e-6,
                    allowed_frac=1e-5)
        rows.append({"name": f"diffuse_b{b}{suffix}_graphblas", **ours,
                     "peer": f"graphblas {'mxv' if b == 1 else 'mxm'} x{gbx['threads']}",
                     "peer_threads": gbx["threads"], "peer_ms": t["graphblas"] * 1e3,
                     "peer_ms_range": scaled(span["graphblas"], 1e3),
                     "speedup": t["graphblas"] / t["ours"], "goal": GOALS["graphblas"]})
    return rows


def bench_spread(ak, graph, g_ours, args, rng, suffix: str, ig=None, gbx=None) -> list:
    """The spread row (NumPy frontier peer; per call through SpreadSession) and, with gbx,
    the spread_graphblas row; all timed interleaved in the same rounds."""
    n, q, s = graph["n"], args.queries, args.seeds
    threads = resolved_threads(args.threads)
    indptr, indices, weights = graph["indptr"], graph["indices"], graph["weights"]
    seed_ptr, seed_nodes, seed_scores = make_seeds(n, q, s, rng, indices.dtype)
    kw = {"depth": SPREAD_DEPTH, "decay": SPREAD_DECAY, "restart": SPREAD_RESTART,
          "edge_threshold": 0.0, "node_threshold": 0.0}
    one_ptr = np.array([0, s], dtype=np.int64)
    per_query = [(seed_nodes[seed_ptr[i]:seed_ptr[i + 1]], seed_scores[seed_ptr[i]:seed_ptr[i + 1]])
                 for i in range(q)]
    session = ak.SpreadSession(g_ours, **kw)
    # Per round: the per-call percentiles of the loops (the first round is the warm-up).
    lat = {k: [] for k in ("kernel_p95", "single_p50", "single_p95", "call_p95", "peer_p95",
                           "gb_p50", "gb_p95")}

    def percentiles(ns, *keys_and_q):
        for key, pct in keys_and_q:
            lat[key].append(float(np.percentile(ns, pct)) / 1e3)

    def ours_batch():
        r = ak.spread(g_ours, seed_ptr, seed_nodes, seed_scores, num_threads=args.threads, **kw)
        percentiles(r.elapsed_ns, ("kernel_p95", 95))
        return r

    def ours_single():
        # One query per call through the C-level entry, end to end: what a server
        # pays per request (the kernel runs on the calling thread).
        t = np.empty(q, dtype=np.int64)
        run, clock = session.run, time.perf_counter_ns
        for i, (nodes, scores) in enumerate(per_query):
            t0 = clock()
            run(nodes, scores)
            t[i] = clock() - t0
        percentiles(t, ("single_p50", 50), ("single_p95", 95))

    def ours_spread_call():
        # The same through spread() with a batch of one query (num_threads=1), for comparison.
        t = np.empty(q, dtype=np.int64)
        spread_, clock = ak.spread, time.perf_counter_ns
        for i, (nodes, scores) in enumerate(per_query):
            t0 = clock()
            spread_(g_ours, one_ptr, nodes, scores, num_threads=1, **kw)
            t[i] = clock() - t0
        percentiles(t, ("call_p95", 95))

    def peer_all():
        t = np.empty(q, dtype=np.int64)
        clock = time.perf_counter_ns
        touched = 0
        for i, (nodes, scores) in enumerate(per_query):
            t0 = clock()
            _, _, e = numpy_frontier_spread(indptr, indices, weights, nodes, scores, SPREAD_DEPTH,
                                            SPREAD_DECAY, SPREAD_RESTART)
            t[i] = clock() - t0
            touched += e
        percentiles(t, ("peer_p95", 95))
        return touched

    fns = {"ours": ours_batch, "single": ours_single, "call": ours_spread_call, "peer": peer_all}
    if gbx is not None:
        seeds64 = [(nodes.astype(np.int64), scores) for nodes, scores in per_query]

        def gb_single():
            t = np.empty(q, dtype=np.int64)
            clock = time.perf_counter_ns
            for i, (nodes, scores) in enumerate(seeds64):
                t0 = clock()
                graphblas_spread_one(gbx["A"], n, nodes, scores, SPREAD_DEPTH, SPREAD_DECAY,
                                     SPREAD_RESTART)
                t[i] = clock() - t0
            percentiles(t, ("gb_p50", 50), ("gb_p95", 95))

        fns["gb_batch"] = lambda: graphblas_spread_batch(gbx["A"], n, seed_ptr, seed_nodes, seed_scores,
                                                         SPREAD_DEPTH, SPREAD_DECAY, SPREAD_RESTART)
        fns["gb_single"] = gb_single
    log(f"spread on the {graph['kind']} graph: {q} queries x {s} seeds; {', '.join(fns)}; "
        f"warm-up + {args.repeats} rounds")
    t, res, span = time_interleaved(fns, args.repeats)
    r = res["ours"]
    # Sanity check on a few queries: same reached nodes, same activations.
    for i in sorted({0, 1, q // 2, q - 1} & set(range(q))):
        lo, hi = int(r.ptr[i]), int(r.ptr[i + 1])
        o_nodes = np.asarray(r.node[lo:hi], dtype=np.int64)
        o_act = np.asarray(r.activation[lo:hi], dtype=np.float64)
        live = o_act > 0
        order = np.argsort(o_nodes[live], kind="stable")
        p_nodes, p_act, _ = numpy_frontier_spread(indptr, indices, weights, *per_query[i],
                                                  SPREAD_DEPTH, SPREAD_DECAY, SPREAD_RESTART)
        if not np.array_equal(o_nodes[live][order], p_nodes.astype(np.int64)):
            raise RuntimeError(f"spread{suffix}: query {i} reached {int(live.sum())} nodes in ours, "
                               f"{p_nodes.size} in the NumPy frontier")
        check_close(f"spread{suffix} query {i}", o_act[live][order], p_act, rtol=1e-4, atol=1e-7)
        one = session.run(*per_query[i])
        if not (np.array_equal(one.node, r.node[lo:hi]) and np.array_equal(one.activation, r.activation[lo:hi])):
            raise RuntimeError(f"spread{suffix}: query {i} differs between SpreadSession and spread")
        if gbx is not None:
            one_gb = graphblas_spread_one(gbx["A"], n, per_query[i][0].astype(np.int64), per_query[i][1],
                                          SPREAD_DEPTH, SPREAD_DECAY, SPREAD_RESTART)
            for label, got in (("batched", res["gb_batch"][i, :].new()), ("per call", one_gb)):
                g_nodes, g_act = got.to_coo()
                g_order = np.argsort(g_nodes, kind="stable")
                g_nodes, g_act = g_nodes[g_order].astype(np.int64), g_act[g_order]
                g_live = g_act > 0
                if not np.array_equal(g_nodes[g_live], o_nodes[live][order]):
                    raise RuntimeError(f"spread{suffix}_graphblas ({label}): query {i} reached "
                                       f"{int(g_live.sum())} nodes, ours {int(live.sum())}")
                check_close(f"spread{suffix}_graphblas {label} query {i}", o_act[live][order],
                            g_act[g_live], rtol=1e-4, atol=1e-7)

    med = {k: _timed_median(v) for k, v in lat.items() if v}
    rng_ = {k: _timed_span(v) for k, v in lat.items() if v}
    base = {"graph": graph["kind"], "ours_ms": t["ours"] / q * 1e3,
            "ours_ms_range": scaled(span["ours"], 1e3 / q), "threads": threads, "gbps": None,
            "p95_us": med["single_p95"], "p95_us_range": rng_["single_p95"],
            "p50_us": med["single_p50"], "p95_kernel_us": med["kernel_p95"],
            "p95_us_spread_call": med["call_p95"],
            "single_ms": t["single"] / q * 1e3, "single_ms_range": scaled(span["single"], 1e3 / q),
            "edges_per_query": float(r.edges_touched) / q, "goal_p95_us": SPREAD_P95_GOAL_US}
    row = {"name": f"spread{suffix}", **base,
           "peer": "numpy frontier", "peer_threads": 1,
           "peer_ms": t["peer"] / q * 1e3, "peer_ms_range": scaled(span["peer"], 1e3 / q),
           "speedup": t["peer"] / t["ours"], "speedup_single": t["peer"] / t["single"],
           "peer_p95_us": med["peer_p95"], "peer_edges_per_query": res["peer"] / q,
           "goal": GOALS["spread"], "goal_single": GOALS["spread"]}
    if ig is not None:
        row.update(bench_igraph(ig, per_query, args))
    rows = [row]
    if gbx is not None:
        rows.append({"name": f"spread{suffix}_graphblas", **base,
                     "peer": f"graphblas mxm batch / vxm per call x{gbx['threads']}",
                     "peer_threads": gbx["threads"],
                     "peer_ms": t["gb_batch"] / q * 1e3, "peer_ms_range": scaled(span["gb_batch"], 1e3 / q),
                     "speedup": t["gb_batch"] / t["ours"],
                     "peer_single_ms": t["gb_single"] / q * 1e3,
                     "peer_single_ms_range": scaled(span["gb_single"], 1e3 / q),
                     "speedup_single": t["gb_single"] / t["single"],
                     "peer_p50_us": med["gb_p50"], "peer_p95_us": med["gb_p95"]})
    return rows


def resolved_threads(threads: int) -> int:
    return threads if threads > 0 else len(os.sched_getaffinity(0))


def _timed_span(values: list) -> list:
    """[min, max] over the timed rounds (the first entry is the warm-up's)."""
    v = values[1:] if len(values) > 1 else values
    return [float(min(v)), float(max(v))]


def _timed_median(values: list) -> float:
    """Median over the timed rounds (the first entry is the warm-up's)."""
    return float(np.median(values[1:] if len(values) > 1 else values))


def build_igraph(graph: dict):
    import igraph
    n = graph["n"]
    src = np.repeat(np.arange(n, dtype=np.int64), np.diff(graph["indptr"]))
    edges = np.column_stack((src, graph["indices"].astype(np.int64)))
    del src
    t0 = time.perf_counter()
    G = igraph.Graph(n=n, edges=edges, directed=True)
    G.es["weight"] = graph["weights"].astype(np.float64)
    log(f"  igraph graph built in {time.perf_counter() - t0:.1f} s (not timed in the row)")
    return G


def bench_igraph(G, per_query, args) -> dict:
    k = min(args.igraph_queries, len(per_query))
    log(f"  igraph personalized_pagerank: {k} queries (each solves the whole graph; no warm-up)")
    ts = []
    for i in range(k):
        seeds = per_query[i][0].tolist()
        t0 = time.perf_counter()
        G.personalized_pagerank(reset_vertices=seeds, weights="weight", directed=True,
                                damping=IGRAPH_DAMPING, implementation="prpack")
        ts.append(time.perf_counter() - t0)
        log(f"    query {i}: {ts[-1]:.2f} s")
    return {"igraph_ms": float(np.median(ts)) * 1e3, "igraph_queries": k}


def bench_pair_cosine(ak, args, rng) -> list:
    d, m, u, p = args.dim, args.claims, args.units, args.pairs
    log(f"pair_cosine inputs: claims {m} x {d}, units {u:,} x {d}, {p:,} pairs")
    C = rng.standard_normal((m, d), dtype=np.float32)
    U = rng.standard_normal((u, d), dtype=np.float32)
    ci = rng.integers(0, m, size=p, dtype=np.int64)
    uj = rng.integers(0, u, size=p, dtype=np.int64)
    rows = []
    for label, dt in (("fp32", np.float32), ("fp16", np.float16)):
        Cx = C if dt == np.float32 else C.astype(dt)
        Ux = U if dt == np.float32 else U.astype(dt)
        ours = lambda: ak.pair_cosine(Cx, Ux, ci, uj, num_threads=args.threads)
        ours_pre = lambda: ak.pair_cosine(Cx, Ux, ci, uj, prenormalized=True,
                                          num_threads=args.threads)
        peer = lambda: numpy_pair_cosine(Cx, Ux, ci, uj)
        log(f"pair_cosine {label}: warm-up + {args.repeats} timed runs each")
        t, res, span = time_interleaved({"ours": ours, "pre": ours_pre, "peer": peer}, args.repeats)
        if dt == np.float32:
            check_close(f"pair_cosine_{label}", res["ours"], res["peer"], rtol=1e-4, atol=1e-5)
        else:
            check_close(f"pair_cosine_{label}", res["ours"], res["peer"], rtol=1e-3, atol=1e-4)
        itemsize = np.dtype(dt).itemsize
        nbytes = 2 * p * d * itemsize + ci.nbytes + uj.nbytes + p * 4
        rows.append({"name": f"pair_cosine_{label}", "ours_ms": t["ours"] * 1e3,
                     "ours_ms_range": scaled(span["ours"], 1e3), "threads": resolved_threads(args.threads),
                     "peer": "numpy gather + einsum" + (" (fp32 upcast)" if label == "fp16" else ""),
                     "peer_threads": 1, "peer_ms": t["peer"] * 1e3, "peer_ms_range": scaled(span["peer"], 1e3),
                     "speedup": t["peer"] / t["ours"],
                     "gbps": nbytes / t["ours"] / 1e9, "bytes": nbytes,
                     "ours_prenorm_ms": t["pre"] * 1e3, "goal": GOALS["pair_cosine"]})
        del Cx, Ux
    return rows


# --------------------------------------------------------------------------- report

def fmt(v, spec=".4g") -> str:
    return "-" if v is None else format(v, spec)


def verdict(row, copy_gbps: float) -> str:
    goal = row.get("goal")
    if goal is None:
        return ""
    parts = [f">={goal:g}x " + ("met" if row["speedup"] >= goal else f"MISSED ({row['speedup']:.2f}x)")]
    if "goal_single" in row:
        ok = row["speedup_single"] >= row["goal_single"]
        parts.append(f"per call >={row['goal_single']:g}x "
                     + ("met" if ok else f"MISSED ({row['speedup_single']:.2f}x)"))
    if "goal_p95_us" in row:
        ok = row["p95_us"] <= row["goal_p95_us"]
        parts.append(f"p95<={row['goal_p95_us']:g}us " + ("met" if ok else f"MISSED ({row['p95_us']:.1f}us)"))
    if "goal_pct_copy" in row:
        pct = 100 * row["gbps"] / copy_gbps
        parts.append(f">={row['goal_pct_copy']:g}% copy " + ("met" if pct >= row["goal_pct_copy"]
                                                               else f"MISSED ({pct:.0f}%)"))
    return "; ".join(parts)


def fmt_range(span) -> str:
    return "" if span is None else f"{span[0]:.4g}-{span[1]:.4g}"


def render(machine: dict, params: dict, copy_gbps: float, rows: list, skipped: dict) -> str:
    out = []
    m = machine
    out.append(f"machine: {m['cpu']}, {m['cores']} cores; our threads: {m['threads']}; "
               f"python {m['python']}, numpy {m['numpy']}, scipy {m['scipy']}, "
               f"igraph {m['igraph']}, {m['graphblas'] or 'graphblas not installed'}, "
               f"asmr_kernels {m['asmr_kernels']}"
               + (f" (OpenMP {'on' if m['openmp'] else 'OFF'})" if "openmp" in m else ""))
    if m.get("blas"):
        out.append(f"blas: {m['blas']}")
    if m.get("env"):
        out.append("env: " + " ".join(f"{k}={v}" for k, v in m["env"].items()))
    out.append(f"inputs: {params['nodes']:,} nodes x {params['degree']} out-edges; "
               f"{params['queries']:,} spread queries x {params['seeds']} seeds; "
               f"{params['pairs']:,} pairs, d={params['dim']}, units {params['units']:,}; "
               f"median (min-max) of {params['repeats']} runs after a warm-up")
    out.append(f"copy bandwidth (np.copyto 256 MiB, 1 thread, bytes read + written): {copy_gbps:.2f} GB/s "
               f"(start {m['copy_gbps_start']:.2f}, end {m['copy_gbps_end']:.2f}); "
               f"1-min load average at start {m['load_start']}, at end {m['load_end']}")
    for what, why in skipped.items():
        out.append(f"{what} rows skipped: {why}")
    out.append("")
    hdr = (f"{'row':<24} {'ours ms':>10} {'(min-max)':>17} {'thr':>3} {'peer':<36} {'thr':>3} "
           f"{'peer ms':>10} {'(min-max)':>17} {'speedup':>8} {'GB/s':>7} {'%copy':>6}  goal")
    out.append(hdr)
    out.append("-" * len(hdr))
    for r in rows:
        pct = None if r.get("gbps") is None else 100 * r["gbps"] / copy_gbps
        out.append(f"{r['name']:<24} {fmt(r['ours_ms']):>10} {fmt_range(r.get('ours_ms_range')):>17} "
                   f"{r.get('threads', ''):>3} {r['peer']:<36} {r.get('peer_threads', ''):>3} "
                   f"{fmt(r['peer_ms']):>10} {fmt_range(r.get('peer_ms_range')):>17} "
                   f"{r['speedup']:>7.2f}x {fmt(r.get('gbps'), '.2f'):>7} {fmt(pct, '.0f'):>6}  "
                   f"{verdict(r, copy_gbps)}")
    out.append("")
    for r in rows:
        if r["name"].startswith("spread") and not r["name"].endswith("_graphblas"):
            out.append(f"{r['name']}: ours_ms = batched call ({params['threads_label']}) / queries; "
                       f"one query per SpreadSession.run call, end to end: p50 {r['p50_us']:.1f} us, "
                       f"p95 {r['p95_us']:.1f} us (rounds {fmt_range(r['p95_us_range'])}), "
                       f"mean {r['single_ms'] * 1e3:.1f} us = {r['speedup_single']:.2f}x the peer; "
                       f"p95 of a one-query spread() call {r['p95_us_spread_call']:.1f} us; "
                       f"kernel p95 (elapsed_ns, batched) {r['p95_kernel_us']:.1f} us; "
                       f"peer p95 {r['peer_p95_us']:.1f} us; "
                       f"edges/query ours {r['edges_per_query']:.0f}, peer {r['peer_edges_per_query']:.0f}")
            if "igraph_ms" in r:
                out.append(f"{r['name']}: python-igraph personalized_pagerank (damping {IGRAPH_DAMPING}, "
                           f"whole graph): {r['igraph_ms']:.1f} ms per query over {r['igraph_queries']} "
                           f"queries = {r['igraph_ms'] / r['ours_ms']:.0f}x our batched per-query time")
        if r["name"].startswith("spread") and r["name"].endswith("_graphblas"):
            out.append(f"{r['name']}: peer_ms = all queries as one sparse seed matrix, mxm per step / queries; "
                       f"per call (one sparse seed vector, vxm per step) mean {r['peer_single_ms'] * 1e3:.1f} us, "
                       f"p50 {r['peer_p50_us']:.1f} us, p95 {r['peer_p95_us']:.1f} us; "
                       f"ours per call {r['single_ms'] * 1e3:.1f} us = {r['speedup_single']:.2f}x")
        if r["name"].startswith("pair_cosine"):
            out.append(f"{r['name']}: prenormalized fast path {r['ours_prenorm_ms']:.4g} ms")
    return "\n".join(out)


# --------------------------------------------------------------------------- main

def main(argv=None) -> int:
    args = parse_args(argv)
    try:
        import asmr_kernels as ak
        from asmr_kernels import CSRGraph  # noqa: F401
    except ImportError as e:
        print(f"bench/kernels.py: cannot import asmr_kernels ({e}); build it first "
              "(make test, or pip install -e .)", file=sys.stderr)
        return 2
    try:
        import scipy.sparse  # noqa: F401
    except ImportError:
        print("bench/kernels.py: SciPy is needed for the diffuse peer: pip install scipy "
              "(or the package's 'bench' extra)", file=sys.stderr)
        return 2
    igraph_ok = False
    if not args.skip_igraph:
        try:
            import igraph  # noqa: F401
            igraph_ok = True
        except ImportError:
            log("note: python-igraph is not installed; skipping the personalized PageRank "
                "comparison (pip install python-igraph)")
    skipped = {}
    if args.skip_graphblas:
        skipped["GraphBLAS"] = "--skip-graphblas"
    else:
        try:
            import graphblas  # noqa: F401
        except ImportError as e:
            skipped["GraphBLAS"] = (f"python-graphblas is not installed ({e}); pip install python-graphblas "
                                    "(the package's 'bench-graphblas' extra; make bench installs it)")
    for what, why in skipped.items():
        log(f"note: {what} rows skipped: {why}")

    machine = machine_info(args.threads)
    params = {k: getattr(args, k) for k in ("nodes", "degree", "queries", "seeds", "pairs", "dim",
                                            "claims", "units", "repeats", "threads", "graph",
                                            "window", "seed")}
    params["threads_label"] = f"num_threads={args.threads}" + (" = all cores" if args.threads == 0 else "")
    log(f"machine: {machine['cpu']}, {machine['cores']} cores, our threads {machine['threads']}")

    machine["load_start"] = _loadavg()
    log("copy bandwidth: np.copyto on 256 MiB float32 arrays (again at the end)")
    copy = copy_samples(args.repeats)
    log(f"  {float(np.median(copy)):.2f} GB/s")

    rows = []
    kinds = ("random", "local") if args.graph == "both" else (args.graph,)
    for kind in kinds:
        rng = np.random.default_rng([args.seed, 1 if kind == "random" else 2])
        log(f"building the {kind} graph: {args.nodes:,} nodes x {args.degree} out-edges")
        graph = make_graph(kind, args.nodes, args.degree, args.window, rng)
        suffix = "" if kind == "random" else "_local"
        t0 = time.perf_counter()
        g_ours = ak.CSRGraph(graph["indptr"], graph["indices"], graph["weights"])
        log(f"  CSRGraph validated in {time.perf_counter() - t0:.2f} s")
        t0 = time.perf_counter()
        AT = scipy_masked_transpose(graph, DIFFUSE_EDGE_THRESHOLD)
        log(f"  SciPy masked transpose built in {time.perf_counter() - t0:.2f} s (outside timing)")
        gbx = None
        if "GraphBLAS" not in skipped and kind == "random":
            t0 = time.perf_counter()
            import scipy.sparse as sp
            A = sp.csr_matrix((graph["weights"], graph["indices"], graph["indptr"]),
                              shape=(graph["n"], graph["n"]))
            # AT for diffuse (masked at its edge threshold, like SciPy's), A for spread (edge
            # threshold 0): the out-edges by row, so that a sparse x reads only x's rows.
            gbx = {"threads": graphblas_threads(args.threads), "AT": graphblas_matrix(AT),
                   "A": graphblas_matrix(A)}
            del A
            log(f"  GraphBLAS matrices built in {time.perf_counter() - t0:.2f} s (outside timing), "
                f"{gbx['threads']} GraphBLAS threads")
        elif "GraphBLAS" not in skipped:
            log("note: the GraphBLAS rows run on the random graph only")
        for b in (1, 16):
            rows.extend(bench_diffuse(ak, graph, g_ours, AT, b, args, rng, suffix, gbx))
        del AT
        ig = None
        if igraph_ok and kind != "random":
            log("note: the igraph comparison runs on the random graph only")
        if igraph_ok and kind == "random":
            log("building the python-igraph graph (once, outside timing)")
            ig = build_igraph(graph)
        rows.extend(bench_spread(ak, graph, g_ours, args, rng, suffix, ig, gbx))
        del ig, gbx, g_ours, graph

    rng = np.random.default_rng([args.seed, 3])
    rows.extend(bench_pair_cosine(ak, args, rng))

    log("copy bandwidth again")
    end = copy_samples(args.repeats)
    log(f"  {float(np.median(end)):.2f} GB/s")
    copy_gbps = float(np.median(copy + end))
    machine["copy_gbps_start"] = float(np.median(copy))
    machine["copy_gbps_end"] = float(np.median(end))
    machine["load_end"] = _loadavg()

    if args.json:
        print(json.dumps({"copy_gbps": copy_gbps, "rows": rows, "machine": machine,
                          "params": params, "skipped": skipped}, indent=2))
    else:
        print(render(machine, params, copy_gbps, rows, skipped))
    log("done")
    return 0


if __name__ == "__main__":
    sys.exit(main())
