"""The kernels release the GIL: other Python threads run while a kernel works.

The check is behavioural, not a timing. The kernel is reached through a Python
frame of the test's own (`_in_kernel`), and the interpreter's switch interval
is raised so far that it never takes the GIL from a thread that holds it. The
main thread then samples the worker's innermost frame: it can find the worker
inside `_in_kernel` only if the native call there let go of the GIL.
"""

import functools
import sys
import threading
import time

import numpy as np
import pytest

import asmr_kernels.cpu_cosine
import asmr_kernels.cpu_graph
import asmr_kernels.cpu_spread
from asmr_kernels import CSRGraph, SpreadSession, diffuse, pack_seeds, pair_cosine, spread


def _in_kernel(native, *args, **kwargs):
    return native(*args, **kwargs)


# The modules that call the kernels, each through its own `_cpu` name.
_KERNEL_MODULES = (asmr_kernels.cpu_graph, asmr_kernels.cpu_spread, asmr_kernels.cpu_cosine)


class _NativeSpy:
    """Stands in for the `_cpu` module: calls to the named functions go through
    `_in_kernel`; with a `replacement` (a native callable taking no arguments),
    that is called there instead."""

    def __init__(self, module, names, replacement=None):
        self._module, self._names, self._replacement = module, set(names), replacement

    def __getattr__(self, name):
        native = getattr(self._module, name)
        if name not in self._names:
            return native
        if self._replacement is not None:
            return lambda *args, **kwargs: _in_kernel(self._replacement)
        return lambda *args, **kwargs: _in_kernel(native, *args, **kwargs)


def _seen_in_kernel(monkeypatch, work, kernels, replacement=None, attempts=3):
    """True when this thread saw the worker running `work` inside one of `kernels`."""
    work()  # warm-up outside the check: cached layouts and workspaces get built
    for module in _KERNEL_MODULES:
        monkeypatch.setattr(module, "_cpu", _NativeSpy(module._cpu, kernels, replacement))
    old = sys.getswitchinterval()
    sys.setswitchinterval(1000.0)
    try:
        for _ in range(attempts):
            worker = threading.Thread(target=work)
            worker.start()
            seen = False
            while worker.is_alive() and not seen:
                frame = sys._current_frames().get(worker.ident)
                seen = frame is not None and frame.f_code is _in_kernel.__code__
                time.sleep(0.0005)  # lets go of the GIL, so the worker can take it back
            worker.join()
            if seen:
                return True
        return False
    finally:
        sys.setswitchinterval(old)


@pytest.fixture(scope="module")
def graph():
    n, degree = 200_000, 10
    rng = np.random.default_rng(0)
    indptr = np.arange(0, n * degree + 1, degree, dtype=np.int64)
    indices = rng.integers(0, n, n * degree).astype(np.int32)
    return CSRGraph(indptr, indices, rng.random(n * degree, dtype=np.float32))


def test_a_call_that_holds_the_gil_is_never_seen(monkeypatch):
    """The check can fail: a native call that keeps the GIL (here `sum` over a
    long range, standing in for the kernel) is never caught inside the kernel."""
    rng = np.random.default_rng(3)
    c, u = rng.standard_normal((4, 8)).astype(np.float32), rng.standard_normal((4, 8)).astype(np.float32)

    holds_the_gil = functools.partial(sum, range(20_000_000))  # C code throughout: no Python frame
    assert not _seen_in_kernel(monkeypatch, lambda: pair_cosine(c, u, [0], [0]), {"pair_cosine"},
                               replacement=holds_the_gil, attempts=1)


def test_diffuse_releases_the_gil(monkeypatch, graph):
    x = np.random.default_rng(1).random((200_000, 4), dtype=np.float32)
    assert _seen_in_kernel(monkeypatch, lambda: diffuse(graph, x, steps=6, decay=0.5, num_threads=1),
                           {"diffuse", "diffuse_tiles"})


def test_spread_releases_the_gil(monkeypatch, graph):
    rng = np.random.default_rng(2)
    seeds = pack_seeds([rng.integers(0, 200_000, 20) for _ in range(2000)])
    assert _seen_in_kernel(monkeypatch, lambda: spread(graph, *seeds, num_threads=1),
                           {"spread"})


def test_spread_session_releases_the_gil(monkeypatch, graph):
    class Watched(SpreadSession):  # run() is native: a Python frame of the test's own around it
        def run(self, *args):
            return _in_kernel(super().run, *args)

    session = Watched(graph, depth=4)  # 20 seeds, 4 hops: most of the 200,000 nodes
    seeds = np.random.default_rng(4).integers(0, 200_000, 20)
    assert _seen_in_kernel(monkeypatch, lambda: session.run(seeds), set())


def test_pair_cosine_releases_the_gil(monkeypatch):
    rng = np.random.default_rng(3)
    c = rng.standard_normal((100, 384)).astype(np.float32)
    u = rng.standard_normal((50_000, 384)).astype(np.float32)
    ci, ui = rng.integers(0, 100, 400_000), rng.integers(0, 50_000, 400_000)
    assert _seen_in_kernel(monkeypatch, lambda: pair_cosine(c, u, ci, ui, num_threads=1), {"pair_cosine"})
