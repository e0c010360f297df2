"""A NumPy stand-in for the part of CuPy that asmr_kernels.cuda, tests/kernels/test_cuda.py
and bench/gpu_check.py use, for running them against the CPU emulation of the
CUDA kernels: "device" pointers are host pointers, everything is synchronous."""

import numpy as np

from . import cuda  # noqa: F401

__version__ = "numpy-stand-in"
float16, float32, int32, int64, uint8 = np.float16, np.float32, np.int32, np.int64, np.uint8
linalg = np.linalg


class _Memory:
    def __init__(self, ptr):
        self.ptr = ptr


class _Device:
    id = 0


class ndarray(np.ndarray):
    @property
    def data(self):
        return _Memory(self.__array_interface__["data"][0])

    @property
    def device(self):
        return _Device()

    def get(self):
        return asnumpy(self)


def _wrap(x):
    if isinstance(x, np.ndarray) and not isinstance(x, ndarray):
        return x.view(ndarray)
    if isinstance(x, tuple):
        return tuple(_wrap(v) for v in x)
    return x


def __getattr__(name):  # everything else: NumPy's function, returning "device" arrays
    f = getattr(np, name)
    return (lambda *a, **k: _wrap(f(*a, **k))) if callable(f) else f


def empty(shape, dtype=np.float64):
    a = np.empty(shape, dtype=dtype)
    if a.dtype.kind == "f":  # uninitialised memory should show when read
        a.fill(np.nan)
    elif a.dtype.kind in "iu":
        a.fill(np.iinfo(a.dtype).max // 3)
    return a.view(ndarray)


def full(shape, value, dtype=None):
    return np.full(shape, value, dtype=dtype).view(ndarray)


def asarray(a, dtype=None):
    return np.array(np.asarray(a), dtype=dtype, copy=True).view(ndarray)  # an upload copies


def ascontiguousarray(a, dtype=None):
    if isinstance(a, ndarray) and a.flags.c_contiguous and dtype in (None, a.dtype):
        return a
    return np.ascontiguousarray(np.asarray(a).view(np.ndarray), dtype=dtype).view(ndarray)


def asnumpy(a):
    return np.array(np.asarray(a).view(np.ndarray), copy=True)


def from_dlpack(a):
    raise NotImplementedError("the stand-in has no DLPack")


class _Pool:
    def free_all_blocks(self):
        pass


def get_default_memory_pool():
    return _Pool()
