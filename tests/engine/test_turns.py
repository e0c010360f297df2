"""Chat turns as units hold them (asmr.text.turns), and questions that ask when (asmr.text.when)."""
from datetime import date, datetime

from asmr.text.turns import (about, named_speakers, only_asks, parse_turn, question_answered, said_turns,
                             speaker_key, without_names)
from asmr.text.when import asks_when, says_when
from asmr.units.chat import render_turn


def test_a_rendered_turn_reads_back():
    text = render_turn(datetime(2023, 5, 8, 14, 2), "Alice Smith", "I moved to Porto yesterday.")
    turn = parse_turn(text)
    assert turn.stamp == "2023-05-08 14:02" and turn.speaker == "Alice Smith"
    assert turn.body == "I moved to Porto yesterday (2023-05-07)."
    assert parse_turn(render_turn(date(2023, 5, 8), "user", "hi")).speaker == "user"
    assert speaker_key(text) == "alice smith"
    for other in ("Alice: no stamp", "[2023-05-08] no speaker here", "A document. [2023-05-08] Bob: later"):
        assert parse_turn(other) is None and speaker_key(other) is None


def test_a_turn_is_about_its_speaker_unless_it_names_someone():
    said = render_turn(date(2023, 5, 8), "Alice Smith", "Congrats, Bob! I adopted a cat.")
    assert about(said, "alice smith") and about(said, "alice")  # the speaker, or their first name
    assert about(said, "bob")  # named in what is said
    assert not about(said, "carol")
    assert about("Carol Jones wrote the report.", "carol")  # not a turn: whatever it mentions


def test_named_speakers_are_names_in_the_question():
    speakers = {"yara", "yara smith", "mirela", "user"}
    assert named_speakers("What is Yara's job?", speakers) == ["yara"]
    assert sorted(named_speakers("Did Yara Smith meet Mirela?", speakers)) == ["mirela", "yara smith"]
    assert named_speakers("What did the user say?", speakers) == []  # a lower-case word is no name
    assert without_names("When did Yara Smith meet MIRELA?", ["yara smith", "mirela"]) == \
        "When did someone meet someone?"


def test_questions_that_ask_when_and_texts_that_say_when():
    for q in ("When did Oona move?", "What year did the company start?", "On which date was it signed?",
              "In what year was he born?", "How long ago did it happen?", "他什么时候来的？", "公司是哪一年成立的？"):
        assert asks_when(q), q
    for q in ("Where does Oona live?", "Whence came the name?", "Which band did she see?", "公司在哪里？"):
        assert not asks_when(q), q
    assert says_when("[2023-05-08] Oona: I moved yesterday (2023-05-07).")
    assert says_when("[2023-05-08] Oona: Today I moved.")  # today is a time too
    assert says_when("The company was founded on 3 May 2021.") and says_when("去年我搬家了。")
    assert not says_when("[2023-05-08] Oona: I moved to Porto.")  # the stamp alone does not count


def test_relative_time_is_stated_in_words():
    from asmr.text.when import with_dates
    said = "[2023-05-08] Mirela: Last week (2023-05-01 to 2023-05-07) I adopted a cat."
    assert with_dates(said) == ("[2023-05-08] Mirela: Last week (2023-05-01 to 2023-05-07, the week of 1 May 2023) "
                                "I adopted a cat.")
    assert with_dates("I moved yesterday (2023-05-07).") == "I moved yesterday (2023-05-07, 7 May 2023)."
    assert with_dates("I moved last month (2023-04).") == "I moved last month (2023-04, April 2023)."
    assert with_dates("I ran two years ago (2021).") == "I ran two years ago (2021)."  # the year says it already
    # not resolved at ingest: against the reference day, or left alone without one
    assert with_dates("Today I moved.", date(2023, 5, 8)) == "Today (8 May 2023) I moved."
    assert with_dates("Last year we moved.", date(2023, 5, 8)) == "Last year (2022) we moved."
    assert with_dates("Last year we moved.") == "Last year we moved."


def test_said_turns_are_a_units_turns_and_the_turns_it_quotes():
    joined = "[2023-05-08] Ann: ok\n\n[2023-05-08] Ann: see you at 7"
    assert [(t.speaker, t.body, q) for t, q in said_turns(joined)] == [("Ann", "ok", False),
                                                                       ("Ann", "see you at 7", False)]
    # a remembered answer that only quotes states nothing of its own: the quoted turns are what it says
    echo = "[2026-03-02 09:31] assistant: [2026-03-02 09:30] user: I fly Friday [x]. [2023-05-08] Bob: Hi."
    assert [(t.stamp, t.speaker, t.body, q) for t, q in said_turns(echo)] == [
        ("2026-03-02 09:30", "user", "I fly Friday [x].", True), ("2023-05-08", "Bob", "Hi.", True)]
    assert said_turns("A document. [2023-05-08] Bob: later") == []


def test_a_reply_answers_the_question_another_speaker_asked_before_it_the_same_day():
    asked = "[2025-03-09 10:00] Noor: and how did the regatta go?"
    assert question_answered(asked, "[2025-03-09 10:01] Ilse: third place!!") == asked
    # the last turn of a unit of several asks; a question mark before quotes or a picture's caption
    joined = f"[2025-03-09] Ilse: back home\n\n[2025-03-09] Ilse: guess what I found? [image: a kite]"
    assert question_answered(joined, "[2025-03-09] Noor: your kite") == \
        "[2025-03-09] Ilse: guess what I found? [image: a kite]"
    assert question_answered("[2025-03-09] 诺尔: 你们赛艇比赛得了第几名？」", "[2025-03-09] 伊尔塞: 第三名") is not None
    for before, reply in ((asked, "[2025-03-09 10:02] Noor: well?"),  # the same speaker asks on
                          ("[2025-03-09] Noor: the regatta is today.", "[2025-03-09] Ilse: third place"),
                          ("[2025-03-08] Noor: how did it go?", "[2025-03-09] Ilse: third place"),  # a day apart
                          ("How did the regatta go?", "[2025-03-09] Ilse: third place"),  # no turn
                          (asked, "Third place.")):
        assert question_answered(before, reply) is None, (before, reply)


def test_a_question_that_calls_someone_by_name_is_theirs_to_answer():
    people = {"noor", "ilse", "bram", "bram de vries"}
    for asked in ("[2025-03-09] Noor: Bram, did the boat survive the storm?",
                  "[2025-03-09] Noor: did the boat survive the storm, Bram?"):
        assert question_answered(asked, "[2025-03-09] Ilse: I moved flats today", people) is None
        assert question_answered(asked, "[2025-03-09] Bram de Vries: barely", people) == asked
    # a word before a comma that is nobody's name calls nobody
    so = "[2025-03-09] Noor: So, did the boat survive?"
    assert question_answered(so, "[2025-03-09] Ilse: it did", people) == so


def test_a_unit_only_asks_when_every_turn_it_states_ends_in_a_question():
    assert only_asks("[2025-03-09] Noor: how did the regatta go?")
    assert only_asks("[2025-03-09] Noor: you back?\n\n[2025-03-09] Noor: how did it go? [image: a boat]")
    assert not only_asks("[2025-03-09] Noor: we won!\n\n[2025-03-09] Noor: did you see?")
    assert not only_asks("[2025-03-09] Ilse: third place")
    assert not only_asks("How did the regatta go?")  # no turn


def test_a_chinese_question_may_end_in_its_particle_without_a_question_mark():
    asked = "[2025-03-09] 诺尔: 你们周末去爬山了吗"
    assert only_asks(asked) and only_asks("[2025-03-09] 诺尔: 好久不见，最近还在跑步吗～")
    assert question_answered(asked, "[2025-03-09] 伊尔塞: 去了，爬到山顶看日出") == asked
    assert not only_asks("[2025-03-09] 伊尔塞: 去了，爬到山顶看日出")
