"""The redundancy block: key facts of the turn's sources, relevant to the question, within a budget."""
import pytest

from asmr.generate.base import Source
from asmr.redundancy.block import (ParaphraseCache, approx_tokens, hypothetical_question, redundancy_block,
                                   select_key_facts)
from asmr.text.facts import key_facts

SOURCES = [
    Source("memo://kb/ops/1", "Deploys start at 02:00 UTC on Sundays. Rollbacks must finish within 15 minutes."),
    Source("memo://kb/rel/2", "Version 2.4.1 raised the upload limit to 512 MB. The release team is small."),
    Source("memo://kb/hr/3", "Travel is booked by the office manager."),
]


def test_relevant_fact_sentences_first_with_their_unit():
    facts = select_key_facts("What is the upload limit?", SOURCES)
    assert facts[0].unit_id == "memo://kb/rel/2"
    assert {f.text for f in facts[0].facts} >= {"512 MB"}
    # a sentence without a key fact is never a candidate
    assert all("small" not in k.sentence for k in facts)


def test_block_modes_and_markers():
    q = "How long may a rollback take?"
    assert redundancy_block(q, SOURCES, mode="off") == ""
    block = redundancy_block(q, SOURCES, mode="list")
    assert block.startswith("Key facts:")
    assert "15 minutes" in block and "[cite:memo://kb/ops/1]" in block
    assert "Example" not in block and "In other words" not in block  # list mode: the facts only
    with pytest.raises(ValueError, match="redundancy mode"):
        redundancy_block(q, SOURCES, mode="some")


def test_budget_bounds_the_block_but_keeps_one_fact():
    many = [Source(f"memo://kb/d/{i}", f"Limit {i} is {i * 10} GB for region {i}.") for i in range(30)]
    block = redundancy_block("What is the limit for the region?", many, budget_tokens=60)
    assert approx_tokens(block) <= 60 and 1 <= block.count("\n- ") < 30
    tiny = redundancy_block("What is the limit for the region?", many, budget_tokens=1)
    assert tiny.count("- ") == 1


def test_no_facts_no_block():
    assert redundancy_block("who?", [Source("memo://kb/x/1", "nothing to see here")]) == ""


def test_full_mode_asks_a_question_made_from_the_fact_and_answers_it_with_the_fact():
    q = "How long may a rollback take?"
    full = redundancy_block(q, SOURCES, mode="full")
    lines = full.splitlines()
    # the question is the fact's sentence with the fact blanked, not the user's question
    assert "Example question: Rollbacks must finish within how many minutes?" in lines
    assert "Example answer: 15 minutes [cite:memo://kb/ops/1]." in lines
    assert q not in full and "In other words" not in full  # no paraphraser given


def test_hypothetical_questions_per_fact_kind_and_in_chinese():
    def ask(sentence):
        made = hypothetical_question(sentence, key_facts(sentence))
        return made and made[0]
    assert ask("Version 2.4.1 raised the upload limit.") == "Which version raised the upload limit?"
    assert ask("The policy took effect on March 3, 2021.") == "The policy took effect on what date?"
    assert ask("It was released in 2019.") == "It was released in what year?"
    assert ask("Travel costs $500 per trip.") == "Travel costs how much per trip?"
    assert ask("Error ERR_42 means the disk is full.") == "Error which code means the disk is full?"
    assert ask("部署窗口持续30分钟。") == "部署窗口持续多少分钟？"
    assert ask("该政策于2021年3月生效。") == "该政策于哪个月生效？"
    assert ask("盘点在3月进行。") == "盘点在哪个月进行？"  # a month of no stated year
    assert ask("会议定于3月15日召开。") == "会议定于哪一天召开？"
    # numbers written in words ask by what they measure
    assert ask("Logs are kept for fourteen days.") == "Logs are kept for how long?"
    assert ask("Backups run daily.") == "Backups run how often?"
    assert ask("Prices rose five percent.") == "Prices rose what percentage?"
    assert ask("日志保留三十天。") == "日志保留多久？"
    assert ask("nothing to ask about here") is None


def test_full_mode_adds_one_paraphrase_of_the_top_fact_when_it_keeps_the_facts():
    q = "How long may a rollback take?"
    calls = []

    def paraphrase(sentence):
        calls.append(sentence)
        return "A rollback has to be done in 15 minutes or less."
    cache = ParaphraseCache(paraphrase)
    full = redundancy_block(q, SOURCES, mode="full", paraphrase=cache)
    assert "In other words: A rollback has to be done in 15 minutes or less [cite:memo://kb/ops/1]." in full
    assert redundancy_block(q, SOURCES, mode="full", paraphrase=cache) == full
    assert calls == ["Rollbacks must finish within 15 minutes."]  # the second block reused the first call
    assert "In other words" not in redundancy_block(q, SOURCES, mode="list", paraphrase=cache)
    # a paraphrase that changes a number would restate a wrong fact under the unit's id: left out
    wrong = redundancy_block(q, SOURCES, mode="full", paraphrase=lambda uid, s: "Rollbacks take 50 minutes.")
    assert "In other words" not in wrong and "Example question" in wrong
    assert "In other words" not in redundancy_block(q, SOURCES, mode="full", paraphrase=lambda uid, s: None)


def test_full_mode_stays_within_its_budget():
    many = [Source(f"memo://kb/d/{i}", f"Limit {i} is {i * 10} GB for region {i}.") for i in range(30)]
    q = "What is the limit for the region?"
    for budget in (20, 40, 60, 120):
        block = redundancy_block(q, many, mode="full", budget_tokens=budget,
                                 paraphrase=lambda uid, s: s.replace("Limit", "The limit"))
        assert approx_tokens(block) <= budget, (budget, block)
    # room is kept for the pair and the paraphrase: a generous list does not crowd them out
    roomy = redundancy_block(q, many, mode="full", budget_tokens=120, max_facts=30,
                             paraphrase=lambda uid, s: s.replace("Limit", "The limit"))
    assert "Example question" in roomy and "In other words" in roomy and roomy.count("\n- ") >= 2
    with pytest.raises(ValueError, match="max_facts"):
        redundancy_block(q, many, max_facts=0)
