"""The citation-closure automaton: grammar per vocabulary, compiled allowlists, per-row matchers.

Text is free until a marker's opener is complete; from there every token must
keep the text a prefix of ``opener + allowed id + closer``, and the marker
must close before the sequence may end. The automaton is native
(``asmr_kernels.cpu_citation``, ``csrc/cpu/citation_mask.cpp``); this module
holds it per tokenizer, turn and sequence.

    grammar = CitationGrammar(qwen_vocabulary())          # once per tokenizer
    allowed = grammar.compile(allowlist.ids)              # once per turn
    matcher = CitationMatcher(allowed, require_citation=True)   # once per sequence
    bitmask = allocate_token_bitmask(1, grammar.vocab.size)
    matcher.fill_next_token_bitmask(bitmask)              # before each token
    apply_token_bitmask_inplace(logits, bitmask)
    matcher.accept_token(token)                           # after it is sampled
"""
from __future__ import annotations

import sys
from typing import Iterable, Sequence

import numpy as np

from asmr_kernels.cpu import CitationAllowlist, CitationVocab, apply_token_bitmask, fill_citation_masks

from .markers import DEFAULT_MARKERS, Marker, check_citable_ids, check_markers
from .vocab import EOS, TokenVocabulary


def _packed(strings: Sequence[bytes]) -> tuple[np.ndarray, np.ndarray]:
    offsets = np.zeros(len(strings) + 1, dtype=np.int64)
    np.cumsum([len(s) for s in strings], out=offsets[1:])
    return offsets, np.frombuffer(b"".join(strings), dtype=np.uint8).copy()


class CitationGrammar:
    """The markers over one vocabulary: built once per tokenizer (tens of ms for 151k tokens)."""

    def __init__(self, vocab: TokenVocabulary, markers: Sequence[Marker] = DEFAULT_MARKERS) -> None:
        self.vocab = vocab
        self.markers = check_markers(markers)
        oo, ob = _packed([m.opener.encode("utf-8") for m in self.markers])
        co, cb = _packed([m.closer.encode("utf-8") for m in self.markers])
        self._handle = CitationVocab(vocab.offsets, vocab.data, vocab.kinds, oo, ob, co, cb)

    @property
    def words(self) -> int:
        """int32 words of one row's bitmask."""
        return int(self._handle.words)

    def compile(self, ids: Iterable[str]) -> "CompiledAllowlist":
        """An allowlist's ids compiled for masking (well under a millisecond for 1,000 ids)."""
        # Refused: any id the verifier would not read back as itself (named, with the reason).
        ids = check_citable_ids(dict.fromkeys(ids), self.markers)
        offsets, data = _packed([uid.encode("utf-8") for uid in ids])
        return CompiledAllowlist(self, ids, CitationAllowlist(self._handle, offsets, data))


class CompiledAllowlist:
    """An allowlist compiled against a grammar; shared, read-only, by any number of matchers."""

    def __init__(self, grammar: CitationGrammar, ids: tuple[str, ...], handle) -> None:
        self.grammar = grammar
        self.ids = ids
        self._handle = handle

    def __len__(self) -> int:
        return len(self.ids)


class CitationMatcher:
    """One sequence's position in the automaton.

    ``require_citation``: end-of-sequence stays masked until a marker has closed.
    """

    def __init__(self, allowed: CompiledAllowlist, *, require_citation: bool = False) -> None:
        if require_citation and not allowed.ids:
            raise ValueError("require_citation needs at least one allowlisted id: "
                             "with an empty allowlist the answer could never end")
        self.allowed = allowed
        self.require_citation = require_citation
        self.state = 0
        self.citations = 0
        self.terminated = False

    @property
    def in_marker(self) -> bool:
        """True between an opener and its closer (the sequence may not end here)."""
        return not self.allowed._handle.is_free(self.state)

    @property
    def eos_blocked(self) -> bool:
        return self.require_citation and self.citations == 0

    def accept_token(self, token: int) -> bool:
        """Advance by one token; False (and no change) when the mask would have refused it."""
        if self.terminated:
            return False
        nxt, closed = self.allowed._handle.advance(self.state, int(token), self.eos_blocked)
        if nxt < 0:
            return False
        self.citations += closed
        self.state = nxt
        self.terminated = self.allowed.grammar.vocab.kinds[int(token)] == EOS
        return True

    def accept_tokens(self, tokens: Sequence[int]) -> int:
        """Advance by several tokens; returns how many were accepted (stops at the first refused)."""
        n = 0
        for t in tokens:
            if not self.accept_token(t):
                break
            n += 1
        return n

    def fill_next_token_bitmask(self, bitmask: np.ndarray, row: int = 0) -> None:
        """Write the allowed-token mask of the next token into ``bitmask[row]`` (int32 [batch, words])."""
        self.allowed._handle.fill_row(self.state, self.require_citation and self.citations == 0, bitmask, row)

    def reset(self) -> None:
        self.state, self.citations, self.terminated = 0, 0, False


def allocate_token_bitmask(batch: int, vocab_size: int) -> np.ndarray:
    """An int32 [batch, ceil(vocab_size / 32)] bitmask, all tokens allowed."""
    if batch < 1 or vocab_size < 1:
        raise ValueError(f"batch ({batch}) and vocab_size ({vocab_size}) must be positive")
    return np.full((batch, (vocab_size + 31) // 32), -1, dtype=np.int32)


def fill_next_token_bitmask(matchers: Sequence[CitationMatcher | None], bitmask, *,
                            num_threads: int = 0) -> None:
    """Fill row r of ``bitmask`` from ``matchers[r]`` (None: no constraint), in one native call."""
    arr = bitmask if isinstance(bitmask, np.ndarray) else bitmask.numpy()
    if arr.ndim != 2 or arr.shape[0] != len(matchers):
        raise ValueError(f"bitmask must have one row per matcher ({len(matchers)}), got shape {arr.shape}")
    words = None
    allowlists, states, blocked = [], np.zeros(len(matchers), np.int32), np.zeros(len(matchers), np.uint8)
    for r, m in enumerate(matchers):
        if m is None:
            allowlists.append(None)
            continue
        if words is None:
            words = m.allowed.grammar.words
        elif m.allowed.grammar.words != words:
            raise ValueError(f"matchers[{r}] belongs to a vocabulary of another width")
        allowlists.append(m.allowed._handle)
        states[r] = m.state
        blocked[r] = m.eos_blocked
    fill_citation_masks(allowlists, states, blocked, arr, num_threads=num_threads)


def apply_token_bitmask_inplace(logits, bitmask, indices: Sequence[int] | None = None, *,
                                num_threads: int = 0) -> None:
    """Set ``logits[r, t] = -inf`` where token t's bit is clear in ``bitmask[indices[r]]``.

    CPU float32 logits (NumPy or torch) go to the native CPU kernel; CUDA
    float32/float16 tensors to the CUDA kernel (``asmr_kernels.cuda``); other
    dtypes (bfloat16...) fall back to torch's ``masked_fill_``.
    """
    if not isinstance(logits, np.ndarray):
        torch = sys.modules.get("torch")
        if torch is None or not isinstance(logits, torch.Tensor):
            raise ValueError(f"logits must be a NumPy array or a torch tensor, got {type(logits).__name__}")
        if logits.is_cuda and logits.dtype in (torch.float32, torch.float16):
            from asmr_kernels import cuda
            cuda.apply_token_bitmask(logits, bitmask, indices)
            return
        if logits.dtype != torch.float32 or logits.is_cuda:
            _apply_with_torch(logits, bitmask, indices)
            return
        logits = logits.numpy()
        if isinstance(bitmask, torch.Tensor):
            bitmask = bitmask.numpy()
    apply_token_bitmask(logits, bitmask, indices, num_threads=num_threads)


def unpack_bitmask(bitmask: np.ndarray, vocab_size: int) -> np.ndarray:
    """The boolean [..., vocab_size] view of a bitmask (True: allowed). For tests and fallbacks."""
    m = np.ascontiguousarray(bitmask, dtype=np.int32)
    bits = np.unpackbits(m.view(np.uint8), axis=-1, bitorder="little")
    return bits[..., :vocab_size].astype(bool)


def _apply_with_torch(logits, bitmask, indices) -> None:
    import torch
    mask = np.asarray(bitmask.cpu().numpy() if isinstance(bitmask, torch.Tensor) else bitmask)
    allowed = unpack_bitmask(mask.reshape(-1, mask.shape[-1]), logits.shape[-1])
    if indices is not None:
        allowed = allowed[np.asarray(indices)]
    logits.masked_fill_(~torch.from_numpy(allowed).reshape(logits.shape).to(logits.device), float("-inf"))
