"""The CUDA backend without a GPU: importing it never fails, it says why it
cannot run, and its kernels raise RuntimeError with that reason."""

import re

import numpy as np
import pytest

pytest.importorskip("asmr_kernels", reason="asmr_kernels is not built")
from asmr_kernels import cuda  # noqa: E402

REASON = cuda.unavailable_reason()


def test_availability_is_reported_consistently():
    assert cuda.is_available() == (REASON is None)
    if REASON is not None:
        assert isinstance(REASON, str) and REASON


@pytest.mark.skipif(REASON is None, reason="the CUDA backend is available here")
def test_unavailable_backend_raises_runtime_error_with_the_reason():
    calls = (lambda: cuda.CSRGraph([0, 1], [0], [1.0]),
             lambda: cuda.diffuse(([0, 1], [0], [1.0]), np.ones(1, np.float32)),
             lambda: cuda.spread(([0, 1], [0], [1.0]), [0, 1], [0], [1.0]),
             lambda: cuda.pair_cosine(np.ones((1, 4)), np.ones((1, 4)), [0], [0]),
             lambda: cuda.device_info())
    for call in calls:
        with pytest.raises(RuntimeError, match="unavailable: " + re.escape(REASON)):
            call()
