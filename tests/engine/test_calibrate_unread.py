"""bench/calibrate_unread_support.py: the threshold's trade, and bad input gets one clear line."""
import importlib.util
import json
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def calibrate():
    spec = importlib.util.spec_from_file_location("calibrate_unread_support",
                                                  ROOT / "bench" / "calibrate_unread_support.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_threshold_weighs_a_lie_kept_against_true_claims_dropped(calibrate, monkeypatch):
    p = np.array([0.9, 0.8, 0.7, 0.65, 0.6])
    y = np.array([True, True, False, True, False])
    dropped, weight = np.zeros(5, bool), np.ones(5)
    assert calibrate.LIE_COST == 2.0
    assert calibrate.least_cost_threshold(p, y, dropped, weight) == 0.8  # a lie kept costs two truths
    monkeypatch.setattr(calibrate, "LIE_COST", 1.0)
    assert calibrate.least_cost_threshold(p, y, dropped, weight) == 0.65  # one for one: keep the third truth
    # a claim the key-fact check drops is dropped at any threshold: its lie costs nothing
    assert calibrate.least_cost_threshold(p, y, np.array([0, 0, 1, 0, 0], bool), weight) == 0.65


def test_an_unknown_round_is_named(calibrate, tmp_path, capsys):
    claims = tmp_path / "claims"
    claims.mkdir()
    (claims / "cmrc.jsonl").write_text(json.dumps({"text": "会议在三楼。", "evidence": "会议在三楼。", "unit": "u",
                                                   "kind": "identity", "label": "supported", "lang": "zh"},
                                                  ensure_ascii=False) + "\n", encoding="utf-8")
    assert calibrate.main(["--claims", str(claims), "--rounds", "nz1", "zz9", "--no-write"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [f"calibrate_unread_support: zz9: not among the rounds of {calibrate.DEFAULT_DATA}"]
