"""Building, weighting and pruning the unit graph (CSR arrays)."""
from .build import EDGE_KINDS, GraphConfig, UnitGraph, build_graph, load_or_build
from .entities import mentions, normalize, split_words, title_key, unit_entities

__all__ = ["EDGE_KINDS", "GraphConfig", "UnitGraph", "build_graph", "load_or_build", "mentions", "normalize",
           "split_words", "title_key", "unit_entities"]
