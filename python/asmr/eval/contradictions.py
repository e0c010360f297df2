"""Claims about a memory's units, labelled supported, contradicted or unsupported: data for the supports check.

The FactCC recipe applied to our own units: rule-based transformations of a unit's own
sentences. From each unit one sentence is taken; the claims made from it are

- supported: the sentence itself (``copy``), a part of it (``subset``: a trailing phrase or a
  parenthesis left out), the same with numbers spelt another way (``number_words``), a synonym
  put for a word (``synonym``), a leading phrase moved to the end (``reorder``), an attribution
  put before it (``hedged``: "According to the source, ...");
- contradicted: a negation added or removed (``negation``), a number, unit of measure, date,
  version, duration or frequency changed (digits and words: "fourteen", "a week", "forever",
  "one hour"), a named entity or a subject or object swapped for another of the memory
  (``entity``), an antonym (``antonym``), a quantifier flipped (``quantifier``), a comparison
  inverted (``comparison``);
- unsupported: a sentence of another unit that shares words with this one (``unrelated``), or
  the sentence with a clause of another unit added (``added_clause``).

Each claim is cited against the whole unit text, as the verifier sees it. English and Chinese
units are both transformed; a rule that does not apply to a sentence makes no claim. Everything
is seeded: the same units and seed give the same claims.
"""
from __future__ import annotations

import random
import re
from collections import Counter
from dataclasses import asdict, dataclass
from typing import Callable, Iterable, Sequence

import cn2an

from ..text.cjk import CJK_CHAR
from ..text.facts import key_facts, missing_facts
from ..text.relative_time import WEEKDAYS
from ..text.sentences import sentence_ends
from ..text.words import CLAIM_STOP_WORDS, claim_words

SUPPORTED_KINDS = ("copy", "subset", "number_words", "synonym", "reorder", "hedged")
CONTRADICTED_KINDS = ("negation", "number", "unit", "date", "version", "duration", "frequency", "entity",
                      "antonym", "quantifier", "comparison")
UNSUPPORTED_KINDS = ("unrelated", "added_clause")
LABELS = {**{k: "supported" for k in SUPPORTED_KINDS}, **{k: "contradicted" for k in CONTRADICTED_KINDS},
          **{k: "unsupported" for k in UNSUPPORTED_KINDS}}


@dataclass(frozen=True)
class Claim:
    """One generated claim: ``text`` cited against ``evidence`` (the unit ``unit``'s text)."""

    text: str
    evidence: str
    unit: str
    kind: str
    label: str  # supported, contradicted or unsupported
    lang: str  # en or zh

    def to_dict(self) -> dict:
        return asdict(self)


# ---- tables ---------------------------------------------------------------------------------------

def _pairs(*pairs: tuple[str, str]) -> dict[str, str]:
    out: dict[str, str] = {}
    for a, b in pairs:
        out.setdefault(a, b)
        out.setdefault(b, a)
    return out


_ANTONYMS_EN = _pairs(
    ("increase", "decrease"), ("increased", "decreased"), ("increases", "decreases"), ("enabled", "disabled"),
    ("enable", "disable"), ("opens", "closes"), ("open", "closed"), ("allowed", "forbidden"),
    ("required", "optional"), ("mandatory", "optional"), ("minimum", "maximum"), ("first", "last"),
    ("public", "private"), ("internal", "external"), ("accepted", "rejected"), ("accepts", "rejects"),
    ("success", "failure"), ("won", "lost"), ("wins", "loses"), ("north", "south"), ("east", "west"),
    ("northern", "southern"), ("eastern", "western"), ("largest", "smallest"), ("oldest", "youngest"),
    ("included", "excluded"), ("includes", "excludes"), ("added", "removed"), ("true", "false"),
    ("valid", "invalid"), ("online", "offline"), ("approved", "denied"), ("highest", "lowest"),
    ("male", "female"), ("upper", "lower"), ("inside", "outside"), ("start", "end"), ("starts", "ends"),
    ("began", "ended"), ("born", "died"), ("entry", "exit"), ("import", "export"), ("encrypted", "unencrypted"),
    ("paid", "unpaid"), ("full", "empty"), ("major", "minor"), ("senior", "junior"), ("ancient", "modern"),
)
_ANTONYMS_ZH = _pairs(
    ("增加", "减少"), ("上升", "下降"), ("提高", "降低"), ("最大", "最小"), ("最高", "最低"), ("最早", "最晚"),
    ("开始", "结束"), ("允许", "禁止"), ("成功", "失败"), ("支持", "反对"), ("开放", "关闭"), ("扩大", "缩小"),
    ("第一", "最后"), ("北部", "南部"), ("东部", "西部"), ("男性", "女性"), ("内部", "外部"), ("公开", "秘密"),
    ("出口", "进口"), ("胜利", "失败"), ("古代", "现代"), ("必须", "可选"),
)
_QUANTIFIERS_EN = _pairs(("all", "no"), ("every", "no"), ("always", "never"), ("everyone", "nobody"),
                         ("everything", "nothing"), ("many", "few"), ("most", "few"))
_QUANTIFIERS_ZH = _pairs(("所有", "没有"), ("总是", "从不"), ("全部", "部分"), ("大多数", "少数"), ("都", "都不"))
_COMPARISONS_EN = _pairs(("more than", "less than"), ("at least", "at most"), ("before", "after"),
                         ("higher than", "lower than"), ("larger than", "smaller than"), ("older than", "younger than"),
                         ("earlier than", "later than"), ("above", "below"),
                         ("longer than", "shorter than"), ("greater than", "less than"), ("faster than", "slower than"))
_COMPARISONS_ZH = _pairs(("多于", "少于"), ("以上", "以下"), ("之前", "之后"), ("早于", "晚于"), ("高于", "低于"),
                         ("大于", "小于"), ("超过", "不到"), ("以前", "以后"))
_SYNONYMS_EN = {"uses": "employs", "use": "employ", "used": "employed", "large": "big", "big": "large",
                "begins": "starts", "began": "started", "start": "begin", "buy": "purchase", "bought": "purchased",
                "helps": "assists", "shows": "demonstrates", "located": "situated", "about": "approximately",
                "built": "constructed", "created": "made", "made": "created", "known": "recognised",
                "famous": "well known", "city": "town", "quickly": "rapidly", "needs": "requires",
                "need": "require", "gets": "receives", "received": "got", "several": "a number of",
                "also": "additionally", "main": "principal", "often": "frequently", "near": "close to"}
_SYNONYMS_ZH = {"位于": "坐落于", "开始": "起始", "著名": "知名", "使用": "采用", "建立": "创建", "主要": "重要",
                "出生": "诞生", "目前": "现在", "大约": "约", "获得": "取得", "成为": "变成"}
_HEDGES_EN = ("According to the source, ", "As the documentation states, ", "In short, ")
_HEDGES_ZH = ("根据资料，", "据介绍，")

_NUMBER_WORDS = ("zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen "
                 "sixteen seventeen eighteen nineteen twenty").split()
_TENS = {30: "thirty", 40: "forty", 50: "fifty", 60: "sixty", 70: "seventy", 80: "eighty", 90: "ninety"}
_TIME_UNITS = ("second", "minute", "hour", "day", "week", "month", "year")
# Units of one quantity that no reader takes for each other ("10 MB" is not "10 GB"), written as
# words or symbols the key-fact extractor reads; a percentage has no such counterpart ("10%" as
# "10 points" is another statement, not a false one), nor does a unit it reads only against the digit ("3g").
_UNIT_SWAP = _pairs(("days", "weeks"), ("hours", "minutes"), ("months", "years"), ("seconds", "milliseconds"),
                    ("GB", "MB"), ("TB", "PB"), ("km", "miles"), ("kg", "pounds"), ("meters", "feet"),
                    ("day", "week"), ("hour", "minute"), ("month", "year"), ("mile", "km"), ("pound", "kg"),
                    ("meter", "foot"))
_SINGULAR = {"days": "day", "weeks": "week", "hours": "hour", "minutes": "minute", "months": "month",
             "years": "year", "seconds": "second", "milliseconds": "millisecond", "miles": "mile",
             "pounds": "pound", "meters": "meter", "feet": "foot"}
_PLURAL = {v: k for k, v in _SINGULAR.items()}
_UNIT_SWAP_ZH = _pairs(("天", "周"), ("小时", "分钟"), ("个月", "年"), ("公里", "米"), ("千克", "克"), ("万", "亿"))
_DURATIONS_EN = ("forever", "for one hour", "for a week", "for fourteen weeks", "for a month", "for ten minutes",
                 "for two years", "indefinitely")
_FREQUENCIES_EN = ("daily", "weekly", "monthly", "hourly", "every year", "every two days", "twice a week")
_FREQ_RE = re.compile(r"(?<![\w-])(daily|weekly|monthly|hourly|yearly|annually|nightly|"
                      r"every (?:day|week|month|hour|year|night|morning|minute)|once an? (?:day|week|month|year|hour)|"
                      r"twice an? (?:day|week|month|year)|per (?:day|week|month|hour|year))\b")
_FREQ_ZH = ("每天", "每周", "每月", "每年", "每小时", "每日", "每星期")
_FREQ_ZH_RE = re.compile(f"(?:{'|'.join(_FREQ_ZH)})(?![级度])")

_EN_AUX = re.compile(r"\b(is|are|was|were|can|will|should|must|could|would|may|has been|have been|had been)\b(?! not)",
                     re.IGNORECASE)
_EN_NOT = re.compile(r"\b(is|are|was|were|can|will|should|must|could|would|may|has|have|had|do|does|did) not\b|"
                     r"\b(is|are|was|were|can|could|would|should|has|have|had|do|does|did)n't\b|\bcannot\b",
                     re.IGNORECASE)
# A bare 不 that begins a word which negates nothing (不过 "but", 不久 "soon", 不断 "on and on") is no
# negation: dropping it garbles the sentence instead of reversing it.
_ZH_NEG = re.compile(r"不是|不能|不会|不可以|没有|不再|未能|无法|不(?![过久断仅少])")
_ZH_AFFIRM = ((re.compile(r"(?<![但就还于只总若或可凡正而便倒硬要真像也即乃不])是"), "不是"),
              (re.compile(r"(?<![所没只具拥含共富占])有(?![限效关些的名时机利意趣])"), "没有"),
              (re.compile(r"(?<!不)可以"), "不可以"), (re.compile(r"(?<![不机社学])会(?![议员长社])"), "不会"),
              (re.compile(r"(?<![不可功才智本])能(?![力源量够])"), "不能"))
# Digits next to CJK characters still count: no \\w in the look-arounds.
# Not inside dates, times or identifiers ("2023-12-15", "04:30", "ap-southeast-1"): changing those
# makes a malformed value, not a false one.
_NUMBER = re.compile(r"(?<![0-9A-Za-z_.,:/-])(\d{1,3}(?:,\d{3})+|\d+)(?:\.(\d+))?(?![0-9A-Za-z_.:/-]|,\d)")
_YEAR = re.compile(r"(?<![0-9A-Za-z_.])(1[5-9]\d\d|20\d\d)(?![0-9A-Za-z_.])")
_VERSION = re.compile(r"(?<![\w.])(v?)(\d+)\.(\d+)(?:\.(\d+))?(?![\w.])")
_DURATION_EN = re.compile(r"\b(for )?(?:(?<![\d,.])(?:\d+|" + "|".join(_NUMBER_WORDS[1:]) + r") (?:"
                          + "|".join(_TIME_UNITS) + r")s?|\ban? (?:" + "|".join(_TIME_UNITS[1:]) + r"))\b",
                          re.IGNORECASE)
_MONTH_WORD = re.compile(r"\b(?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)[a-z]*\.? $")
_THE_NOUN = re.compile(r"\b[Tt]he ([a-z]{4,})\b")
_PAREN = re.compile(r"\s*[（(][^()（）]{1,80}[)）]")
_LEADING_PHRASE = re.compile(r"^((?:In|On|At|During|After|Before|Since|By) [^,]{2,40}), (.+?)([.!?])?$")
_ZH_DURATION = re.compile(r"(?<![0-9A-Za-z.])(\d{1,3}|[一二两三四五六七八九十]+)"
                          r"(?:(?:个)?(?:天|小时|分钟|周|星期)|个月|年(?=内|以内|后|间|之内))(?:内|以内|后|之内)?")
_LOWER_WORD = re.compile(r"(?<![\w-])[a-z][a-z-]+(?![\w-])")
_CJK_NUM_UNIT = re.compile(r"(\d{1,4})(天|个月|年|小时|分钟|人|次|周|岁|公里|米)")


# ---- sentences ------------------------------------------------------------------------------------

def _lang(text: str) -> str:
    return "zh" if CJK_CHAR.search(text) else "en"


def _sentences(text: str) -> list[str]:
    out, start = [], 0
    for end in [*sentence_ends(text), len(text)]:
        s = " ".join(text[start:end].split())
        start = end
        if s:
            out.append(s)
    return out


def _usable(sentence: str) -> bool:
    if any(m in sentence for m in ("[cite:", "【引用", "|", "#", "`", "http")):
        return False
    if _lang(sentence) == "zh":
        return 10 <= len(sentence) <= 150 and sentence[-1] in "。！"
    n = len(sentence.split())
    return 6 <= n <= 45 and sentence[0].isupper() and sentence[-1] in ".!"  # a claim states; it does not ask


def _sub_first(pattern: re.Pattern, text: str, repl: Callable[[re.Match], str | None]) -> str | None:
    """``text`` with the first match of ``pattern`` for which ``repl`` gives a replacement replaced."""
    for m in pattern.finditer(text):
        new = repl(m)
        if new is not None and new != m.group(0):
            return text[:m.start()] + new + text[m.end():]
    return None


def _same_case(word: str, like: str) -> str:
    return word[:1].upper() + word[1:] if like[:1].isupper() else word


def _word_table(sentence: str, table: dict[str, str], rng: random.Random, *, lower_only: bool = False
                ) -> str | None:
    """The sentence with one word (or phrase) of ``table`` replaced by its counterpart; ``lower_only``:
    only where the sentence writes it in lower case (a capitalised "Big" is part of a name, and
    "Large Sur" is no paraphrase of "Big Sur")."""
    flags = 0 if lower_only else re.IGNORECASE
    keys = [k for k in table if re.search(rf"(?<![\w-]){re.escape(k)}(?![\w-])", sentence, flags)]
    if not keys:
        return None
    key = rng.choice(sorted(keys))
    pat = re.compile(rf"(?<![\w-]){re.escape(key)}(?![\w-])", flags)
    return _sub_first(pat, sentence, lambda m: _same_case(table[key], m.group(0)))


def _cjk_table(sentence: str, table: dict[str, str], rng: random.Random) -> str | None:
    keys = sorted(k for k in table if k in sentence)
    if not keys:
        return None
    key = rng.choice(keys)
    return sentence.replace(key, table[key], 1)


def _spell(n: int) -> str | None:
    if 0 <= n < len(_NUMBER_WORDS):
        return _NUMBER_WORDS[n]
    if n in _TENS:
        return _TENS[n]
    if 20 < n < 100 and n // 10 * 10 in _TENS | {20: "twenty"}:
        return f"{(_TENS | {20: 'twenty'})[n // 10 * 10]}-{_NUMBER_WORDS[n % 10]}"
    return None


def _other_number(value: int, rng: random.Random) -> int:
    options = [value + 1, value + rng.randint(2, 9), value * 2, max(0, value - rng.randint(1, 5)), value * 10]
    options = [v for v in options if v != value and v >= 0]
    return rng.choice(options)


# ---- English transformations --------------------------------------------------------------------

def _en_negation(s: str, rng: random.Random) -> str | None:
    m = _EN_NOT.search(s)
    if m:
        t = m.group(0)
        if t.lower() == "cannot":
            return s[:m.start()] + _same_case("can", t) + s[m.end():]
        if t.lower().endswith("n't"):
            return s[:m.start()] + t[:-3] + s[m.end():]
        aux = t.split()[0]
        if aux.lower() in ("do", "does", "did"):
            return None  # "does not listen" needs the verb inflected
        return s[:m.start()] + aux + s[m.end():]
    if re.search(r"\bnever\b", s, re.IGNORECASE):
        return re.sub(r"\bnever\b ?", "", s, count=1, flags=re.IGNORECASE) or None
    m = _EN_AUX.search(s)
    if m is None:
        return None
    word = m.group(1)
    if " " in word:  # has been → has not been
        first, rest = word.split(" ", 1)
        return s[:m.start()] + f"{first} not {rest}" + s[m.end():]
    return s[:m.end()] + " not" + s[m.end():]


def _en_number(s: str, rng: random.Random) -> str | None:
    def repl(m: re.Match) -> str | None:
        if _YEAR.fullmatch(m.group(0)) or m.group(2):
            return None
        value = int(m.group(1).replace(",", ""))
        new = _other_number(value, rng)
        return f"{new:,}" if "," in m.group(1) else str(new)
    out = _sub_first(_NUMBER, s, repl)
    if out is not None:
        return out
    words = [w for w in _NUMBER_WORDS[2:] if re.search(rf"\b{w}\b", s, re.IGNORECASE)]
    if not words:
        return None
    w = rng.choice(words)
    new = _spell(_other_number(_NUMBER_WORDS.index(w), rng) % 21) or "forty"
    if new == w:
        new = "forty"
    return re.sub(rf"\b{w}\b", lambda m: _same_case(new, m.group(0)), s, count=1, flags=re.IGNORECASE)


def _en_unit(s: str, rng: random.Random) -> str | None:
    """The sentence with a unit of measure put for another of its quantity: "10 MB" → "10 GB"."""
    def pattern(key: str) -> re.Pattern:
        return re.compile(rf"(?<![\w.,])(\d[\d,]*(?:\.\d+)?)(\s?){re.escape(key)}(?![\w])")
    keys = sorted(k for k in _UNIT_SWAP if pattern(k).search(s))
    if not keys:
        return None
    key = rng.choice(keys)

    def repl(m: re.Match) -> str | None:
        new = _UNIT_SWAP[key]
        one = m.group(1) == "1"
        new = _SINGULAR.get(new, new) if one else _PLURAL.get(new, new)
        space = " " if m.group(2) or len(new) > 2 else ""  # "10 GB", "10GB"; a word always apart: "5 miles"
        return None if _same_amount(m.group(0), m.group(1) + space + new) else m.group(1) + space + new
    return _sub_first(pattern(key), s, repl)


def _same_amount(before: str, after: str) -> bool:
    """Whether two texts state the same amounts, as the key-fact extractor reads them ("1 hour" and
    "one hour", "60 minutes" and "an hour", "every day" and "daily"): rewriting one as the other is a
    paraphrase, not a contradiction. Texts with no amount in one of them are not the same."""
    a, b = key_facts(before), key_facts(after)
    if not any(f.kind == "number" for f in a) or not any(f.kind == "number" for f in b):
        return False
    return not missing_facts(before, after) and not missing_facts(after, before)


def _en_date(s: str, rng: random.Random) -> str | None:
    return _sub_first(_YEAR, s, lambda m: str(int(m.group(1)) + rng.choice((-7, -3, -2, -1, 1, 2, 5, 10))))


def _en_version(s: str, rng: random.Random) -> str | None:
    if not re.search(r"\b(version|release|v\d|[A-Z][A-Za-z]+ \d+\.\d)", s):
        return None
    def repl(m: re.Match) -> str:
        major, minor = int(m.group(2)), int(m.group(3))
        if rng.random() < 0.5:
            minor += rng.randint(1, 3)
        else:
            major += 1
        return f"{m.group(1)}{major}.{minor}" + (f".{m.group(4)}" if m.group(4) else "")
    return _sub_first(_VERSION, s, repl)


def _en_duration(s: str, rng: random.Random) -> str | None:
    m = _DURATION_EN.search(s)
    if m is None:
        return None
    options = []
    for new in _DURATIONS_EN:
        if not m.group(1):  # "after 14 days" → "after one hour"; forever needs the "for"
            new = new[4:] if new.startswith("for ") else "one hour"
        if new.split()[-1].rstrip("s") not in m.group(0) and not _same_amount(m.group(0), new):
            options.append(new)  # never the same span in other words: "1 hour" as "one hour"
    if not options:
        return None
    return s[:m.start()] + rng.choice(sorted(set(options))) + s[m.end():]


def _en_frequency(s: str, rng: random.Random) -> str | None:
    m = _FREQ_RE.search(s.lower())
    if m is None:
        return None
    said = m.group(0)
    unit = said.split()[-1].rstrip("ly") if " " in said else said
    options = [f for f in _FREQUENCIES_EN if unit[:3] not in f and not _same_amount(said, f)]
    return s[:m.start()] + rng.choice(options) + s[m.end():] if options else None


def _en_entity(s: str, rng: random.Random, pool: "_Pool", evidence: str) -> str | None:
    names = sorted({f.text for f in key_facts(s) if f.kind == "entity" and f.text in s and len(f.text) > 2})
    if names:
        name = rng.choice(names)
        others = [e for e in pool.entities if e != name and e not in evidence and e.lower() not in evidence.lower()]
        if others:
            return s.replace(name, rng.choice(others), 1)
    nouns = [m for m in _THE_NOUN.finditer(s) if m.group(1) not in CLAIM_STOP_WORDS]
    if not nouns:
        return None
    m = rng.choice(nouns)
    others = [n for n in pool.nouns if n != m.group(1) and n not in evidence.lower()]
    if not others:
        return None
    return s[:m.start(1)] + rng.choice(others) + s[m.end(1):]


def _en_added_clause(s: str, rng: random.Random, pool: "_Pool", evidence: str) -> str | None:
    other = pool.other_sentence(s, evidence, rng, "en")
    if other is None:
        return None
    body = other.rstrip(".!?")
    if not body[:2].isupper() and body.split(" ", 1)[0] not in pool.name_words:  # a name keeps its capital
        body = body[0].lower() + body[1:]
    return f"{s.rstrip('.!?')}, and {body}."


def _en_subset(s: str, rng: random.Random) -> str | None:
    if _PAREN.search(s):
        return _PAREN.sub("", s, count=1)
    core = s.rstrip(".!?")
    cut = core.rfind(", ")
    if cut > 0 and len(core[:cut].split()) >= 5 and not re.search(r"\b(not|no|never|but|except|unless)\b",
                                                                     core[cut:]):
        return core[:cut] + "."
    m = re.search(r" (?:in|on|at|with|during|for|from|by) (?:the |a |an )?[\w -]{3,30}$", core)
    if m and len(core[:m.start()].split()) >= 5 and not _DURATION_EN.search(m.group(0)):
        return core[:m.start()] + "."
    return None


def _en_number_words(s: str, rng: random.Random) -> str | None:
    def repl(m: re.Match) -> str | None:
        if m.group(2) or "," in m.group(1) or _YEAR.fullmatch(m.group(0)):
            return None
        after = s[m.end():m.end() + 12]
        before = s[max(0, m.start() - 6):m.start()]
        if not re.match(r" [a-z]", after) or re.search(r"[$€£#]|no\.|v$", before.lower()) or \
                _MONTH_WORD.search(s[max(0, m.start() - 12):m.start()]):
            return None  # a count of something, not an id, a price or a version
        return _spell(int(m.group(1)))
    return _sub_first(_NUMBER, s, repl)


def _en_synonym(s: str, rng: random.Random) -> str | None:
    return _word_table(s, _SYNONYMS_EN, rng, lower_only=True)


def _en_hedged(s: str, rng: random.Random) -> str:
    first = s.split(" ", 1)[0]
    return rng.choice(_HEDGES_EN) + (s[0].lower() + s[1:] if first.lower() in CLAIM_STOP_WORDS else s)


def _en_reorder(s: str, rng: random.Random) -> str | None:
    m = _LEADING_PHRASE.match(s)
    if m is None:
        return None
    rest = m.group(2)
    if not rest[:2].isupper():
        rest = rest[0].upper() + rest[1:]
    lead = m.group(1)
    return f"{rest} {lead[0].lower() + lead[1:]}{m.group(3) or '.'}"


# ---- Chinese transformations ----------------------------------------------------------------------

def _zh_negation(s: str, rng: random.Random) -> str | None:
    m = _ZH_NEG.search(s)
    if m:
        t = m.group(0)
        return s[:m.start()] + {"没有": "有", "无法": "能", "未能": "能"}.get(t, t.lstrip("不")) + s[m.end():]
    for pattern, negated in _ZH_AFFIRM:
        m = pattern.search(s)
        if m:
            return s[:m.start()] + negated + s[m.end():]
    return None


def _zh_number(s: str, rng: random.Random) -> str | None:
    return _sub_first(_NUMBER, s, lambda m: None if _YEAR.fullmatch(m.group(0)) or m.group(2) else
                      str(_other_number(int(m.group(1).replace(",", "")), rng)))


def _zh_unit(s: str, rng: random.Random) -> str | None:
    def pattern(key: str) -> str:  # a count of 1-3 digits: "2002年" is a year, "1880年代" a decade
        return rf"(?<![0-9.])(\d{{1,3}}){re.escape(key)}(?![代级度])"
    keys = sorted(k for k in _UNIT_SWAP_ZH if re.search(pattern(k), s))
    if not keys:
        return None
    key = rng.choice(keys)
    return re.sub(pattern(key), lambda m: m.group(1) + _UNIT_SWAP_ZH[key], s, count=1)


def _zh_frequency(s: str, rng: random.Random) -> str | None:
    m = _FREQ_ZH_RE.search(s)
    if m is None:
        return None
    options = [f for f in _FREQ_ZH if f[1] != m.group(0)[1] and not _same_amount(m.group(0), f)]
    return s[:m.start()] + rng.choice(options) + s[m.end():] if options else None


def _zh_duration(s: str, rng: random.Random) -> str | None:
    m = _ZH_DURATION.search(s)
    if m is None:
        return None
    options = [d for d in ("永久", "一小时", "三个月", "十分钟") if not _same_amount(m.group(0), d)]
    return s[:m.start()] + rng.choice(options) + s[m.end():] if options else None


def _zh_entity(s: str, rng: random.Random, pool: "_Pool", evidence: str) -> str | None:
    # a day of the week (周六) is no name: a place's name put for it makes no claim a writer would make
    names = sorted({f.text for f in key_facts(s) if f.kind == "entity" and f.text in s and len(f.text) >= 2
                    and f.norm not in WEEKDAYS})
    if not names:
        return None
    name = rng.choice(names)
    others = [e for e in pool.entities_zh if e != name and e not in evidence]
    return s.replace(name, rng.choice(others), 1) if others else None


def _zh_added_clause(s: str, rng: random.Random, pool: "_Pool", evidence: str) -> str | None:
    other = pool.other_sentence(s, evidence, rng, "zh")
    return f"{s.rstrip('。！？')}，并且{other}" if other else None


def _zh_subset(s: str, rng: random.Random) -> str | None:
    if _PAREN.search(s):
        return _PAREN.sub("", s, count=1)
    core = s.rstrip("。！？")
    cut = core.rfind("，")
    if cut >= 8 and not re.search(r"[不没无未]|但|除", core[cut:]):
        return core[:cut] + "。"
    return None


def _zh_number_words(s: str, rng: random.Random) -> str | None:
    m = _CJK_NUM_UNIT.search(s)
    if m is None or int(m.group(1)) > 9999 or m.group(2) == "年" and len(m.group(1)) == 4:
        return None
    return s[:m.start()] + cn2an.an2cn(m.group(1)) + m.group(2) + s[m.end():]


def _zh_synonym(s: str, rng: random.Random) -> str | None:
    return _cjk_table(s, _SYNONYMS_ZH, rng)


def _zh_hedged(s: str, rng: random.Random) -> str:
    return rng.choice(_HEDGES_ZH) + s


# ---- sources ------------------------------------------------------------------------------------

class _Pool:
    """What the other units of a memory offer: entities and nouns to swap in, sentences to add."""

    def __init__(self, units: Sequence[tuple[str, str]]):
        ent: Counter[str] = Counter()
        ent_zh: Counter[str] = Counter()
        nouns: Counter[str] = Counter()
        lower: set[str] = set()  # words the memory writes in lower case somewhere
        self.sentences: dict[str, list[str]] = {"en": [], "zh": []}
        for _, text in units:
            lower.update(_LOWER_WORD.findall(text))
            for f in key_facts(text[:2000]):
                if f.kind == "entity" and len(f.text) > 2:
                    if not CJK_CHAR.search(f.text):
                        ent[f.text] += 1
                    elif f.norm not in WEEKDAYS:  # as in _zh_entity
                        ent_zh[f.text] += 1
            nouns.update(m.group(1) for m in _THE_NOUN.finditer(text) if m.group(1) not in CLAIM_STOP_WORDS)
            for s in _sentences(text):
                if _usable(s):
                    self.sentences[_lang(s)].append(s)
        # A span across a sentence end ("Rhonix. Planned") is two; a capitalised word the memory also writes
        # in lower case ("On-call", "Planned", "Capacity of X") opens a heading or a sentence and names
        # nothing: put for a name it makes a malformed claim.
        parts: Counter[str] = Counter()
        for e, c in ent.items():
            for part in re.split(r"\.\s+", e):
                if len(part) > 2 and part.split()[0].lower() not in lower:
                    parts[part] += c
        ent = parts
        self.entities = sorted(ent, key=lambda e: (-ent[e], e))[:2000]
        self.name_words = {w for e in ent for w in e.split() if w[:1].isupper()}
        self.entities_zh = sorted(ent_zh, key=lambda e: (-ent_zh[e], e))[:2000]
        self.nouns = sorted(n for n, c in nouns.items() if c >= 2)[:2000]

    def other_sentence(self, s: str, evidence: str, rng: random.Random, lang: str) -> str | None:
        """A sentence of another unit that shares the most content words with ``s`` (of 40 drawn)."""
        pool = self.sentences[lang]
        if len(pool) < 2:
            return None
        words = set(_content_words(s))
        stated = set(_content_words(evidence))
        best, best_n = None, -1
        for cand in rng.sample(pool, min(40, len(pool))):
            theirs = set(_content_words(cand))
            if cand in evidence or len(theirs - stated) < max(2, len(theirs) // 3):
                continue  # the evidence may state it after all
            n = len(words & theirs)
            if n > best_n:
                best, best_n = cand, n
        return best


def _content_words(s: str) -> list[str]:
    return [w for w in claim_words(s) if w not in CLAIM_STOP_WORDS and len(w) > 2 or not w.isascii()]


_SUPPORTED = {
    "en": {"subset": _en_subset, "number_words": _en_number_words, "synonym": _en_synonym, "reorder": _en_reorder,
           "hedged": _en_hedged},
    "zh": {"subset": _zh_subset, "number_words": _zh_number_words, "synonym": _zh_synonym, "hedged": _zh_hedged},
}
_CONTRADICTED = {
    "en": {"negation": _en_negation, "number": _en_number, "unit": _en_unit, "date": _en_date,
           "version": _en_version, "duration": _en_duration, "frequency": _en_frequency,
           "antonym": lambda s, r: _word_table(s, _ANTONYMS_EN, r),
           "quantifier": lambda s, r: _word_table(s, _QUANTIFIERS_EN, r),
           "comparison": lambda s, r: _word_table(s, _COMPARISONS_EN, r)},
    "zh": {"negation": _zh_negation, "number": _zh_number, "unit": _zh_unit, "date": _en_date,
           "duration": _zh_duration, "frequency": _zh_frequency,
           "antonym": lambda s, r: _cjk_table(s, _ANTONYMS_ZH, r),
           "quantifier": lambda s, r: _cjk_table(s, _QUANTIFIERS_ZH, r),
           "comparison": lambda s, r: _cjk_table(s, _COMPARISONS_ZH, r)},
}
_WITH_POOL = {"en": {"entity": _en_entity, "added_clause": _en_added_clause},
              "zh": {"entity": _zh_entity, "added_clause": _zh_added_clause}}


def generate(units: Iterable[tuple[str, str]], *, seed: int = 0, per_kind: int | None = 200,
             max_units: int | None = 2000) -> list[Claim]:
    """Claims about ``units`` ((id, text) pairs), at most ``per_kind`` of each kind, in a seeded order.

    One sentence is drawn from each unit (``max_units`` units at most, drawn by the seed); every
    rule that applies to it makes one claim; each kind is then sampled down to ``per_kind``.
    """
    rng = random.Random(seed)
    units = [(str(uid), text) for uid, text in units if isinstance(text, str) and text.strip()]
    if max_units is not None and len(units) > max_units:
        units = rng.sample(units, max_units)
    pool = _Pool(units)
    by_kind: dict[str, list[Claim]] = {k: [] for k in LABELS}
    for uid, text in units:
        candidates = [s for s in _sentences(text) if _usable(s)]
        if not candidates:
            continue
        s = rng.choice(candidates)
        lang = _lang(s)

        def add(kind: str, claim: str | None) -> None:
            if claim and claim != s and claim.strip():
                by_kind[kind].append(Claim(" ".join(claim.split()), text, uid, kind, LABELS[kind], lang))

        by_kind["copy"].append(Claim(s, text, uid, "copy", "supported", lang))
        for kind, rule in (*_SUPPORTED[lang].items(), *_CONTRADICTED[lang].items()):
            add(kind, rule(s, rng))
        for kind, rule in _WITH_POOL[lang].items():
            add(kind, rule(s, rng, pool, text))
        add("unrelated", pool.other_sentence(s, text, rng, lang))
    out: list[Claim] = []
    for kind in LABELS:
        claims = by_kind[kind]
        if per_kind is not None and len(claims) > per_kind:
            claims = rng.sample(claims, per_kind)
        out.extend(claims)
    return out


def units_of_memory(memory) -> list[tuple[str, str]]:
    """(id, text) of a memory's active units."""
    return [(u.id, u.content) for u in memory.units_with_status("active")]
