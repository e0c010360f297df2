"""The embedding stage in this process: tasks read and chunked in order, texts embedded in batches.

The same stage as the Ray backend's, without Ray: what ``--backend local`` runs, and the
reference the Ray backend must match. The model already uses every core of the machine for
its matrix products, so one process is the right degree of parallelism here.
"""
from __future__ import annotations

from typing import Callable, Iterable

import numpy as np

from ..embed import (DEFAULT_EMBEDDER, MULTILINGUAL_EMBEDDER, Embedder, MiniLMEmbedder,
                     MultilingualE5Embedder, get_embedder)
from .tasks import ReadOptions, Task, task_texts


def load_embedder(name: str, device: str = "cpu", threads: int | None = None) -> Embedder:
    """The real model by name; the default model on ``device`` (``cuda`` on a GPU worker), on a CPU with
    ``threads`` threads (default: every core; a Ray actor gets the CPUs it was given)."""
    if name == DEFAULT_EMBEDDER and device != "cpu":
        return MiniLMEmbedder(batch_size=512, device=device)  # the batch bench/gpu_embed.py ran on an H200
    if name == DEFAULT_EMBEDDER and threads is not None:
        return MiniLMEmbedder(threads=threads)
    if name == MULTILINGUAL_EMBEDDER and threads is not None:
        return MultilingualE5Embedder(threads=threads)
    return get_embedder(name)


def embed_local(tasks: Iterable[Task], options: ReadOptions, skip_units: np.ndarray, skip_texts: np.ndarray,
                embedder: Callable[[], Embedder], *, batch_size: int,
                sink: Callable[[list[str], np.ndarray], None], on_error: Callable[[str], None]) -> None:
    """Read, chunk and embed ``tasks``; hand each batch's (keys, vectors) to ``sink``.

    ``embedder`` is called once, on the first text to embed (nothing to embed: no model load).
    ``on_error`` gets each bad input's message and may raise to stop the stage.
    """
    model: Embedder | None = None
    seen: set[str] = set()  # a text repeated across tasks is embedded once
    keys: list[str] = []
    texts: list[str] = []

    def flush() -> None:
        nonlocal model, keys, texts
        if model is None:
            model = embedder()
        sink(keys, model.embed(texts))
        keys, texts = [], []

    for task in tasks:
        task_keys, task_text, errors = task_texts(task, options, skip_units, skip_texts)
        for message in errors:
            on_error(message)
        for k, t in zip(task_keys, task_text):
            if k not in seen:
                seen.add(k)
                keys.append(k)
                texts.append(t)
                if len(keys) >= batch_size:
                    flush()
    if keys:
        flush()
