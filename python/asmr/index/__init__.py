"""Dense (faiss) and lexical (BM25) search, hybrid fusion."""
