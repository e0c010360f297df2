"""The verifier's "supports" check: key facts, core claims, features and the shipped model."""
import json
from pathlib import Path

import numpy as np
import pytest

from asmr.text.facts import Fact, key_facts, missing_facts
from asmr.verify.claims import core_claim
from asmr.verify.support import FEATURES, FLIP_FEATURES, pair_features
from asmr.verify.support_model import DEFAULT_MODEL_PATH, SupportModel

DATA = Path(__file__).resolve().parents[2].parent / "shared" / "data" / "attributionbench_dev.jsonl"


def norms(text, kind):
    return [f.norm for f in key_facts(text) if f.kind == kind]


# ---- key facts ---------------------------------------------------------------------------------

def test_english_facts_by_kind():
    text = ("Released on March 3, 2021 as v1.2.3, the server has 12 GB of RAM, costs $1,200 and grew 3.5% "
            "(see ERR_42 and SKU-1234); Toby Keith played at Madison Square Garden.")
    assert norms(text, "date") == ["2021-03-03"]
    assert norms(text, "version") == ["1.2.3"]
    assert set(norms(text, "number")) == {"12 gb", "1200 usd", "3.5 %"}
    assert set(norms(text, "code")) == {"ERR42", "SKU1234"}
    assert {"toby keith", "madison square garden"} <= set(norms(text, "entity"))
    assert all(isinstance(f, Fact) for f in key_facts(text))
    with pytest.raises(Exception):
        key_facts(text)[0].norm = "x"  # frozen


def test_numbers_normalise_separators_scales_and_words():
    assert norms("It sold 1,200,000 copies.", "number") == ["1200000"]
    assert norms("It sold 1.2 million copies.", "number") == ["1200000"]
    assert norms("Growth was 3.5 percent.", "number") == ["3.5 %"]
    assert norms("Python 3.11 is out; so is version 2.0.", "version") == ["3.11", "2.0"]
    assert norms("In 2021-03-05 and in June 2019.", "date") == ["2021-03-05", "2019-06"]
    assert norms("The A100 and COVID-19.", "number") == []  # codes, not numbers


def test_chinese_facts():
    text = "清华大学于2021年3月5日发布了《人工智能报告》，共有12万人参加，增长3.5%。"
    assert norms(text, "date") == ["2021-03-05"]
    assert set(norms(text, "number")) == {"120000 people", "3.5 %"}
    assert {"清华大学", "人工智能报告"} <= set(norms(text, "entity"))
    assert norms("东京大学在2020年发布了新版本2.0。", "version") == ["2.0"]


def test_chinese_place_names_start_after_the_verb_before_them():
    assert norms("市中校区坐落于济南市市中区。", "entity") == ["济南市"]
    assert norms("他毕业于清华大学，后任职于北京市政府。", "entity") == ["清华大学", "北京市"]
    assert norms("他在上周五离开了公司。", "entity") == ["friday"]  # a suffix alone names nothing; 周五 is a day


def test_chinese_numerals_with_a_unit_are_facts():
    assert norms("日志保留三十天，费用一百二十元。", "number") == ["30 day", "120 cny"]
    assert norms("备份保留三个月，任务运行两个小时。", "number") == ["3 month", "2 h"]
    assert norms("二〇二三年发布。", "date") == ["2023"]
    assert norms("五月很热，十一月很冷，大家统一管理。", "number") == []  # months and words, no numbers
    assert norms("他生于哪一年？这一天很冷。", "number") == []  # which, this: not one
    # the verifier's check: a claim with another value is caught, the same value in digits is not
    assert [f.norm for f in missing_facts("日志保留十四天。", "日志保留三十天。")] == ["14 day"]
    assert missing_facts("日志保留30天。", "日志保留三十天。") == []
    assert missing_facts("日志保留三十天。", "日志保留30天。") == []
    # 一 is in many words (一名, 一直): a bare one elsewhere does not excuse an hour where the unit says a year
    evidence = "谭某是一名球员，一直踢后卫。在不到一年之内，他三次犯规。"
    assert [f.norm for f in missing_facts("在不到一小时，他三次犯规。", evidence)] == ["1 h"]
    assert missing_facts("在不到一年之内，他三次犯规。", evidence) == []
    assert missing_facts("他是一个球员。", "他是一名球员，一直踢后卫。") == []  # no unit on either side


def test_missing_numbers_dates_and_entities():
    evidence = "The single sold over 2 million copies by March 14, 1970 and topped the chart for four weeks."
    assert missing_facts("It sold 2 million copies in March 1970.", evidence) == []
    assert missing_facts("It topped the chart for 4 weeks.", evidence) == []  # "four weeks"
    assert [f.norm for f in missing_facts("It sold 3 million copies.", evidence)] == ["3000000"]
    assert [f.norm for f in missing_facts("It sold 2 million copies in 1971.", evidence)] == ["1971"]
    assert [f.norm for f in missing_facts("The file is 12 GB.", "The file is 12 MB.")] == ["12 gb"]
    assert missing_facts("Toby Keith sang it.", "The song by Keith was a hit.") == []  # partial name
    assert [f.norm for f in missing_facts("Garth Brooks sang it.", "Toby Keith sang it.")] == ["garth brooks"]
    zh = missing_facts("北京大学于2022年发布了报告", "2021年3月5日，清华大学发布报告")
    assert {f.norm for f in zh} == {"2022", "北京大学"}
    assert missing_facts("清华大学于2021年3月发布了报告", "2021年3月5日，清华大学发布报告") == []


@pytest.mark.parametrize("text, expected", [
    # amounts written in words, normalised like digits
    ("Logs are kept for fourteen days.", ["14 day"]),
    ("Logs are kept for two weeks, then twenty-one days more.", ["2 week", "21 day"]),
    ("It lasted a hundred and twenty years.", ["120 year"]),
    ("Wait half an hour, an hour and a half or one and a half hours.", ["0.5 h", "1.5 h", "1.5 h"]),
    ("Keep it for a fortnight, a month or a year.", ["2 week", "1 month", "1 year"]),
    ("Prices rose five percent over three per cent.", ["5 %", "3 %"]),
    ("Logs are deleted after one hour.", ["1 h"]),
    ("It was a two-week course.", ["2 week"]),
    ("Logs are kept for 14 days, not 3 centuries.", ["14 day", "3 century"]),  # digits: "days" is "day"
    # frequencies: the time between two events
    ("Backups run daily.", ["every 1 day"]),
    ("Backups run every day, each week and once a year.", ["every 1 day", "every 1 week", "every 1 year"]),
    ("It is checked twice a day and three times a week.", ["every 0.5 day", "every 0.333333 week"]),
    ("It runs every 3 days, every two weeks and every other day.", ["every 3 day", "every 2 week", "every 2 day"]),
    ("It runs every half hour and 5 times a day.", ["every 0.5 h", "every 0.2 day"]),
    ("It runs hourly at noon, weekly, and on a daily basis.", ["every 1 h", "every 1 week", "every 1 day"]),
    ("Interest is paid per annum; three backups per day.", ["every 1 year", "every 1 day"]),
    # unbounded durations
    ("Logs are kept forever.", ["inf duration"]),
    ("Keys never expire; backups are kept indefinitely.", ["inf duration", "inf duration"]),
    ("He was permanently banned and it lasts for ever.", ["inf duration", "inf duration"]),
    # Chinese
    ("日志每天备份，每周汇总，每隔三天清理，每天两次检查。", ["every 1 day", "every 1 week", "every 3 day", "every 0.5 day"]),
    ("日志永久保留。", ["inf duration"]),
    ("保留两周，等半小时，再等一个半小时，合同两年半。", ["0.5 h", "1.5 h", "2.5 year", "2 week"]),
    ("每30分钟同步一次。", ["every 30 min"]),
    ("每星期、每月、每年、每小时各一次。", ["every 1 week", "every 1 month", "every 1 year", "every 1 h"]),
])
def test_numbers_written_in_words_frequencies_and_unbounded_durations(text, expected):
    assert norms(text, "number") == expected


@pytest.mark.parametrize("text", [
    "Two of them came; one of the days was cold.",  # bare word numbers name nothing
    "Daily life was hard for readers of The Daily Telegraph and the weekly magazine.",
    "One day, he left. Until one day she came back.",
    "It drove at 60 km an hour, worked 8 hours a day and earned $5 per day.",  # rates of a quantity
    "On the twenty-second day, for a second time, the day-to-day work of a year-round resort went on.",
    "Forever Young and Every Day are songs.",
    "上半年的半月刊。",  # the first half of the year; a semimonthly
])
def test_idioms_and_names_are_not_frequencies_or_durations(text):
    words = [f for f in key_facts(text) if f.kind == "number" and not f.text[:1].isdigit()
             and not f.text.startswith("$")]
    assert words == []


LOGS = "Logs are kept for 14 days in the log directory. Backups run daily."


@pytest.mark.parametrize("claim, missing", [
    ("Logs are kept forever.", ["inf duration"]),
    ("Logs are deleted after one hour.", ["1 h"]),
    ("Logs are kept for fourteen weeks.", ["14 week"]),
    ("Backups run every week.", ["every 1 week"]),
    ("Backups run twice a day.", ["every 0.5 day"]),
    # the same value in other words, units or forms is stated
    ("Logs are kept for two weeks.", []),
    ("Logs are kept for a fortnight.", []),
    ("Logs are kept for fourteen days.", []),
    ("Logs are kept for 336 hours.", []),
    ("Backups run every day.", []),
    ("Backups run once a day.", []),
    ("Backups run every 24 hours.", []),
])
def test_the_verifier_check_reads_durations_and_frequencies(claim, missing):
    assert [f.norm for f in missing_facts(claim, LOGS)] == missing


def test_durations_and_frequencies_compare_across_forms():
    assert missing_facts("It takes one hour.", "It takes 60 minutes.") == []
    assert missing_facts("It takes 60 minutes.", "It takes an hour.") == []
    assert missing_facts("A day is 24 hours.", "It lasted one day.") == []
    assert missing_facts("Backups run daily.", "Daily backups are kept.") == []  # an adjective in evidence
    assert missing_facts("Three meals per day.", "three meals a day") == []
    assert missing_facts("three meals a day", "Three meals per day.") == []
    assert missing_facts("It polls hourly.", "It polls at 10 requests/h.") == []
    assert missing_facts("Backups run every 7 days.", "Backups run weekly.") == []
    assert missing_facts("It is checked twice a day.", "It is checked every 12 hours.") == []
    assert [f.norm for f in missing_facts("Backups run every 3 days.", "Backups are kept 3 days.")] == ["every 3 day"]
    assert missing_facts("Backups are kept 3 days.", "Backups run every 3 days.") == []
    # months and years are not converted to days
    assert [f.norm for f in missing_facts("It lasts a month.", "It lasts 30 days.")] == ["1 month"]
    assert [f.norm for f in missing_facts("It lasts 4 months.", "It lasted four weeks.")] == ["4 month"]
    # a value in words with a unit no longer stands for the bare value
    assert [f.norm for f in missing_facts("It lasts 14 weeks.", "It lasts fourteen days.")] == ["14 week"]
    assert missing_facts("It lasts 14 days.", "Fourteen days, it lasts.") == []
    # a unit joined to its number by a hyphen is the number's: "a 14-day supply" states two weeks, and
    # no 14 weeks; "per calendar month" is monthly; "seven nights a week" is every night
    assert missing_facts("They are given two weeks' worth.", "They receive a 14-day supply.") == []
    assert [f.norm for f in missing_facts("It lasts 14 weeks.", "They get a 14-day supply.")] == ["14 week"]
    assert missing_facts("Staff earn 1.5 days every month.", "Staff accrue 1.5 days per calendar month.") \
        == []
    assert missing_facts("Night buses run every night.", "Night buses run seven nights a week.") == []
    assert missing_facts("The desk is staffed every day.", "The desk is staffed 7 days a week.") == []
    assert [f.norm for f in missing_facts("Buses run every week.", "Buses run seven nights a week.")] == [
        "every 1 week"]
    # "forever" only as another word for forever
    assert missing_facts("Logs are kept forever.", "Logs are kept permanently.") == []
    assert [f.norm for f in missing_facts("Logs are kept forever.", "Logs are kept.")] == ["inf duration"]


def test_a_frequency_the_sentence_states_is_no_opposite(hashed):
    """"Backups run nightly" cited to "Backups run every night and are kept for 30 days" lost its citation
    (p 0.04): "nightly" read as the opposite of the "days" of "30 days"; "every day" for "every night"
    too (0.04, "day" for "night"). Each states the sentence's frequency, once a day."""
    col = FEATURES.index("flip_opposite")
    unit = "Backups of the customer database run every night and are kept for 30 days."
    same = ["Backups of the customer database run nightly.", "Backups of the customer database run every day."]
    assert (pair_features(same, [unit] * 2, embedder=hashed)[:, col] == 0.0).all()
    # another period is still missed by the key facts
    assert [f.norm for f in missing_facts("Backups run every week.", unit)] == ["every 1 week"]


def test_a_part_of_the_day_after_every_comes_round_daily():
    """"every night" was no frequency: "Backups run daily" cited to "Backups run every night" missed its
    "daily" and lost its citation, and a claim's "every morning" was no fact to check against a unit
    that runs them weekly."""
    nightly = "Backups of the customer database run every night and are kept for 30 days."
    assert [f.norm for f in missing_facts("Backups run every week.", nightly)] == ["every 1 week"]
    for same in ("Backups run nightly.", "Backups run daily.", "Backups run each night.", "Backups run every day."):
        assert missing_facts(same, nightly) == []
    assert [f.norm for f in missing_facts("Backups run every morning.", "Backups run weekly.")] == ["every 1 day"]
    assert [(f.text, f.norm) for f in key_facts("Rounds start each morning and twice every evening.")] == [
        ("each morning", "every 1 day"), ("twice every evening", "every 0.5 day")]
    # a part of the day alone, or "nightly" before the thing it describes, is no frequency
    assert [f for f in key_facts("The nightly build ran one night in the morning.") if f.norm.startswith("every")] == []


def test_chinese_durations_and_frequencies():
    assert [f.norm for f in missing_facts("日志每天备份。", "日志每周备份。")] == ["every 1 day"]
    assert missing_facts("日志每天备份。", "Backups run daily: 日志每日备份。") == []
    assert [f.norm for f in missing_facts("日志永久保留。", "日志保留30天。")] == ["inf duration"]
    assert missing_facts("日志永久保留。", "日志永远保留。") == []
    assert missing_facts("日志保留两周。", "日志保留十四天。") == []
    assert missing_facts("任务需要半小时。", "任务需要30分钟。") == []
    assert [f.norm for f in missing_facts("日志保留三十周。", "日志保留三十天。")] == ["30 week"]
    # 个月 is a month (个 is no unit of its own there), and a year is twelve of them
    assert [f.norm for f in key_facts("审计日志保留12个月，3个小时后检查。")] == ["12 month", "3 h"]
    assert missing_facts("审计日志保留12个月。", "审计日志保存一年。") == []
    assert [f.norm for f in missing_facts("审计日志保留18个月。", "审计日志保存一年。")] == ["18 month"]


def test_a_count_before_a_chinese_measure_word_is_a_key_fact():
    """二十本 (twenty, of books) is the number 20 whatever the measure word; 一本 is "a book", and 第二本 /
    这两本 (the second, these two) count nothing."""
    assert [(f.text, f.norm) for f in key_facts("读者可借二十本书，研讨室坐十二人。")] == [("二十本", "20"), ("十二人", "12")]
    # in text order
    assert [(f.text, f.norm) for f in key_facts("二十本，三十天")] == [("二十本", "20"), ("三十天", "30 day")]
    assert key_facts("第二本书和这两本书都是一本好书。") == []
    assert [f.norm for f in missing_facts("读者最多可借二十本书。", "读者最多可以借十本书。")] == ["20"]
    assert missing_facts("读者最多可借10本书。", "读者最多可以借十本书。") == []
    assert missing_facts("研讨室可坐十二位读者。", "研讨室可坐十二名读者。") == []


def test_a_time_of_day_in_chinese_numerals_is_a_key_fact():
    """上午十点 states the hour 10, as 上午10点 does, so a claim of 十一点 cited to it misses a fact; 十点三十分
    also the minutes. 点 before another numeral is a decimal point (评分三点五), and 一点 is "a little"
    (快一点, 这一点) unless a part of the day comes before it (中午一点)."""
    assert [(f.text, f.norm) for f in key_facts("故事会周六上午十点开始")] == [("十点", "10"), ("周六", "saturday")]
    assert [(f.text, f.norm) for f in key_facts("十点三十分闭馆，中午一点开门")] == [
        ("十点", "10"), ("三十分", "30"), ("一点", "1")]
    assert key_facts("评分三点五，快一点，这一点很重要，一点点") == []
    assert [f.text for f in key_facts("三点五公里")] == ["三点五公里"]
    unit = "绘本故事会每周六上午十点在故事角举办。"
    assert [f.norm for f in missing_facts("绘本故事会每周六上午十一点举办。", unit)] == ["11"]
    assert missing_facts("绘本故事会每周六上午10点举办。", unit) == []
    assert missing_facts("故事会十点开始。", "故事会上午10:00开始。") == []


def test_a_day_of_the_week_in_chinese_is_a_key_fact():
    """周六, 星期六 and 礼拜六 state one day, named as an English "Saturday" is, so a claim of 周日 cited to a
    unit of 周六 misses a fact and one of 星期六 does not; 上周五 names a Friday. A count of weeks (两周一次,
    四周) or within a week (每周三次, 每周五天) names no day, and neither do 本周天气 or 本周日程."""
    assert [(f.text, f.norm) for f in key_facts("诊所周六休息，星期天和礼拜一照常开放。")] == [
        ("周六", "saturday"), ("星期天", "sunday"), ("礼拜一", "monday")]
    assert [f.norm for f in key_facts("上周五我们迁移了接口。")] == ["friday"]
    assert [f.norm for f in key_facts("例会每周三举行。")] == ["every 1 week", "wednesday"]
    assert [f.norm for f in key_facts("周三点名。")] == ["wednesday"]  # 三 is the day's, not three o'clock
    for text in ("每周三次", "两周一次", "每周五天工作制", "每周三个小时", "四周都是山", "本周天气不错", "本周日程"):
        assert not [f for f in key_facts(text) if f.kind == "entity"], text
    assert [f.norm for f in missing_facts("诊所周日休息。", "诊所周六休息。")] == ["sunday"]
    assert missing_facts("诊所星期六休息。", "诊所周六休息。") == []
    assert missing_facts("诊所週六休息。", "诊所周六休息。") == []
    assert missing_facts("诊所周六休息。", "The clinic is closed on Saturday.") == []
    assert missing_facts("The clinic is closed on Saturday.", "诊所周六休息。") == []


def test_a_plural_name_is_stated_by_its_singular():
    """"Meetings are held on Mondays and Fridays" missed both days against "We meet every Monday and
    Friday" (an entity's text was looked for as it stands); an English "Saturdays" against 周六 too."""
    assert missing_facts("Meetings are held on Mondays and Fridays.", "We meet every Monday and Friday.") == []
    assert missing_facts("The clinic is closed on Saturdays.", "诊所周六休息。") == []
    assert missing_facts("The Smiths live here.", "The Smith family lives here.") == []
    assert [f.norm for f in missing_facts("The clinic is closed on Sundays.", "诊所周六休息。")] == ["sundays"]
    assert [f.norm for f in missing_facts("The Joneses live here.", "The Smith family lives here.")] == ["joneses"]


def test_a_range_of_times_keeps_its_end_and_either_clock_states_an_hour():
    """"9:00-17:30" lost the 17 of its end (read as the "19" of "COVID-19"), so a claim of "17:30" lost its
    citation; and "6 p.m." or 下午六点 missed the 18 of a unit's "18:00", as "18:00" missed the 6 of "6
    pm". A time stated on one clock states its hour on the other; another hour stays missing."""
    assert missing_facts("The desk closes at 17:30.", "The desk is staffed 9:00-17:30 on weekdays.") == []
    assert norms("Shipping takes 3-5 days.", "number") == ["3", "5 day"]
    assert missing_facts("Lessons end at 2 pm.", "Lessons run 09:00–14:00.") == []
    assert missing_facts("Lessons run until 14:00.", "Lessons run from 9 am to 2:00 pm.") == []
    assert missing_facts("周日营业到晚上九点。", "周日营业时间为10:00至21:00。") == []
    assert [f.norm for f in missing_facts("Lessons start at 8 am.", "Lessons run 09:00–14:00.")] == ["8"]
    assert [f.norm for f in missing_facts("Lessons end at 3 pm.", "Lessons run 09:00–14:00.")] == ["3"]


def test_chinese_facts_in_traditional_script_read_as_in_simplified():
    """兩週 is 两周 and 一萬二千元 is 12,000 yuan (not the 2,000 of its last characters), in a claim and in
    its unit, whichever script each is written in; a fact's text stays as written."""
    assert [(f.text, f.norm) for f in key_facts("借閱期限為兩週，罰款一萬二千元。")] == [
        ("兩週", "2 week"), ("一萬二千元", "12000 cny")]
    assert [f.text for f in key_facts("兩週或两周")] == ["兩週", "两周"]  # each as written, in its place
    assert [f.norm for f in missing_facts("罰款兩千元。", "罰款一萬二千元。")] == ["2000 cny"]
    assert missing_facts("借閱期限為兩週。", "借阅期限为十四天。") == []
    assert missing_facts("借阅期限为两周。", "借閱期限為十四天。") == []
    assert [f.norm for f in missing_facts("借閱期限為三週。", "借閱期限為兩週。")] == ["3 week"]


def test_calendar_spans_compare_in_months_never_in_days():
    assert missing_facts("Audit logs are kept for a year.", "Audit logs are kept for 12 months.") == []
    assert missing_facts("The lease runs two decades.", "The lease runs 20 years.") == []
    assert [f.norm for f in missing_facts("Kept for two years.", "Kept for 12 months.")] == ["2 year"]
    # a month is not always 30 days
    assert [f.norm for f in missing_facts("Kept for 30 days.", "Kept for a month.")] == ["30 day"]


def test_english_in_non_ascii_text_is_read_alike():
    # non-ASCII text takes the regex extractor, ASCII the native one: the same facts either way
    ascii_facts = [(f.kind, f.norm) for f in key_facts("Cafe logs are kept for two weeks and rotated daily.")]
    accent = [(f.kind, f.norm) for f in key_facts("Café logs are kept for two weeks and rotated daily.")]
    assert [n for k, n in ascii_facts if k == "number"] == [n for k, n in accent if k == "number"]
    assert [n for k, n in accent if k == "number"] == ["every 1 day", "2 week"]


# ---- core claim --------------------------------------------------------------------------------

@pytest.mark.parametrize("sentence, core", [
    ("According to the analysis above, the port is 8080 [cite:memo://kb/a/b].", "the port is 8080."),
    ("The source says that the port is 8080.", "the port is 8080."),
    ("It is reported that sales rose 5% [2].", "sales rose 5%."),
    ("Sales rose 5%, as noted in [cite:memo://kb/x/y].", "Sales rose 5%."),
    ("Paris is the capital of France, according to the source.", "Paris is the capital of France."),
    ("Moreover, according to [2], the source says that prices fell.", "prices fell."),
    ("根据上文，端口是8080【引用:memo://kb/a/b】。", "端口是8080。"),
    ("From 2010, prices rose.", "From 2010, prices rose."),  # not a hedge: the date stays
    # "as mentioned in" inside "was mentioned in" is no hedge: the sentence keeps its end
    ("He rose once he was mentioned in Brooks' song.", "He rose once he was mentioned in Brooks' song."),
    ("Prices fell (see the 2021 report).", "Prices fell."),
])
def test_core_claim_strips_hedges_and_markers(sentence, core):
    assert core_claim(sentence) == core


# ---- features and the model ----------------------------------------------------------------------

@pytest.fixture(scope="module")
def hashed():
    """A hash embedder, for the checks whose cue decides whatever the vectors say."""
    from asmr.embed import get_embedder

    return get_embedder("hash-256")


@pytest.fixture(scope="module")
def model():
    return SupportModel.load()


def cue_of_dropped(model, embedder, claims, units, feature: str = "flip_opposite") -> np.ndarray:
    """Each claim's value of the cue ``feature``, once every claim is seen to lose its citation."""
    claims, units = list(claims), list(units)
    assert (model.score(claims, units, embedder=embedder) < model.hard).all()
    return pair_features(claims, units, embedder=embedder)[:, FEATURES.index(feature)]


@pytest.fixture(scope="module")
def embedder():
    from asmr.embed import get_embedder

    pytest.importorskip("sentence_transformers", reason="sentence-transformers is not installed")
    return get_embedder()


def test_shipped_model_loads_with_ordered_thresholds(model):
    assert DEFAULT_MODEL_PATH.exists()
    assert 0.0 <= model.soft <= model.hard <= 1.0
    assert set(model.features) <= set(FEATURES)
    raw = json.loads(DEFAULT_MODEL_PATH.read_text())
    assert "rule" in raw["thresholds"] and "cv" in raw
    assert model.decide(model.hard) == "keep" and model.decide(0.0) == "fail"
    if model.soft < model.hard:
        assert model.decide((model.soft + model.hard) / 2) == "rewrite"


def test_model_file_is_checked(tmp_path):
    bad = tmp_path / "m.json"
    d = json.loads(DEFAULT_MODEL_PATH.read_text())
    d["thresholds"]["soft"], d["thresholds"]["hard"] = 0.9, 0.5
    bad.write_text(json.dumps(d))
    with pytest.raises(ValueError, match="thresholds"):
        SupportModel.load(bad)
    with pytest.raises(ValueError, match="no such file"):
        SupportModel.load(tmp_path / "missing.json")


def test_contradiction_part_is_checked_and_saved(tmp_path):
    d = json.loads(DEFAULT_MODEL_PATH.read_text())
    assert set(d["contradiction"]["features"]) <= set(FLIP_FEATURES)
    model = SupportModel.load()
    model.save(tmp_path / "same.json")
    assert json.loads((tmp_path / "same.json").read_text())["contradiction"] == d["contradiction"]
    for change, message in (({"features": ["nope"], "weights": [1.0]}, "contradiction features"),
                            ({"features": ["flip_negation"], "weights": [-1.0]}, "weight >= 0"),
                            ({"features": ["flip_negation"]}, "needs 'features' and 'weights'")):
        bad = tmp_path / "bad.json"
        bad.write_text(json.dumps({**d, "contradiction": change}))
        with pytest.raises(ValueError, match=message):
            SupportModel.load(bad)


LOG_RULE = "Logs are kept for 14 days in the log directory."
PORT = "The server listens on port 9090."
ROLLBACK = ("Deployments roll out one zone at a time. Rollbacks use the previous image and\n"
            "take about 2 minutes.")
CALLS = ("For identity checks, Brelion calls Ulment. For document storage, Brelion calls Tamrium. "
         "Ferrune stores events.")
STORES = "公司成立于2018年。2018年，公司在杭州开设了第一家门店。2019年，公司迁往上海。"
POSTS = ("2015年3月至6月任项目经理（代理）、技术委员会委员。"
         "2015年6月至2017年12月任项目经理、技术委员会委员、2015年度技术委员会委员。")
DEPOT = "无线电视台的仓库周末对外开放。"
TRANSFER = "乘客须在下车后一小时内换乘，第二程免费。本线每10分钟一班。"
CHECKLIST = ("Before you deploy, check that:\n\n- the host runs kernel 5.15 or newer;\n- the schema migration has been "
             "applied.\n")
DEPENDENCIES = ("Lumant depends on Quorent for currency conversion. "
                "Lumant depends on Rhonix for identity checks. Ferrium stores the documents of Lumant.")


@pytest.mark.parametrize("claim,evidence,kept", [
    ("Logs are kept forever.", LOG_RULE, False),
    ("Logs are deleted after one hour.", LOG_RULE, False),
    ("Logs are kept for fourteen weeks.", LOG_RULE, False),
    ("Backups run every week.", "Backups run daily.", False),
    ("The server does not listen on any port.", PORT, False),
    ("The server listens on port 9091.", PORT, False),
    ("Logs are kept for two weeks.", LOG_RULE, True),
    ("Logs stay in the log directory for fourteen days.", LOG_RULE, True),
    ("Backups run every day.", "Backups run daily.", True),
    ("The server listens on port 9090 by default.", PORT, True),
    # one thing put for another in the same place: another role, another unit of time
    ("The client listens on port 9090.", "The server listens on port 9090 by default.", False),
    ("The replica accepts writes from the app.", "The primary accepts writes from the app.", False),
    ("The receiver signs every message.", "The sender signs every message.", False),
    ("Maintenance takes 3 minutes.", "Maintenance takes 3 hours.", False),
    ("Caldara has a monthly maintenance window.", "Caldara has a weekly maintenance window.", False),
    ("Maintenance takes one hour.", "Maintenance starts at 01:00 and takes 3 hours.", False),
    # paraphrases that must stay kept: a synonym, a shortened name, a number in words, a dropped phrase
    ("The cathedral was constructed in 1150.", "The cathedral was built in 1150.", True),
    ("He purchased the house in 1990.", "He bought the house in 1990.", True),
    ("Admins can reset a user's password.", "Administrators can reset a user's password.", True),
    ("Maintenance takes one hour.", "Maintenance starts at 01:00 and takes 1 hour.", True),
    ("Vacations need approval twenty-four days ahead.", "Vacations need approval 24 days ahead.", True),
    ("The client retries every request.", "The client retries every request twice.", True),
    # a prefix of opposite direction; another amount in another unit in hard-wrapped text
    ("External clients reach the API over a versioned HTTP interface.",
     "Internal clients reach the API over a versioned HTTP interface.", False),
    ("The 3.2 release brought bulk import to CSV files.",
     "The 3.2 release brought bulk export to CSV files.", False),
    ("Rollbacks use the previous image and take about one hour.", ROLLBACK, False),
    ("Rollbacks use the previous image and take about 2 minutes.", ROLLBACK, True),
    # a clause no sentence states beside one copied word for word, though its words stand in the unit
    ("Lumant depends on Quorent for currency conversion, "
     "and Rhonix depends on Ferrium for currency conversion.",
     DEPENDENCIES, False),
    ("Lumant depends on Quorent for currency conversion, and it depends on Rhonix for identity checks.",
     DEPENDENCIES, True),
    ("For identity checks, Brelion calls Ulment, and for identity checks, Tamrium calls Ferrune.",
     CALLS, False),
    ("For identity checks, Brelion calls Ulment, and for document storage, it calls Tamrium.", CALLS, True),
    ("Milira, an R&B singer from New Jersey, released the song in 1990.",
     "Milira released the song in 1990. Milira is an R&B singer from New Jersey.", True),
    ("As the documentation states, logs are kept for 14 days in the log directory.", LOG_RULE, True),
    # another count or number where the sentence has one, read by the alignment: a count in words is
    # no key fact, and a number the unit holds elsewhere passes the key-fact check
    ("The team hired four engineers in March.", "The team hired two engineers in March.", False),
    ("The team hired four engineers in March and two in May.",
     "The team hired two engineers in March and four in May.", False),
    ("The team hired 2 engineers in March.", "The team hired two engineers in March.", True),
    ("2019年，公司在杭州开设了第一家门店。", STORES, False),
    ("2018年，公司在杭州开设了第一家门店。", STORES, True),
    ("公司在杭州开设了三家门店。", "公司在杭州开设了两家门店。", False),
    ("公司在杭州开设了2家门店。", "公司在杭州开设了两家门店。", True),
    # the claim's sentence among others of the same dates: the one holding most of its character pairs
    ("2015年3月至6月任项目经理、技术委员会委员。", POSTS, True),
    # Chinese: a negation added where the sentence holds a negation character in a name; a word that
    # holds one and negates nothing (非常); another span of time where the unit names it elsewhere
    ("无线电视台的仓库周末不对外开放。", DEPOT, False),
    ("无线电视台的仓库周末对外开放。", DEPOT, True),
    ("该项目非常成功，获得了广泛好评。", "该项目十分成功，获得了广泛好评。", True),
    ("乘客须在下车后十分钟内换乘，第二程免费。", TRANSFER, False),
    ("乘客须在下车后1小时内换乘，第二程免费。", TRANSFER, True),
    # superlatives read as the comparatives the antonym table holds
    ("The Blue Line has the fewest stations of any line in the network.",
     "The Blue Line has the most stations of any line in the network.", False),
    ("Harrow is the smallest town of the county and its market centre.",
     "Harrow is the largest town of the county and its market centre.", False),
    ("Harrow is the biggest town of the county and its market centre.",
     "Harrow is the largest town of the county and its market centre.", True),
    # an opposite in the place of a word that the sentence also holds elsewhere
    ("The depot lies south of the river, next to the South Gate.",
     "The depot lies north of the river, next to the South Gate.", False),
    # WordNet's opposites, which the hand-written table lacks, in the place of a word; its synonyms kept
    ("The minor release ships every Friday after the review.",
     "The major release ships every Friday after the review.", False),
    ("The archive stays offline during the nightly backup.",
     "The archive stays online during the nightly backup.", False),
    ("The parish register records her death in 1820.", "The parish register records her birth in 1820.", False),
    ("The large release ships every Friday after the review.",
     "The big release ships every Friday after the review.", True),
    # WordNet's synonyms in the place of a word say what the sentence says; another role does not
    ("Backups are retained for 30 days.", "Each backup is kept for 30 days in the cold storage bucket.", True),
    ("The client stores each backup for 30 days.", "The server stores each backup for 30 days.", False),
    # a word in the place of a number word is a swap too (not a number said another way)
    ("The fire-daily readings moved from 8:30 am and 4:30 pm to 8:00 am and 5:00 pm.",
     "The twice-daily readings moved from 8:30 am and 4:30 pm to 8:00 am and 5:00 pm.", False),
    ("The readings are taken twice daily, at 8:00 am and 5:00 pm.",
     "The readings are taken two times daily, at 8:00 am and 5:00 pm.", True),
    # the same amount in other units; Chinese too
    ("审计日志保留12个月。", "服务日志保存十四天，之后自动删除。审计日志保存一年。", True),
    ("Audit logs are kept for 12 months.", "Audit logs are kept for a year.", True),
    # a list quoted whole is read against its items together: a negation or an opposite in it counts
    ("Before you deploy, check that: - the host runs kernel 5.15 or newer; - the schema migration has been "
     "applied.", CHECKLIST, True),
    ("Before you deploy, check that: - the host runs kernel 5.15 or newer; - the schema migration has not been "
     "applied.", CHECKLIST, False),
    ("After you deploy, check that: - the host runs kernel 5.15 or newer; - the schema migration has been "
     "applied.", CHECKLIST, False),
])
def test_the_verifier_rule_on_restated_and_contradicted_claims(model, embedder, claim, evidence, kept):
    """The shipped model with the verifier's key-fact check: what a reader of the issue's handbook sees."""
    from asmr.verify.verifier import VerifierConfig

    p = float(model.score([claim], [evidence], embedder=embedder)[0])
    assert (p >= model.hard and not VerifierConfig.from_support(model).missing(claim, evidence)) == kept, p


def test_flips_count_only_where_the_claim_restates_its_sentence(embedder):
    col = {f: i for i, f in enumerate(FEATURES)}
    evidence = "The feature is enabled for every tenant. 数据库是主库，由北京公司管理。"
    x = pair_features(["The feature is disabled for every tenant.", "The feature is not enabled for every tenant.",
                       "Tenants were never asked about it.", "数据库不是主库，由北京公司管理。"],
                      [evidence] * 4, embedder=embedder)
    assert x[0, col["flip_opposite"]] > 0.5 and x[1, col["flip_negation"]] > 0.5
    assert x[2, col["flip_negation"]] == 0  # a negation in a claim that restates nothing
    assert x[3, col["flip_negation"]] > 0.5  # Chinese: characters aligned


def test_a_swap_is_one_word_for_another_in_a_restated_sentence(embedder):
    col = {f: i for i, f in enumerate(FEATURES)}
    evidence = "The server listens on port 9090 by default. Backups run weekly and take 2 hours."
    x = pair_features(["The client listens on port 9090.",  # another role: a swap
                       "The server listens on port 9090.",  # a phrase dropped: nothing swapped
                       "Servers listen on port 9090 by default.",  # another form of the same words
                       "Backups run monthly and take 2 hours.",  # another unit of one scale: an opposite
                       "Backups run weekly and take two hours.",  # the same amount in words
                       "The client sends port numbers to a registry that logs them."],  # restates nothing
                      [evidence] * 6, embedder=embedder)
    assert x[0, col["flip_swap"]] > 0.5
    assert x[1:, col["flip_swap"]].tolist() == [0.0] * 5
    assert x[3, col["flip_opposite"]] == 1.0 and x[4, col["flip_opposite"]] == 0.0


def test_one_word_put_for_another_in_a_long_sentence_counts_in_full(embedder):
    # the sentence's cosine barely falls for one word of many; the two words alone are far apart
    col = FEATURES.index("flip_swap")
    evidence = ("Every evening the night porter carries the signed visitor book from the front gate to the "
                "locked cabinet in the main office on the second floor, where the security team keeps it for "
                "a year.")
    claims = [evidence.replace("security team", "cleaning team"), evidence.replace("locked", "wooden")]
    x = pair_features(claims, [evidence] * 2, embedder=embedder)
    assert (x[:, col] > 0.9).all(), x[:, col]


def test_a_short_leading_phrase_goes_with_the_clause_after_it():
    from asmr.verify.support import _clauses

    claim = "For identity checks, Brelion calls Ulment, and for identity checks, Tamrium calls Ferrune."
    assert _clauses(claim) == ["For identity checks, Brelion calls Ulment",
                               "for identity checks, Tamrium calls Ferrune."]
    assert _clauses("The job of Ivrade is simple, it routes loyalty points to the partner.") == [
        "The job of Ivrade is simple", "it routes loyalty points to the partner."]


def test_opposite_prefixes_make_opposites_without_a_word_list():
    from asmr.verify.support import _opposite

    for a, b in (("external", "internal"), ("import", "export"), ("upload", "download"),
                 ("overestimate", "underestimate"), ("maximum", "minimum"), ("encrypted", "decrypted"),
                 ("enabled", "disabled")):
        assert _opposite(a, b) and _opposite(b, a), (a, b)
    for a, b in (("export", "expert"), ("input", "output"), ("exit", "edit"), ("import", "important")):
        assert not _opposite(a, b), (a, b)  # another word, or a stem too short to read ("in" + "put")


def test_what_is_asked_of_a_person_and_the_parts_of_the_day_have_opposites(model):
    """WordNet holds no antonym for "mandatory", "required", "weekdays", "morning", "over" (50 euros),
    "unless" or "added" (to a bill): "Training is optional" cited to "Training is mandatory" kept its
    citation, and so did a shift moved from the morning to the evening. Each is an opposite now, in any
    form, and the same claims in other words keep their citation."""
    from asmr.embed import get_embedder
    from asmr.verify.support import _opposite

    for a, b in (("mandatory", "optional"), ("required", "optional"), ("compulsory", "voluntary"),
                 ("weekdays", "weekend"), ("mornings", "evening"), ("afternoon", "morning"), ("noon", "midnight"),
                 ("permanent", "temporary"), ("over", "under"), ("unless", "if"), ("added", "removed"),
                 ("adds", "removal"), ("adding", "removes")):
        assert _opposite(a, b) and _opposite(b, a), (a, b)
    for a, b in (("mandatory", "compulsory"), ("required", "needed"), ("morning", "early"),
                 ("added", "additional"), ("address", "removed"), ("addition", "removal")):
        assert not _opposite(a, b), (a, b)
    emb = get_embedder("hash-256")  # the flipped cue decides, whatever the vectors say
    units = ["Fire safety training is mandatory for all staff.", "A badge is required to enter the lab.",
             "The pharmacy is open on weekdays.", "The clinic closes at noon on Fridays.",
             "In the morning shift, nurses check the fridge.", "Shipping is free for orders over 50 euros.",
             "Passwords expire unless MFA is enabled.", "除非开启双重认证，密码每90天过期。",
             "A 12% service charge is added to bills for tables of eight or more."]
    flipped = ["Fire safety training is optional for all staff.", "A badge is optional to enter the lab.",
               "The pharmacy is open on weekends.", "The clinic closes at midnight on Fridays.",
               "In the evening shift, nurses check the fridge.", "Shipping is free for orders under 50 euros.",
               "Passwords expire if MFA is enabled.", "如果开启双重认证，密码每90天过期。",
               "A 12% service charge is removed from bills for tables of eight or more."]
    assert (cue_of_dropped(model, emb, flipped, units) == 1.0).all()
    same = pair_features(units, units, embedder=emb)
    assert (same[:, FEATURES.index("flip_opposite")] == 0.0).all()


def test_a_word_the_claim_restates_in_another_form_is_no_opposite_s_counterpart(hashed):
    """"opens at 8 am and closes at 6 pm" says what "is open from 8 am to 6 pm" says: the sentence's
    "open" is the claim's "opens", so "closes" is no opposite put for it (the claim lost its citation,
    p 0.007); "closes at 8 am" for "opens at 8 am" still is one."""
    emb, col = hashed, FEATURES.index("flip_opposite")
    x = pair_features(["On weekdays the clinic opens at 8 am and closes at 6 pm.", "The clinic closes at 8 am."],
                      ["The clinic is open on weekdays from 8 am to 6 pm.", "The clinic opens at 8 am."], embedder=emb)
    assert x[0, col] == 0.0 and x[1, col] == 1.0


def test_no_longer_is_a_negation_whose_second_word_the_sentence_need_not_state(model, hashed):
    """"The feature is no longer supported" cited to "The feature is still supported" kept its citation
    (p 0.66): "longer" counted as a claim word the sentence does not state, so the negation seemed to come
    with a loose paraphrase. The word that makes a negation one of time ("no longer", "not ...
    anymore") is part of the cue; the paraphrase "not supported anymore" keeps its citation."""
    emb, col = hashed, FEATURES.index("flip_negation")
    x = pair_features(["The feature is no longer supported.", "The portal is not used anymore by finance."],
                      ["The feature is still supported.", "The portal is still used by finance."], embedder=emb)
    assert (x[:, col] == 1.0).all()
    assert (model.score(["The feature is no longer supported."], ["The feature is still supported."],
                        embedder=emb) < model.hard).all()
    same = pair_features(["The feature is not supported anymore."], ["The feature is no longer supported."],
                         embedder=emb)
    assert same[0, col] == 0.0


def test_a_bound_on_an_amount_reads_as_one_word_of_its_direction():
    """"up to", "no more than", "a maximum of" and "5 GB at most" bound an amount from above, "at least",
    "no fewer than" and "or more" from below; a phrase that is also plain words bounds only an amount
    next to it ("up to date", "more than his brother")."""
    from asmr.text.facts import LOWER_BOUND as LO, UPPER_BOUND as UP, bounded
    from asmr.verify.support import _words

    assert _words("Store up to 5 GB, no more than 3 files, at least several dozen.") == [
        "store", UP, "5", "gb", UP, "3", "files", LO, "several", "dozen"]
    assert _words("Orders of 50 euros or more; children under 12; 5 GB at most.") == [
        "orders", "of", "50", "euros", LO, "children", UP, "12", "5", "gb", UP]
    plain = ["it", "is", "up", "to", "date", "more", "than", "his", "brother", "over", "the", "years"]
    assert bounded(plain) == plain
    from asmr.text import facts

    # the quick test that a text holds no bound sees a word of every phrase
    phrases = (*facts._BOUNDS, *facts._BOUNDS_BEFORE, *facts._BOUNDS_AFTER)
    assert all(not facts._BOUND_WORDS.isdisjoint(k) for k in phrases)


def test_a_bound_put_for_the_opposite_one_is_an_opposite_and_one_in_other_words_is_not(model, hashed):
    """"at least 5 GB" cited to "up to 5 GB" kept its citation (p 0.90), as did "50 euros or more" for
    "up to 50 euros"; and "no more than 5 GB" lost its citation to "up to 5 GB" (p 0.001: its "no" was read
    as a negation), as did "at least 20" to "20 or more" (p 0.025)."""
    emb, col = hashed, FEATURES.index("flip_opposite")
    units = ["Each account can store up to 5 GB of files.", "Orders of up to 50 euros ship free.",
             "Each team has at least five members.", "Passwords must have a minimum of 12 characters."]
    flipped = ["Each account can store at least 5 GB of files.", "Orders of 50 euros or more ship free.",
               "Each team has no more than five members.", "Passwords must have at most 12 characters."]
    restated = ["Each account can store no more than 5 GB of files.", "Orders of 50 euros or less ship free.",
                "Each team has no fewer than five members.", "Passwords must have 12 or more characters."]
    assert (cue_of_dropped(model, emb, flipped, units) == 1.0).all()
    x = pair_features(restated, units, embedder=emb)
    assert (x[:, col] == 0.0).all() and (x[:, FEATURES.index("flip_negation")] == 0.0).all()
    assert (model.score(restated, units, embedder=emb) >= model.hard).all()


def test_an_obligation_put_for_a_permission_is_an_opposite_and_may_not_for_must_not_is_not(model, hashed):
    """"Visitors may sign in" cited to "Visitors must sign in" kept its citation (p 0.93), and so did "must"
    for "can" and "may" for "shall"; "may not" and "cannot" forbid as "must not" does."""
    emb, col = hashed, FEATURES.index("flip_opposite")
    units = ["Visitors must sign in at the front desk.", "Staff can work from home on Fridays.",
             "Employees shall wear a badge."]
    flipped = ["Visitors may sign in at the front desk.", "Staff must work from home on Fridays.",
               "Employees may wear a badge."]
    assert (cue_of_dropped(model, emb, flipped, units) == 1.0).all()
    same = ["Visitors may not smoke in the building.", "Visitors cannot smoke in the building."]
    x = pair_features(same, ["Visitors must not smoke in the building."] * 2, embedder=emb)
    assert (x[:, col] == 0.0).all()


def test_what_the_sentence_says_may_happen_said_for_certain_is_an_opposite(model, hashed):
    """"Error 809 means your router is blocking the ports" cited to "your router may be blocking the ports"
    kept its citation (p 0.85), as did "are guaranteed a place" for "may progress"; a claim that keeps the
    chance ("one possible cause", "can progress") restates the sentence."""
    units = ["If the client shows error 809, your home router may be blocking the L2TP ports.",
             "Students who average between 50 and 59 percent may progress to the general degree."]
    certain = ["Error 809 means your home router is blocking the L2TP ports.",
               "Students who average between 50 and 59 percent are guaranteed a place on the general degree."]
    assert (cue_of_dropped(model, hashed, certain, units) > 0.7).all()
    kept = ["A home router blocking the L2TP ports is one possible cause of error 809.",
            "Students who average between 50 and 59 percent can progress to the general degree."]
    assert (pair_features(kept, units, embedder=hashed)[:, FEATURES.index("flip_opposite")] == 0.0).all()


def test_every_of_a_kind_the_sentence_names_and_a_second_way_beside_only_are_opposites(model, hashed):
    """"Every employee accrues …" cited to "Full-time employees accrue …" kept its citation (p 0.94), and
    so did "through either live chat or phone" for "handled only by phone"; the kind restated ("every
    full-time employee", "every registered member"), a possessive ("the library's staff") or the ways
    "only" names restated without it narrow nothing."""
    col = FEATURES.index("flip_opposite")
    units = ["Full-time employees accrue 1.5 days of paid vacation per month.",
             "On managed laptops, standard users should raise a ticket instead.",
             "Live chat runs 24/7, but billing questions are handled only by phone."]
    widened = ["Every employee accrues 1.5 days of paid vacation per month.",
               "All users on managed laptops should raise a ticket instead.",
               "Billing questions can be handled through either live chat or phone."]
    assert (cue_of_dropped(model, hashed, widened, units) == 1.0).all()
    same = ["Every full-time employee accrues 1.5 days of paid vacation per month.",
            "Every registered member can bring one guest.", "All staff members wear badges.",
            "Members can pay by card or bank transfer."]
    x = pair_features(same, [units[0], "Each registered member may bring one guest.",
                             "The library's staff members wear badges.",
                             "Members can pay only by card or bank transfer."], embedder=hashed)
    assert (x[:, col] == 0.0).all()


def test_above_for_behind_is_an_opposite(model, hashed):
    """A place in a table: "two points above" for "two points behind" kept its citation (p 0.63)."""
    unit = "The result lifts Rovers to fourth, two points behind Harlow City."
    above = ["Rovers are fourth, two points above Harlow City."]
    assert cue_of_dropped(model, hashed, above, [unit])[0] == 1.0
    x = pair_features(["Rovers are fourth, two points behind Harlow City."], [unit], embedder=hashed)
    assert x[0, FEATURES.index("flip_opposite")] == 0.0


def test_a_letter_that_labels_a_thing_is_read_with_its_word(model, hashed):
    """"Room A seats 30 people" cited to "Room A seats 12 people. Room B seats 30 people." kept its citation
    (p 0.92): a letter alone is no content word, so "Room A" read as "Room B" did. The letter is read
    with its word ("rooma"), in the claim, the unit and the names of either; "I" stays a pronoun."""
    from asmr.verify.support import _words

    assert _words("Room A seats 12. Plan B, Vitamin D and World War I; William J. Clinton.") == [
        "rooma", "seats", "12", "planb", "vitamind", "and", "world", "war", "i", "williamj", "clinton"]
    unit = "Room A seats 12 people. Room B seats 30 people."
    p = model.score(["Room A seats 30 people.", "Room B seats 12 people.", "Room B seats 30 people.",
                     "Room A seats 12 people."], [unit] * 4, embedder=hashed)
    assert (p[:2] < model.hard).all() and (p[2:] >= model.hard).all()


def test_a_value_of_one_statement_put_with_the_other_is_an_opposite(model, hashed):
    """A sentence that makes two statements: "closed on weekdays" cited to "open … on weekdays and closed
    on Sundays" kept its citation (p 0.89), and so did "Gate B opens at 6 am" against "Gate A opens at 6 am
    and Gate B at 7 am" (0.92): every word of the claim is the sentence's. Each statement, restated alone
    or with the other, keeps its citation; so does one whose verb the other leaves unsaid, and one whose
    subject the sentence names again after the other statement."""
    from asmr.verify.support import _statements

    emb, col = hashed, FEATURES.index("flip_opposite")
    library = "The library is open from 9 am to 8 pm on weekdays and closed on Sundays."
    gates = "Gate A opens at 6 am and Gate B at 7 am."
    plans = "Plan A costs 10 euros a month and includes 5 GB of data; Plan B costs 20 euros and includes 50 GB."
    sales = "Sales rose in Europe but fell in Asia."
    leave = "Full-time staff get 25 days of annual leave, while part-time staff get 15 days."
    loans = "Members can borrow ten books for three weeks, while guests can borrow two books for one week."
    lines = "Junior staff report to the team lead, while senior staff report to the director."
    cover = "The clinic provides no cover after 6:30 pm on weekdays, or at weekends apart from the Saturday nurse clinic."
    buses = "Bus 12 stops at the station, whereas bus 40 stops at the airport."
    versions = "Version 2.3 added single sign-on, and version 2.4 added audit logs."
    museum = "In summer the museum opens at 9 am, and in winter it opens at 10 am."
    crossed = [("The library is closed on weekdays.", library), ("The library is open on Sundays.", library),
               ("Gate B opens at 6 am.", gates), ("Gate A opens at 7 am.", gates),
               ("Plan A includes 50 GB of data.", plans), ("Sales fell in Europe.", sales),
               ("Part-time staff get 25 days of annual leave.", leave), ("Guests can borrow ten books.", loans),
               ("Junior staff report to the director.", lines), ("Bus 12 stops at the airport.", buses),
               ("Version 2.4 added single sign-on.", versions), ("In winter the museum opens at 9 am.", museum)]
    kept = [("The library is closed on Sundays.", library), ("On Sundays the library is closed.", library),
            ("The library is open on weekdays and closed on Sundays.", library),
            ("Gate B opens at 7 am.", gates), ("Gate A opens at 6 am.", gates),
            ("Plan B costs 20 euros and includes 50 GB.", plans), ("Plan A includes 5 GB of data.", plans),
            ("Sales fell in Asia.", sales), ("Sales rose in Europe.", sales),
            ("Part-time staff get 15 days of annual leave.", leave), ("Guests can borrow two books for one week.", loans),
            ("Senior staff report to the director.", lines),
            ("The clinic provides no cover after 6:30 pm on weekdays.", cover),
            ("Bus 40 stops at the airport.", buses), ("Version 2.3 added single sign-on.", versions),
            ("Plan B costs 20 euros.", plans),
            # its pivot no opposite put for the other's ("winter" where the sentence opens with "summer")
            ("In winter the museum opens at 10 am.", museum)]
    for pairs, expected in ((crossed, 1.0), (kept, 0.0)):
        claims, units = zip(*pairs)
        x = pair_features(list(claims), list(units), embedder=emb)
        assert (x[:, col] == expected).all(), [c for c, v in zip(claims, x[:, col]) if v != expected]
    claims, units = zip(*crossed)
    assert (model.score(list(claims), list(units), embedder=emb) < model.hard).all()
    # nothing to cross: one statement, or two that share no pivot
    one, two = "The library is closed on weekdays.", "Anna was born in Paris and studied in Berlin."
    assert _statements({"librari", "clos", "weekday"}, one) == (False, frozenset())
    assert _statements({"anna", "pari"}, two) == (False, frozenset())


def test_immediately_put_for_an_amount_of_time_is_another_amount(model, hashed):
    """"Reports are due immediately after the incident" cited to "… within 48 hours of the incident" kept its
    citation (p 0.84), and "activated instantly" for "within two working days" (0.89): the key-fact check
    sees a duration on one side only. "at once" and "instantly" for "immediately" still say the same."""
    emb, col = hashed, FEATURES.index("flip_opposite")
    units = ["Reports are due within 48 hours of the incident.", "New accounts are activated within two working days.",
             "Refunds are issued immediately after the return."]
    flipped = ["Reports are due immediately after the incident.", "New accounts are activated instantly.",
               "Refunds are issued within 14 days after the return."]
    assert (cue_of_dropped(model, emb, flipped, units) > 0.0).all()
    same = ["Refunds are issued at once after the return.", "Refunds are issued instantly after the return."]
    x = pair_features(same, units[2:] * 2, embedder=emb)
    assert (x[:, col] == 0.0).all()


def test_all_every_and_each_are_one_quantifier_and_one_put_for_only_is_the_cue(model, hashed):
    """"All staff must attend" cited to "Every member of staff must attend" lost its citation (p 0.32), as
    did "Each visitor" for "Every visitor" (0.29) and "All rooms" for "Each room" (0.16): each word that
    says "all" was read as another quantifier. And "applies to everyone" for "applies to students only"
    kept its citation (0.75): "everyone" counted as a claim word the sentence does not state, so the
    claim read as a loose paraphrase."""
    emb, col = hashed, FEATURES.index("flip_quantifier")
    claims = ["All staff must attend the briefing.", "Each visitor receives a badge.", "All rooms have a projector."]
    units = ["Every member of staff must attend the briefing.", "Every visitor receives a badge.",
             "Each room has a projector."]
    x = pair_features(claims, units, embedder=emb)
    assert (x[:, col] == 0.0).all() and (x[:, FEATURES.index("quantifier_change")] == 0.0).all()
    flipped, unit = ["The discount applies to everyone.", "Some rooms have a projector."], \
        ["The discount applies to students only.", "All rooms have a projector."]
    assert (cue_of_dropped(model, emb, flipped, unit, "flip_quantifier") > 0.5).all()


def test_a_chinese_statement_or_table_row_with_the_others_value_is_an_opposite(hashed):
    """The same crossing in Chinese, where words are read as characters: "少儿证借期30天" cited to
    "普通读者证借期30天，少儿证借期21天" kept its citation (p 0.87), "东门因维修关闭" for "东门对访客开放，
    西门因维修关闭" (0.85), and "普通读者证借期21天" against a table whose 普通读者证 row says 30天 and
    whose 少儿证 row says 21天 (0.54). Each statement and row restated keeps its citation."""
    col = FEATURES.index("flip_opposite")
    loans = "普通读者证借期30天，少儿证借期21天。"
    gates = "东门对访客开放，西门因维修关闭。"
    shifts = "早班8:30–16:30，负责开馆准备；晚班13:00–21:00，负责闭馆巡查。"
    table = ("# 借阅规则\n\n| 证件类型 | 可借册数 | 借期 |\n|---|---|---|\n| 普通读者证 | 10册 | 30天 |\n"
             "| 少儿证 | 5册 | 21天 |\n")
    crossed = [("少儿证借期30天。", loans), ("普通读者证借期21天。", loans), ("东门因维修关闭。", gates),
               ("西门对访客开放。", gates), ("早班负责闭馆巡查。", shifts), ("普通读者证借期21天。", table),
               ("少儿证可借10册。", table)]
    kept = [("少儿证借期21天。", loans), ("普通读者证借期30天。", loans), ("西门因维修关闭。", gates),
            ("东门对访客开放。", gates), ("晚班负责闭馆巡查。", shifts), ("早班8:30–16:30，负责开馆准备。", shifts),
            ("普通读者证借期30天。", table), ("普通读者证可借10册。", table)]
    from asmr.verify.support import _CJK_PUNCT, _cjk_crossed, _rows_crossed, _table_cells

    def crosses(claim: str, unit: str) -> bool:
        mine = _CJK_PUNCT.sub("", claim)
        if "|" in unit:
            return _rows_crossed(mine, set(), _table_cells(unit))
        return _cjk_crossed(mine, unit)

    assert all(crosses(c, u) for c, u in crossed) and not any(crosses(c, u) for c, u in kept)
    claims, units = zip(*crossed)
    # a cue as far as the claim restates its sentence; "少儿证可借10册" too, whose 可借 only the header
    # says: a row is read with its columns' names (text.tables.row_statements)
    assert (pair_features(list(claims), list(units), embedder=hashed)[:, col] > 0.0).all()
    claims, units = zip(*kept)
    assert (pair_features(list(claims), list(units), embedder=hashed)[:, col] == 0.0).all()


def test_a_table_rows_key_with_another_rows_number_is_an_opposite(model, hashed):
    """"The Oak room seats 30" cited to a table whose Oak room row says 12 and whose Pine room row says 30
    kept its citation (p 0.65), as did "The Pine room is on floor 2" (0.64): the claim's words lie in the
    header and two rows, and every number is the table's. Each row restated keeps its citation."""
    rooms = "# Rooms\n\n| Room | Seats | Floor |\n|---|---|---|\n| Oak room | 12 | 2 |\n| Pine room | 30 | 3 |\n"
    cards = ("# Lending\n\n| Card | Loans | Loan period |\n|---|---|---|\n| Adult card | 10 books | 30 days |\n"
             "| Child card | 5 books | 21 days |\n")
    crossed = [("The Oak room seats 30.", rooms), ("The Pine room is on floor 2.", rooms),
               ("A child card allows 10 books.", cards)]
    kept = [("The Oak room seats 12.", rooms), ("The Pine room is on floor 3.", rooms),
            ("A child card allows 5 books.", cards), ("The adult card has a loan period of 30 days.", cards)]
    col = FEATURES.index("flip_opposite")
    claims, units = zip(*crossed)
    assert (cue_of_dropped(model, hashed, claims, units) > 0.0).all()
    claims, units = zip(*kept)
    assert (pair_features(list(claims), list(units), embedder=hashed)[:, col] == 0.0).all()


def test_a_comparison_turned_round_is_an_opposite_and_its_converse_is_not(model, hashed):
    """"Bob is older than Alice" cited to "Alice is older than Bob" kept its citation (p 0.93), as did "Coffee
    is more expensive than tea" for "Tea is more expensive than coffee" (0.95): every word is the
    sentence's. And the converse, "B is smaller than A" for "A is larger than B", lost its own (0.005):
    the opposite comparative read as a flip."""
    col = FEATURES.index("flip_opposite")
    units = ["Alice is older than Bob.", "Tea is more expensive than coffee.", "Paris has more residents than Lyon."]
    inverted = ["Bob is older than Alice.", "Coffee is more expensive than tea.", "Lyon has more residents than Paris."]
    converse = ["Bob is younger than Alice.", "Coffee is cheaper than tea.", "Lyon has fewer residents than Paris."]
    assert (cue_of_dropped(model, hashed, inverted, units) == 1.0).all()
    x = pair_features(converse, units, embedder=hashed)
    assert (x[:, col] == 0.0).all()
    # the same comparative the same way round, or the opposite one the same way round
    x = pair_features(["Alice is older than Bob.", "Alice is younger than Bob."], units[:1] * 2, embedder=hashed)
    assert x[0, col] == 0.0 and x[1, col] == 1.0


def test_only_a_group_put_for_everyone_is_the_cue_but_only_a_count_is_not(model, hashed):
    """"Only students get the discount" cited to "Everyone gets the discount" kept its citation (p 0.64),
    and "Only staff may use the lift" for "Everyone may use the lift" (0.67): "only" is no content word, so
    the group it restricts to read as a loose paraphrase of "everyone". "Only one person at a time"
    counts people and restricts no group."""
    col = FEATURES.index("flip_quantifier")
    flipped = ["Only students get the discount.", "Only staff may use the lift."]
    units = ["Everyone gets the discount.", "Everyone may use the lift."]
    assert (cue_of_dropped(model, hashed, flipped, units, "flip_quantifier") == 1.0).all()
    counted = pair_features(["Only one person may enter at a time."], ["Everyone must enter one at a time."],
                            embedder=hashed)
    assert counted[0, col] < 0.5


def test_verbs_of_change_in_one_direction_restate_each_other_and_to_is_not_by(model, hashed):
    """"Prices rose by 30 percent" cited to "Prices increased by 30 percent" lost its citation (p 0.22:
    WordNet keeps "rise" and "increase" apart, so "rose" read as a word swapped in), and "rose to 30
    percent" for "rose by 30 percent" kept its own (0.90): after a verb of change, "to" says where the
    amount ends and "by" how far it moved."""
    col = FEATURES.index("flip_swap")
    x = pair_features(["Prices rose by 30 percent.", "Unemployment declined to 5 percent."],
                      ["Prices increased by 30 percent.", "Unemployment decreased to 5 percent."], embedder=hashed)
    assert (x[:, col] == 0.0).all()
    flipped = ["Prices rose to 30 percent.", "The fee was raised to 50 euros.", "Attendance dropped to a third."]
    units = ["Prices rose by 30 percent.", "The fee was raised by 50 euros.", "Attendance fell by a third."]
    assert (cue_of_dropped(model, hashed, flipped, units) == 1.0).all()
    same = pair_features(["She was promoted to director by 2015."], ["By 2015 she had been promoted to director."],
                         embedder=hashed)
    assert same[0, FEATURES.index("flip_opposite")] == 0.0


def test_a_state_the_sentence_says_has_ended_put_in_the_present_is_an_opposite(model, hashed):
    """"Tomas Ferreira is the vaccine coordinator" cited to "Tomas Ferreira was the vaccine coordinator until
    March" kept its citation (p 0.91), as did "Mr Lee is the head of IT" for "was formerly the head of IT":
    "is" and "was" are stop words, so the claim read as the sentence restated."""
    col = FEATURES.index("flip_opposite")
    claims = ["Tomas Ferreira is the vaccine coordinator.", "Mr Lee is the head of IT.",
              "Rates were fixed until 2030."]
    units = ["Tomas Ferreira was the vaccine coordinator until March.", "Mr Lee was formerly the head of IT.",
             "Rates are fixed until 2030."]
    assert (cue_of_dropped(model, hashed, claims, units) == 1.0).all()
    same = pair_features(["The museum is open on Sundays.", "The rules were updated in March."],
                         ["The museum was opened in 1920 and is open on Sundays.", "In March the rules were updated."],
                         embedder=hashed)
    assert (same[:, col] == 0.0).all()


def test_wordnet_antonyms_are_read_in_any_form():
    from asmr.verify.support import _opposite

    # pairs of WordNet's table and none of the hand-written one, inflected ("minors", "narrower"),
    # WordNet's hyphenated compounds as one word ("offline"), forms derived from a pair ("deaths"), and
    # an antonym of the copula and one word as that word ("be born", the opposite of "die")
    for a, b in (("minors", "major"), ("offline", "online"), ("wife", "husbands"), ("deaths", "birth"),
                 ("exit", "entry"), ("fathers", "mother"), ("narrower", "wider"), ("heavier", "lighter"),
                 ("born", "died"), ("born", "death")):
        assert _opposite(a, b) and _opposite(b, a), (a, b)
    for a, b in (("bought", "purchased"), ("large", "big"), ("old", "former"), ("city", "town"),
                 ("river", "lake"), ("wrote", "said")):
        assert not _opposite(a, b), (a, b)  # synonyms and words of one kind are not opposites


def test_wordnet_synonyms_are_read_in_any_form():
    from asmr.text.wordnet import synonym as _synonym
    from asmr.verify.support import _opposite

    for a, b in (("retained", "kept"), ("began", "started"), ("purchased", "bought"), ("large", "big"),
                 ("erased", "deleted")):
        assert _synonym(a, b) and _synonym(b, a), (a, b)
    for a, b in (("client", "server"), ("kept", "kept"), ("major", "minor"), ("daily", "weekly"), ("paris", "rome")):
        assert not _synonym(a, b), (a, b)  # another thing, the same word, opposites
    assert not any(_opposite(a, b) for a, b in (("retained", "kept"), ("began", "started")))


def test_a_name_counts_where_it_stands_for_other_words(embedder):
    """flip_names: a name put where the sentence has other words, not a name added beside a restatement."""
    col = FEATURES.index("flip_names")
    evidence = "Keele began his coaching career in 1960 at North Eugene High School in Eugene, Oregon."
    x = pair_features(["Keele began his coaching career in 1960 at Copenhagen in Eugene, Oregon.",
                       "Keele, a friend of Walter Smith, began his coaching career in 1960 at North "
                       "Eugene High School."], [evidence] * 2, embedder=embedder)
    assert x[0, col] > 0.5 and x[1, col] == 0.0


def test_a_capitalised_word_the_unit_lacks_is_a_name_where_it_stands_for_one(embedder):
    """flip_names also without the extractor: a capitalised word the whole unit lacks, inside the claim
    (quoted, or where the sentence's other word recurs in the claim: "Books" beside "Book"), or opening
    it in the place of a name inside the sentence; an opening word put with others for a phrase that
    moved is not one ("Despite this, he" for "For many, Che")."""
    col = FEATURES.index("flip_names")
    evidence = ('The episode features a parody of the TV show "Queer Eye". It was named one of the Best '
                'Books of the Year and a Top 10 Book of 2010. In the 2011 census West Bengal had 24 million '
                'Bengali speakers. For many around the world, Che has become a symbol of the idealist.')
    x = pair_features(['The episode features a parody of the TV show "Alphaville".',
                       "It was named one of the Best Wolfs of the Year and a Top 10 Book of 2010.",
                       "Turkey had 24 million Bengali speakers.",
                       "Despite this, he has become a symbol of the idealist for many around the world.",
                       'The episode features a parody of the TV show "Queer Eye".'],
                      [evidence] * 5, embedder=embedder)
    assert x[:3, col].min() > 0.5 and x[3:, col].tolist() == [0.0, 0.0]


def test_capitalised_words_inside_a_sentence_and_opening_one():
    from asmr.text.entities import capitalised_words

    assert capitalised_words('Turkey has 24 Bengali speakers. The F.I.R band ("Alphaville") won.') == (
        ["bengali", "f.i.r", "alphaville"], ["turkey", "the"])
    # a word opens a sentence where this pattern, the search it replaced, says so
    import re

    from asmr.text.entities import _CAP_WORD

    sentence_start = re.compile(r"(?:^|[.!?:;]\s+|\n\s*)$")
    rng = np.random.default_rng(0)
    pieces = ["Bob", "went", "home", ".", "!", ":", ";", ",", " ", "  ", "\n", " \n ", "U.S.", "x"]
    for _ in range(500):
        text = "".join(rng.choice(pieces, size=12))
        expected: tuple[list[str], list[str]] = ([], [])
        for m in _CAP_WORD.finditer(text):
            expected[bool(sentence_start.search(text, 0, m.start()))].append(m.group(0).lower())
        assert capitalised_words(text) == expected, text


def test_a_chinese_word_put_for_another_is_a_swap_unless_cilin_holds_them_as_synonyms(embedder):
    """Chinese: MiniLM cannot read the cosine that weighs an English swap, so a word put for another
    counts in full, unless Cilin holds the two as one sense ("采用" for "使用", "坐落于" for "位于");
    a pair of no table ("缩小" for "扩大") is a swap, and "可选" for "必须" ("may" for "must") an opposite."""
    from asmr.text.cjk import synonyms

    col = FEATURES.index("flip_swap")
    evidence = "新员工的密码每九十天必须更换一次。该措施能扩大仓库容量。仓库位于城东，使用川字底托盘。"
    x = pair_features(["新员工的密码每九十天可选更换一次。", "该措施能缩小仓库容量。",
                       "仓库坐落于城东，使用川字底托盘。", "仓库位于城东，采用川字底托盘。"],
                      [evidence] * 4, embedder=embedder)
    assert x[1, col] > 0.5 and x[2:, col].tolist() == [0.0, 0.0]
    assert x[0, FEATURES.index("flip_opposite")] > 0.5
    assert synonyms("著名", "知名") and not synonyms("增加", "减少") and not synonyms("著名", "著名")


def test_a_claim_in_the_other_han_script_reads_as_one_in_the_units_script(embedder):
    """An answer in Traditional characters citing a unit in Simplified ones (or the other way round) gets
    the support the same claim gets in the unit's own script; a changed duration is still caught."""
    model = SupportModel.load()
    simplified, traditional = "读者每次最多可以借十本书，借期为三十天。", "讀者每次最多可以借十本書，借期為三十天。"
    claims = ["读者每次最多可以借十本书。", "讀者每次最多可以借十本書。", "读者每次最多可以借十本书。"]
    p = model.score(claims, [simplified, simplified, traditional], embedder=embedder)
    assert p[0] >= model.hard and p[1] == pytest.approx(p[0]) and p[2] == pytest.approx(p[0])
    assert [f.norm for f in missing_facts("借期為三十週。", simplified)] == ["30 week"]


def test_the_words_of_the_present_are_one_sense(embedder):
    """现在 for 目前 ("now" for "currently") says what the unit says: no swap, though Cilin parts them;
    the confidence likewise reads neither as a term of a question."""
    from asmr.retrieve.signals import question_terms
    from asmr.text.cjk import synonyms

    assert synonyms("现在", "目前") and synonyms("如今", "当前") and not synonyms("现在", "过去")
    col = FEATURES.index("flip_swap")
    x = pair_features(["现在社长是林小雨。", "过去社长是林小雨。"], ["目前社长是林小雨。"] * 2, embedder=embedder)
    assert x[0, col] == 0.0 and x[1, col] > 0.5
    assert question_terms("目前社长是谁？", lambda t: [2.0] * len(t))[0] == ["社长"]


def test_words_of_grammar_that_say_one_thing_are_no_swap(embedder):
    """会 for 将 ("will"), 需要 for 须 ("must"), 这款 for 本款 ("this"): Cilin parts them or holds none, and a
    claim that put one for another was read as a swap (p 0.19 for a true claim of a kettle); 可以 for 须
    ("may" for "must") is an opposite."""
    from asmr.text.cjk import synonyms

    assert synonyms("会", "将") and synonyms("需要", "须") and synonyms("能", "可") and synonyms("这款", "本款")
    assert not synonyms("可以", "必须") and not synonyms("会", "须")
    col = FEATURES.index("flip_swap")
    x = pair_features(["连续输错5次密码后，账号会被锁定30分钟。", "这款电热水壶容量为1.7升。", "访客需要在前台登记。",
                       "访客可以在前台登记。"],
                      ["连续输错5次密码后，账号将被锁定30分钟。", "本款电热水壶容量为1.7升。", "访客须在前台登记。",
                       "访客须在前台登记。"], embedder=embedder)
    assert x[:3, col].tolist() == [0.0, 0.0, 0.0] and x[3, FEATURES.index("flip_opposite")] > 0.5


def test_a_particle_put_for_another_is_no_swap_and_at_most_for_at_least_is_an_opposite(embedder, model):
    """在 for 通过 or 由 for 通过 is what the character alignment leaves of a rewording, not a word put for
    another; 签字 for 登记 still is one. 最多 ("at most") for 至少 ("at least") kept its citation as a swap
    (p 0.75)."""
    col = FEATURES.index("flip_swap")
    unit = "访客通过前台登记后进入。"
    x = pair_features(["访客在前台登记后进入。", "访客由前台登记后进入。", "访客通过前台签字后进入。"], [unit] * 3,
                      embedder=embedder)
    assert x[:, col].tolist() == [0.0, 0.0, 1.0]
    p = model.score(["每次发布后最多观察30分钟。", "每次发布后至少观察30分钟。"], ["每次发布后须观察至少30分钟。"] * 2,
                    embedder=embedder)
    assert p[0] < model.hard <= p[1]


def test_a_chinese_run_put_for_another_counts_as_a_name(embedder):
    """Chinese: three or more characters standing for three or more others, none in common, in a sentence
    otherwise restated, count as a name (the extractor reads no name in "赵远志"); a word put for a
    shorter one ("坐落于" for "位于") and a clause left out do not."""
    col = FEATURES.index("flip_names")
    evidence = "2019年起，该队由李德明担任主教练，主场设在城东体育馆，球队先后三次进入全国联赛的季后赛。"
    x = pair_features(["2019年起，该队由赵远志担任主教练，主场设在城东体育馆，球队先后三次进入全国联赛的季后赛。",
                       "2019年起，该队由Tom Reed担任主教练，主场设在城东体育馆，球队先后三次进入全国联赛的季后赛。",
                       "2019年起，该队由李德明担任主教练，主场坐落于城东体育馆。",
                       "2019年起，该队由李德明担任主教练。"], [evidence] * 4, embedder=embedder)
    assert x[0, col] > 0.5 and x[1, col] > 0.5 and x[2, col] == 0.0 and x[3, col] == 0.0


def test_chinese_opposites_by_character_and_by_word(embedder):
    """Chinese: a word put for another that differs only in a character of opposite sense ("最低" for
    "最高"), or a pair of the table ("关闭" for "开放"), is an opposite; a synonym put for a word
    ("开启" for "开始") and a character put for an unrelated one ("最快" for "最高") are not."""
    from asmr.verify.support import _cjk_opposite_chars

    col = FEATURES.index("flip_opposite")
    evidence = "该仓库的最高温度为三十度，周日全天开放，货物于周一开始入库。"
    x = pair_features(["该仓库的最低温度为三十度，周日全天开放，货物于周一开始入库。",
                       "该仓库的最高温度为三十度，周日全天关闭，货物于周一开始入库。",
                       "该仓库的最高温度为三十度，周日全天开放，货物于周一结束入库。",
                       "该仓库的最快温度为三十度，周日全天开放，货物于周一开始入库。",
                       "该仓库的最高温度为三十度，周日全天开放，货物于周一开启入库。"], [evidence] * 5, embedder=embedder)
    assert x[:3, col].min() > 0.5 and x[3:, col].tolist() == [0.0, 0.0]
    assert _cjk_opposite_chars("进口", "出口") and _cjk_opposite_chars("高", "低")
    assert not _cjk_opposite_chars("进口", "出境") and not _cjk_opposite_chars("高度", "低温度")


EVIDENCE = ("Title: Go Outside in the Rain\n\n\"Go Outside in the Rain\" is a R&B song by Milira released in "
            "1990. The track reached number 36 on Billboard's Hot R&B Singles chart.")


def test_supported_scores_above_contradicted(model, embedder):
    claims = [
        "Milira released the song 'Go Outside in the Rain' in 1990 [cite:memo://kb/a/b].",
        "Milira released the song 'Go Outside in the Rain' in 1994.",  # date changed
        "The track reached number 12 on Billboard's Hot R&B Singles chart.",  # number changed
        "The track did not chart on Billboard's Hot R&B Singles chart; it was never released.",  # negation
        "The Eiffel Tower was completed in 1889 for the World's Fair.",  # unrelated
    ]
    p = model.score(claims, [EVIDENCE] * len(claims), embedder=embedder)
    assert p.shape == (5,) and np.all((p >= 0) & (p <= 1))
    assert p[0] > max(p[1:]), p
    assert p[0] >= model.soft
    assert p[4] < model.soft


def test_features_flag_missing_facts_and_negation(embedder):
    claims = ["The track reached number 36 on the chart.", "The track reached number 12 on the chart.",
              "The track did not reach number 36 on the chart."]
    x = pair_features(claims, [EVIDENCE] * 3, embedder=embedder)
    col = {f: i for i, f in enumerate(FEATURES)}
    assert x[0, col["missing_number"]] == 0 and x[1, col["missing_number"]] == 1
    assert x[2, col["negation_conflicts"]] >= 1 and x[0, col["negation_conflicts"]] == 0
    assert x[0, col["recall"]] == 1.0


def test_given_vectors_are_used_and_checked(model, embedder):
    claims = ["Milira released a song in 1990."]
    cv = embedder.embed([core_claim(claims[0])])
    ev = embedder.embed([EVIDENCE])
    a = model.score(claims, [EVIDENCE], claim_vecs=cv, evidence_vecs=ev, embedder=embedder)
    b = model.score(claims, [EVIDENCE], embedder=embedder)
    np.testing.assert_allclose(a, b, atol=1e-4)
    with pytest.raises(ValueError, match="one row per pair"):
        model.score(claims, [EVIDENCE], claim_vecs=np.vstack([cv, cv]), embedder=embedder)
    with pytest.raises(ValueError, match="2 claims but 1 evidences"):
        model.score(claims * 2, [EVIDENCE], embedder=embedder)
    assert model.score([], [], embedder=embedder).shape == (0,)


def test_explain_gives_an_audit_record(model, embedder):
    rec = model.explain(["Milira released it in 1994 [cite:memo://kb/a/b]."], [EVIDENCE], embedder=embedder)[0]
    assert rec["claim"] == "Milira released it in 1994."
    assert rec["decision"] in ("keep", "rewrite", "fail")
    assert set(rec["features"]) == set(FEATURES)
    assert [f["text"] for f in rec["missing_facts"]] == ["1994"]
    assert rec["contributions"]["missing_date"] < 0


def test_hash_embedder_works_too(model):
    from asmr.embed import get_embedder

    p = model.score(["Milira released the song in 1990."], [EVIDENCE], embedder=get_embedder("hash-384"))
    assert 0.0 <= float(p[0]) <= 1.0


@pytest.mark.skipif(not DATA.exists(), reason=f"{DATA} not found (AttributionBench dev lives in ../shared/data)")
def test_shipped_model_beats_chance_on_a_dev_sample(model, embedder):
    # a sanity check of the shipped weights, in-sample (they were fitted on this file); bench/ reports CV
    rows = [r for r in map(json.loads, DATA.open()) if sum(map(len, r["references"])) < 1500][::24]
    p = model.score([r["claim"] for r in rows], ["\n\n".join(r["references"]) for r in rows], embedder=embedder)
    y = np.array([r["attribution_label"] == "attributable" for r in rows])
    assert len(rows) > 30 and np.mean((p >= model.hard) == y) > 0.6


def _calibrate_support():
    """bench/calibrate_support.py as a module (the bench folder is no package)."""
    import importlib.util

    path = Path(__file__).resolve().parents[2] / "bench" / "calibrate_support.py"
    spec = importlib.util.spec_from_file_location("calibrate_support", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_support_fit_holds_each_weight_to_the_sign_of_its_cue():
    calibrate = _calibrate_support()
    signs = calibrate.signs_of(["cos_max", "missing_number", "claim_len_log"])
    assert list(signs) == [1, -1, 0]
    rng = np.random.default_rng(1)
    stated = rng.normal(size=3000)
    also = stated + rng.normal(scale=0.3, size=3000)  # a second cue for support, moving with the first
    y = (stated - 0.5 * also + rng.normal(scale=0.5, size=3000) > 0).astype(float)
    x = np.column_stack([stated, also])
    free, _ = calibrate.fit_logistic(x, y, 1.0)
    assert free[1] < -0.5  # fitted free, the second cue speaks against support
    held, _ = calibrate.fit_logistic(x, y, 1.0, np.array([1, 1]))
    assert held[0] > 0 and held[1] == 0.0
    # with an offset (the contradiction part's fit): no bias, and the bound still holds
    w, b = calibrate.fit_logistic(x, y, 1.0, np.array([-1, -1]), offset=np.zeros(3000))
    assert b == 0.0 and (w <= 0).all()


def test_the_shipped_support_weights_take_the_signs_of_their_cues():
    calibrate = _calibrate_support()
    model = json.loads(DEFAULT_MODEL_PATH.read_text(encoding="utf-8"))
    for feature, w, sign in zip(model["features"], model["weights"], calibrate.signs_of(model["features"])):
        assert w * sign >= 0, (feature, w)


class _ConstantEmbedder:
    """Every text gets one vector (``same``) or its own random one: cosines 1 or about 0. It reads
    Latin script only, as MiniLM does."""
    dim, name, scripts = 16, "constant-16", frozenset({"latin"})

    def __init__(self, same: bool):
        self.same = same

    def embed(self, texts, **_):
        rng = np.random.default_rng(0)
        vecs = np.ones((len(texts), self.dim)) if self.same else rng.standard_normal((len(texts), self.dim))
        return (vecs / np.linalg.norm(vecs, axis=1, keepdims=True)).astype(np.float32)

    embed_questions = embed


def test_cosines_of_text_the_embedder_cannot_read_decide_nothing(model):
    # MiniLM gives any two Chinese texts a high cosine: an unrelated unit looked like support
    pairs = {"zh": ("新员工的账号由直属主管在人事系统里申请。", "退货到仓后三个工作日内完成质检并重新入库。"),
             "en": ("The API server listens on port 8080.", "The API server listens on port 8080 by default.")}
    for lang, (claim, unit) in pairs.items():
        near, far = (SupportModel.load().score([claim], [unit], embedder=_ConstantEmbedder(same))[0]
                     for same in (True, False))
        x = pair_features([claim], [unit], embedder=_ConstantEmbedder(True))[0]
        if lang == "zh":
            assert x[FEATURES.index("readable")] == 0.0 and near == pytest.approx(far)
        else:
            assert x[FEATURES.index("readable")] == 1.0 and near > far + 0.05


def test_features_do_not_depend_on_the_order_python_hashes_words_in():
    """Two words of the claim that share a stem ("earnings", "earned"), neither in the sentence: whether
    one of them says another way what the sentence says ("made" the money) must not hang on which of
    the two a set yields first, which changes with each process's hash seed."""
    import os
    import subprocess
    import sys

    script = (
        "from asmr.embed.models import get_embedder\n"
        "from asmr.verify.support import pair_features\n"
        "x = pair_features(['However, when counting career earnings, Ana Lopez has earned the most money.'],\n"
        "                  ['Ana Lopez has comfortably made the most money in her career with three clubs.'],\n"
        "                  embedder=get_embedder('hash-64'))\n"
        "print(x.tolist())\n")
    rows = set()
    for seed in range(6):
        done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120,
                              env={**os.environ, "PYTHONHASHSEED": str(seed)})
        assert done.returncode == 0, done.stderr[-2000:]
        rows.add(done.stdout)
    assert len(rows) == 1


ROOMS_WITH_PROJECTORS = ("# Rooms\n\n| Room | Seats | Floor | Projector |\n|---|---|---|---|\n"
                         "| Oak room | 12 | 2 | yes |\n| Pine room | 30 | 4 | no |\n")
SERVICES = ("| Service | Price | Turnaround |\n|---|---|---|\n"
            "| Private letter | 25 euros | 10 working days |\n"
            "| Repeat prescription | free | 2 working days |\n")


def test_a_table_row_is_read_cell_by_cell_behind_its_columns_names(model, hashed):
    """A table's row states each value under its column's name: "The Pine room seats 30" lost its
    citation (p 0.13) to a table whose Pine room row has "no" in its Projector column, read as a
    negation of the whole row, and "A repeat prescription takes 2 working days" (0.25) and "A private
    letter takes 10 working days" (0.19) lost theirs to a Turnaround column: "takes" read as a word put
    for the column's name. Each cell is now a statement of its own, and a word put for a column's name
    is no swap unless it names another column; "has a projector" still meets the row's "no"."""
    kept = [("The Pine room seats 30.", ROOMS_WITH_PROJECTORS),
            ("The Pine room is on floor 4.", ROOMS_WITH_PROJECTORS),
            ("A repeat prescription takes 2 working days.", SERVICES),
            ("A private letter takes 10 working days.", SERVICES)]
    claims, units = map(list, zip(*kept))
    x = pair_features(claims, units, embedder=hashed)
    for feature in ("flip_negation", "flip_swap", "flip_opposite"):
        assert (x[:, FEATURES.index(feature)] == 0.0).all(), feature
    assert (x[:2, FEATURES.index("recall_best_sent")] == 1.0).all()  # every word in the Pine room's lines
    assert cue_of_dropped(model, hashed, ["The Pine room has a projector."], [ROOMS_WITH_PROJECTORS],
                          "flip_negation")[0] > 0.0


def test_a_claim_of_one_rows_key_and_anothers_value_is_read_against_the_whole_table(model, hashed):
    """"A repeat prescription costs 25 euros" kept its citation (p 0.56) to a table whose private letter
    row costs 25 euros and whose repeat prescription row is free: the row crossing was seen, but its cue
    weighed by the one line the claim shares most words with, which holds half of them. The claim's
    words are the table's, so the crossing weighs as far as the table states them."""
    assert cue_of_dropped(model, hashed, ["A repeat prescription costs 25 euros."], [SERVICES])[0] >= 0.5


def test_a_chinese_row_states_its_column_name_with_its_key(hashed):
    """"少儿证借期21天" lost its citation (p 0.43) to the lending table whose 少儿证 row says 21天 under the
    column 借期: the character pair 证借 is in no line of the table as written. Read as 少儿证借期21天,
    every pair of the claim is in one line."""
    table = ("# 借阅规则\n\n| 证件类型 | 可借册数 | 借期 |\n|---|---|---|\n| 普通读者证 | 10册 | 30天 |\n"
             "| 少儿证 | 5册 | 21天 |\n")
    x = pair_features(["少儿证借期21天。", "普通读者证借期30天。"], [table] * 2, embedder=hashed)
    assert (x[:, FEATURES.index("recall_best_sent")] == 1.0).all()


def test_a_small_word_and_its_opposite_tell_two_statements_apart(model, hashed):
    """"Heating is switched on in April" kept its citation (p 0.94) to "Heating is switched on in October
    and switched off in April": "on" and "off" are no content words, so the sentence had no pivot. A
    small word whose opposite the sentence also says is one, between statements that each state a
    value; "log in before the shift and log out after it" states none, and its second statement leaves
    its subject to the first."""
    heating = "Heating is switched on in October and switched off in April."
    alarm = "The alarm is turned on at 10 pm and turned off at 6 am."
    crossed = [("Heating is switched on in April.", heating),
               ("Heating is switched off in October.", heating),
               ("The alarm is turned on at 6 am.", alarm)]
    claims, units = zip(*crossed)
    assert (cue_of_dropped(model, hashed, claims, units) > 0.0).all()
    kept = [("Heating is switched off in April.", heating), ("The alarm is turned off at 6 am.", alarm),
            ("Staff log out after their shift.", "Staff log in before their shift and log out after it.")]
    claims, units = map(list, zip(*kept))
    assert (pair_features(claims, units, embedder=hashed)[:, FEATURES.index("flip_opposite")] == 0.0).all()


def test_at_once_for_a_time_the_sentence_goes_on_after(model, hashed):
    """"Logs are deleted immediately" kept its citation (p 0.54) to "Logs are kept for 14 days in the log
    directory", and "Logs are removed at once" (0.61): the sentence's words after the time made the run
    too long to read, and "at once" was not read as "immediately". "immediately" where the unit says
    it too is no opposite."""
    logs = "Logs are kept for 14 days in the log directory."
    assert (cue_of_dropped(model, hashed, ["Logs are deleted immediately.", "Logs are removed at once."],
                           [logs] * 2) > 0.0).all()
    x = pair_features(["Report a lost badge immediately.", "Spills are cleaned up at once."],
                      ["Report a lost badge to reception immediately.",
                       "Spills are cleaned up at once by whoever finds them."], embedder=hashed)
    assert (x[:, FEATURES.index("flip_opposite")] == 0.0).all()


def test_at_once_added_where_the_sentence_gives_a_time_is_an_opposite(model, hashed):
    """"Invoices are destroyed immediately" kept its citation (p 0.70) to "Invoices are archived for seven
    years before they are destroyed", and "Backups are deleted immediately" (0.76) to "kept for 30 days and
    then deleted": the claim's verb met the sentence's last words, and "immediately" stood beside it with
    no counterpart. Where the sentence states an amount of time, "at once" added to it is one; where it
    says "immediately" too, it is not."""
    claims = ["Invoices are destroyed immediately.", "Backups are deleted immediately.",
              "Refund requests are answered at once."]
    units = ["Invoices are archived for seven years before they are destroyed.",
             "Backups are kept for 30 days and then deleted.",
             "Refund requests are answered within two working days by the finance team."]
    assert (cue_of_dropped(model, hashed, claims, units) > 0.0).all()
    x = pair_features(["New accounts are activated immediately."],
                      ["New accounts are activated immediately after the manager signs the form."],
                      embedder=hashed)
    assert x[0, FEATURES.index("flip_opposite")] == 0.0


def test_a_claim_of_one_rows_cell_and_another_rows_cell_of_any_column_crosses_them(model, hashed):
    """A table's row may be keyed by a date or a version, and the lie takes a cell of another column:
    "The fire drill is on 17 March" kept its citation (p 0.70) to a table whose 3 March row holds the
    fire drill and whose 17 March row the first-aid course, "Version 3.0 was released in January 2025"
    (0.60) where 2.4 was, and 财务部的负责人是陈强 where 陈强 heads 人事部. A number the claim holds of its
    own row's cell ("1 TB" where the other row has 1 user) is no crossing."""
    events = ("| Date | Event | Venue |\n|---|---|---|\n| 3 March | Fire drill | Main hall |\n"
              "| 17 March | First-aid course | Room 4 |\n")
    versions = ("| Version | Released | Supported until |\n|---|---|---|\n"
                "| 2.4 | January 2025 | June 2026 |\n"
                "| 3.0 | September 2025 | December 2027 |\n")
    heads = "| 部门 | 负责人 | 电话 |\n|---|---|---|\n| 财务部 | 王丽 | 8021 |\n| 人事部 | 陈强 | 8045 |\n"
    plans = ("| Plan | Price | Storage | Users |\n|---|---|---|---|\n| Basic | 9 euros | 50 GB | 1 |\n"
             "| Team | 29 euros | 1 TB | 10 |\n")
    crossed = [("The fire drill is on 17 March.", events),
               ("The first-aid course is held in the main hall.", events),
               ("Version 3.0 was released in January 2025.", versions), ("财务部的负责人是陈强。", heads),
               ("The Basic plan includes 1 TB of storage.", plans)]
    claims, units = zip(*crossed)
    assert (cue_of_dropped(model, hashed, claims, units) > 0.0).all()
    kept = [("The fire drill is on 3 March.", events),
            ("The first-aid course takes place in Room 4.", events),
            ("Version 2.4 was released in January 2025.", versions), ("人事部的负责人是陈强。", heads),
            ("The Team plan includes 1 TB of storage.", plans), ("The Basic plan is for 1 user.", plans)]
    claims, units = map(list, zip(*kept))
    assert (pair_features(claims, units, embedder=hashed)[:, FEATURES.index("flip_opposite")] == 0.0).all()


HOURS = ("The clinic is open on weekdays from 8:00 am to 6:30 pm. A nurse-only clinic runs on Saturday from "
         "9 am to 12 noon for dressings and immunisations. "
         "The clinic is closed on Sundays and bank holidays.")


def test_a_value_of_another_sentence_put_in_this_ones_place_is_an_opposite(model, hashed):
    """"The clinic opens at 9 am on weekdays" kept its citation (p 0.83) to a unit whose weekday sentence
    says 8:00 am and whose Saturday sentence says 9 am: the key-fact check finds the 9 in the unit, and
    the claim holds every word of the weekday sentence but its time. So did a time said in words the
    key-fact check does not read ("released at noon" for "released at 8:00 am", p 0.81), and a day put
    for the sentence's ("closes at 10 pm on Saturdays" for "open from 6 am to 10 pm on weekdays")."""
    gym = "The gym is open from 6 am to 10 pm on weekdays. On Saturdays it opens at 8 am and closes at 6 pm."
    booking = "Same-day appointments are released at 8:00 am and are booked by phone."
    crossed = [("The clinic opens at 9 am on weekdays.", HOURS),
               ("Same-day appointments are released at noon.", booking),
               ("On Saturdays the gym closes at 10 pm.", gym), ("The gym opens at 8 am on weekdays.", gym)]
    claims, units = zip(*crossed)
    assert (cue_of_dropped(model, hashed, claims, units) > 0.0).all()
    kept = [("The clinic opens at 8 am on weekdays.", HOURS),
            ("On Saturday the nurse-only clinic runs from 9 am.", HOURS),
            ("Same-day appointments are released at 8 am.", booking),
            ("On Saturdays the gym opens at 8 am.", gym)]
    claims, units = map(list, zip(*kept))
    assert (pair_features(claims, units, embedder=hashed)[:, FEATURES.index("flip_opposite")] == 0.0).all()


def test_the_opposite_of_a_range_says_when_it_ends(model, hashed):
    """"On weekdays the clinic closes at 6:30 pm" lost its citation (p 0.01) to "open on weekdays from
    8:00 am to 6:30 pm": "closes" is the opposite of "open", but at the time the range ends it restates
    it. At the time the range starts it is still an opposite."""
    x = pair_features(["On weekdays the clinic closes at 6:30 pm.", "The gym closes at 10 pm on weekdays."],
                      [HOURS, "The gym is open from 6 am to 10 pm on weekdays."], embedder=hashed)
    assert (x[:, FEATURES.index("flip_opposite")] == 0.0).all()
    assert cue_of_dropped(model, hashed, ["On weekdays the clinic closes at 8:00 am."], [HOURS])[0] > 0.0


def test_a_negation_over_an_opposite_restates_the_sentence(model, hashed):
    """"The clinic does not open on Sundays" lost its citation (p 0.0) to "The clinic is closed on
    Sundays": a negation on one side and an opposite each read as a contradiction, where together they
    say the sentence again. The claim was also read against the weekday sentence, the first of two
    sharing as many of its words, not the one that names its Sunday."""
    claims = ["The clinic does not open on Sundays.", "The shop does not close on Mondays.",
              "The server is not external."]
    units = [HOURS, "The shop is open on Mondays.", "The server is internal."]
    x = pair_features(claims, units, embedder=hashed)
    for feature in ("flip_negation", "flip_opposite", "flip_names", "neg_mismatch", "antonym"):
        assert (x[:, FEATURES.index(feature)] == 0.0).all(), feature
    assert cue_of_dropped(model, hashed, ["The clinic is not closed on Sundays."], [HOURS],
                          "flip_negation")[0] > 0.0


def test_all_of_a_group_the_sentence_narrows_is_an_opposite(model, hashed):
    """"Home visits are available to all patients" kept its citation (p 0.73) to "Home visits are for
    patients who are housebound": "all" with no quantifier in the sentence was no cue."""
    visits = "Home visits are for patients who are housebound. Requests must reach reception by 11 am."
    assert cue_of_dropped(model, hashed, ["Home visits are available to all patients."], [visits])[0] > 0.0
    x = pair_features(["Home visits are for all patients who are housebound."], [visits], embedder=hashed)
    assert x[0, FEATURES.index("flip_opposite")] == 0.0


def test_failed_before_a_noun_negates_nothing(hashed):
    """"The service desk unlocks locked accounts" lost its citation (p 0.02) to "Accounts are locked
    after five failed sign-in attempts and unlocked by the service desk": "failed" was read as a
    negation of the sentence."""
    unit = "Accounts are locked after five failed sign-in attempts and unlocked by the service desk."
    x = pair_features(["The service desk unlocks locked accounts.", "The nightly backup failed on Monday."],
                      [unit, "The nightly backup ran on Monday."], embedder=hashed)
    assert x[0, FEATURES.index("aligned_neg_mismatch")] == 0.0
    assert x[1, FEATURES.index("aligned_neg_mismatch")] == 1.0


def test_always_for_what_the_sentence_says_may_happen_is_an_opposite(model, hashed):
    """"Employees always work from home on Fridays" kept its citation (p 0.80) to "Employees may work from
    home on Fridays with their manager's approval", and "Students who miss an exam always get a resit"
    (0.81) to "may apply for a resit": "always" or "all" where the sentence says "may" makes a chance
    certain. A claim that keeps the "may" restates it."""
    home = "Employees may work from home on Fridays with their manager's approval."
    resit = "Students who miss an exam may apply for a resit."
    overclaims = ["Employees always work from home on Fridays.", "All employees work from home on Fridays."]
    assert (cue_of_dropped(model, hashed, overclaims, [home] * 2) > 0.0).all()
    x = pair_features(["All employees may work from home on Fridays.", "Students who miss an exam may apply "
                       "for a resit."], [home, resit], embedder=hashed)
    assert (x[:, FEATURES.index("flip_opposite")] == 0.0).all()


def test_get_for_be_given_and_as_far_as_for_up_to_restate_the_sentence(hashed):
    """"Patients who need an interpreter can get a 20-minute double appointment" (p 0.49) and "Reception
    can make bookings as far as six weeks ahead" (0.11) lost their citations: "get" read as a word put
    for "given", and "as far as" was no bound where "up to" was one."""
    x = pair_features(["Patients who need an interpreter can get a double appointment of 20 minutes.",
                       "Reception can book as far as six weeks ahead."],
                      ["Patients who need an interpreter can be given a double appointment of 20 minutes.",
                       "Reception can book up to six weeks ahead for patients who need it."], embedder=hashed)
    assert (x[:, FEATURES.index("flip_swap")] == 0.0).all()


def test_a_negated_claim_of_another_value_is_no_value_put(model, hashed):
    """A claim that denies another value than the sentence's says what the sentence implies: "Breakfast is
    not served at weekends" for "served from 7:30 on weekdays only" (p 0.0), with no value put and no
    opposite left over; "The museum closes at 5 pm" for "open from 10 am to 5 pm" kept no antonym cue."""
    x = pair_features(["Breakfast is not served at weekends.", "The museum closes at 5 pm."],
                      ["Breakfast is served from 7:30 on weekdays only.",
                       "The museum is open from 10 am to 5 pm, Tuesday to Sunday."], embedder=hashed)
    for feature in ("flip_opposite", "flip_negation", "antonym"):
        assert (x[:, FEATURES.index(feature)] == 0.0).all(), feature


def test_a_last_word_after_the_sentences_preposition_stands_for_its_next(model, hashed):
    """"Students receive their results by post" kept its citation (p 0.73) to "by email within three
    weeks": the claim ends where the sentence goes on, so "post" against "email within three weeks" was
    too long a run to read as one word put for another."""
    unit = "Students receive their results by email within three weeks."
    assert cue_of_dropped(model, hashed, ["Students receive their results by post."], [unit],
                          "flip_swap")[0] > 0.0
    x = pair_features(["Students receive their results by email."], [unit], embedder=hashed)
    assert x[0, FEATURES.index("flip_swap")] == 0.0


def test_a_chinese_claim_that_joins_its_words_with_de_and_shi_is_read_as_the_table_line(hashed):
    """1号楼的管家是李娜 lost its citation (p 0.47) to a table whose 1号楼 row says 李娜 under 管家: the
    table's line reads 1号楼管家李娜, and 的 and 是 broke four of the claim's seven character pairs. They are
    read as the joins they are; 目的 and 但是 keep theirs."""
    table = "| 楼栋 | 管家 | 电话 |\n|---|---|---|\n| 1号楼 | 李娜 | 6601 |\n| 2号楼 | 王伟 | 6602 |\n"
    x = pair_features(["1号楼的管家是李娜。", "2号楼的电话是6602。"], [table] * 2, embedder=hashed)
    assert (x[:, FEATURES.index("recall_best_sent")] == 1.0).all()
    from asmr.verify.support import _words
    assert "目的" in _words("这次培训的目的是安全。") and "但是" in _words("但是周日不开放。")


def test_an_amount_read_against_the_sentence_of_the_claims_other_words(model, hashed):
    """"Urgent tickets are answered within two working days" kept its citation (p 0.96) to "Urgent tickets
    are answered within one hour. Other tickets are answered within two working days.": the claim's
    amount drew it to the second sentence, whose words it shares most, and the key-fact check read no
    amount in "two working days". The sentence of the claim's other words is read too, and a kind of day
    between an amount and its unit is left out of the amount."""
    unit = "Urgent tickets are answered within one hour. Other tickets are answered within two working days."
    urgent = ["Urgent tickets are answered within two working days."]
    assert cue_of_dropped(model, hashed, urgent, [unit])[0] > 0
    x = pair_features(["Urgent tickets are answered within one hour.",
                       "Other tickets are answered within two business days."], [unit] * 2, embedder=hashed)
    assert (x[:, FEATURES.index("flip_opposite")] == 0.0).all()


def test_an_opposite_at_another_statements_time_restates_it(model, hashed):
    """"The bike shed closes at 9 pm" lost its citation (p 0.003) to "The bike shed opens at 6 am and is
    locked at 9 pm": "closes" is the opposite of "opens", but at the time of the other statement. At the
    time of "opens" itself it stays an opposite."""
    shed = "The bike shed opens at 6 am and is locked at 9 pm."
    x = pair_features(["The bike shed closes at 9 pm."], [shed], embedder=hashed)
    assert x[0, FEATURES.index("flip_opposite")] == 0.0 and x[0, FEATURES.index("antonym")] == 0.0
    assert cue_of_dropped(model, hashed, ["The bike shed closes at 6 am."], [shed])[0] > 0.0


def test_all_of_a_group_narrowed_by_an_amount_and_if_for_unless(model, hashed):
    """"All invoices need the finance director's signature" kept its citation (p 0.87) to "Invoices over
    5,000 euros need the finance director's signature"; "A loan cannot be renewed online if another
    member has reserved the book" lost its citation (p 0.0) to "can be renewed twice online unless
    another member has reserved the book": a negation with "if" for "unless" restates it."""
    invoices = "Invoices over 5,000 euros need the finance director's signature."
    everything = ["All invoices need the finance director's signature."]
    assert cue_of_dropped(model, hashed, everything, [invoices])[0] > 0
    loans = "Loans can be renewed twice online unless another member has reserved the book."
    x = pair_features(["A loan cannot be renewed online if another member has reserved the book."], [loans],
                      embedder=hashed)
    assert x[0, FEATURES.index("flip_negation")] == 0.0 and x[0, FEATURES.index("flip_opposite")] == 0.0


def test_two_events_ordered_the_other_way_round(model, hashed):
    """"Drivers may unload before reporting to the gatehouse" kept its citation (p 0.89) to "Drivers must
    report to the gatehouse before unloading", and "Drivers unload after reporting to the gatehouse" lost
    it (0.03): "before" with the two events swapped turns the order round, "after" with them swapped says
    the same order from the other side."""
    gate = "Drivers must report to the gatehouse before unloading."
    refunds = "Refunds are issued after the returned item has been inspected."
    turned = ["Drivers may unload before reporting to the gatehouse.",
              "The returned item is inspected after the refund is issued."]
    assert (cue_of_dropped(model, hashed, turned, [gate, refunds]) > 0.0).all()
    x = pair_features(["Drivers unload after reporting to the gatehouse.",
                       "The returned item is inspected before the refund is issued."], [gate, refunds],
                      embedder=hashed)
    assert (x[:, FEATURES.index("flip_opposite")] == 0.0).all()


def test_may_is_a_month_only_by_its_name(hashed):
    """"Staff may park their bikes in the shed" lost its citation (p 0.03) to "Staff park their bikes in the
    shed on weekdays": the modal "may" was read as the month May, a day of another kind than "weekdays".
    A month is read by its capitalised name; "in May" for "in June" is still another value."""
    x = pair_features(["Staff may park their bikes in the shed.", "Visitors may use the cloakroom."],
                      ["Staff park their bikes in the shed on weekdays.",
                       "Visitors use the cloakroom on Saturdays."], embedder=hashed)
    assert (x[:, FEATURES.index("flip_opposite")] == 0.0).all()


def test_a_chinese_statement_that_leaves_out_the_others_words_is_read_against_it(model, hashed, embedder):
    """A Chinese sentence often leaves out of its second statement what the first says: "游泳馆工作日开放
    时间为6:30至22:00，节假日为8:00至20:00" (the second: "the holidays, 8:00 to 20:00"). The working days
    with the holidays' hours kept their citation (p 0.87), and the holidays' own hours lost theirs (0.13;
    0.25 written with 的 and 是): the statements did not open alike, so they were not read as two, and the
    claim was aligned against the whole sentence, where 节假 stood in the place of 工作 as a word swapped.
    Now the second statement is read with the words it leaves out, and a claim of it against that alone."""
    pool = "游泳馆工作日开放时间为6:30至22:00，节假日为8:00至20:00。"
    fares = "成人票价为60元，儿童为30元。"
    crossed = [("游泳馆节假日开放时间为6:30至22:00。", pool), ("游泳馆工作日开放时间为8:00至20:00。", pool),
               ("儿童票价为60元。", fares)]
    kept = [("游泳馆节假日开放时间为8:00至20:00。", pool), ("游泳馆节假日的开放时间是8:00至20:00。", pool),
            ("游泳馆工作日的开放时间是6:30至22:00。", pool), ("儿童的票价是30元。", fares), ("成人票价为60元。", fares)]
    claims, units = zip(*crossed)
    assert (cue_of_dropped(model, hashed, claims, units) > 0.0).all()
    claims, units = zip(*kept)
    x = pair_features(list(claims), list(units), embedder=hashed)
    assert (x[:, [FEATURES.index(f) for f in FLIP_FEATURES]] == 0.0).all()
    assert (model.score(list(claims), list(units), embedder=embedder) >= model.hard).all()


def test_chinese_statements_told_apart_by_a_label_a_value_or_an_opening_of_one_character(model, embedder):
    """Statements that open with a label in Latin letters (E栋 / F栋), three statements whose values
    differ in a digit more or less (120元 against 1200元 reads alike by character pairs), and openings of
    one character (小班 / 大班, where 小 is also in 每小时): a claim of one statement with another's value
    loses its citation, and each statement restated keeps its own."""
    halls = "E栋自习室开放到22:00，F栋为23:00。"
    fees = "初赛报名费为50元，复赛为120元，决赛为1200元。"
    classes = "小班每小时课时费200元，大班为120元。"
    crossed = [("F栋自习室开放到22:00。", halls), ("E栋自习室开放到23:00。", halls), ("决赛报名费为120元。", fees),
               ("初赛报名费为1200元。", fees), ("大班每小时课时费200元。", classes)]
    kept = [("F栋自习室开放到23:00。", halls), ("决赛的报名费是1200元。", fees), ("复赛报名费为120元。", fees),
            ("大班每小时课时费120元。", classes), ("小班每小时的课时费是200元。", classes)]
    claims, units = zip(*crossed)
    assert (cue_of_dropped(model, embedder, claims, units) > 0.0).all()
    claims, units = zip(*kept)
    assert (model.score(list(claims), list(units), embedder=embedder) >= model.hard).all()


def test_an_english_statement_that_leaves_out_the_verb_of_the_one_before_is_read_against_it(model, embedder):
    """"Hire for bikes costs 15 euros a day, and for scooters 25 euros": the second statement leaves out
    the verb and names its own thing after the same small word, or first ("and students 7 euros"), or by a
    label in lower case ("hall D 80" after "Hall C"), and its number may be a word ("one day"). Each of the
    four claims of the second statement below lost its citation (p 0.01–0.05): the verb it leaves out was
    read as the other statement's word, or its value as an amount put for the other's; and "Students pay
    12 euros per lesson" kept its citation (0.94). A claim of the second statement keeps its citation now,
    and one with the other's value loses it."""
    bikes = "Hire for bikes costs 15 euros a day, and for scooters 25 euros."
    lessons = "Adults pay 12 euros per lesson, and students 7 euros."
    repairs = "Regular repairs take three days; urgent repairs one day."
    halls = "Hall C holds 200 people, hall D 80."
    crossed = [("Hire for scooters costs 15 euros a day.", bikes), ("Hire for bikes costs 25 euros a day.", bikes),
               ("Students pay 12 euros per lesson.", lessons), ("Regular repairs take one day.", repairs),
               ("Hall C holds 80 people.", halls)]
    kept = [("Hire for scooters costs 25 euros a day.", bikes), ("Students pay 7 euros per lesson.", lessons),
            ("Urgent repairs take one day.", repairs), ("Hall D holds 80 people.", halls),
            ("Adults pay 12 euros per lesson.", lessons)]
    claims, units = zip(*crossed)
    assert (model.score(list(claims), list(units), embedder=embedder) < model.hard).all()
    claims, units = zip(*kept)
    assert (model.score(list(claims), list(units), embedder=embedder) >= model.hard).all()


def test_a_claim_that_joins_two_sentences_is_read_part_by_part(model, hashed, embedder):
    """An answer often joins two statements of a unit in one sentence: "Dogs are permitted on the terrace,
    and it closes at 10 pm" for a unit that says dogs are not permitted there in one sentence and the
    closing time in the next. Read whole, the claim restated too little of either sentence for its
    negation to count, and kept its citation (p 0.94; a list unit's items joined by "；" in Chinese, 0.86).
    Now each part of a claim that restates more than one sentence is read against the clause it restates;
    and the true joins keep their citations, a table's row restated cell by cell among them (read as the
    table's own rule reads it, not part by part)."""
    terrace = "Dogs are not permitted on the terrace. The terrace closes at 10 pm and reopens at 8 am."
    ferry = "After the storm, the ferry could not sail until noon. The café on the pier opens at 9 am."
    rooms = "- 会议室不对外出租；\n- 会员每月可免费打印50页；\n- 储物柜押金为20元。"
    contacts = ("| 岗位 | 姓名 | 分机 | 办公地点 |\n|---|---|---|---|\n| 保安主管 | 孙海涛 | 8010 | 108室 |\n"
                "| 馆长 | 王丽华 | 8001 | 106室 |")
    row = "| 岗位 | 姓名 | 分机 | 办公地点 |\n| 保安主管 | 孙海涛 | 8010 | 108室 |"  # a unit of one row, as ingest cuts it
    crossed = [("Dogs are permitted on the terrace, and it closes at 10 pm.", terrace),
               ("Dogs are permitted on the terrace; the terrace closes at 10 pm.", terrace),
               ("The ferry could sail before noon, and the café on the pier opens at 9 am.", ferry),
               ("会议室对外出租；会员每月可免费打印50页。", rooms),
               ("- 会议室对外出租； - 会员每月可免费打印50页； - 储物柜押金为20元。", rooms)]
    kept = [("Dogs are not permitted on the terrace, and it closes at 10 pm.", terrace),
            ("The ferry could not sail until noon, and the café on the pier opens at 9 am.", ferry),
            ("会议室不对外出租；会员每月可免费打印50页。", rooms),
            ("- 会议室不对外出租； - 会员每月可免费打印50页； - 储物柜押金为20元。", rooms),
            ("岗位: 保安主管; 姓名: 孙海涛; 分机: 8010; 办公地点: 108室。", contacts),
            ("岗位: 保安主管; 姓名: 孙海涛; 分机: 8010; 办公地点: 108室。", row)]
    claims, units = zip(*crossed)
    assert (cue_of_dropped(model, hashed, claims, units, "flip_negation") > 0.0).all()
    claims, units = zip(*kept)
    assert (model.score(list(claims), list(units), embedder=embedder) >= model.hard).all()


def test_two_names_that_swap_what_the_sentence_says_each_does(model, hashed, embedder):
    """An answer that gives one person's task to another ("Ana will chair the meeting, while Ben takes the
    minutes" where Ben chairs and Ana takes the minutes; 由张伟负责采购 where 张伟 does the expenses and
    刘洋 the buying) named only the unit's own people and kept its citation (p 0.91; 0.72). Each name now
    reads as put in the other's place; the same people in their own roles keep it."""
    minutes = "Ben will chair the meeting; Ana will take the minutes."
    buying = "5月周会决定：新版本推迟到6月发布。由刘洋负责跟进测试，张伟负责对外沟通。"
    swapped = [("Ana will chair the meeting, while Ben takes the minutes.", minutes),
               ("在新版本的推进中，由张伟负责跟进测试。", buying)]
    assert (cue_of_dropped(model, hashed, *zip(*swapped), "flip_names") > 0.0).all()
    kept = [("Ben will chair the meeting, and Ana will take the minutes.", minutes),
            ("在新版本的推进中，由刘洋负责跟进测试。", buying)]
    assert (model.score(*map(list, zip(*kept)), embedder=embedder) >= model.hard).all()


def test_a_claim_of_what_another_sentence_of_the_unit_negates(model, hashed, embedder):
    """"The museum ticket also includes the audio guide" restates the sentence that names the ticket, and
    the next sentence says "It does not include the audio guide": the claim kept its citation (p 0.75).
    What follows a verb's negation in another sentence is now read against the claim; a negation in a
    clause after the claim's words ("a door that does not lock while ...") and "no" before a noun are not."""
    museum = ("The museum ticket costs 15 euros and covers the main galleries. "
              "It does not include the audio guide.")
    assert cue_of_dropped(model, hashed, ["The museum ticket also includes the audio guide."], [museum],
                          "flip_negation")[0] > 0.0
    door = "The side door is checked nightly. A door that does not lock while the alarm is off is a risk."
    tax = "You report the sale of the flat in your return. You may owe no tax on the sale."
    x = pair_features(["The museum ticket costs 15 euros.", "An unchecked side door is a risk.",
                       "You report the sale of the flat and the tax on the sale."], [museum, door, tax],
                      embedder=hashed)
    assert (x[:, FEATURES.index("flip_negation")] == 0.0).all()
    assert model.score(["The museum ticket costs 15 euros."], [museum], embedder=embedder)[0] >= model.hard


def test_always_for_what_the_sentence_says_happens_often(model, hashed):
    """"always" where the sentence says "often", "usually" or "sometimes" makes a frequent thing certain,
    as it does where the sentence says "may" (kept at p 0.93 before)."""
    trains = "Trains on this line often run late in winter."
    claims = ["Trains on this line always run late in winter.", "All trains on this line run late in winter."]
    assert (cue_of_dropped(model, hashed, claims, [trains] * 2) > 0.0).all()
    x = pair_features([trains, "Trains on this line usually run late in winter."], [trains] * 2, embedder=hashed)
    assert (x[:, FEATURES.index("flip_opposite")] == 0.0).all()


def test_a_chinese_floor_put_for_another_inside_longer_runs(model, hashed, embedder):
    """二楼 for 三楼 inside replaced runs ("在二" for "还是三") kept its citation (p 0.78): a number ending
    both runs before the same character is now another count of the same thing."""
    room = "培训改到下午两点，地点还是三楼会议室，请带上笔记本。"
    assert cue_of_dropped(model, hashed, ["培训改到下午两点，地点在二楼会议室。"], [room])[0] > 0.0
    assert model.score(["培训改到下午两点，地点还是三楼会议室。"], [room], embedder=embedder)[0] >= model.hard


def test_a_chinese_claim_is_read_by_the_part_for_text_minilm_cannot_read(model, embedder):
    """MiniLM cannot read Chinese, so the main model masks its cosines and a reworded true claim lost its
    citation to character overlap. The ``unread`` part reads the pair through multilingual-e5-small and
    keeps it; lies with one detail changed stay dropped."""
    from asmr.verify.verifier import VerifierConfig

    tenancy = "租客如不续租，须在合同到期前三十天书面通知房东。"
    reworded = "不再续租的话，租客应当提前三十天书面通知房东。"
    training = "新员工入职后须在三十天内完成安全培训，培训由人事部每月第一个周三统一安排。"
    lies = ["不打算续租的租客要提前十天书面告知房东。", "安全培训由财务部统一安排。", "新员工可以不参加安全培训。"]
    assert model.unread is not None and model.unread.embedder == "multilingual-e5-small"
    english = "Logs are kept for 14 days."
    assert model.unread_pairs([reworded, english], [tenancy, english]).tolist() == [True, False]
    alone = SupportModel.from_dict({k: v for k, v in model.to_dict().items() if k != "unread"})
    assert alone.score([reworded], [tenancy], embedder=embedder)[0] < alone.hard
    assert model.score([reworded], [tenancy], embedder=embedder)[0] >= model.hard
    record = model.explain([reworded], [tenancy], embedder=embedder)[0]
    assert record["model"] == "multilingual-e5-small" and record["decision"] == "keep"
    assert set(record["contributions"]) == set(model.unread.features)
    p = model.score(lies, [tenancy, training, training], embedder=embedder)
    rule = VerifierConfig.from_support(model)
    assert all(q < model.hard or rule.missing(core_claim(c), u)
               for q, c, u in zip(p, lies, [tenancy, training, training]))


def test_the_unread_part_round_trips_and_must_read_every_script(model, tmp_path):
    path = tmp_path / "model.json"
    model.save(path)
    again = SupportModel.load(path)
    assert again.unread.features == model.unread.features and again.unread.bias == model.unread.bias
    assert (again.unread.hard, again.unread.soft) == (model.hard, model.soft)
    d = json.loads(path.read_text())
    d["unread"]["embedder"] = "all-MiniLM-L6-v2"
    path.write_text(json.dumps(d))
    with pytest.raises(ValueError, match=r"model\.json: the unread part's embedder must read every script"):
        SupportModel.load(path)


def test_a_negation_counts_over_what_it_stands_over(model, hashed):
    """A sentence's negation counted against any claim that restated the sentence without one, though it
    negated something the claim does not say ("no customer data was lost" beside the outages a claim
    restates): true claims lost their citations. It counts where it stands over a word of the claim, or
    over no word of its own ("but paper tickets are not"); a claim's own negation counts as before."""
    emb, col = hashed, FEATURES.index("flip_negation")
    unit = ("Weekly review: two P3 outages last month, both caused by the payment gateway; no customer data "
            "was lost.")
    restated = ["Both of last month's P3 outages were caused by the payment gateway."]
    assert pair_features(restated, [unit], embedder=emb)[0, col] == 0.0
    assert (model.score(restated, [unit], embedder=emb) >= model.hard).all()
    lies = ["The payment gateway caused no P3 outages last month.",
            "Paper tickets are accepted on night buses."]
    units = [unit, "Day passes are accepted on night buses, but paper tickets are not."]
    assert (cue_of_dropped(model, emb, lies, units, "flip_negation") > 0.5).all()


def test_a_negation_stands_over_its_own_clause(model, hashed):
    """A negation's four words ran on into the next clause ("do not carry change, so riders …" negated the
    riders), and stopped short of its own clause's end ("do not apply to the express" left the service
    out): a claim that negates the same clause in other words lost its citation. A negation now stands
    over its clause, and a clause negated once more or once less than the one it restates ("not no late
    entry", "who should be" for "who shouldn't be") conflicts with it."""
    emb, col = hashed, FEATURES.index("flip_negation")
    units = ["Drivers do not carry change, so riders paying in cash need the exact fare.",
             "Discounts do not apply to the express service X2."]
    restated = ["Riders paying in cash need the exact fare, since drivers do not carry change.",
                "The discount does not cover the express service X2."]
    x = pair_features(restated, units, embedder=emb)
    assert (x[:, col] == 0.0).all()
    lies = ["Drivers carry change, so riders paying in cash need the exact fare.",
            "There is not no late entry once the show has started.",
            "If you find someone in the building who should be there, do not confront them."]
    units = [units[0], "There is no late entry once the show has started.",
             "If you find someone in the building who shouldn't be there, do not confront them."]
    assert (cue_of_dropped(model, emb, lies, units, "flip_negation") > 0.5).all()


def test_how_often_is_no_quantifier_and_weekdays_are_monday_to_friday(model, hashed):
    """"every month" read as "all" of a group the sentence narrows ("per calendar month, up to 20 days a
    year"), and "weekdays" as a day that "Monday to Friday" does not name: both dropped true claims. A
    frequency the sentence states in the same unit of time is no quantifier, and "weekdays" and
    "weekends" name their days; "weekdays only" for "every day" and "weekends" for "Monday to Friday"
    still lose their citations."""
    emb = hashed
    claims = ["Full-time staff accrue two days of leave every month.",
              "Phone support is open on weekdays from 8 am to 6 pm."]
    units = ["Full-time staff accrue 2 days of leave per calendar month, up to 20 days a year.",
             "Phone support is open Monday to Friday, 08:00-18:00."]
    x = pair_features(claims, units, embedder=emb)
    for feature in ("flip_opposite", "flip_quantifier"):
        assert (x[:, FEATURES.index(feature)] == 0.0).all()
    lies = ["The service answers calls from 7 am to 11 pm on weekdays only.",
            "Phone support is open at weekends from 8 am to 6 pm."]
    units = ["The service answers calls from 7 am to 11 pm every day.", units[1]]
    assert (model.score(lies, units, embedder=emb) < model.hard).all()


def test_will_or_must_put_for_may_before_the_same_verb_is_an_opposite(model, hashed):
    """"will be refunded" cited to "may be refunded", and "are required to wear" to "may wear", kept their
    citations where the words between differ (the one-word swap of "must" for "may" was read already);
    "will" for "can" says the same often enough to stay kept, and so does "need to" for "must"."""
    emb, col = hashed, FEATURES.index("flip_opposite")
    units = ["Customers who cancel within a week of booking may be refunded in full by the agency.",
             "Visitors to the workshop floor may wear their own safety boots."]
    lies = ["Customers who cancel in the first week after booking will be refunded in full by the agency.",
            "Visitors to the workshop floor are required to wear their own safety boots."]
    assert (cue_of_dropped(model, emb, lies, units) > 0.5).all()
    units = ["A larger battery can power the lamp for ten hours.",
             "Drivers must report to the gatehouse first."]
    restated = ["A larger battery will power the lamp for ten hours.",
                "Drivers need to report to the gatehouse first."]
    assert (pair_features(restated, units, embedder=emb)[:, col] == 0.0).all()


def test_three_words_put_for_others_are_a_rewording_not_a_swap(model, hashed):
    """A claim that says a sentence in its own words puts several of them for the sentence's ("pick" for
    "choose", "hit" for "press", "bring … back" for "recover"), and each counted as one thing put for
    another: the more it reworded, the stronger the cue. Three or more such places are a rewording; one
    word put for another is still a swap."""
    emb, col = hashed, FEATURES.index("flip_swap")
    claims = ["To bring a deleted note back, open the Trash in the side menu, pick the note and hit Restore.",
              "Replacement coaches will leave every 15 minutes and are likely to make trips roughly "
              "30 minutes longer."]
    units = ["To recover a deleted note, open the Trash from the side menu, choose the note, and press "
             "Restore.",
             "Replacement coaches will run every 15 minutes and are expected to add around 30 minutes "
             "to trip times."]
    assert (pair_features(claims, units, embedder=emb)[:, col] == 0.0).all()
    x = pair_features(["The backup job deletes the archive at midnight."],
                      ["The backup job copies the archive at midnight."], embedder=emb)
    assert x[0, col] > 0.5


def test_a_comparison_of_two_amounts_the_unit_states_is_read_against_them(model, hashed):
    """"Adult passes cost less than student passes" kept its citation to a unit that prices them at $40 and
    $25: no word of the claim is put for another, and the comparative's opposite is nowhere. The two
    amounts are read from the unit's statements that tell the two sides apart; the true comparison, a
    bound on an amount ("more than 20 guests") and a side the unit does not price stay as they were."""
    emb, col = hashed, FEATURES.index("flip_opposite")
    passes = "Adult passes are $40 a month, and student passes cost $25. Passes are sold at the front desk."
    loans = "Resident members may borrow books for 28 days, and non-resident members for 14 days."
    lies = ["Adult passes cost less than student passes.",
            "Non-resident members may borrow books for longer than resident members."]
    assert (cue_of_dropped(model, emb, lies, [passes, loans]) > 0.5).all()
    true = ["Student passes cost less than adult passes.",
            "Resident members may borrow books for longer than non-resident members.",
            "Orders for more than 20 guests need a week's notice.",
            "Adult passes cost more than a day ticket."]
    units = [passes, loans, "Orders for more than 20 guests need a week's notice and a deposit of $50.",
             passes]
    assert (pair_features(true, units, embedder=emb)[:, col] == 0.0).all()


def test_a_name_in_the_place_of_the_pronoun_that_refers_to_it(hashed):
    """A claim that names what a sentence calls "it" (the name given in the sentence before) read as a
    name put for the words before the pronoun, and lost its citation. The first name of the nearest
    sentence before, standing where the sentence has a pronoun, is what the pronoun refers to; another
    name of the unit in the same place is still a name put for another, and one the unit lacks is still
    a missing key fact."""
    emb, col = hashed, FEATURES.index("flip_names")
    unit = ("The Marlow Lighthouse was built in 1871 beside the Gull Rock beacon. Like most lights on this "
            "coast, it flashes white every ten seconds and can be seen from 20 miles away.")
    true = ["Because Marlow Lighthouse flashes white every ten seconds, it can be seen from 20 miles away.",
            "The Marlow Lighthouse flashes white every ten seconds and can be seen from 20 miles away."]
    assert (pair_features(true, [unit] * 2, embedder=emb)[:, col] == 0.0).all()
    other = "Because the Gull Rock beacon flashes white every ten seconds, it can be seen from 20 miles away."
    assert pair_features([other], [unit], embedder=emb)[0, col] > 0.5
    absent = "Because the Harbour Light flashes white every ten seconds, it can be seen from 20 miles away."
    assert [f.kind for f in missing_facts(absent, unit)] == ["entity"]


def test_a_negation_that_one_word_of_the_other_side_says_alone(hashed):
    """"at no cost" restating "free", and "as long as no one has" restating "unless someone has", each read
    as a negation on one side only (and "if" as the opposite of "unless"), and the true claims lost their
    citations. A negation over a word of cost is what "free" says; a negation inside a condition is what
    "unless" says. "not free", and a condition that drops the negation, are still opposites."""
    emb = hashed
    neg, opp = FEATURES.index("flip_negation"), FEATURES.index("flip_opposite")
    parking = "Members park free in the north car park, and visitors pay 3 euros an hour."
    renewals = "Books can be renewed twice online unless another reader has reserved them."
    true = ["Members can park at no cost in the north car park.",
            "Members can park in the north car park without paying.",
            "Books can be renewed twice online as long as no other reader has reserved them.",
            "Books can be renewed twice online if no other reader has reserved them."]
    x = pair_features(true, [parking, parking, renewals, renewals], embedder=emb)
    assert (x[:, neg] == 0.0).all() and (x[:, opp] == 0.0).all()
    lies = ["Members cannot park free in the north car park.",
            "Parking in the north car park is not free of charge for members.",
            "Books can be renewed twice online if another reader has reserved them."]
    x = pair_features(lies, [parking, parking, renewals], embedder=emb)
    assert (x[:, neg] + x[:, opp] > 0.0).all()


def test_any_or_every_for_a_rule_with_an_exception_the_claim_leaves_out(hashed):
    """A claim that makes a rule universal ("any late request is refused") where the sentence gives the
    rule with an exception ("… unless the organiser cancelled") kept its citation: "any" was no
    quantifier of all, and only a relative clause or a bound narrowed a group. The exception the claim
    leaves out now narrows the group too; the claim that keeps it does not."""
    emb, col = hashed, FEATURES.index("flip_opposite")
    unit = ("Refunds are paid within ten days. After the second week, a refund request is refused unless "
            "the organiser cancelled the event.")
    lies = ["Any refund request after the second week is refused.",
            "Every refund request after the second week is refused."]
    assert (pair_features(lies, [unit] * 2, embedder=emb)[:, col] > 0.5).all()
    true = ["After the second week, any refund request is refused unless the organiser cancelled the event.",
            "After the second week, a refund request is refused unless the organiser cancelled the event."]
    assert (pair_features(true, [unit] * 2, embedder=emb)[:, col] == 0.0).all()


@pytest.mark.parametrize("text, expected", [
    ("据3月15日的纪要，4月至10月延长开放，3月份盘点。", [("date", "--03-15"), ("date", "--04"), ("date", "--10"),
                                               ("date", "--03")]),
    ("三个月后，13月", [("number", "13 month"), ("number", "3 month")]),  # months counted; no month 13
    ("第二天早上，第三年，五月七日", []),  # ordinals and a date's day count nothing
    ("七日内退货，在一米五深的水里", [("number", "7 day"), ("number", "1.5 m")]),
    ("招生540名，12岁，3000位", [("number", "540 people"), ("number", "12 year of age"), ("number", "3000 people")]),
])
def test_chinese_months_ordinals_and_measure_words(text, expected):
    """A month written "3月" read as three months, "第二天" (the next day) as two days, "540名" as a unit
    of its own beside "540人", "12岁" beside "十二岁", and "七日" (seven days) and "一米五" (1.5 m) not at
    all: true claims lost their citations to facts the unit states in other words."""
    assert [(f.kind, f.norm) for f in key_facts(text) if f.kind != "entity"] == expected


@pytest.mark.parametrize("claim, evidence, missing", [
    ("列车每8分钟发一班。", "开通初期行车间隔为8分钟。", []),
    ("列车每10分钟发一班。", "开通初期行车间隔为8分钟。", ["每10分钟"]),
    ("大约需要七十分钟。", "约需1小时10分钟。", []),
    ("大约需要八十分钟。", "约需1小时10分钟。", ["八十分钟"]),
    ("It takes 70 minutes.", "It takes 1 hour 10 minutes.", []),
    ("每张副卡每月收10元。", "每张副卡月功能费10元。", []),
    ("每张副卡每年收10元。", "每张副卡月功能费10元。", ["每年"]),
    ("利息按每日万分之五计算。", "按日利率万分之五计收利息。", []),
    ("会议在3月15日举行。", "2024年3月15日部门例会。", []),
    ("会议在4月15日举行。", "2024年3月15日部门例会。", ["4月15日"]),
    ("The meeting is on March 15.", "The meeting was held on 15 March 2024.", []),
    ("验收会改到周四14:00。", "验收会改到周四下午两点。", []),
    ("验收会改到周四14:30。", "验收会改到周四下午两点。", ["30"]),
    ("The meeting is at 18:00.", "The meeting is at 6 p.m.", []),
    ("The meeting is at 18:00.", "The meeting is at 6:30 p.m.", ["00"]),
])
def test_values_chinese_and_english_units_state_in_other_forms(claim, evidence, missing):
    """An interval (间隔为8分钟) states a frequency, and so does a fee or rate of a period (月功能费, 日利率);
    hours and minutes state their sum; a month and day of no year are those of a dated unit, a day said
    alone is the day of its date; a time on the hour states the minutes of "14:00"."""
    assert [f.text for f in missing_facts(claim, evidence)] == missing


def test_a_chinese_negation_counts_over_what_it_stands_over_or_as_a_word_says_it(hashed):
    """A Chinese sentence's negation counted against any claim without one ("…仍未恢复" beside what the
    claim restates of the alarm), and a claim's negation against any sentence without one, though the
    sentence's own word says it ("不用买票" for "免票", "不得进入" for "禁止…进入"). A negation now counts
    over the characters it stands over within its clause, and one that such a word of the sentence says
    over the same words is none; a negation dropped or added where the sentence says otherwise still
    counts."""
    emb, cols = hashed, [FEATURES.index("flip_negation"), FEATURES.index("neg_mismatch")]
    alarm = "当CPU使用率连续5分钟超过85%时，系统会向值班群发送告警；如果持续15分钟仍未恢复，将电话通知工程师。"
    tickets = "景区门票四十元，身高1.2米以下儿童免票。每日22:00至次日6:00禁止外来车辆进入。"
    true = [("当CPU使用率连续五分钟高于85%时，系统会向值班群发送告警。", alarm),
            ("身高不到1.2米的儿童不用买票。", tickets),
            ("每日22:00至次日6:00外来车辆不得进入。", tickets)]
    x = pair_features(*map(list, zip(*true)), embedder=emb)
    assert (x[:, cols] == 0.0).all()
    lies = [("如果持续15分钟已经恢复，将电话通知工程师。", alarm),
            ("每日22:00至次日6:00外来车辆不得停放。", tickets),
            ("身高1.2米以下儿童不免票。", tickets)]
    x = pair_features(*map(list, zip(*lies)), embedder=emb)
    assert (x[:, cols[0]] > 0.0).all()


def test_a_negative_quantifier_over_nothing_the_claim_says_is_no_other_quantifier(hashed):
    """"Every one of the four P3 tickets …" for "4 P3 tickets …, all about the old login page; no P2s" lost
    its citation: the sentence's "no", which stands over the P2 tickets alone, read as a quantifier put for
    the claim's "every". A negative quantifier whose negation stands over no word of the claim is none;
    one over the claim's words still is."""
    emb, col = hashed, FEATURES.index("flip_quantifier")
    unit = "Weekly review: 4 P3 tickets last week, all about the old login page; no P2s."
    x = pair_features(["Every one of last week's four P3 tickets was about the old login page."], [unit],
                      embedder=emb)
    assert x[0, col] == 0.0
    x = pair_features(["Every P3 ticket last week was about the old login page."],
                      ["Weekly review: no P3 ticket last week was about the old login page."], embedder=emb)
    assert x[0, col] > 0.0


def test_words_of_cost_negated_on_both_sides_say_one_thing(hashed):
    """"without paying anything extra" for "at no extra cost" lost its citation: the negated "paying"
    conflicted with the sentence's unnegated "pay" of another clause. Words of cost negated on both sides
    now read as one word; a negation over other words still conflicts."""
    emb, col = hashed, FEATURES.index("flip_negation")
    unit = ("Basic members pay 2 euros a day to roam abroad, while Premium members keep roaming at no extra "
            "cost.")
    true = "Premium members can keep roaming abroad without paying anything extra."
    assert pair_features([true], [unit], embedder=emb)[0, col] == 0.0
    lie = "Without paying anything extra, Premium members cannot keep roaming abroad."
    assert pair_features([lie], [unit], embedder=emb)[0, col] > 0.0


def test_a_chinese_rewording_is_aligned_word_by_word(model, embedder):
    """Chinese claims were aligned with their sentence character by character: a word put for another
    that shares a character with it split there into a swap (至今 for 距今), and a few words put for
    others read as a name put for a name (三边之和 for 长、宽、高之和). Words are now the units of
    alignment; hours said in words in the place of a range in digits are no other amount."""
    pairs = [("这座石桥由唐代工匠王成设计建造，距今约一千二百年。",
              "这座石桥由唐朝工匠王成设计建造，至今已有大约一千二百年的历史。"),
             ("乘客可携带长、宽、高之和不超过1.5米的行李进站。", "乘客带进站的行李，三边之和不能超过1.5米。"),
             ("出境前请拨打客服电话或通过App开通漫游功能。", "可在出国前通过拨打客服电话或在App上开通漫游功能。")]
    units, claims = map(list, zip(*pairs))
    features = pair_features(claims, units, embedder=embedder)
    for cue in ("flip_swap", "flip_names", "flip_opposite"):
        assert (features[:, FEATURES.index(cue)] == 0.0).all(), cue
    assert (model.score(claims, units, embedder=embedder) >= model.hard).all()
    hours = pair_features(["每逢周六和周日，这家店从早上9点到晚上9点半连续营业。"], ["本店周六、周日9:00–21:30全天营业。"],
                          embedder=embedder)
    assert hours[0, FEATURES.index("flip_opposite")] == 0.0


def test_a_chinese_claim_that_turns_must_into_may_or_a_cap_into_a_floor(model, hashed, embedder):
    """"建议有成人陪同" (an adult is advised) for "须有成人陪同" (must come) kept its citation (p 0.70): the
    Chinese of "may" put for "must", which the English check reads as an opposite, was read as one word put
    for another in an otherwise restated sentence. It is now an opposite, as is "至少" (at least) put for
    "最高" (at most); a word of the same side ("需要" for "须") is not."""
    pool = "泳池仅对住客开放，12岁以下儿童须有成人陪同。"
    fee = "跨行转账每笔手续费最高25元。"
    turned = [("12岁以下儿童使用泳池时，建议有成人陪同。", pool), ("跨行转账每笔手续费至少25元。", fee)]
    assert (cue_of_dropped(model, hashed, *zip(*turned), "flip_opposite") > 0.0).all()
    kept = [("12岁以下儿童使用泳池时，需要有成人陪同。", pool)]
    assert (model.score(*map(list, zip(*kept)), embedder=embedder) >= model.hard).all()


def test_a_chinese_claim_that_stops_before_its_sentence_is_read_to_its_end(model, hashed, embedder):
    """"…8点以前" against "…8点以后，闭馆时间为晚上10点前" aligned 以前 with the whole rest of the sentence,
    whose last character, 前, was then given back as the same: the claim read as restated, the opposite
    unseen. A claim that stops before its sentence does now puts its last words for the sentence's next
    ones; the same claim with the sentence's own word keeps its citation."""
    from asmr.verify.support import _cjk_opcodes

    hours = "图书馆开放时间为上午8点以后，闭馆时间为晚上10点前。"
    power = "夏季为用电高峰，冬季用电较为平稳。"
    turned = [("图书馆开放时间为上午8点以前。", hours), ("夏季为用电低峰。", power)]
    assert (cue_of_dropped(model, hashed, *zip(*turned), "flip_opposite") > 0.0).all()
    _, opcodes = _cjk_opcodes("图书馆开放时间为上午8点以前", "图书馆开放时间为上午8点以后闭馆时间为晚上10点前")
    assert ("replace", 13, 14, 13, 14) in opcodes
    kept = [("图书馆开放时间为上午8点以后。", hours), ("夏季为用电高峰。", power)]
    features = pair_features(*map(list, zip(*kept)), embedder=embedder)
    assert (features[:, FEATURES.index("flip_opposite")] == 0.0).all()
    assert (model.score(*map(list, zip(*kept)), embedder=embedder) >= model.hard).all()
