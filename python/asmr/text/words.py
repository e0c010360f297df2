"""Words: tokens, stems and stop words, for every stage that reads text.

``tokenize`` is the one word split of the lexical index, the graph and recall (lower-cased
letter/digit runs; CJK runs, which have no spaces between words, as overlapping character
bigrams, as Lucene's CJK analyzer does, Traditional characters folded to Simplified); the
lexical index also stores the characters of those runs (``run_characters``) and reads a
question's characters where the memory holds none of their bigrams (``lone_characters``).
``claim_words`` is the support check's split, which also keeps a contraction whole ("don't") so
that negations are seen.

Stemmers and stop lists: a fitted model's features depend on the exact variant it was fitted
with, so each variant that a fitted model or a measured behaviour reads is kept here by name,
and changing one means refitting its model (the script named beside it):

- ``QUESTION_STOP_WORDS``: recall's confidence (``retrieve/confidence_model.json``,
  ``bench/calibrate_confidence.py``), whose English terms are lemmatised and stemmed by libraries
  (``term_key``);
- ``light_stem`` / ``CLAIM_STOP_WORDS``: the support check (``verify/support_model.json``,
  ``bench/calibrate_support.py``);
- ``plural_stem`` / ``content_words``: the extractive generator and the redundancy block.
"""
from __future__ import annotations

import re
from functools import lru_cache
from importlib import metadata

from ..paths import marshalled
from .cjk import CJK_CHAR, CJK_CLASS, CJK_FUNCTION_CHARACTERS, fold_han

_TOKEN = re.compile(rf"[{CJK_CLASS}]+|[^\W_{CJK_CLASS}]+")


@lru_cache(maxsize=1 << 16)
def term_key(word: str) -> str:
    """A lower-cased English word's lemma, stemmed: the form two wordings of one term share. A CJK token
    (``tokenize`` keeps CJK runs apart from other words) is its own key: no English lemma or stem
    changes one, and a Chinese question then never loads the lemmatizer."""
    if not word.isascii() and CJK_CHAR.match(word):
        return word
    return _stemmer().stemWord(_lemmas()[0].lemmatize(word, "en"))


class _CachedDictionaries:
    """simplemma's dictionaries (its ``DictionaryFactory``) as plain dicts kept under ``paths.cache_dir``:
    simplemma decodes a language's dictionary from its compressed file on every first use (0.34 s for
    English on a 2-core Xeon, a seventh of a command's cold search), where the cached copy loads in
    0.06 s. The lemmas are simplemma's own."""

    def __init__(self):
        self._loaded: dict[str, dict[str, str]] = {}

    def get_dictionary(self, lang: str) -> dict[str, str]:
        if lang not in self._loaded:
            self._loaded[lang] = marshalled(f"simplemma/{lang}-{metadata.version('simplemma')}",
                                            lambda: dict(_shipped(lang).items()), lambda t: isinstance(t, dict))
        return self._loaded[lang]


def _shipped(lang: str):
    from simplemma.strategies import DefaultDictionaryFactory
    return DefaultDictionaryFactory().get_dictionary(lang)


@lru_cache(maxsize=1)
def _lemmas():
    """simplemma's lemmatizer (its default strategy, as ``simplemma.lemmatize``) and its dictionary
    lookup (as ``simplemma.is_known``) over ``_CachedDictionaries``; loaded on first use."""
    from simplemma import Lemmatizer
    from simplemma.strategies import DefaultStrategy, DictionaryLookupStrategy

    dictionaries = _CachedDictionaries()
    return Lemmatizer(lemmatization_strategy=DefaultStrategy(dictionary_factory=dictionaries)), \
        DictionaryLookupStrategy(dictionaries)


@lru_cache(maxsize=1)
def _stemmer():
    import Stemmer
    return Stemmer.Stemmer("english")


def cjk_bigrams(runs: list[str]) -> list[str]:
    """``runs`` with each CJK run as its overlapping character bigrams (a lone character stays one)."""
    out: list[str] = []
    for run in runs:
        if CJK_CHAR.match(run):
            out.extend([run] if len(run) == 1 else [run[i:i + 2] for i in range(len(run) - 1)])
        else:
            out.append(run)
    return out


def tokenize(text: str, *, fold: bool = True) -> list[str]:
    """Words of ``text`` for BM25: lower-cased alphanumeric runs; CJK runs as character bigrams, with
    Traditional Han characters as Simplified ones (``fold_han``) unless ``fold`` is False (for a
    lexical index written before folding)."""
    if fold:
        text = fold_han(text)
    runs = _TOKEN.findall(text.lower())
    return cjk_bigrams(runs) if CJK_CHAR.search(text) else runs


def _cjk_runs(text: str, fold: bool) -> list[str]:
    """The CJK runs of two or more characters of ``text`` as ``tokenize`` reads them."""
    runs = _TOKEN.findall((fold_han(text) if fold else text).lower())
    return [run for run in runs if len(run) > 1 and CJK_CHAR.match(run)]


def run_characters(text: str, *, fold: bool = True) -> list[str]:
    """The characters of ``text``'s CJK runs of two or more, in order (a lone character is a word of
    ``tokenize`` already): what the lexical index stores beside the runs' bigrams."""
    out: list[str] = []
    for run in _cjk_runs(text, fold):
        out.extend(run)
    return out


def lone_characters(text: str, held, *, fold: bool = True) -> list[str]:
    """The characters of ``text``'s CJK runs that BM25 reads alone: each one neither of whose bigrams in
    the run ``held`` accepts (the memory writes neither), grammar (``CJK_FUNCTION_CHARACTERS``) left out.

    Chinese writes many words in one character (袋 "bag", 重 "heavy", 赔 "pay for"). A question that
    puts one in a phrase of its own ("一袋面粉最重") shares no bigram with the sentence that states it
    ("单袋重量"); only the characters find it. Where a bigram of the question is held, it already
    stands for its characters, and reading them too would let a unit that shares a common
    character compete with the one that shares the word."""
    out: list[str] = []
    for run in _cjk_runs(text, fold):
        for i, c in enumerate(run):
            if c not in CJK_FUNCTION_CHARACTERS and not any(
                    held(run[j:j + 2]) for j in (i - 1, i) if 0 <= j <= len(run) - 2):
                out.append(c)
    return out


# ASCII text takes a bytes fast path with the same result as tokenize(): letters and
# digits kept (upper case lowered), everything else a separator.
ASCII_TOKEN_TABLE = bytes((c + 32 if 65 <= c <= 90 else c) if chr(c).isalnum() and c < 128 else 32
                          for c in range(256))


def token_bytes(text: str) -> list[bytes]:
    """``tokenize(text)`` as bytes, by one table lookup when the text is ASCII."""
    if text.isascii():
        return text.encode().translate(ASCII_TOKEN_TABLE).split()
    return [t.encode() for t in tokenize(text)]


_CLAIM_WORD = re.compile(rf"[{CJK_CLASS}]+|[a-z0-9]+(?:['’][a-z]+)?|[^\W_{CJK_CLASS}]+")
_ASCII_CLAIM_WORD = re.compile(r"[a-z0-9]+(?:'[a-z]+)?")  # _CLAIM_WORD on lower-cased ASCII text


def claim_words(text: str) -> list[str]:
    """Lower-cased words, a contraction kept whole ("don't"); CJK runs become character bigrams."""
    if text.isascii():
        return _ASCII_CLAIM_WORD.findall(text.lower())
    return cjk_bigrams(_CLAIM_WORD.findall(text.lower()))


# Personal pronouns of the third person: a sentence that holds one speaks of what another names.
PRONOUNS = frozenset("it its he his him she her they their them".split())


# ---- recall's confidence --------------------------------------------------------------------------

# Words that place what is said at the time it is said (cjk.CJK_PRESENT_WORDS in Chinese).
PRESENT_WORDS = frozenset("now currently current presently nowadays".split())
# Words that ask rather than say what is asked for: no terms of a question for the confidence's signals.
QUESTION_STOP_WORDS = frozenset("""
a an the of in on at to for from by with about into over under and or but not no nor is are was were be been being am
do does did done doing have has had having what which who whom whose when where why how that this these those it its
there their they them he she his her him i we you your our my me us can could should would will shall may might must
than then as if so such also any all each every some many much more most other same only very just
within without before after during between through across
need needs needed able allowed permitted still
s re ve ll m t don doesn didn isn aren wasn weren hasn haven hadn wouldn shouldn couldn
""".split()) | PRESENT_WORDS
# "need", "able", "allowed", "permitted": what may or must be done, asked as "can" and "must" ask it (their
# Chinese counterparts 需要 and 可以 are no terms either: retrieve.signals.CJK_QUESTION_WORDS). "still" and
# PRESENT_WORDS ("now", "currently"; 还, 现在, 目前): the time of asking, which a unit that states the
# answer leaves unsaid ("X is the safety officer"); which statement is newer is for the conflict step.
# The last line: what is left of a contraction ("what's", "I'm", "don't") once the apostrophe splits the word

# A question put as a request ("Tell me ...", "Look up ...", "Could you find out ...") asks as "what is"
# does: its opening verbs are the asking, not the asked, and no unit that states the answer says them.
_REQUEST = re.compile(
    r"^\s*(?:(?:please|kindly)\s+|(?:can|could|would|will)\s+you\s+(?:please\s+)?)?"
    r"(?:tell\s+(?:me|us)|show\s+(?:me|us)|give\s+(?:me|us)|let\s+(?:me|us)\s+know|look\s+up|find\s+out|"
    r"find|list|name|describe|explain|i\s+(?:need|want|would\s+like)\s+to\s+know)\b[\s:,]*",
    re.IGNORECASE)


def without_request(question: str) -> str:
    """``question`` without the words that open a request ("Tell me the port of X" -> "the port of X")."""
    return _REQUEST.sub("", question, count=1)


# ---- the support check ----------------------------------------------------------------------------

CLAIM_STOP_WORDS = frozenset("""
a an the this that these those it its it's he she they them we us you i me his her hers their theirs our
your my mine him in on at of for to from by with as and or but if when while after before during since
until because although though however there here what which who whom whose where why how all any each
every some such is are was were be been being am has have had having do does did doing can could may
might must shall should will would about above below between into onto over under up down out off
again further then once also than too very just so only own same both either neither nor more most
other others another much many few several lot lots one ones s t etc via per within without upon
whether yet still even ever well like i.e e.g eg ie thing things way ways include includes including
""".split())


@lru_cache(maxsize=65536)
def light_stem(word: str) -> str:
    """A light suffix stripper: enough for "released"/"release", "cities"/"city", "cycling"/"cycle"."""
    w = word
    if w.endswith("'s") or w.endswith("’s"):
        w = w[:-2]
    n = len(w)
    if n > 4 and w.endswith("ies"):
        w = w[:-3] + "y"
    elif n > 4 and w.endswith("sses"):
        w = w[:-2]
    elif n > 3 and w.endswith("s") and not w.endswith(("ss", "us", "is")):
        w = w[:-1]
    n = len(w)
    if n > 5 and w.endswith("ing"):
        w = w[:-3]
    elif n > 4 and w.endswith("ed"):
        w = w[:-2]
    elif n > 5 and w.endswith("ly"):
        w = w[:-2]
    elif n > 6 and w.endswith(("ment", "ness")):
        w = w[:-4]
    elif n > 5 and w.endswith(("tion", "sion")):
        w = w[:-3]
    if len(w) > 4 and w.endswith("e"):
        w = w[:-1]
    if len(w) > 3 and w[-1] == w[-2] and w[-1] not in "aeiouls":
        w = w[:-1]  # "stopp(ed)" -> "stop"
    return w


# ---- the extractive generator and the redundancy block --------------------------------------------

_CONTENT_WORD = re.compile(r"[0-9A-Za-z][0-9A-Za-z_.\-]*|[\u3400-\u9fff]")
_CONTENT_STOP_WORDS = frozenset("""a an the of to in on at for by with from and or is are was were be been what which
who whom whose when where why how does do did many much is it its this that these those there their as into than
please tell me about""".split())


def plural_stem(word: str) -> str:
    """Plural and third-person "s" off, so that "rollback" meets "rollbacks"."""
    return word[:-1] if len(word) > 3 and word.endswith("s") and not word.endswith("ss") else word


def content_words(text: str) -> set[str]:
    """The words of ``text`` that say something (codes and versions whole, each CJK character a word,
    Traditional as Simplified: ``fold_han``), lower-cased and ``plural_stem``med."""
    words = _CONTENT_WORD.findall(fold_han(text))
    return {plural_stem(w.lower().rstrip(".")) for w in words} - _CONTENT_STOP_WORDS


_PAIR_TOKEN = re.compile(r"[0-9A-Za-z][0-9A-Za-z_\-]*|[^\s0-9A-Za-z]")


def content_pairs(text: str) -> set[tuple[str, str]]:
    """Neighbouring words of ``text`` (Latin script) with no stop word or punctuation between them, as
    ``content_words`` keys them: the compounds a text names ("safety officer", "waste contractor")."""
    tokens = [t.lower() for t in _PAIR_TOKEN.findall(text)]
    keep = [t[0].isascii() and t[0].isalnum() and t not in CLAIM_STOP_WORDS and t not in _CONTENT_STOP_WORDS
            for t in tokens]
    return {(plural_stem(a), plural_stem(b)) for a, b, ka, kb in zip(tokens, tokens[1:], keep, keep[1:])
            if ka and kb}


@lru_cache(maxsize=65536)
def dictionary_word(word: str) -> bool:
    """Whether ``word`` is an English word form that simplemma's dictionary holds ("value", "setting"):
    capitalised as a table's column or at a line's start, it names no particular thing."""
    from simplemma.utils import normalize_token
    return _lemmas()[1].get_lemma(normalize_token(word.lower()), "en") is not None
