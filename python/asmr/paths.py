"""Where a memory lives when no one says: ``$ASMR_MEMORY``, else ``./asmr-memory``; and where what is
built once from installed packages is kept (``cache_dir``).

Standard library only, and outside ``asmr.store``: the command line reads it before deciding whether
to load the store at all (a question sent to a running server never does).
"""
from __future__ import annotations

import os
from pathlib import Path

DEFAULT_MEMORY = "asmr-memory"


def default_memory_dir() -> Path:
    return Path(os.environ.get("ASMR_MEMORY") or DEFAULT_MEMORY)


def cache_dir() -> Path:
    """Where what is built once from installed packages lives (ONNX graphs, converted models, the
    bilingual dictionary's index): ``$ASMR_CACHE_DIR``, else ``~/.cache/asmr``."""
    return Path(os.environ.get("ASMR_CACHE_DIR") or Path.home() / ".cache" / "asmr")
