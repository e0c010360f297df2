"""Citation token masks (CPU): the citation-closure automaton that ``asmr.decoding`` drives.

A vocabulary (:class:`CitationVocab`) is prepared once per tokenizer and an
allowlist (:class:`CitationAllowlist`) once per turn; a row's state is one int
(0 at the start), advanced token by token. Masks are int32 words, bit
``t & 31`` of word ``t >> 5`` set when token ``t`` is allowed (the layout of
vLLM and XGrammar). See csrc/include/asmr/citation_mask.h for the language.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

from . import _cpu
from .checks import check_monotone, count, index_array

# Token kinds (asmr::TokenKind): text, special, end of sequence, never allowed.
_MAX_KIND = 3
_NO_ROWS = np.zeros(0, dtype=np.int32)


def _byte_array(name: str, a) -> np.ndarray:
    arr = np.asarray(a)
    if arr.ndim != 1 or arr.dtype != np.uint8:
        raise ValueError(f"{name} must be a 1-D uint8 array, got {arr.dtype} {arr.shape}")
    return np.ascontiguousarray(arr)


def _offsets(name: str, a, data: np.ndarray, data_name: str) -> np.ndarray:
    """int64 offsets of packed strings: string i is data[a[i]:a[i + 1]]."""
    off = np.ascontiguousarray(index_array(name, a), dtype=np.int64)
    if off.size == 0 or off[0] != 0:
        raise ValueError(f"{name} must start at 0")
    check_monotone(name, off)
    if off[-1] != data.size:
        raise ValueError(f"{name} ends at {int(off[-1])} but {data_name} has {data.size} bytes")
    return off


class CitationVocab:
    """A tokenizer's byte strings and the citation markers, prepared once.

    Token ``t`` has the bytes ``data[offsets[t]:offsets[t + 1]]`` and the kind
    ``kinds[t]`` (uint8: 0 text, 1 special, 2 end of sequence, 3 never
    allowed); marker ``k`` opens with ``opener_bytes[opener_offsets[k]:
    opener_offsets[k + 1]]`` and closes likewise. No opener may lie inside
    another (``asmr.decoding.markers`` checks that).
    """

    def __init__(self, offsets, data, kinds, opener_offsets, opener_bytes, closer_offsets,
                 closer_bytes) -> None:
        data = _byte_array("data", data)
        kinds = _byte_array("kinds", kinds)
        offsets = _offsets("offsets", offsets, data, "data")
        if offsets.size != kinds.size + 1:
            raise ValueError(f"offsets has {offsets.size} entries for {kinds.size} tokens")
        if kinds.size and int(kinds.max()) > _MAX_KIND:
            bad = int(np.flatnonzero(kinds > _MAX_KIND)[0])
            raise ValueError(f"kinds holds {int(kinds[bad])} at position {bad}, not a token kind")
        opener_bytes = _byte_array("opener_bytes", opener_bytes)
        closer_bytes = _byte_array("closer_bytes", closer_bytes)
        opener_offsets = _offsets("opener_offsets", opener_offsets, opener_bytes, "opener_bytes")
        closer_offsets = _offsets("closer_offsets", closer_offsets, closer_bytes, "closer_bytes")
        if opener_offsets.size != closer_offsets.size:
            raise ValueError(f"{opener_offsets.size - 1} openers but {closer_offsets.size - 1} closers")
        self._handle = _cpu.CitationVocabHandle(offsets, data, kinds, opener_offsets, opener_bytes,
                                                closer_offsets, closer_bytes)
        self.vocab_size = int(self._handle.vocab_size)
        self.words = int(self._handle.words)  # int32 words of one row's mask


class CitationAllowlist:
    """The ids a marker may cite, compiled against a :class:`CitationVocab`;
    read-only, so any number of rows may share it.

    Id ``i`` is ``id_bytes[id_offsets[i]:id_offsets[i + 1]]``; every marker
    accepts every id. An id followed by its closer may not be a prefix of
    another id (ValueError).
    """

    def __init__(self, vocab: CitationVocab, id_offsets, id_bytes) -> None:
        if not isinstance(vocab, CitationVocab):
            raise ValueError(f"vocab must be a CitationVocab, got {type(vocab).__name__}")
        id_bytes = _byte_array("id_bytes", id_bytes)
        id_offsets = _offsets("id_offsets", id_offsets, id_bytes, "id_bytes")
        self.vocab = vocab
        self._handle = _cpu.CitationAllowlistHandle(vocab._handle, id_offsets, id_bytes)
        self.num_states = int(self._handle.num_states)

    def is_free(self, state: int) -> bool:
        """True in free text, False between an opener and its closer."""
        return self._handle.is_free(state)

    def advance(self, state: int, token: int, eos_blocked: bool) -> tuple[int, int]:
        """(next state, or -1 when the token is not allowed at ``state``; markers the token closes).
        ``eos_blocked``: end of sequence is refused in free text."""
        return self._handle.advance(state, token, eos_blocked)

    def fill_row(self, state: int, eos_blocked: bool, bitmask: np.ndarray, row: int) -> None:
        """``bitmask[row]`` = the mask of the tokens allowed at ``state`` (the per-token path:
        the native side checks the width, the row and the state)."""
        try:
            self._handle.fill_row(state, eos_blocked, bitmask, row)
        except (TypeError, BufferError) as exc:
            raise ValueError(f"bitmask must be a C-contiguous int32 NumPy array [batch, "
                             f"{self.vocab.words}]: {exc}") from None


def _check_bitmask(arr: np.ndarray, words: int) -> None:
    if arr.dtype != np.int32 or arr.ndim != 2 or arr.shape[1] != words or not arr.flags.c_contiguous:
        raise ValueError(f"bitmask must be a C-contiguous int32 array of {words} words a row, "
                         f"got {arr.dtype} {arr.shape}")


def fill_citation_masks(allowlists: Sequence[CitationAllowlist | None], states, eos_blocked,
                        bitmask: np.ndarray, *, num_threads: int = 0) -> None:
    """Row ``r`` of ``bitmask`` gets the mask of ``allowlists[r]`` at ``states[r]`` (``eos_blocked[r]``:
    end of sequence refused in free text); a None allowlist allows every token. One native call,
    rows in parallel."""
    b = len(allowlists)
    if not isinstance(bitmask, np.ndarray) or bitmask.ndim != 2 or bitmask.shape[0] != b:
        raise ValueError(f"bitmask must have one row per allowlist ({b}), "
                         f"got shape {getattr(bitmask, 'shape', None)}")
    st = np.asarray(states)
    if st.shape != (b,) or (b and st.dtype.kind not in "iu"):
        raise ValueError(f"states must hold one integer per allowlist ({b}), got {st.dtype} {st.shape}")
    blocked = np.asarray(eos_blocked)
    if blocked.shape != (b,) or (b and blocked.dtype.kind not in "biu"):
        raise ValueError(f"eos_blocked must hold one flag per allowlist ({b}), "
                         f"got {blocked.dtype} {blocked.shape}")
    num_threads = count("num_threads", num_threads, maximum=4096)
    words = None
    handles = []
    for r, (a, s) in enumerate(zip(allowlists, st.tolist())):
        if a is None:
            handles.append(None)
            continue
        if not isinstance(a, CitationAllowlist):
            raise ValueError(f"allowlists[{r}] must be a CitationAllowlist or None, got {type(a).__name__}")
        if words is None:
            words = a.vocab.words
        elif a.vocab.words != words:
            raise ValueError(f"allowlists[{r}] belongs to a vocabulary of another width")
        if not 0 <= s < a.num_states:
            raise ValueError(f"states[{r}] = {s} is out of range for {a.num_states} automaton states")
        handles.append(a._handle)
    if words is not None:
        _check_bitmask(bitmask, words)
    _cpu.fill_citation_masks_batch(handles, np.ascontiguousarray(st, dtype=np.int32),
                                   np.ascontiguousarray(blocked != 0, dtype=np.uint8), bitmask, num_threads)


def apply_token_bitmask(logits: np.ndarray, bitmask: np.ndarray, indices=None, *,
                        num_threads: int = 0) -> None:
    """``logits[r, t] = -inf`` where token t's bit is clear in ``bitmask[indices[r]]``, in place.

    logits: a writable C-contiguous float32 NumPy array ``(batch, vocab)`` (or
    1-D for one row); bitmask: int32 ``(rows, words)`` (or 1-D); indices: one
    bitmask row per logits row (default: row r for row r). Tokens past
    ``32 * words`` are masked.
    """
    if not isinstance(logits, np.ndarray):
        raise ValueError(f"logits must be a NumPy array, got {type(logits).__name__}")
    bitmask = np.asarray(bitmask)
    rows2 = logits.reshape(1, -1) if logits.ndim == 1 else logits
    mask2 = bitmask.reshape(1, -1) if bitmask.ndim == 1 else bitmask
    if (logits.dtype != np.float32 or rows2.ndim != 2 or not logits.flags.c_contiguous
            or not logits.flags.writeable):
        raise ValueError(f"logits must be a writable C-contiguous 1-D or 2-D float32 array, "
                         f"got {logits.dtype} {logits.shape}")
    if mask2.dtype != np.int32 or mask2.ndim != 2 or not mask2.flags.c_contiguous:
        raise ValueError(f"bitmask must be a C-contiguous 1-D or 2-D int32 array, got {bitmask.dtype} {bitmask.shape}")
    num_threads = count("num_threads", num_threads, maximum=4096)
    if indices is None:
        if mask2.shape[0] != rows2.shape[0]:
            raise ValueError(f"bitmask has {mask2.shape[0]} rows for {rows2.shape[0]} logits rows; "
                             "pass indices to pick rows")
        rows = _NO_ROWS
    else:
        rows = np.asarray(indices, dtype=np.int64)
        if rows.shape != (rows2.shape[0],) or (rows.size and (rows.min() < 0 or rows.max() >= mask2.shape[0])):
            raise ValueError(f"indices must give one bitmask row in [0, {mask2.shape[0]}) "
                             f"per logits row ({rows2.shape[0]})")
        rows = rows.astype(np.int32)
    _cpu.apply_token_bitmask_rows(rows2, mask2, rows, num_threads)
