"""cache -> seeds -> spread -> score -> bridge -> conflicts -> confidence."""
from .pipeline import Retriever
from .types import ConfigError, Hit, PathStep, Result, RetrieveConfig

__all__ = ["ConfigError", "Hit", "PathStep", "Result", "RetrieveConfig", "Retriever"]
