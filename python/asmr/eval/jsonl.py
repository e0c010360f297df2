"""Reading the JSONL files of evaluation datasets, one record a line."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Iterator


def records(path: str | Path) -> Iterator[tuple[str, object]]:
    """``(where, record)`` for each non-blank line, ``where`` being ``path:line`` for the caller's
    errors; a line that is not JSON is a ValueError naming it."""
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            if not line.strip():
                continue
            where = f"{path}:{n}"
            try:
                yield where, json.loads(line)
            except json.JSONDecodeError as e:
                raise ValueError(f"{where}: bad JSON: {e.msg} at column {e.colno}") from None
