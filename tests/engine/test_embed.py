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
