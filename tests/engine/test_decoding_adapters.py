"""Adapters of the citation-closure automaton: transformers, vLLM (both interfaces), SmolLM2 end to end."""
from __future__ import annotations

import enum
from types import SimpleNamespace

import numpy as np
import pytest
import torch

from asmr.decoding.automaton import CitationMatcher, allocate_token_bitmask, unpack_bitmask
from asmr.decoding.hf import CitationLogitsProcessor, citation_grammar_for, compile_allowlist
from asmr.decoding.markers import DEFAULT_MARKERS, marker_pattern
from asmr.decoding.vllm import (CitationRequests, citation_args, legacy_rows, legacy_update,
                                model_runner_v2_rows, vllm_grammar)
from asmr.generate.local import load_smollm2

IDS = ("memo://kb/handbook/abc123def456", "memo://kb/policy/0f9e8d7c6b5a", "memo://kb/faq/77aa88bb99cc")
PATTERN = marker_pattern()
EOS = 2  # SmolLM2's <|im_end|>: eos and pad
NO_VLLM = "vLLM is an optional extra (it pins another torch); not installed here"


@pytest.fixture(scope="module")
def smol():
    # One torch thread: on shared CI cores, OpenMP threads that spin waiting for each
    # other make SmolLM2's decoding steps several times slower, not faster.
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield load_smollm2()
    torch.set_num_threads(threads)


@pytest.fixture(scope="module")
def grammar(smol):
    model, tokenizer = smol
    return citation_grammar_for(tokenizer, size=model.config.vocab_size)


def text_of(grammar, tokens) -> str:
    data = b"".join(grammar.vocab.token_bytes(t) for t in tokens if grammar.vocab.kinds[t] == 0)
    return data.decode("utf-8", errors="replace")


def check_answer(text: str, in_marker: bool) -> list[str]:
    """The cited ids; fails on an id outside IDS or an opener left open (unless cut inside it)."""
    cited = [next(v for v in m.groupdict().values() if v) for m in PATTERN.finditer(text)]
    assert set(cited) <= set(IDS), text
    rest = PATTERN.sub("\x00", text)  # a separator, so removed markers cannot join text into an opener
    opens = [rest.find(m.opener) for m in DEFAULT_MARKERS if m.opener in rest]
    if in_marker:
        tail = rest[min(opens):]
        assert any(m.spell(i).startswith(tail) for m in DEFAULT_MARKERS for i in IDS), text
    else:
        assert not opens, text
    return cited


class MarkerHappyModel:
    """Random logits from a 'model' that keeps opening ``[cite:`` and inventing ids, and likes to stop."""

    def __init__(self, tokenizer, vocab_size: int, seed: int) -> None:
        self.gen = torch.Generator().manual_seed(seed)
        self.vocab_size = vocab_size
        self.pieces = {b"": tokenizer.encode("[", add_special_tokens=False)[0],
                       b"[": tokenizer.encode("c", add_special_tokens=False)[0],
                       b"[c": tokenizer.encode("ite", add_special_tokens=False)[0],
                       b"[cite": tokenizer.encode(":", add_special_tokens=False)[0]}
        self.invented = tokenizer.encode("zzz999/", add_special_tokens=False)

    def __call__(self, texts: list[bytes]) -> torch.Tensor:
        scores = torch.randn(len(texts), self.vocab_size, generator=self.gen) * 2
        for r, text in enumerate(texts):
            done = max((p for p in self.pieces if text.endswith(p)), key=len)
            # Against 49k noisy logits (logsumexp about 13), these make the next opener
            # piece the likeliest token, then invented ids, then the end.
            scores[r, self.pieces[done]] += 16
            scores[r, self.invented] += 13
            scores[r, EOS] += 9
        return scores


def run(proc, model, grammar, input_ids: torch.Tensor, steps: int, *, greedy: bool) -> torch.Tensor:
    """A generate loop: finished rows are padded with EOS, as transformers does."""
    done = torch.zeros(input_ids.shape[0], dtype=torch.bool)
    for _ in range(steps):
        texts = [b"".join(grammar.vocab.token_bytes(t) for t in row) for row in input_ids.tolist()]
        scores = proc(input_ids, model(texts))
        assert torch.isfinite(scores).any(dim=1).all()
        if greedy:
            nxt = scores.argmax(dim=1)
        else:
            nxt = torch.multinomial(torch.softmax(scores, dim=1), 1, generator=model.gen).squeeze(1)
        nxt = torch.where(done, torch.full_like(nxt, EOS), nxt)
        done |= nxt == EOS
        input_ids = torch.cat([input_ids, nxt[:, None]], dim=1)
        if done.all():
            break
    proc.observe(input_ids)
    return input_ids


@pytest.mark.parametrize("greedy", [False, True])
@pytest.mark.parametrize("seed", range(4))
def test_random_continuations_keep_markers_closed_and_allowlisted(smol, grammar, seed, greedy):
    _, tokenizer = smol
    model = MarkerHappyModel(tokenizer, grammar.vocab.size, seed)
    prompt = torch.tensor([tokenizer.encode("Answer with sources:", add_special_tokens=False)] * 4)
    proc = CitationLogitsProcessor(grammar, IDS)
    out = run(proc, model, grammar, prompt, 120, greedy=greedy)
    cited = 0
    for r in range(out.shape[0]):
        answer = out[r, prompt.shape[1]:].tolist()
        cited += len(check_answer(text_of(grammar, answer), proc.matchers[r].in_marker))
    assert cited > 0  # the 'model' opens markers all the time: the test saw some close


def test_require_citation_blocks_eos_until_a_marker_closes(smol, grammar):
    _, tokenizer = smol
    proc = CitationLogitsProcessor(grammar, IDS, require_citation=True)
    script = tokenizer.encode(f"See [cite:{IDS[1]}].", add_special_tokens=False)
    ids = torch.tensor([tokenizer.encode("Q:", add_special_tokens=False)])
    for k, token in enumerate(script):
        scores = torch.zeros(1, grammar.vocab.size)
        scores[0, EOS] = 50.0
        scores[0, token] = 10.0
        scores = proc(ids, scores)
        assert scores[0, EOS] == float("-inf"), f"EOS allowed after {k} tokens, before any citation closed"
        assert scores.argmax().item() == token  # the script itself is allowed
        ids = torch.cat([ids, torch.tensor([[token]])], dim=1)
    scores = torch.zeros(1, grammar.vocab.size)
    scores[0, EOS] = 50.0
    assert proc(ids, scores).argmax().item() == EOS and proc.matchers[0].citations == 1
    # Without the requirement the answer may end at once.
    free = CitationLogitsProcessor(grammar, IDS)
    scores = torch.zeros(1, grammar.vocab.size)
    scores[0, EOS] = 50.0
    assert free(ids[:, :2], scores).argmax().item() == EOS


def test_batch_of_two_with_different_prompt_lengths(smol, grammar):
    _, tokenizer = smol
    opener = tokenizer.encode(" [cite:mem", add_special_tokens=False)
    filler = tokenizer.encode("Sources below.", add_special_tokens=False)
    width = len(filler) + len(opener)
    row0 = filler + opener                                  # its answer began with an opener
    row1 = tokenizer.encode("Question: what and why?", add_special_tokens=False)
    row1 = ([EOS] * width + row1)[-width:]                  # left-padded prompt
    input_ids = torch.tensor([row0, row1])
    proc = CitationLogitsProcessor(grammar, IDS, prompt_lengths=[len(filler), width])
    scores = proc(input_ids, torch.zeros(2, grammar.vocab.size))
    assert proc.matchers[0].in_marker and not proc.matchers[1].in_marker
    begun = b"".join(grammar.vocab.token_bytes(t) for t in opener)
    spelled = [f" [cite:{i}]".encode() for i in IDS]
    allowed0 = torch.isfinite(scores[0]).nonzero().flatten().tolist()
    assert allowed0
    for a in allowed0:  # each keeps the row on its way to an allowlisted id (or closes it)
        s = begun + grammar.vocab.token_bytes(a)
        assert any(m.startswith(s) or s.startswith(m) for m in spelled), s
    assert torch.isfinite(scores[1]).sum() > 40000  # free text: nearly everything
    model = MarkerHappyModel(tokenizer, grammar.vocab.size, 7)
    proc.reset()
    out = run(proc, model, grammar, input_ids, 80, greedy=False)
    first = text_of(grammar, out[0, len(filler):].tolist())
    assert first.startswith(" [cite:") and check_answer(first, proc.matchers[0].in_marker)
    check_answer(text_of(grammar, out[1, width:].tolist()), proc.matchers[1].in_marker)


def test_each_row_may_have_its_own_allowlist(smol, grammar):
    _, tokenizer = smol
    begun = tokenizer.encode("Q: [cite:memo://kb/", add_special_tokens=False)
    proc = CitationLogitsProcessor(grammar, [[IDS[0]], [IDS[1]]], prompt_lengths=2)
    scores = proc(torch.tensor([begun, begun]), torch.zeros(2, grammar.vocab.size))
    for r, rest in enumerate([IDS[0], IDS[1]]):
        rest = rest[len("memo://kb/"):].encode() + b"]"
        allowed = torch.isfinite(scores[r]).nonzero().flatten().tolist()
        assert allowed and all(rest.startswith(grammar.vocab.token_bytes(t)) for t in allowed)
    with pytest.raises(ValueError, match="3 allowlists for input_ids of 2 rows"):
        CitationLogitsProcessor(grammar, [[IDS[0]]] * 3)(torch.tensor([begun, begun]),
                                                           torch.zeros(2, grammar.vocab.size))


def test_rows_reordered_are_replayed(smol, grammar):
    _, tokenizer = smol
    prompt = tokenizer.encode("Q:", add_special_tokens=False)
    opened = tokenizer.encode(" [cite:memo", add_special_tokens=False)
    plain = tokenizer.encode(" plain text and a few more words", add_special_tokens=False)[:len(opened)]
    proc = CitationLogitsProcessor(grammar, IDS, prompt_lengths=len(prompt))
    proc.observe(torch.tensor([prompt + opened, prompt + plain]))
    assert [m.in_marker for m in proc.matchers] == [True, False]
    proc.observe(torch.tensor([prompt + plain, prompt + opened]))  # a beam search swapped the rows
    assert [m.in_marker for m in proc.matchers] == [False, True]


def test_processor_refuses_bad_input(smol, grammar):
    _, tokenizer = smol
    with pytest.raises(ValueError, match="allowlist"):
        CitationLogitsProcessor(grammar, "memo://kb/a/b")
    with pytest.raises(ValueError, match="require_citation"):
        CitationLogitsProcessor(grammar, [], require_citation=True)
    with pytest.raises(ValueError, match="grammar_or_vocab"):
        CitationLogitsProcessor(tokenizer, IDS)
    with pytest.raises(ValueError, match="prompt_lengths"):
        CitationLogitsProcessor(grammar, IDS, prompt_lengths=[-1])
    other = citation_grammar_for(tokenizer, size=grammar.vocab.size + 32)
    with pytest.raises(ValueError, match="another grammar"):
        compile_allowlist(grammar, other.compile(IDS))
    assert citation_grammar_for(tokenizer, size=grammar.vocab.size) is grammar  # cached per tokenizer
    proc = CitationLogitsProcessor(grammar, IDS)
    ids = torch.tensor([tokenizer.encode("Q:", add_special_tokens=False)])
    with pytest.raises(ValueError, match="logits a row"):
        proc(ids, torch.zeros(1, grammar.vocab.size + 1))
    proc(ids, torch.zeros(1, grammar.vocab.size))
    bad = tokenizer.encode(" [cite:zzz", add_special_tokens=False)
    with pytest.raises(ValueError, match="refused by the citation automaton"):
        proc(torch.cat([ids, torch.tensor([bad])], dim=1), torch.zeros(1, grammar.vocab.size))


# ---- SmolLM2 end to end ------------------------------------------------------------------------

SOURCES = {
    "memo://kb/handbook/abc123def456": "The office opens at 8 am and closes at 6 pm on weekdays.",
    "memo://kb/policy/0f9e8d7c6b5a": "Employees may work from home two days a week with manager approval.",
    "memo://kb/faq/77aa88bb99cc": "Expense reports are due by the 5th of the following month.",
}
QUESTIONS = ["When does the office open?", "How many days a week can I work from home?",
             "When are expense reports due?"]


def chat_prompt(tokenizer, question: str) -> str:
    # Sources carry their marker, which SmolLM2-135M sometimes copies: the test then sees markers.
    sources = "\n".join(f"{text} [cite:{uid}]" for uid, text in SOURCES.items())
    messages = [
        {"role": "system", "content": "Answer in one sentence from the sources and end it with the "
                                      "[cite:...] tag of the source you used."},
        {"role": "user", "content": f"Sources:\n{sources}\n\nQuestion: {question}"},
    ]
    return tokenizer.apply_chat_template(messages, tokenize=False, add_generation_prompt=True)


def test_smollm2_emits_only_allowlisted_closed_markers(smol, grammar):
    from transformers import LogitsProcessorList

    model, tokenizer = smol
    inputs = tokenizer([chat_prompt(tokenizer, q) for q in QUESTIONS], return_tensors="pt", padding=True,
                       padding_side="left")
    proc = CitationLogitsProcessor(grammar, list(SOURCES), require_citation=True)
    with torch.no_grad():
        out = model.generate(**inputs, max_new_tokens=60, do_sample=False, pad_token_id=EOS,
                             logits_processor=LogitsProcessorList([proc]))
    proc.observe(out)
    width = inputs["input_ids"].shape[1]
    cited = []
    for r in range(len(QUESTIONS)):
        answer = out[r, width:].tolist()
        text = tokenizer.decode(answer, skip_special_tokens=True)
        m = proc.matchers[r]
        if EOS in answer:  # it ended: only after a citation, and never inside a marker
            assert m.citations >= 1 and not m.in_marker
        cited += check_answer(text, m.in_marker)
    assert cited, "with the citation required and 60 tokens, SmolLM2 cited nothing"


# ---- vLLM: the shared per-request core (no vLLM needed) ----------------------------------------

def params(**extra):
    return SimpleNamespace(extra_args=extra or None)


def test_citation_args():
    assert citation_args(params()) is None
    assert citation_args(SimpleNamespace()) is None
    assert citation_args(params(asmr_allowlist=list(IDS))) == (IDS, False)
    assert citation_args(params(asmr_allowlist=list(IDS), asmr_require_citation=1)) == (IDS, True)
    for bad, match in [(dict(asmr_allowlist="memo://kb/a/b"), "asmr_allowlist"),
                       (dict(asmr_allowlist=[1, 2]), "asmr_allowlist"),
                       (dict(asmr_require_citation=True), "needs extra_args"),
                       (dict(asmr_allowlist=[], asmr_require_citation=True), "at least one"),
                       (dict(asmr_allowlist=list(IDS), asmr_require_citation="yes"), "expected a bool")]:
        with pytest.raises(ValueError, match=match):
            citation_args(params(**bad))


def expected_row(matcher: CitationMatcher | None, vocab_size: int) -> np.ndarray:
    mask = allocate_token_bitmask(1, vocab_size)
    if matcher is not None:
        matcher.fill_next_token_bitmask(mask)
    return unpack_bitmask(mask, vocab_size)[0]


class Move(enum.Enum):
    UNIDIRECTIONAL = 1
    SWAP = 2


def test_legacy_core_follows_batch_updates(smol, grammar):
    _, tokenizer = smol
    core = CitationRequests(grammar)
    opened = tokenizer.encode(" [cite:memo", add_special_tokens=False)
    out0, out1, out2 = list(opened), [], tokenizer.encode(" plain", add_special_tokens=False)
    update = SimpleNamespace(batch_size=3, removed=[], moved=[], added=[
        (0, params(asmr_allowlist=list(IDS)), [1, 2], out0),
        (1, params(), [1, 2], out1),                                     # not constrained
        (2, params(asmr_allowlist=[IDS[0]], asmr_require_citation=True), [1], out2)])
    legacy_update(core, update, Move.SWAP)
    assert sorted(core.requests) == [0, 2]
    logits = torch.zeros(3, grammar.vocab.size)
    core.mask(logits, legacy_rows(core, 3))
    assert core.requests[0].matcher.in_marker and not core.requests[2].matcher.in_marker
    assert torch.isfinite(logits[1]).all()
    assert np.array_equal(torch.isfinite(logits[0]).numpy(),
                          expected_row(core.requests[0].matcher, grammar.vocab.size))
    assert not torch.isfinite(logits[2, EOS])  # require_citation, nothing cited yet
    out0.append(tokenizer.encode("://", add_special_tokens=False)[0])  # the engine appends to the live list
    legacy_update(core, SimpleNamespace(batch_size=2, removed=[1], added=[], moved=[(0, 1, Move.SWAP)]),
                  Move.SWAP)
    assert sorted(core.requests) == [1, 2] and core.requests[1].output is out0
    moved = [(2, 0, Move.UNIDIRECTIONAL)]
    legacy_update(core, SimpleNamespace(batch_size=2, removed=[], added=[], moved=moved), Move.SWAP)
    assert sorted(core.requests) == [0, 1]
    rows = legacy_rows(core, 2)
    assert core.requests[1].read == len(out0) and rows[0] is core.requests[0].matcher


def fake_v2(slots_of_rows, local_pos, pos, input_ids, idx_mapping, prompt_len, history):
    ctx = SimpleNamespace(expanded_idx_mapping=torch.tensor(slots_of_rows, dtype=torch.int32),
                          expanded_local_pos=torch.tensor(local_pos, dtype=torch.int32),
                          pos=torch.tensor(pos, dtype=torch.int64),
                          input_ids=torch.tensor(input_ids, dtype=torch.int32),
                          idx_mapping_np=np.array(idx_mapping, dtype=np.int32))
    req_states = SimpleNamespace(prompt_len=SimpleNamespace(np=np.array(prompt_len)),
                                 all_token_ids=SimpleNamespace(gpu=torch.tensor(history, dtype=torch.int32)))
    return ctx, req_states


def test_model_runner_v2_core_reads_committed_tokens_and_drafts(smol, grammar):
    _, tokenizer = smol
    core = CitationRequests(grammar)
    assert core.add(3, params(asmr_allowlist=list(IDS)))
    assert not core.add(5, params())
    prompt = [1, 7, 7, 7]
    answer = tokenizer.encode(" ok [cite:memo://kb/faq/77", add_special_tokens=False)
    history = np.zeros((8, 64), dtype=np.int64)
    history[3, :len(prompt) + len(answer)] = prompt + answer
    prompt_lens = [0] * 8
    prompt_lens[3] = len(prompt)

    # Prefill: the row's input is the last prompt token; nothing generated yet.
    ctx, rs = fake_v2([5, 3], [0, 0], [9, len(prompt) - 1], [0, prompt[-1]], [5, 3], prompt_lens, history)
    rows = model_runner_v2_rows(core, ctx, rs)
    assert rows[0] is None and rows[1] is core.requests[3].matcher and core.requests[3].read == 0

    # Decode, after a gap (a resumed request): output tokens 0..k-1 committed, token k-1 is this step's input.
    k = len(answer) - 2
    ctx, rs = fake_v2([3], [0], [len(prompt) + k - 1], [answer[k - 1]], [3], prompt_lens, history)
    rows = model_runner_v2_rows(core, ctx, rs)
    assert core.requests[3].read == k and rows[0].in_marker

    # Speculative decoding: output token k committed, then two drafts, the second one invented;
    # the rows come in any order.
    p = len(prompt)
    draft_bad = tokenizer.encode("zz", add_special_tokens=False)[0]
    ctx, rs = fake_v2([3, 3, 3], [2, 0, 1], [p + k + 2, p + k, p + k + 1],
                      [draft_bad, answer[k], answer[k + 1]], [3], prompt_lens, history)
    rows = model_runner_v2_rows(core, ctx, rs)
    committed = core.requests[3].matcher
    assert core.requests[3].read == k + 1 and rows[1] is committed
    assert rows[2] is not None and rows[2] is not committed  # its own copy, advanced over the draft
    assert rows[0] is None  # after a refused draft: those rows are rejected anyway
    logits = torch.zeros(3, grammar.vocab.size)
    core.mask(logits, rows)
    assert np.array_equal(torch.isfinite(logits[1]).numpy(), expected_row(committed, grammar.vocab.size))
    assert np.array_equal(torch.isfinite(logits[2]).numpy(), expected_row(rows[2], grammar.vocab.size))
    assert torch.isfinite(logits[0]).all()

    ctx, rs = fake_v2([5], [0], [9], [0], [5], prompt_lens, history)
    assert model_runner_v2_rows(core, ctx, rs) is None  # no row of ours: nothing to do


def test_vllm_grammar_from_config(smol, grammar, tmp_path):
    model, tokenizer = smol
    tokenizer.save_pretrained(tmp_path)
    config = SimpleNamespace(model_config=SimpleNamespace(
        tokenizer=str(tmp_path), tokenizer_revision=None, trust_remote_code=False,
        hf_config=SimpleNamespace(eos_token_id=[EOS]), try_get_generation_config=lambda: {"eos_token_id": 0},
        get_vocab_size=lambda: model.config.vocab_size))
    g = vllm_grammar(config)
    assert g.vocab.size == model.config.vocab_size and g.vocab.eos_ids == [0, EOS]
    with pytest.raises(ValueError, match="tokenizer"):
        vllm_grammar(SimpleNamespace(model_config=SimpleNamespace(tokenizer=None)))


def test_adapters_need_vllm_only_when_used():
    import importlib.util

    import asmr.decoding.vllm as adapters
    if importlib.util.find_spec("vllm") is None:
        with pytest.raises(ImportError, match="needs vLLM"):
            adapters.CitationLogitsProcessor
    with pytest.raises(AttributeError):
        adapters.NoSuchProcessor


# ---- vLLM itself ---------------------------------------------------------------------------------

def vllm_config_for(tmp_path, tokenizer, vocab_size):
    tokenizer.save_pretrained(tmp_path)
    return SimpleNamespace(model_config=SimpleNamespace(
        tokenizer=str(tmp_path), tokenizer_revision=None, trust_remote_code=False,
        hf_config=SimpleNamespace(eos_token_id=EOS), try_get_generation_config=lambda: {},
        get_vocab_size=lambda: vocab_size))


def test_legacy_adapter_with_vllm(smol, grammar, tmp_path):
    pytest.importorskip("vllm", reason=NO_VLLM)
    from vllm.v1.sample.logits_processor import BatchUpdate, LogitsProcessor, MoveDirectionality

    from asmr.decoding.vllm import LegacyCitationLogitsProcessor

    model, tokenizer = smol
    assert issubclass(LegacyCitationLogitsProcessor, LogitsProcessor)
    proc = LegacyCitationLogitsProcessor(vllm_config_for(tmp_path, tokenizer, model.config.vocab_size),
                                         torch.device("cpu"), False)
    assert not proc.is_argmax_invariant()
    out = tokenizer.encode(" [cite:memo", add_special_tokens=False)
    proc.update_state(BatchUpdate(batch_size=2, removed=[], moved=[], added=[
        (1, SimpleNamespace(extra_args={"asmr_allowlist": list(IDS)}), [1], out)]))
    logits = proc.apply(torch.zeros(2, model.config.vocab_size))
    assert torch.isfinite(logits[0]).all() and torch.isfinite(logits[1]).sum() < 100
    swap = [(1, 0, MoveDirectionality.SWAP)]
    proc.update_state(BatchUpdate(batch_size=2, removed=[], added=[], moved=swap))
    logits = proc.apply(torch.zeros(2, model.config.vocab_size))
    assert torch.isfinite(logits[1]).all() and torch.isfinite(logits[0]).sum() < 100


def test_model_runner_v2_adapter_with_vllm(smol, grammar, tmp_path):
    pytest.importorskip("vllm", reason=NO_VLLM)
    lp = pytest.importorskip("vllm.v1.worker.gpu.sample.logits_processor",
                             reason="this vLLM predates the Model Runner V2 logits-processor interface")

    from asmr.decoding.vllm import CitationLogitsProcessor

    model, tokenizer = smol
    assert issubclass(CitationLogitsProcessor, lp.LogitsProcessor)
    answer = tokenizer.encode(" [cite:memo", add_special_tokens=False)
    history = np.zeros((2, 32), dtype=np.int64)
    history[1, :1 + len(answer)] = [1] + answer
    ctx, req_states = fake_v2([1], [0], [len(answer)], [answer[-1]], [1], [0, 1], history)
    req_states.device = torch.device("cpu")
    proc = CitationLogitsProcessor(vllm_config_for(tmp_path, tokenizer, model.config.vocab_size), req_states)
    assert proc.add_request(1, SimpleNamespace(extra_args={"asmr_allowlist": list(IDS)}))
    assert not proc.add_request(0, SimpleNamespace(extra_args=None))
    logits = proc.apply(torch.zeros(1, model.config.vocab_size), ctx)
    assert torch.isfinite(logits[0]).sum() < 100


def test_model_runner_v2_adapter_through_vllms_loader(smol, grammar, tmp_path):
    """The way an engine meets the adapter: vLLM's own loader resolves the class name, its request
    state wrapper and LogitsContext (real dataclasses: a renamed field fails here), and its
    admission validator runs validate_params on real SamplingParams."""
    pytest.importorskip("vllm", reason=NO_VLLM)
    loader = pytest.importorskip("vllm.v1.worker.gpu.sample.logits_processor.loader",
                                 reason="this vLLM predates the Model Runner V2 logits-processor interface")
    from vllm import SamplingParams
    from vllm.exceptions import VLLMValidationError
    from vllm.v1.worker.gpu.sample.logits_processor.interface import LogitsContext

    fqcn = "asmr.decoding.vllm:CitationLogitsProcessor"
    validate = loader.build_custom_logits_processors_params_validator([fqcn])
    validate(SamplingParams(extra_args={"asmr_allowlist": list(IDS), "asmr_require_citation": True}))
    validate(SamplingParams())
    with pytest.raises(VLLMValidationError, match="asmr_require_citation"):
        validate(SamplingParams(extra_args={"asmr_require_citation": True}))

    model, tokenizer = smol
    vocab = model.config.vocab_size
    answer = tokenizer.encode(" [cite:memo", add_special_tokens=False)
    history = np.zeros((3, 32), dtype=np.int32)
    history[2, :1 + len(answer)] = [1] + answer
    buffer = lambda a: SimpleNamespace(np=np.asarray(a, np.int32), gpu=torch.tensor(a))  # noqa: E731
    req_states = SimpleNamespace(device=torch.device("cpu"), max_num_reqs=3, vocab_size=vocab,
                                 all_token_ids=buffer(history), prompt_len=buffer([0, 0, 1]),
                                 prefill_len=buffer([0, 0, 1]), total_len=buffer([0, 0, 1 + len(answer)]))
    [proc] = loader.build_custom_logits_processors(vllm_config_for(tmp_path, tokenizer, vocab), req_states,
                                                   False, [fqcn])
    assert proc.add_request(2, SamplingParams(extra_args={"asmr_allowlist": list(IDS)}))
    assert not proc.add_request(0, SamplingParams())
    # Batch of two requests, slots 0 (free text) and 2 (inside a marker), one row each.
    ctx = LogitsContext(expanded_idx_mapping=torch.tensor([0, 2], dtype=torch.int32),
                        idx_mapping=torch.tensor([0, 2], dtype=torch.int32),
                        idx_mapping_np=np.array([0, 2], dtype=np.int32),
                        expanded_local_pos=torch.zeros(2, dtype=torch.int32),
                        input_ids=torch.tensor([5, answer[-1]], dtype=torch.int32),
                        pos=torch.tensor([3, len(answer)], dtype=torch.int64),
                        seq_lens_upper_bound_np=np.array([4, 1 + len(answer)], dtype=np.int32))
    logits = proc.apply(torch.zeros(2, vocab), ctx)
    assert torch.isfinite(logits[0]).all()
    allowed = torch.isfinite(logits[1]).nonzero().flatten().tolist()
    assert 0 < len(allowed) < 100
    text = tokenizer.decode(answer)
    for t in allowed:  # every token left open keeps the marker a prefix of an allowlisted citation
        cont = text + tokenizer.decode([t])
        assert any(f"[cite:{i}]".startswith(cont.strip()) or cont.strip().startswith(f"[cite:{i}]")
                   for i in IDS), cont
