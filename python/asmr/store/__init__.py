"""The persistent memory: SQLite metadata, vector matrix, index files.

``Writer``/``ingest`` write (one writer at a time, crash-safe); ``Memory`` reads
one consistent snapshot; ``check_memory`` verifies the invariants; ``TurnLog`` keeps
conversations' turns beside a memory, ``UsageLog``
what verified answers taught the graph. Every query on these files lives in this package.
"""
from .check import CheckReport, check_memory
from .writer import DEFAULT_KB, IngestReport, Writer, ingest
from .memory import (DOCUMENT_STATUSES, CommitWatch, DocumentSummary, Memory, Unit, UnitState, Version,
                     default_memory_dir, stored_model)
from .schema import SCHEMA_VERSION, MemoryStateError
from .turns import TurnLog
from .usage import UsageLog

__all__ = ["CheckReport", "check_memory", "DEFAULT_KB", "IngestReport", "Writer", "ingest", "CommitWatch",
           "DOCUMENT_STATUSES", "DocumentSummary", "Memory", "Unit", "UnitState", "Version", "default_memory_dir",
           "stored_model", "SCHEMA_VERSION", "MemoryStateError", "TurnLog", "UsageLog"]
