"""Bad input raises ValueError naming the argument; it never reaches C++."""

import numpy as np
import pytest

from asmr_kernels import CSRGraph, _cpu, diffuse, pair_cosine, spread

IP = np.array([0, 2, 3, 3])
IX = np.array([1, 2, 2], np.int32)
W = np.array([0.5, 1.0, 1.0], np.float32)


@pytest.fixture
def g():
    return CSRGraph(IP, IX, W)


@pytest.mark.parametrize("args, match", [
    ((IP, np.array([1, 2, 3], np.int32), W), "indices holds index 3 at position 2, out of range for 3 nodes"),
    ((IP, np.array([1, -1, 2], np.int32), W), "indices holds index -1"),
    ((IP, IX, np.array([0.5, -1.0, 1.0])), "weights contains negative"),
    ((IP, IX, np.array([0.5, np.nan, 1.0])), "weights contains NaN"),
    ((IP, IX, np.array([0.5, np.inf, 1.0])), "weights contains NaN or infinite"),
    ((np.array([0, 2, 1, 3]), IX, W), "indptr must be monotone"),
    ((np.array([1, 2, 3, 3]), IX, W), "indptr must start at 0"),
    ((np.array([0, 2, 3, 4]), IX, W), "indptr ends at 4"),
    ((IP, IX, W[:2]), "weights has 2 entries"),
    ((IP, IX.astype(np.float64), W), "indices must hold integers"),
    ((IP.astype(np.float32), IX, W), "indptr must hold integers"),
    ((IP, IX, np.array(["a", "b", "c"])), "weights must hold real numbers"),
    ((IP.reshape(2, 2), IX, W), "indptr must be 1-D"),
    ((np.array([], np.int64), IX, W), "indptr must have num_nodes"),
])
def test_bad_graphs(args, match):
    with pytest.raises(ValueError, match=match):
        CSRGraph(*args)


def test_num_nodes_must_agree():
    with pytest.raises(ValueError, match="num_nodes=5"):
        CSRGraph(IP, IX, W, num_nodes=5)


@pytest.mark.parametrize("kwargs, match", [
    (dict(x=np.zeros(4, np.float32)), "x has 4 rows but the graph has 3 nodes"),
    (dict(x=np.zeros((3, 2, 1), np.float32)), "x must be 1-D or 2-D"),
    (dict(x=np.array([1, np.nan, 0], np.float32)), "x contains NaN"),
    (dict(x=np.zeros(3, np.complex64)), "x must hold real numbers"),
    (dict(steps=-1), "steps must be >= 0"),
    (dict(steps=1.5), "steps must be an integer"),
    (dict(decay=float("nan")), "decay must be finite"),
    (dict(decay=-0.5), "decay must be >= 0"),
    (dict(restart=0.5, personalization=np.zeros(2, np.float32)), "personalization has shape"),
    (dict(num_threads=-1), "num_threads must be >= 0"),
    (dict(edge_threshold="high"), "edge_threshold must be a real number"),
])
def test_bad_diffuse_arguments(g, kwargs, match):
    kw = dict(x=np.ones(3, np.float32))
    kw.update(kwargs)
    x = kw.pop("x")
    with pytest.raises(ValueError, match=match):
        diffuse(g, x, **kw)


def test_bad_graph_argument():
    with pytest.raises(ValueError, match="graph must be a CSRGraph"):
        diffuse([1, 2, 3], np.ones(3, np.float32))


@pytest.mark.parametrize("args, kwargs, match", [
    (([0, 1], [3], [1.0]), {}, "seed_nodes holds index 3 at position 0, out of range for 3 nodes"),
    (([0, 1], [-2], [1.0]), {}, "seed_nodes holds index -2"),
    (([0, 1], [0], [-1.0]), {}, "seed_scores contains negative"),
    (([0, 1], [0], [np.nan]), {}, "seed_scores contains NaN"),
    (([0, 2], [0], [1.0]), {}, "seed_ptr ends at 2"),
    (([1, 1], [0], [1.0]), {}, "seed_ptr must start at 0"),
    (([0, 1, 0, 1], [0], [1.0]), {}, "seed_ptr must be monotone"),
    (([0, 1], [0], [1.0, 2.0]), {}, "seed_scores has 2 entries"),
    (([], [0], [1.0]), {}, "seed_ptr must have num_queries"),
    (([0, 1], [0.5], [1.0]), {}, "seed_nodes must hold integers"),
    (([0, 1], [0], [1.0]), dict(depth=-1), "depth must be >= 0"),
    (([0, 1], [0], [1.0]), dict(decay=float("inf")), "decay must be finite"),
])
def test_bad_spread_arguments(g, args, kwargs, match):
    with pytest.raises(ValueError, match=match):
        spread(g, *args, **kwargs)


@pytest.mark.parametrize("args, match", [
    ((np.zeros((2, 4)), np.zeros((3, 5)), [0], [0]), "claims has rows of 4 values but units has rows of 5"),
    ((np.zeros((2, 4)), np.zeros((3, 4)), [2], [0]), "claim_idx holds index 2 at position 0, out of range for 2 claim rows"),
    ((np.zeros((2, 4)), np.zeros((3, 4)), [0], [-1]), "unit_idx holds index -1"),
    ((np.zeros((2, 4)), np.zeros((3, 4)), [0, 1], [0]), "claim_idx has 2 entries but unit_idx has 1"),
    ((np.zeros(4), np.zeros((3, 4)), [0], [0]), "claims must be 2-D"),
    ((np.zeros((2, 4), np.complex64), np.zeros((3, 4)), [0], [0]), "claims must be float32 or float16"),
    ((np.zeros((2, 4)), np.zeros((3, 4)), [0.0], [0]), "claim_idx must hold integers"),
])
def test_bad_pair_cosine_arguments(args, match):
    with pytest.raises(ValueError, match=match):
        pair_cosine(*args)


def test_uint64_indices_beyond_int64_are_rejected():
    with pytest.raises(ValueError, match="indices holds values beyond int64"):
        CSRGraph([0, 1], np.array([2**64 - 1], np.uint64), [1.0])


@pytest.mark.parametrize("at", [0, 4095, 4096, 9999])
@pytest.mark.parametrize("bad, allow_negative", [(np.nan, True), (np.inf, True), (-np.inf, True), (-1.5, False)])
def test_first_bad_value_finds_the_first_bad_entry_in_any_block(at, bad, allow_negative):
    a = np.ones(10_000, np.float32)
    a[-1] = np.nan  # a later bad entry does not hide the first
    a[at] = bad
    assert _cpu.first_bad_value(a, allow_negative) == at


def test_first_bad_value_accepts_negative_zero_and_clean_arrays():
    a = np.full(5000, -0.0, np.float32)
    assert _cpu.first_bad_value(a, False) == -1
    assert _cpu.first_bad_value(-np.ones(5000, np.float32), True) == -1
    assert _cpu.first_bad_value(np.zeros(0, np.float32), False) == -1
