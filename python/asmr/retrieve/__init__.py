"""cache -> seeds -> spread -> score -> conflicts -> confidence."""
from .pipeline import Hit, PathStep, Result, RetrieveConfig, Retriever

__all__ = ["Hit", "PathStep", "Result", "RetrieveConfig", "Retriever"]
