"""Building, weighting and pruning the unit graph (CSR arrays)."""
from .build import EDGE_KINDS, GraphConfig, UnitGraph, build_graph, load_or_build

__all__ = ["EDGE_KINDS", "GraphConfig", "UnitGraph", "build_graph", "load_or_build"]
