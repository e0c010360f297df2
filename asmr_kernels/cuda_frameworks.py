"""Device arrays of CuPy and torch, and of anything exposing
``__cuda_array_interface__`` or a CUDA DLPack capsule, behind one interface.

A call's :class:`Frame` (from :func:`frame`) is the framework and device of
its first device input: other inputs are adopted into it (host data is
uploaded) and outputs are allocated there.
"""

from __future__ import annotations

import contextlib
import functools
import importlib.util
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class _DType:
    kind: str  # numpy kind: f, i, u, b, c, ...
    itemsize: int
    name: str  # numpy-style name ("bfloat16" for torch's)


class _Cupy:
    name = "cupy"

    def __init__(self) -> None:
        import cupy

        self.cp = cupy

    def owns(self, a) -> bool:
        return isinstance(a, self.cp.ndarray)

    def device_of(self, a) -> int:
        return int(a.device.id)

    def dtype(self, a) -> _DType:
        return _DType(a.dtype.kind, a.dtype.itemsize, a.dtype.name)

    def shape(self, a) -> tuple:
        return tuple(a.shape)

    def ptr(self, a) -> int:
        return int(a.data.ptr)

    def strides(self, a) -> tuple:  # in elements
        return tuple(s // a.dtype.itemsize for s in a.strides)

    def byte_strides_ok(self, a) -> bool:
        return all(s % a.dtype.itemsize == 0 for s in a.strides)

    def contiguous(self, a, dtype=None):
        return self.cp.ascontiguousarray(a, dtype=dtype)

    def empty(self, shape, dtype):
        return self.cp.empty(shape, dtype=dtype)

    def full(self, shape, value, dtype):
        return self.cp.full(shape, value, dtype=dtype)

    def upload(self, host: np.ndarray):
        return self.cp.asarray(host)

    def download(self, a) -> np.ndarray:
        return self.cp.asnumpy(a)

    def reshape(self, a, shape):
        return a.reshape(shape)

    def scope(self, device: int):
        return self.cp.cuda.Device(device)

    def stream(self, device: int) -> int:
        with self.cp.cuda.Device(device):
            return int(self.cp.cuda.get_current_stream().ptr)

    def current_device(self) -> int:
        return int(self.cp.cuda.Device().id)

    def from_foreign(self, a):
        if hasattr(a, "__cuda_array_interface__"):
            return self.cp.asarray(a)
        return self.cp.from_dlpack(a)


class _Torch:
    name = "torch"

    def __init__(self) -> None:
        import torch

        self.torch = torch
        t = torch
        self._to_np = {t.float32: np.float32, t.float64: np.float64, t.float16: np.float16,
                       t.int8: np.int8, t.int16: np.int16, t.int32: np.int32, t.int64: np.int64,
                       t.uint8: np.uint8, t.bool: np.bool_}
        for nm, npt in (("uint16", np.uint16), ("uint32", np.uint32), ("uint64", np.uint64)):
            if hasattr(t, nm):
                self._to_np[getattr(t, nm)] = npt
        self._from_np = {np.dtype(v): k for k, v in self._to_np.items()}

    def owns(self, a) -> bool:
        return isinstance(a, self.torch.Tensor) and a.is_cuda

    def device_of(self, a) -> int:
        return int(a.device.index if a.device.index is not None else self.torch.cuda.current_device())

    def dtype(self, a) -> _DType:
        npt = self._to_np.get(a.dtype)
        if npt is not None:
            d = np.dtype(npt)
            return _DType(d.kind, d.itemsize, d.name)
        if a.dtype == self.torch.bfloat16:
            return _DType("f", 2, "bfloat16")
        return _DType("c" if a.is_complex() else "V", a.element_size(), str(a.dtype))

    def shape(self, a) -> tuple:
        return tuple(a.shape)

    def ptr(self, a) -> int:
        return int(a.data_ptr())

    def strides(self, a) -> tuple:
        return tuple(a.stride())

    def byte_strides_ok(self, a) -> bool:
        return True

    def contiguous(self, a, dtype=None):
        if dtype is not None:
            a = a.to(dtype=self._from_np[np.dtype(dtype)])
        return a.contiguous()

    def empty(self, shape, dtype):
        return self.torch.empty(shape, dtype=self._from_np[np.dtype(dtype)],
                                device=self.torch.device("cuda", self.torch.cuda.current_device()))

    def full(self, shape, value, dtype):
        return self.torch.full(shape, value, dtype=self._from_np[np.dtype(dtype)],
                               device=self.torch.device("cuda", self.torch.cuda.current_device()))

    def upload(self, host: np.ndarray):
        return self.torch.as_tensor(np.ascontiguousarray(host),
                                    device=self.torch.device("cuda", self.torch.cuda.current_device()))

    def download(self, a) -> np.ndarray:
        return a.detach().cpu().numpy()

    def reshape(self, a, shape):
        return a.reshape(shape)

    def scope(self, device: int):
        return self.torch.cuda.device(device)

    def stream(self, device: int) -> int:
        return int(self.torch.cuda.current_stream(device).cuda_stream)

    def current_device(self) -> int:
        return int(self.torch.cuda.current_device())

    def from_foreign(self, a):
        if hasattr(a, "__cuda_array_interface__"):
            return self.torch.as_tensor(a, device="cuda")
        return self.torch.from_dlpack(a)


@functools.lru_cache(maxsize=None)
def adapter(name: str):
    """The adapter of a framework, "cupy" or "torch" (made once)."""
    return _Cupy() if name == "cupy" else _Torch()


def default_framework_name() -> str:
    """CuPy when it imports, else torch."""
    if importlib.util.find_spec("cupy") is not None:
        try:
            import cupy  # noqa: F401

            return "cupy"
        except Exception:
            pass
    return "torch"


_KDL_CUDA, _KDL_CUDA_MANAGED = 2, 13


def classify(a) -> tuple[str, int | None] | None:
    """(framework, device) of a device array; None for host data."""
    if a is None:
        return None
    mod = type(a).__module__ or ""
    if mod.startswith("cupy"):
        fw = adapter("cupy")
        if fw.owns(a):
            return "cupy", fw.device_of(a)
    if mod.startswith("torch"):
        fw = adapter("torch")
        if fw.owns(a):
            return "torch", fw.device_of(a)
        return None  # a CPU tensor
    if hasattr(a, "__cuda_array_interface__"):
        return default_framework_name(), None
    if hasattr(a, "__dlpack_device__"):
        try:
            dev_type, dev_id = a.__dlpack_device__()
        except Exception:
            return None
        if int(dev_type) in (_KDL_CUDA, _KDL_CUDA_MANAGED):
            return default_framework_name(), int(dev_id)
    return None


class Frame:
    """One call's framework and device: adopts inputs, allocates outputs."""

    def __init__(self, fw_name: str, device: int) -> None:
        self.fw = adapter(fw_name)
        self.device = device

    @contextlib.contextmanager
    def scope(self):
        with self.fw.scope(self.device):
            yield self

    @property
    def stream(self) -> int:
        return self.fw.stream(self.device)

    def adopt(self, name: str, a):
        """a as an array of this frame's framework on its device."""
        fw = self.fw
        if fw.owns(a):
            out = a
        else:
            kind = classify(a)
            if kind is not None:
                out = fw.from_foreign(a)
            elif type(a).__module__.startswith("torch"):  # CPU tensor
                out = fw.upload(a.detach().numpy())
            else:
                out = fw.upload(np.asarray(a))
        dev = fw.device_of(out)
        if dev != self.device:
            raise ValueError(f"{name} is on CUDA device {dev} but the other inputs are on device {self.device}")
        return out

    def size(self, a) -> int:
        return int(np.prod(self.fw.shape(a), dtype=np.int64))

    def ptr(self, a) -> int:
        return 0 if a is None else self.fw.ptr(a)

    def empty(self, shape, dtype):
        return self.fw.empty(shape, dtype)


def frame(*candidates) -> Frame:
    """The frame of the first device array among the candidates (else the default framework
    on its current device)."""
    for a in candidates:
        kind = classify(a)
        if kind is not None:
            fw_name, dev = kind
            return Frame(fw_name, adapter(fw_name).current_device() if dev is None else dev)
    name = default_framework_name()
    return Frame(name, adapter(name).current_device())
