"""The CUDA backend's runtime: the native module, and whether it can run here.

Importing this never fails: without a CUDA build, a device, or CuPy or torch,
:func:`unavailable_reason` says why and :func:`require` raises RuntimeError
with that reason.
"""

from __future__ import annotations

import functools
import importlib.util

try:
    from . import _cuda as native
except ImportError as exc:  # built without CUDA, or the module cannot load
    native = None
    if importlib.util.find_spec(f"{__package__}._cuda") is None:
        _IMPORT_REASON = "asmr was built without CUDA (no asmr_kernels._cuda module)"
    else:
        _IMPORT_REASON = f"asmr_kernels._cuda failed to import: {exc}"
else:
    _IMPORT_REASON = None

INT32, INT64 = 0, 1  # cuda.h IndexType
FLOAT32, FLOAT16 = 0, 1  # cuda.h RealType


@functools.lru_cache(maxsize=1)
def unavailable_reason() -> str | None:
    """Why the CUDA backend cannot run here, or None when it can."""
    if native is None:
        return _IMPORT_REASON
    try:
        count, why = native.device_count()
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


def require() -> None:
    """Raises RuntimeError, with the reason, when the backend cannot run."""
    why = unavailable_reason()
    if why is not None:
        raise RuntimeError(f"the asmr CUDA backend is unavailable: {why}")


def device_info(device: int = 0) -> dict:
    """Runtime/driver versions and the device's multiprocessors and compute capability."""
    require()
    rt, drv = native.versions()
    sm, major, minor = native.device_attributes(int(device))
    return {"runtime_version": rt, "driver_version": drv, "device": int(device),
            "multiprocessors": sm, "compute_capability": (major, minor)}


@functools.lru_cache(maxsize=None)
def sm_count(device: int) -> int:
    """Multiprocessors of a device."""
    return int(native.device_attributes(device)[0])
