"""The native key-fact extractor (csrc/cpu/key_facts.cpp) finds what the regex extractor finds.

ASCII text takes the native path in asmr.text.facts; these tests hold it to the
Python patterns it ports, fact for fact (kind, text, norm, order), on the bundled
knowledge base, on hand-picked edge cases of every pattern and on generated text.
"""
import json
import random
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from asmr.text import facts as F
from asmr_kernels.cpu import KeyFactExtractor

ROOT = Path(__file__).resolve().parents[2]
DEV = ROOT.parent / "shared" / "data" / "attributionbench_dev.jsonl"
NATIVE = KeyFactExtractor(sorted(F._COMMON), F.Fact, F.KINDS)

# One or more cases for each branch of the patterns: codes, ISO / day-month-year /
# month-day-year dates, years, versions (v-prefix, dotted, after a product name),
# units, scale words, currency, lists, entities with connectors and sentence openers,
# amounts, frequencies and unbounded durations written in words.
EDGE_CASES = [
    "The ERR_42 code and SKU1234 and COVID-19 and AB-cd and ab_c and A100 and iOS17 and ABc1 AB1x.",
    "On March 3, 2021 and 3rd of March 2021 and 3 Mar. 2021 and 2021-03-03, also 2021-13-01 and 2021-3.",
    "Sept 9, 1999; Sepember 2020; 21st September, 2001; May 2019; 39 Dec 2020; 0 September 2021.",
    "In the 1990s, 2099 and 2100 people came; 1999 m; 1999s; 2021 million.",
    "Release 2.1, version 3.5, ver. 4.2, Python 3.11 and v1.2.3 and V2 and 1.2.3.4 and 12. and .5 apples.",
    "It weighs 1,234.5 kg, costs $5 million or $ 12M, takes 3.5 percent, 12 per  cent, 2 percentage  points.",
    "Sizes: 12 GB, 5m, 80g, 3x, 5 k, 7K, 10 ms, 4 kwh, 3 hrs, 6 days, 2 weeks, 9 centuries, 12 persons.",
    "A list 1,2,3 and 1,23 and 1,234,567 and 012.,2021 and 3.5$ and 9.",
    "The New York Times and Leonardo da Vinci and Bank of America and AT&T and O'Neil and U.S. Army.",
    "However Paris is big. The Beatles played. Overall, Apple won. NASA flew. IBM's chips. X is one.",
    "Windows XP Service Pack 2 and C++ 17 and Version\n3.2 and Release \n2.1 and Mayday 3 2021.",
    "\x1c12 June\x1f2021 and 5\x0bkm and 3\tMarch\t2021 \n",
    "Staffed 9:00-17:30, shipped in 3-5 days, not the 19 of COVID-19 or ab-12.",
    "A 14-day supply, a 30-minute walk, a 2-mm gap, 10-K, 5-m, 3-times, a 12- month, 7-%, 4-hourly.",
    "",
    "no facts at all here",
    "9" * 300 + " trillion and " + "1" * 298 + ".5 kg",  # inf, and a float of many digits
    # written in words: amounts, frequencies, unbounded durations, and the idioms they leave out
    "Kept for fourteen days, twenty-one weeks, a hundred and twenty years, two dozen miles, half an hour, "
    "an hour and a half, one and a half hours, a half-hour, a fortnight, five percent, three per  cent.",
    "Twice a day, three times a week, 5 times a day, once every two weeks, every other day, every second day, "
    "every second, every 3 days, every 1.5 hours, every half hour, per annum, 3 backups per day, each year.",
    "It runs nightly, every night, each morning, twice every evening and every afternoon; the nightly build, "
    "a night out, every weekday, Every Night Fever, each mornings.",
    "It runs daily. It runs hourly at noon, weekly, on a daily basis, monthly; kept forever, for ever, "
    "indefinitely, permanently, in perpetuity; keys never expire. Forever, he said. Every day I run.",
    "Daily backups and daily life in The Daily Telegraph; Forever Young; Every Day; One day, he left; "
    "until one day; one day later; 60 km an hour, 8 hours a day, $5 per day, three meals a day, a day-to-day "
    "job, a year-round resort, the twenty-second day, a second time, a sec, zero times a day, 1.5 times a day.",
]

TOKENS = ("0 1 2 3 9 12 31 39 00 2021 1999 2099 2100 1,234 1,234,567.89 1,2 3.5 1.2.3 v1.2 V2 12. .5 , . - _ $ % "
          "( ) : ! ? \" ' March Mar Mar. Sept Sep September Sepember May June Jul Dec of the The New York "
          "ERR_42 A100 COVID-19 AB-cd ab_c SKU1234 ABc1 AB1x st nd rd th km kg GB ms kwh mi min sec million bn "
          "thousand k K m M x s g percent per cent percentage points point version release Release ver. "
          "iOS C++ U.S. AT&T O'Neil de della van Der & y for Inc. 3rd 1990s 5m 12M $5 2021-03-03 2021-13-01 "
          "2021-3 21st hrs days persons times dollars "
          "every each other second once twice thrice a an half per annum daily weekly hourly monthly yearly "
          "nightly night morning evening afternoon "
          "annually fortnightly forever for ever indefinitely permanently in perpetuity never expire expires "
          "expired one two twenty twenty-one fourteen hundred and dozen day days hour hours week weeks fortnight "
          "minute year percent percentage Daily Every One Forever I life at basis -to- year-round later until "
          "- 1.5").split(" ")
SEPARATORS = [" ", " ", "", "\t", "\n", "  ", ", ", ". "]


def python_facts(text: str):
    return F._regex_key_facts(text)


def bundled_texts() -> list[str]:
    texts = []
    for path in sorted((ROOT / "examples").rglob("*.md")):
        body = path.read_text()
        texts.append(body)
        texts.extend(line for line in body.splitlines() if line.strip())
    return [t for t in texts if t.isascii()]


@pytest.mark.parametrize("text", EDGE_CASES)
def test_edge_cases_match_the_regex_extractor(text):
    assert NATIVE(text) == python_facts(text)


def test_the_bundled_knowledge_base_matches():
    texts = bundled_texts()
    assert len(texts) > 50
    mismatched = [t for t in texts if NATIVE(t) != python_facts(t)]
    assert mismatched == []
    assert sum(len(python_facts(t)) for t in texts) > 100  # the comparison saw facts


@pytest.mark.skipif(not DEV.exists(), reason=f"{DEV} absent (evaluation data of the shared workspace)")
def test_attributionbench_dev_text_matches():
    texts = []
    for line in DEV.read_text().splitlines()[:400]:
        row = json.loads(line)
        texts += [v for v in row.values() if isinstance(v, str) and v.isascii()]
    assert [t for t in texts if NATIVE(t) != python_facts(t)] == []


def test_generated_text_matches():
    rng = random.Random(7)
    for _ in range(20000):
        text = "".join(rng.choice(TOKENS) + rng.choice(SEPARATORS) for _ in range(rng.randint(1, 14)))
        assert NATIVE(text) == python_facts(text), text


@settings(max_examples=300)
@given(st.lists(st.one_of(st.sampled_from(TOKENS), st.text(st.characters(max_codepoint=127), max_size=4)),
                max_size=16).map(" ".join))
def test_any_ascii_text_matches(text):
    assert NATIVE(text) == python_facts(text)


def test_key_facts_takes_the_native_path_for_ascii_only():
    ascii_text = "Version 2.1 shipped on March 3, 2021 to 12 GB nodes in Berlin."
    assert F.key_facts(ascii_text) == list(NATIVE(ascii_text))
    cjk = "清华大学于2021年3月3日发布了版本 2.1"
    assert {f.kind for f in F.key_facts(cjk)} >= {"date", "entity"}  # the regex extractor's CJK patterns


def test_a_digit_run_too_long_is_left_to_python_and_does_not_crash():
    text = "9" * 400 + " trillion"
    assert NATIVE(text) is None
    (fact,) = F.key_facts(text)
    assert fact.kind == "number" and fact.norm == "inf"


@pytest.mark.parametrize("bad, reason", [
    (b"bytes", "must be a string"),
    (None, "must be a string"),
    ("caf\u00e9 12 GB", "must be ASCII"),
])
def test_bad_text_is_refused_by_name(bad, reason):
    with pytest.raises(ValueError, match=reason):
        NATIVE(bad)


def test_bad_common_words_are_refused():
    with pytest.raises(ValueError, match="common_words"):
        KeyFactExtractor(["The"])
    with pytest.raises(ValueError, match="kinds"):
        KeyFactExtractor(["the"], kinds=("number",))
