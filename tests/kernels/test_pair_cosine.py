import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from asmr_kernels import pair_cosine
from reference import pair_cosine_ref


@given(d=st.sampled_from([1, 3, 8, 15, 16, 17, 64, 384, 1024]), rows=st.integers(1, 20),
       pairs=st.integers(0, 70), claim_dtype=st.sampled_from([np.float32, np.float16]),
       unit_dtype=st.sampled_from([np.float32, np.float16]),
       index_dtype=st.sampled_from([np.int32, np.int64]), seed=st.integers(0, 2**31))
def test_pair_cosine_matches_reference(d, rows, pairs, claim_dtype, unit_dtype, index_dtype, seed):
    rng = np.random.default_rng(seed)
    claims = rng.standard_normal((rows, d)).astype(claim_dtype)
    units = rng.standard_normal((rows + 3, d)).astype(unit_dtype)
    claims[0] = 0  # a zero row has cosine 0
    ci = rng.integers(0, rows, pairs).astype(index_dtype)
    ui = rng.integers(0, rows + 3, pairs).astype(index_dtype)
    got = pair_cosine(claims, units, ci, ui, num_threads=2)
    assert got.dtype == np.float32 and got.shape == (pairs,)
    np.testing.assert_allclose(got, pair_cosine_ref(claims, units, ci, ui), rtol=1e-4, atol=1e-5)


def test_prenormalized_fast_path_is_the_dot_product():
    rng = np.random.default_rng(1)
    c = rng.standard_normal((4, 384)).astype(np.float32)
    u = rng.standard_normal((9, 384)).astype(np.float32)
    c /= np.linalg.norm(c, axis=1, keepdims=True)
    u /= np.linalg.norm(u, axis=1, keepdims=True)
    ci, ui = np.array([0, 1, 3, 3]), np.array([8, 0, 2, 2])
    got = pair_cosine(c, u, ci, ui, prenormalized=True)
    np.testing.assert_allclose(got, np.einsum("ij,ij->i", c[ci], u[ui]), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(got, pair_cosine(c, u, ci, ui), rtol=1e-5, atol=1e-6)
    # The fast path really skips the norms: unnormalised rows give the raw dot.
    assert pair_cosine(2 * c, u, [0], [0], prenormalized=True)[0] == pytest.approx(float(2 * c[0] @ u[0]), rel=1e-5)


def test_float16_subnormals_and_extremes_convert_exactly():
    vals = np.array([6e-8, -6e-8, 1e-5, 65504.0, -2.0, 0.5, 3.0e-6, 1.0], dtype=np.float16)
    c = vals.reshape(1, -1)
    u = np.ones((1, vals.size), dtype=np.float32)
    got = pair_cosine(c, u, [0], [0], prenormalized=True)[0]
    assert got == pytest.approx(float(vals.astype(np.float64).sum()), rel=1e-6)


def test_non_contiguous_and_float64_inputs_are_accepted():
    rng = np.random.default_rng(2)
    big = rng.standard_normal((10, 20))
    c, u = big[:, ::2], big[::2]  # float64, strided
    got = pair_cosine(c, u[:, :10], [1, 2], [3, 4])
    np.testing.assert_allclose(got, pair_cosine_ref(c, u[:, :10], [1, 2], [3, 4]), rtol=1e-5)
