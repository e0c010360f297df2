import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from asmr_kernels import CSRGraph, diffuse
from conftest import csr_graphs
from reference import diffuse_ref


@given(graph=csr_graphs(), b=st.sampled_from([None, 1, 3, 64]), steps=st.integers(0, 3),
       decay=st.floats(0.0, 1.0), restart=st.floats(0.0, 1.0),
       edge_threshold=st.sampled_from([0.0, 0.3, 0.9]), node_threshold=st.sampled_from([0.0, 0.05]),
       personalized=st.booleans(), seed=st.integers(0, 2**31))
def test_diffuse_matches_reference(graph, b, steps, decay, restart, edge_threshold, node_threshold,
                                   personalized, seed):
    indptr, indices, weights = graph
    n = len(indptr) - 1
    rng = np.random.default_rng(seed)
    shape = (n,) if b is None else (n, b)
    x = rng.random(shape, dtype=np.float32)
    p = rng.random(shape, dtype=np.float32) if personalized else None
    got = diffuse(CSRGraph(indptr, indices, weights), x, steps=steps, decay=decay, restart=restart,
                  personalization=p, edge_threshold=edge_threshold, node_threshold=node_threshold)
    want = diffuse_ref(indptr, indices, weights, x, steps=steps, decay=decay, restart=restart,
                       personalization=p, edge_threshold=edge_threshold,
                       node_threshold=node_threshold)
    assert got.shape == x.shape and got.dtype == np.float32
    # Entries within float rounding of node_threshold may legitimately land on either side.
    near = np.abs(want - node_threshold) < 1e-5
    np.testing.assert_allclose(got[~near], want[~near], rtol=1e-4, atol=1e-5)


def test_personalized_pagerank_converges_to_scipy_solution():
    sp = pytest.importorskip("scipy.sparse", reason="SciPy is needed for this reference")
    rng = np.random.default_rng(0)
    n = 200
    a = sp.random(n, n, density=0.05, random_state=1, format="csr", dtype=np.float32)
    a = a + sp.eye(n, format="csr", dtype=np.float32) * 0.0  # keep square CSR
    deg = np.asarray(a.sum(axis=1)).ravel()
    deg[deg == 0] = 1
    a = sp.diags(1 / deg).astype(np.float32) @ a  # row-stochastic where rows have edges
    a = a.tocsr()
    p = np.zeros(n, np.float32)
    p[rng.choice(n, 5, replace=False)] = 0.2
    damping = 0.85
    got = diffuse(CSRGraph.from_scipy(a), p, steps=200, decay=damping, restart=1 - damping)
    # Fixed point of x = d A^T x + (1 - d) p.
    want = np.linalg.solve(np.eye(n) - damping * a.T.toarray(), (1 - damping) * p)
    np.testing.assert_allclose(got, want, rtol=1e-3, atol=1e-6)


def test_diffuse_accepts_scipy_matrix_and_tuple():
    sp = pytest.importorskip("scipy.sparse", reason="SciPy is needed for this input type")
    a = sp.csr_matrix(np.array([[0, 1, 0], [0, 0, 2], [1, 0, 0]], dtype=np.float32))
    x = np.array([1, 0, 0], np.float32)
    np.testing.assert_allclose(diffuse(a, x), [0, 1, 0])
    np.testing.assert_allclose(diffuse((a.indptr, a.indices, a.data), x, steps=2), [0, 0, 2])


def test_edge_and_node_thresholds_are_fused():
    # 0 -> 1 (0.2), 0 -> 2 (0.9): the weak edge is masked, then 2's value is thresholded.
    g = CSRGraph([0, 2, 2, 2], np.array([1, 2], np.int32), [0.2, 0.9])
    x = np.array([1, 0, 0], np.float32)
    np.testing.assert_allclose(diffuse(g, x, edge_threshold=0.5), [0, 0, 0.9])
    np.testing.assert_allclose(diffuse(g, x, edge_threshold=0.5, node_threshold=0.95), [0, 0, 0])


def test_transpose_is_cached_and_stable():
    g = CSRGraph([0, 2, 3, 3], np.array([1, 2, 2], np.int64), [0.5, 1.0, 2.0])
    t = g.transpose()
    assert t is g.transpose() and t.transpose() is g
    np.testing.assert_array_equal(t.indptr, [0, 0, 1, 3])
    np.testing.assert_array_equal(t.indices, [0, 0, 1])
    np.testing.assert_array_equal(t.weights, [0.5, 1.0, 2.0])


# ---- the tiled layout (propagation blocking) -------------------------------------
# Large graphs take the tiled path on their own; these tests force it onto small
# graphs with tiny tiles, so that a few nodes span many tiles (and empty ones).

import asmr_kernels.cpu_graph as graph_mod  # noqa: E402

TILE_SHAPES = [(0, 1), (1, 1), (2, 1), (1, 3), (3, 2), (4, 4), (6, 1), (8, 2)]


@pytest.fixture
def force_tiles(monkeypatch):
    def force(shape):
        monkeypatch.setattr(graph_mod, "_TILE_OVERRIDE", shape)
    return force


@given(graph=csr_graphs(), shape=st.sampled_from(TILE_SHAPES), b=st.sampled_from([None, 1, 3, 16, 64]),
       steps=st.integers(1, 3), decay=st.floats(0.0, 1.0), restart=st.floats(0.0, 1.0),
       edge_threshold=st.sampled_from([0.0, 0.3, 0.9]), node_threshold=st.sampled_from([0.0, 0.05]),
       personalized=st.booleans(), seed=st.integers(0, 2**31))
def test_tiled_diffuse_matches_reference(graph, shape, b, steps, decay, restart, edge_threshold,
                                         node_threshold, personalized, seed):
    indptr, indices, weights = graph
    n = len(indptr) - 1
    rng = np.random.default_rng(seed)
    xshape = (n,) if b is None else (n, b)
    x = rng.random(xshape, dtype=np.float32)
    p = rng.random(xshape, dtype=np.float32) if personalized else None
    g = CSRGraph(indptr, indices, weights)
    old = graph_mod._TILE_OVERRIDE
    graph_mod._TILE_OVERRIDE = shape
    try:
        got = diffuse(g, x, steps=steps, decay=decay, restart=restart, personalization=p,
                      edge_threshold=edge_threshold, node_threshold=node_threshold)
    finally:
        graph_mod._TILE_OVERRIDE = old
    assert any(k[:2] == shape for k in g._tiles) and g._transpose is None
    want = diffuse_ref(indptr, indices, weights, x, steps=steps, decay=decay, restart=restart,
                       personalization=p, edge_threshold=edge_threshold,
                       node_threshold=node_threshold)
    near = np.abs(want - node_threshold) < 1e-5
    np.testing.assert_allclose(got[~near], want[~near], rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("dtype", [np.int32, np.int64])
@pytest.mark.parametrize("shape", [(6, 5), (9, 3), (12, 12)])
@pytest.mark.parametrize("b", [1, 16])
def test_tiled_equals_pull_on_a_larger_graph(force_tiles, dtype, shape, b):
    rng = np.random.default_rng(7)
    n, d = 5000, 7
    indptr = np.arange(0, n * d + 1, d, dtype=dtype)
    indices = rng.integers(0, n, n * d).astype(dtype)
    indices[::11] = np.repeat(np.arange(n), d)[::11]  # self-loops
    indices[1::13] = indices[::13][: indices[1::13].size]  # duplicates of a neighbour's target
    weights = rng.random(n * d, dtype=np.float32)
    weights[::17] = 0.0
    g = CSRGraph(indptr, indices, weights)
    x = rng.random((n, b) if b > 1 else n, dtype=np.float32)
    kw = dict(steps=3, decay=0.7, restart=0.3, edge_threshold=0.2, node_threshold=0.01)
    force_tiles(False)
    pulled = diffuse(g, x, **kw)
    force_tiles(shape)
    for threads in (1, 2):
        tiled = diffuse(g, x, num_threads=threads, **kw)
        near = np.abs(pulled - 0.01) < 1e-5
        np.testing.assert_allclose(tiled[~near], pulled[~near], rtol=1e-5, atol=1e-7)


def test_tile_layout_is_grouped_and_sorted(force_tiles):
    rng = np.random.default_rng(3)
    n, d = 3000, 5
    g = CSRGraph(np.arange(0, n * d + 1, d), rng.integers(0, n, n * d), rng.random(n * d))
    ds, ss = 7, 6
    group_ptr, packed, weights = g._tiled(ds, ss)
    assert g._tiled(ds, ss)[1] is packed  # cached
    nst = -(-n // (1 << ss))
    assert group_ptr[0] == 0 and group_ptr[-1] == g.num_edges and np.all(np.diff(group_ptr) >= 0)
    src = np.repeat(np.arange(n), d)
    dst = g.indices.astype(np.int64)
    order = np.lexsort((src, dst))  # the transpose's order: by receiver, then source
    got_dst, got_src = np.empty(g.num_edges, np.int64), np.empty(g.num_edges, np.int64)
    for grp in range(group_ptr.size - 1):
        s = slice(group_ptr[grp], group_ptr[grp + 1])
        dt, st_ = divmod(grp, nst)
        k = packed[s].astype(np.int64)
        assert np.all(np.diff(k >> ss) >= 0)  # sorted by destination within the group
        got_dst[s] = (dt << ds) + (k >> ss)
        got_src[s] = (st_ << ss) + (k & ((1 << ss) - 1))
    key = np.lexsort((got_src, got_dst))
    np.testing.assert_array_equal(got_dst[key], dst[order])
    np.testing.assert_array_equal(got_src[key], src[order])
    np.testing.assert_array_equal(weights[key], g.weights[order])


def test_automatic_choice_of_layout(force_tiles):
    force_tiles(None)  # whatever ASMR_DIFFUSE_TILES says
    assert graph_mod._tile_shifts(1_000_000, 10_000_000, 1) == (16, 14)
    assert graph_mod._tile_shifts(100_000, 1_000_000, 1) is None  # x fits in cache: pull
    assert graph_mod._tile_shifts(1_000_000, 10_000_000, 16) is None  # wide rows: prefetching pull
    assert graph_mod._tile_shifts(1_000_000, 0, 1) is None
    assert graph_mod._parse_tile_override("off") is False
    assert graph_mod._parse_tile_override(None) is None
    assert graph_mod._parse_tile_override("auto") is None
    assert graph_mod._parse_tile_override("3,2") == (3, 2)


def test_bad_tile_override(force_tiles):
    force_tiles((20, 20))
    with pytest.raises(ValueError, match="tile shifts"):
        diffuse(CSRGraph([0, 1], [0], [1.0]), np.ones(1, np.float32))


@pytest.mark.parametrize("steps", [1, 2, 3])
def test_wide_rows_of_a_misaligned_x(steps):
    # x is copied to an aligned buffer for the gathers; personalization defaults to x.
    sp = pytest.importorskip("scipy.sparse", reason="SciPy is needed for this reference")
    rng = np.random.default_rng(5)
    n, d, b = 40_000, 4, 16
    g = CSRGraph(np.arange(0, n * d + 1, d), rng.integers(0, n, n * d).astype(np.int32),
                 rng.random(n * d, dtype=np.float32))
    base = rng.random(n * b + 1, dtype=np.float32)
    x = base[1:].reshape(n, b)
    assert x.ctypes.data % 64 != 0
    keep = x.copy()
    got = diffuse(g, x, steps=steps, decay=0.5, restart=0.5)
    np.testing.assert_array_equal(x, keep)
    at = sp.csr_matrix((g.weights, g.indices, g.indptr), shape=(n, n)).T.tocsr().astype(np.float64)
    want = x.astype(np.float64)
    for _ in range(steps):
        want = 0.5 * (at @ want) + 0.5 * x
    np.testing.assert_allclose(got, want, rtol=1e-5)


@pytest.mark.parametrize("dtype", [np.int32, np.int64])
def test_transpose_of_many_column_blocks(dtype):
    # Dense enough that the transpose sorts in several column blocks.
    rng = np.random.default_rng(11)
    n, d = 300, 2000
    indptr = np.arange(0, n * d + 1, d, dtype=dtype)
    indptr[1:-1] += rng.integers(-d // 2, d // 2, n - 1).astype(dtype)  # uneven rows
    indices = rng.integers(0, n, n * d).astype(dtype)
    weights = rng.random(n * d, dtype=np.float32)
    t = CSRGraph(indptr, indices, weights).transpose()
    src = np.repeat(np.arange(n), np.diff(indptr))
    order = np.argsort(indices, kind="stable")
    np.testing.assert_array_equal(t.indptr, np.concatenate([[0], np.cumsum(np.bincount(indices, minlength=n))]))
    np.testing.assert_array_equal(t.indices, src[order])
    np.testing.assert_array_equal(t.weights, weights[order])
    assert t.indices.dtype == dtype
