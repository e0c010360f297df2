"""Batched pair cosine (CPU): rows are read in place, never gathered."""

from __future__ import annotations

import numpy as np

from . import _cpu
from .checks import check_range, count, index_array


def _matrix(name: str, a) -> np.ndarray:
    arr = np.asarray(a)
    if arr.ndim != 2:
        raise ValueError(f"{name} must be 2-D (rows x dim), got shape {arr.shape}")
    if arr.dtype == np.float16:
        return np.ascontiguousarray(arr).view(np.uint16)
    if arr.dtype.kind not in "fiu":
        raise ValueError(f"{name} must be float32 or float16, got dtype {arr.dtype} (cannot be safely cast)")
    return np.ascontiguousarray(arr, dtype=np.float32)


def pair_cosine(claims, units, claim_idx, unit_idx, *, prenormalized: bool = False,
                num_threads: int = 0) -> np.ndarray:
    """``out[k] = cos(claims[claim_idx[k]], units[unit_idx[k]])``.

    ``claims`` and ``units`` are row matrices of the same width, float32 or
    float16 (other real types are converted to float32); rows are read in
    place, never gathered into a copy. A zero row has cosine 0. With
    ``prenormalized=True`` rows are taken to have unit norm and only the dot
    product is computed. Returns float32 ``(num_pairs,)``.
    """
    c = _matrix("claims", claims)
    u = _matrix("units", units)
    if c.shape[1] != u.shape[1]:
        raise ValueError(f"claims has rows of {c.shape[1]} values but units has rows of {u.shape[1]}")
    ci = index_array("claim_idx", claim_idx)
    ui = index_array("unit_idx", unit_idx)
    if ci.size != ui.size:
        raise ValueError(f"claim_idx has {ci.size} entries but unit_idx has {ui.size}")
    check_range("claim_idx", ci, c.shape[0], "claim rows")
    check_range("unit_idx", ui, u.shape[0], "unit rows")
    num_threads = count("num_threads", num_threads, maximum=4096)
    dtype = np.int32 if ci.dtype == np.int32 and ui.dtype == np.int32 else np.int64
    out = np.empty(ci.size, dtype=np.float32)
    if ci.size and c.shape[1]:
        _cpu.pair_cosine(c, u, ci.astype(dtype, copy=False), ui.astype(dtype, copy=False),
                         bool(prenormalized), out, num_threads)
    elif ci.size:
        out[:] = 0.0
    return out
