"""Building, weighting and pruning the unit graph (CSR arrays), and the edges it learns from use."""
from .build import EDGE_KINDS, GraphConfig, UnitGraph, build_graph, load_or_build
from .usage import cited_together, learn, usage_edges

__all__ = ["EDGE_KINDS", "GraphConfig", "UnitGraph", "build_graph", "load_or_build",
           "cited_together", "learn", "usage_edges"]
