"""ASMR: associative memory retrieval with citations that cannot lie.

One sub-package per stage of a question's path (see DESIGN.md section 2). The
native kernels live in the sibling package ``asmr_kernels``.
"""

__version__ = "0.1.0"
