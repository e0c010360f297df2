"""Vectors of texts an embedder has embedded before, kept by text: the units' sentences recur from one
answer to the next (the extractive generator ranks them, the support check compares claims with them),
and embedding one costs more than the rest of its use."""
from __future__ import annotations

import threading
import weakref
from collections import OrderedDict
from typing import Sequence

import numpy as np


class VectorCache:
    """An embedder's vectors by text, the least recently used dropped first past ``capacity``. Safe to
    share between threads (a server's requests): the embedding itself runs outside the lock."""

    def __init__(self, capacity: int = 50_000):
        self.capacity = capacity
        self._rows: OrderedDict[str, np.ndarray] = OrderedDict()
        self._lock = threading.Lock()

    def embed(self, embedder, texts: Sequence[str]) -> np.ndarray:
        """``embedder.embed(texts)`` as float32 rows, each text not seen before embedded once."""
        if not texts:
            return np.zeros((0, embedder.dim), np.float32)
        wanted = list(dict.fromkeys(texts))
        with self._lock:
            have = {t: self._rows[t] for t in wanted if t in self._rows}
            for t in have:
                self._rows.move_to_end(t)
        todo = [t for t in wanted if t not in have]
        if todo:
            vecs = np.asarray(embedder.embed(todo), dtype=np.float32)
            fresh = dict(zip(todo, vecs))
            have.update(fresh)
            with self._lock:
                self._rows.update(fresh)
                while len(self._rows) > self.capacity:
                    self._rows.popitem(last=False)
        return np.stack([have[t] for t in texts])

    def clear(self) -> None:
        with self._lock:
            self._rows.clear()


SHARED_CAPACITY = 50_000  # texts per embedder (75 MB at 384 dimensions)
_shared: dict[int, tuple[weakref.ref, VectorCache]] = {}  # by id(embedder): any object can embed, hashable or not
_shared_lock = threading.Lock()


def shared_cache(embedder) -> VectorCache:
    """The one cache of ``embedder``'s vectors that every stage of an answer reads: the extractive
    generator embeds a unit's sentences to rank them, the verifier the claims that quote them, the
    support check the sentences it compares them with, and these are often the same texts. Dropped
    with the embedder; an embedder that takes no weak reference gets a cache of its own each call."""
    key = id(embedder)
    with _shared_lock:
        entry = _shared.get(key)
        if entry is not None and entry[0]() is embedder:
            return entry[1]
        cache = VectorCache(SHARED_CAPACITY)
        try:
            ref = weakref.ref(embedder, lambda gone, key=key: _forget(key, gone))
        except TypeError:
            return cache
        _shared[key] = (ref, cache)
        return cache


def _forget(key: int, gone: weakref.ref) -> None:
    # no lock: the collector may run this in a thread that holds it; one dict operation is atomic
    if _shared.get(key, (None,))[0] is gone:
        _shared.pop(key, None)
