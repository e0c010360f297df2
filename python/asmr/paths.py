"""Where a memory lives when no one says: ``$ASMR_MEMORY``, else ``./asmr-memory``; and where what is
built once from installed packages is kept (``cache_dir``).

Standard library only, and outside ``asmr.store``: the command line reads it before deciding whether
to load the store at all (a question sent to a running server never does).
"""
from __future__ import annotations

import marshal
import os
import sys
import tempfile
from pathlib import Path
from typing import Callable, TypeVar

DEFAULT_MEMORY = "asmr-memory"
_T = TypeVar("_T")
# In the name of a cache file written with marshal, whose format may change between Python versions
_MARSHAL_TAG = f"py{sys.version_info[0]}{sys.version_info[1]}-marshal{marshal.version}"


def default_memory_dir() -> Path:
    return Path(os.environ.get("ASMR_MEMORY") or DEFAULT_MEMORY)


def cache_dir() -> Path:
    """Where what is built once from installed packages lives (ONNX graphs, converted models, the
    bilingual dictionary's tables, jieba's prefix table, simplemma's English dictionary):
    ``$ASMR_CACHE_DIR``, else ``~/.cache/asmr``. Deleting it costs the next command the builds."""
    return Path(os.environ.get("ASMR_CACHE_DIR") or Path.home() / ".cache" / "asmr")


def read_or_build(path: Path, build: Callable[[], _T], dump: Callable[[_T], bytes],
                  load: Callable[[bytes], _T]) -> _T:
    """What the cache file ``path`` holds (``load`` of its bytes), else ``build()``, written there for
    later processes: aside and renamed, so that a process reading at the same time sees the whole file
    or none. A file that cannot be read back (cut short, another format) is built again; where the
    cache cannot be written (a read-only home), the value is built for this process alone."""
    try:
        return load(path.read_bytes())
    except (OSError, ValueError, EOFError, TypeError):
        pass
    value = build()
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}-")
        with os.fdopen(fd, "wb") as out:
            out.write(dump(value))
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except OSError:
        pass  # the caller has its value either way; the next process builds it again
    return value


def marshalled(name: str, build: Callable[[], _T], fits: Callable[[object], bool]) -> _T:
    """``read_or_build`` for a table of plain Python types (dicts, lists, strings, numbers), kept with
    ``marshal`` (read whole: a table of half a million entries in 0.3 s) as ``cache_dir()/name``
    with the Python version added; a file whose value ``fits`` does not accept is built again."""
    def load(data: bytes) -> _T:
        value = marshal.loads(data)
        if not fits(value):
            raise TypeError(f"{name}: not the table it should be")
        return value

    return read_or_build(cache_dir() / f"{name}-{_MARSHAL_TAG}.bin", build, marshal.dumps, load)
