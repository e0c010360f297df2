"""CSR graphs on a CUDA device and dense diffusion over them."""

from __future__ import annotations

import numpy as np

from .checks import I32_MAX, I64_MAX, count, real
from .cuda_checks import Checks, float_array, index_array, itype, raise_range, raise_real
from .cuda_frameworks import Frame, adapter, classify, default_framework_name, frame
from .cuda_runtime import INT32, native, require


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
        require()
        fr = frame(indptr, indices, weights)
        with fr.scope():
            ip = index_array(fr, "indptr", indptr)
            ix = index_array(fr, "indices", indices)
            if fr.size(ip) == 0:
                raise ValueError("indptr must have num_nodes + 1 entries, got an empty array")
            n = fr.size(ip) - 1
            if num_nodes is not None and count("num_nodes", num_nodes, maximum=I64_MAX) != n:
                raise ValueError(f"indptr has {n + 1} entries, so the graph has {n} nodes, not num_nodes={num_nodes}")
            nnz = fr.size(ix)
            if weights is None:
                w = fr.fw.full((nnz,), 1.0, np.float32)
            else:
                w = float_array(fr, "weights", weights, ndim=(1,))
            if fr.size(w) != nnz:
                raise ValueError(f"weights has {fr.size(w)} entries but indices has {nnz}")
            checks = Checks(fr)
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
            raise_real(st, r_w, "weights", nonnegative=True)
            raise_range(fr, st, r_ix, "indices", ix, n, "nodes")
            small = fr.fw.dtype(ix).name == "int32" and nnz <= I32_MAX and n <= I32_MAX
            dtype = np.int32 if small else np.int64
            self.indptr = fr.fw.contiguous(ip, dtype)
            self.indices = fr.fw.contiguous(ix, dtype)
        self.weights = w
        self.num_nodes = n
        self.framework = fr.fw.name
        self.device = fr.device
        self._transpose = None

    @classmethod
    def _trusted(cls, indptr, indices, weights, num_nodes: int, fr: Frame) -> "CSRGraph":
        g = object.__new__(cls)
        g.indptr, g.indices, g.weights, g.num_nodes = indptr, indices, weights, int(num_nodes)
        g.framework, g.device, g._transpose = fr.fw.name, fr.device, None
        return g

    @classmethod
    def from_cpu(cls, graph, framework: str | None = None, device: int | None = None) -> "CSRGraph":
        """Uploads an :class:`asmr_kernels.CSRGraph` (already validated) to a device."""
        require()
        if not all(hasattr(graph, k) for k in ("indptr", "indices", "weights", "num_nodes")):
            raise ValueError(f"graph must be an asmr_kernels.CSRGraph, got {type(graph).__name__}")
        name = framework or default_framework_name()
        if name not in ("cupy", "torch"):
            raise ValueError(f"framework must be 'cupy' or 'torch', got {framework!r}")
        fw = adapter(name)
        fr = Frame(name, fw.current_device() if device is None else int(device))
        with fr.scope():
            return cls._trusted(fw.upload(graph.indptr), fw.upload(graph.indices),
                                fw.upload(graph.weights), graph.num_nodes, fr)

    def _frame(self) -> Frame:
        return Frame(self.framework, self.device)

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
                it = itype(fr, self.indices)
                dtype = np.int32 if it == INT32 else np.int64
                t_ip = fr.empty((n + 1,), dtype)
                t_ix = fr.empty((nnz,), dtype)
                t_w = fr.empty((nnz,), np.float32)
                nbytes = int(native.transpose_workspace(fr.device, it, n, nnz))
                ws = fr.empty((max(nbytes, 1),), np.uint8)
                native.transpose_csr(fr.device, it, n, nnz, fr.ptr(self.indptr), fr.ptr(self.indices),
                                     fr.ptr(self.weights), fr.ptr(t_ip), fr.ptr(t_ix), fr.ptr(t_w),
                                     fr.ptr(ws), nbytes, fr.stream)
            t = CSRGraph._trusted(t_ip, t_ix, t_w, n, fr)
            t._transpose = self
            self._transpose = t
        return self._transpose

    def __repr__(self) -> str:
        return (f"cuda.CSRGraph(num_nodes={self.num_nodes}, num_edges={self.num_edges}, "
                f"index_dtype={self.index_dtype}, framework={self.framework}, device={self.device})")


def graph_probe(graph):
    """A device array of the graph, to pick the call's framework, if any."""
    if isinstance(graph, CSRGraph):
        return graph.indptr
    if isinstance(graph, tuple) and graph:
        return graph[0]
    if hasattr(graph, "indptr") and classify(getattr(graph, "indptr")) is not None:
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
        if classify(m.indptr) is None:  # host SciPy: duplicates are summed as on the CPU
            m.sum_duplicates()
            fw = adapter(like or default_framework_name())
            return CSRGraph(fw.upload(m.indptr), fw.upload(m.indices), fw.upload(m.data),
                            num_nodes=m.shape[0])
        return CSRGraph(m.indptr, m.indices, m.data, num_nodes=m.shape[0])
    if all(hasattr(graph, k) for k in ("indptr", "indices", "weights", "num_nodes")):
        return CSRGraph.from_cpu(graph, framework=like)
    raise ValueError("graph must be a cuda.CSRGraph, an asmr_kernels.CSRGraph, a sparse matrix or "
                     f"(indptr, indices, weights), got {type(graph).__name__}")


def graph_for(graph, fr: Frame) -> CSRGraph:
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
    require()
    fr = frame(graph_probe(graph), x, personalization)
    with fr.scope():
        g = graph_for(graph, fr)
        xd = float_array(fr, "x", x, ndim=(1, 2))
        shape = fr.fw.shape(xd)
        if shape[0] != g.num_nodes:
            raise ValueError(f"x has {shape[0]} rows but the graph has {g.num_nodes} nodes")
        b = 1 if len(shape) == 1 else shape[1]
        steps = count("steps", steps)
        decay = real("decay", decay, minimum=0.0)
        restart = real("restart", restart, minimum=0.0)
        edge_threshold = real("edge_threshold", edge_threshold)
        node_threshold = real("node_threshold", node_threshold)
        count("num_threads", num_threads, maximum=4096)
        checks = Checks(fr)
        r_x = checks.real(xd)
        p, r_p = None, None
        if restart != 0.0:
            if personalization is None:
                p = xd
            else:
                p = float_array(fr, "personalization", personalization, ndim=(len(shape),))
                if fr.fw.shape(p) != shape:
                    raise ValueError(f"personalization has shape {fr.fw.shape(p)} but x has shape {shape}")
                r_p = checks.real(p)
        st = checks.run()
        raise_real(st, r_x, "x", nonnegative=False)
        if r_p is not None:
            raise_real(st, r_p, "personalization", nonnegative=False)
        out = fr.empty(shape, np.float32)
        n = g.num_nodes
        if n == 0 or b == 0:
            return out
        work = fr.empty(shape, np.float32) if steps > 1 else None
        t = g.transpose()
        native.diffuse(fr.device, itype(fr, t.indices), n, t.num_edges, fr.ptr(t.indptr),
                       fr.ptr(t.indices), fr.ptr(t.weights), b, fr.ptr(xd), fr.ptr(p), steps, decay,
                       restart, edge_threshold, node_threshold, fr.ptr(out), fr.ptr(work), fr.stream)
        return out
