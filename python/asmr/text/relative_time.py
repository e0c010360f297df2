"""Relative time in a text, made absolute: "yesterday", "last week", "two years ago", 昨天, 上周五.

``resolve(text, reference)`` finds the relative expressions of ``text`` and gives each the day or
range of days it means when said on ``reference`` (a chat turn's session date, a document's
effective date). What is recognised, in English and Chinese:

- days: today, tonight, yesterday, last night, the day before yesterday, tomorrow, the day after
  tomorrow; 今天, 今晚, 昨天, 昨晚, 前天, 大前天, 明天, 后天;
- calendar periods: last / this / next week, weekend, month, year; 上周, 本周, 下周 (also
  星期 and 礼拜), 上个月, 这个月, 下个月, 去年, 前年, 今年, 明年, 后年;
- weekdays: "this Friday" (the Friday of the reference's week), "last Friday" (the latest Friday
  before the reference day: 7 days back when said on a Friday), "next Friday" (the first one
  after it); 上周五, 这周五, 下周五 (the Friday of the previous, same or next calendar week);
- counts: "3 days ago", "two weeks ago", "a year ago", "in 2 days", "in a month", "5 years from
  now"; 三天前, 两周前, 两个月前, 两年前, 三天后, 两年后.

Weeks start on Monday. A count of weeks, months or years names the whole week, month or year it
lands in ("two years ago" on 2023-05-08 is 2021), because that is as precise as the words are.
Vague expressions ("recently", "a few days ago", "the other day") and bare weekdays ("on Friday",
周五: past or future?) are left alone, and so are two that name no day of the calendar: a period
after "the" ("carries over to *the next year*", "in *the last week*": counted from an event the
sentence names, or a stretch of days back) and a rate ("three late cancellations *in a month*",
"twice in a year": a count per period, where a lone "in a month" would be a month from now). So is
a period or weekday in a sentence that states a routine ("the rota for *next week* is posted every
Friday", "on the *last Friday* of each month", 下周的排班表每周五贴出: counted from each time the
routine comes round), and a day after a month (每月25日前, 2月28日之前: the 25th, 28 February, not
a count of days).
Regular expressions only: deterministic and cheap enough to run on every turn at ingest.
"""
from __future__ import annotations

import calendar
import re
from datetime import date, datetime, timedelta
from typing import Callable, NamedTuple

UNITS = ("day", "week", "month", "year")


class ResolvedTime(NamedTuple):
    span: tuple[int, int]  # where the expression is in the text: text[span[0]:span[1]]
    start: date  # first day meant
    end: date  # last day meant (inclusive); == start for a single day
    text: str  # the expression as written
    unit: str  # one of UNITS: how precise the expression is

    @property
    def label(self) -> str:
        """The absolute form: ``2023-05-07``, ``2023-04-24 to 2023-04-30``, ``2023-04`` or ``2022``."""
        if self.unit == "year":
            return f"{self.start.year:04d}"
        if self.unit == "month":
            return f"{self.start.year:04d}-{self.start.month:02d}"
        if self.start == self.end:
            return self.start.isoformat()
        return f"{self.start.isoformat()} to {self.end.isoformat()}"


def resolve(text: str, reference: date | datetime) -> list[ResolvedTime]:
    """The relative time expressions of ``text``, in order, resolved against the day ``reference``.

    Where two expressions overlap ("the day before yesterday", "yesterday"), the longer wins.
    """
    if not isinstance(text, str):
        raise TypeError(f"text must be a str, not {type(text).__name__}")
    if isinstance(reference, datetime):
        reference = reference.date()
    elif not isinstance(reference, date):
        raise TypeError(f"reference must be a date or datetime, not {type(reference).__name__}")
    found = []
    for pattern, meaning in _RULES:
        for m in pattern.finditer(text):
            found.append((m.start(), -(m.end() - m.start()), m, meaning))
    found.sort(key=lambda f: (f[0], f[1]))
    out: list[ResolvedTime] = []
    taken_until = 0
    for start, _, m, meaning in found:
        if start < taken_until:
            continue
        resolved = meaning(m, reference)
        if resolved is None:  # the words are a rate or count from an event: no day of the calendar
            continue
        first, last, unit = resolved
        out.append(ResolvedTime((m.start(), m.end()), first, last, m.group(), unit))
        taken_until = m.end()
    return out


def annotate(text: str, reference: date | datetime, *, skip_reference_day: bool = True) -> str:
    """``text`` with each resolved expression followed by its absolute form in parentheses:
    "I moved yesterday" -> "I moved yesterday (2023-05-07)". With ``skip_reference_day``,
    expressions that mean the reference day itself ("today") are left as they are (the caller
    already shows that date). An expression already followed by its form is left as it is, so that
    a text annotated once (a document exported as JSONL and ingested again) is not annotated twice."""
    day = reference.date() if isinstance(reference, datetime) else reference
    parts, pos = [], 0
    for r in resolve(text, day):
        if skip_reference_day and r.start == r.end == day:
            continue
        if text.startswith(f" ({r.label})", r.span[1]):
            continue
        parts.append(text[pos:r.span[1]])
        parts.append(f" ({r.label})")
        pos = r.span[1]
    parts.append(text[pos:])
    return "".join(parts)


# -- calendar arithmetic --------------------------------------------------------------------

def _day(d: date) -> tuple[date, date, str]:
    return d, d, "day"


def _week(d: date, weeks: int = 0) -> tuple[date, date, str]:
    monday = d - timedelta(days=d.weekday()) + timedelta(weeks=weeks)
    return monday, monday + timedelta(days=6), "week"


def _weekend(d: date, weeks: int) -> tuple[date, date, str]:
    saturday = d - timedelta(days=d.weekday()) + timedelta(weeks=weeks, days=5)
    return saturday, saturday + timedelta(days=1), "day"


def _month(d: date, months: int = 0) -> tuple[date, date, str]:
    index = d.year * 12 + d.month - 1 + months
    year, month = divmod(index, 12)
    month += 1
    return date(year, month, 1), date(year, month, calendar.monthrange(year, month)[1]), "month"


def _year(d: date, years: int = 0) -> tuple[date, date, str]:
    return date(d.year + years, 1, 1), date(d.year + years, 12, 31), "year"


def _shift(d: date, unit: str, n: int) -> tuple[date, date, str]:
    """The day, week, month or year ``n`` units away from ``d``."""
    if unit == "day":
        return _day(d + timedelta(days=n))
    if unit == "week":
        return _week(d + timedelta(weeks=n))
    if unit == "month":
        return _month(d, n)
    return _year(d, n)


def _weekday_in_week(d: date, weekday: int, weeks: int) -> tuple[date, date, str]:
    return _day(d - timedelta(days=d.weekday()) + timedelta(weeks=weeks, days=weekday))


# -- English --------------------------------------------------------------------------------

_EN_NUMBERS = {"a": 1, "an": 1, "one": 1, "a couple of": 2, "a couple": 2, "couple of": 2, "two": 2,
               "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8, "nine": 9, "ten": 10,
               "eleven": 11, "twelve": 12, "fifteen": 15, "twenty": 20, "thirty": 30}
_EN_NUMBER = r"(\d{1,4}|" + "|".join(sorted((re.escape(k) for k in _EN_NUMBERS), key=len, reverse=True)) + ")"
WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")  # date.weekday() order
_EN_WEEKDAYS = {name: i for i, name in enumerate(WEEKDAYS)}
_EN_WEEKDAY = "(" + "|".join(WEEKDAYS) + ")"
_EN_UNIT = r"(day|week|month|year)s?"


def _en(pattern: str) -> re.Pattern:
    return re.compile(rf"(?<![A-Za-z0-9])(?:{pattern})(?![A-Za-z0-9])", re.I)


def _en_count(word: str) -> int:
    return int(word) if word.isdigit() else _EN_NUMBERS[" ".join(word.lower().split())]


def _last_weekday(m: re.Match, ref: date) -> tuple[date, date, str]:
    back = (ref.weekday() - _EN_WEEKDAYS[m.group(1).lower()]) % 7 or 7
    return _day(ref - timedelta(days=back))


def _next_weekday(m: re.Match, ref: date) -> tuple[date, date, str]:
    ahead = (_EN_WEEKDAYS[m.group(1).lower()] - ref.weekday()) % 7 or 7
    return _day(ref + timedelta(days=ahead))


_EN_OFFSET = {"last": -1, "previous": -1, "this": 0, "next": 1, "coming": 1}
_EN_PERIOD = {"week": _week, "month": _month, "year": _year}

_Meaning = Callable[[re.Match, date], "tuple[date, date, str] | None"]
_AFTER_THE = re.compile(r"(?<![A-Za-z])the\s+$", re.I)
# a count of occurrences earlier in the sentence: "three cancellations in a month" is a rate
_COUNT_BEFORE = re.compile(r"(?<![A-Za-z0-9])(?:\d+|" + "|".join(
    k for k in _EN_NUMBERS if k not in ("a", "an") and " " not in k) + r"|once|twice|thrice|times)(?![A-Za-z0-9])",
    re.I)
_SENTENCE_END = re.compile(r"[.!?;:]\s|\n")


def _anaphoric(m: re.Match) -> bool:
    """Whether the period follows "the" ("the next year"): counted from an event, not from the day."""
    return _AFTER_THE.search(m.string, max(0, m.start() - 8), m.start()) is not None


def _rate(m: re.Match) -> bool:
    """Whether "in a <unit>" ends a count of occurrences in its sentence ("three cancellations in a month")."""
    sentence = _SENTENCE_END.split(m.string[max(0, m.start() - 120):m.start()])[-1]
    return _COUNT_BEFORE.search(sentence) is not None


# what says that a sentence states a routine: "every Friday", "each month", 每周五, 每月, 每个季度
_ROUTINE = re.compile(r"(?<![A-Za-z])(?:every|each)\s+(?:other\s+)?(?:day|week|weekday|weekend|month|"
                      r"quarter|year|morning|evening|night|shift|monday|tuesday|wednesday|thursday|friday|"
                      r"saturday|sunday)(?![A-Za-z])|每个?(?:周|星期|礼拜|月|季度|年|天|日|班)", re.I)
_CLAUSE_END = re.compile(r"[.!?;]\s|[。！？；\n]")


def _routine(m: re.Match) -> bool:
    """Whether the sentence around ``m`` states a routine ("The rota for next week is posted every
    Friday", "on the last Friday of each month", 下周的排班表每周五贴出): the period is counted from
    each time the routine comes round, not from the day the text was written."""
    text = m.string
    before = _CLAUSE_END.split(text[max(0, m.start() - 120):m.start()])[-1]
    after = _CLAUSE_END.split(text[m.end():m.end() + 120])[0]
    return _ROUTINE.search(before) is not None or _ROUTINE.search(after) is not None


def _unless_routine(meaning: "_Meaning") -> "_Meaning":
    return lambda m, ref: None if _routine(m) else meaning(m, ref)


def _in_count(m: re.Match, ref: date) -> "tuple[date, date, str] | None":
    n = _en_count(m.group(1))
    return None if n == 1 and m.group(1).isalpha() and _rate(m) else _shift(ref, m.group(2).lower(), n)


def _period(m: re.Match, ref: date) -> "tuple[date, date, str] | None":
    return None if _anaphoric(m) else _EN_PERIOD[m.group(2).lower()](ref, _EN_OFFSET[m.group(1).lower()])


_RULES: list[tuple[re.Pattern, _Meaning]] = [
    (_en(r"the\s+day\s+before\s+yesterday"), lambda m, r: _day(r - timedelta(days=2))),
    (_en(r"the\s+day\s+after\s+tomorrow"), lambda m, r: _day(r + timedelta(days=2))),
    (_en(r"yesterday|last\s+night"), lambda m, r: _day(r - timedelta(days=1))),
    (_en(r"today|tonight"), lambda m, r: _day(r)),
    (_en(r"tomorrow"), lambda m, r: _day(r + timedelta(days=1))),
    (_en(r"(last|previous|this|next|coming)\s+(week|month|year)"), _unless_routine(_period)),
    (_en(r"(last|this|next)\s+weekend"), lambda m, r: _weekend(r, _EN_OFFSET[m.group(1).lower()])),
    (_en(r"last\s+" + _EN_WEEKDAY), _unless_routine(_last_weekday)),
    (_en(r"next\s+" + _EN_WEEKDAY), _unless_routine(_next_weekday)),
    (_en(r"this\s+(?:coming\s+)?" + _EN_WEEKDAY),
     _unless_routine(lambda m, r: _weekday_in_week(r, _EN_WEEKDAYS[m.group(1).lower()], 0))),
    (_en(_EN_NUMBER + r"\s+" + _EN_UNIT + r"\s+ago"),
     lambda m, r: _shift(r, m.group(2).lower(), -_en_count(m.group(1)))),
    (_en(r"in\s+" + _EN_NUMBER + r"\s+" + _EN_UNIT), _in_count),
    (_en(_EN_NUMBER + r"\s+" + _EN_UNIT + r"\s+from\s+now"),
     lambda m, r: _shift(r, m.group(2).lower(), _en_count(m.group(1)))),
]

# -- Chinese --------------------------------------------------------------------------------

_ZH_DIGITS = {"零": 0, "〇": 0, "一": 1, "二": 2, "两": 2, "三": 3, "四": 4, "五": 5, "六": 6, "七": 7,
              "八": 8, "九": 9}
_ZH_NUMERALS = "零〇一二两三四五六七八九十"
ZH_WEEKDAYS = {"一": 0, "二": 1, "三": 2, "四": 3, "五": 4, "六": 5, "日": 6, "天": 6}  # after 周, 星期 or 礼拜
_ZH_WEEK = r"(?:周|星期|礼拜|个星期|个礼拜)"


def _zh_count(word: str) -> int:
    """1-99 written in digits or Chinese numerals: 3, 三, 两, 十, 十二, 二十, 二十五."""
    if word.isdigit():
        return int(word)
    if "十" in word:
        tens, _, ones = word.partition("十")
        return _ZH_DIGITS.get(tens, 1) * 10 + _ZH_DIGITS.get(ones, 0)
    value = 0
    for ch in word:
        value = value * 10 + _ZH_DIGITS[ch]
    return value


_ZH_DAYS = {"大前天": -3, "前天": -2, "昨天": -1, "昨晚": -1, "昨日": -1, "今天": 0, "今晚": 0, "今日": 0,
            "明天": 1, "明晚": 1, "明日": 1, "后天": 2, "大后天": 3}
_ZH_YEARS = {"前年": -2, "去年": -1, "今年": 0, "明年": 1, "后年": 2}
_ZH_SIDE = {"上": -1, "这": 0, "本": 0, "下": 1}
_ZH_UNIT = {"天": "day", "日": "day", "周": "week", "星期": "week", "个星期": "week", "礼拜": "week",
            "个礼拜": "week", "个月": "month", "年": "year"}

_DAY_OF_MONTH = re.compile(r"月的?$")


def _zh_count_from_day(m: re.Match, ref: date) -> "tuple[date, date, str] | None":
    """三天前, 两年后; but N日 right after a month ("每月25日前", "2月28日之前": by the 25th, by 28
    February) is a day of the month, not a count of days."""
    if m.group(2) == "日" and _DAY_OF_MONTH.search(m.string, max(0, m.start() - 2), m.start()):
        return None
    return _shift(ref, _ZH_UNIT[m.group(2)], _zh_count(m.group(1)) * (-1 if m.group(3) == "前" else 1))


_RULES += [
    (re.compile("|".join(sorted(_ZH_DAYS, key=len, reverse=True))),
     lambda m, r: _day(r + timedelta(days=_ZH_DAYS[m.group()]))),
    (re.compile("|".join(_ZH_YEARS)), lambda m, r: _year(r, _ZH_YEARS[m.group()])),
    (re.compile(r"([上这本下])个?" + _ZH_WEEK + r"([一二三四五六日天])"),
     _unless_routine(lambda m, r: _weekday_in_week(r, ZH_WEEKDAYS[m.group(2)], _ZH_SIDE[m.group(1)]))),
    (re.compile(r"([上这本下])" + _ZH_WEEK), _unless_routine(lambda m, r: _week(r, _ZH_SIDE[m.group(1)]))),
    (re.compile(r"([上这本下])个?月"), _unless_routine(lambda m, r: _month(r, _ZH_SIDE[m.group(1)]))),
    # a count of at most three digits, not the end of a longer number ("1987年后" is after the year
    # 1987), not after 满 ("入职满一年后": once a year of service is complete, a condition and no
    # date), and not 前后 ("221年前后": around the year 221)
    (re.compile(rf"(?<![\d{_ZH_NUMERALS}满])(\d{{1,3}}|[{_ZH_NUMERALS}]{{1,3}})"
                r"(天|日|周|个?星期|个?礼拜|个月|年)(?:以|之)?([前后])(?!后)"),
     _zh_count_from_day),
]
