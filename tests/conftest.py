import contextlib

import numpy as np
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st

settings.register_profile("default", deadline=None, max_examples=60,
                          suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("default")

INDEX_DTYPES = st.sampled_from([np.int32, np.int64])


@st.composite
def csr_graphs(draw, max_nodes=24, max_degree=6):
    """Random CSR graphs with empty rows, self-loops, duplicate and zero-weight edges."""
    n = draw(st.integers(1, max_nodes))
    degrees = draw(st.lists(st.integers(0, max_degree), min_size=n, max_size=n))
    nnz = sum(degrees)
    indices = draw(st.lists(st.integers(0, n - 1), min_size=nnz, max_size=nnz))
    weights = draw(st.lists(st.one_of(st.just(0.0), st.floats(0.0625, 1.0, width=32)),
                            min_size=nnz, max_size=nnz))
    dtype = draw(INDEX_DTYPES)
    indptr = np.zeros(n + 1, dtype=dtype)
    np.cumsum(degrees, out=indptr[1:])
    return indptr, np.array(indices, dtype=dtype), np.array(weights, dtype=np.float32)


SPREAD_LOOKUPS = ("dense", "hash")


@contextlib.contextmanager
def spread_lookup(kind):
    """spread's node -> slot map of small graphs ("dense") or of large ones ("hash"), whatever the graph's size."""
    from asmr_kernels import _cpu

    old = _cpu.dense_spread_limit(1 << 19 if kind == "dense" else 0)
    try:
        yield
    finally:
        _cpu.dense_spread_limit(old)


def named_hash_embedder(name, *args, **kwargs):
    """A lexical embedder that answers to a model's ``name``: stands in for a model where which model a
    memory is made with is what a test checks, so that none is loaded (any loader's arguments ignored)."""
    from asmr.embed import HashingEmbedder

    embedder = HashingEmbedder(64)
    embedder.name = name
    return embedder
