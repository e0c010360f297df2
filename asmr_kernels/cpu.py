"""CPU kernels: the public, validating face of asmr_kernels._cpu.

Every function here checks its inputs (shapes, dtypes, index ranges, finite and
non-negative weights) and raises ValueError naming the argument; only then are
contiguous arrays handed to the typed Cython layer, which releases the GIL and
calls C++. A graph is validated once, when its CSRGraph is built.

One module per kernel family (cpu_graph, cpu_spread, cpu_cosine, cpu_bm25,
cpu_facts, cpu_citation); this one gathers them.
"""

from __future__ import annotations

from . import _cpu
from .cpu_bm25 import Postings
from .cpu_citation import CitationAllowlist, CitationVocab, apply_token_bitmask, fill_citation_masks
from .cpu_cosine import pair_cosine
from .cpu_facts import KeyFactExtractor
from .cpu_graph import CSRGraph, as_graph, diffuse
from .cpu_spread import SpreadQuery, SpreadResult, SpreadSession, pack_seeds, spread

__all__ = [
    "CSRGraph",
    "CitationAllowlist",
    "CitationVocab",
    "KeyFactExtractor",
    "Postings",
    "SpreadQuery",
    "SpreadResult",
    "SpreadSession",
    "apply_token_bitmask",
    "as_graph",
    "diffuse",
    "fill_citation_masks",
    "max_threads",
    "pack_seeds",
    "pair_cosine",
    "spread",
]


def max_threads() -> int:
    """Threads a kernel uses when num_threads=0."""
    return _cpu.max_threads()
