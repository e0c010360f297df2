"""asmr.text.relative_time: relative expressions resolved against a reference day."""
from datetime import date, datetime

import pytest

from asmr.text.relative_time import annotate, resolve

MONDAY = date(2023, 5, 8)
FRIDAY = date(2023, 5, 12)


def one(text, ref=MONDAY):
    found = resolve(text, ref)
    assert len(found) == 1, found
    return found[0]


@pytest.mark.parametrize("text, start, end", [
    ("yesterday", "2023-05-07", "2023-05-07"),
    ("last night", "2023-05-07", "2023-05-07"),
    ("the day before yesterday", "2023-05-06", "2023-05-06"),
    ("tomorrow", "2023-05-09", "2023-05-09"),
    ("the day after tomorrow", "2023-05-10", "2023-05-10"),
    ("today", "2023-05-08", "2023-05-08"),
    ("last week", "2023-05-01", "2023-05-07"),
    ("this week", "2023-05-08", "2023-05-14"),
    ("next week", "2023-05-15", "2023-05-21"),
    ("last month", "2023-04-01", "2023-04-30"),
    ("next month", "2023-06-01", "2023-06-30"),
    ("last year", "2022-01-01", "2022-12-31"),
    ("next year", "2024-01-01", "2024-12-31"),
    ("last weekend", "2023-05-06", "2023-05-07"),
    ("this Friday", "2023-05-12", "2023-05-12"),
    ("last Friday", "2023-05-05", "2023-05-05"),
    ("next Friday", "2023-05-12", "2023-05-12"),
    ("last Sunday", "2023-05-07", "2023-05-07"),
    ("in 2 days", "2023-05-10", "2023-05-10"),
    ("3 days ago", "2023-05-05", "2023-05-05"),
    ("two weeks ago", "2023-04-24", "2023-04-30"),
    ("two years ago", "2021-01-01", "2021-12-31"),
    ("a year ago", "2022-01-01", "2022-12-31"),
    ("in a month", "2023-06-01", "2023-06-30"),
    ("five months ago", "2022-12-01", "2022-12-31"),
    ("2 years from now", "2025-01-01", "2025-12-31"),
    ("昨天", "2023-05-07", "2023-05-07"),
    ("前天", "2023-05-06", "2023-05-06"),
    ("大前天", "2023-05-05", "2023-05-05"),
    ("明天", "2023-05-09", "2023-05-09"),
    ("后天", "2023-05-10", "2023-05-10"),
    ("上周", "2023-05-01", "2023-05-07"),
    ("上个星期", "2023-05-01", "2023-05-07"),
    ("下周", "2023-05-15", "2023-05-21"),
    ("上周五", "2023-05-05", "2023-05-05"),
    ("上星期天", "2023-05-07", "2023-05-07"),
    ("下周一", "2023-05-15", "2023-05-15"),
    ("这周五", "2023-05-12", "2023-05-12"),
    ("上个月", "2023-04-01", "2023-04-30"),
    ("下个月", "2023-06-01", "2023-06-30"),
    ("去年", "2022-01-01", "2022-12-31"),
    ("前年", "2021-01-01", "2021-12-31"),
    ("两年前", "2021-01-01", "2021-12-31"),
    ("十二年前", "2011-01-01", "2011-12-31"),
    ("三天前", "2023-05-05", "2023-05-05"),
    ("3天后", "2023-05-11", "2023-05-11"),
    ("两个月前", "2023-03-01", "2023-03-31"),
])
def test_expressions_resolve_against_the_reference_day(text, start, end):
    r = one(f"so {text}, really")
    assert (r.start.isoformat(), r.end.isoformat()) == (start, end)
    assert r.text == text
    assert f"so {text}, really"[r.span[0]:r.span[1]] == text


def test_weekdays_from_a_friday():
    assert one("last Friday", FRIDAY).start == date(2023, 5, 5)  # a week back, not today
    assert one("next Friday", FRIDAY).start == date(2023, 5, 19)
    assert one("this Friday", FRIDAY).start == FRIDAY
    assert one("last Thursday", FRIDAY).start == date(2023, 5, 11)
    assert one("上周五", FRIDAY).start == date(2023, 5, 5)


def test_month_and_year_boundaries():
    assert one("last month", date(2023, 1, 15)).label == "2022-12"
    assert one("next month", date(2023, 12, 31)).label == "2024-01"
    assert one("last month", date(2024, 3, 31)).end == date(2024, 2, 29)
    assert one("last week", date(2023, 1, 1)).label == "2022-12-19 to 2022-12-25"  # 1 Jan 2023 is a Sunday


def test_labels_are_as_precise_as_the_words():
    assert one("yesterday").label == "2023-05-07"
    assert one("last week").label == "2023-05-01 to 2023-05-07"
    assert one("last month").label == "2023-04"
    assert one("last year").label == "2022"
    assert [r.unit for r in resolve("yesterday, last week, last month, last year", MONDAY)] == \
        ["day", "week", "month", "year"]


def test_longest_expression_wins_and_order_is_kept():
    found = resolve("The day before yesterday I saw her, and tomorrow 三天前天气很好", MONDAY)
    assert [r.text for r in found] == ["The day before yesterday", "tomorrow", "三天前"]


def test_vague_words_and_parts_of_words_are_left_alone():
    assert resolve("recently, a few days ago, the other day, on Friday, every week, 周五", MONDAY) == []
    assert resolve("yesterdays todayish lastweek", MONDAY) == []


def test_a_year_written_out_is_no_count_of_years():
    # "1987年后" is after the year 1987, "公元前221年前后" around 221 BC; three digits are a count
    assert resolve("1987年后，2000年以后，公元前221年前后", MONDAY) == []
    assert [r.label for r in resolve("800年前，十二天后", MONDAY)] == ["1223", "2023-05-20"]


def test_datetime_reference_uses_its_day():
    assert one("yesterday", datetime(2023, 5, 8, 23, 59)).start == date(2023, 5, 7)


def test_bad_arguments():
    with pytest.raises(TypeError):
        resolve("yesterday", "2023-05-08")
    with pytest.raises(TypeError):
        resolve(None, MONDAY)


def test_annotate_writes_the_date_after_the_words():
    assert annotate("I moved to Porto yesterday, and last year I lived in Graz.", MONDAY) == \
        "I moved to Porto yesterday (2023-05-07), and last year (2022) I lived in Graz."
    assert annotate("我昨天搬家了", MONDAY) == "我昨天 (2023-05-07)搬家了"
    assert annotate("Today I started", MONDAY) == "Today I started"  # the turn already shows its day
    assert annotate("Today I started", MONDAY, skip_reference_day=False) == "Today (2023-05-08) I started"
    assert annotate("no time here", MONDAY) == "no time here"


@pytest.mark.parametrize("text", ["I moved to Porto yesterday, and last year I lived in Graz.",
                                  "我昨天搬家了，三天后出发，两年前住在杭州。"])
def test_annotating_twice_writes_each_date_once(text):
    # a document is annotated when read; exported as JSONL and ingested again, it is read again
    once = annotate(text, MONDAY)
    assert once != text and annotate(once, MONDAY) == once


def test_a_count_after_man_is_a_condition_not_a_date():
    # 满一年后: once a year (of service) is complete, whenever that is
    assert resolve("员工入职满一年后享有五天年假，满十二个月后再评估。", MONDAY) == []
    assert one("我三天后出发").label == "2023-05-11"


def test_a_period_after_the_is_counted_from_an_event_not_from_the_day():
    # "the next year": the year after the one the sentence is about (a rule of a policy), not 2024
    assert resolve("Unused vacation carries over to the next year.", MONDAY) == []
    assert resolve("Sales fell over the last week and the following month.", MONDAY) == []
    assert one("Unused vacation carries over to next year.").label == "2024"


def test_a_count_in_a_period_is_a_rate_not_a_date():
    # "three late cancellations in a month": at most three per month, whenever
    assert resolve("Three late cancellations in a month suspend booking rights.", MONDAY) == []
    assert resolve("The hood is checked twice in a year.", MONDAY) == []
    # without a count before it in its sentence, "in a month" is a month from the day
    assert one("We met 3 times. In a month we meet again.").label == "2023-06"
    assert one("The lab moves in a month.").label == "2023-06"
    # a count of periods is a date whatever came before it
    assert one("Two rooms open in 3 weeks.").label == "2023-05-29 to 2023-06-04"


def test_a_day_after_a_month_is_a_day_of_the_month_not_a_count():
    # 每月25日前: by the 25th of each month; 2月28日之前: before 28 February (not "25 / 28 days ago")
    assert resolve("活动专员须在每月25日前交计划。", MONDAY) == []
    assert resolve("各部门须在2026年2月28日之前完成学习。", MONDAY) == []
    assert resolve("业主须在每季度首月的15日之前缴费。", MONDAY) == []
    assert one("三日前他走了。").label == "2023-05-05"


def test_a_period_in_a_routine_is_counted_from_each_time_it_comes_round():
    # "next week" of a rota posted every Friday is the week after each Friday, not a week of the calendar
    assert resolve("The rota for next week is posted every Friday.", MONDAY) == []
    assert resolve("Pay goes into your account on the last Friday of each month.", MONDAY) == []
    assert resolve("下周的排班表每周五下午贴出。", MONDAY) == []
    assert resolve("每月25日前把下个月的活动安排发出。", MONDAY) == []
    # a routine in another sentence leaves the date alone
    assert one("We moved last Friday. Every Friday we swim.").label == "2023-05-05"
    assert one("下周五开会。").label == "2023-05-19"
