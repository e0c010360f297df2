"""The support model: a logistic regression over the support features, with its thresholds.

Weights in ``support_model.json``, fitted by ``bench/calibrate_support.py``; its ``unread`` part, the
model of the pairs whose text the main model's embedder cannot read (Chinese for MiniLM), by
``bench/calibrate_unread_support.py``.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Sequence

import numpy as np

from asmr.embed.models import scripts_of
from asmr.text.facts import missing_facts
from asmr.text.scripts import ALL_SCRIPTS, READ_FOR_COSINE

from .claims import core_claim
from .support import COSINE_FEATURES, FEATURES, pair_features, pair_readable

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


@lru_cache(maxsize=4)
def _embedder_named(name: str):
    """One embedder per model name for every support model of the process (a model load is seconds)."""
    from asmr.embed.models import get_embedder
    return get_embedder(name)


@dataclass
class SupportModel:
    """Logistic regression over standardised :data:`FEATURES`, with the keep/rewrite thresholds.

    ``contradiction`` (optional): cues of a flipped restatement (``support.FLIP_FEATURES``) with
    weights fitted on generated claims, subtracted from the log-odds: the support part is fitted on
    attribution data that has few plain contradictions, so it cannot weigh them itself.

    ``hard``: a probability at or above it keeps the citation. ``soft`` (<= ``hard``): at or
    above it, below ``hard``, the generator is asked for one rewrite; below it the check fails.

    ``unread`` (optional): the model of the pairs this one's embedder cannot read (less than
    ``READ_FOR_COSINE`` of the claim's or the evidence's words in its scripts): its own embedder,
    features and weights, its probabilities on this model's thresholds (its bias is set so).
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
    unread: "SupportModel | None" = None

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
        if self.unread is not None and (self.unread.unread is not None
                                        or scripts_of(self.unread.embedder) is not ALL_SCRIPTS):
            raise ValueError(f"support model: the unread part's embedder must read every script "
                             f"({self.unread.embedder!r} does not), and it has no unread part of its own")

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
            return cls.from_dict(d)
        except ValueError as e:
            raise ValueError(f"support model {p}: {str(e).removeprefix('support model: ')}") from None

    @classmethod
    def from_dict(cls, d: dict) -> "SupportModel":
        try:
            unread = d.get("unread")
            if unread is not None:  # on this model's thresholds
                unread = cls.from_dict({**unread, "thresholds": d["thresholds"]})
            return cls(features=d["features"], mean=d["mean"], scale=d["scale"], weights=d["weights"],
                       bias=float(d["bias"]), hard=float(d["thresholds"]["hard"]),
                       soft=float(d["thresholds"]["soft"]), embedder=d.get("embedder", "all-MiniLM-L6-v2"),
                       contradiction=d.get("contradiction"), unread=unread,
                       meta={k: v for k, v in d.items() if k not in ("features", "mean", "scale", "weights",
                                                                     "bias", "embedder", "contradiction",
                                                                     "unread")})
        except KeyError as e:
            raise ValueError(f"support model: missing field {e}") from None

    def to_dict(self) -> dict:
        d = {"features": list(self.features), "mean": self.mean.tolist(), "scale": self.scale.tolist(),
             "weights": self.weights.tolist(), "bias": self.bias, "embedder": self.embedder}
        if self.contradiction:
            d["contradiction"] = {"features": list(self.contradiction["features"]),
                                  "weights": [float(v) for v in self.contradiction["weights"]]}
        d.update(self.meta)
        d["thresholds"] = {**self.meta.get("thresholds", {}), "hard": self.hard, "soft": self.soft}
        if self.unread is not None:
            d["unread"] = {k: v for k, v in self.unread.to_dict().items() if k != "thresholds"}
        return d

    def save(self, path: str | Path) -> None:
        Path(path).write_text(json.dumps(self.to_dict(), indent=1, ensure_ascii=False) + "\n")

    # -- scoring
    def _get_embedder(self, embedder):
        return embedder if embedder is not None else _embedder_named(self.embedder)

    def unread_pairs(self, claims: Sequence[str], evidences: Sequence[str]) -> np.ndarray:
        """Which pairs this model's embedder cannot read (the ``unread`` part's, where there is one): less
        than ``READ_FOR_COSINE`` of the claim's or the evidence's words in its scripts."""
        scripts = scripts_of(self.embedder)
        return np.fromiter((pair_readable(core_claim(c), e, scripts) < READ_FOR_COSINE
                            for c, e in zip(claims, evidences)), bool, len(claims))

    def features_of(self, claims: Sequence[str], evidences: Sequence[str], *, claim_vecs=None,
                    evidence_vecs=None, embedder=None) -> np.ndarray:
        """The full feature matrix (all of :data:`FEATURES`) of the pairs, by this model's embedder
        (the ``unread`` part's pairs too: :meth:`score` reads those by its own)."""
        need = claim_vecs is None or evidence_vecs is None or len(claims) > 0
        return pair_features(claims, evidences, embedder=self._get_embedder(embedder) if need else None,
                             claim_vecs=claim_vecs, evidence_vecs=evidence_vecs)

    def predict(self, x: np.ndarray) -> np.ndarray:
        """Probabilities from a full feature matrix (as :meth:`features_of` returns), by this model's own
        weights (the ``unread`` part not consulted)."""
        x = np.asarray(x, np.float64)
        z = standardised(x, self.features, self.mean, self.scale) @ self.weights + self.bias
        return _sigmoid(z - x[:, self._flip_columns] @ self._flip_weights)

    def _scored(self, claims: Sequence[str], evidences: Sequence[str], *, claim_vecs=None, evidence_vecs=None,
                embedder=None, unread_embedder=None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Feature rows, probabilities and which pairs the ``unread`` part scored (its features in their
        rows)."""
        claims, evidences = list(claims), list(evidences)
        if len(claims) != len(evidences):
            raise ValueError(f"support model: {len(claims)} claims but {len(evidences)} evidences")
        unread = (self.unread_pairs(claims, evidences) if self.unread is not None
                  else np.zeros(len(claims), bool))
        if not unread.any():
            x = self.features_of(claims, evidences, claim_vecs=claim_vecs, evidence_vecs=evidence_vecs,
                                 embedder=embedder)
            return x, self.predict(x), unread
        x = np.zeros((len(claims), len(FEATURES)), np.float64)
        p = np.zeros(len(claims), np.float64)
        for part, model, kw in ((~unread, self, dict(embedder=embedder)),
                                (unread, self.unread, dict(embedder=unread_embedder))):
            at = np.flatnonzero(part)
            if len(at) == 0:
                continue
            if model is self and claim_vecs is not None and evidence_vecs is not None:
                kw.update(claim_vecs=np.asarray(claim_vecs)[at], evidence_vecs=np.asarray(evidence_vecs)[at])
            x[at] = model.features_of([claims[i] for i in at], [evidences[i] for i in at], **kw)
            p[at] = model.predict(x[at])
        return x, p, unread

    def score(self, claims: Sequence[str], evidences: Sequence[str], *, claim_vecs=None, evidence_vecs=None,
              embedder=None, unread_embedder=None) -> np.ndarray:
        """The probability that ``evidences[i]`` supports ``claims[i]``, for every i (float64).

        ``claim_vecs``, ``evidence_vecs`` and ``embedder`` are this model's embedder's (vectors and the
        embedder itself, where the caller has them); ``unread_embedder`` the ``unread`` part's."""
        return self._scored(claims, evidences, claim_vecs=claim_vecs, evidence_vecs=evidence_vecs,
                            embedder=embedder, unread_embedder=unread_embedder)[1]

    def decide(self, p: float) -> str:
        """``keep`` (>= hard), ``rewrite`` (>= soft) or ``fail``."""
        return "keep" if p >= self.hard else "rewrite" if p >= self.soft else "fail"

    def _contributions(self, x: np.ndarray) -> tuple[tuple[str, ...], np.ndarray]:
        """Each feature's contribution to the log-odds of the rows ``x``, and the features' names."""
        return ((*self.features, *(self.contradiction or {}).get("features", ())),
                np.hstack([standardised(x, self.features, self.mean, self.scale) * self.weights,
                           -x[:, self._flip_columns] * self._flip_weights]))

    def explain(self, claims: Sequence[str], evidences: Sequence[str], *, claim_vecs=None, evidence_vecs=None,
                embedder=None, unread_embedder=None) -> list[dict]:
        """Per pair: core claim, probability, decision, which model scored it (``model``: its embedder),
        feature values, each feature's contribution to the log-odds, and the claim's key facts missing
        from the evidence (for an audit record)."""
        x, p, unread = self._scored(claims, evidences, claim_vecs=claim_vecs, evidence_vecs=evidence_vecs,
                                    embedder=embedder, unread_embedder=unread_embedder)
        out = []
        for i, (c, e) in enumerate(zip(claims, evidences)):
            core = core_claim(c)
            model = self.unread if unread[i] else self
            names, contrib = model._contributions(x[i:i + 1])
            out.append({
                "claim": core,
                "probability": round(float(p[i]), 4),
                "decision": self.decide(float(p[i])),
                "thresholds": {"hard": self.hard, "soft": self.soft},
                "model": model.embedder,
                "features": {k: round(float(v), 4) for k, v in zip(FEATURES, x[i])},
                "contributions": {k: round(float(v), 4) for k, v in zip(names, contrib[0])},
                "missing_facts": [{"kind": f.kind, "text": f.text} for f in missing_facts(core, e)],
            })
        return out
