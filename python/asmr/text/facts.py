"""Key facts of a text: numbers with units, dates, versions, codes and named entities.

A fact is what a reader would check against a source: "12 GB", "March 3, 2021",
"v1.2.3", "ERR_42", "Toby Keith", "清华大学". Each comes with ``norm``, a form
two texts can be compared by:

- number: the value without thousands separators or scale words, then the unit
  ("1,200" → ``1200``, "3.5 percent" → ``3.5 %``, "2 million people" →
  ``2000000``, "12万人" → ``120000``, "12 GB" → ``12 gb``);
- date: ISO, as precise as the text (``2021-03-03``, ``2021-03``, ``2021``);
- version: without a leading "v" (``1.2.3``);
- code: upper case without separators (``ERR42``, ``SKU1234``);
- entity: lower case, punctuation dropped, no leading "the".

``missing_facts(claim, evidence)`` lists the claim's facts the evidence does not
state. Extraction is regular expressions, with no model: cheap enough to run on
every cited sentence and unit. ASCII text goes to a native port of the same
patterns (``csrc/cpu/key_facts.cpp``), which finds the same facts several times
faster; tests/kernels/test_facts_native.py holds the two to each other. English and CJK text are both handled; CJK entities
are quoted titles (《》「」“”), organisation and place names ending in a
suffix such as 大学, 公司 or 市, and katakana runs.
"""
from __future__ import annotations

import math
import re
from functools import lru_cache
from typing import NamedTuple, Sequence

import cn2an

from asmr_kernels.cpu import KeyFactExtractor

from .cjk import CJK_CLASS
from .entities import COMMON_WORDS

KINDS = ("number", "date", "version", "code", "entity")


class Fact(NamedTuple):
    """One key fact: its ``kind`` (one of KINDS), its ``text`` as written and its comparable ``norm``.

    A named tuple, not a dataclass: every cited sentence makes several, and a frozen
    dataclass costs several times as much to build."""

    kind: str
    text: str
    norm: str


_MONTHS = {m: i + 1 for i, m in enumerate(
    "january february march april may june july august september october november december".split())}
_MONTHS.update({m[:3]: i for m, i in list(_MONTHS.items())})
_MONTHS["sept"] = 9
_MONTH_RE = (r"(?:Jan(?:uary)?|Feb(?:ruary)?|Mar(?:ch)?|Apr(?:il)?|May|June?|July?|Aug(?:ust)?|"
             r"Sept?(?:ember)?|Oct(?:ober)?|Nov(?:ember)?|Dec(?:ember)?)")

# Numbers, dates and versions are found from their digit runs: one cheap scan, then anchored
# matches around each run (a regex that tries every position of the text costs ~10x more).
_DIGITS = re.compile(r"[0-9][0-9.,]*")
_ISO = re.compile(r"(\d{4})-([01]?\d)(?:-([0-3]?\d))?(?![A-Za-z0-9_])")
_ZH_DATE = re.compile(r"(\d{4})\s*年(?:\s*([01]?\d)\s*月(?:\s*([0-3]?\d)\s*[日号])?)?")
_DMY = re.compile(rf"([0-3]?\d)(?:st|nd|rd|th)?\s+(?:of\s+)?({_MONTH_RE})\.?,?\s+(\d{{4}})(?![0-9])")
_DAY_YEAR = re.compile(r"(?:st|nd|rd|th)?,?\s+(\d{4})(?![0-9])")
_MONTH_BEFORE = re.compile(rf"(?<![A-Za-z])({_MONTH_RE})\.?,?\s+$")
_ANY_MONTH = re.compile(_MONTH_RE)  # a text without a month name skips the two patterns above
_VERSION_BEFORE = re.compile(r"(?:(?<![A-Za-z])(?:version|ver\.|release|Version|Release)\s*|版本\s*|"
                             r"(?<![A-Za-z])[A-Z][A-Za-z+#]*\s)$")
_SCALE = {"thousand": 1e3, "million": 1e6, "billion": 1e9, "trillion": 1e12, "k": 1e3, "m": 1e6, "bn": 1e9,
          "万": 1e4, "亿": 1e8, "千": 1e3, "百万": 1e6, "千万": 1e7}
_UNITS = (r"%|percent|per\s*cent|percentage\s+points?|kg|mg|lbs?|pounds?|tons?|tonnes?|km|cm|mm|mi|miles?|"
          r"feet|ft|inch(?:es)?|meters?|metres?|kilometers?|kilometres?|gb|mb|kb|tb|pb|ghz|mhz|hz|kw|mw|"
          r"kwh|mah|ms|sec(?:onds?)?|min(?:utes?)?|hrs?|hours?|days?|weeks?|months?|years?|decades?|"
          r"centur(?:y|ies)|°c|°f|degrees?|dollars?|usd|eur|euros?|rmb|yuan|yen|people|persons?|times|"
          r"元|人|个|次|岁|年|月|天|小时|分钟|秒|米|公里|千米|厘米|毫米|克|千克|公斤|吨|倍|家|位|名|项|台|辆|件")
_AFTER = re.compile(
    rf"(?:\s?(?P<scale>thousand|million|billion|trillion|bn|百万|千万|万|亿|千)(?![A-Za-z])"
    rf"|(?P<short>[kKM])(?![A-Za-z]))?"
    rf"(?:\s?(?P<unit>{_UNITS})(?![A-Za-z])|(?P<letter>[gmswvhcfx])(?![A-Za-z]))?",
    re.IGNORECASE)  # one-letter units only written against the number: "5m", "80g", "3x"
_CURRENCY = {"$": "usd", "€": "eur", "£": "gbp", "¥": "cny", "￥": "cny"}
_WORD_NUMBERS = {w: i for i, w in enumerate(
    "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen "
    "sixteen seventeen eighteen nineteen twenty".split())}
_WORD_NUMBERS.update({"thirty": 30, "forty": 40, "fifty": 50, "sixty": 60, "seventy": 70, "eighty": 80,
                      "ninety": 90, "hundred": 100, "dozen": 12, "half": 0.5, "once": 1, "twice": 2})
_WORD_NUMBER = re.compile(r"(?<![\w])(" + "|".join(_WORD_NUMBERS) + r")(?:[ -](one|two|three|four|five|six|"
                          r"seven|eight|nine))?(?:\s(thousand|million|billion|trillion))?(?![\w])")
_CJK_DIGITS = "零〇一二两三四五六七八九"
_CJK_NUMERAL_RUN = re.compile(f"[{_CJK_DIGITS}十百千万亿]+(?:点[{_CJK_DIGITS}]+)?")
# A number in Chinese numerals is a key fact with a unit of measure, time or money after it ("三十天",
# "一百二十元"); bare numerals are too often parts of words. Not 月 alone: "五月" is May.
_CJK_NUMBER = re.compile(f"({_CJK_NUMERAL_RUN.pattern})个?(月|小时|星期)|({_CJK_NUMERAL_RUN.pattern})(分钟|公里|千米|"
                         f"千克|公斤|天|周|年|秒|元|块钱|米|克|吨|倍|岁)")
_NOT_A_COUNT = frozenset("哪这那每同第某任唯统")
_CJK_UNITS = {"月": "month", "星期": "week", "周": "week", "块钱": "cny", "岁": "year of age"}

_CODE = re.compile(
    r"(?<![\w-])(?:[A-Z][A-Z0-9]*(?:[_-][A-Za-z0-9]+)+|[A-Za-z]+_[A-Za-z0-9_]+|"
    r"[A-Z]+\d+[A-Z0-9]*|[A-Z]{2,}[a-z]?\d[\w]*)(?![\w-])")
# What every code above holds: a "_" or "-", or a capital (and at most one small letter) before a digit.
_CODE_GATE = re.compile(r"[_-]|[A-Z][a-z]?\d")

_CONNECTORS = r"(?:of|de|del|della|der|di|da|du|des|la|le|von|van|y|&|for|the)"
_CAPWORD = r"(?:[A-Z][\w'’\-]*(?:\.[A-Za-z][\w'’\-]*)*)"
_CAP_SPAN = re.compile(rf"(?<![\w'’])(?:{_CAPWORD}\.?)(?:[ \t]+(?:{_CONNECTORS}[ \t]+)*{_CAPWORD}\.?)*")
_CJK_QUOTED = re.compile(r"[《「『“]([^》」』”\n]{1,30})[》」』”]")
_CJK_ORG = re.compile(
    rf"[{CJK_CLASS}]{{1,6}}?(?:有限公司|公司|集团|大学|学院|银行|医院|研究院|研究所|委员会|政府|法院|协会|基金会|"
    rf"博物馆|中学|小学|省|市|县|镇|村|州|岛|山脉|河|江|湖)")
_CJK_LEAD = re.compile(r"^[在于位的是和与从到向被由对将把给为以及或及了而其这那该此各每]+")
_KATAKANA = re.compile(r"[\u30a0-\u30ff]{3,}")
_PUNCT = re.compile(r"[^\w\s]+")
_SPACES = re.compile(r"\s+")
_SENTENCE_OPENERS = frozenset(".!?:\n。！？\"“(")


def _opens_sentence(text: str, pos: int) -> bool:
    """True if only spaces lie between ``pos`` and the start of the text or a sentence mark."""
    i = pos - 1
    while i >= 0 and text[i] in " \t":
        i -= 1
    return i < 0 or text[i] in _SENTENCE_OPENERS

# Capitalised only because they open a sentence, or too common to name anything.
_COMMON = COMMON_WORDS | frozenset("""
according additionally both either finally first furthermore hence instead meanwhile moreover neither next
note overall page second section see source text therefore third though title today whether yes
""".split())


def _fmt(value: float) -> str:
    """A number's canonical text: integers without ".0", others to 6 significant digits."""
    if math.isfinite(value) and value == int(value) and abs(value) < 1e18:
        return str(int(value))
    return f"{value:.6g}"


def _unit_norm(unit: str | None) -> str:
    if not unit:
        return ""
    u = unit.lower()
    if not u.isalpha():
        u = _SPACES.sub(" ", u)
    if u in ("percent", "per cent", "percentage point", "percentage points", "%"):
        return "%"
    if u == "centuries":
        return "century"
    if u.endswith("s") and len(u) > 3 and u not in ("lbs", "hrs", "mos"):
        u = u[:-1]  # "days" and "day" compare equal, as "天" does
    return u


def _date_norm(y: str, m: str | int | None = None, d: str | None = None) -> str:
    if m is None:
        return y
    if isinstance(m, str) and not m.isdigit():
        m = _MONTHS[m.lower().rstrip(".")[:4] if m.lower().startswith("sept") else m.lower().rstrip(".")[:3]]
    m = int(m)
    if not 1 <= m <= 12:
        return y
    if d is None:
        return f"{y}-{m:02d}"
    return f"{y}-{m:02d}-{int(d):02d}"


def _entity_norm(text: str) -> str:
    key = text.lower()
    if not key.isalnum():  # punctuation or blanks to fold
        key = _SPACES.sub(" ", _PUNCT.sub(" ", key)).strip()
    return key[4:] if key.startswith("the ") else key


def _overlaps(span: tuple[int, int], taken: list[tuple[int, int]]) -> bool:
    return any(span[0] < e and s < span[1] for s, e in taken)


def _ascii_word_char(c: str) -> bool:
    return c.isascii() and (c.isalnum() or c == "_")


def _number_norm(run: str, after: re.Match, currency: str | None) -> tuple[str, float]:
    value = float(run.replace(",", "")) if "," in run else float(run)
    scale, short, unit, letter = after.group("scale", "short", "unit", "letter")
    if scale:
        value *= _SCALE[scale.lower()]
    elif short:
        if short in "mM" and not currency and not unit:
            unit = "m"  # "5m" is metres unless it is money
        else:
            value *= _SCALE[short.lower()]
    if letter:
        unit = letter
    u = _unit_norm(unit)
    u = _CURRENCY[currency] if currency else _UNITS_ALIAS.get(u, u)
    return _fmt(value) + (f" {u}" if u else ""), value


def _numeric(text: str, taken: list[tuple[int, int]], out: list[Fact]) -> None:
    """Dates, versions and numbers, from the digit runs of ``text``."""
    end_taken = -1
    months = _ANY_MONTH.search(text) is not None
    for m in _DIGITS.finditer(text):
        s, e = m.span()
        if s < end_taken or (taken and _overlaps((s, e), taken)):
            continue
        run = m.group(0).rstrip(".,")
        e = s + len(run)
        prev = text[s - 1] if s else " "
        if prev == "." or (prev == "-" and s > 1 and _ascii_word_char(text[s - 2])):
            continue  # ".5" of something, the "19" of "COVID-19"
        if _ascii_word_char(prev):
            if prev in "vV" and (s < 2 or not _ascii_word_char(text[s - 2])) and "," not in run:
                out.append(Fact("version", text[s - 1:e], run))
                taken.append((s - 1, e))
            continue  # inside a word or a code ("A100")
        if "," in run and not re.fullmatch(r"\d{1,3}(?:,\d{3})+(?:\.\d+)?", run):
            run = run.split(",")[0]  # "1,2" is a list, not a number
            e = s + len(run)
        fact, span = None, None
        if len(run) == 4 and run.isdigit():
            d = _ISO.match(text, s) or _ZH_DATE.match(text, s) if run[0] in "12" else None
            if d is not None:
                fact, span = Fact("date", d.group(0).strip(), _date_norm(*d.groups())), d.span()
        if fact is None and months and len(run) <= 2 and run.isdigit():
            nxt = text[e:e + 1]  # "3 March 2021" and "3rd of March": a blank or a suffix follows the day
            d = _DMY.match(text, s) if nxt.isspace() or (nxt and nxt in "snrt") else None
            if d is not None:
                fact, span = Fact("date", d.group(0), _date_norm(d.group(3), d.group(2), d.group(1))), d.span()
            elif prev.isspace():  # "March 3, 2021": blanks before the day
                mb = _MONTH_BEFORE.search(text, max(0, s - 12), s)
                d = _DAY_YEAR.match(text, e) if mb else None
                if d is not None:
                    fact = Fact("date", text[mb.start():d.end()], _date_norm(d.group(1), mb.group(1), run))
                    span = (mb.start(), d.end())
        if fact is None and run.count(".") >= 2:
            fact, span = Fact("version", run, run), (s, e)
        if fact is None:
            after = _AFTER.match(text, e)
            has_unit = after.end() > e
            if len(run) == 4 and run.isdigit() and run[0] in "12" and int(run) < 2100 and (
                    not has_unit or after.group("letter") == "s"):
                mb = _MONTH_BEFORE.search(text, max(0, s - 12), s) if months else None
                if mb is not None:
                    fact, span = Fact("date", text[mb.start():e], _date_norm(run, mb.group(1))), (mb.start(), e)
                else:
                    fact, span = Fact("date", run, run), (s, e)
            elif (not has_unit and run.count(".") == 1
                  and _VERSION_BEFORE.search(text, max(0, s - 12), s) is not None):
                fact, span = Fact("version", run, run), (s, e)
            else:
                cur = prev if prev in _CURRENCY else (text[s - 2] if s > 1 and prev == " "
                                                      and text[s - 2] in _CURRENCY else None)
                start = s - (1 if prev in _CURRENCY else 2 if cur else 0)
                norm, _ = _number_norm(run, after, cur)
                fact, span = Fact("number", text[start:after.end()].strip(), norm), (start, after.end())
        out.append(fact)
        taken.append(span)
        end_taken = span[1]


_UNITS_ALIAS = {"dollar": "usd", "euro": "eur", "yuan": "cny", "rmb": "cny", "元": "cny", "pound": "lb",
                "lb": "lb", "lbs": "lb", "kilometer": "km", "kilometre": "km", "千米": "km", "公里": "km",
                "meter": "m", "metre": "m", "米": "m", "second": "s", "sec": "s", "minute": "min", "hour": "h",
                "hr": "h", "hrs": "h", "小时": "h", "分钟": "min", "秒": "s", "day": "day", "天": "day",
                "year": "year", "年": "year", "month": "month", "月": "month", "week": "week", "克": "g",
                "千克": "kg", "公斤": "kg", "吨": "ton", "tonne": "ton", "倍": "times", "x": "times",
                "人": "people", "person": "people", "time": "times", "°c": "c", "°f": "f", "degree": "deg"}


def _codes(text: str, taken: list[tuple[int, int]], out: list[Fact]) -> None:
    if _CODE_GATE.search(text) is None:
        return
    for m in _CODE.finditer(text):
        if taken and _overlaps(m.span(), taken):
            continue
        raw = m.group(0)
        if "_" not in raw and "-" not in raw and not any(c.isdigit() for c in raw):
            continue
        out.append(Fact("code", raw, re.sub(r"[-_]", "", raw.upper())))
        taken.append(m.span())


def _entities(text: str, taken: list[tuple[int, int]], out: list[Fact]) -> None:
    seen: set[str] = set()
    ascii_only = text.isascii()
    if not ascii_only:
        for m in _CJK_QUOTED.finditer(text):
            if not _overlaps(m.span(), taken):
                _add_entity(m.group(1), seen, out)
    for m in _CAP_SPAN.finditer(text):
        if taken and _overlaps(m.span(), taken):
            continue
        words = m.group(0).rstrip(".-'’").split()
        while words and words[-1].lower() in _COMMON:
            words.pop()
        opened = bool(words) and words[0].lower() in _COMMON
        if opened:
            words = words[1:]  # "The Beatles" → "Beatles"; "However Paris" → "Paris"
        if not words:
            continue
        if len(words) == 1 and not opened:
            w = words[0]
            if len(w) < 2 or (_opens_sentence(text, m.start()) and not w.isupper()
                              and not any(c.isupper() for c in w[1:])):
                continue  # a lone capitalised word opening a sentence: probably just a word
        _add_entity(" ".join(words), seen, out)
    if ascii_only:
        return
    for m in _CJK_ORG.finditer(text):
        name = _CJK_LEAD.sub("", m.group(0))
        if len(name) >= 2:
            _add_entity(name, seen, out)
    for m in _KATAKANA.finditer(text):
        _add_entity(m.group(0), seen, out)


def _add_entity(raw: str, seen: set[str], out: list[Fact]) -> None:
    norm = _entity_norm(raw)
    if norm and norm not in seen and norm not in _COMMON:
        seen.add(norm)
        out.append(Fact("entity", raw.strip(), norm))


def _regex_key_facts(text: str) -> tuple[Fact, ...]:
    """The extractor itself; ASCII text takes its native port (asmr_kernels), which finds the same."""
    out: list[Fact] = []
    taken: list[tuple[int, int]] = []
    _codes(text, taken, out)
    if _DIGITS.search(text):
        _numeric(text, taken, out)
    if _CJK_NUMERAL_RUN.search(text):
        _cjk_numbers(text, taken, out)
    _entities(text, taken, out)
    return tuple(out)


_NATIVE = KeyFactExtractor(sorted(_COMMON), Fact, KINDS)


@lru_cache(maxsize=4096)
def _key_facts(text: str) -> tuple[Fact, ...]:
    if text.isascii():  # most text: about ten times faster natively
        facts = _NATIVE(text)
        if facts is not None:
            return facts
    return _regex_key_facts(text)


def key_facts(text: str) -> list[Fact]:
    """The key facts of ``text``, dates first, then versions, codes, numbers and entities.

    A span belongs to one fact: "2021-03-03" is a date, not three numbers; "ERR_42" is a
    code, not the number 42. Results are cached per text (units are checked repeatedly).
    """
    if not isinstance(text, str):
        raise ValueError(f"key_facts: text must be a string, got {type(text).__name__}")
    return list(_key_facts(text))


def _word_numbers(text: str) -> set[str]:
    """Values written in words ("four weeks", "two million", "三十"), as number norms without unit."""
    out: set[str] = set()
    for m in _WORD_NUMBER.finditer(text):
        v = _WORD_NUMBERS[m.group(1).lower()]
        if m.group(2):
            v += _WORD_NUMBERS[m.group(2).lower()]
        if m.group(3):
            v *= _SCALE[m.group(3).lower()]
        out.add(_fmt(v))
    for m in _CJK_NUMERAL_RUN.finditer(text):
        value = _cjk_value(m.group(0))
        if value is not None:
            out.add(_fmt(value))
    return out


def _cjk_value(run: str) -> float | None:
    """The value of a run of Chinese numerals (cn2an), None where it is not one number ("十百")."""
    try:
        return float(cn2an.cn2an(run, "smart"))
    except (ValueError, KeyError, IndexError):
        return None


def _cjk_numbers(text: str, taken: list[tuple[int, int]], out: list[Fact]) -> None:
    """Numbers in Chinese numerals with a unit ("三十天": 30 day); a year written digit by digit
    ("二〇二三年") is a date."""
    for m in _CJK_NUMBER.finditer(text):
        if taken and _overlaps(m.span(), taken):
            continue
        run, unit = (m.group(1), m.group(2)) if m.group(1) else (m.group(3), m.group(4))
        if run == "一" and m.start() and text[m.start() - 1] in _NOT_A_COUNT:
            continue  # "哪一年", "这一天": which, this, each; not one
        if unit == "月" and "个" not in m.group(0):
            continue  # "五月" is May
        value = _cjk_value(run)
        if value is None:
            continue
        if unit == "年" and not any(c in run for c in "十百千万亿点") and len(run) == 4:
            fact = Fact("date", m.group(0), _fmt(value))
        else:
            unit = _CJK_UNITS.get(unit) or _unit_norm(_UNITS_ALIAS.get(unit, unit))
            fact = Fact("number", m.group(0), f"{_fmt(value)} {unit}")
        out.append(fact)
        taken.append(m.span())


class _EvidenceFacts:
    """What an evidence text states, indexed for the checks of missing_facts."""

    __slots__ = ("norms", "units", "dates", "words", "lower")

    def __init__(self, evidence: str):
        facts = _key_facts(evidence)
        self.norms = {f.norm for f in facts}
        # value -> the units it is stated with ("" for none), of numbers, versions and word numbers
        self.units: dict[str, set[str]] = {}
        for f in facts:
            if f.kind in ("number", "version"):
                value, _, unit = f.norm.partition(" ")
                self.units.setdefault(value, set()).add(unit)
        for value in _word_numbers(evidence):
            self.units.setdefault(value, set()).add("")
        self.dates = [f.norm for f in facts if f.kind == "date"]
        self.lower = evidence.lower()
        self.words = set(_entity_norm(evidence).split())


@lru_cache(maxsize=2048)
def _evidence(evidence: str) -> _EvidenceFacts:
    return _EvidenceFacts(evidence)


def _present(f: Fact, ev: _EvidenceFacts) -> bool:
    if f.norm in ev.norms:
        return True
    if f.kind == "number":
        value, _, unit = f.norm.partition(" ")
        units = ev.units.get(value)
        if units is not None:
            # the value is stated; a unit conflicts only when the evidence gives it another one
            return not unit or "" in units or unit in units
        return value in ev.dates  # "in 2021" counted as a plain number
    if f.kind == "date":
        return any(d.startswith(f.norm) for d in ev.dates) or f.norm in ev.units
    if f.kind == "version":
        return f.norm in ev.units or f.norm in ev.lower
    if f.kind == "code":
        return f.norm.lower() in re.sub(r"[-_]", "", ev.lower)
    # entity: partial token containment
    if f.norm in ev.lower:
        return True
    tokens = f.norm.split()
    if len(tokens) <= 1:
        return False
    hits = sum(t in ev.words for t in tokens)
    return hits * 2 >= len(tokens)


def missing_from(facts: Sequence[Fact], evidence: str) -> list[Fact]:
    """Those of ``facts`` that ``evidence`` does not state (as :func:`missing_facts` compares them)."""
    ev = _evidence(evidence)
    return [f for f in facts if not _present(f, ev)]


def missing_facts(claim: str, evidence: str) -> list[Fact]:
    """Facts of ``claim`` that ``evidence`` does not state, compared by ``norm``.

    A number counts as stated when the evidence has the same value with the same or no unit
    (also written in words: "four weeks"); a date when the evidence has a date at least as
    precise that agrees ("March 2021" is in "March 3, 2021", not the other way round); an
    entity when its text occurs in the evidence or at least half of its words do.
    """
    return missing_from(_key_facts(claim), evidence)
