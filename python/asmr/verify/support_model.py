"""The support model: a logistic regression over the support features, with its thresholds.

Weights in ``support_model.json``, fitted by ``bench/calibrate_support.py``.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Sequence

import numpy as np

from asmr.text.facts import missing_facts

from .claims import core_claim
from .support import COSINE_FEATURES, FEATURES, pair_features

DEFAULT_MODEL_PATH = Path(__file__).with_name("support_model.json")
_READABLE = FEATURES.index("readable")


@lru_cache(maxsize=16)
def _columns(features: tuple[str, ...]) -> tuple[np.ndarray, np.ndarray]:
    """The columns of ``features`` in the full matrix, and which of them are cosines."""
    return (np.array([FEATURES.index(f) for f in features], np.int64),
            np.array([f in COSINE_FEATURES for f in features]))


def standardised(x: np.ndarray, features: tuple[str, ...], mean: np.ndarray, scale: np.ndarray) -> np.ndarray:
    """The columns ``features`` of a full feature matrix, standardised; a cosine of text the embedder
    cannot read counts as much as the share it can ("readable"): none, at the mean."""
    columns, cosines = _columns(tuple(features))
    standard = (x[:, columns] - mean) / scale
    standard[:, cosines] *= x[:, [_READABLE]]
    return standard


def _sigmoid(z: np.ndarray) -> np.ndarray:
    return 1.0 / (1.0 + np.exp(-np.clip(z, -40, 40)))


@dataclass
class SupportModel:
    """Logistic regression over standardised :data:`FEATURES`, with the keep/rewrite thresholds.

    ``contradiction`` (optional): cues of a flipped restatement (``support.FLIP_FEATURES``) with
    weights fitted on generated claims, subtracted from the log-odds: the support part is fitted on
    attribution data that has few plain contradictions, so it cannot weigh them itself.

    ``hard``: a probability at or above it keeps the citation. ``soft`` (<= ``hard``): at or
    above it, below ``hard``, the generator is asked for one rewrite; below it the check fails.
    """

    features: tuple[str, ...]
    mean: np.ndarray
    scale: np.ndarray
    weights: np.ndarray
    bias: float
    hard: float
    soft: float
    embedder: str = "all-MiniLM-L6-v2"
    contradiction: dict | None = None  # {"features": [...], "weights": [...]}: weights >= 0 on raw values
    meta: dict = field(default_factory=dict)
    _embedder: object = field(default=None, repr=False)

    def __post_init__(self) -> None:
        self.features = tuple(self.features)
        unknown = [f for f in self.features if f not in FEATURES]
        if unknown:
            raise ValueError(f"support model: unknown features {unknown}; known: {list(FEATURES)}")
        self.mean, self.scale, self.weights = (np.asarray(a, np.float64) for a in (self.mean, self.scale,
                                                                                  self.weights))
        k = len(self.features)
        if not (self.mean.shape == self.scale.shape == self.weights.shape == (k,)):
            raise ValueError(f"support model: mean, scale and weights need {k} values each")
        if not np.all(self.scale > 0):
            raise ValueError("support model: every scale must be > 0")
        if not 0.0 <= self.soft <= self.hard <= 1.0:
            raise ValueError(f"support model: thresholds must satisfy 0 <= soft ({self.soft}) <= "
                             f"hard ({self.hard}) <= 1")
        flips = self.contradiction or {"features": [], "weights": []}
        try:
            names, weights = list(flips["features"]), np.asarray(flips["weights"], np.float64)
        except (KeyError, TypeError):
            raise ValueError("support model: contradiction needs 'features' and 'weights'") from None
        unknown = [f for f in names if f not in FEATURES]
        if unknown or weights.shape != (len(names),) or np.any(weights < 0):
            raise ValueError(f"support model: contradiction features must be known ({unknown or 'ok'}) with one "
                             "weight >= 0 each")
        self._flip_columns = np.array([FEATURES.index(f) for f in names], np.int64)
        self._flip_weights = weights

    # -- persistence
    @classmethod
    def load(cls, path: str | Path | None = None) -> "SupportModel":
        """The model in ``path``, by default the one shipped with asmr (``support_model.json``)."""
        p = Path(path) if path is not None else DEFAULT_MODEL_PATH
        try:
            d = json.loads(p.read_text())
        except FileNotFoundError:
            raise ValueError(f"support model {p}: no such file") from None
        except json.JSONDecodeError as e:
            raise ValueError(f"support model {p}: not JSON ({e})") from None
        try:
            return cls(features=d["features"], mean=d["mean"], scale=d["scale"], weights=d["weights"],
                       bias=float(d["bias"]), hard=float(d["thresholds"]["hard"]),
                       soft=float(d["thresholds"]["soft"]), embedder=d.get("embedder", "all-MiniLM-L6-v2"),
                       contradiction=d.get("contradiction"),
                       meta={k: v for k, v in d.items() if k not in ("features", "mean", "scale", "weights",
                                                                     "bias", "embedder", "contradiction")})
        except KeyError as e:
            raise ValueError(f"support model {p}: missing field {e}") from None

    def to_dict(self) -> dict:
        d = {"features": list(self.features), "mean": self.mean.tolist(), "scale": self.scale.tolist(),
             "weights": self.weights.tolist(), "bias": self.bias, "embedder": self.embedder}
        if self.contradiction:
            d["contradiction"] = {"features": list(self.contradiction["features"]),
                                  "weights": [float(v) for v in self.contradiction["weights"]]}
        d.update(self.meta)
        d["thresholds"] = {**self.meta.get("thresholds", {}), "hard": self.hard, "soft": self.soft}
        return d

    def save(self, path: str | Path) -> None:
        Path(path).write_text(json.dumps(self.to_dict(), indent=1, ensure_ascii=False) + "\n")

    # -- scoring
    def _get_embedder(self, embedder):
        if embedder is not None:
            return embedder
        if self._embedder is None:
            from asmr.embed.models import get_embedder
            self._embedder = get_embedder(self.embedder)
        return self._embedder

    def features_of(self, claims: Sequence[str], evidences: Sequence[str], *, claim_vecs=None,
                    evidence_vecs=None, embedder=None) -> np.ndarray:
        """The full feature matrix (all of :data:`FEATURES`) of the pairs."""
        need = claim_vecs is None or evidence_vecs is None or len(claims) > 0
        return pair_features(claims, evidences, embedder=self._get_embedder(embedder) if need else None,
                             claim_vecs=claim_vecs, evidence_vecs=evidence_vecs)

    def predict(self, x: np.ndarray) -> np.ndarray:
        """Probabilities from a full feature matrix (as :meth:`features_of` returns)."""
        x = np.asarray(x, np.float64)
        z = standardised(x, self.features, self.mean, self.scale) @ self.weights + self.bias
        return _sigmoid(z - x[:, self._flip_columns] @ self._flip_weights)

    def score(self, claims: Sequence[str], evidences: Sequence[str], *, claim_vecs=None, evidence_vecs=None,
              embedder=None) -> np.ndarray:
        """The probability that ``evidences[i]`` supports ``claims[i]``, for every i (float64)."""
        return self.predict(self.features_of(claims, evidences, claim_vecs=claim_vecs,
                                             evidence_vecs=evidence_vecs, embedder=embedder))

    def decide(self, p: float) -> str:
        """``keep`` (>= hard), ``rewrite`` (>= soft) or ``fail``."""
        return "keep" if p >= self.hard else "rewrite" if p >= self.soft else "fail"

    def explain(self, claims: Sequence[str], evidences: Sequence[str], *, claim_vecs=None, evidence_vecs=None,
                embedder=None) -> list[dict]:
        """Per pair: core claim, probability, decision, feature values, each feature's contribution to
        the log-odds, and the claim's key facts missing from the evidence (for an audit record)."""
        x = self.features_of(claims, evidences, claim_vecs=claim_vecs, evidence_vecs=evidence_vecs,
                             embedder=embedder)
        p = self.predict(x)
        contrib = np.hstack([standardised(x, self.features, self.mean, self.scale) * self.weights,
                             -x[:, self._flip_columns] * self._flip_weights])
        names = (*self.features, *(self.contradiction or {}).get("features", ()))
        out = []
        for i, (c, e) in enumerate(zip(claims, evidences)):
            core = core_claim(c)
            out.append({
                "claim": core,
                "probability": round(float(p[i]), 4),
                "decision": self.decide(float(p[i])),
                "thresholds": {"hard": self.hard, "soft": self.soft},
                "features": {k: round(float(v), 4) for k, v in zip(FEATURES, x[i])},
                "contributions": {k: round(float(v), 4) for k, v in zip(names, contrib[i])},
                "missing_facts": [{"kind": f.kind, "text": f.text} for f in missing_facts(core, e)],
            })
        return out
