"""Generator backends (local model, extractive, HTTP)."""
from __future__ import annotations

from .base import Generation, Generator, GeneratorError, Source

GENERATORS = ("local", "extractive", "openai")


def get_generator(name: str = "local", *, embedder=None, **options) -> Generator:
    """``local`` (SmolLM2 with the citation processor), ``extractive`` (no model: needs the
    memory's ``embedder``) or ``openai`` (options: base_url, model, api_key)."""
    if name == "extractive":
        from .extractive import ExtractiveGenerator
        return ExtractiveGenerator(embedder)
    if name == "local":
        from .local import LocalGenerator
        return LocalGenerator(**options)
    if name == "openai":
        from .openai import OpenAIGenerator
        return OpenAIGenerator(**options)
    raise ValueError(f"generator {name!r}: must be one of {', '.join(GENERATORS)}")


__all__ = ["GENERATORS", "Generation", "Generator", "GeneratorError", "Source", "get_generator"]
