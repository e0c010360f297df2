"""Dense (faiss) and lexical (BM25 via bm25s) search over unit rows."""
from .dense import DenseIndex
from .lexical import LexicalIndex

__all__ = ["DenseIndex", "LexicalIndex"]
