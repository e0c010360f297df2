"""What is built once from installed packages and kept under ``paths.cache_dir`` for later processes:
read back whole, built again where it cannot be read, and the same as what the package itself gives."""
import marshal

import pytest

from asmr.paths import marshalled, read_or_build


def test_a_cache_file_that_cannot_be_read_back_is_built_again(tmp_path):
    path = tmp_path / "cache" / "table.bin"
    built = []

    def build():
        built.append(1)
        return {"kept": "keep"}

    assert read_or_build(path, build, marshal.dumps, marshal.loads) == {"kept": "keep"}
    assert read_or_build(path, build, marshal.dumps, marshal.loads) == {"kept": "keep"}
    assert len(built) == 1  # the second process reads the file
    path.write_bytes(marshal.dumps({"kept": "keep"})[:5])  # cut short, as by a full disk
    assert read_or_build(path, build, marshal.dumps, marshal.loads) == {"kept": "keep"}
    assert len(built) == 2
    assert marshal.loads(path.read_bytes()) == {"kept": "keep"}  # and written whole again


def test_a_value_is_built_where_the_cache_cannot_be_written(tmp_path):
    blocked = tmp_path / "a-file"
    blocked.write_text("not a folder")
    assert read_or_build(blocked / "cache" / "t.bin", lambda: (1, 2), marshal.dumps, marshal.loads) == (1, 2)


def test_a_marshalled_table_of_another_shape_is_built_again(tmp_path, monkeypatch):
    monkeypatch.setenv("ASMR_CACHE_DIR", str(tmp_path))
    assert marshalled("t/table", lambda: {"a": 1}, lambda t: isinstance(t, dict)) == {"a": 1}
    (written,) = (tmp_path / "t").glob("table-*.bin")
    written.write_bytes(marshal.dumps(["a", 1]))  # another program's file, or another version's
    assert marshalled("t/table", lambda: {"a": 2}, lambda t: isinstance(t, dict)) == {"a": 2}
    assert marshal.loads(written.read_bytes()) == {"a": 2}


def test_simplemma_read_from_the_cache_lemmatizes_as_simplemma_does(tmp_path, monkeypatch):
    simplemma = pytest.importorskip("simplemma")
    from asmr.text import words

    monkeypatch.setenv("ASMR_CACHE_DIR", str(tmp_path))
    tried = "kept mice running better went data analyses retained leaves was settings value xylophones".split()
    words._lemmas.cache_clear()
    try:
        assert [words._lemmas()[0].lemmatize(w, "en") for w in tried] == \
            [simplemma.lemmatize(w, lang="en") for w in tried]
        assert list((tmp_path / "simplemma").glob("en-*.bin"))
        # a later process reads the cached dictionary and never decodes simplemma's own
        words._lemmas.cache_clear()
        monkeypatch.setattr(words, "_shipped", lambda lang: pytest.fail("decoded the shipped dictionary again"))
        assert [words._lemmas()[0].lemmatize(w, "en") for w in tried] == \
            [simplemma.lemmatize(w, lang="en") for w in tried]
        assert [words._lemmas()[1].get_lemma(w, "en") is not None for w in tried + ["qzxv"]] == \
            [simplemma.is_known(w, lang="en") for w in tried + ["qzxv"]]
    finally:
        words._lemmas.cache_clear()


def test_jieba_read_from_the_cache_cuts_as_jieba_does(tmp_path, monkeypatch):
    jieba = pytest.importorskip("jieba")
    from asmr.text import cjk

    monkeypatch.setenv("ASMR_CACHE_DIR", str(tmp_path))
    texts = ["年假可以顺延吗？", "全量备份每天凌晨两点进行，日志保存十四天。", "读者欠费到多少就借不了书了？"]
    own = jieba.Tokenizer()
    own.initialize()
    monkeypatch.setattr(jieba, "dt", jieba.Tokenizer())  # a process that has not loaded it yet
    first = cjk.jieba_tokenizer()
    assert first is jieba.dt and first.initialized
    assert list((tmp_path / "jieba").glob("prefix-*.bin"))
    # a later process reads the cached table and never builds it from jieba's dictionary
    monkeypatch.setattr(jieba, "dt", jieba.Tokenizer())
    monkeypatch.setattr(cjk, "_built", lambda tokenizer: pytest.fail("built the prefix table again"))
    later = cjk.jieba_tokenizer()
    assert later.total == own.total and later.FREQ == own.FREQ
    assert [later.lcut(t) for t in texts] == [own.lcut(t) for t in texts]
