"""The work directory of a re-index: shards of (text key, vector), written as embedding finishes.

Shards are content-addressed: a row says "this text has this vector under this model", true
for any run that embeds with the same model. So a re-run after a failure, an interrupt or a
fixed bad input skips every text a finished shard holds, whatever else changed. A shard is
written under a ``.tmp`` name and renamed, so a shard either is complete or is not there; a
``.tmp`` left by a crash is removed by the next run. The commit reads the shards through
memory maps; after a successful commit the work directory is removed.
"""
from __future__ import annotations

import json
import os
import shutil
import uuid
from pathlib import Path

import numpy as np

from .tasks import KEY_DTYPE

MANIFEST = "manifest.json"
FORMAT = 1


def default_work_dir(memory: Path, model: str) -> Path:
    """``<memory>/.reindex/<model>``: one per embedding model, since vectors are only valid for theirs."""
    return memory / ".reindex" / model


def _shard_dtype(dim: int) -> np.dtype:
    return np.dtype([("key", KEY_DTYPE), ("vector", "<f4", (dim,))])


class WorkDir:
    """Shards of one embedding model: write them, list the texts they hold, look vectors up."""

    def __init__(self, path: str | os.PathLike, model: str):
        self.path = Path(path)
        self.model = model

    def prepare(self) -> int:
        """Create the directory, or reuse a previous run's; returns the number of finished shards kept.

        Shards of another model or format (a reused ``--work-dir``) are removed, as are partial ones.
        """
        self.path.mkdir(parents=True, exist_ok=True)
        manifest = self.path / MANIFEST
        want = {"format": FORMAT, "model": self.model}
        try:
            have = json.loads(manifest.read_text())
        except (OSError, ValueError):
            have = None
        if have is not None and {k: have.get(k) for k in want} != want:
            for p in self.shards():
                p.unlink()
            have = None
        if have is None:
            tmp = manifest.with_suffix(".tmp")
            tmp.write_text(json.dumps(want))
            os.replace(tmp, manifest)
        for p in self.path.glob("*.tmp"):
            p.unlink()
        return len(self.shards())

    def shards(self) -> list[Path]:
        return sorted(self.path.glob("shard-*.npy"))

    def write(self, keys: list[str] | np.ndarray, vectors: np.ndarray) -> Path:
        """One shard, atomically: a crash leaves either the whole shard or only a ``.tmp``."""
        vectors = np.asarray(vectors, np.float32)
        rows = np.empty(len(keys), _shard_dtype(vectors.shape[1]))
        rows["key"] = keys
        rows["vector"] = vectors
        final = self.path / f"shard-{uuid.uuid4().hex}.npy"
        tmp = final.with_suffix(".tmp")
        with open(tmp, "wb") as f:
            np.save(f, rows)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, final)
        return final

    def done_keys(self) -> np.ndarray:
        """Sorted distinct keys of the texts that finished shards hold."""
        parts = [np.load(p, mmap_mode="r")["key"] for p in self.shards()]
        return np.unique(np.concatenate(parts)) if parts else np.empty(0, KEY_DTYPE)

    def table(self) -> "VectorTable":
        return VectorTable(self.shards())

    def remove(self) -> None:
        shutil.rmtree(self.path, ignore_errors=True)
        parent = self.path.parent
        if parent.name == ".reindex":
            try:
                parent.rmdir()  # only when no other model's work is waiting there
            except OSError:
                pass


class VectorTable:
    """Vectors of the shards by text key, read through memory maps (a few hundred MB of keys at most)."""

    def __init__(self, shard_paths: list[Path]):
        self._shards = [np.load(p, mmap_mode="r") for p in shard_paths]
        self._shards = [s for s in self._shards if len(s)]
        self.dim = int(self._shards[0].dtype["vector"].shape[0]) if self._shards else None
        keys = [s["key"] for s in self._shards]
        all_keys = np.concatenate(keys) if keys else np.empty(0, KEY_DTYPE)
        shard_of = np.concatenate([np.full(len(k), i, np.int32) for i, k in enumerate(keys)]) if keys else \
            np.empty(0, np.int32)
        row_of = np.concatenate([np.arange(len(k), dtype=np.int64) for k in keys]) if keys else \
            np.empty(0, np.int64)
        order = np.argsort(all_keys, kind="stable")
        self._keys, self._shard_of, self._row_of = all_keys[order], shard_of[order], row_of[order]

    def __len__(self) -> int:
        return len(self._keys)

    def get(self, keys: list[str]) -> tuple[np.ndarray, np.ndarray]:
        """(vectors [n, dim], found [n]): rows of keys not found are zero."""
        q = np.array(keys, KEY_DTYPE)
        out = np.zeros((len(q), self.dim or 0), np.float32)
        if not len(self._keys) or not len(q):
            return out, np.zeros(len(q), bool)
        pos = np.searchsorted(self._keys, q)
        pos[pos == len(self._keys)] = 0
        found = self._keys[pos] == q
        shard, row = self._shard_of[pos], self._row_of[pos]
        for s in np.unique(shard[found]):
            sel = found & (shard == s)
            out[sel] = self._shards[s]["vector"][row[sel]]
        return out, found
