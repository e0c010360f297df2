"""bench/support_probes.py: the hand-written claim rounds load, and bad input gets one clear line."""
import importlib.util
import json
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def probes():
    spec = importlib.util.spec_from_file_location("support_probes", ROOT / "bench" / "support_probes.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_every_round_loads_with_both_kinds_of_claim(probes):
    rows = probes.load(probes.DEFAULT_DATA)
    rounds = {r["round"] for r in rows}
    assert {"p1", "p2", "p3"} <= rounds
    for name in rounds:
        labels = {r["supported"] for r in rows if r["round"] == name}
        assert labels == {True, False}, name


def test_a_line_without_a_field_is_named(probes, tmp_path, capsys):
    data = tmp_path / "probes.jsonl"
    data.write_text(json.dumps({"round": "x", "claim": "A.", "unit": "A."}) + "\n")
    assert probes.main(["--data", str(data)]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and f"{data}:1: missing supported" in err


def test_a_round_not_in_the_data_is_refused(probes, capsys):
    assert probes.main(["--rounds", "no-such-round"]) == 2
    assert "no claims" in capsys.readouterr().err


def test_rounds_with_a_kind_per_claim_are_tallied_by_kind(probes, tmp_path, capsys):
    unit = "The shop is open on Sundays from 10 am to 4 pm."
    rows = [{"round": "k", "claim": unit, "unit": unit, "supported": True, "kind": "paraphrase"},
            {"round": "k", "claim": "The shop is not open on Sundays.", "unit": unit, "supported": False,
             "kind": "negation"},
            {"round": "plain", "claim": unit, "unit": unit, "supported": True}]
    data = tmp_path / "probes.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in rows))
    assert probes.main(["--data", str(data), "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["k"]["by_kind"] == {"paraphrase": {"n": 1, "kept": 1}, "negation": {"n": 1, "kept": 0}}
    assert "by_kind" not in report["plain"]


def test_totals_print_the_figures_and_no_claim(probes, tmp_path, capsys):
    """A round kept out of every rule is scored without its claims being shown."""
    unit = "The shop is open on Sundays from 10 am to 4 pm."
    # labelled against what the unit says: both are decided wrongly, so both would be printed
    rows = [{"round": "held", "claim": "The shop is closed on Sundays.", "unit": unit, "supported": True,
             "kind": "paraphrase"},
            {"round": "held", "claim": "The shop opens at 9 am on Sundays.", "unit": unit, "supported": False,
             "kind": "number"}]
    data = tmp_path / "probes.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in rows))
    for extra in ([], ["--json"]):
        assert probes.main(["--data", str(data), "--totals", *extra]) == 0
        out = capsys.readouterr().out
        assert "held" in out and "Sundays" not in out
    assert probes.main(["--data", str(data)]) == 0
    assert "closed on Sundays" in capsys.readouterr().out
