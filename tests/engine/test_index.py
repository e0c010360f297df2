"""Lexical (BM25 via bm25s) and dense (faiss) indexes over unit rows."""
import bm25s
import numpy as np
import pytest

from asmr.index import DenseIndex, LexicalIndex
from asmr.text.words import tokenize


def test_tokenize_words_and_cjk_bigrams():
    assert tokenize("Version 2.5, released ON Monday!") == ["version", "2", "5", "released", "on", "monday"]
    assert tokenize("北京大学 in Beijing") == ["北京", "京大", "大学", "in", "beijing"]
    assert tokenize("中") == ["中"]
    assert tokenize("café_au_lait") == ["café", "au", "lait"]


def test_vectorized_build_scores_like_bm25s():
    rng = np.random.default_rng(0)
    words = [f"w{i}" for i in range(300)]
    texts = [" ".join(rng.choice(words, size=rng.integers(0, 25))) for _ in range(500)]
    texts += ["w3 北京", "", "w1 w1 w1 w1"]  # a Chinese word inside English text changes nothing
    ours = LexicalIndex.build(zip(np.arange(len(texts)) + 1000, texts))
    ref = bm25s.BM25(method="lucene")
    ref.index([tokenize(t) for t in texts], show_progress=False)
    for q in ["w1", "w1 w2 w3", "w7 w7 w299", "北京", "absent words"]:
        np.testing.assert_allclose(ours._bm25.get_scores(tokenize(q)), ref.get_scores(tokenize(q)),
                                   rtol=1e-5, atol=1e-6)
    rows, scores = ours.search("w1", 3)
    assert rows[0] == 1000 + len(texts) - 1  # the text that repeats w1 four times
    assert (np.diff(scores) <= 0).all() and (rows >= 1000).all()


def test_chinese_memory_scores_like_bm25s():
    texts = ["北京大学的学生在图书馆读书", "上海的学生", "", "北京", "图书馆每天开放十二个小时，学生可以借书"]
    ours = LexicalIndex.build(zip(range(len(texts)), texts))
    ref = bm25s.BM25(method="lucene")
    ref.index([tokenize(t) for t in texts], show_progress=False)
    for q in ["北京", "学生", "图书馆开放"]:
        np.testing.assert_allclose(ours._bm25.get_scores(tokenize(q)), ref.get_scores(tokenize(q)),
                                   rtol=1e-5, atol=1e-6)


def test_mixed_memory_compares_lengths_within_a_writing_system():
    """English units keep among themselves the length normalisation of an English-only memory:
    long Chinese paragraphs (hundreds of bigrams) do not make every English unit look short."""
    rng = np.random.default_rng(1)
    words = [f"w{i}" for i in range(50)]
    english = [" ".join(rng.choice(words, size=rng.integers(3, 30))) for _ in range(200)]
    chinese = ["".join(rng.choice(list("山水花鸟风月云雨雪天地人日星海河湖江"), size=400)) for _ in range(60)]
    alone = LexicalIndex.build(enumerate(english))
    mixed = LexicalIndex.build(enumerate(english + chinese))
    a = alone._bm25.get_scores(tokenize("w7"))
    m = mixed._bm25.get_scores(tokenize("w7"))[:len(english)]
    held = a > 0
    assert held.sum() > 20
    # one word: a score is its idf times a factor of term frequency and length; the idf differs
    # between the memories, the factor must not
    ratio = m[held] / a[held]
    np.testing.assert_allclose(ratio, ratio[0], rtol=1e-5)
    assert (m[~held] == 0).all()
    # a single Chinese memory: the same paragraphs score as they do alone, up to the idf
    zh_alone = LexicalIndex.build(enumerate(chinese))._bm25.get_scores(tokenize("山水"))
    zh_mixed = mixed._bm25.get_scores(tokenize("山水"))[len(english):]
    ratio = zh_mixed[zh_alone > 0] / zh_alone[zh_alone > 0]
    np.testing.assert_allclose(ratio, ratio[0], rtol=1e-5)


def test_lexical_save_load_and_active_filter(tmp_path):
    ix = LexicalIndex.build(zip([5, 9, 11], ["red apple", "green apple", "blue sky"]))
    ix.save(tmp_path / "lex")
    back = LexicalIndex.load(tmp_path / "lex")
    rows, _ = back.search("apple", 5)
    assert sorted(rows.tolist()) == [5, 9]
    active = np.ones(12, bool)
    active[5] = False
    rows, _ = back.search("apple", 5, active=active)
    assert rows.tolist() == [9]
    assert back.search("nothing here", 5)[0].size == 0


@pytest.mark.parametrize("kind", ["flat", "hnsw"])
def test_dense_search_filters_inactive_and_round_trips(tmp_path, kind):
    rng = np.random.default_rng(1)
    vecs = rng.normal(size=(300, 16)).astype(np.float32)
    vecs /= np.linalg.norm(vecs, axis=1, keepdims=True)
    rows = np.arange(300, dtype=np.int64) * 2
    ix = DenseIndex.build(16, kind)
    ix.add(rows, vecs)
    ix.save(tmp_path / "d.faiss")
    back = DenseIndex.load(tmp_path / "d.faiss")
    assert back.kind == kind and back.size == 300 and back.dim == 16
    got, scores = back.search(vecs[:3], 4)
    assert got[:, 0].tolist() == [0, 2, 4]
    np.testing.assert_allclose(scores[:, 0], 1.0, atol=1e-5)
    active = np.ones(600, bool)
    active[[0, 2, 4]] = False
    got, _ = back.search(vecs[:3], 4, active=active)
    assert not np.isin(got, [0, 2, 4]).any() and (got >= 0).all()


def test_dense_remove_from_flat():
    ix = DenseIndex.build(4, "flat")
    ix.add(np.array([3, 7]), np.eye(4, dtype=np.float32)[:2])
    ix.remove(np.array([3]))
    assert ix.rows().tolist() == [7]
    with pytest.raises(ValueError, match="flat or hnsw"):
        DenseIndex.build(4, "ivf")


def test_ascii_fast_path_tokenizes_like_tokenize():
    from asmr.text.words import token_bytes

    for text in ["Hello, World_42! x-ray e.g. 3.14 TAB\there", "ÄÖ mixed café 北京 A1", "", "___"]:
        assert [t.decode() for t in token_bytes(text)] == tokenize(text)


def test_hnsw_search_breadth_can_be_set_per_call():
    rng = np.random.default_rng(2)
    vecs = rng.normal(size=(500, 8)).astype(np.float32)
    vecs /= np.linalg.norm(vecs, axis=1, keepdims=True)
    ix = DenseIndex.build(8, "hnsw")
    ix.add(np.arange(500), vecs)
    inner = __import__("faiss").downcast_index(ix._index.index)
    before = inner.hnsw.efSearch
    rows, _ = ix.search(vecs[:5], 3, ef_search=16)
    assert rows[:, 0].tolist() == [0, 1, 2, 3, 4] and inner.hnsw.efSearch == before


def test_tokens_of_many_texts_at_once_match_one_by_one():
    from asmr.index.lexical import Tokens

    texts = ["Port 8080, workers: 4.", "", "...", "北京大学 in Beijing", "x\x01y", "Ends here", "A b C"]
    for part in (texts, texts[:3], texts[5:], [t for t in texts if t.isascii() and "\x01" not in t]):
        one, many = Tokens(), Tokens()
        for row, text in enumerate(part):
            one.add(row, text)
        many.add_many(list(range(len(part))), part)
        assert (one.rows, one.lengths, one.flat, dict(one.vocab)) == \
            (many.rows, many.lengths, many.flat, dict(many.vocab))
    joined = Tokens()
    joined.add_many([0, 1], texts[:2])
    later = Tokens(joined.vocab)
    later.add(2, texts[5])
    whole = LexicalIndex.from_tokens(joined.join(later))
    ref = LexicalIndex.build(zip([0, 1, 2], [texts[0], texts[1], texts[5]]))
    for q in ("port", "ends workers", "absent"):
        assert whole.search(q, 3)[0].tolist() == ref.search(q, 3)[0].tolist()


def test_han_folding_maps_traditional_characters_one_for_one():
    from asmr.text.cjk import fold_han

    assert fold_han("圖書館週六幾點開門？") == "图书馆周六几点开门？"
    for text in ("图书馆周六几点开门？", "Port 8080, v2.3", "", "かな 한국어"):
        assert fold_han(text) == text  # Simplified, Latin, kana and hangul stay as they are
    traditional = "臺灣電視公司節目列表：後來於1962年開播，兩週一次。"
    assert len(fold_han(traditional)) == len(traditional)  # offsets into the folded text hold
    # the word split of BM25, the graph and recall folds (unless told not to, for an unfolded index)
    from asmr.text.words import tokenize
    assert tokenize("借書證遺失後") == tokenize("借书证遗失后") != tokenize("借書證遺失後", fold=False)
    # a long text is folded by an array lookup, a short one by str.translate: the same map
    assert fold_han(traditional * 20 + "🙂\ud800") == fold_han(traditional) * 20 + "🙂\ud800"


def test_bm25_finds_a_unit_written_in_the_other_han_script(tmp_path, monkeypatch):
    from asmr.text import words

    simplified = ["图书馆周六上午九点开门，下午五点关门。", "借书证丢失后请到前台补办。"]
    traditional = ["圖書館週六上午九點開門，下午五點關門。", "借書證遺失後請到櫃檯補辦。"]
    for units, question in ((simplified, "圖書館週六幾點開門？"), (traditional, "图书馆周六几点开门？")):
        index = LexicalIndex.build(enumerate(units))
        rows, scores = index.search(question, 2)
        assert rows[0] == 0 and scores[0] > 0, (units, question)
        assert index.rows_with_all(["周六", "开门"]).tolist() == [0]
        assert index.rows_with_all(["週六", "開門"]).tolist() == [0]
    index = LexicalIndex.build(enumerate(traditional))
    index.save(tmp_path / "lex")
    assert LexicalIndex.load(tmp_path / "lex").search("图书馆周六几点开门？", 1)[0].tolist() == [0]
    # an index written before folding (its words as they stand, no analysis.json) is searched as it
    # was built: no folded query words that it cannot hold
    monkeypatch.setattr(words, "fold_han", lambda text: text)
    LexicalIndex.build(enumerate(traditional)).save(tmp_path / "old")
    monkeypatch.undo()
    (tmp_path / "old" / "analysis.json").unlink()
    old = LexicalIndex.load(tmp_path / "old")
    assert not old.folds_han
    assert old.search("借書證", 1)[0].tolist() == [1]
    assert old.rows_with_all(["週六", "開門"]).tolist() == [0]


def test_a_question_character_finds_a_word_no_bigram_shares():
    """Chinese writes many words in one character: "一袋面粉最重" (how heavy may a bag of flour be) and
    "单袋重量" (the weight of a single bag) share 袋 and 重 but no bigram. Where the memory holds none of a
    character's bigrams in the question, BM25 reads the character alone; grammar never."""
    from asmr.text.words import lone_characters, run_characters

    # a lone character is a word of tokenize already
    assert run_characters("单袋重量 in 中 文") == ["单", "袋", "重", "量"]
    held = {"可以", "多少"}.__contains__
    alone = ["一", "袋", "面", "粉", "重"]
    assert lone_characters("一袋面粉最重可以是多少？", held) == alone  # 最, 是: grammar
    assert lone_characters("一袋麵粉最重可以是多少？", held) == alone  # Traditional folded
    assert lone_characters("Max weight of a box?", held) == []
    units = ["运输：单袋重量不能超过三十公斤。",
             "取货可以安排在周末下午。",
             "每位会员最多可以领十张券，领多少次都可以。"]
    index = LexicalIndex.build(enumerate(units))
    rows, scores = index.search("一袋面粉最重可以是多少？", 3)
    assert rows[0] == 0 and scores[0] > 0
    # a question whose bigrams the memory holds is read by its words alone, and scores every unit as
    # an index of words alone does: the stored characters count in no unit's length
    words_only = bm25s.BM25(method="lucene")
    words_only.index([tokenize(u) for u in units], show_progress=False)
    for q in ("最多领多少张券？", "周末下午可以取货吗"):
        assert index._query_words(q) == tokenize(q)
        np.testing.assert_allclose(index._bm25.get_scores(tokenize(q)), words_only.get_scores(tokenize(q)),
                                   rtol=1e-5, atol=1e-6)


def test_an_index_from_before_characters_is_searched_by_words(tmp_path):
    import json

    units = ["运输：单袋重量不能超过三十公斤。", "取货可以安排在周末下午。"]
    LexicalIndex.build(enumerate(units)).save(tmp_path / "lex")
    assert LexicalIndex.load(tmp_path / "lex").search("一袋面粉最重？", 2)[0].tolist() == [0]
    (tmp_path / "lex" / "analysis.json").write_text(json.dumps({"fold_han": True}), encoding="utf-8")
    old = LexicalIndex.load(tmp_path / "lex")
    assert old.folds_han and not old.cjk_characters
    assert old._query_words("一袋面粉最重？") == tokenize("一袋面粉最重？")
    assert 0 not in old.search("一袋面粉最重？", 2)[0].tolist()


def test_an_index_read_back_is_what_bm25s_loads_and_search_imports_no_bm25s(tmp_path):
    """A saved index is read back as bm25s would load it, and searched as it was built; a process that
    only searches never imports bm25s (nor the SciPy it brings)."""
    import subprocess
    import sys

    texts = ["Logs are kept for 14 days.", "备份每天凌晨两点进行。", "The API server listens on port 8080.", ""]
    built = LexicalIndex.build(zip(np.arange(len(texts)) + 7, texts))
    built.save(tmp_path / "lex")
    read = LexicalIndex.load(tmp_path / "lex")
    ref = bm25s.BM25.load(str(tmp_path / "lex"), mmap=True)
    assert read._bm25.vocab_dict == ref.vocab_dict
    for part in ("data", "indices", "indptr"):
        np.testing.assert_array_equal(read._bm25.scores[part], ref.scores[part])
    for q in ("how long are logs kept", "备份几点进行", "port", "nothing here"):
        assert [a.tolist() for a in read.search(q, 3)] == [a.tolist() for a in built.search(q, 3)]
        assert read._bm25.get_tokens_ids(tokenize(q)) == ref.get_tokens_ids(tokenize(q))
    code = ("import sys; from asmr.index import LexicalIndex; "
            f"LexicalIndex.load({str(tmp_path / 'lex')!r}).search('logs kept', 2); "
            "print('bm25s' in sys.modules, 'scipy' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.split() == ["False", "False"]
