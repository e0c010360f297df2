"""The citation-closure automaton as a transformers ``LogitsProcessor``.

    model, tokenizer = load_smollm2()
    grammar = citation_grammar_for(tokenizer, size=model.config.vocab_size)
    proc = CitationLogitsProcessor(grammar, allowlist, require_citation=True)
    out = model.generate(**inputs, logits_processor=LogitsProcessorList([proc]))

Each call feeds every row's matcher the tokens generated since the previous
call, fills the batch's bitmask in one native call and applies it to the
scores. Greedy, sampling, batches and beam search all work: a row whose
tokens no longer extend what its matcher saw (beams reorder rows) is replayed
from the end of its prompt.
"""
from __future__ import annotations

import weakref
from typing import Iterable, Sequence

import numpy as np
import torch
from transformers import LogitsProcessor

from .automaton import (CitationGrammar, CitationMatcher, CompiledAllowlist, allocate_token_bitmask,
                        apply_token_bitmask_inplace, fill_next_token_bitmask)
from .markers import DEFAULT_MARKERS, Marker
from .vocab import TokenVocabulary

# Building a grammar reads the whole vocabulary (tens of ms); one per tokenizer,
# dropped with it.
_GRAMMARS: "weakref.WeakKeyDictionary[object, dict[tuple, CitationGrammar]]" = weakref.WeakKeyDictionary()


def citation_grammar_for(tokenizer, *, size: int | None = None, eos_ids: Iterable[int] | None = None,
                         markers: Sequence[Marker] = DEFAULT_MARKERS) -> CitationGrammar:
    """The grammar of a transformers tokenizer, built once per tokenizer and settings.

    ``size``: the width of the model's logits (``model.config.vocab_size``),
    which may exceed ``len(tokenizer)``; the extra ids are never allowed.
    ``eos_ids``: the ids that end generation (default: the tokenizer's
    ``eos_token_id``); ``require_citation`` keeps exactly these masked.
    """
    key = (size, None if eos_ids is None else tuple(sorted(set(eos_ids))), tuple(markers))
    per_tokenizer = _GRAMMARS.setdefault(tokenizer, {})
    if key not in per_tokenizer:
        vocab = TokenVocabulary.from_hf(tokenizer, size=size, eos_ids=key[1])
        per_tokenizer[key] = CitationGrammar(vocab, markers)
    return per_tokenizer[key]


def compile_allowlist(grammar: CitationGrammar, allowlist) -> CompiledAllowlist:
    """An allowlist as the grammar needs it: compiled already, an object with ``.ids``, or the ids."""
    if isinstance(allowlist, CompiledAllowlist):
        if allowlist.grammar is not grammar:
            raise ValueError("allowlist: compiled against another grammar; compile its ids with this one")
        return allowlist
    ids = getattr(allowlist, "ids", allowlist)
    if isinstance(ids, (str, bytes)) or not isinstance(ids, Iterable):
        raise ValueError(f"allowlist: expected an iterable of ids, an object with .ids or a "
                         f"CompiledAllowlist, got {type(allowlist).__name__}")
    return grammar.compile(ids)


class CitationLogitsProcessor(LogitsProcessor):
    """Masks every token that would leave a citation marker open or spell an id outside the allowlist.

    ``grammar_or_vocab``: a ``CitationGrammar`` (see ``citation_grammar_for``)
    or a ``TokenVocabulary`` (the default markers are used).
    ``allowlist``: a ``CompiledAllowlist``, an ``Allowlist`` (anything with
    ``.ids``) or an iterable of ids; or a list of these, one per row, for a
    batch of different questions.
    ``require_citation``: end-of-sequence stays masked until a marker has closed.
    ``prompt_lengths``: per row, how many leading tokens of ``input_ids``
    (padding included) are prompt, not answer; default: every token present
    at the first call. Shorter lengths make the tail of a row an answer
    already begun, which its matcher reads first.

    One instance follows one generation; ``reset()`` before reusing it.
    After ``generate`` returns, ``observe(output)`` brings ``matchers`` up to
    the last token (generate does not call processors after it).
    """

    supports_continuous_batching = False  # rows are followed by their position in the batch

    def __init__(self, grammar_or_vocab: CitationGrammar | TokenVocabulary, allowlist, *,
                 require_citation: bool = False, prompt_lengths: int | Sequence[int] | None = None) -> None:
        if isinstance(grammar_or_vocab, TokenVocabulary):
            grammar_or_vocab = CitationGrammar(grammar_or_vocab)
        if not isinstance(grammar_or_vocab, CitationGrammar):
            raise ValueError(f"grammar_or_vocab: expected a CitationGrammar or a TokenVocabulary, "
                             f"got {type(grammar_or_vocab).__name__}")
        self.grammar = grammar_or_vocab
        per_row = isinstance(allowlist, (list, tuple)) and bool(allowlist) and not any(
            isinstance(a, str) for a in allowlist)
        self.allowed = [compile_allowlist(self.grammar, a) for a in (allowlist if per_row else [allowlist])]
        if require_citation and not all(a.ids for a in self.allowed):
            raise ValueError("require_citation needs at least one allowlisted id: "
                             "with an empty allowlist the answer could never end")
        self.require_citation = bool(require_citation)
        if prompt_lengths is not None:
            one = isinstance(prompt_lengths, (int, np.integer))
            lengths = [prompt_lengths] if one else list(prompt_lengths)
            if not all(isinstance(p, (int, np.integer)) and p >= 0 for p in lengths):
                raise ValueError(f"prompt_lengths: expected non-negative ints, got {prompt_lengths!r}")
            prompt_lengths = [int(p) for p in lengths]
        self.prompt_lengths = prompt_lengths
        self.reset()

    def reset(self) -> None:
        """Forget the rows: the next call starts a new generation."""
        self.matchers: list[CitationMatcher] = []
        self._starts: list[int] = []
        self._fed: list[np.ndarray] = []  # per row, the answer tokens its matcher has read
        self._bitmask: np.ndarray | None = None

    def __call__(self, input_ids: torch.LongTensor, scores: torch.Tensor) -> torch.Tensor:
        if scores.ndim != 2 or scores.shape[0] != input_ids.shape[0]:
            raise ValueError(f"scores: expected [batch, vocab] for {input_ids.shape[0]} rows, "
                             f"got {tuple(scores.shape)}")
        if scores.shape[1] != self.grammar.vocab.size:
            raise ValueError(f"scores: {scores.shape[1]} logits a row, but the grammar's vocabulary has "
                             f"{self.grammar.vocab.size} tokens; build it with "
                             f"citation_grammar_for(tokenizer, size=model.config.vocab_size)")
        self.observe(input_ids)
        # A finished row is padded by generate whatever its scores say; leave it free.
        fill_next_token_bitmask([None if m.terminated else m for m in self.matchers], self._bitmask)
        scores = scores if scores.is_contiguous() else scores.contiguous()
        mask = self._bitmask if not scores.is_cuda else torch.from_numpy(self._bitmask).to(scores.device)
        apply_token_bitmask_inplace(scores, mask)
        return scores

    def observe(self, input_ids: torch.LongTensor) -> None:
        """Advance each row's matcher over the tokens of ``input_ids`` it has not read yet."""
        if input_ids.ndim != 2:
            raise ValueError(f"input_ids: expected [batch, length], got {tuple(input_ids.shape)}")
        batch, length = input_ids.shape
        if not self.matchers:
            self._start(batch, length)
        elif batch != len(self.matchers):
            raise ValueError(f"input_ids: {batch} rows, but this processor follows {len(self.matchers)}; "
                             "call reset() before another generation")
        ids = input_ids.cpu().numpy()
        for r, m in enumerate(self.matchers):
            answer = ids[r, self._starts[r]:]
            fed = self._fed[r]
            if len(answer) < len(fed) or not np.array_equal(answer[:len(fed)], fed):
                m.reset()
                fed = answer[:0]
            for pos, t in enumerate(answer[len(fed):].tolist(), start=self._starts[r] + len(fed)):
                if not m.accept_token(t) and not m.terminated:  # tokens after the end are padding
                    raise ValueError(f"input_ids[{r}, {pos}]: token {t} is refused by the citation automaton "
                                     "(a marker must spell an allowlisted id and close); was this processor "
                                     "applied at every step?")
            self._fed[r] = answer.copy()

    def _start(self, batch: int, length: int) -> None:
        starts = self.prompt_lengths or [length]
        if len(starts) == 1:
            starts = starts * batch
        if len(starts) != batch or max(starts) > length:
            raise ValueError(f"prompt_lengths: {self.prompt_lengths} do not fit input_ids of {batch} rows "
                             f"of {length} tokens")
        allowed = self.allowed * batch if len(self.allowed) == 1 else self.allowed
        if len(allowed) != batch:
            raise ValueError(f"allowlist: {len(self.allowed)} allowlists for input_ids of {batch} rows")
        self._starts = starts
        self.matchers = [CitationMatcher(a, require_citation=self.require_citation) for a in allowed]
        self._fed = [np.zeros(0, dtype=np.int64) for _ in range(batch)]
        self._bitmask = allocate_token_bitmask(batch, self.grammar.vocab.size)
