"""Embedding models behind one small interface."""
