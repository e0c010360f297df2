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

from .cuda_citation import apply_token_bitmask
from .cuda_cosine import pair_cosine
from .cuda_graph import CSRGraph, as_graph, diffuse
from .cuda_runtime import device_info, is_available, unavailable_reason
from .cuda_spread import SpreadResult, spread

__all__ = [
    "CSRGraph",
    "SpreadResult",
    "apply_token_bitmask",
    "as_graph",
    "device_info",
    "diffuse",
    "is_available",
    "pair_cosine",
    "spread",
    "unavailable_reason",
]
