"""Parsing documents into memory units: unit ids, versions, lifecycle.

``read`` turns files and JSONL records into ``Document``s (``html_text`` reads HTML
pages; ``chat`` reads conversations, a session a document and a turn a paragraph), ``chunk``
cuts their text into units by meaning, ``ids`` gives each unit its address, and ``lifecycle``
relates a revised document's units to the stored ones.
"""
from .ids import parse_unit_id, unit_id
from .model import Chunk, Chunked, Document, InputError, Link

__all__ = ["Chunk", "Chunked", "Document", "InputError", "Link", "parse_unit_id", "unit_id"]
