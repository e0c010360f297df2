"""Batched pair cosine on a CUDA device: rows are read in place, never gathered."""

from __future__ import annotations

import numpy as np

from .checks import count
from .cuda_checks import Checks, index_array, itype, raise_range
from .cuda_frameworks import Frame, frame
from .cuda_runtime import FLOAT16, FLOAT32, native, require


def _matrix(fr: Frame, name: str, a):
    """(device matrix, RealType, row stride in elements); rows are read in place."""
    arr = fr.adopt(name, a)
    shape = fr.fw.shape(arr)
    if len(shape) != 2:
        raise ValueError(f"{name} must be 2-D (rows x dim), got shape {shape}")
    dt = fr.fw.dtype(arr)
    if dt.name == "float16":
        rtype = FLOAT16
    elif dt.name == "float32":
        rtype = FLOAT32
    elif dt.kind in "fiu":
        arr, rtype = fr.fw.contiguous(arr, np.float32), FLOAT32
    else:
        raise ValueError(f"{name} must be float32 or float16, got dtype {dt.name} (cannot be safely cast)")
    rows, d = shape
    if rows <= 1 or d == 0:
        if d > 0 and rows == 1 and fr.fw.strides(arr)[1] != 1:
            arr = fr.fw.contiguous(arr)
        return arr, rtype, d
    strides = fr.fw.strides(arr) if fr.fw.byte_strides_ok(arr) else (0, 0)
    if strides[1] == 1 and strides[0] >= d:
        return arr, rtype, int(strides[0])
    return fr.fw.contiguous(arr), rtype, d


def pair_cosine(claims, units, claim_idx, unit_idx, *, prenormalized: bool = False,
                num_threads: int = 0):
    """``out[k] = cos(claims[claim_idx[k]], units[unit_idx[k]])`` on the GPU.

    Same arguments and result as :func:`asmr_kernels.pair_cosine`: float32 or
    float16 rows (either matrix; other real types are converted to float32),
    read in place (row-strided views are fine, nothing is gathered); a zero
    row has cosine 0; ``prenormalized=True`` computes only the dot product.
    Returns a float32 device array ``(num_pairs,)``.
    """
    require()
    fr = frame(claims, units, claim_idx, unit_idx)
    with fr.scope():
        c, ctype, ldc = _matrix(fr, "claims", claims)
        u, utype, ldu = _matrix(fr, "units", units)
        (rc, d), (ru, du) = fr.fw.shape(c), fr.fw.shape(u)
        if d != du:
            raise ValueError(f"claims has rows of {d} values but units has rows of {du}")
        ci = index_array(fr, "claim_idx", claim_idx)
        ui = index_array(fr, "unit_idx", unit_idx)
        m = fr.size(ci)
        if m != fr.size(ui):
            raise ValueError(f"claim_idx has {m} entries but unit_idx has {fr.size(ui)}")
        count("num_threads", num_threads, maximum=4096)
        checks = Checks(fr)
        r_ci = checks.index(ci, 0, rc)
        r_ui = checks.index(ui, 0, ru)
        st = checks.run()
        raise_range(fr, st, r_ci, "claim_idx", ci, rc, "claim rows")
        raise_range(fr, st, r_ui, "unit_idx", ui, ru, "unit rows")
        if itype(fr, ci) != itype(fr, ui):
            ci, ui = fr.fw.contiguous(ci, np.int64), fr.fw.contiguous(ui, np.int64)
        out = fr.empty((m,), np.float32)
        if m:
            native.pair_cosine(fr.device, ctype, utype, itype(fr, ci), m, d, fr.ptr(c), ldc, fr.ptr(u),
                               ldu, fr.ptr(ci), fr.ptr(ui), bool(prenormalized), fr.ptr(out), fr.stream)
        return out
