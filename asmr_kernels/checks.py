"""Argument checks shared by the kernel faces.

Scalars follow one set of rules on the CPU and on the GPU (:func:`real`,
:func:`count`); the array checks here are the CPU's: they return C-contiguous
host arrays of the kernels' types, and report the first bad entry through one
pass in C. Every failure is a ValueError that names the argument.
"""

from __future__ import annotations

import math
import numbers

import numpy as np

from . import _cpu

I32_MAX = int(np.iinfo(np.int32).max)
I64_MAX = int(np.iinfo(np.int64).max)


def real(name: str, value, *, minimum: float | None = None) -> float:
    """A finite real number (not a bool), at least ``minimum``."""
    if type(value) is not float and (isinstance(value, bool) or not isinstance(value, numbers.Real)):
        raise ValueError(f"{name} must be a real number, got {value!r}")
    v = float(value)
    if not math.isfinite(v):
        raise ValueError(f"{name} must be finite, got {value!r}")
    if minimum is not None and v < minimum:
        raise ValueError(f"{name} must be >= {minimum}, got {value!r}")
    return v


def count(name: str, value, *, maximum: int = I32_MAX) -> int:
    """An integer (not a bool) in [0, maximum]."""
    if type(value) is not int and (isinstance(value, bool) or not isinstance(value, numbers.Integral)):
        raise ValueError(f"{name} must be an integer, got {value!r}")
    v = int(value)
    if v < 0:
        raise ValueError(f"{name} must be >= 0, got {v}")
    if v > maximum:
        raise ValueError(f"{name} must be <= {maximum}, got {v}")
    return v


def index_array(name: str, a) -> np.ndarray:
    """A 1-D integer array (int32 or int64, C-contiguous)."""
    arr = np.asarray(a)
    if arr.ndim != 1:
        raise ValueError(f"{name} must be 1-D, got shape {arr.shape}")
    if arr.dtype.kind not in "iu":
        if arr.size == 0 and arr.dtype.kind == "f":  # e.g. np.array([]) defaults to float64
            return np.zeros(0, dtype=np.int64)
        raise ValueError(f"{name} must hold integers, got dtype {arr.dtype} (cannot be safely cast)")
    if arr.dtype == np.int32 or arr.dtype == np.int64:
        return np.ascontiguousarray(arr)
    if arr.dtype.kind == "u" and arr.dtype.itemsize == 8 and arr.size and arr.max() > I64_MAX:
        raise ValueError(f"{name} holds values beyond int64")
    return np.ascontiguousarray(arr, dtype=np.int64 if arr.dtype.itemsize >= 4 else np.int32)


def float_array(name: str, a, *, ndim: tuple[int, ...], finite: bool = True,
                nonnegative: bool = False) -> np.ndarray:
    """A float32, C-contiguous array of one of the given ranks."""
    arr = np.asarray(a)
    if arr.ndim not in ndim:
        want = " or ".join(f"{d}-D" for d in ndim)
        raise ValueError(f"{name} must be {want}, got shape {arr.shape}")
    if arr.dtype.kind not in "fiu":
        raise ValueError(f"{name} must hold real numbers, got dtype {arr.dtype} (cannot be safely cast)")
    arr = np.ascontiguousarray(arr, dtype=np.float32)
    if finite and arr.size:
        bad = _cpu.first_bad_value(arr.reshape(-1), not nonnegative)
        if bad >= 0:
            v = arr.reshape(-1)[bad]
            what = "negative values" if np.isfinite(v) else "NaN or infinite values"
            raise ValueError(f"{name} contains {what} (first at flat position {bad}: {v})")
    return arr


def check_range(name: str, idx: np.ndarray, upper: int, what: str) -> None:
    """Every entry of an index array (from :func:`index_array`) in [0, upper)."""
    if idx.size:
        bad = _cpu.first_out_of_range(idx, upper)
        if bad >= 0:
            raise ValueError(f"{name} holds index {int(idx[bad])} at position {bad}, out of range for {upper} {what}")


def check_monotone(name: str, idx: np.ndarray) -> None:
    """An index array (from :func:`index_array`) that never decreases."""
    bad = _cpu.first_decrease(idx)
    if bad >= 0:
        raise ValueError(f"{name} must be monotone non-decreasing, but drops from {int(idx[bad - 1])} to {int(idx[bad])} at position {bad}")
