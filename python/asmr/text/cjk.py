"""The one definition of a CJK character (kana, CJK ideograph or hangul syllable), shared by the
tokenizer, the embedder's word check, key facts, the support features and the verifier, so that
they never disagree on what is CJK text; Traditional characters folded to Simplified; which
Chinese words are synonyms; and jieba, loaded once for every stage that cuts Chinese into words."""
import json
import re
from functools import lru_cache
from importlib import metadata
from pathlib import Path

import numpy as np

from ..paths import marshalled

HANGUL = (0xAC00, 0xD7AF)
CJK_RANGES = ((0x3040, 0x30FF), (0x3400, 0x4DBF), (0x4E00, 0x9FFF), HANGUL, (0xF900, 0xFAFF))


def _char_class(ranges) -> str:
    """The body of a regular expression's [...] class of code point ranges."""
    return "".join(rf"\u{lo:04x}-\u{hi:04x}" for lo, hi in ranges)


CJK_CLASS = _char_class(CJK_RANGES)  # body of a [...] class
CJK_CHAR = re.compile(f"[{CJK_CLASS}]")
# Scripts written without spaces between words or sentences (kana and ideographs; hangul has spaces):
# a citation marker or the next sentence follows their text directly.
SPACELESS_CHAR = re.compile(f"[{_char_class(r for r in CJK_RANGES if r != HANGUL)}]")
# What one CJK character holds, in characters of a Latin-script text: units are sized by what they say,
# so a Chinese paragraph is split where an English one saying as much is. Measured on the shared data
# with multilingual-e5-small's tokenizer, the model that reads both: 4.10 characters a token in the
# HotpotQA passages, 1.36 in the CMRC paragraphs (3.0 to 1; by words, 6.0 and 1.66 jieba, 3.6 to 1).
CJK_CHAR_SIZE = 3


def text_size(text: str, start: int = 0, end: int | None = None) -> int:
    """The size of ``text[start:end]`` in Latin-script characters: each CJK character counts
    ``CJK_CHAR_SIZE``, any other character one."""
    end = len(text) if end is None else end
    return end - start + (CJK_CHAR_SIZE - 1) * len(CJK_CHAR.findall(text, start, end))


class TextSizes:
    """``text_size`` of any span of one text in constant time: its CJK characters are counted once (the
    chunker asks for many spans of a document, each sentence end of a paragraph's groups)."""

    def __init__(self, text: str):
        self._cjk = None  # CJK characters before each offset; None for a text without any
        if not text.isascii() and CJK_CHAR.search(text):
            codes = np.frombuffer(text.encode("utf-32-le", "surrogatepass"), np.uint32)  # one a character
            cjk = np.zeros(len(codes), bool)
            for lo, hi in CJK_RANGES:
                cjk |= (codes >= lo) & (codes <= hi)
            self._cjk = np.concatenate((np.zeros(1, np.int32), np.cumsum(cjk, dtype=np.int32)))

    def __call__(self, start: int, end: int) -> int:
        if self._cjk is None:
            return end - start
        return end - start + (CJK_CHAR_SIZE - 1) * int(self._cjk[end] - self._cjk[start])


# Han ideographs that OpenCC's Traditional -> Simplified table may map (the BMP blocks of CJK_CLASS).
_HAN_BLOCKS = ((0x3400, 0x4DC0), (0x4E00, 0xA000), (0xF900, 0xFB00))


@lru_cache(maxsize=1)
def _han_fold() -> tuple[re.Pattern, dict[int, str], np.ndarray]:
    """The characters OpenCC's t2s conversion changes into one other character, a pattern that finds
    any of them, and the map as a table and as an array over the BMP's code points. Each character is
    converted alone (one line each), so that no phrase rule applies and the map is one character for
    one: offsets into a folded text are offsets into the text."""
    import opencc

    chars = [chr(c) for lo, hi in _HAN_BLOCKS for c in range(lo, hi)]
    out = opencc.OpenCC("t2s.json").convert("\n".join(chars)).split("\n")
    if len(out) != len(chars):  # a line break converted into something else: no fold rather than a wrong one
        raise RuntimeError("opencc t2s: the one-character-a-line conversion lost its lines")
    table = {ord(a): b for a, b in zip(chars, out) if a != b and len(b) == 1}
    code_points = np.arange(0x10000, dtype=np.uint32)
    code_points[list(table)] = [ord(b) for b in table.values()]
    return re.compile("[" + "".join(map(chr, table)) + "]"), table, code_points


_FOLD_BY_ARRAY = 256  # characters from which one array lookup beats str.translate (5x at 500)


def fold_han(text: str) -> str:
    """``text`` with its Traditional Han characters as their Simplified forms (OpenCC's t2s table,
    character by character: 後 -> 后, 週 -> 周, 臺 -> 台), so that words compare across the two scripts
    as case-folded Latin words do across cases; everything else, and the length, unchanged. A few
    characters that Simplified text also uses are folded too (乾 -> 干): both sides of a comparison
    fold alike, so they still match."""
    return text if text.isascii() else _fold_non_ascii(text)


# Recall reads the same units at several stages (BM25's words, the bridge, the confidence, conflicts),
# each folding them: remembered, a unit is searched and folded once, then costs a hash.
@lru_cache(maxsize=8192)
def _fold_non_ascii(text: str) -> str:
    found, table, code_points = _han_fold()
    if not found.search(text):
        return text
    if len(text) < _FOLD_BY_ARRAY:
        return text.translate(table)
    points = np.frombuffer(text.encode("utf-32-le", "surrogatepass"), np.uint32)
    folded = np.where(points < 0x10000, code_points[points & 0xFFFF], points)
    return folded.astype(np.uint32).tobytes().decode("utf-32-le", "surrogatepass")


# Chinese characters that stand alone as grammar, not as part of a word jieba failed to know: structural
# and sentence particles (的 地 得 着 了 过 吗 呢 吧), the copula 是, prepositions (由 被 在 把 给 对 从 向
# 到), conjunctions (和 与 及), 所 and 之, adverbs of degree and sequence (也 就 还 又 很 最 更) and
# question words (谁 哪 几 多). A run of single characters that holds one is no word (retrieve.signals),
# and a question's lone characters in BM25 leave them out (words.lone_characters).
CJK_FUNCTION_CHARACTERS = frozenset("的 地 得 着 了 过 吗 呢 吧 是 由 被 在 把 给 对 从 向 到 和 与 及 所 之 "
                                    "也 就 还 又 很 最 更 谁 哪 几 多".split())

# Measure words of counted things (本 books, 张 sheets, 位 / 名 / 人 people, 间 rooms, 层 floors, ...):
# numerals before one are a count (二十本: 20; text.facts), and 一 / 每 before one are "a" / "each"
# (一张, 每间; retrieve.signals), except where 一 names the first of them (一层: the ground floor).
# Units of time, money and measure are key facts' units, not these.
CJK_COUNTED = frozenset("个人位名种类家座条本部项件只张块辆间台份套把杯瓶册篇首枚双对批盒袋箱页层")
CJK_FIRST_COUNTED = frozenset({"一层"})


# Words that place what is said at the time it is said ("now", "currently"): a question's 现在 asks no
# more than the plain question (retrieve.signals), and a claim's 现在 says what its unit's 目前 says;
# Cilin puts them in different groups. English: text.words.PRESENT_WORDS.
CJK_PRESENT_WORDS = frozenset("现在 目前 当前 如今 眼下".split())

# Words of grammar that say one thing, which Cilin keeps apart or leaves out: "will" (会, 将), "must" (须,
# 需要, 应当), "may" or "can" (可, 能), "this" (这, 本, 该), "all" or "each" (都, 均, 各), "because" (由于, 因),
# "by way of" (通过, 凭, 经). A claim that puts one for another restates its unit ("账户会被锁定" for "账户将被锁定").
CJK_WILL = frozenset("会 将 将会 就会".split())
CJK_MUST = frozenset("须 需 需要 必须 须要 要 应 应当 应该".split())
CJK_CAN = frozenset("可 可以 能 能够 就能 可供".split())
CJK_GRAMMAR_SYNONYMS = (CJK_WILL, CJK_MUST, CJK_CAN) + tuple(frozenset(g.split()) for g in (
    "这 本 该 此 这个 这款 本款 该款",
    "都 均 皆 各 全都",
    "由于 因 因为",
    "通过 凭 经 经由 借助",
))


@lru_cache(maxsize=1)
def _synonym_groups() -> dict[str, frozenset[int]]:
    """Word → the synonym groups it is in: the leaves marked "=" (words of one sense) of HIT's Tongyici
    Cilin (extended), as the ``cilin`` package ships it; "#" leaves (related words) and "@" (a word
    alone) are not synonyms; and CJK_PRESENT_WORDS, one group more."""
    tree = json.loads(Path(metadata.distribution("cilin").locate_file("data/cilin_tree.json"))
                      .read_text(encoding="utf-8"))
    groups: dict[str, set[int]] = {}
    nodes, leaves = list(tree.values()), 0
    while nodes:
        for code, leaf in nodes.pop()["sub"].items():
            if isinstance(leaf, dict):
                nodes.append(leaf)
            elif code.endswith("="):
                leaves += 1
                for word in leaf:
                    groups.setdefault(word, set()).add(leaves)
    for k, group in enumerate((CJK_PRESENT_WORDS, *CJK_GRAMMAR_SYNONYMS), leaves + 1):
        for word in group:
            groups.setdefault(word, set()).add(k)
    return {w: frozenset(g) for w, g in groups.items()}


def synonyms(a: str, b: str) -> bool:
    """Whether two different Chinese words share a sense (``_synonym_groups``: "采用" / "使用", "著名" /
    "知名", "现在" / "目前")."""
    table = _synonym_groups()
    return a != b and not table.get(a, frozenset()).isdisjoint(table.get(b, ()))


def jieba_tokenizer():
    """jieba's default tokenizer (``jieba.dt``) with its dictionary loaded. jieba keeps the dictionary's
    prefix table in its own cache file and reads it with ``marshal.load`` on the open file, which
    CPython reads in small pieces: 1.2 s on a 2-core Xeon, against 0.3 s for the same bytes read
    whole, a second of every command that reads a Chinese question. The table is kept under
    ``paths.cache_dir`` as jieba builds it, and read whole. A dictionary other than jieba's own
    (``jieba.set_dictionary``) loads as jieba loads it."""
    import jieba
    tokenizer = jieba.dt
    if not tokenizer.initialized:
        jieba.setLogLevel(60)
        if tokenizer.dictionary is not jieba.DEFAULT_DICT:
            tokenizer.initialize()
            return tokenizer
        table = marshalled(f"jieba/prefix-{metadata.version('jieba')}", lambda: _built(tokenizer),
                           lambda t: isinstance(t, tuple) and len(t) == 2 and isinstance(t[0], dict))
        with tokenizer.lock:
            if not tokenizer.initialized:
                tokenizer.FREQ, tokenizer.total = table
                tokenizer.initialized = True
    return tokenizer


def _built(tokenizer) -> tuple[dict[str, int], int]:
    tokenizer.initialize()
    return tokenizer.FREQ, tokenizer.total
