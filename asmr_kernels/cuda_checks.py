"""Arguments of the CUDA kernels: device arrays of the kernels' types, and
checks of their contents run on the device and read back with one copy.

Each failure is a ValueError naming the argument, raised before any compute
kernel runs, as on the CPU.
"""

from __future__ import annotations

import numpy as np

from .checks import I64_MAX
from .cuda_frameworks import Frame
from .cuda_runtime import INT32, INT64, native


def index_array(fr: Frame, name: str, a):
    """A 1-D int32 or int64 contiguous device array (the CPU's casting rules)."""
    arr = fr.adopt(name, a)
    shape = fr.fw.shape(arr)
    if len(shape) != 1:
        raise ValueError(f"{name} must be 1-D, got shape {shape}")
    dt = fr.fw.dtype(arr)
    if dt.kind not in "iu":
        if shape[0] == 0 and dt.kind == "f":
            return fr.empty((0,), np.int64)
        raise ValueError(f"{name} must hold integers, got dtype {dt.name} (cannot be safely cast)")
    if dt.name in ("int32", "int64"):
        return fr.fw.contiguous(arr)
    if dt.kind == "u" and dt.itemsize == 8 and shape[0]:
        if int(fr.fw.download(arr.max())) > I64_MAX:
            raise ValueError(f"{name} holds values beyond int64")
    return fr.fw.contiguous(arr, np.int64 if dt.itemsize >= 4 else np.int32)


def float_array(fr: Frame, name: str, a, *, ndim: tuple[int, ...]):
    """A float32 contiguous device array of one of the given ranks."""
    arr = fr.adopt(name, a)
    shape = fr.fw.shape(arr)
    if len(shape) not in ndim:
        want = " or ".join(f"{d}-D" for d in ndim)
        raise ValueError(f"{name} must be {want}, got shape {shape}")
    dt = fr.fw.dtype(arr)
    if dt.kind not in "fiu":
        raise ValueError(f"{name} must hold real numbers, got dtype {dt.name} (cannot be safely cast)")
    return fr.fw.contiguous(arr, np.float32)


def itype(fr: Frame, a) -> int:
    return INT32 if fr.fw.dtype(a).name == "int32" else INT64


class Checks:
    """Device-side checks queued together and read back with one copy."""

    def __init__(self, fr: Frame) -> None:
        self.fr = fr
        self.jobs: list[tuple] = []

    def index(self, a, lo: int, hi: int) -> int:
        """Row: [first out of [lo, hi), first decrease, max step, a[0], a[-1]]."""
        self.jobs.append(("index", a, lo, hi))
        return len(self.jobs) - 1

    def real(self, a) -> int:
        """Row: [first NaN/inf, first negative, ...]."""
        self.jobs.append(("real", a))
        return len(self.jobs) - 1

    def run(self) -> np.ndarray:
        fr = self.fr
        if not self.jobs:
            return np.zeros((0, 5), dtype=np.int64)
        status = fr.empty((len(self.jobs), 5), np.int64)
        base, stream = fr.ptr(status), fr.stream
        for r, job in enumerate(self.jobs):
            row = base + 5 * 8 * r
            if job[0] == "index":
                a, lo, hi = job[1], job[2], job[3]
                native.check_index(fr.device, itype(fr, a), fr.ptr(a), fr.size(a), lo, hi, row, stream)
            else:
                a = job[1]
                native.check_real(fr.device, fr.ptr(a), fr.size(a), row, stream)
        return fr.fw.download(status)


def _value_at(fr: Frame, a, pos: int) -> int:
    return int(fr.fw.download(a[pos:pos + 1])[0])


def raise_real(st: np.ndarray, row: int, name: str, *, nonnegative: bool) -> None:
    if st[row, 0] >= 0:
        raise ValueError(f"{name} contains NaN or infinite values")
    if nonnegative and st[row, 1] >= 0:
        raise ValueError(f"{name} contains negative values")


def raise_range(fr: Frame, st: np.ndarray, row: int, name: str, a, upper: int, what: str) -> None:
    pos = int(st[row, 0])
    if pos >= 0:
        raise ValueError(f"{name} holds index {_value_at(fr, a, pos)}, out of range for {upper} {what} "
                         f"(first at position {pos})")
