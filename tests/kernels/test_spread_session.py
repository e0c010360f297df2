"""SpreadSession: one query per call through the C-level entry, the same result as spread()."""

from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest
from conftest import SPREAD_LOOKUPS, csr_graphs, spread_lookup
from hypothesis import given
from hypothesis import strategies as st

from asmr_kernels import CSRGraph, SpreadSession, _cpu, spread

FIELDS = ("node", "activation", "hop", "strength", "predecessor")
params = {"depth": st.integers(0, 3), "decay": st.floats(0.05, 1.0), "restart": st.sampled_from([0.0, 0.5, 1.0]),
          "edge_threshold": st.sampled_from([0.0, 0.3]), "node_threshold": st.sampled_from([0.0, 0.01, 0.2])}




def assert_same_query(got, want):
    for f in FIELDS:
        a, b = getattr(got, f), getattr(want, f)
        assert a.dtype == b.dtype, f
        np.testing.assert_array_equal(a, b, err_msg=f)


@given(data=st.data(), graph=csr_graphs(), kind=st.sampled_from(SPREAD_LOOKUPS), **params)
def test_session_equals_spread(data, graph, kind, depth, decay, restart, edge_threshold, node_threshold):
    with spread_lookup(kind):
        _session_equals_spread(data, graph, depth, decay, restart, edge_threshold, node_threshold)


def _session_equals_spread(data, graph, depth, decay, restart, edge_threshold, node_threshold):
    indptr, indices, weights = graph
    n = len(indptr) - 1
    kw = {"depth": depth, "decay": decay, "restart": restart, "edge_threshold": edge_threshold,
          "node_threshold": node_threshold}
    g = CSRGraph(indptr, indices, weights)
    session = SpreadSession(g, **kw)
    for _ in range(3):  # one session, several queries: the workspace is reset between them
        k = data.draw(st.integers(0, 6))
        nodes = data.draw(st.lists(st.integers(0, n - 1), min_size=k, max_size=k))  # duplicates allowed
        scores = data.draw(st.lists(st.one_of(st.just(0.0), st.floats(0.0625, 1.0, width=32)),
                                    min_size=k, max_size=k))
        want = spread(g, [0, k], np.array(nodes, np.int64), np.array(scores, np.float32), **kw).query(0)
        assert_same_query(session.run(np.array(nodes, np.int64), np.array(scores, np.float32)), want)
        assert_same_query(session.run(nodes, scores), want)  # lists take the general path
        nodes32 = np.array(nodes, np.int32)
        assert_same_query(session.run(nodes32, np.array(scores, np.float32)), want)  # int32: typed too
        assert_same_query(session.run(np.repeat(nodes32, 2)[::2], scores), want)  # strided: general path


@pytest.mark.parametrize("kind", SPREAD_LOOKUPS)
def test_session_on_a_larger_random_graph_matches_batched_spread(kind):
    with spread_lookup(kind):
        _larger_random_graph()


def _larger_random_graph():
    rng = np.random.default_rng(7)
    n, degree = 20_000, 8
    indices = rng.integers(0, n, n * degree).astype(np.int32)
    weights = rng.random(n * degree, dtype=np.float32)
    weights[rng.random(weights.size) < 0.05] = 0.0  # zero-weight edges are not followed
    g = CSRGraph(np.arange(0, n * degree + 1, degree, dtype=np.int32), indices, weights)
    seeds = [rng.integers(0, n, 20) for _ in range(30)]
    scores = [rng.random(20, dtype=np.float32) for _ in range(30)]
    for kw in ({"depth": 2}, {"depth": 3, "edge_threshold": 0.4, "node_threshold": 1e-3}):
        session = SpreadSession(g, **kw)
        batch = spread(g, np.arange(0, 20 * 30 + 1, 20), np.concatenate(seeds), np.concatenate(scores), **kw)
        for q in range(30):
            assert_same_query(session.run(seeds[q], scores[q]), batch.query(q))
        assert session.edges_touched > 0


def test_default_scores_are_one_and_duplicates_add_up():
    g = CSRGraph([0, 1, 2, 2], np.array([1, 2], np.int32), [0.5, 0.5])
    session = SpreadSession(g, depth=1, decay=1.0, restart=1.0)
    r = session.run([0, 0, 2])
    want = spread(g, [0, 3], [0, 0, 2], [1.0, 1.0, 1.0], depth=1, decay=1.0, restart=1.0).query(0)
    assert_same_query(r, want)
    assert r.node.tolist() == [0, 2, 1]
    np.testing.assert_array_equal(r.activation, [2.0, 1.0, 1.0])
    assert r.path(1) == [0, 1]


def test_empty_seeds_and_depth_zero():
    g = CSRGraph([0, 1, 1], np.array([1], np.int32), [1.0])
    r = SpreadSession(g).run(np.zeros(0, np.int64), np.zeros(0, np.float32))
    assert len(r) == 0 and r.node.dtype == np.int64 and r.hop.dtype == np.int32
    assert len(SpreadSession(g).run([])) == 0
    r = SpreadSession(g, depth=0).run([0], [0.5])
    assert r.node.tolist() == [0] and r.hop.tolist() == [0] and r.predecessor.tolist() == [-1]


def test_results_are_fresh_arrays():
    g = CSRGraph([0, 1, 1], np.array([1], np.int32), [1.0])
    session = SpreadSession(g)
    first = session.run([0])
    saved = first.activation.copy()
    session.run([1], [0.25])
    np.testing.assert_array_equal(first.activation, saved)
    first.activation[:] = 0  # ordinary writable arrays


@pytest.mark.parametrize("seeds, scores, match", [
    ([3], None, "seed_nodes holds index 3 at position 0, out of range for 3 nodes"),
    (np.array([0, -1], np.int64), None, "seed_nodes holds index -1 at position 1"),
    (np.array([0, 5], np.int32), None, "seed_nodes holds index 5 at position 1"),
    ([0], [-1.0], "seed_scores contains negative values"),
    ([0], np.array([np.nan], np.float32), "seed_scores contains NaN or infinite values"),
    ([0], [np.inf], "seed_scores contains NaN or infinite values"),
    ([0, 1], [1.0], "seed_scores has 1 entries but seed_nodes has 2"),
    ([0.5], None, "seed_nodes must hold integers"),
    (np.zeros((1, 2), np.int64), None, "seed_nodes must be 1-D"),
    ([0], np.ones((1, 1), np.float32), "seed_scores must be 1-D"),
])
def test_bad_seeds_raise_value_error(seeds, scores, match):
    g = CSRGraph([0, 1, 2, 2], np.array([1, 2], np.int32), [0.5, 0.5])
    with pytest.raises(ValueError, match=match):
        SpreadSession(g).run(seeds, scores)


@pytest.mark.parametrize("kwargs, match", [
    ({"depth": -1}, "depth must be >= 0"),
    ({"decay": float("nan")}, "decay must be finite"),
    ({"restart": -0.5}, "restart must be >= 0.0"),
    ({"edge_threshold": "high"}, "edge_threshold must be a real number"),
])
def test_bad_parameters_raise_value_error(kwargs, match):
    with pytest.raises(ValueError, match=match):
        SpreadSession(CSRGraph([0, 0], np.zeros(0, np.int32), []), **kwargs)


def test_the_base_class_alone_refuses_to_run():
    with pytest.raises(RuntimeError, match="not bound"):
        _cpu.SpreadSessionBase().run([0])


def test_one_session_shared_by_threads():
    rng = np.random.default_rng(11)
    n, degree = 5000, 6
    g = CSRGraph(np.arange(0, n * degree + 1, degree, dtype=np.int64), rng.integers(0, n, n * degree),
                 rng.random(n * degree, dtype=np.float32))
    session = SpreadSession(g, depth=3)
    seeds = [rng.integers(0, n, 10) for _ in range(40)]
    want = [spread(g, [0, 10], s, np.ones(10, np.float32), depth=3).query(0) for s in seeds]

    def work(offset):
        for i in range(200):
            q = (i + offset) % len(seeds)
            assert_same_query(session.run(seeds[q]), want[q])

    with ThreadPoolExecutor(4) as pool:
        list(pool.map(work, range(4)))  # a thread's failed assertion is raised here
