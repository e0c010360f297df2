"""The CUDA kernels against the CPU kernels, and their input checks.

Skips as a whole, with the reason, when the CUDA backend is unavailable (built
without CUDA, no device, neither CuPy nor torch); tests/kernels/test_cuda_unavailable.py
covers that case. Each test runs once per installed framework (CuPy, torch).
"""

import importlib.util

import numpy as np
import pytest

ak = pytest.importorskip("asmr_kernels", reason="asmr_kernels is not built")
from asmr_kernels import cuda  # noqa: E402  (never fails, even without CUDA)

if not cuda.is_available():
    pytest.skip(f"CUDA backend unavailable: {cuda.unavailable_reason()}", allow_module_level=True)


# ---- frameworks ---------------------------------------------------------------------


class Torch:
    name = "torch"

    def __init__(self):
        import torch

        self.torch = torch

    def dev(self, a):
        return self.torch.as_tensor(np.ascontiguousarray(a), device="cuda")

    def host(self, a):
        return a.detach().cpu().numpy()

    def is_native(self, a):
        return isinstance(a, self.torch.Tensor) and a.is_cuda


class Cupy:
    name = "cupy"

    def __init__(self):
        import cupy

        self.cp = cupy

    def dev(self, a):
        return self.cp.asarray(np.asarray(a))

    def host(self, a):
        return self.cp.asnumpy(a)

    def is_native(self, a):
        return isinstance(a, self.cp.ndarray)


@pytest.fixture(params=["cupy", "torch"])
def fw(request):
    if importlib.util.find_spec(request.param) is None:
        pytest.skip(f"{request.param} is not installed")
    if request.param == "torch":
        t = Torch()
        if not t.torch.cuda.is_available():
            pytest.skip("torch has no CUDA device")
        return t
    return Cupy()


# ---- inputs -------------------------------------------------------------------------


def random_graph(rng, n, max_degree=8, *, dtype=np.int64, dyadic=False, zero_frac=0.1):
    """Out-edge CSR with empty rows, self-loops, duplicate and zero-weight edges."""
    deg = rng.integers(0, max_degree + 1, n)
    deg[rng.random(n) < 0.2] = 0  # empty rows
    indptr = np.zeros(n + 1, np.int64)
    np.cumsum(deg, out=indptr[1:])
    nnz = int(indptr[-1])
    indices = rng.integers(0, n, nnz)
    rows = np.repeat(np.arange(n), deg)
    loops = rng.random(nnz) < 0.05
    indices[loops] = rows[loops]  # self-loops
    if nnz > 2:
        dup = rng.random(nnz) < 0.1  # duplicates of the previous edge of the same row
        dup[0] = False
        same_row = np.r_[False, rows[1:] == rows[:-1]]
        indices[dup & same_row] = indices[np.flatnonzero(dup & same_row) - 1]
    if dyadic:  # multiples of 1/8: sums in any order are exact in float32
        weights = rng.integers(1, 9, nnz).astype(np.float32) / 8
    else:
        weights = rng.uniform(0.05, 1.0, nnz).astype(np.float32)
    weights[rng.random(nnz) < zero_frac] = 0.0
    return indptr.astype(dtype), indices.astype(dtype), weights


def random_seeds(rng, n, q, max_seeds=6, *, dyadic=False, unique=False):
    counts = rng.integers(0, max_seeds + 1, q)
    ptr = np.zeros(q + 1, np.int64)
    np.cumsum(counts, out=ptr[1:])
    if unique:
        nodes = np.concatenate([rng.choice(n, c, replace=False) for c in counts] + [np.zeros(0, np.int64)])
    else:
        nodes = rng.integers(0, n, int(ptr[-1]))  # duplicates add up
    if dyadic:
        scores = rng.integers(0, 9, nodes.size).astype(np.float32) / 8
    else:
        scores = rng.uniform(0.1, 1.0, nodes.size).astype(np.float32)
    return ptr, nodes.astype(np.int64), scores


def device_graph(fw, indptr, indices, weights):
    return cuda.CSRGraph(fw.dev(indptr), fw.dev(indices), fw.dev(weights))


# ---- graph and transpose ------------------------------------------------------------


@pytest.mark.parametrize("dtype", [np.int32, np.int64])
@pytest.mark.parametrize("n", [1, 7, 300])
def test_transpose_matches_cpu_exactly(fw, dtype, n):
    rng = np.random.default_rng(n)
    ip, ix, w = random_graph(rng, n, dtype=dtype)
    g = device_graph(fw, ip, ix, w)
    assert g.num_nodes == n and g.num_edges == ix.size and g.index_dtype == np.dtype(dtype)
    t = g.transpose()
    want = ak.CSRGraph(ip, ix, w).transpose()
    np.testing.assert_array_equal(fw.host(t.indptr), want.indptr)
    np.testing.assert_array_equal(fw.host(t.indices), want.indices)  # stable: source order kept
    np.testing.assert_array_equal(fw.host(t.weights), want.weights)
    assert g.transpose() is t and t.transpose() is g


def test_graph_from_cpu_and_sparse_inputs(fw):
    rng = np.random.default_rng(5)
    ip, ix, w = random_graph(rng, 50)
    cpu_graph = ak.CSRGraph(ip, ix, w)
    x = rng.random(50, dtype=np.float32)
    want = ak.diffuse(cpu_graph, x, steps=2, decay=0.5)
    for graph in (cuda.CSRGraph.from_cpu(cpu_graph, framework=fw.name), cpu_graph,
                  (fw.dev(ip), fw.dev(ix), fw.dev(w))):
        got = cuda.diffuse(graph, fw.dev(x), steps=2, decay=0.5)
        assert fw.is_native(got)
        np.testing.assert_allclose(fw.host(got), want, rtol=1e-5, atol=1e-6)


def test_empty_graph_and_weightless_edges(fw):
    g = cuda.CSRGraph(fw.dev(np.zeros(1, np.int64)), fw.dev(np.zeros(0, np.int64)))
    assert g.num_nodes == 0 and g.num_edges == 0
    out = cuda.diffuse(g, fw.dev(np.zeros(0, np.float32)), steps=3)
    assert tuple(out.shape) == (0,)
    g = cuda.CSRGraph(fw.dev(np.array([0, 1, 2])), fw.dev(np.array([1, 0])))  # weights=None: all 1
    np.testing.assert_array_equal(fw.host(g.weights), [1.0, 1.0])


# ---- diffuse -------------------------------------------------------------------------


DIFFUSE_CASES = [
    # (b, steps, decay, restart, personalized, edge_threshold, node_threshold)
    (None, 1, 1.0, 0.0, False, 0.0, 0.0),
    (1, 2, 0.5, 0.0, False, 0.3, 0.0),
    (None, 3, 0.85, 0.15, True, 0.0, 0.05),
    (3, 2, 0.5, 1.0, False, 0.0, 0.0),
    (16, 2, 0.5, 0.0, False, 0.3, 0.01),
    (17, 1, 0.9, 0.1, True, 0.0, 0.0),
    (64, 3, 0.7, 0.3, False, 0.5, 0.02),
    (130, 2, 0.5, 0.0, False, 0.0, 0.0),
    (8, 0, 0.5, 0.5, False, 0.0, 0.0),
]


@pytest.mark.parametrize("dtype", [np.int32, np.int64])
@pytest.mark.parametrize("case", DIFFUSE_CASES)
def test_diffuse_matches_cpu(fw, dtype, case):
    b, steps, decay, restart, personalized, et, nt = case
    rng = np.random.default_rng(DIFFUSE_CASES.index(case))
    n = 500
    ip, ix, w = random_graph(rng, n, max_degree=12, dtype=dtype)
    shape = (n,) if b is None else (n, b)
    x = rng.random(shape, dtype=np.float32)
    p = rng.random(shape, dtype=np.float32) if personalized else None
    kw = dict(steps=steps, decay=decay, restart=restart, edge_threshold=et, node_threshold=nt)
    want = ak.diffuse(ak.CSRGraph(ip, ix, w), x, personalization=p, **kw)
    got = cuda.diffuse(device_graph(fw, ip, ix, w), fw.dev(x),
                       personalization=None if p is None else fw.dev(p), **kw)
    assert fw.is_native(got) and tuple(got.shape) == shape
    got = fw.host(got)
    assert got.dtype == np.float32
    near = np.abs(want - nt) < 1e-5  # either side of the node threshold is fine there
    np.testing.assert_allclose(got[~near], want[~near], rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("b", [None, 2, 4, 64])
def test_diffuse_is_exact_on_dyadic_values(fw, b):
    # Weights and values are multiples of 1/8, so any summation order is exact.
    rng = np.random.default_rng(11)
    n = 400
    ip, ix, w = random_graph(rng, n, max_degree=6, dyadic=True)
    shape = (n,) if b is None else (n, b)
    x = rng.integers(0, 9, shape).astype(np.float32) / 8
    kw = dict(steps=3, decay=0.5, restart=0.5, edge_threshold=0.25, node_threshold=0.125)
    want = ak.diffuse(ak.CSRGraph(ip, ix, w), x, **kw)
    got = fw.host(cuda.diffuse(device_graph(fw, ip, ix, w), fw.dev(x), **kw))
    np.testing.assert_array_equal(got, want)


def test_diffuse_reads_offset_views_and_host_inputs(fw):
    rng = np.random.default_rng(3)
    n, b = 200, 4
    ip, ix, w = random_graph(rng, n)
    g = device_graph(fw, ip, ix, w)
    big = rng.random((n + 1, b), dtype=np.float32)
    want = ak.diffuse(ak.CSRGraph(ip, ix, w), big[1:], steps=2, decay=0.5, restart=0.5)
    got = cuda.diffuse(g, fw.dev(big)[1:], steps=2, decay=0.5, restart=0.5)  # 16 B off alignment
    np.testing.assert_allclose(fw.host(got), want, rtol=1e-5, atol=1e-6)
    got = cuda.diffuse(g, big[1:].astype(np.float64), steps=2, decay=0.5, restart=0.5)  # host float64
    assert fw.is_native(got)
    np.testing.assert_allclose(fw.host(got), want, rtol=1e-5, atol=1e-6)


# ---- spread --------------------------------------------------------------------------


def by_query(res):
    """{q: {node: (activation, hop, strength, predecessor)}} of a CPU SpreadResult."""
    out = {}
    for q in range(len(res)):
        r = res.query(q)
        out[q] = {int(v): (float(a), int(h), float(s), int(p))
                  for v, a, h, s, p in zip(r.node, r.activation, r.hop, r.strength, r.predecessor)}
    return out


SPREAD_CASES = [
    # (depth, decay, restart, edge_threshold, node_threshold)
    (0, 0.5, 1.0, 0.0, 0.0),
    (1, 0.5, 1.0, 0.0, 0.0),
    (2, 0.5, 1.0, 0.0, 0.0),
    (2, 0.25, 0.0, 0.25, 0.0),
    (3, 0.5, 0.5, 0.0, 0.0625),
    (3, 0.5, 1.0, 0.5, 0.25),
]


@pytest.mark.parametrize("dtype", [np.int32, np.int64])
@pytest.mark.parametrize("case", SPREAD_CASES)
@pytest.mark.parametrize("q", [1, 3, 64])
def test_spread_matches_cpu_exactly_on_dyadic_values(fw, dtype, case, q):
    depth, decay, restart, et, nt = case
    rng = np.random.default_rng(q * 100 + depth)
    n = 300
    ip, ix, w = random_graph(rng, n, max_degree=5, dtype=dtype, dyadic=True)
    ptr, nodes, scores = random_seeds(rng, n, q, dyadic=True)  # duplicates and zero scores
    kw = dict(depth=depth, decay=decay, restart=restart, edge_threshold=et, node_threshold=nt)
    want = ak.spread(ak.CSRGraph(ip, ix, w), ptr, nodes.astype(dtype), scores, **kw)
    got = cuda.spread(device_graph(fw, ip, ix, w), fw.dev(ptr), fw.dev(nodes.astype(dtype)),
                      fw.dev(scores), **kw)
    assert len(got) == q and fw.is_native(got.node) and got.elapsed_ns is None
    assert got.edges_touched == want.edges_touched
    host = got.to_cpu()
    np.testing.assert_array_equal(host.ptr, want.ptr)
    assert by_query(host) == by_query(want)


@pytest.mark.parametrize("seed", range(4))
def test_spread_matches_cpu_on_random_floats(fw, seed):
    rng = np.random.default_rng(seed)
    n, q = 2000, 40
    ip, ix, w = random_graph(rng, n, max_degree=10)
    ptr, nodes, scores = random_seeds(rng, n, q, max_seeds=20, unique=True)
    kw = dict(depth=2, decay=0.5, restart=1.0)
    want = by_query(ak.spread(ak.CSRGraph(ip, ix, w), ptr, nodes, scores, **kw))
    got = by_query(cuda.spread(device_graph(fw, ip, ix, w), fw.dev(ptr), fw.dev(nodes),
                               fw.dev(scores), **kw).to_cpu())
    for qq in range(q):
        assert got[qq].keys() == want[qq].keys()  # node_threshold 0: reachability decides
        for v, (a, h, s, p) in want[qq].items():
            ga, gh, gs, gp = got[qq][v]
            # Sums may round differently; path strengths are the same products of the
            # same floats, so they and the predecessors they choose agree exactly.
            assert ga == pytest.approx(a, rel=1e-5, abs=1e-7)
            assert (gh, gs, gp) == (h, s, p)


def test_spread_overflow_is_retried_with_a_larger_table(fw):
    rng = np.random.default_rng(7)
    n = 3000
    ip, ix, w = random_graph(rng, n, max_degree=12, dyadic=True, zero_frac=0.0)
    ptr, nodes, scores = random_seeds(rng, n, 50, max_seeds=30, dyadic=True)
    kw = dict(depth=3, decay=0.5, restart=1.0)
    want = ak.spread(ak.CSRGraph(ip, ix, w), ptr, nodes, scores, **kw)
    g = device_graph(fw, ip, ix, w)
    for capacity in (2, 16, 256, None):  # 2 and 16 overflow nearly every query
        got = cuda.spread(g, fw.dev(ptr), fw.dev(nodes), fw.dev(scores), capacity=capacity, **kw)
        host = got.to_cpu()
        np.testing.assert_array_equal(host.ptr, want.ptr)
        assert by_query(host) == by_query(want)
        assert got.edges_touched == want.edges_touched


def test_spread_reaching_the_whole_graph(fw):
    # Every node reached: the retry path must end at a table that holds them all.
    n = 64
    ip = np.arange(0, n * n + 1, n)
    ix = np.tile(np.arange(n), n)
    w = np.full(n * n, 0.5, np.float32)
    want = ak.spread(ak.CSRGraph(ip, ix, w), [0, 1], [5], [1.0], depth=2)
    got = cuda.spread(device_graph(fw, ip, ix, w), [0, 1], [5], [1.0], depth=2, capacity=2)
    assert by_query(got.to_cpu()) == by_query(want)


def test_spread_empty_batches_and_isolated_seeds(fw):
    g = cuda.CSRGraph(fw.dev(np.array([0, 0, 0])), fw.dev(np.zeros(0, np.int32)),
                      fw.dev(np.zeros(0, np.float32)))
    res = cuda.spread(g, [0], [], [])
    assert len(res) == 0 and tuple(res.node.shape) == (0,)
    res = cuda.spread(g, [0, 1, 1], [1], [0.5], depth=2).to_cpu()
    assert res.ptr.tolist() == [0, 1, 1]
    assert res.node.tolist() == [1] and res.hop.tolist() == [0] and res.predecessor.tolist() == [-1]
    np.testing.assert_array_equal(res.activation, [0.5])


# ---- pair_cosine -----------------------------------------------------------------------


@pytest.mark.parametrize("d", [1, 3, 8, 17, 64, 384, 1024])
@pytest.mark.parametrize("claim_dtype", [np.float32, np.float16])
@pytest.mark.parametrize("unit_dtype", [np.float32, np.float16])
@pytest.mark.parametrize("index_dtype", [np.int32, np.int64])
def test_pair_cosine_matches_cpu(fw, d, claim_dtype, unit_dtype, index_dtype):
    rng = np.random.default_rng(d)
    claims = rng.standard_normal((20, d)).astype(claim_dtype)
    units = rng.standard_normal((33, d)).astype(unit_dtype)
    claims[0] = 0  # a zero row has cosine 0
    ci = rng.integers(0, 20, 500).astype(index_dtype)
    ui = rng.integers(0, 33, 500).astype(index_dtype)
    want = ak.pair_cosine(claims, units, ci, ui)
    got = cuda.pair_cosine(fw.dev(claims), fw.dev(units), fw.dev(ci), fw.dev(ui))
    assert fw.is_native(got) and tuple(got.shape) == (500,)
    got = fw.host(got)
    assert got.dtype == np.float32
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
    assert np.all(got[ci == 0] == 0)


def test_pair_cosine_prenormalized_and_strided_rows(fw):
    rng = np.random.default_rng(9)
    big = rng.standard_normal((40, 400)).astype(np.float32)
    c, u = big[:10, :384], big[10:, 3:387]  # row strides 400: read in place (u misaligned)
    ci, ui = rng.integers(0, 10, 300), rng.integers(0, 30, 300)
    dev_big = fw.dev(big)
    got = cuda.pair_cosine(dev_big[:10, :384], dev_big[10:, 3:387], fw.dev(ci), fw.dev(ui))
    np.testing.assert_allclose(fw.host(got), ak.pair_cosine(c, u, ci, ui), rtol=1e-5, atol=1e-6)
    cn = c / np.linalg.norm(c, axis=1, keepdims=True)
    un = u / np.linalg.norm(u, axis=1, keepdims=True)
    got = cuda.pair_cosine(fw.dev(cn), fw.dev(un), fw.dev(ci), fw.dev(ui), prenormalized=True)
    np.testing.assert_allclose(fw.host(got), ak.pair_cosine(cn, un, ci, ui, prenormalized=True),
                               rtol=1e-5, atol=1e-6)
    got = cuda.pair_cosine(fw.dev(2 * cn), fw.dev(un), fw.dev(ci[:1]), fw.dev(ui[:1]), prenormalized=True)
    assert fw.host(got)[0] == pytest.approx(float(2 * cn[ci[0]] @ un[ui[0]]), rel=1e-5, abs=1e-5)


def test_pair_cosine_empty_and_zero_width(fw):
    out = cuda.pair_cosine(fw.dev(np.ones((2, 4), np.float32)), fw.dev(np.ones((3, 4), np.float32)),
                           fw.dev(np.zeros(0, np.int64)), fw.dev(np.zeros(0, np.int64)))
    assert tuple(out.shape) == (0,)
    out = cuda.pair_cosine(fw.dev(np.ones((2, 0), np.float32)), fw.dev(np.ones((3, 0), np.float32)),
                           fw.dev(np.array([0, 1])), fw.dev(np.array([2, 0])))
    np.testing.assert_array_equal(fw.host(out), [0.0, 0.0])


# ---- bad input --------------------------------------------------------------------------

IP = np.array([0, 2, 3, 3])
IX = np.array([1, 2, 2], np.int32)
W = np.array([0.5, 1.0, 1.0], np.float32)


@pytest.mark.parametrize("args, match", [
    ((IP, np.array([1, 2, 3], np.int32), W), "indices holds index 3, out of range for 3 nodes"),
    ((IP, np.array([1, -1, 2], np.int32), W), "indices holds index -1"),
    ((IP, IX, np.array([0.5, -1.0, 1.0], np.float32)), "weights contains negative"),
    ((IP, IX, np.array([0.5, np.nan, 1.0], np.float32)), "weights contains NaN"),
    ((IP, IX, np.array([0.5, np.inf, 1.0], np.float32)), "weights contains NaN or infinite"),
    ((np.array([0, 2, 1, 3]), IX, W), "indptr must be monotone"),
    ((np.array([1, 2, 3, 3]), IX, W), "indptr must start at 0"),
    ((np.array([0, 2, 3, 4]), IX, W), "indptr ends at 4"),
    ((IP, IX, W[:2]), "weights has 2 entries"),
    ((IP, IX.astype(np.float64), W), "indices must hold integers"),
    ((IP.astype(np.float32), IX, W), "indptr must hold integers"),
    ((IP.reshape(2, 2), IX, W), "indptr must be 1-D"),
    ((np.array([], np.int64), IX, W), "indptr must have num_nodes"),
])
def test_bad_graphs(fw, args, match):
    with pytest.raises(ValueError, match=match):
        cuda.CSRGraph(*(fw.dev(a) for a in args))


@pytest.fixture
def small(fw):
    return fw, cuda.CSRGraph(fw.dev(IP), fw.dev(IX), fw.dev(W))


@pytest.mark.parametrize("kwargs, match", [
    (dict(x=np.zeros(4, np.float32)), "x has 4 rows but the graph has 3 nodes"),
    (dict(x=np.zeros((3, 2, 1), np.float32)), "x must be 1-D or 2-D"),
    (dict(x=np.array([1, np.nan, 0], np.float32)), "x contains NaN"),
    (dict(steps=-1), "steps must be >= 0"),
    (dict(decay=float("nan")), "decay must be finite"),
    (dict(decay=-0.5), "decay must be >= 0"),
    (dict(restart=0.5, personalization=np.zeros(2, np.float32)), "personalization has shape"),
    (dict(restart=0.5, personalization=np.array([0, np.inf, 0], np.float32)), "personalization contains NaN"),
    (dict(num_threads=-1), "num_threads must be >= 0"),
])
def test_bad_diffuse_arguments(small, kwargs, match):
    fw, g = small
    kw = dict(x=np.ones(3, np.float32))
    kw.update(kwargs)
    x = fw.dev(kw.pop("x"))
    if "personalization" in kw:
        kw["personalization"] = fw.dev(kw["personalization"])
    with pytest.raises(ValueError, match=match):
        cuda.diffuse(g, x, **kw)


@pytest.mark.parametrize("args, kwargs, match", [
    (([0, 1], [3], [1.0]), {}, "seed_nodes holds index 3, out of range for 3 nodes"),
    (([0, 1], [-2], [1.0]), {}, "seed_nodes holds index -2"),
    (([0, 1], [0], [-1.0]), {}, "seed_scores contains negative"),
    (([0, 1], [0], [np.nan]), {}, "seed_scores contains NaN"),
    (([0, 2], [0], [1.0]), {}, "seed_ptr ends at 2"),
    (([1, 1], [0], [1.0]), {}, "seed_ptr must start at 0"),
    (([0, 1, 0, 1], [0], [1.0]), {}, "seed_ptr must be monotone"),
    (([0, 1], [0], [1.0, 2.0]), {}, "seed_scores has 2 entries"),
    (([0, 1], [0.5], [1.0]), {}, "seed_nodes must hold integers"),
    (([0, 1], [0], [1.0]), dict(depth=-1), "depth must be >= 0"),
    (([0, 1], [0], [1.0]), dict(decay=float("inf")), "decay must be finite"),
])
def test_bad_spread_arguments(small, args, kwargs, match):
    fw, g = small
    ptr, nodes, scores = (fw.dev(np.asarray(a)) for a in args)
    with pytest.raises(ValueError, match=match):
        cuda.spread(g, ptr, nodes, scores, **kwargs)


@pytest.mark.parametrize("args, match", [
    ((np.zeros((2, 4)), np.zeros((3, 5)), [0], [0]), "claims has rows of 4 values but units has rows of 5"),
    ((np.zeros((2, 4)), np.zeros((3, 4)), [2], [0]), "claim_idx holds index 2, out of range for 2 claim rows"),
    ((np.zeros((2, 4)), np.zeros((3, 4)), [0], [-1]), "unit_idx holds index -1"),
    ((np.zeros((2, 4)), np.zeros((3, 4)), [0, 1], [0]), "claim_idx has 2 entries but unit_idx has 1"),
    ((np.zeros(4), np.zeros((3, 4)), [0], [0]), "claims must be 2-D"),
    ((np.zeros((2, 4)), np.zeros((3, 4)), [0.0], [0]), "claim_idx must hold integers"),
])
def test_bad_pair_cosine_arguments(fw, args, match):
    with pytest.raises(ValueError, match=match):
        cuda.pair_cosine(*(fw.dev(np.asarray(a)) for a in args))


# ---- citation masks -------------------------------------------------------------------


@pytest.mark.parametrize("dtype", [np.float32, np.float16])
@pytest.mark.parametrize("vocab,words", [(100, 4), (70, 2), (1000, 32)])
def test_apply_token_bitmask_matches_cpu(fw, dtype, vocab, words):
    from asmr.decoding.automaton import apply_token_bitmask_inplace

    rng = np.random.default_rng(vocab)
    mask = rng.integers(-2**31, 2**31, size=(4, words), dtype=np.int64).astype(np.int32)
    mask[0], mask[1] = -1, 0
    logits = rng.standard_normal((4, vocab)).astype(np.float32)
    for rows in (None, [3, 0, 0, 1]):
        want = logits.copy()
        apply_token_bitmask_inplace(want, mask, indices=rows)
        dev = fw.dev(logits.astype(dtype))
        cuda.apply_token_bitmask(dev, fw.dev(mask), rows)
        np.testing.assert_array_equal(fw.host(dev).astype(np.float32), want.astype(dtype).astype(np.float32))
    # a strided row view is masked in place; a host mask is copied over
    big = fw.dev(np.zeros((4, vocab + 7), np.float32))
    cuda.apply_token_bitmask(big[:, :vocab], mask)
    host = fw.host(big)
    assert np.isinf(host[1, :vocab]).all()
    assert np.isfinite(host[:, vocab:]).all() and np.isfinite(host[0, :min(vocab, 32 * words)]).all()


def test_apply_token_bitmask_checks_inputs(fw):
    with pytest.raises(ValueError, match="device array"):
        cuda.apply_token_bitmask(np.zeros((1, 32), np.float32), np.zeros((1, 1), np.int32))
    with pytest.raises(ValueError, match="int32"):
        cuda.apply_token_bitmask(fw.dev(np.zeros((1, 32), np.float32)), fw.dev(np.zeros((1, 1), np.int64)))
    with pytest.raises(ValueError, match="indices"):
        cuda.apply_token_bitmask(fw.dev(np.zeros((1, 32), np.float32)), np.zeros((2, 1), np.int32), [2])
