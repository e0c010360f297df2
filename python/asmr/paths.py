"""Where a memory lives when no one says: ``$ASMR_MEMORY``, else ``./asmr-memory``.

Standard library only, and outside ``asmr.store``: the command line reads it before deciding whether
to load the store at all (a question sent to a running server never does).
"""
from __future__ import annotations

import os
from pathlib import Path

DEFAULT_MEMORY = "asmr-memory"


def default_memory_dir() -> Path:
    return Path(os.environ.get("ASMR_MEMORY") or DEFAULT_MEMORY)
