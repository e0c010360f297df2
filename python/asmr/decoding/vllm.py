"""The citation-closure automaton as vLLM logits processors (optional: vLLM is not a dependency).

A request opts in through ``SamplingParams.extra_args``::

    SamplingParams(extra_args={"asmr_allowlist": [...ids...], "asmr_require_citation": True})

and the engine loads one of the two adapters by name:

- ``asmr.decoding.vllm:CitationLogitsProcessor`` for the Model Runner V2
  interface, ``vllm.v1.worker.gpu.sample.logits_processor.LogitsProcessor``
  (``__init__(vllm_config, req_states)``, ``validate_params``,
  ``add_request(req_idx, sampling_params) -> bool``, ``apply(logits, ctx)``
  with a ``LogitsContext``), as in vllm-project/vllm
  ``vllm/v1/worker/gpu/sample/logits_processor/interface.py`` and
  ``loader.py`` (commits 0e0c7af8 and 05b495e5), ``vllm/v1/worker/gpu/buffer_utils.py``
  for the request-state buffers;
- ``asmr.decoding.vllm:LegacyCitationLogitsProcessor`` for the V1 interface,
  ``vllm.v1.sample.logits_processor.LogitsProcessor``
  (``__init__(vllm_config, device, is_pin_memory)``, ``is_argmax_invariant``,
  ``update_state(BatchUpdate | None)``, ``apply(logits)``), as in
  ``vllm/v1/sample/logits_processor/interface.py`` (commit 05da17cd) and the
  move semantics of ``process_dict_updates`` in ``builtin.py``.

The two classes subclass vLLM's bases, so they are built on first access
(module ``__getattr__``); everything else here, the per-request core that
both share, imports and runs without vLLM.

Each step the core reads the tokens each request committed since the last
step (a host read of a few ints, which any CPU-side automaton needs), fills
one bitmask for the batch on the CPU in one native call, copies it to the
logits' device (from pinned memory on CUDA) and applies it there.
"""
from __future__ import annotations

import copy
import logging
from typing import Any, Callable, Sequence

import torch

from .automaton import (CitationGrammar, CitationMatcher, allocate_token_bitmask, apply_token_bitmask_inplace,
                        fill_next_token_bitmask)
from .hf import citation_grammar_for

ALLOWLIST_ARG = "asmr_allowlist"
REQUIRE_CITATION_ARG = "asmr_require_citation"

logger = logging.getLogger(__name__)


def citation_args(sampling_params) -> tuple[tuple[str, ...], bool] | None:
    """(allowlisted ids, require_citation) from a request's ``extra_args``; None: not constrained."""
    extra = getattr(sampling_params, "extra_args", None) or {}
    require = extra.get(REQUIRE_CITATION_ARG, False)
    # Integers too: that is how a flag arrives through the OpenAI server's vllm_xargs.
    if require not in (True, False, 0, 1):
        raise ValueError(f"extra_args[{REQUIRE_CITATION_ARG!r}]: expected a bool, got {require!r}")
    if ALLOWLIST_ARG not in extra:
        if require:
            raise ValueError(f"extra_args[{REQUIRE_CITATION_ARG!r}] needs extra_args[{ALLOWLIST_ARG!r}]")
        return None
    ids = extra[ALLOWLIST_ARG]
    if not isinstance(ids, (list, tuple)) or not all(isinstance(i, str) for i in ids):
        raise ValueError(f"extra_args[{ALLOWLIST_ARG!r}]: expected a list of id strings, got {ids!r:.200}")
    if require and not ids:
        raise ValueError(f"extra_args[{REQUIRE_CITATION_ARG!r}] needs at least one allowlisted id: "
                         "with an empty allowlist the answer could never end")
    return tuple(ids), bool(require)


class CitationRequest:
    """One request's matcher and how many of its output tokens the matcher has read."""

    def __init__(self, matcher: CitationMatcher, output: list[int] | None = None) -> None:
        self.matcher = matcher
        self.read = 0
        self.output = output  # the engine's live output list (V1), if it hands one over

    def catch_up(self, length: int, fetch: Callable[[int, int], Sequence[int]]) -> None:
        """Read output tokens up to ``length``; ``fetch(a, b)`` returns output tokens ``[a, b)``."""
        if length < self.read:  # the engine took tokens back: read the output again from its start
            self.matcher.reset()
            self.read = 0
        if length == self.read:
            return
        m = self.matcher
        for t in fetch(self.read, length):
            if not m.accept_token(t) and not m.terminated:
                # Something after this processor forced a token the mask refused (vLLM lets a
                # thinking budget do that). The marker is broken; the verifier drops it. Follow
                # the rest as free text, keeping the citations already closed.
                logger.warning("citation constraint broken by token %d forced after the mask; "
                               "following the rest of the request as free text", t)
                citations = m.citations
                m.reset()
                m.citations = citations
        self.read = length


class CitationRequests:
    """The per-request core both adapters share: requests by slot, one batched fill and apply a step."""

    def __init__(self, grammar: CitationGrammar, *, pin_memory: bool = False) -> None:
        self.grammar = grammar
        self.pin_memory = pin_memory
        self.requests: dict[int, CitationRequest] = {}
        self._host: torch.Tensor | None = None  # [rows, words] int32, pinned on CUDA
        self._on_device: torch.Tensor | None = None
        self._copied = None  # CUDA event: the last copy out of _host has finished

    def add(self, slot: int, sampling_params, output: list[int] | None = None) -> bool:
        """Start following the request in ``slot`` (replacing whatever was there); False: not constrained."""
        self.requests.pop(slot, None)
        args = citation_args(sampling_params)
        if args is None:
            return False
        ids, require = args
        matcher = CitationMatcher(self.grammar.compile(ids), require_citation=require)
        self.requests[slot] = CitationRequest(matcher, output)
        return True

    def remove(self, slot: int) -> None:
        self.requests.pop(slot, None)

    def move(self, a: int, b: int, swap: bool) -> None:
        """The request in slot ``a`` goes to ``b``; with ``swap`` the one in ``b`` goes to ``a``."""
        ra, rb = self.requests.pop(a, None), self.requests.pop(b, None)
        if ra is not None:
            self.requests[b] = ra
        if swap and rb is not None:
            self.requests[a] = rb

    def mask(self, logits: torch.Tensor, rows: Sequence[CitationMatcher | None]) -> torch.Tensor:
        """Mask logits row r by ``rows[r]`` (None: left alone), in place."""
        if len(rows) != logits.shape[0]:
            raise ValueError(f"rows: {len(rows)} matchers for {logits.shape[0]} logits rows")
        if logits.shape[1] != self.grammar.vocab.size:  # the kernel would mask the columns past the grammar
            raise ValueError(f"logits: {logits.shape[1]} a row, but the grammar's vocabulary has "
                             f"{self.grammar.vocab.size} tokens")
        host = self._host_rows(len(rows))
        fill_next_token_bitmask(rows, host.numpy())
        if logits.device.type == "cpu":
            apply_token_bitmask_inplace(logits, host)
            return logits
        on_device = self._device_rows(len(rows), logits.device)
        on_device.copy_(host, non_blocking=True)
        if logits.is_cuda:
            self._copied = torch.cuda.Event()
            self._copied.record()
        apply_token_bitmask_inplace(logits, on_device)
        return logits

    def _host_rows(self, n: int) -> torch.Tensor:
        if self._copied is not None:
            self._copied.synchronize()  # the pinned buffer may still be read by last step's copy
        if self._host is None or self._host.shape[0] < n:
            self._host = torch.from_numpy(allocate_token_bitmask(max(n, 8), self.grammar.vocab.size))
            if self.pin_memory:
                self._host = self._host.pin_memory()
        return self._host[:n]

    def _device_rows(self, n: int, device: torch.device) -> torch.Tensor:
        if self._on_device is None or self._on_device.shape[0] < n or self._on_device.device != device:
            self._on_device = torch.empty_like(self._host, device=device)
        return self._on_device[:n]


def legacy_update(requests: CitationRequests, batch_update, swap) -> None:
    """Apply a V1 ``BatchUpdate``: removed, then added, then moved.

    ``swap``: vLLM's ``MoveDirectionality.SWAP`` (passed in, so this runs without vLLM).
    """
    if batch_update is None:
        return
    for index in batch_update.removed:
        requests.remove(index)
    for index, params, _prompt, output in batch_update.added:
        requests.add(index, params, output)
    for a, b, direction in batch_update.moved:
        requests.move(a, b, direction == swap)


def legacy_rows(requests: CitationRequests, batch_size: int) -> list[CitationMatcher | None]:
    """V1: catch every request up from its live output list; row i is batch index i."""
    rows: list[CitationMatcher | None] = [None] * batch_size
    for index, req in requests.requests.items():
        out = req.output
        req.catch_up(len(out), lambda a, b: out[a:b])
        rows[index] = None if req.matcher.terminated else req.matcher
    return rows


def model_runner_v2_rows(requests: CitationRequests, ctx, req_states) -> list[CitationMatcher | None] | None:
    """Model Runner V2: the matcher of every logits row (None: not ours), or None when no row is ours.

    A row is a request slot at a position; under speculative decoding a slot
    owns several rows, and row k's input is draft token k, so its matcher is
    the committed one advanced over drafts 1..k (a copy: drafts may be rejected).
    """
    slots = [int(s) for s in ctx.idx_mapping_np]
    if not any(s in requests.requests for s in slots):
        return None
    # One device-to-host read for the step's layout.
    layout = (ctx.expanded_idx_mapping, ctx.expanded_local_pos, ctx.pos, ctx.input_ids)
    row_slot, local_pos, pos, input_ids = torch.stack([t.to(torch.int64) for t in layout]).tolist()
    rows_of: dict[int, list[int]] = {}
    for row, slot in enumerate(row_slot):
        rows_of.setdefault(slot, []).append(row)
    matchers: list[CitationMatcher | None] = [None] * len(row_slot)
    for slot in slots:
        req = requests.requests.get(slot)
        if req is None or slot not in rows_of:
            continue
        rows = sorted(rows_of[slot], key=local_pos.__getitem__)
        first = rows[0]
        prompt_len = int(req_states.prompt_len.np[slot])

        def fetch(a: int, b: int, slot=slot, prompt_len=prompt_len, last=input_ids[first]) -> list[int]:
            # Output token b-1 is this step's input; earlier ones are in the committed history.
            if b - 1 == a:
                return [last]
            return req_states.all_token_ids.gpu[slot, prompt_len + a:prompt_len + b - 1].tolist() + [last]

        # Rows before the end of the prompt (prefill chunks) have no output yet.
        req.catch_up(max(0, pos[first] + 1 - prompt_len), fetch)
        m: CitationMatcher | None = None if req.matcher.terminated else req.matcher
        matchers[first] = m
        for row in rows[1:]:
            if m is not None:
                m = copy.copy(m)
                # A draft the mask refuses is rejected by the sampler; the rows after it do not count.
                if not m.accept_token(input_ids[row]) or m.terminated:
                    m = None
            matchers[row] = m
    return matchers


def vllm_grammar(vllm_config) -> CitationGrammar:
    """The grammar of the served model: its tokenizer, at the width of its logits, ending at its EOS ids."""
    from transformers import AutoTokenizer

    mc = vllm_config.model_config
    if not mc.tokenizer:
        raise ValueError("vllm_config.model_config.tokenizer: the citation processor needs the model's "
                         "tokenizer (do not skip tokenizer initialisation)")
    tokenizer = AutoTokenizer.from_pretrained(mc.tokenizer, revision=mc.tokenizer_revision,
                                              trust_remote_code=mc.trust_remote_code)
    eos: set[int] = set()
    for value in (tokenizer.eos_token_id, getattr(mc.hf_config, "eos_token_id", None),
                  (mc.try_get_generation_config() or {}).get("eos_token_id")):
        eos.update([value] if isinstance(value, int) else value or ())
    return citation_grammar_for(tokenizer, size=mc.get_vocab_size(), eos_ids=eos)


def _model_runner_v2_class():
    from vllm.v1.worker.gpu.sample.logits_processor import LogitsProcessor

    class CitationLogitsProcessor(LogitsProcessor):
        """Model Runner V2: masks requests that carry ``extra_args["asmr_allowlist"]``."""

        def __init__(self, vllm_config, req_states) -> None:
            super().__init__(vllm_config, req_states)
            self.req_states = req_states
            self.requests = CitationRequests(vllm_grammar(vllm_config),
                                             pin_memory=req_states.device.type == "cuda")

        @classmethod
        def validate_params(cls, sampling_params) -> None:
            citation_args(sampling_params)

        def add_request(self, req_idx: int, sampling_params) -> bool:
            return self.requests.add(req_idx, sampling_params)

        def apply(self, logits: torch.Tensor, ctx) -> torch.Tensor:
            rows = model_runner_v2_rows(self.requests, ctx, self.req_states)
            return logits if rows is None else self.requests.mask(logits, rows)

    return CitationLogitsProcessor


def _legacy_class():
    from vllm.v1.sample.logits_processor import LogitsProcessor, MoveDirectionality

    class LegacyCitationLogitsProcessor(LogitsProcessor):
        """V1 (``BatchUpdate``): masks requests that carry ``extra_args["asmr_allowlist"]``."""

        def __init__(self, vllm_config, device: torch.device, is_pin_memory: bool) -> None:
            self.requests = CitationRequests(vllm_grammar(vllm_config), pin_memory=is_pin_memory)

        @classmethod
        def validate_params(cls, sampling_params) -> None:
            citation_args(sampling_params)

        def is_argmax_invariant(self) -> bool:
            return False  # masking changes which token is likeliest

        def update_state(self, batch_update) -> None:
            legacy_update(self.requests, batch_update, MoveDirectionality.SWAP)

        def apply(self, logits: torch.Tensor) -> torch.Tensor:
            if not self.requests.requests:
                return logits
            return self.requests.mask(logits, legacy_rows(self.requests, logits.shape[0]))

    return LegacyCitationLogitsProcessor


_ADAPTERS: dict[str, Callable[[], type]] = {
    "CitationLogitsProcessor": _model_runner_v2_class,
    "LegacyCitationLogitsProcessor": _legacy_class,
}


def __getattr__(name: str) -> Any:
    if name not in _ADAPTERS:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    try:
        cls = _ADAPTERS[name]()
    except ImportError as exc:
        raise ImportError(f"asmr.decoding.vllm.{name} subclasses vLLM's logits processor and needs vLLM "
                          f"(an optional extra; {exc})") from exc
    globals()[name] = cls
    return cls
