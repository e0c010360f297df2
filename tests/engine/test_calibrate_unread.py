"""bench/calibrate_unread_support.py: the threshold's trade, and bad input gets one clear line."""
import importlib.util
import json
import sys
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def calibrate():
    spec = importlib.util.spec_from_file_location("calibrate_unread_support",
                                                  ROOT / "bench" / "calibrate_unread_support.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # as an import does: its dataclass looks its module up there
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


def test_refitting_the_main_model_keeps_the_unread_part_on_its_new_threshold(tmp_path):
    """bench/calibrate_support.py rewrites the model: the part for Chinese is carried over, its bias moved
    so that each of its pairs is as far from the new ``hard`` as it was from the old."""
    from asmr.embed import get_embedder
    from asmr.verify.support import pair_features
    from asmr.verify.support_model import SupportModel

    spec = importlib.util.spec_from_file_location("calibrate_support",
                                                  ROOT / "bench" / "calibrate_support.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    shipped = SupportModel.load()
    path = tmp_path / "model.json"
    shipped.save(path)
    part = module.unread_part_kept(path, 0.6)
    x = pair_features(["会议改在三楼举行。", "会议在二楼。"], ["会议改在三楼会议室举行。"] * 2,
                      embedder=get_embedder("hash-64"))
    def logit(p):
        return np.log(p / (1 - p))

    assert np.allclose(logit(part.predict(x)) - logit(0.6),
                       logit(shipped.unread.predict(x)) - logit(shipped.hard))
    assert module.unread_part_kept(tmp_path / "none.json", 0.6) is None
