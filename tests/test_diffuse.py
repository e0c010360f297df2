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
