"""cache -> seeds -> spread -> score -> bridge -> conflicts -> confidence."""
from .pipeline import Retriever
from .types import Hit, PathStep, Result, RetrieveConfig

__all__ = ["Hit", "PathStep", "Result", "RetrieveConfig", "Retriever"]
