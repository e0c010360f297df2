"""Generator backends (local model, extractive, HTTP)."""
