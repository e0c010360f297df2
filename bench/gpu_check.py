#!/usr/bin/env python3
"""GPU check: ASMR's CUDA kernels against the CPU kernels (correctness) and
against cuSPARSE / torch / CuPy (speed), in one run. bench/gpu_check.sh builds
the package and calls this.

For each graph (a large one, 1,000,000 nodes by default, and a small one, both
with --degree uniformly random out-edges per node) it runs

  diffuse_b1, diffuse_b16   2 steps of X <- 0.5 * (A_masked^T X), edge threshold
                            0.1, node threshold 1e-4 (the rule of bench/kernels.py);
                            peers: cupyx.scipy.sparse (cuSPARSE) and
                            torch.sparse_csr on a pre-masked, pre-transposed
                            matrix, with the decay and threshold in CuPy / torch
  spread                    --queries queries of --seeds seeds, depth 2, decay
                            0.5, restart 1; peer: a frontier implemented with
                            CuPy sort/unique/scatter ops (activations only)

and once pair_cosine_fp32 / _fp16 (--pairs pairs, d = --dim; peers: gather +
einsum in torch and in CuPy, fp16 rows upcast after the gather), and mask_apply_fp32 /
_fp16 (the citation mask on --mask-batch rows of --vocab logits, in place; peer: torch
unpacking the bits on the device, then masked_fill_). Every result of
ours is compared with the CPU kernels' (max_abs_err); a set of smaller checks
(int64 indices, batch widths, thresholds, spread retries, strided rows, torch
inputs) runs first. Times are medians of --repeats runs after warm-up, measured
with CUDA events around the public Python call (validation included).

Prints one table; with $OUT set (or --json-out) also writes the JSON
{"device", "copy_gbps", "checks", "rows"}. Exit status 1 when a check fails.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
import traceback

import numpy as np

T0 = time.perf_counter()
DECAY, EDGE_T, NODE_T, STEPS = 0.5, 0.1, 1e-4, 2
SPREAD_DEPTH, SPREAD_DECAY, SPREAD_RESTART = 2, 0.5, 1.0


def log(msg: str) -> None:
    print(f"[gpu_check {time.perf_counter() - T0:6.1f}s] {msg}", flush=True)


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--nodes", type=int, default=1_000_000)
    p.add_argument("--small-nodes", type=int, default=20_000)
    p.add_argument("--degree", type=int, default=10)
    p.add_argument("--queries", type=int, default=1000)
    p.add_argument("--seeds", type=int, default=20)
    p.add_argument("--pairs", type=int, default=100_000)
    p.add_argument("--dim", type=int, default=384)
    p.add_argument("--claims", type=int, default=1000)
    p.add_argument("--units", type=int, default=500_000)
    p.add_argument("--mask-batch", type=int, default=256, help="rows of logits for mask_apply")
    p.add_argument("--vocab", type=int, default=151_936, help="logits a row for mask_apply (Qwen's vocabulary)")
    p.add_argument("--repeats", type=int, default=15)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--json-out", default=None, help="JSON path (default: $OUT/gpu_check.json when $OUT is set)")
    return p.parse_args(argv)


# ---- inputs ---------------------------------------------------------------------


def make_graph(n, degree, rng):
    nnz = n * degree
    indptr = np.arange(0, nnz + 1, degree, dtype=np.int32)
    indices = rng.integers(0, n, size=nnz, dtype=np.int32)
    indices.reshape(n, degree).sort(axis=1)
    weights = np.float32(1.0) - rng.random(nnz, dtype=np.float32)  # (0, 1]
    return indptr, indices, weights


def make_seeds(n, queries, seeds, rng):
    """Distinct seeds per query (so seed sums are exact and results comparable bit for bit)."""
    nodes = np.stack([rng.choice(n, seeds, replace=False) for _ in range(queries)])
    scores = np.float32(1.0) - rng.random((queries, seeds), dtype=np.float32)
    ptr = np.arange(0, queries * seeds + 1, seeds, dtype=np.int64)
    return ptr, nodes.reshape(-1).astype(np.int32), scores.reshape(-1)


# ---- timing ---------------------------------------------------------------------


class Timer:
    """Median of CUDA-event times around fn() (on the legacy default stream,
    which CuPy and torch use unless told otherwise, so it also orders their work)."""

    def __init__(self, cp, repeats):
        self.cp, self.repeats = cp, repeats

    def __call__(self, fn, warmup=2):
        cp = self.cp
        for _ in range(warmup):
            fn()
        cp.cuda.Device().synchronize()
        times = []
        for _ in range(self.repeats):
            start, end = cp.cuda.Event(), cp.cuda.Event()
            start.record()
            fn()
            end.record()
            end.synchronize()
            times.append(cp.cuda.get_elapsed_time(start, end))
        cp.cuda.Device().synchronize()
        return float(np.median(times))


def copy_bandwidth(cp, timer):
    a = cp.ones(256 << 18, dtype=cp.float32)  # 256 MiB
    b = cp.empty_like(a)
    ms = timer(lambda: cp.copyto(b, a))
    return 2 * a.nbytes / (ms * 1e-3) / 1e9


# ---- checks -----------------------------------------------------------------------


class Checks:
    def __init__(self):
        self.items = []

    def run(self, name, fn):
        try:
            detail = fn()
            self.items.append({"name": name, "ok": True, "detail": detail})
            log(f"check {name}: ok {detail or ''}")
        except Exception as exc:  # keep going: one run, no second chance
            self.items.append({"name": name, "ok": False, "detail": f"{type(exc).__name__}: {exc}"})
            log(f"check {name}: FAILED\n{traceback.format_exc()}")

    @property
    def failed(self):
        return [c["name"] for c in self.items if not c["ok"]]


def spread_by_key(res, n):
    """(keys sorted, activation, hop, strength, predecessor) of a CPU SpreadResult."""
    q = np.repeat(np.arange(len(res.ptr) - 1, dtype=np.int64), np.diff(res.ptr))
    key = q * n + res.node.astype(np.int64)
    order = np.argsort(key, kind="stable")
    return key[order], res.activation[order], res.hop[order], res.strength[order], res.predecessor[order]


def compare_spread(got, want, n):
    """Max activation error; raises if node sets, hops, strengths or predecessors differ."""
    gk, ga, gh, gs, gp = spread_by_key(got, n)
    wk, wa, wh, ws, wp = spread_by_key(want, n)
    np.testing.assert_array_equal(got.ptr, want.ptr, err_msg="per-query counts differ")
    np.testing.assert_array_equal(gk, wk, err_msg="reached nodes differ")
    np.testing.assert_array_equal(gh, wh, err_msg="hops differ")
    np.testing.assert_array_equal(gs, ws, err_msg="strengths differ")
    np.testing.assert_array_equal(gp, wp, err_msg="predecessors differ")
    if got.edges_touched != want.edges_touched:
        raise AssertionError(f"edges_touched {got.edges_touched} != {want.edges_touched}")
    np.testing.assert_allclose(ga, wa, rtol=1e-5, atol=1e-6)
    return float(np.max(np.abs(ga - wa), initial=0.0))


def small_checks(ak, cuda, cp, torch, checks, rng):
    """Cheap cases the big rows do not cover (tests/kernels/test_cuda.py has the full set)."""
    n = 3000
    deg = rng.integers(0, 12, n)
    deg[rng.random(n) < 0.2] = 0
    ip = np.zeros(n + 1, np.int64)
    np.cumsum(deg, out=ip[1:])
    ix = rng.integers(0, n, int(ip[-1]))
    w = rng.uniform(0.05, 1, ix.size).astype(np.float32)
    w[rng.random(ix.size) < 0.1] = 0
    dyadic = (rng.integers(1, 9, ix.size) / 8).astype(np.float32)

    for dtype in (np.int32, np.int64):
        g_cpu = ak.CSRGraph(ip, ix.astype(dtype), w)
        g = cuda.CSRGraph(cp.asarray(ip), cp.asarray(ix.astype(dtype)), cp.asarray(w))

        def transpose(g=g, g_cpu=g_cpu):
            t, want = g.transpose(), g_cpu.transpose()
            for a, b in ((t.indptr, want.indptr), (t.indices, want.indices), (t.weights, want.weights)):
                np.testing.assert_array_equal(cp.asnumpy(a), b)
        checks.run(f"transpose_{np.dtype(dtype).name}", transpose)

        for b in (None, 1, 3, 16, 64, 130):
            def diffuse(b=b, g=g, g_cpu=g_cpu):
                shape = (n,) if b is None else (n, b)
                x = rng.random(shape, dtype=np.float32)
                p = rng.random(shape, dtype=np.float32)
                kw = dict(steps=3, decay=0.7, restart=0.3, edge_threshold=0.2, node_threshold=0.01)
                want = ak.diffuse(g_cpu, x, personalization=p, **kw)
                got = cp.asnumpy(cuda.diffuse(g, cp.asarray(x), personalization=cp.asarray(p), **kw))
                near = np.abs(want - 0.01) < 1e-5
                np.testing.assert_allclose(got[~near], want[~near], rtol=1e-4, atol=1e-5)
                return f"max_abs_err {np.max(np.abs(got - want)):.2e}"
            checks.run(f"diffuse_{np.dtype(dtype).name}_b{b}", diffuse)

    g_cpu = ak.CSRGraph(ip, ix, dyadic)
    g = cuda.CSRGraph(cp.asarray(ip), cp.asarray(ix), cp.asarray(dyadic))
    q = 200
    counts = rng.integers(0, 30, q)
    sp = np.zeros(q + 1, np.int64)
    np.cumsum(counts, out=sp[1:])
    sn = rng.integers(0, n, int(sp[-1]))  # duplicates add up
    ss = (rng.integers(0, 9, sn.size) / 8).astype(np.float32)
    for capacity in (None, 2, 64):
        for depth, restart, et, nt in ((0, 1.0, 0.0, 0.0), (2, 1.0, 0.0, 0.0), (3, 0.5, 0.25, 0.0625)):
            def spread(capacity=capacity, depth=depth, restart=restart, et=et, nt=nt):
                # Multiples of 1/8: every sum is exact, so everything must agree exactly.
                kw = dict(depth=depth, decay=0.5, restart=restart, edge_threshold=et, node_threshold=nt)
                want = ak.spread(g_cpu, sp, sn, ss, **kw)
                got = cuda.spread(g, cp.asarray(sp), cp.asarray(sn), cp.asarray(ss), capacity=capacity, **kw)
                err = compare_spread(got.to_cpu(), want, n)
                if err != 0.0:
                    raise AssertionError(f"activation differs by {err} on exact inputs")
                return f"{int(want.ptr[-1])} reached"
            checks.run(f"spread_exact_cap{capacity}_depth{depth}_nt{nt}", spread)

    def pair_strided():
        big = rng.standard_normal((300, 400)).astype(np.float32)
        ci, ui = rng.integers(0, 100, 5000), rng.integers(0, 200, 5000)
        dev = cp.asarray(big)
        out = {}
        for label, (c, u, dc, du) in {
            "aligned_ld400": (big[:100, :384], big[100:, :384], dev[:100, :384], dev[100:, :384]),
            "misaligned": (big[:100, 1:385], big[100:, 3:387], dev[:100, 1:385], dev[100:, 3:387]),
            "fp16_d17": (big[:100, :17].astype(np.float16), big[100:, :17],
                         cp.asarray(big[:100, :17].astype(np.float16)), dev[100:, :17]),
        }.items():
            want = ak.pair_cosine(c, u, ci, ui)
            got = cp.asnumpy(cuda.pair_cosine(dc, du, cp.asarray(ci), cp.asarray(ui)))
            np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)
            out[label] = float(np.max(np.abs(got - want)))
        return " ".join(f"{k} {v:.1e}" for k, v in out.items())
    checks.run("pair_cosine_strided", pair_strided)

    def bad_input_raises():
        for args, match in (((ip, ix, -w), "weights contains negative"),
                            ((ip, ix + n, w), "indices holds index")):
            try:
                cuda.CSRGraph(*(cp.asarray(a) for a in args))
            except ValueError as exc:
                assert match in str(exc), exc
            else:
                raise AssertionError(f"no ValueError for {match}")
        try:
            cuda.spread(g, cp.asarray(sp), cp.asarray(sn), cp.asarray(ss), depth=-1)
        except ValueError as exc:
            assert "depth" in str(exc)
        else:
            raise AssertionError("no ValueError for depth=-1")
    checks.run("bad_input_raises_value_error", bad_input_raises)

    if torch is not None:
        def torch_inputs():
            tg = cuda.CSRGraph(torch.as_tensor(ip, device="cuda"), torch.as_tensor(ix, device="cuda"),
                               torch.as_tensor(w, device="cuda"))
            x = rng.random((n, 4), dtype=np.float32)
            got = cuda.diffuse(tg, torch.as_tensor(x, device="cuda"), steps=2, decay=0.5)
            assert isinstance(got, torch.Tensor) and got.is_cuda
            want = ak.diffuse(ak.CSRGraph(ip, ix, w), x, steps=2, decay=0.5)
            np.testing.assert_allclose(got.cpu().numpy(), want, rtol=1e-5, atol=1e-6)
            res = cuda.spread(tg, torch.as_tensor(sp, device="cuda"), torch.as_tensor(sn, device="cuda"),
                              torch.as_tensor(ss, device="cuda"))
            assert isinstance(res.node, torch.Tensor)
            compare_spread(res.to_cpu(), ak.spread(ak.CSRGraph(ip, ix, w), sp, sn, ss), n)
            c = torch.randn(50, 384, device="cuda", dtype=torch.float16)
            u = torch.randn(70, 384, device="cuda")
            ci = torch.randint(0, 50, (999,), device="cuda", dtype=torch.int32)
            ui = torch.randint(0, 70, (999,), device="cuda", dtype=torch.int32)
            got = cuda.pair_cosine(c, u, ci, ui).cpu().numpy()
            want = ak.pair_cosine(c.cpu().numpy(), u.cpu().numpy(), ci.cpu().numpy(), ui.cpu().numpy())
            np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)
        checks.run("torch_inputs_and_outputs", torch_inputs)


# ---- peers ------------------------------------------------------------------------


def cupy_frontier(cp, ip, ix, w, n, seed_q, seed_nodes, seed_scores, depth, decay, restart, et, nt):
    """The spread rule for a whole batch with CuPy ops, activations only:
    (query * n + node) keys; per step expand the active keys' edges, then
    sum per key by sort + unique + scatter_add."""
    import cupyx

    keys = seed_q * n + seed_nodes
    seed_keys, inv = cp.unique(keys, return_inverse=True)
    seed_val = cp.zeros(seed_keys.size, cp.float32)
    cupyx.scatter_add(seed_val, inv.ravel(), seed_scores)
    cur_k, cur_v = seed_keys, seed_val
    for _ in range(depth):
        act = cur_v > 0
        ak_, av = cur_k[act], cur_v[act]
        if ak_.size == 0:
            break
        u = ak_ % n
        q = ak_ // n
        beg = ip[u].astype(cp.int64)
        deg = ip[u + 1].astype(cp.int64) - beg
        ends = cp.cumsum(deg)
        total = int(ends[-1])
        pos = cp.arange(total, dtype=cp.int64)
        owner = cp.searchsorted(ends, pos, side="right")
        e = beg[owner] + pos - (ends[owner] - deg[owner])
        we = w[e]
        keep = (we >= et) & (we != 0)
        owner, e, we = owner[keep], e[keep], we[keep]
        tk = q[owner] * n + ix[e].astype(cp.int64)
        tv = we * (decay * av[owner])
        all_k = cp.concatenate([tk, seed_keys])
        all_v = cp.concatenate([tv, restart * seed_val])
        cur_k, inv = cp.unique(all_k, return_inverse=True)
        cur_v = cp.zeros(cur_k.size, cp.float32)
        cupyx.scatter_add(cur_v, inv.ravel(), all_v)
        cur_v[cur_v < nt] = 0
    return cur_k, cur_v


# ---- rows ---------------------------------------------------------------------------


def graph_rows(ak, cuda, cp, torch, timer, args, n, suffix, rng, checks):
    import cupyx.scipy.sparse as csp

    log(f"graph{suffix}: {n:,} nodes x {args.degree} out-edges")
    ip, ix, w = make_graph(n, args.degree, rng)
    g_cpu = ak.CSRGraph(ip, ix, w)
    t = time.perf_counter()
    g = cuda.CSRGraph(cp.asarray(ip), cp.asarray(ix), cp.asarray(w))
    g.transpose()
    cp.cuda.Device().synchronize()
    log(f"graph{suffix}: uploaded, validated and transposed on the GPU in {1e3 * (time.perf_counter() - t):.1f} ms")
    # Copies: eliminate_zeros compacts the index arrays in place, and they must not be ours.
    A = csp.csr_matrix((cp.where(g.weights >= EDGE_T, g.weights, 0), g.indices.copy(), g.indptr.copy()),
                       shape=(n, n))
    A.eliminate_zeros()
    AT = A.T.tocsr()  # the peers' best form, built outside timing
    AT_t = None
    if torch is not None:
        try:
            AT_t = torch.sparse_csr_tensor(torch.from_dlpack(AT.indptr), torch.from_dlpack(AT.indices),
                                           torch.from_dlpack(AT.data), size=(n, n))
        except Exception as exc:
            log(f"torch sparse CSR unavailable: {exc}")
    nnz = ix.size
    rows = []
    for b in (1, 16):
        name = f"diffuse_b{b}{suffix}"
        shape = (n,) if b == 1 else (n, b)
        x = rng.random(shape, dtype=np.float32)
        xd = cp.asarray(x)
        kw = dict(steps=STEPS, decay=DECAY, edge_threshold=EDGE_T, node_threshold=NODE_T)
        t = time.perf_counter()
        want = ak.diffuse(g_cpu, x, **kw)
        cpu_ms = 1e3 * (time.perf_counter() - t)
        ours = cuda.diffuse(g, xd, **kw)
        got = cp.asnumpy(ours)
        err = float(np.max(np.abs(got - want)))
        near = np.abs(want - NODE_T) < 1e-5
        checks.run(f"{name}_vs_cpu", lambda: np.testing.assert_allclose(
            got[~near], want[~near], rtol=1e-4, atol=1e-6) or f"max_abs_err {err:.2e}")
        ours_ms = timer(lambda: cuda.diffuse(g, xd, **kw))
        # One step reads the transpose (indptr, indices, weights), x once per in-edge
        # row (at best once overall) and writes out: the minimum traffic.
        nbytes = STEPS * ((n + 1) * 4 + nnz * 8 + 2 * n * b * 4)

        def cusparse():
            y = xd
            for _ in range(STEPS):
                y = AT @ y
                y *= DECAY
                y[y < NODE_T] = 0
            return y
        peer = cp.asnumpy(cusparse())
        peer_err = float(np.max(np.abs(peer - want)))
        rows.append(dict(name=name, ours_ms=ours_ms, peer="cupyx.scipy.sparse (cuSPARSE)",
                         peer_ms=timer(cusparse), max_abs_err=err, peer_max_abs_err=peer_err,
                         cpu_ms=cpu_ms, gbps=nbytes / (ours_ms * 1e-3) / 1e9))
        if AT_t is not None:
            xt = torch.from_dlpack(xd).reshape(n, b)

            def torch_sparse():
                y = xt
                for _ in range(STEPS):
                    y = AT_t @ y
                    y = y * DECAY
                    y = torch.where(y < NODE_T, torch.zeros_like(y), y)
                return y
            try:
                peer = torch_sparse().cpu().numpy().reshape(shape)
                rows.append(dict(name=name, ours_ms=ours_ms, peer="torch.sparse_csr matmul",
                                 peer_ms=timer(torch_sparse), max_abs_err=err,
                                 peer_max_abs_err=float(np.max(np.abs(peer - want))), cpu_ms=cpu_ms,
                                 gbps=nbytes / (ours_ms * 1e-3) / 1e9))
            except Exception as exc:
                log(f"{name}: torch peer failed: {exc}")

    name = f"spread{suffix}"
    sp, sn, ss = make_seeds(n, args.queries, args.seeds, rng)
    kw = dict(depth=SPREAD_DEPTH, decay=SPREAD_DECAY, restart=SPREAD_RESTART)
    t = time.perf_counter()
    want = ak.spread(g_cpu, sp, sn, ss, **kw)
    cpu_ms = 1e3 * (time.perf_counter() - t)
    spd, snd, ssd = cp.asarray(sp), cp.asarray(sn), cp.asarray(ss)
    res = cuda.spread(g, spd, snd, ssd, **kw)
    box = {}

    def spread_check():
        box["err"] = compare_spread(res.to_cpu(), want, n)
        return f"{int(want.ptr[-1]):,} reached, max_abs_err {box['err']:.2e}"
    checks.run(f"{name}_vs_cpu", spread_check)
    ours_ms = timer(lambda: cuda.spread(g, spd, snd, ssd, **kw))
    seed_q = cp.asarray(np.repeat(np.arange(args.queries, dtype=np.int64), args.seeds))
    snd64 = snd.astype(cp.int64)

    def frontier():
        return cupy_frontier(cp, g.indptr, g.indices, g.weights, n, seed_q, snd64, ssd, SPREAD_DEPTH,
                             SPREAD_DECAY, SPREAD_RESTART, 0.0, 0.0)
    pk, pv = frontier()
    wk, wa = spread_by_key(want, n)[:2]
    nz = wa > 0
    peer_err = (float(np.max(np.abs(cp.asnumpy(pv[pv > 0]) - wa[nz])))
                if int((pv > 0).sum()) == int(nz.sum()) else float("nan"))
    rows.append(dict(name=name, ours_ms=ours_ms, peer="CuPy frontier (activations only)",
                     peer_ms=timer(frontier), max_abs_err=box.get("err", float("nan")),
                     peer_max_abs_err=peer_err, cpu_ms=cpu_ms,
                     us_per_query=1e3 * ours_ms / args.queries, edges_touched=int(res.edges_touched)))
    del A, AT, AT_t
    return rows


def pair_rows(ak, cuda, cp, torch, timer, args, rng, checks):
    d, m, u, p = args.dim, args.claims, args.units, args.pairs
    log(f"pair_cosine: claims {m} x {d}, units {u:,} x {d}, {p:,} pairs")
    C = rng.standard_normal((m, d), dtype=np.float32)
    U = rng.standard_normal((u, d), dtype=np.float32)
    ci = rng.integers(0, m, p, dtype=np.int64)
    ui = rng.integers(0, u, p, dtype=np.int64)
    cid, uid = cp.asarray(ci), cp.asarray(ui)
    rows = []
    for label, dt in (("fp32", np.float32), ("fp16", np.float16)):
        name = f"pair_cosine_{label}"
        Cx, Ux = C.astype(dt), U.astype(dt)
        Cd, Ud = cp.asarray(Cx), cp.asarray(Ux)
        t = time.perf_counter()
        want = ak.pair_cosine(Cx, Ux, ci, ui)
        cpu_ms = 1e3 * (time.perf_counter() - t)
        got = cp.asnumpy(cuda.pair_cosine(Cd, Ud, cid, uid))
        err = float(np.max(np.abs(got - want)))
        checks.run(f"{name}_vs_cpu", lambda: np.testing.assert_allclose(
            got, want, rtol=1e-4, atol=1e-5) or f"max_abs_err {err:.2e}")
        ours_ms = timer(lambda: cuda.pair_cosine(Cd, Ud, cid, uid))
        pre_ms = timer(lambda: cuda.pair_cosine(Cd, Ud, cid, uid, prenormalized=True))
        nbytes = 2 * p * d * np.dtype(dt).itemsize + ci.nbytes + ui.nbytes + p * 4
        up = "" if label == "fp32" else " (fp32 upcast)"

        def cupy_peer():
            a = Cd[cid].astype(cp.float32, copy=False)
            b = Ud[uid].astype(cp.float32, copy=False)
            dot = cp.einsum("ij,ij->i", a, b)
            den = cp.linalg.norm(a, axis=1) * cp.linalg.norm(b, axis=1)
            return cp.where(den > 0, dot / cp.where(den > 0, den, 1), 0)
        peer = cp.asnumpy(cupy_peer())
        rows.append(dict(name=name, ours_ms=ours_ms, peer="CuPy gather + einsum" + up,
                         peer_ms=timer(cupy_peer), max_abs_err=err,
                         peer_max_abs_err=float(np.max(np.abs(peer - want))), cpu_ms=cpu_ms,
                         gbps=nbytes / (ours_ms * 1e-3) / 1e9, ours_prenorm_ms=pre_ms))
        if torch is not None:
            Ct, Ut = torch.from_dlpack(Cd), torch.from_dlpack(Ud)
            cit, uit = torch.from_dlpack(cid), torch.from_dlpack(uid)

            def torch_peer():
                a = Ct[cit].float()
                b = Ut[uit].float()
                dot = torch.einsum("ij,ij->i", a, b)
                den = a.norm(dim=1) * b.norm(dim=1)
                return torch.where(den > 0, dot / den.clamp_min(1e-30), torch.zeros_like(dot))
            peer = torch_peer().cpu().numpy()
            rows.append(dict(name=name, ours_ms=ours_ms, peer="torch gather + einsum" + up,
                             peer_ms=timer(torch_peer), max_abs_err=err,
                             peer_max_abs_err=float(np.max(np.abs(peer - want))), cpu_ms=cpu_ms,
                             gbps=nbytes / (ours_ms * 1e-3) / 1e9, ours_prenorm_ms=pre_ms))
    return rows


def mask_rows(cuda, cp, torch, timer, args, rng, checks):
    """The citation mask applied in place to a batch of logits; peer: torch unpacking the bits on the
    device and ``masked_fill_`` (what a serving stack without a kernel of its own does)."""
    from asmr_kernels.cpu import apply_token_bitmask as cpu_apply

    b, vocab = args.mask_batch, args.vocab
    words = (vocab + 31) // 32
    log(f"mask_apply: {b} rows x {vocab:,} logits")
    mask = rng.integers(-2**31, 2**31, size=(b, words), dtype=np.int64).astype(np.int32)
    logits = rng.standard_normal((b, vocab), dtype=np.float32)
    t = time.perf_counter()
    want = logits.copy()
    cpu_apply(want, mask)
    cpu_ms = 1e3 * (time.perf_counter() - t)
    mask_d = cp.asarray(mask)
    rows = []
    for label, dt in (("fp32", np.float32), ("fp16", np.float16)):
        name = f"mask_apply_{label}"
        expect = want.astype(dt)
        work = cp.asarray(logits.astype(dt))
        cuda.apply_token_bitmask(work, mask_d)
        got = cp.asnumpy(work)
        checks.run(f"{name}_vs_cpu", lambda: np.testing.assert_array_equal(got, expect))
        err = 0.0 if np.array_equal(got, expect) else float("inf")  # -inf where masked: equal or not
        ours_ms = timer(lambda: cuda.apply_token_bitmask(work, mask_d))  # masking twice changes nothing
        nbytes = 2 * work.nbytes + mask.nbytes
        if torch is None:
            continue
        t_logits = torch.from_dlpack(cp.asarray(logits.astype(dt)))
        t_mask = torch.from_dlpack(mask_d)
        shifts = torch.arange(32, device=t_mask.device, dtype=torch.int32)

        def torch_peer():
            allowed = ((t_mask.unsqueeze(-1) >> shifts) & 1).bool().reshape(b, -1)[:, :vocab]
            t_logits.masked_fill_(~allowed, float("-inf"))
        torch_peer()
        peer_ok = np.array_equal(t_logits.cpu().numpy(), expect)
        rows.append(dict(name=name, ours_ms=ours_ms, peer="torch bit unpack + masked_fill_",
                         peer_ms=timer(torch_peer), max_abs_err=err, peer_max_abs_err=0.0 if peer_ok else float("inf"),
                         cpu_ms=cpu_ms, gbps=nbytes / (ours_ms * 1e-3) / 1e9))
    return rows


def render(device, copy_gbps, rows, checks):
    head = ["name", "ours_ms", "peer", "peer_ms", "speedup", "max_abs_err", "ours_GB/s", "cpu_ms"]
    table = [head]
    for r in rows:
        table.append([r["name"], f"{r['ours_ms']:.3f}", r["peer"], f"{r['peer_ms']:.3f}",
                      f"{r['speedup']:.2f}x", f"{r['max_abs_err']:.1e}",
                      f"{r['gbps']:.0f}" if r.get("gbps") else "-", f"{r['cpu_ms']:.1f}"])
    widths = [max(len(row[i]) for row in table) for i in range(len(head))]
    lines = [f"device: {device}; copy bandwidth {copy_gbps:.0f} GB/s; times are medians (ms)"]
    for k, row in enumerate(table):
        lines.append("  ".join(c.ljust(widths[i]) if i in (0, 2) else c.rjust(widths[i])
                               for i, c in enumerate(row)))
        if k == 0:
            lines.append("  ".join("-" * wd for wd in widths))
    for r in rows:
        if r["name"].startswith("spread"):
            lines.append(f"{r['name']}: {r['us_per_query']:.2f} us per query over the batch, "
                         f"{r['edges_touched']:,} edges touched")
    failed = checks.failed
    lines.append(f"checks: {len(checks.items) - len(failed)} passed, {len(failed)} failed"
                 + (f" ({', '.join(failed)})" if failed else ""))
    return "\n".join(lines)


def main(argv=None) -> int:
    args = parse_args(argv)
    import asmr_kernels as ak
    from asmr_kernels import cuda

    if not cuda.is_available():
        print(f"CUDA backend unavailable: {cuda.unavailable_reason()}", flush=True)
        return 2
    import cupy as cp

    try:
        import torch

        if not torch.cuda.is_available():
            torch = None
    except Exception as exc:
        log(f"torch unavailable: {exc}")
        torch = None
    info = cuda.device_info(0)
    props = cp.cuda.runtime.getDeviceProperties(0)
    device = f"{props['name'].decode() if isinstance(props['name'], bytes) else props['name']} " \
             f"(cc {info['compute_capability'][0]}.{info['compute_capability'][1]}, " \
             f"{info['multiprocessors']} SMs, runtime {info['runtime_version']}, driver {info['driver_version']})"
    log(f"device: {device}; CuPy {cp.__version__}; torch {torch.__version__ if torch else 'absent'}; "
        f"CPU threads {ak.max_threads()}")
    timer = Timer(cp, args.repeats)
    checks = Checks()
    rng = np.random.default_rng(args.seed)
    copy_gbps = copy_bandwidth(cp, timer)
    log(f"copy bandwidth {copy_gbps:.0f} GB/s")
    log("small checks")
    small_checks(ak, cuda, cp, torch, checks, rng)
    rows = []
    for n, suffix in ((args.nodes, ""), (args.small_nodes, "_small")):
        try:
            rows += graph_rows(ak, cuda, cp, torch, timer, args, n, suffix, rng, checks)
        except Exception:
            checks.items.append({"name": f"graph_rows{suffix}", "ok": False, "detail": traceback.format_exc()})
            log(f"graph rows{suffix} FAILED\n{traceback.format_exc()}")
        cp.get_default_memory_pool().free_all_blocks()
    try:
        rows += pair_rows(ak, cuda, cp, torch, timer, args, rng, checks)
    except Exception:
        checks.items.append({"name": "pair_rows", "ok": False, "detail": traceback.format_exc()})
        log(f"pair rows FAILED\n{traceback.format_exc()}")
    try:
        rows += mask_rows(cuda, cp, torch, timer, args, rng, checks)
    except Exception:
        checks.items.append({"name": "mask_rows", "ok": False, "detail": traceback.format_exc()})
        log(f"mask rows FAILED\n{traceback.format_exc()}")
    for r in rows:
        r["speedup"] = r["peer_ms"] / r["ours_ms"]
    print(render(device, copy_gbps, rows, checks), flush=True)
    out = args.json_out or (os.path.join(os.environ["OUT"], "gpu_check.json") if os.environ.get("OUT") else None)
    if out:
        with open(out, "w") as f:
            json.dump({"device": device, "copy_gbps": copy_gbps, "params": vars(args),
                       "checks": checks.items, "rows": rows}, f, indent=1, default=float)
        log(f"wrote {out}")
    return 1 if checks.failed else 0


if __name__ == "__main__":
    sys.exit(main())
