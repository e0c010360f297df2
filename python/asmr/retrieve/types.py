"""What recall is configured by and what it returns: ``RetrieveConfig``, ``Hit``, ``PathStep``, ``Result``."""
from __future__ import annotations

import math
import numbers
from dataclasses import asdict, dataclass, field, fields, replace

from ..embed.models import conflict_similarity_of
from ..graph import GraphConfig
from .confidence import FEATURES as CONFIDENCE_FEATURES, fitted_model

MIN_K = 1  # the HTTP API's schemas declare it too, for the OpenAPI document
MAX_DEPTH = 8  # spreading hops


class ConfigError(ValueError):
    """A RetrieveConfig field with a value it cannot take. ``field`` and ``reason`` ("must be at
    least 1") let each face say it in its own words (the CLI names the flag, the server the
    request field); the message is "<field> <reason>, got <value>"."""

    def __init__(self, field: str, value, reason: str):
        super().__init__(f"{field} {reason}, got {value!r}")
        self.field, self.value, self.reason = field, value, reason


def _is_int(value) -> bool:
    return isinstance(value, numbers.Integral) and not isinstance(value, bool)


def _is_real(value) -> bool:
    return isinstance(value, numbers.Real) and not isinstance(value, bool) and math.isfinite(value)


def _count(low: int, high: int | None = None):
    """An integer in [low, high]."""
    reason = f"must be at least {low}" if high is None else f"must be in {low}..{high}"

    def check(value) -> str | None:
        if not _is_int(value):
            return "must be an integer"
        return None if low <= value and (high is None or value <= high) else reason
    return check


def _number(low: float | None = None, high: float | None = None, *, above: bool = False):
    """A finite real number, at least ``low`` (above it if ``above``) and at most ``high``."""
    if low is not None and high is not None:
        reason = f"must be in [{low:g}, {high:g}]"
    elif low is not None:
        reason = f"must be a finite number {'>' if above else '>='} {low:g}"
    else:
        reason = "must be a finite number"

    def check(value) -> str | None:
        if not _is_real(value):
            return reason
        if low is not None and (value <= low if above else value < low):
            return reason
        return reason if high is not None and value > high else None
    return check


def _mix(value) -> str | None:
    reason = "must be three non-negative numbers, not all zero"
    if not isinstance(value, (tuple, list)) or len(value) != 3 or not all(_is_real(x) for x in value):
        return reason
    return reason if any(x < 0 for x in value) or sum(value) <= 0 else None


def _weights(value) -> str | None:
    n = len(CONFIDENCE_FEATURES) + 1
    if isinstance(value, (tuple, list)) and len(value) == n and all(_is_real(x) for x in value):
        return None
    return f"must be {n} numbers (a bias, then {', '.join(CONFIDENCE_FEATURES)})"


def _or_none(rule):
    """``rule``, or None (a setting left to the model fitted for the memory's embedder)."""
    def check(value) -> str | None:
        return None if value is None else rule(value)
    return check


def _graph(value) -> str | None:
    return None if isinstance(value, GraphConfig) else "must be an asmr.graph.GraphConfig"


@dataclass(frozen=True)
class RetrieveConfig:
    k: int = 10  # units returned
    seeds: int = 20  # fused dense + BM25 results that start the spread
    seed_pool: int = 50  # depth of each of the dense and BM25 lists that are fused
    # reciprocal rank fusion constant: 10, not the customary 60, so that a unit one ranking puts in its first
    # few is not outvoted by units both rank middling (bench/README.md, "The fusion constant")
    rrf_k: int = 10
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
    # the units that state every code and version the question names start the spread at full strength:
    # all that hold them where no more than fact_seeds do, else the best fact_seeds of BM25 (a code only
    # one unit holds is near nothing to the dense model; fusion flattens it)
    fact_seeds: int = 3
    # Conversations (chat turns, ``text.turns``): a question that names a speaker of the memory also
    # ranks that person's turns by their cosine to the question without the name, fused with the seeds
    # at this weight (the dense ranking's is 1). A question that asks when (``text.when.asks_when``)
    # gains up to when_boost for a unit that says when (a date, or relative time). Both chosen on a
    # generated chat log (seed 0) and reported on another seed and titling (docs/recall.md).
    speaker_seeds: float = 16.0
    when_boost: float = 0.3
    # A turn that only asks ("How's Priya?", ``text.turns.only_asks``) scores this many times: it shares
    # the words of a question about what it asks and states none of the answer, which is in the reply
    # after it. Chosen from 1, 0.8, 0.6 and 0.4 on the conversations read (friends, family, zh-friends) and
    # chat log 0 (best mean Recall@5), and reported on the others (bench/README.md, "A turn that only asks").
    asking_turn_factor: float = 0.8
    # The recalled units of a document the question names by its title (or a name its title holds) score
    # (1 + title_boost) times: the spread favours what the best seeds link to, and of two things a question
    # compares it kept one and lost the other. Chosen on the HotpotQA sample and the generated KB (family
    # A) from 0.25, 0.5 and 1; reported on the other sources (docs/recall.md).
    title_boost: float = 1.0
    # A unit that names another code or version of a kind the question names ("ERR-2210" where it asks
    # about "ERR-4471", "v2.4" for "v2.3"), and none that it names, scores this many times: templated
    # pages of other systems crowded out the pages one hop from the one that holds the code. Chosen on the
    # generated KB (family A) from 0.5, 0.25 and 0 (0.25 and 0 level); reported on the others. 1 is off.
    other_code_factor: float = 0.25
    cache_size: int = 1024
    # Below it the result is "not found". With the logistic weights (a bias, then one for each of
    # CONFIDENCE_FEATURES): None takes those fitted for the memory's embedding model (confidence_model.json;
    # cosines of different models are not on one scale), which the Retriever fills in (``for_embedder``).
    confidence_threshold: float | None = None
    confidence_weights: tuple[float, ...] | None = None
    alignment_units: int = 5  # best recalled units, and
    alignment_lexical: int = 3  # best BM25 units, read against the question (term and kind alignment, subject phrases)
    # those units also read as chains of up to this many, each naming what the next is about (1: none)
    chain_units: int = 4
    # recalled units this alike (cosine), with different dates, conflict; None takes the embedding
    # model's (``embed.models.conflict_similarity_of``: 0.85 for MiniLM), filled in by ``for_embedder``
    conflict_similarity: float | None = None
    # Bridging: the documents that the best hits name (and the question does not) are searched for the
    # question's other half; each of those hits adds its best such units, scored bridge_decay times its own.
    # 3 / 1 / 0.9 chosen on the generated KB's multi-hop questions and the HotpotQA sample together.
    bridge_from: int = 3  # best hits whose named documents are searched (0: no bridging)
    bridge_hits: int = 1  # units each of them adds
    bridge_decay: float = 0.9
    bridge_units: int = 200  # units of one named document ranked at most
    # rounds of bridging: each next round bridges from the best bridge_from hits that the last one joined
    # or raised (the team named by the system page a first round reached: a chain of three hops and more)
    bridge_rounds: int = 2
    speaker_bridge: bool = True  # also bridge from a chat turn to the turns of the people it is about
    graph: GraphConfig = field(default_factory=GraphConfig)

    def __post_init__(self) -> None:
        """Every field is checked here, and only here: the CLI and the server turn a ConfigError into
        their own error form."""
        for f in fields(self):
            value = getattr(self, f.name)
            reason = _RULES[f.name](value)
            if reason is not None:
                raise ConfigError(f.name, value, reason)

    def to_dict(self) -> dict:
        return asdict(self)

    def for_embedder(self, name: str) -> "RetrieveConfig":
        """This config with what it leaves open (None) set for the embedding model ``name``: the confidence
        weights and threshold fitted for it, and the cosine of its units that may conflict."""
        if None not in (self.confidence_weights, self.confidence_threshold, self.conflict_similarity):
            return self
        weights, threshold, _ = fitted_model(name)
        return replace(self, confidence_weights=weights if self.confidence_weights is None else self.confidence_weights,
                       confidence_threshold=threshold if self.confidence_threshold is None
                       else self.confidence_threshold,
                       conflict_similarity=conflict_similarity_of(name) if self.conflict_similarity is None
                       else self.conflict_similarity)


# What each field may be. 0 turns a count off where it limits optional work (bridging, the cache,
# the coverage searches); edge_threshold and conflict_similarity above 1 turn edges and conflicts off.
_RULES = {
    "k": _count(MIN_K), "seeds": _count(1), "seed_pool": _count(1), "rrf_k": _count(0),
    "seed_rank_scale": _number(0, above=True), "depth": _count(0, MAX_DEPTH), "edge_threshold": _number(),
    "decay": _number(0), "mix": _mix, "recency": _number(0), "fact_boost": _number(0), "fact_pool": _count(1),
    "fact_seeds": _count(0),
    "speaker_seeds": _number(0), "when_boost": _number(0), "title_boost": _number(0),
    "other_code_factor": _number(0, 1), "asking_turn_factor": _number(0, 1),
    "cache_size": _count(0), "confidence_threshold": _or_none(_number(0, 1)),
    "confidence_weights": _or_none(_weights),
    "alignment_units": _count(0), "alignment_lexical": _count(0), "chain_units": _count(1),
    "conflict_similarity": _or_none(_number()), "bridge_from": _count(0), "bridge_hits": _count(0),
    "bridge_decay": _number(0), "bridge_units": _count(0), "bridge_rounds": _count(1),
    "speaker_bridge": lambda v: None if isinstance(v, bool) else "must be true or false", "graph": _graph,
}


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
    # Conflicts: this unit says something else about the same thing as a newer recalled unit, or a
    # current one where this unit states history (it is kept as an alternative, ranked after that
    # unit); or it replaced an older version.
    alternative_to: str | None = None
    previous_version: str | None = None
    # This unit and the recalled unit named here (of another document) give one slot two values,
    # and neither dates nor history tell which holds: both stay, and the answer states both.
    disagrees_with: str | None = None

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
