"""Key facts of a text: numbers with units, dates, versions, codes and named entities.

A fact is what a reader would check against a source: "12 GB", "March 3, 2021",
"v1.2.3", "ERR_42", "Toby Keith", "清华大学". Each comes with ``norm``, a form
two texts can be compared by:

- number: the value without thousands separators or scale words, then the unit
  ("1,200" → ``1200``, "3.5 percent" → ``3.5 %``, "2 million people" →
  ``2000000``, "12万人" → ``120000``, "12 GB" → ``12 gb``, "14 days" → ``14 day``);
  also written in words with a unit ("fourteen days" → ``14 day``, "half an hour" →
  ``0.5 h``, "a fortnight" → ``2 week``, "five percent" → ``5 %``, "三十天" →
  ``30 day``, "半小时" → ``0.5 h``; a bare "two" is no fact), frequencies as the time
  between two events ("daily", "every day", "every night", "once a day", "每天" → ``every 1 day``;
  "twice a week" → ``every 0.5 week``; "every 3 hours" → ``every 3 h``) and unbounded
  durations ("forever", "indefinitely", "permanently", "never expires", "永久" →
  ``inf duration``);
- date: ISO, as precise as the text (``2021-03-03``, ``2021-03``, ``2021``); a month (and day) of no
  stated year written in Chinese digits as ``--03`` (``--03-15`` for 3月15日);
- version: without a leading "v" (``1.2.3``);
- code: upper case without separators (``ERR42``, ``SKU1234``);
- entity: lower case, punctuation dropped, no leading "the"; a Chinese day of the week in English
  (周六, 星期六 → ``saturday``, as "Saturday" is).

``missing_facts(claim, evidence)`` lists the claim's facts the evidence does not
state; spans of time compare by length across seconds, minutes, hours, days and
weeks ("two weeks" is stated by "14 days"; months and years are not converted).
Extraction is regular expressions, with no model: cheap enough to run on every
cited sentence and unit. ASCII text goes to a native port of the same patterns
(``csrc/cpu/key_facts.cpp``), which finds the same facts several times faster;
tests/kernels/test_facts_native.py holds the two to each other. English and CJK
text are both handled; CJK entities are quoted titles (《》「」“”), organisation and
place names ending in a suffix such as 大学, 公司 or 市, katakana runs and days of the week.
"""
from __future__ import annotations

import math
import re
from functools import lru_cache
from typing import NamedTuple, Sequence

from asmr_kernels.cpu import KeyFactExtractor

from .cjk import CJK_CLASS, CJK_COUNTED, fold_han
from .entities import COMMON_WORDS
from .relative_time import WEEKDAYS, ZH_WEEKDAYS

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
          r"元|人|个月|个小时|个星期|个|次|岁|年|月|天|小时|分钟|秒|米|公里|千米|厘米|毫米|克|千克|公斤|吨|倍|家|位|名|项|台|辆|件")
_AFTER = re.compile(
    rf"(?:\s?(?P<scale>thousand|million|billion|trillion|bn|百万|千万|万|亿|千)(?![A-Za-z])"
    rf"|(?P<short>[kKM])(?![A-Za-z]))?"
    rf"(?:[\s-]?(?P<unit>{_UNITS})(?![A-Za-z])|(?P<letter>[gmswvhcfx])(?![A-Za-z]))?",
    re.IGNORECASE)  # one-letter units only written against the number: "5m", "80g", "3x"; a unit after a
# hyphen is the number's too: "a 14-day supply" states 14 days
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
                         f"千克|公斤|天|日|周|年|秒|元|块钱|米|克|吨|倍|岁)")
_NOT_A_COUNT = frozenset("哪这那每同第某任唯统")
_ORDINAL_OR_DATE = frozenset("第月号")  # before a number of days: an ordinal (第二天) or a date (五月七日)
# what may follow the numeral after 米 for it to be a tenth ("一米五深"), not the next number ("一米五十厘米")
_CJK_NUMBER_GOES_ON = re.compile(f"[{_CJK_DIGITS}十百千万亿点个米厘分毫]")
# A number of counted things, in Chinese numerals before the measure word that counts them ("二十本",
# "十二人"), is a key fact too, a plain number whatever the measure word (十二名 and 十二位 say the same
# count); 一 before one is "a", not a count, and is left out.
_CJK_COUNT = re.compile(f"({_CJK_NUMERAL_RUN.pattern})[{''.join(sorted(CJK_COUNTED))}]")
_CJK_UNITS = {"月": "month", "星期": "week", "周": "week", "块钱": "cny", "岁": "year of age", "日": "day"}
# A time of day in Chinese numerals ("上午十点", "十点三十分"): its hour and its minutes are plain numbers,
# as the digits of "10点30分" are. 点 before a numeral without 分 is a decimal point ("评分三点五"), and 一点
# is "a little" ("快一点", "这一点") unless a part of the day comes before it ("中午一点").
_CJK_PM_PARTS = "下午|晚上|傍晚|夜里"  # parts of the day whose hours 1 to 11 are 13 to 23 (_other_clock_hours)
_CJK_DAY_PARTS = f"上午|早上|中午|凌晨|清晨|早晨|{_CJK_PM_PARTS}"
_CJK_CLOCK = re.compile(f"({_CJK_DAY_PARTS})?([{_CJK_DIGITS}十]{{1,3}})点钟?(?:([{_CJK_DIGITS}十]{{1,3}})分(?!钟))?")

# A day of the week: 周六, 星期天, 礼拜一, also in 上周五 and 每周三. Not a count of weeks (两周一次, 四周),
# nor a count within a week (每周三次, 每周五天, 每周三个小时), nor 本周天气 or 周日程.
_CJK_WEEKDAY = re.compile(f"(?<![{_CJK_DIGITS}十几数\\d])(?:(?:星期|礼拜)([一二三四五六日天])|周([一二三四五六]|日(?![程常记报志历])))"
                          f"(?![{''.join(sorted(CJK_COUNTED))}次回遍趟天小节课分十百千万])")
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
    rf"[{CJK_CLASS}]{{1,6}}?(?P<suffix>有限公司|公司|集团|大学|学院|银行|医院|研究院|研究所|委员会|政府|法院|协会|"
    rf"基金会|博物馆|中学|小学|省|市|县|镇|村|州|岛|山脉|河|江|湖)")
_CJK_LEAD = re.compile(r"^[在于位的是和与从到向被由对将把给为以及或及了而其这那该此各每]+")
# The words a name ends at on its left: the span before a suffix can run back over a verb and its
# preposition ("坐落于杭州市", "离开了公司"); the name starts after the last of these.
_CJK_INNER = re.compile(r"^.*(?:于|在|是|的|了|由|从)")
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


_DAY_OF_MONTH = re.compile(r"\s*([0-3]?\d)\s*[日号]")


def _month_day(text: str, run: str, after: re.Match) -> tuple[str, int] | None:
    """A month written "3月" (not "3个月"), and its day where one follows ("3月15日"), as a date of no stated
    year: its norm ("--03", "--03-15") and where it ends; None where the number is no month."""
    if not run.isdigit() or not 1 <= int(run) <= 12:
        return None
    norm, end = f"--{int(run):02d}", after.end()
    d = _DAY_OF_MONTH.match(text, end)
    if d is not None and 1 <= int(d.group(1)) <= 31:
        norm, end = f"{norm}-{int(d.group(1)):02d}", d.end()
    return norm, end


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
        if prev == "." or (prev == "-" and s > 1 and text[s - 2].isascii() and text[s - 2].isalpha()):
            continue  # ".5" of something, the "19" of "COVID-19" (not the "17" of "9:00-17:30")
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
                month_day = _month_day(text, run, after) if after.group("unit") == "月" else None
                if month_day is not None:
                    fact, span = Fact("date", text[s:month_day[1]], month_day[0]), (s, month_day[1])
                else:
                    norm, _ = _number_norm(run, after, cur)
                    fact, span = Fact("number", text[start:after.end()].strip(), norm), (start, after.end())
        out.append(fact)
        taken.append(span)
        end_taken = span[1]


_UNITS_ALIAS = {"dollar": "usd", "euro": "eur", "yuan": "cny", "rmb": "cny", "元": "cny", "pound": "lb",
                "lb": "lb", "lbs": "lb", "kilometer": "km", "kilometre": "km", "千米": "km", "公里": "km",
                "meter": "m", "metre": "m", "米": "m", "second": "s", "sec": "s", "minute": "min", "hour": "h",
                "hr": "h", "hrs": "h", "小时": "h", "个小时": "h", "个月": "month", "个星期": "week", "分钟": "min", "秒": "s", "day": "day", "天": "day",
                "year": "year", "年": "year", "month": "month", "月": "month", "week": "week", "克": "g",
                "千克": "kg", "公斤": "kg", "吨": "ton", "tonne": "ton", "倍": "times", "x": "times",
                "人": "people", "名": "people", "位": "people", "岁": "year of age", "person": "people",
                "time": "times", "°c": "c", "°f": "f", "degree": "deg"}


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
        name = _CJK_INNER.sub("", _CJK_LEAD.sub("", m.group(0)))
        if len(name) > len(m.group("suffix")):  # a suffix alone ("公司") names nothing
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
    _words(text, taken, out)
    weekdays: list[Fact] = []
    if not text.isascii():
        _cjk_words(text, taken, out)
        _cjk_weekdays(text, taken, weekdays)
    if _DIGITS.search(text):
        _numeric(text, taken, out)
    if _CJK_NUMERAL_RUN.search(text):
        _cjk_numbers(text, taken, out)
    out.extend(weekdays)  # entities, as an English "Saturday" is one
    _entities(text, taken, out)
    return tuple(out)


_NATIVE = KeyFactExtractor(sorted(_COMMON), Fact, KINDS)


@lru_cache(maxsize=4096)
def _key_facts(text: str) -> tuple[Fact, ...]:
    if text.isascii():  # most text: about ten times faster natively
        facts = _NATIVE(text)
        if facts is not None:
            return facts
    folded = fold_han(text)
    if folded == text:
        return _regex_key_facts(text)
    # Traditional characters read as Simplified ones (兩週 as 两周, 一萬 as 一万), which the patterns
    # know; each fact's text is given back as written (folding keeps every character's place), the
    # same folded text twice from its first and then its second place
    after: dict[str, int] = {}
    facts = []
    for f in _regex_key_facts(folded):
        i = folded.find(f.text, after.get(f.text, 0))
        if i >= 0:
            after[f.text] = i + 1
            f = f._replace(text=text[i:i + len(f.text)])
        facts.append(f)
    return tuple(facts)


def key_facts(text: str) -> list[Fact]:
    """The key facts of ``text``: codes, then numbers written in words, frequencies and unbounded
    durations, then dates, versions and numbers in text order, then entities.

    A span belongs to one fact: "2021-03-03" is a date, not three numbers; "ERR_42" is a
    code, not the number 42; "every 3 days" a frequency, not the 3 days. Results are cached
    per text (units are checked repeatedly).
    """
    if not isinstance(text, str):
        raise ValueError(f"key_facts: text must be a string, got {type(text).__name__}")
    return list(_key_facts(text))


def _word_numbers(text: str) -> set[str]:
    """Values written in words without a unit ("two million", "三十"), as number norms; with a unit
    ("four weeks", "三十天") they are key facts, whose unit counts."""
    out: set[str] = set()
    for m in _WORD_NUMBER.finditer(text):
        if _UNIT_AFTER.match(text, m.end()):
            continue
        v = _WORD_NUMBERS[m.group(1).lower()]
        if m.group(2):
            v += _WORD_NUMBERS[m.group(2).lower()]
        if m.group(3):
            v *= _SCALE[m.group(3).lower()]
        out.add(_fmt(v))
    for m in _CJK_NUMERAL_RUN.finditer(text):
        if _CJK_NUMBER.match(text, m.start()):
            continue
        value = _cjk_value(m.group(0))
        if value is not None:
            out.add(_fmt(value))
    return out


def _cjk_value(run: str) -> float | None:
    """The value of a run of Chinese numerals (cn2an), None where it is not one number ("十百")."""
    import cn2an  # here, not at the top: importing it takes most of a second, and most text has no such run

    try:
        return float(cn2an.cn2an(run, "smart"))
    except (ValueError, KeyError, IndexError):
        return None


def load_cjk_numerals() -> None:
    """Import now what reading the first Chinese numeral imports (cn2an: about a third of a second), for
    a server that warms up before its first answer."""
    _cjk_value("一")


def _cjk_numbers(text: str, taken: list[tuple[int, int]], out: list[Fact]) -> None:
    """Numbers in Chinese numerals with a unit ("三十天": 30 day), the hour and minutes of a time of day
    ("十点三十分": 10, 30) or before a measure word ("二十本": 20), in text order; a year written digit
    by digit ("二〇二三年") is a date."""
    found: list[tuple[int, Fact]] = []
    for m in _CJK_NUMBER.finditer(text):
        if taken and _overlaps(m.span(), taken):
            continue
        run, unit = (m.group(1), m.group(2)) if m.group(1) else (m.group(3), m.group(4))
        if run == "一" and m.start() and text[m.start() - 1] in _NOT_A_COUNT:
            continue  # "哪一年", "这一天": which, this, each; not one
        if unit == "月" and "个" not in m.group(0):
            continue  # "五月" is May
        before = text[m.start() - 1] if m.start() else ""
        if before and before in _ORDINAL_OR_DATE and (unit == "日" or before == "第"):
            continue  # "第二天", "第三年": the next day, the third year; "五月七日": a date's day
        value = _cjk_value(run)
        if value is None:
            continue
        end = m.end()
        if (unit == "米" and end < len(text) and text[end] in _CJK_DIGITS
                and not _CJK_NUMBER_GOES_ON.match(text, end + 1)):
            digit = _cjk_value(text[end])  # "一米五": 1.5 metres, as it is said
            if digit is not None:
                value, end = value + digit / 10, end + 1
        if unit == "年" and not any(c in run for c in "十百千万亿点") and len(run) == 4:
            fact = Fact("date", m.group(0), _fmt(value))
        else:
            unit = _CJK_UNITS.get(unit) or _unit_norm(_UNITS_ALIAS.get(unit, unit))
            fact = Fact("number", text[m.start():end], f"{_fmt(value)} {unit}")
        found.append((m.start(), fact))
        taken.append((m.start(), end))
    for m in _CJK_CLOCK.finditer(text):
        part, hour, minutes = m.groups()
        after = text[m.end():m.end() + 1]
        if (taken and _overlaps(m.span(), taken)) or (not minutes and after and after in _CJK_DIGITS + "十") \
                or (hour == "一" and not part) or (m.start() and text[m.start() - 1] in _NOT_A_COUNT):
            continue
        h = _cjk_value(hour)
        mins = _cjk_value(minutes) if minutes else None
        if h is None or not 0 <= h <= 24 or (minutes and (mins is None or not 0 <= mins < 60)):
            continue
        found.append((m.start(2), Fact("number", text[m.start(2):m.start(3) if minutes else m.end()], _fmt(h))))
        if minutes:
            found.append((m.start(3), Fact("number", text[m.start(3):m.end()], _fmt(mins))))
        taken.append((m.start(2), m.end()))
    for m in _CJK_COUNT.finditer(text):
        run = m.group(1)
        if run == "一" or (taken and _overlaps(m.span(), taken)) \
                or (m.start() and text[m.start() - 1] in _NOT_A_COUNT):
            continue  # "一本" (a book), "第二本" (the second), "这两本" (these two)
        value = _cjk_value(run)
        if value is not None:
            found.append((m.start(), Fact("number", m.group(0), _fmt(value))))
            taken.append(m.span())
    out.extend(fact for _, fact in sorted(found, key=lambda f: f[0]))


# ---- written in words: numbers with a unit, durations and frequencies -----------------------------------
# "fourteen days" (14 day), "half an hour" (0.5 h), "a fortnight" (2 week), "forever" (inf duration),
# "daily" / "every day" / "every night" / "once a day" (every 1 day), "twice a week" (every 0.5 week), "every
# 3 days" (every 3 day). Found before the digit runs, so "every 3 days" is one frequency, not the duration
# "3 days".
# Each pattern is matched whole, then a few checks keep the common idioms out ("one day he left",
# "daily life", "The Daily Telegraph", "60 km an hour"); a match a check refuses is skipped whole.
_SMALL = ("zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen "
          "sixteen seventeen eighteen nineteen").split()
_TENS = "twenty thirty forty fifty sixty seventy eighty ninety".split()
_WORD_VALUE = {w: float(i) for i, w in enumerate(_SMALL)} | {w: 20.0 + 10 * i for i, w in enumerate(_TENS)}
_WORD_SCALE = {"hundred": 100.0, "dozen": 12.0, "thousand": 1e3, "million": 1e6, "billion": 1e9}
_SMALL_RE = rf"(?:(?:{'|'.join(_TENS)})(?:[ -](?:{'|'.join(_SMALL[1:10])}))?|{'|'.join(_SMALL)})"
# Every optional part is greedy and no word of it is a unit, so the longest reading is the match.
_NUM_RE = (rf"(?:half(?:\s+an?)?|an?\s+half|(?:{_SMALL_RE}|an?)(?:\s+hundred(?:\s+(?:and\s+)?{_SMALL_RE})?)?"
           rf"(?:\s+dozen)?(?:\s+(?:thousand|million|billion))?(?:\s+and\s+a\s+half)?)")
_TIME_UNIT_RE = (r"(?:seconds?|secs?|minutes?|mins?|hours?|hrs?|days?|weeks?|fortnights?|months?|years?|decades?|"
                 r"centur(?:y|ies))")
_MEASURE_UNIT_RE = (r"(?:percent|per\s*cent|percentage\s+points?|pounds?|tons?|tonnes?|miles?|feet|inch(?:es)?|"
                    r"meters?|metres?|kilometers?|kilometres?|degrees?|dollars?|euros?|yuan|yen)")
_WORD_AMOUNT = re.compile(rf"(?<![\w-])({_NUM_RE})(?:\s+|-)({_TIME_UNIT_RE}|{_MEASURE_UNIT_RE})"
                          rf"(\s+and\s+a\s+half)?(?!\w)", re.IGNORECASE)
_FREQUENCY = re.compile(
    rf"(?<![\w-])(?:(once|twice|thrice|(?:{_SMALL_RE}|(?<![.,])\d+)\s+times)\s+)?"
    rf"(?:(every|each)\s+(?:(other|second)\s+(?={_TIME_UNIT_RE}(?![\w-]))|(\d+(?:\.\d+)?|{_NUM_RE})\s+)?"
    rf"({_TIME_UNIT_RE})|(an?|per)\s+({_TIME_UNIT_RE}|annum)|(daily|weekly|hourly|monthly|yearly|annually|"
    rf"fortnightly|nightly)|(?:every|each)\s+(night|morning|evening|afternoon))(?![\w-])", re.IGNORECASE)
_TIME_UNIT = re.compile(_TIME_UNIT_RE)
_UNIT_AFTER = re.compile(rf"(?:\s+|-)(?:{_TIME_UNIT_RE}|{_MEASURE_UNIT_RE})(?!\w)", re.IGNORECASE)
_UNBOUNDED = re.compile(r"(?<![\w-])(?:forever|for\s+ever|indefinitely|permanently|in\s+perpetuity|"
                        r"never\s+expire[sd]?)(?![\w-])", re.IGNORECASE)
# Every match of a pattern holds one of its words (as a run of letters); most sentences have none.
_TIME_WORDS = frozenset("""seconds second secs sec minutes minute mins min hours hour hrs hr days day weeks week
fortnights fortnight months month years year decades decade century centuries""".split())
# a part of the day, after "every" or "each", comes round once a day ("every night", "each morning")
_DAY_PARTS = frozenset(("night", "morning", "evening", "afternoon"))
_FREQUENCY_WORDS = _TIME_WORDS | _DAY_PARTS | {"annum", "daily", "weekly", "hourly", "monthly", "yearly",
                                               "annually", "fortnightly", "nightly"}
_UNBOUNDED_WORDS = frozenset("forever ever indefinitely permanently perpetuity expire expires expired".split())
_AMOUNT_WORDS = _TIME_WORDS | frozenset("""percent cent percentage pounds pound tons ton tonnes tonne miles mile feet
inches inch meters meter metres metre kilometers kilometer kilometres kilometre degrees degree dollars dollar euros
euro yuan yen""".split())
_ANCHOR_WORDS = _FREQUENCY_WORDS | _UNBOUNDED_WORDS | _AMOUNT_WORDS
# ... and in a match, the run of letters before that word is one of these ("every 3 days": every;
# "for ever": for), except for the words that stand alone.
_ALONE_WORDS = frozenset("daily weekly hourly monthly yearly annually fortnightly nightly forever "
                         "indefinitely permanently".split())
_BEFORE_UNIT = frozenset(_SMALL + _TENS + "hundred dozen thousand million billion half a an every each other second "
                                          "per".split())
_BEFORE_WORD = {"ever": {"for"}, "perpetuity": {"in"}, "expire": {"never"}, "expires": {"never"}, "expired": {"never"}}
_LOWER_LETTERS = re.compile(r"[a-z]+")
INF_DURATION = "inf duration"
_ADVERBS = {"daily": (1.0, "day"), "weekly": (1.0, "week"), "hourly": (1.0, "h"), "monthly": (1.0, "month"),
            "yearly": (1.0, "year"), "annually": (1.0, "year"), "fortnightly": (2.0, "week"),
            "nightly": (1.0, "day")}
_TIMES = {"once": 1.0, "twice": 2.0, "thrice": 3.0}
# An adverb is a frequency before these ("runs daily at 2am"); before other words it may name a thing
# ("daily life", "weekly magazine").
_ADVERB_NEXT = frozenset("""at in on from to and or but for until till since during with by except between before
after around via through throughout starting beginning as if when while unless including basis""".split())
# A quantity with one of these before "a day" / "per hour" is a rate of the quantity ("60 km an hour",
# "8 hours a day", "$5 per day"), whose value the number fact already holds.
_RATE_UNITS = frozenset("""percent cent points point kg mg lb lbs pound pounds ton tons tonne tonnes km cm mm mi mile
miles feet ft inch inches meter meters metre metres kilometer kilometers kilometre kilometres gb mb kb tb pb ghz mhz
hz kw mw kwh mah ms sec secs second seconds min mins minute minutes hr hrs hour hours day days week weeks month
months year years decade decades century centuries degree degrees dollar dollars usd eur euro euros rmb yuan yen
people person persons times""".split())
_ONE_DAY_OPENERS = frozenset("and but until till that then when so if".split())  # "until one day she left"
_ONE_DAY_SPANS = frozenset("later earlier after before ago".split())  # "one day later" is a duration
_COMPOUND_AFTER = ("-to-", "-by-", "-on-", "-round")  # "day-to-day", "year-round": not an amount


def _time_unit(word: str) -> tuple[float, str]:
    """A time unit's norm and how many of it the word is ("fortnight": 2 weeks)."""
    w = word.lower()
    if w.startswith("fortnight"):
        return 2.0, "week"
    if w == "annum":
        return 1.0, "year"
    u = _unit_norm(w)
    return 1.0, _UNITS_ALIAS.get(u, u)


def _words_value(words: str) -> float:
    """The value of a number in words as _NUM_RE reads it: "a hundred and twenty" 120, "half an" 0.5."""
    toks = [t for t in re.split(r"[\s-]+", words.lower()) if t]
    if toks[0] == "half" or (len(toks) > 1 and toks[1] == "half" and toks[0] in ("a", "an")):
        return 0.5
    half = toks[-3:] == ["and", "a", "half"]
    if half:
        toks = toks[:-3]
    value = 0.0
    for t in toks:
        if t in _WORD_VALUE:
            value += _WORD_VALUE[t]
        elif t in ("a", "an"):
            value += 1.0
        elif t in _WORD_SCALE:
            value *= _WORD_SCALE[t]
    return value + 0.5 if half else value


def _ascii_letter(c: str) -> bool:
    return "a" <= c <= "z" or "A" <= c <= "Z"


def _word_before(text: str, s: int) -> str:
    """The run of letters (lower case), or the one character, just before ``s`` (blanks skipped)."""
    i = s
    while i > 0 and text[i - 1].isspace():
        i -= 1
    j = i
    while j > 0 and _ascii_letter(text[j - 1]):
        j -= 1
    return text[j:i].lower() if j < i else text[i - 1:i]


def _word_after(text: str, e: int) -> tuple[str, bool]:
    """The run of letters, or the one character, just after ``e``, and whether blanks came first."""
    i = e
    while i < len(text) and text[i].isspace():
        i += 1
    j = i
    while j < len(text) and _ascii_letter(text[j]):
        j += 1
    return (text[i:j] if j > i else text[i:i + 1]), i > e


def _is_rate(text: str, s: int) -> bool:
    before = _word_before(text, s)
    return before != "" and (before in _RATE_UNITS or before in "0123456789%$€£¥")


_LETTERS = re.compile(r"[A-Za-z]+")


def _named(text: str, s: int, e: int) -> bool:
    """Whether the span reads as part of a name: a capital past its first letter ("Every Day"), or a
    capital where no sentence opens ("the Daily Telegraph"), or one before another ("Forever Young")."""
    words = _LETTERS.findall(text, s, e)
    if any(w[0].isupper() for w in words[1:]):
        return True
    if not text[s].isupper():
        return False
    nxt, _ = _word_after(text, e)
    return not _opens_sentence(text, s) or (nxt[:1].isupper() and nxt != "I")


def _anchor_words(text: str) -> set[str]:
    """The anchor words of ``text`` that may be part of a match (see _ALONE_WORDS)."""
    runs = _LOWER_LETTERS.findall(text.lower())
    if _ANCHOR_WORDS.isdisjoint(runs):
        return set()
    return {w for i, w in enumerate(runs) if w in _ANCHOR_WORDS and (
        w in _ALONE_WORDS or (i and runs[i - 1] in _BEFORE_WORD.get(w, _BEFORE_UNIT)))}


def _words(text: str, taken: list[tuple[int, int]], out: list[Fact]) -> None:
    """Frequencies, unbounded durations and amounts written in words (the patterns above)."""
    words = _anchor_words(text)
    if not words:
        return
    for m in _FREQUENCY.finditer(text) if not _FREQUENCY_WORDS.isdisjoint(words) else ():
        s, e = m.span()
        if (taken and _overlaps((s, e), taken)) or _named(text, s, e):
            continue
        times, other, count, unit, per, per_unit, adverb, day_part = m.group(1, 3, 4, 5, 6, 7, 8, 9)
        if per and not times and (per.lower() != "per" or _is_rate(text, s)):
            continue  # "a day" alone is a duration (below); "60 km per hour" a rate of the 60 km
        if adverb and not times:
            nxt, spaced = _word_after(text, e)
            if not (nxt == "" or nxt in ".,;:!?)]\"'" or (spaced and nxt.lower() in _ADVERB_NEXT)):
                continue  # "daily life", "weekly magazine"
        k = 1.0
        if times:
            t = times.lower()
            k = _TIMES[t] if t in _TIMES else (float(t.split()[0]) if t[0].isdigit() else
                                               _words_value(t.rsplit(None, 1)[0]))
            if k == 0:
                continue  # "zero times a day"
        if adverb:
            n, u = _ADVERBS[adverb.lower()]
        elif day_part:
            n, u = 1.0, "day"
        else:
            factor, u = _time_unit(unit or per_unit)
            n = 2.0 if other else (float(count) if count and count[0].isdigit() else
                                   _words_value(count) if count else 1.0)
            n *= factor
        out.append(Fact("number", m.group(0), f"every {_fmt(n / k)} {u}"))
        taken.append((s, e))
    for m in _UNBOUNDED.finditer(text) if not _UNBOUNDED_WORDS.isdisjoint(words) else ():
        s, e = m.span()
        if not (taken and _overlaps((s, e), taken)) and not _named(text, s, e):
            out.append(Fact("number", m.group(0), INF_DURATION))
            taken.append((s, e))
    for m in _WORD_AMOUNT.finditer(text) if not _AMOUNT_WORDS.isdisjoint(words) else ():
        s, e = m.span()
        if (taken and _overlaps((s, e), taken)) or _named(text, s, e):
            continue
        num, unit, half = m.group(1, 2, 3)
        n, u = num.lower(), unit.lower()
        article = n in ("a", "an")
        time = _TIME_UNIT.fullmatch(u) is not None
        if article and (not time or u in ("second", "sec") or _is_rate(text, s)):
            continue  # "a kg", "a second time", "$5 a day"
        value = _words_value(num)
        if u in ("second", "sec") and value != 1:
            continue  # "the twenty-second day"
        if n == "one" and u == "day" and not half:
            nxt, _ = _word_after(text, e)
            before = _word_before(text, s)
            if nxt.lower() not in _ONE_DAY_SPANS and (
                    before == "" or before in ".!?,;:(\"\n" or before in _ONE_DAY_OPENERS):
                continue  # "One day, he left"; "until one day"
        if text[e:e + 6].lower().startswith(_COMPOUND_AFTER):
            continue
        if half:
            value += 0.5
        if time:
            factor, u = _time_unit(u)
            value *= factor
        else:
            u = _unit_norm(u)
            u = _UNITS_ALIAS.get(u, u)
        out.append(Fact("number", m.group(0), f"{_fmt(value)} {u}"))
        taken.append((s, e))


# Chinese: "每天" (every 1 day), "每隔三天" (every 3 day), "每天两次" (every 0.5 day), "半小时" (0.5 h),
# "一个半月" (1.5 month), "两年半" (2.5 year), "永久" (inf duration). Not "半天" (also "a long while"),
# "半月" without 个, nor "上半年" (the first half of a year).
_CJK_TIME = {"天": "day", "日": "day", "周": "week", "星期": "week", "礼拜": "week", "月": "month", "年": "year",
             "小时": "h", "钟头": "h", "分钟": "min", "秒": "s"}
_CJK_NUM = rf"(?:{_CJK_NUMERAL_RUN.pattern}|\d+(?:\.\d+)?)"
_CJK_FREQUENCY = re.compile(rf"每(?:隔)?\s*(?:({_CJK_NUM})|(半))?\s*个?\s*(天|日|周|星期|礼拜|月|年|小时|钟头|分钟|秒)"
                            rf"(?:\s*({_CJK_NUM})\s*次)?")
_CJK_HALF = re.compile(rf"(?<![上下])(?:({_CJK_NUM})\s*(个)?)?半(个)?(小时|钟头|月|年)|"
                       rf"({_CJK_NUM})\s*(年|天|周|星期|个月|个小时|小时)半")
_CJK_UNBOUNDED = re.compile("永久|永远|无限期")


def _cjk_count(run: str) -> float | None:
    return float(run) if run[0].isdigit() else _cjk_value(run)


def _cjk_words(text: str, taken: list[tuple[int, int]], out: list[Fact]) -> None:
    """The Chinese frequencies, halves and unbounded durations above."""
    if "每" in text:
        for m in _CJK_FREQUENCY.finditer(text):
            count, half, unit, times = m.groups()
            n = 0.5 if half else _cjk_count(count) if count else 1.0
            k = _cjk_count(times) if times else 1.0
            if n is None or not k or (taken and _overlaps(m.span(), taken)):
                continue
            out.append(Fact("number", m.group(0), f"every {_fmt(n / k)} {_CJK_TIME[unit]}"))
            taken.append(m.span())
    if "半" in text:
        for m in _CJK_HALF.finditer(text):
            run, ge, ge2, unit, run2, unit2 = m.groups()
            if unit == "月" and not (ge or ge2) or (taken and _overlaps(m.span(), taken)):
                continue  # "半月" alone: also "半月板", "半月刊"
            value = _cjk_count(run or run2) if (run or run2) else 0.0
            if value is None:
                continue
            u = unit or unit2.lstrip("个")
            out.append(Fact("number", m.group(0), f"{_fmt(value + 0.5)} {_CJK_TIME[u]}"))
            taken.append(m.span())
    for m in _CJK_UNBOUNDED.finditer(text) if "永" in text or "无限期" in text else ():
        if not (taken and _overlaps(m.span(), taken)):
            out.append(Fact("number", m.group(0), INF_DURATION))
            taken.append(m.span())


def _cjk_weekdays(text: str, taken: list[tuple[int, int]], out: list[Fact]) -> None:
    """Days of the week (周六, 星期天) as entities named in English ("saturday"), so that 周六 states 星期六
    and an English "Saturday"; read before the numbers, so that 周三 holds no number 三. A day already
    read within a frequency counts too: 每周三 is every week, and on Wednesdays."""
    if "周" not in text and "星期" not in text and "礼拜" not in text:
        return
    seen: set[str] = set()
    for m in _CJK_WEEKDAY.finditer(text):
        norm = WEEKDAYS[ZH_WEEKDAYS[(m.group(1) or m.group(2))[0]]]
        taken.append(m.span())
        if norm not in seen:
            seen.add(norm)
            out.append(Fact("entity", m.group(0), norm))


_SECONDS = {"s": 1.0, "min": 60.0, "h": 3600.0, "day": 86400.0, "week": 604800.0}
# Calendar units in months: a year is always twelve of them, but a month is not always 30 days, so
# the two families are never converted into each other.
_MONTHS_IN = {"month": 1.0, "year": 12.0, "decade": 120.0, "century": 1200.0}
_CALENDAR = tuple(_MONTHS_IN)


def time_span(value: float, unit: str) -> tuple[str, float] | None:
    """A span of time in its family's base unit: seconds for "2 week", "14 day" and "336 h", months for
    "1 year" and "12 month" (the two families are never converted into each other); None for a unit
    that is not of time."""
    if unit in _SECONDS:
        return "s", value * _SECONDS[unit]
    return ("month", value * _MONTHS_IN[unit]) if unit in _MONTHS_IN else None


def _time_key(value: float, unit: str) -> tuple[str, str] | None:
    """A span of time comparable across units (:func:`time_span`) as a key: "2 week" and "14 day" share
    one."""
    span = time_span(value, unit)
    return (span[0], f"{span[1]:.6g}") if span else None


def _frequency_key(norm: str) -> tuple[str, str] | None:
    """The period of a frequency norm ("every 0.5 day") as a time key."""
    n, _, unit = norm[6:].partition(" ")
    return _time_key(float(n), unit)


# How evidence may state a frequency beyond what key_facts reads in a claim: adjectives ("daily
# backups"), "a day" after any noun ("per calendar month" too), "/day", and "seven days a week" (daily).
_LOOSE_RATE = re.compile(
    r"(?:(?<![a-z])(?:(daily|nightly|weekly|fortnightly|hourly|monthly|yearly|annually|annual)|(?:an?|per|each|every)"
    r"\s+(?:calendar\s+)?(second|minute|hour|day|week|fortnight|month|year|annum))|"
    r"/(sec|s|min|hr|h|day|d|week|wk|month|yr|year)|"
    r"(?:seven|7)\s+(day|night)s\s+(?:a|per|each|every)\s+week)(?![a-z])")
_LOOSE_UNITS = {"daily": "day", "nightly": "day", "weekly": "week", "fortnightly": "fortnight", "hourly": "h",
                "monthly": "month", "yearly": "year", "annually": "year", "annual": "year", "d": "day",
                "wk": "week", "yr": "year", "hr": "h", "night": "day"}


# How Chinese evidence states a frequency beyond 每: an interval ("行车间隔为8分钟": every 8 minutes) and a
# fee, rent, pay or rate of a period ("月功能费", "日利率": monthly, daily); not after a numeral (三日), 每, or
# the words a day names (节日, 生日, 假日, 工作日).
_CJK_LOOSE_RATE = re.compile(
    rf"间隔(?:为|是)?\s*({_CJK_NUM})\s*个?\s*(天|日|周|星期|月|年|小时|分钟|秒)|"
    rf"(?<![{_CJK_DIGITS}十百千\d每节生假作次当])(日|月|年|周)(?:利率|利息|功能费|服务费|管理费|租金|费|租|薪)")
# A span of hours and minutes: "1小时10分钟", "1 hour 10 minutes", "2 hrs and 5 mins"
_HOURS_AND_MINUTES = re.compile(
    rf"({_CJK_NUM})\s*(?:个\s*)?(?:小时|钟头|hours?|hrs?)\s*(?:and\s+)?({_CJK_NUM})\s*"
    rf"(?:分钟|分(?!之)|minutes?|mins?)(?![a-z])",
    re.IGNORECASE)
# Times of day on the hour in words ("noon", "midnight", "two o'clock") and a Chinese hour in digits ("3点",
# not "3点半" or "3点30分")
_HOUR_WORDS = re.compile(r"\b(?:noon|midday|midnight|o['’]clock)\b|(?<![\d:.])\d{1,2}点(?![\d半分])",
                         re.IGNORECASE)


class _EvidenceFacts:
    """What an evidence text states, indexed for the checks of missing_facts. The values written in
    words and the evidence's words are read on first use: most checks end before either is needed."""

    __slots__ = ("norms", "_units", "_worded", "dates", "_words", "lower", "durations", "_rates", "_frequencies",
                 "_text", "_on_the_hour", "_spans")

    def __init__(self, evidence: str):
        facts = _key_facts(evidence)
        self._text = evidence
        self.norms = {f.norm for f in facts}
        # value -> the units it is stated with ("" for none), of numbers and versions (word numbers
        # are added on first use of ``units``)
        self._units: dict[str, set[str]] = {}
        self._worded = False
        self._words: set[str] | None = None
        self.durations: set[tuple[str, str]] = set()  # spans of time, by _time_key
        self._frequencies: list[str] = []
        self._rates: set[tuple[str, str]] | None = None
        for f in facts:
            if f.kind == "number" and f.norm.startswith("every "):
                self._frequencies.append(f.norm)
                self.durations.add(_frequency_key(f.norm))  # "every 3 days" states 3 days too
            elif f.kind in ("number", "version") and f.norm != INF_DURATION:
                value, _, unit = f.norm.partition(" ")
                self._units.setdefault(value, set()).add(unit)
                if unit in _SECONDS or unit in _CALENDAR:
                    self.durations.add(_time_key(float(value), unit))
        self.dates = [f.norm for f in facts if f.kind == "date"]
        self.lower = evidence.lower()
        for hour in _other_clock_hours(evidence):  # "6 p.m." states the 18 of "18:00", and the other way
            self._units.setdefault(hour, set()).add("")
        self._spans: set[tuple[str, str]] | None = None
        self._on_the_hour: bool | None = None

    @property
    def spans(self) -> set[tuple[str, str]]:
        """Spans of time stated as hours and minutes ("1小时10分钟" states 70 minutes), read on first use."""
        if self._spans is None:
            self._spans = set()
            for m in _HOURS_AND_MINUTES.finditer(self._text):
                hours, minutes = _cjk_count(m.group(1)), _cjk_count(m.group(2))
                if hours is not None and minutes is not None:
                    self._spans.add(_time_key(hours * 60 + minutes, "min"))
        return self._spans

    @property
    def on_the_hour(self) -> bool:
        """Whether the evidence gives a time of day on the hour ("2 p.m.", 下午两点, "noon")."""
        if self._on_the_hour is None:
            self._on_the_hour = _on_the_hour(self._text)
        return self._on_the_hour

    @property
    def units(self) -> dict[str, set[str]]:
        """Value -> the units it is stated with ("" for none), of numbers, versions and word numbers."""
        if not self._worded:
            for value in _word_numbers(self._text):
                self._units.setdefault(value, set()).add("")
            self._worded = True
        return self._units

    @property
    def words(self) -> set[str]:
        """The evidence's words, as entity norms split them."""
        if self._words is None:
            self._words = set(_entity_norm(self._text).split())
        return self._words

    def rates(self) -> set[tuple[str, str]]:
        """The periods of the frequencies the evidence states, read loosely (on first use)."""
        if self._rates is None:
            self._rates = {_frequency_key(n) for n in self._frequencies}
            for m in _LOOSE_RATE.finditer(self.lower):
                word = next(g for g in m.groups() if g)
                factor, unit = _time_unit(_LOOSE_UNITS.get(word, word))
                self._rates.add(_time_key(factor, unit))
            if not self._text.isascii():
                for m in _CJK_LOOSE_RATE.finditer(self._text):
                    count = _cjk_count(m.group(1)) if m.group(1) else 1.0
                    unit = _CJK_TIME[m.group(2) or m.group(3)]
                    if count is not None:
                        self._rates.add(_time_key(count, unit))
        return self._rates


# A time of day on a 12-hour clock ("6 p.m.", "6:30pm", 下午3点, 晚上八点) and on a 24-hour one ("18:00"): the
# hour is a number fact as written, and the evidence also states it on the other clock.
_CLOCK_12 = re.compile(r"(?<![0-9A-Za-z.:])(\d{1,2})(?::[0-5]\d)?\s?([ap])\.?\s?m(?:\.|(?![a-z]))",
                       re.IGNORECASE)
_CLOCK_24 = re.compile(r"(?<![0-9A-Za-z.:])(\d{1,2}):[0-5]\d(?![\d:])")
_CJK_CLOCK_PM = re.compile(f"({_CJK_PM_PARTS})(\\d{{1,2}}|[{_CJK_DIGITS}十]{{1,3}})[点:：]")


def _on_the_hour(text: str) -> bool:
    """Whether ``text`` gives a time of day on the hour: a 12-hour time without minutes ("2 p.m."), a
    Chinese one without 分 or 半 (下午两点, 3点; not 两点半, nor 一点 alone, "a little"), "noon", "two o'clock"."""
    if _HOUR_WORDS.search(text) or any(":" not in m.group(0) for m in _CLOCK_12.finditer(text)):
        return True
    for m in _CJK_CLOCK.finditer(text):
        part, hour, minutes = m.groups()
        after = text[m.end():m.end() + 1]
        if not minutes and (part or hour != "一") and after not in (*_CJK_DIGITS, "十", "半"):
            return True
    return False


def _other_clock_hours(text: str) -> set[str]:
    """The hours of the times of day ``text`` states, each read on the other clock: 18 for "6 p.m." and
    for 下午六点, 6 for "18:00"; 0 for "12 a.m.". Not the minutes: "18:00" for "6 p.m." is not stated by the
    hour alone, as the "00" of "8:00" is no time of "12 pm"."""
    out: set[str] = set()
    for m in _CLOCK_12.finditer(text):
        hour = int(m.group(1))
        if hour <= 12:
            pm = m.group(2).lower() == "p"
            out.add(_fmt(hour + 12 if pm and hour < 12 else 0 if not pm and hour == 12 else hour))
    for m in _CLOCK_24.finditer(text):
        hour = int(m.group(1))
        if 13 <= hour <= 23:
            out.add(_fmt(hour - 12))
    for m in _CJK_CLOCK_PM.finditer(text):
        hour = int(m.group(2)) if m.group(2).isdigit() else _cjk_value(m.group(2))
        if hour is not None and 1 <= hour < 12:
            out.add(_fmt(hour + 12))
    return out


@lru_cache(maxsize=2048)
def _evidence(evidence: str) -> _EvidenceFacts:
    return _EvidenceFacts(fold_han(evidence))  # as the claim's facts were read (_key_facts)


def _month_and_day(date: str) -> str:
    """The month and day of a date norm, as "-03-15" (of "2024-03-15" and "--03-15"); "" of a year alone."""
    return date[1:] if date.startswith("--") else date[4:]


def _present(f: Fact, ev: _EvidenceFacts) -> bool:
    if f.norm in ev.norms:
        return True
    if f.kind == "number":
        if f.norm == INF_DURATION:
            return False  # "forever" only as "forever", "permanently", "永久"...
        if f.norm.startswith("every "):
            return _frequency_key(f.norm) in ev.rates()
        value, _, unit = f.norm.partition(" ")
        if unit in _SECONDS or unit in _CALENDAR:
            key = _time_key(float(value), unit)
            if key in ev.durations or key in ev.spans:
                return True  # "two weeks" is "14 days", "70 minutes" "1 hour 10 minutes"
        units = ev.units.get(value)
        if units is not None:
            # the value is stated; a unit conflicts when the evidence gives it only other ones, and a
            # bare mention ("一直", "one of") does not excuse a unit the evidence puts with it elsewhere
            # ("一小时" where the evidence says "一年")
            return not unit or unit in units or units == {""}
        if value in ev.dates:  # "in 2021" counted as a plain number
            return True
        if f.text == "00":  # the minutes of "14:00": a time on the hour states them (下午两点, "2 p.m.")
            return ev.on_the_hour
        # the day of a date ("March 15" for "15 March 2024")
        return not unit and value.isdigit() and any(_month_and_day(d).endswith(f"-{int(value):02d}")
                                                     for d in ev.dates)
    if f.kind == "date":
        if f.norm.startswith("--"):  # a month, or a day of it, of no stated year ("3月15日")
            return any(_month_and_day(d).startswith(f.norm[1:]) for d in ev.dates)
        return any(d.startswith(f.norm) for d in ev.dates) or f.norm in ev.units
    if f.kind == "version":
        return f.norm in ev.units or f.norm in ev.lower
    if f.kind == "code":
        return f.norm.lower() in re.sub(r"[-_]", "", ev.lower)
    # entity: partial token containment
    if f.norm in ev.lower:
        return True
    if f.norm[-1] == "s" and f.norm[-2:] != "ss" and " " not in f.norm and len(f.norm) > 3:
        one = f.norm[:-1]  # a plural's one ("Saturdays" is stated by "Saturday" and by 周六, "Smiths" by "Smith")
        if one in ev.norms or one in ev.lower:
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

    A number counts as stated when the evidence has the same value with the same unit, or with no
    unit and no other one anywhere (also written in words: "four weeks"), or the same span of time
    in another unit ("two weeks" in "14 days", "a year" in "12 months"; never days in months); a
    frequency when the evidence gives the same period in any form ("every day" in "daily backups",
    "per day", "/day"); "forever" only when the evidence says
    so too; a date when the evidence has a date at least as precise that agrees ("March 2021"
    is in "March 3, 2021", not the other way round); an entity when its text occurs in the
    evidence or at least half of its words do, and a one-word plural when its singular does
    ("Saturdays" in "every Saturday" or 周六).
    """
    return list(_missing_facts(claim, evidence))


# The verifier asks for a pair's missing facts after its support check has asked (one reading serves both).
@lru_cache(maxsize=1024)
def _missing_facts(claim: str, evidence: str) -> tuple[Fact, ...]:
    return tuple(missing_from(_key_facts(claim), evidence))


def clear_caches() -> None:
    """Forget the facts remembered per text (for benchmarks that time the checks from cold)."""
    for cached in (_key_facts, _evidence, _missing_facts):
        cached.cache_clear()


# ---- one word: the unit it measures in -------------------------------------------------------------
# Abbreviations of _UNITS that are units only: "people" and "times" count things, "min" and "ms" are
# the only short time units common enough to keep.
_SHORT_UNITS = frozenset("kg mg lb lbs km cm mm mi ft gb mb kb tb pb ghz mhz hz kw mw kwh mah ms".split())
_PER_WORD = {"daily": "day", "nightly": "day", "weekly": "week", "hourly": "h", "monthly": "month",
             "yearly": "year", "annually": "year", "annual": "year", "fortnightly": "fortnight",
             "biweekly": "fortnight",
             "quarterly": "quarter", "percentage": "%", "percent": "%", "cent": "%"}
_CJK_MEASURE = {"天": "day", "日": "day", "周": "week", "星期": "week", "小时": "h",
                "分钟": "min", "秒": "s", "月": "month", "年": "year", "公里": "km", "千米": "km",
                "米": "m", "克": "g", "千克": "kg", "公斤": "kg", "吨": "ton"}


@lru_cache(maxsize=4096)
def measure_of(word: str) -> str | None:
    """The unit of time or measure one word names, normalised as in a fact's ``norm``: "weeks", "week",
    "weekly" → ``week``; "GB" → ``gb``; "percent" → ``%``; "小时" → ``h``; None for any other word.

    For comparing the words that stand in the same place in two texts: "a weekly window" and "a monthly
    window" name different periods, whether or not a number goes with them."""
    w = word.lower()
    if w in _CJK_MEASURE:
        return _CJK_MEASURE[w]
    if w in _PER_WORD:
        return _PER_WORD[w]
    if w in _SHORT_UNITS:
        return _UNITS_ALIAS.get(w, w)
    if w not in _AMOUNT_WORDS:
        return None
    one = "century" if w == "centuries" else w[:-2] if w.endswith("ches") else w.removesuffix("s")
    return _UNITS_ALIAS.get(one, "ft" if one == "feet" else one)


def number_word(word: str) -> bool:
    """Whether one lower-case word is a number, in digits or in words ("14", "fourteen", "dozen")."""
    return word in _NUMBER_WORDS or (not word.isalpha() and any(c.isdigit() for c in word))


_NUMBER_WORDS = frozenset(_WORD_NUMBERS).union(_WORD_VALUE, _WORD_SCALE)  # the tables are not changed later


def time_word(word: str) -> bool:
    """Whether one lower-case word names a unit of time ("hours", "day", "fortnight")."""
    return word in _TIME_WORDS


# Bounds on an amount, each read as one word of its direction: "up to 5 GB", "no more than 5 GB" and
# "5 GB at most" alike, "at least", "or more" and "more than" the other way. "at least", "no more than"
# and their like are bounds wherever they stand; a phrase that is also plain words ("up to date", "more
# than his brother", "over the years") only before an amount, and one after an amount ("or more") only
# there.
LOWER_BOUND, UPPER_BOUND = "atleast", "atmost"
_BOUNDS = {tuple(k.split()): v for k, v in (
    ("at least", LOWER_BOUND), ("no less than", LOWER_BOUND), ("not less than", LOWER_BOUND),
    ("no fewer than", LOWER_BOUND), ("not fewer than", LOWER_BOUND), ("a minimum of", LOWER_BOUND),
    ("minimum of", LOWER_BOUND), ("at most", UPPER_BOUND), ("no more than", UPPER_BOUND),
    ("not more than", UPPER_BOUND), ("a maximum of", UPPER_BOUND), ("maximum of", UPPER_BOUND),
    ("not exceeding", UPPER_BOUND))}
_BOUNDS_BEFORE = {tuple(k.split()): v for k, v in (
    ("more than", LOWER_BOUND), ("over", LOWER_BOUND), ("above", LOWER_BOUND), ("older than", LOWER_BOUND),
    ("up to", UPPER_BOUND), ("less than", UPPER_BOUND), ("fewer than", UPPER_BOUND), ("under", UPPER_BOUND),
    ("below", UPPER_BOUND), ("younger than", UPPER_BOUND), ("as far as", UPPER_BOUND),
    ("as much as", UPPER_BOUND))}
_BOUNDS_AFTER = {tuple(k.split()): v for k, v in (
    ("or more", LOWER_BOUND), ("or above", LOWER_BOUND), ("or over", LOWER_BOUND), ("and above", LOWER_BOUND),
    ("and over", LOWER_BOUND), ("or less", UPPER_BOUND), ("or fewer", UPPER_BOUND), ("or below", UPPER_BOUND),
    ("or under", UPPER_BOUND), ("and below", UPPER_BOUND), ("and under", UPPER_BOUND))}
_AMOUNT_OPENERS = frozenset("a an half several few some many dozens hundreds thousands millions".split())
_BOUND_LENGTHS = (3, 2, 1)  # the longest phrase first: "no more than" before "more than"
_BOUND_FIRST = frozenset(k[0] for k in (*_BOUNDS, *_BOUNDS_BEFORE, *_BOUNDS_AFTER))
# a word each phrase holds and few other texts do ("and", "a", "not" open phrases, and most sentences)
_BOUND_WORDS = frozenset("least most less fewer more minimum maximum exceeding over above older up under below "
                         "younger far much".split())


def _bound_at(words: list[str], i: int) -> tuple[str, int] | None:
    """The bound that opens at ``words[i]`` and its length in words, if one does."""
    for k in _BOUND_LENGTHS:
        phrase = tuple(words[i:i + k])
        if len(phrase) < k:
            continue
        if phrase in _BOUNDS:
            return _BOUNDS[phrase], k
        nxt = words[i + k] if i + k < len(words) else ""
        if phrase in _BOUNDS_BEFORE and (number_word(nxt) or nxt in _AMOUNT_OPENERS):
            return _BOUNDS_BEFORE[phrase], k
        if phrase in _BOUNDS_AFTER and any(number_word(w) for w in words[max(0, i - 2):i]):
            return _BOUNDS_AFTER[phrase], k
    return None


def bounded(words: list[str]) -> list[str]:
    """Lower-case ``words`` with each bound on an amount (above) put as one word, ``LOWER_BOUND`` or
    ``UPPER_BOUND``; the other words as they are."""
    if _BOUND_WORDS.isdisjoint(words):
        return words
    out: list[str] = []
    i = 0
    while i < len(words):
        found = _bound_at(words, i) if words[i] in _BOUND_FIRST else None
        if found is None:
            out.append(words[i])
            i += 1
        else:
            out.append(found[0])
            i += found[1]
    return out


NUMERAL_CHARS = frozenset("0123456789." + _CJK_DIGITS + "十百千万亿")


def numeral_value(run: str) -> float | None:
    """The value of a run of digits ("1212", "3.5") or of Chinese numerals ("三十"), else None."""
    if not run or not NUMERAL_CHARS.issuperset(run):
        return None
    if run.replace(".", "").isdigit():
        try:
            return float(run)
        except ValueError:
            return None
    return _cjk_value(run) if not any(c.isdigit() for c in run) else None


def number_value(word: str) -> float | None:
    """The value of one lower-case word that is a number ("14", "1,200", "fourteen", "a"), else None."""
    if word in ("a", "an"):
        return 1.0
    value = _WORD_NUMBERS.get(word, _WORD_VALUE.get(word, _WORD_SCALE.get(word)))
    if value is not None:
        return float(value)
    try:
        return float(word.replace(",", ""))
    except ValueError:
        return None
