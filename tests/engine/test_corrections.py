"""Terse corrections (asmr.text.corrections): hand-written turns, English and Chinese, and turns that
correct nothing."""
import pytest

from asmr.text.corrections import (Correction, adds_value, marks_correction, read_correction, replaced_span,
                                   value_kind)


@pytest.mark.parametrize("said, value, replaced", [
    ("Correction: Bologna, not Tartu!", "Bologna", "Tartu"),
    ("Sorry, I meant Friday", "Friday", None),
    ("No wait, it's the 14th, not the 12th", "14th", "12th"),
    ("Actually it was a cello", "cello", None),
    ("My bad - 4pm, not 3pm.", "4pm", "3pm"),
    ("Oh, not Tuesday but Wednesday, sorry", "Wednesday", "Tuesday"),
    ("Bologna, not Tartu!", "Bologna", "Tartu"),
    ("不对，是周五，不是周四", "周五", "周四"),
    ("我是说博洛尼亚", "博洛尼亚", None),
    ("更正：周五", "周五", None),
])
def test_a_terse_correction_gives_its_value_and_the_one_it_replaces(said, value, replaced):
    assert read_correction(said) == Correction(value, replaced)


@pytest.mark.parametrize("said", [
    "I visited Paris too",  # a second true value, said as one
    "Tom brings the wine",
    "Sorry to hear that!",  # a lead-in without a contrast or a value meant
    "Actually, I love hiking",
    "Not bad, but tiring",  # a contrast that is no correction
    "Tea, not coffee, please",
    "I meant it!",
    "Sorry, I meant to say that the trip was long and the hotel was not what the pictures showed at all",
])
def test_turns_that_correct_nothing(said):
    assert read_correction(said) is None


def test_the_span_a_correction_replaces():
    friday = read_correction("Sorry, I meant Friday")
    earlier = "My flight is on Thursday at 9."
    assert earlier[slice(*replaced_span(friday, earlier))] == "Thursday"
    assert replaced_span(friday, "I land on Friday.") is None  # the value is said there already
    assert replaced_span(friday, "The hotel was lovely.") is None  # no weekday to replace
    named = read_correction("No wait, it's the 14th, not the 12th")
    assert replaced_span(named, "The party is on the 12th.") == (20, 24)
    assert replaced_span(named, "The party is on the 13th.") is None  # it names what it replaces
    city = read_correction("Hang on, I misspoke, it's Porto.")
    assert replaced_span(city, "Tartu is where I live now.") is None  # a capital opening a sentence
    assert replaced_span(city, "I live in Tartu now.") == (10, 15)
    cello = read_correction("Actually it was a cello")
    assert replaced_span(cello, "I played the violin at the concert.") == (0, 35)  # no kind: the turn
    assert [value_kind(v) for v in ("Friday", "周五", "May 14", "9:30", "42", "Porto", "cello")] == \
        ["weekday", "weekday", "date", "time", "number", "name", "word"]


def test_marks_of_a_correction_and_of_an_addition():
    assert marks_correction("Sorry, typo.") and marks_correction("Wait, let me correct that.")
    assert marks_correction("说错了，是周五") and not marks_correction("I bring the wine.")
    assert adds_value("I visited Paris too.") and adds_value("我也去过巴黎")
    assert not adds_value("I visited Paris.")
