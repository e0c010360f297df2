"""ASMR's native kernels: diffusion over CSR graphs, frontier spreading
activation from seeds, batched pair cosine, BM25 top-k over posting lists,
citation token masks, and the key facts of ASCII text (``cpu.KeyFactExtractor``,
the fast path of ``asmr.text.facts``).

The CPU kernels (C++/OpenMP) are always built; :mod:`asmr_kernels.cpu` gathers
them (one module per kernel family, cpu_*.py), including the citation masks
that ``asmr.decoding`` drives. The CUDA kernels live in :mod:`asmr_kernels.cuda`
(cuda_*.py), which reports why it is unavailable when the package was built
without CUDA or no GPU is present.
"""

from .cpu import (
    CSRGraph,
    Postings,
    SpreadQuery,
    SpreadResult,
    SpreadSession,
    as_graph,
    diffuse,
    max_threads,
    pack_seeds,
    pair_cosine,
    spread,
)

__all__ = [
    "CSRGraph",
    "Postings",
    "SpreadQuery",
    "SpreadResult",
    "SpreadSession",
    "as_graph",
    "backend_info",
    "diffuse",
    "max_threads",
    "pack_seeds",
    "pair_cosine",
    "spread",
]


def backend_info() -> dict:
    """What this build can run on: OpenMP threads and the CUDA backend's state."""
    from . import _cpu, cuda

    return {
        "openmp": _cpu.has_openmp(),
        "max_threads": _cpu.max_threads(),
        "cuda_available": cuda.is_available(),
        "cuda_unavailable_reason": cuda.unavailable_reason(),
    }
