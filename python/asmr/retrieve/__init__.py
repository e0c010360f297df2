"""Recall: cache, seeds, spread, score, conflicts, confidence."""
