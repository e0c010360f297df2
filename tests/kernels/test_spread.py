import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from asmr_kernels import CSRGraph, diffuse, pack_seeds, spread
from conftest import SPREAD_LOOKUPS, csr_graphs, spread_lookup
from reference import spread_ref

params = dict(depth=st.integers(0, 3), decay=st.floats(0.05, 1.0), restart=st.sampled_from([0.0, 0.5, 1.0]),
              edge_threshold=st.sampled_from([0.0, 0.3]), node_threshold=st.sampled_from([0.0, 0.01, 0.2]))


@st.composite
def seed_batches(draw, n):
    q = draw(st.sampled_from([1, 3, 64]))
    nodes, scores = [], []
    for _ in range(q):
        k = draw(st.integers(0, 5))
        nodes.append(draw(st.lists(st.integers(0, n - 1), min_size=k, max_size=k)))  # duplicates allowed
        scores.append(draw(st.lists(st.one_of(st.just(0.0), st.floats(0.0625, 1.0, width=32)),
                                    min_size=k, max_size=k)))
    return nodes, scores


@given(data=st.data(), graph=csr_graphs(), kind=st.sampled_from(SPREAD_LOOKUPS), **params)
def test_spread_matches_reference(data, graph, kind, depth, decay, restart, edge_threshold, node_threshold):
    with spread_lookup(kind):
        _matches_reference(data, graph, depth, decay, restart, edge_threshold, node_threshold)


def _matches_reference(data, graph, depth, decay, restart, edge_threshold, node_threshold):
    indptr, indices, weights = graph
    n = len(indptr) - 1
    nodes, scores = data.draw(seed_batches(n))
    ptr, flat, sc = pack_seeds(nodes, scores)
    kw = dict(depth=depth, decay=decay, restart=restart, edge_threshold=edge_threshold,
              node_threshold=node_threshold)
    res = spread(CSRGraph(indptr, indices, weights), ptr, flat, sc, num_threads=2, **kw)
    assert len(res) == len(nodes) and res.elapsed_ns.shape == (len(nodes),)
    for q in range(len(nodes)):
        want, order = spread_ref(indptr, indices, weights, nodes[q], scores[q], **kw)
        got = res.query(q)
        assert got.node.tolist() == order
        np.testing.assert_array_equal(got.activation, [want[v][0] for v in order])
        np.testing.assert_array_equal(got.hop, [want[v][1] for v in order])
        np.testing.assert_array_equal(got.strength, [want[v][2] for v in order])
        np.testing.assert_array_equal(got.predecessor, [want[v][3] for v in order])


@given(data=st.data(), graph=csr_graphs(), depth=st.integers(0, 3), decay=st.floats(0.05, 1.0),
       restart=st.sampled_from([0.0, 1.0]), edge_threshold=st.sampled_from([0.0, 0.3]))
def test_spread_equals_dense_diffusion_from_the_seed_vector(data, graph, depth, decay, restart,
                                                           edge_threshold):
    indptr, indices, weights = graph
    n = len(indptr) - 1
    nodes, scores = data.draw(seed_batches(n))
    g = CSRGraph(indptr, indices, weights)
    res = spread(g, *pack_seeds(nodes, scores), depth=depth, decay=decay, restart=restart,
                 edge_threshold=edge_threshold)
    for q in range(len(nodes)):
        x = np.zeros(n, np.float32)
        np.add.at(x, np.asarray(nodes[q], dtype=np.int64), np.asarray(scores[q], np.float32))
        dense = diffuse(g, x, steps=depth, decay=decay, restart=restart, edge_threshold=edge_threshold)
        got = np.zeros(n, np.float32)
        r = res.query(q)
        got[r.node] = r.activation
        np.testing.assert_allclose(got, dense, rtol=1e-5, atol=1e-6)


@given(data=st.data(), graph=csr_graphs(), depth=st.integers(1, 3))
def test_recall_paths_lead_back_to_a_seed(data, graph, depth):
    indptr, indices, weights = graph
    n = len(indptr) - 1
    nodes, scores = data.draw(seed_batches(n))
    res = spread(CSRGraph(indptr, indices, weights), *pack_seeds(nodes, scores), depth=depth)
    edge_w = {}
    for u in range(n):
        for e in range(indptr[u], indptr[u + 1]):
            edge_w[(u, int(indices[e]))] = max(edge_w.get((u, int(indices[e])), 0.0), weights[e])
    for q in range(len(nodes)):
        r = res.query(q)
        seed_score = {}
        for v, s in zip(nodes[q], scores[q]):
            seed_score[v] = seed_score.get(v, 0.0) + s
        hop = dict(zip(r.node.tolist(), r.hop.tolist()))
        for v in r.node.tolist():
            path = r.path(v)
            assert path[0] in seed_score and len(path) - 1 <= hop[v] <= depth
            strength = seed_score[path[0]] * np.prod([edge_w[(a, b)] for a, b in zip(path, path[1:])])
            assert r.strength[r.node.tolist().index(v)] == pytest.approx(strength, rel=1e-5)


def test_spread_touches_only_reached_edges():
    # A long chain: depth 2 from node 0 reads the out-edges of nodes 0 and 1 only.
    n = 100_000
    indptr = np.arange(n + 1, dtype=np.int64)
    indptr[-1] = n - 1
    indptr[1:] = np.minimum(np.arange(1, n + 1), n - 1)
    indices = np.arange(1, n, dtype=np.int64)
    g = CSRGraph(indptr, indices, np.full(n - 1, 0.5, np.float32))
    res = spread(g, [0, 1], [0], [1.0], depth=2, restart=0.0, decay=1.0)
    r = res.query(0)
    assert r.node.tolist() == [0, 1, 2]
    assert r.hop.tolist() == [0, 1, 2]
    assert r.predecessor.tolist() == [-1, 0, 1]
    np.testing.assert_allclose(r.activation, [0.0, 0.0, 0.25])
    np.testing.assert_allclose(r.strength, [1.0, 0.5, 0.25])
    assert res.edges_touched == 2
    assert r.path(2) == [0, 1, 2]


def test_empty_batches_and_isolated_seeds():
    g = CSRGraph([0, 0, 0], np.array([], np.int32), [])
    res = spread(g, [0], [], [])
    assert len(res) == 0 and res.node.size == 0
    res = spread(g, [0, 1, 1], [1], [0.5], depth=2)
    assert res.query(0).node.tolist() == [1] and res.query(1).node.size == 0
    np.testing.assert_allclose(res.query(0).activation, [0.5])


def test_path_of_unreached_node_is_an_error():
    g = CSRGraph([0, 1, 1], np.array([1], np.int32), [1.0])
    r = spread(g, [0, 1], [1], [1.0]).query(0)
    with pytest.raises(ValueError, match="not reached"):
        r.path(0)


def test_result_arrays_own_their_memory_across_calls():
    # Results live in pooled blocks: a block is reused only once no array of
    # an earlier result refers to it.
    rng = np.random.default_rng(3)
    n = 5000
    g = CSRGraph(np.arange(0, 4 * n + 1, 4, dtype=np.int64), rng.integers(0, n, 4 * n), rng.random(4 * n))
    seeds_a = pack_seeds([rng.integers(0, n, 5) for _ in range(50)])
    seeds_b = pack_seeds([rng.integers(0, n, 5) for _ in range(50)])
    first = spread(g, *seeds_a)
    activation, node = first.activation, first.node
    saved = activation.copy(), node.copy()
    del first
    for _ in range(3):
        other = spread(g, *seeds_b)
        assert not np.shares_memory(other.activation, activation)
        del other
    np.testing.assert_array_equal(activation, saved[0])
    np.testing.assert_array_equal(node, saved[1])
    activation[:] = 0  # results are ordinary writable arrays
