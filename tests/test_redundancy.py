"""The redundancy block: key facts of the turn's sources, relevant to the question, within a budget."""
import pytest

from asmr.generate.base import Source
from asmr.redundancy.block import approx_tokens, redundancy_block, select_key_facts

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
    full = redundancy_block(q, SOURCES, mode="full", paraphrase=lambda s: s.upper())
    assert "Example question: " + q in full and "In other words: ROLLBACKS" in full
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
