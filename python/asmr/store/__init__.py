"""The persistent memory: SQLite metadata, vector matrix, index files.

``Writer``/``ingest`` write (one writer at a time, crash-safe); ``Memory`` reads
one consistent snapshot; ``check_memory`` verifies the invariants; ``TurnLog`` keeps
conversations' turns beside a memory, ``UsageLog``
what verified answers taught the graph. Every query on these files lives in this package.
"""
from importlib import import_module

from .memory import (DOCUMENT_STATUSES, CommitWatch, DocumentSummary, Memory, Unit, UnitState, Version,
                     default_memory_dir, stored_model)
from .schema import SCHEMA_VERSION, MemoryStateError
from .turns import TurnLog
from .usage import UsageLog

# Imported when first named: a process that only reads (a search) never loads the writer, the
# ingest planner and the document readers behind them (0.05 s of a command's start, bench/start.py).
_LAZY = {"CheckReport": ".check", "check_memory": ".check", "DEFAULT_KB": ".writer", "IngestReport": ".writer",
         "Writer": ".writer", "ingest": ".writer"}


def __getattr__(name: str):
    if name in _LAZY:
        value = getattr(import_module(_LAZY[name], __name__), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

__all__ = ["CheckReport", "check_memory", "DEFAULT_KB", "IngestReport", "Writer", "ingest", "CommitWatch",
           "DOCUMENT_STATUSES", "DocumentSummary", "Memory", "Unit", "UnitState", "Version", "default_memory_dir",
           "stored_model", "SCHEMA_VERSION", "MemoryStateError", "TurnLog", "UsageLog"]
