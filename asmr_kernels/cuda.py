"""CUDA kernels: the public, validating face of asmr_kernels._cuda.

The functions mirror :mod:`asmr_kernels.cpu` (same names, keywords, defaults
and results) but take and return device arrays:

- inputs may be CuPy arrays, torch CUDA tensors, anything exposing
  ``__cuda_array_interface__`` or a CUDA DLPack capsule, or host arrays
  (NumPy, lists), which are uploaded;
- results are arrays of the framework of the first device input (the graph
  for ``diffuse``/``spread``, ``claims`` for ``pair_cosine``; CuPy, else
  torch, when every input is on the host), on that input's device;
- kernels run on the framework's current stream of that device and are
  asynchronous, except that validation reads a few numbers back (one small
  device-to-host copy per call; ``spread`` also reads its per-query counts).

Inputs are validated as on the CPU (shapes, dtypes, index ranges, finite and
non-negative weights, monotone ``indptr``...) by small device kernels, and bad
input raises ValueError naming the argument before any compute kernel runs.

Importing this module never fails. When the package was built without CUDA,
no device is usable or neither CuPy nor torch is installed,
:func:`is_available` is False, :func:`unavailable_reason` says why, and every
kernel raises RuntimeError with that reason.

Differences from the CPU kernels: sums run in a different order (results
agree to float32 rounding, and ``spread`` accumulates with atomics, so its
activations may differ in the last bits from run to run); ``spread`` returns
the nodes of a query in no particular order and has no per-query timings
(``elapsed_ns`` is None); ``num_threads`` is accepted and ignored.
"""

from __future__ import annotations

import contextlib
import functools
import importlib.util
from dataclasses import dataclass
from typing import Any

import numpy as np

from .checks import count as _count, real as _real  # scalar arguments follow the CPU rules

try:
    from . import _cuda
except ImportError as exc:  # built without CUDA, or the module cannot load
    _cuda = None
    if importlib.util.find_spec(f"{__package__}._cuda") is None:
        _IMPORT_REASON = "asmr was built without CUDA (no asmr_kernels._cuda module)"
    else:
        _IMPORT_REASON = f"asmr_kernels._cuda failed to import: {exc}"
else:
    _IMPORT_REASON = None

__all__ = [
    "CSRGraph",
    "SpreadResult",
    "as_graph",
    "device_info",
    "diffuse",
    "is_available",
    "pair_cosine",
    "spread",
    "unavailable_reason",
]

_I32_MAX = int(np.iinfo(np.int32).max)
_I64_MAX = int(np.iinfo(np.int64).max)
_INT32, _INT64 = 0, 1  # cuda.h IndexType
_FLOAT32, _FLOAT16 = 0, 1  # cuda.h RealType

# Memory spread may use per launch for its hash tables and for staging its
# results; queries are launched in chunks that fit.
_SPREAD_WORKSPACE_BYTES = 512 << 20
_SPREAD_STAGING_BYTES = 512 << 20
_SPREAD_BYTES_PER_RESULT = 8 + 4 + 4 + 4 + 8


# ---- availability ---------------------------------------------------------------


@functools.lru_cache(maxsize=1)
def unavailable_reason() -> str | None:
    """Why the CUDA backend cannot run here, or None when it can."""
    if _cuda is None:
        return _IMPORT_REASON
    try:
        count, why = _cuda.device_count()
    except Exception as exc:  # pragma: no cover - defensive
        return f"no CUDA device: {exc}"
    if count <= 0:
        return why or "no CUDA device"
    problems = []
    if importlib.util.find_spec("cupy") is not None:
        try:
            import cupy  # noqa: F401

            return None
        except Exception as exc:  # e.g. a CuPy built for another CUDA
            problems.append(f"CuPy failed to import ({exc})")
    else:
        problems.append("CuPy is not installed")
    if importlib.util.find_spec("torch") is not None:
        try:
            import torch

            if torch.cuda.is_available():
                return None
            problems.append("torch has no CUDA (a CPU build, or it sees no device)")
        except Exception as exc:
            problems.append(f"torch failed to import ({exc})")
    else:
        problems.append("torch is not installed")
    return "no array framework for device arrays: " + "; ".join(problems)


def is_available() -> bool:
    """True when the CUDA kernels can run: built with CUDA, a device, and CuPy or torch."""
    return unavailable_reason() is None


def _require() -> None:
    why = unavailable_reason()
    if why is not None:
        raise RuntimeError(f"the asmr CUDA backend is unavailable: {why}")


def device_info(device: int = 0) -> dict:
    """Runtime/driver versions and the device's multiprocessors and compute capability."""
    _require()
    rt, drv = _cuda.versions()
    sm, major, minor = _cuda.device_attributes(int(device))
    return {"runtime_version": rt, "driver_version": drv, "device": int(device),
            "multiprocessors": sm, "compute_capability": (major, minor)}


@functools.lru_cache(maxsize=None)
def _sm_count(device: int) -> int:
    return int(_cuda.device_attributes(device)[0])


# ---- array frameworks ------------------------------------------------------------


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
def _framework(name: str):
    return _Cupy() if name == "cupy" else _Torch()


def _default_framework_name() -> str:
    if importlib.util.find_spec("cupy") is not None:
        try:
            import cupy  # noqa: F401

            return "cupy"
        except Exception:
            pass
    return "torch"


_KDL_CUDA, _KDL_CUDA_MANAGED = 2, 13


def _classify(a) -> tuple[str, int | None] | None:
    """(framework, device) of a device array; None for host data."""
    if a is None:
        return None
    mod = type(a).__module__ or ""
    if mod.startswith("cupy"):
        fw = _framework("cupy")
        if fw.owns(a):
            return "cupy", fw.device_of(a)
    if mod.startswith("torch"):
        fw = _framework("torch")
        if fw.owns(a):
            return "torch", fw.device_of(a)
        return None  # a CPU tensor
    if hasattr(a, "__cuda_array_interface__"):
        return _default_framework_name(), None
    if hasattr(a, "__dlpack_device__"):
        try:
            dev_type, dev_id = a.__dlpack_device__()
        except Exception:
            return None
        if int(dev_type) in (_KDL_CUDA, _KDL_CUDA_MANAGED):
            return _default_framework_name(), int(dev_id)
    return None


class _Frame:
    """One call's framework and device: adopts inputs, allocates outputs."""

    def __init__(self, fw_name: str, device: int) -> None:
        self.fw = _framework(fw_name)
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
            kind = _classify(a)
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


def _frame(*candidates) -> _Frame:
    for a in candidates:
        kind = _classify(a)
        if kind is not None:
            fw_name, dev = kind
            return _Frame(fw_name, _framework(fw_name).current_device() if dev is None else dev)
    name = _default_framework_name()
    return _Frame(name, _framework(name).current_device())


# ---- array arguments -----------------------------------------------------------------


def _index_array(fr: _Frame, name: str, a):
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
        if int(fr.fw.download(arr.max())) > _I64_MAX:
            raise ValueError(f"{name} holds values beyond int64")
    return fr.fw.contiguous(arr, np.int64 if dt.itemsize >= 4 else np.int32)


def _float_array(fr: _Frame, name: str, a, *, ndim: tuple[int, ...]):
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


def _itype(fr: _Frame, a) -> int:
    return _INT32 if fr.fw.dtype(a).name == "int32" else _INT64


class _Checks:
    """Device-side checks queued together and read back with one copy."""

    def __init__(self, fr: _Frame) -> None:
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
                _cuda.check_index(fr.device, _itype(fr, a), fr.ptr(a), fr.size(a), lo, hi, row, stream)
            else:
                a = job[1]
                _cuda.check_real(fr.device, fr.ptr(a), fr.size(a), row, stream)
        return fr.fw.download(status)


def _value_at(fr: _Frame, a, pos: int) -> int:
    return int(fr.fw.download(a[pos:pos + 1])[0])


def _raise_real(st: np.ndarray, row: int, name: str, *, nonnegative: bool) -> None:
    if st[row, 0] >= 0:
        raise ValueError(f"{name} contains NaN or infinite values")
    if nonnegative and st[row, 1] >= 0:
        raise ValueError(f"{name} contains negative values")


def _raise_range(fr: _Frame, st: np.ndarray, row: int, name: str, a, upper: int, what: str) -> None:
    pos = int(st[row, 0])
    if pos >= 0:
        raise ValueError(f"{name} holds index {_value_at(fr, a, pos)}, out of range for {upper} {what} "
                         f"(first at position {pos})")


# ---- graph ---------------------------------------------------------------------


class CSRGraph:
    """A weighted directed graph in CSR form on a CUDA device, validated once.

    The device counterpart of :class:`asmr_kernels.CSRGraph`: row ``i`` of
    ``(indptr, indices, weights)`` lists the edges ``i -> j``; weights must be
    finite and non-negative (``None``: all 1); duplicates and self-loops are
    allowed. Indices are int32 when ``indices`` is int32 and the sizes fit,
    else int64. :meth:`transpose` (used by :func:`diffuse`) is computed on the
    device once and cached. :meth:`from_cpu` uploads a CPU graph.
    """

    __slots__ = ("indptr", "indices", "weights", "num_nodes", "framework", "device", "_transpose")

    def __init__(self, indptr, indices, weights=None, num_nodes: int | None = None) -> None:
        _require()
        fr = _frame(indptr, indices, weights)
        with fr.scope():
            ip = _index_array(fr, "indptr", indptr)
            ix = _index_array(fr, "indices", indices)
            if fr.size(ip) == 0:
                raise ValueError("indptr must have num_nodes + 1 entries, got an empty array")
            n = fr.size(ip) - 1
            if num_nodes is not None and _count("num_nodes", num_nodes, maximum=_I64_MAX) != n:
                raise ValueError(f"indptr has {n + 1} entries, so the graph has {n} nodes, not num_nodes={num_nodes}")
            nnz = fr.size(ix)
            if weights is None:
                w = fr.fw.full((nnz,), 1.0, np.float32)
            else:
                w = _float_array(fr, "weights", weights, ndim=(1,))
            if fr.size(w) != nnz:
                raise ValueError(f"weights has {fr.size(w)} entries but indices has {nnz}")
            checks = _Checks(fr)
            r_ip = checks.index(ip, 0, nnz + 1)
            r_w = checks.real(w)
            r_ix = checks.index(ix, 0, n)
            st = checks.run()
            if st[r_ip, 3] != 0:
                raise ValueError(f"indptr must start at 0, got {int(st[r_ip, 3])}")
            if st[r_ip, 1] >= 0:
                raise ValueError("indptr must be monotone non-decreasing")
            if st[r_ip, 4] != nnz:
                raise ValueError(f"indptr ends at {int(st[r_ip, 4])} but indices has {nnz} entries")
            _raise_real(st, r_w, "weights", nonnegative=True)
            _raise_range(fr, st, r_ix, "indices", ix, n, "nodes")
            small = fr.fw.dtype(ix).name == "int32" and nnz <= _I32_MAX and n <= _I32_MAX
            dtype = np.int32 if small else np.int64
            self.indptr = fr.fw.contiguous(ip, dtype)
            self.indices = fr.fw.contiguous(ix, dtype)
        self.weights = w
        self.num_nodes = n
        self.framework = fr.fw.name
        self.device = fr.device
        self._transpose = None

    @classmethod
    def _trusted(cls, indptr, indices, weights, num_nodes: int, fr: _Frame) -> "CSRGraph":
        g = object.__new__(cls)
        g.indptr, g.indices, g.weights, g.num_nodes = indptr, indices, weights, int(num_nodes)
        g.framework, g.device, g._transpose = fr.fw.name, fr.device, None
        return g

    @classmethod
    def from_cpu(cls, graph, framework: str | None = None, device: int | None = None) -> "CSRGraph":
        """Uploads an :class:`asmr_kernels.CSRGraph` (already validated) to a device."""
        _require()
        if not all(hasattr(graph, k) for k in ("indptr", "indices", "weights", "num_nodes")):
            raise ValueError(f"graph must be an asmr_kernels.CSRGraph, got {type(graph).__name__}")
        name = framework or _default_framework_name()
        if name not in ("cupy", "torch"):
            raise ValueError(f"framework must be 'cupy' or 'torch', got {framework!r}")
        fw = _framework(name)
        fr = _Frame(name, fw.current_device() if device is None else int(device))
        with fr.scope():
            return cls._trusted(fw.upload(graph.indptr), fw.upload(graph.indices),
                                fw.upload(graph.weights), graph.num_nodes, fr)

    def _frame(self) -> _Frame:
        return _Frame(self.framework, self.device)

    @property
    def num_edges(self) -> int:
        return self._frame().size(self.indices)

    @property
    def index_dtype(self) -> np.dtype:
        return np.dtype(np.int32) if self._frame().fw.dtype(self.indices).name == "int32" else np.dtype(np.int64)

    def transpose(self) -> "CSRGraph":
        """The graph with every edge reversed (computed on the device, cached)."""
        if self._transpose is None:
            fr = self._frame()
            with fr.scope():
                n, nnz = self.num_nodes, self.num_edges
                it = _itype(fr, self.indices)
                dtype = np.int32 if it == _INT32 else np.int64
                t_ip = fr.empty((n + 1,), dtype)
                t_ix = fr.empty((nnz,), dtype)
                t_w = fr.empty((nnz,), np.float32)
                nbytes = int(_cuda.transpose_workspace(fr.device, it, n, nnz))
                ws = fr.empty((max(nbytes, 1),), np.uint8)
                _cuda.transpose_csr(fr.device, it, n, nnz, fr.ptr(self.indptr), fr.ptr(self.indices),
                                    fr.ptr(self.weights), fr.ptr(t_ip), fr.ptr(t_ix), fr.ptr(t_w),
                                    fr.ptr(ws), nbytes, fr.stream)
            t = CSRGraph._trusted(t_ip, t_ix, t_w, n, fr)
            t._transpose = self
            self._transpose = t
        return self._transpose

    def __repr__(self) -> str:
        return (f"cuda.CSRGraph(num_nodes={self.num_nodes}, num_edges={self.num_edges}, "
                f"index_dtype={self.index_dtype}, framework={self.framework}, device={self.device})")


def _graph_probe(graph):
    """A device array of the graph, to pick the call's framework, if any."""
    if isinstance(graph, CSRGraph):
        return graph.indptr
    if isinstance(graph, tuple) and graph:
        return graph[0]
    if hasattr(graph, "indptr") and _classify(getattr(graph, "indptr")) is not None:
        return graph.indptr
    return None


def as_graph(graph, like: str | None = None) -> CSRGraph:
    """A device CSRGraph from a CSRGraph (device or CPU), a CuPy/SciPy sparse
    matrix, or (indptr, indices[, weights]). Host graphs are uploaded with
    framework ``like`` (default: CuPy if installed, else torch)."""
    if isinstance(graph, CSRGraph):
        return graph
    if isinstance(graph, tuple) and len(graph) in (2, 3):
        return CSRGraph(*graph)
    if hasattr(graph, "tocsr") and hasattr(graph, "shape"):  # cupyx or scipy sparse
        m = graph.tocsr()
        if m.shape[0] != m.shape[1]:
            raise ValueError(f"matrix must be square, got shape {m.shape}")
        if _classify(m.indptr) is None:  # host SciPy: duplicates are summed as on the CPU
            m.sum_duplicates()
            fw = _framework(like or _default_framework_name())
            return CSRGraph(fw.upload(m.indptr), fw.upload(m.indices), fw.upload(m.data),
                            num_nodes=m.shape[0])
        return CSRGraph(m.indptr, m.indices, m.data, num_nodes=m.shape[0])
    if all(hasattr(graph, k) for k in ("indptr", "indices", "weights", "num_nodes")):
        return CSRGraph.from_cpu(graph, framework=like)
    raise ValueError("graph must be a cuda.CSRGraph, an asmr_kernels.CSRGraph, a sparse matrix or "
                     f"(indptr, indices, weights), got {type(graph).__name__}")


def _graph_for(graph, fr: _Frame) -> CSRGraph:
    if isinstance(graph, tuple) and len(graph) in (2, 3):  # host parts go to the call's framework
        names = ("indptr", "indices", "weights")
        graph = tuple(None if a is None else fr.adopt(nm, a) for nm, a in zip(names, graph))
    g = as_graph(graph, like=fr.fw.name)
    if g.framework != fr.fw.name or g.device != fr.device:
        raise ValueError(f"graph lives in {g.framework} on device {g.device}, "
                         f"but the call runs in {fr.fw.name} on device {fr.device}")
    return g


# ---- diffuse ---------------------------------------------------------------------


def diffuse(graph, x, *, steps: int = 1, decay: float = 1.0, restart: float = 0.0,
            personalization=None, edge_threshold: float = 0.0, node_threshold: float = 0.0,
            num_threads: int = 0):
    """Dense diffusion of a batch of vectors over the graph, on the GPU.

    Same rule and arguments as :func:`asmr_kernels.diffuse`: ``steps`` times
    ``X <- decay * (A_masked^T X) + restart * P``, entries below
    ``node_threshold`` set to 0, ``A_masked`` keeping edges of weight >=
    ``edge_threshold``, ``P = personalization`` (default ``x``). ``x`` is
    ``(n,)`` or ``(n, b)``; returns a float32 device array of that shape.
    """
    _require()
    fr = _frame(_graph_probe(graph), x, personalization)
    with fr.scope():
        g = _graph_for(graph, fr)
        xd = _float_array(fr, "x", x, ndim=(1, 2))
        shape = fr.fw.shape(xd)
        if shape[0] != g.num_nodes:
            raise ValueError(f"x has {shape[0]} rows but the graph has {g.num_nodes} nodes")
        b = 1 if len(shape) == 1 else shape[1]
        steps = _count("steps", steps)
        decay = _real("decay", decay, minimum=0.0)
        restart = _real("restart", restart, minimum=0.0)
        edge_threshold = _real("edge_threshold", edge_threshold)
        node_threshold = _real("node_threshold", node_threshold)
        _count("num_threads", num_threads, maximum=4096)
        checks = _Checks(fr)
        r_x = checks.real(xd)
        p, r_p = None, None
        if restart != 0.0:
            if personalization is None:
                p = xd
            else:
                p = _float_array(fr, "personalization", personalization, ndim=(len(shape),))
                if fr.fw.shape(p) != shape:
                    raise ValueError(f"personalization has shape {fr.fw.shape(p)} but x has shape {shape}")
                r_p = checks.real(p)
        st = checks.run()
        _raise_real(st, r_x, "x", nonnegative=False)
        if r_p is not None:
            _raise_real(st, r_p, "personalization", nonnegative=False)
        out = fr.empty(shape, np.float32)
        n = g.num_nodes
        if n == 0 or b == 0:
            return out
        work = fr.empty(shape, np.float32) if steps > 1 else None
        t = g.transpose()
        _cuda.diffuse(fr.device, _itype(fr, t.indices), n, t.num_edges, fr.ptr(t.indptr),
                      fr.ptr(t.indices), fr.ptr(t.weights), b, fr.ptr(xd), fr.ptr(p), steps, decay,
                      restart, edge_threshold, node_threshold, fr.ptr(out), fr.ptr(work), fr.stream)
        return out


# ---- spread -----------------------------------------------------------------------


@dataclass
class SpreadResult:
    """Reached nodes of a batch of queries, CSR-style, as device arrays:
    query ``q`` owns ``[ptr[q], ptr[q+1])`` of each array. Fields as in
    :class:`asmr_kernels.SpreadResult`, except that the nodes of a query come
    in no particular order and ``elapsed_ns`` is None (no per-query timing on
    the GPU). :meth:`to_cpu` copies it into an ``asmr_kernels.SpreadResult``.
    """

    ptr: Any
    node: Any
    activation: Any
    hop: Any
    strength: Any
    predecessor: Any
    elapsed_ns: Any
    edges_touched: int

    def __len__(self) -> int:
        return int(self.ptr.shape[0]) - 1

    def to_cpu(self):
        from .cpu import SpreadResult as CpuSpreadResult

        def host(a):
            return a.get() if hasattr(a, "get") and not hasattr(a, "cpu") else a.detach().cpu().numpy()

        return CpuSpreadResult(host(self.ptr), host(self.node), host(self.activation), host(self.hop),
                               host(self.strength), host(self.predecessor),
                               np.zeros(len(self), dtype=np.int64), int(self.edges_touched))


def _pow2_at_least(v: int) -> int:
    p = 1
    while p < v:
        p <<= 1
    return p


def _initial_capacity(max_seeds: int, avg_degree: float, depth: int, n: int, cap_max: int) -> int:
    # Nodes a query may touch: seeds * (1 + d + ... + d^depth), at most n.
    reach, frontier = float(max(max_seeds, 1)), float(max(max_seeds, 1))
    for _ in range(depth):
        if reach >= n:
            break
        frontier *= max(avg_degree, 1.0)
        reach += frontier
    reach = min(reach, float(n))
    return min(max(_pow2_at_least(int(2 * reach) + 1), 64), cap_max)


def spread(graph, seed_ptr, seed_nodes, seed_scores, *, depth: int = 2, decay: float = 0.5,
           restart: float = 1.0, edge_threshold: float = 0.0, node_threshold: float = 0.0,
           num_threads: int = 0, capacity: int | None = None) -> SpreadResult:
    """Spreading activation from sparse seeds on the GPU, one thread block per query.

    Same rule, arguments and fields as :func:`asmr_kernels.spread` (see
    :class:`SpreadResult` for the differences). ``capacity`` (GPU only) is the
    initial hash-table size per query (rounded up to a power of two; default:
    estimated from the seeds, the average degree and ``depth``); a query that
    reaches more than ``capacity / 2`` nodes is rerun with twice the capacity,
    up to ``2 * num_nodes``. Needs fewer than 2^31 nodes.
    """
    _require()
    fr = _frame(_graph_probe(graph), seed_ptr, seed_nodes, seed_scores)
    with fr.scope():
        g = _graph_for(graph, fr)
        sp = _index_array(fr, "seed_ptr", seed_ptr)
        sn = _index_array(fr, "seed_nodes", seed_nodes)
        ss = _float_array(fr, "seed_scores", seed_scores, ndim=(1,))
        if fr.size(sp) == 0:
            raise ValueError("seed_ptr must have num_queries + 1 entries, got an empty array")
        num_seeds = fr.size(sn)
        if fr.size(ss) != num_seeds:
            raise ValueError(f"seed_scores has {fr.size(ss)} entries but seed_nodes has {num_seeds}")
        depth = _count("depth", depth, maximum=1 << 20)
        decay = _real("decay", decay, minimum=0.0)
        restart = _real("restart", restart, minimum=0.0)
        edge_threshold = _real("edge_threshold", edge_threshold)
        node_threshold = _real("node_threshold", node_threshold)
        _count("num_threads", num_threads, maximum=4096)
        if capacity is not None:
            capacity = _count("capacity", capacity, maximum=1 << 30)
        n = g.num_nodes
        if n > _I32_MAX:
            raise ValueError(f"graph has {n} nodes; the CUDA spread supports at most {_I32_MAX}")
        checks = _Checks(fr)
        r_sp = checks.index(sp, 0, num_seeds + 1)
        r_ss = checks.real(ss)
        r_sn = checks.index(sn, 0, n)
        st = checks.run()
        _raise_real(st, r_ss, "seed_scores", nonnegative=True)
        if st[r_sp, 3] != 0:
            raise ValueError(f"seed_ptr must start at 0, got {int(st[r_sp, 3])}")
        if st[r_sp, 1] >= 0:
            raise ValueError("seed_ptr must be monotone non-decreasing")
        if st[r_sp, 4] != num_seeds:
            raise ValueError(f"seed_ptr ends at {int(st[r_sp, 4])} but seed_nodes has {num_seeds} entries")
        _raise_range(fr, st, r_sn, "seed_nodes", sn, n, "nodes")

        it = _itype(fr, g.indices)
        sp = fr.fw.contiguous(sp, np.int64)
        sn = fr.fw.contiguous(sn, np.int32 if it == _INT32 else np.int64)
        q_total = fr.size(sp) - 1
        cap_max = max(2, min(1 << 30, _pow2_at_least(2 * max(n, 1))))
        if capacity is None:
            cap = _initial_capacity(int(st[r_sp, 2]), g.num_edges / max(n, 1), depth, n, cap_max)
        else:
            cap = min(max(_pow2_at_least(capacity), 2), cap_max)
        return _spread_batches(fr, g, it, sp, sn, ss, q_total, cap, cap_max, depth, decay, restart,
                               edge_threshold, node_threshold)


def _spread_launch(fr, g, it, sp, sn, ss, qids, cap, depth, decay, restart, et, nt):
    m = int(qids.size)
    half = cap // 2
    slice_bytes = int(_cuda.spread_workspace_bytes(1, cap))
    blocks = max(1, min(m, 4 * _sm_count(fr.device), _SPREAD_WORKSPACE_BYTES // slice_bytes))
    ws_bytes = int(_cuda.spread_workspace_bytes(blocks, cap))
    ws = fr.empty((ws_bytes,), np.uint8)
    # The first round runs queries 0..m-1 in order: no id list needed.
    identity = m > 0 and int(qids[0]) == 0 and int(qids[-1]) == m - 1 and bool(np.all(np.diff(qids) == 1))
    qdev = None if identity else fr.fw.upload(qids.astype(np.int64))
    count = fr.empty((m,), np.int64)
    edges = fr.empty((m,), np.int64)
    staging = (fr.empty((m * half,), np.int64), fr.empty((m * half,), np.float32),
               fr.empty((m * half,), np.int32), fr.empty((m * half,), np.float32),
               fr.empty((m * half,), np.int64))
    _cuda.spread(fr.device, it, g.num_nodes, fr.ptr(g.indptr), fr.ptr(g.indices), fr.ptr(g.weights),
                 m, fr.ptr(qdev), fr.ptr(sp), fr.ptr(sn), fr.ptr(ss), depth, decay, restart, et, nt,
                 cap, blocks, fr.ptr(ws), ws_bytes, fr.ptr(count), fr.ptr(edges),
                 *(fr.ptr(a) for a in staging), fr.stream)
    return count, edges, staging, half


def _result_arrays(fr: _Frame, size: int):
    return (fr.empty((size,), np.int64), fr.empty((size,), np.float32), fr.empty((size,), np.int32),
            fr.empty((size,), np.float32), fr.empty((size,), np.int64))


def _spread_batches(fr, g, it, sp, sn, ss, q_total, cap, cap_max, depth, decay, restart, et, nt):
    counts = np.full(q_total, -1, dtype=np.int64)
    edges_h = np.zeros(q_total, dtype=np.int64)
    # Per launch: (query ids, device counts, device source offsets, arrays).
    parts = []
    pending = np.arange(q_total, dtype=np.int64)
    first_round = True
    while pending.size:
        half = cap // 2
        chunk = max(1, _SPREAD_STAGING_BYTES // (half * _SPREAD_BYTES_PER_RESULT))
        overflowed = []
        for start in range(0, pending.size, chunk):
            qids = pending[start:start + chunk]
            m = int(qids.size)
            count, edges, staging, half = _spread_launch(fr, g, it, sp, sn, ss, qids, cap, depth,
                                                         decay, restart, et, nt)
            ch = fr.fw.download(count)
            eh = fr.fw.download(edges)
            ok = ch >= 0
            counts[qids[ok]] = ch[ok]
            edges_h[qids[ok]] = eh[ok]
            overflowed.append(qids[~ok])
            src = fr.fw.upload(np.arange(m, dtype=np.int64) * half)
            if first_round and m == q_total and ok.all():
                parts.append((qids, count, src, staging))  # the only launch: place directly
            elif ok.any():
                # Compact now, so that the staging is freed before the next launch.
                sizes = np.where(ok, ch, 0)
                local = np.zeros(m, dtype=np.int64)
                np.cumsum(sizes[:-1], out=local[1:])
                compact = _result_arrays(fr, int(sizes.sum()))
                local_dev = fr.fw.upload(local)
                _cuda.spread_gather(fr.device, m, fr.ptr(count), fr.ptr(src), fr.ptr(local_dev),
                                    *(fr.ptr(a) for a in staging), *(fr.ptr(a) for a in compact),
                                    fr.stream)
                parts.append((qids, count, local_dev, compact))
            del staging
        pending = np.concatenate(overflowed) if overflowed else pending[:0]
        first_round = False
        if pending.size:
            if cap >= cap_max:  # cannot happen: cap_max slots hold every node at load 1/2
                raise RuntimeError(f"spread: {pending.size} queries overflow a hash table of {cap} slots")
            cap = min(cap * 2, cap_max)
    ptr = np.zeros(q_total + 1, dtype=np.int64)
    np.cumsum(counts, out=ptr[1:])
    out = _result_arrays(fr, int(ptr[-1]))
    for qids, count, src, arrays in parts:
        dst = fr.fw.upload(ptr[qids])
        _cuda.spread_gather(fr.device, int(qids.size), fr.ptr(count), fr.ptr(src), fr.ptr(dst),
                            *(fr.ptr(a) for a in arrays), *(fr.ptr(a) for a in out), fr.stream)
    return SpreadResult(fr.fw.upload(ptr), *out, elapsed_ns=None, edges_touched=int(edges_h.sum()))


# ---- pair_cosine -----------------------------------------------------------------


def _matrix(fr: _Frame, name: str, a):
    """(device matrix, RealType, row stride in elements); rows are read in place."""
    arr = fr.adopt(name, a)
    shape = fr.fw.shape(arr)
    if len(shape) != 2:
        raise ValueError(f"{name} must be 2-D (rows x dim), got shape {shape}")
    dt = fr.fw.dtype(arr)
    if dt.name == "float16":
        rtype = _FLOAT16
    elif dt.name == "float32":
        rtype = _FLOAT32
    elif dt.kind in "fiu":
        arr, rtype = fr.fw.contiguous(arr, np.float32), _FLOAT32
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
    _require()
    fr = _frame(claims, units, claim_idx, unit_idx)
    with fr.scope():
        c, ctype, ldc = _matrix(fr, "claims", claims)
        u, utype, ldu = _matrix(fr, "units", units)
        (rc, d), (ru, du) = fr.fw.shape(c), fr.fw.shape(u)
        if d != du:
            raise ValueError(f"claims has rows of {d} values but units has rows of {du}")
        ci = _index_array(fr, "claim_idx", claim_idx)
        ui = _index_array(fr, "unit_idx", unit_idx)
        m = fr.size(ci)
        if m != fr.size(ui):
            raise ValueError(f"claim_idx has {m} entries but unit_idx has {fr.size(ui)}")
        _count("num_threads", num_threads, maximum=4096)
        checks = _Checks(fr)
        r_ci = checks.index(ci, 0, rc)
        r_ui = checks.index(ui, 0, ru)
        st = checks.run()
        _raise_range(fr, st, r_ci, "claim_idx", ci, rc, "claim rows")
        _raise_range(fr, st, r_ui, "unit_idx", ui, ru, "unit rows")
        if _itype(fr, ci) != _itype(fr, ui):
            ci, ui = fr.fw.contiguous(ci, np.int64), fr.fw.contiguous(ui, np.int64)
        out = fr.empty((m,), np.float32)
        if m:
            _cuda.pair_cosine(fr.device, ctype, utype, _itype(fr, ci), m, d, fr.ptr(c), ldc, fr.ptr(u),
                              ldu, fr.ptr(ci), fr.ptr(ui), bool(prenormalized), fr.ptr(out), fr.stream)
        return out


def apply_token_bitmask(logits, bitmask, indices=None) -> None:
    """``logits[r, t] = -inf`` where token t's bit is clear in ``bitmask[indices[r]]``, in place on the GPU.

    logits: float32 or float16 device array ``(batch, vocab)`` (or 1-D for one
    row), rows may be strided; bitmask: int32 ``(rows, words)`` in the layout of
    ``asmr.decoding`` (bit ``t & 31`` of word ``t >> 5``), on the device or on
    the host (then copied); indices: one bitmask row per logits row (default:
    row r for row r). Tokens past ``32 * words`` are masked.
    """
    _require()
    fr = _frame(logits, bitmask, indices)
    with fr.scope():
        if _classify(logits) is None:
            raise ValueError("logits must be a device array: the mask is applied in place")
        lg = fr.adopt("logits", logits)
        shape = fr.fw.shape(lg)
        if len(shape) == 1:
            lg = fr.fw.reshape(lg, (1, shape[0]))
            shape = (1, shape[0])
        if len(shape) != 2:
            raise ValueError(f"logits must be 1-D or 2-D, got shape {shape}")
        dt = fr.fw.dtype(lg)
        if dt.name not in ("float32", "float16"):
            raise ValueError(f"logits must be float32 or float16 on the GPU, got {dt.name}")
        strides = fr.fw.strides(lg) if fr.fw.byte_strides_ok(lg) else (0, 0)
        if strides[1] != 1 or (shape[0] > 1 and strides[0] < shape[1]):
            raise ValueError("logits rows must be contiguous (the mask is applied in place)")
        ld = int(strides[0]) if shape[0] > 1 else shape[1]
        mask = fr.adopt("bitmask", bitmask)
        mshape = fr.fw.shape(mask)
        if len(mshape) == 1:
            mask = fr.fw.reshape(mask, (1, mshape[0]))
            mshape = (1, mshape[0])
        if len(mshape) != 2 or fr.fw.dtype(mask).name != "int32":
            raise ValueError(f"bitmask must be a 1-D or 2-D int32 array, got {fr.fw.dtype(mask).name} {mshape}")
        mask = fr.fw.contiguous(mask)
        rows_ptr = 0
        if indices is None:
            if mshape[0] != shape[0]:
                raise ValueError(f"bitmask has {mshape[0]} rows for {shape[0]} logits rows; pass indices")
        else:
            idx = np.asarray(indices, dtype=np.int64)
            if idx.shape != (shape[0],) or (idx.size and (idx.min() < 0 or idx.max() >= mshape[0])):
                raise ValueError(f"indices must give one bitmask row in [0, {mshape[0]}) per logits row ({shape[0]})")
            rows = fr.fw.upload(idx.astype(np.int32))
            rows_ptr = fr.ptr(rows)
        rtype = _FLOAT16 if dt.name == "float16" else _FLOAT32
        _cuda.apply_token_bitmask(fr.device, rtype, shape[0], shape[1], fr.ptr(lg), ld, fr.ptr(mask), mshape[1],
                                  rows_ptr, fr.stream)
