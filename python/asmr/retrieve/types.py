"""What recall is configured by and what it returns: ``RetrieveConfig``, ``Hit``, ``PathStep``, ``Result``."""
from __future__ import annotations

from dataclasses import asdict, dataclass, field

from ..graph import GraphConfig
from .confidence import DEFAULT_THRESHOLD, DEFAULT_WEIGHTS, FEATURES as CONFIDENCE_FEATURES


@dataclass(frozen=True)
class RetrieveConfig:
    k: int = 10  # units returned
    seeds: int = 20  # fused dense + BM25 results that start the spread
    seed_pool: int = 50  # depth of each of the dense and BM25 lists that are fused
    rrf_k: int = 60  # reciprocal rank fusion constant
    seed_rank_scale: float = 5.0  # the seed at fused rank r starts with 1 / (1 + r / scale)
    depth: int = 2
    edge_threshold: float = 0.65
    decay: float = 0.5
    # similarity, path strength, centrality; chosen on the HotpotQA sample
    mix: tuple[float, float, float] = (0.5, 0.5, 0.0)
    recency: float = 0.05  # up to +5 % for the newest effective date among the hits
    # up to this share more for a unit that states the question's key facts (names, numbers, dates,
    # versions, codes): dense similarity barely sees "Brisade" against "Brisune", or "v4.3.1" against "v4.3.0"
    fact_boost: float = 0.4
    fact_pool: int = 3  # the best k * fact_pool units are rescored with it
    cache_size: int = 1024
    confidence_threshold: float = DEFAULT_THRESHOLD  # below it the result is "not found"
    # Logistic weights (a bias, then one for each of CONFIDENCE_FEATURES), from confidence_model.json
    confidence_weights: tuple[float, ...] = DEFAULT_WEIGHTS
    coverage_units: int = 10  # recalled units searched for the question's names
    phrase_units: int = 5  # best recalled units searched for the question's phrases (phrase_coverage)
    field_units: int = 5  # best recalled units, and
    field_lexical: int = 3  # best BM25 units, searched for a unit that says what the question asks about its names
    conflict_similarity: float = 0.85  # recalled units this alike, with different dates, conflict
    # Bridging: the documents that the best hits name (and the question does not) are searched for the
    # question's other half; each of those hits adds its best such units, scored bridge_decay times its own.
    # 3 / 1 / 0.9 chosen on the generated KB's multi-hop questions and the HotpotQA sample together.
    bridge_from: int = 3  # best hits whose named documents are searched (0: no bridging)
    bridge_hits: int = 1  # units each of them adds
    bridge_decay: float = 0.9
    bridge_units: int = 200  # units of one named document ranked at most
    graph: GraphConfig = field(default_factory=GraphConfig)

    def __post_init__(self) -> None:
        if not self.fact_boost >= 0:
            raise ValueError(f"fact_boost must be >= 0, got {self.fact_boost}")
        if isinstance(self.fact_pool, bool) or not isinstance(self.fact_pool, int) or self.fact_pool < 1:
            raise ValueError(f"fact_pool must be an integer of at least 1, got {self.fact_pool!r}")
        if len(self.confidence_weights) != len(CONFIDENCE_FEATURES) + 1:
            raise ValueError(f"confidence_weights must be {len(CONFIDENCE_FEATURES) + 1} numbers (a bias, then "
                             f"{', '.join(CONFIDENCE_FEATURES)}), got {self.confidence_weights!r}")

    def to_dict(self) -> dict:
        return asdict(self)


@dataclass(frozen=True)
class PathStep:
    node: str  # a unit id or "entity '<name>'"
    edge_kind: str | None  # kind of the edge into this step (None for the seed)
    edge_weight: float | None


@dataclass(frozen=True)
class Hit:
    unit_id: str
    row: int
    score: float
    similarity: float
    strength: float
    centrality: float
    hop: int
    seed: bool
    path: tuple[PathStep, ...]
    effective_at: str = ""
    # Conflicts: this unit says something else about the same thing as a newer recalled unit
    # (it is kept as an alternative, ranked after that unit), or it replaced an older version.
    alternative_to: str | None = None
    previous_version: str | None = None

    def to_dict(self) -> dict:
        d = asdict(self)
        d["path"] = [asdict(p) for p in self.path]
        return d


@dataclass(frozen=True)
class Result:
    question: str
    hits: tuple[Hit, ...]  # when not found: the best candidates
    seconds: float
    confidence: float = 0.0  # estimated probability that the memory holds the answer
    found: bool = False
    reason: str = ""
    cached: bool = False

    def to_dict(self) -> dict:
        return {"question": self.question, "found": self.found, "confidence": self.confidence,
                "reason": self.reason, "hits": [h.to_dict() for h in self.hits],
                "seconds": self.seconds, "cached": self.cached}
