"""One question's recall: cache -> seeds -> spread -> score -> result with recall paths.

Seeds are the dense (faiss) and BM25 results fused by reciprocal rank; their
scores, falling with rank, start a spread of activation over the unit graph
(``asmr_kernels.spread``: depth 2, edges under the threshold ignored). Each
reached unit is scored by

    mix[0] * similarity + mix[1] * path strength + mix[2] * centrality / (1 + hop)

with similarity the cosine of question and unit, path strength the seed score
times the product of edge weights on the unit's recall path, and centrality
its activation relative to the strongest; a recency factor favours newer
effective dates. Then bridging: the documents that the best hits name (and the
question does not) are searched for the question's other half, and their best
units join the result just below the hit that named them (``Retriever._bridge``).
Every hit carries its recall path.

The result's confidence (``Retriever.confidence``) is a logistic function of the best
unit's similarity, whether the question's names are recalled and are titles in memory,
field coverage (whether a unit about those names also says what the question asks: "cache
TTL" in "What is the cache TTL of Ivrix?") and phrase coverage (how much of the question's
wording the best units state). Below the threshold: "not found".
"""
from __future__ import annotations

import threading
import time
from collections import OrderedDict
from datetime import datetime
from dataclasses import asdict, dataclass, field, replace
from functools import lru_cache

import numpy as np

from asmr_kernels import spread

from ..graph import (GraphConfig, UnitGraph, load_or_build, mentions, normalize, split_words, title_key,
                     unit_entities)
from ..index.lexical import token_bytes, tokenize
from ..redundancy.facts import key_facts, missing_from


def _refusal_reason(features: dict, confidence: float, threshold: float) -> str:
    parts = [f"confidence {confidence:.2f} < {threshold:.2f}"]
    if features.get("names") and features["name_coverage"] < 1.0:
        parts.append(f"{features['name_coverage']:.0%} of the {features['names']} names in the question "
                     "appear in what was recalled")
    if features.get("field_missing"):
        about = f"that names {features['field_subject']} " if features.get("field_subject") else ""
        parts.append(f"no recalled unit {about}also says {features['field_missing']!r} "
                     f"(field coverage {features['field_coverage']:.0%})")
    parts.append(f"best similarity {features['top_similarity']:.2f}")
    parts.append(f"the best units state {features['phrase_coverage']:.0%} of the question's phrases")
    return "; ".join(parts)


# Words that ask rather than say what is asked for; left out of field coverage.
_STOPWORDS = frozenset("""
a an the of in on at to for from by with about into over under and or but not no nor is are was were be been being am
do does did done doing have has had having what which who whom whose when where why how that this these those it its
there their they them he she his her him i we you your our my me us can could should would will shall may might must
than then as if so such also any all each every some many much more most other same only very just
within without before after during between through across""".split())


_SUFFIXES = ("", "s", "e", "es", "ed", "ing")  # what _stem strips


@lru_cache(maxsize=1 << 16)
def _stem(word: str) -> str:
    """A crude suffix stripper, enough for "escalated" to meet "escalate" and "owns" to meet "owned"."""
    n = len(word)
    if n > 5 and word.endswith("ing"):
        return word[:-3]
    if n > 4 and word.endswith(("ed", "es")):
        return word[:-2]
    if n > 3 and word.endswith("s") and not word.endswith("ss"):
        return word[:-1]
    if n > 4 and word.endswith("e"):
        return word[:-1]
    return word


_TITLE_WORDS = 8  # the longest title spelled out in a question that question_names looks for


def spelled_titles(question: str, titles: set[str] | frozenset[str]) -> set[str]:
    """The titles in ``titles`` that the question spells out as a capitalised span, small words and
    punctuation included ("Welcome to the Show", "Jon L. Luther", "Edward Stafford, 4th Baron
    Stafford"): spans of at most _TITLE_WORDS words that start with a capital and end with a capital
    or a number, so "the Cobalt Lynx team" spells the team's name, not the title "Cobalt Lynx team"."""
    words = split_words(question)
    out = set()
    for i, first in enumerate(words):
        if not first[0].isupper():
            continue
        for j in range(i, min(len(words), i + _TITLE_WORDS)):
            if words[j][0].isupper() or words[j][0].isdigit():
                key = normalize(" ".join(words[i:j + 1]))
                if key in titles and not set(key.split()) <= _STOPWORDS:
                    out.add(key)
    return out


def question_names(question: str, titles: set[str] | frozenset[str] = frozenset()) -> set[str]:
    """The names a question mentions, as keys comparable with ``normalize``d text: codes lose their
    punctuation ("ERR-9918" is "err 9918"), a possessive its "s", a capitalised question word
    ("Within what time ...") is no name, and "X of Y" that is no title in ``titles`` is two names
    ("What is the cache TTL of Ivrix?" names "ttl" and "ivrix", not "ttl of ivrix"). A title the
    question spells out (``spelled_titles``) is one name, and the mentions inside it are not names of
    their own ("Welcome to the Show" is one name, not "welcome" and "show")."""
    spelled = spelled_titles(question, titles) if titles else set()
    out = set(spelled)
    for name in mentions(question):
        key = normalize(name)
        if key.endswith(" s"):
            key = key[:-2]
        for part in (key.split(" of ") if " of " in key and key not in titles else [key]):
            part = part.removeprefix("the ").strip()
            if (part and not set(tokenize(part)) <= _STOPWORDS
                    and not any(f" {part} " in f" {t} " for t in spelled)):
                out.add(part)
    return out


def field_coverage(question: str, names: set[str], candidates: list[str], known: list[str]) -> tuple[float, list[str]]:
    """How much of what the question asks for the best unit about its subject says.

    The question's words that are neither names nor stop words, and that some unit of ``known`` or
    ``candidates`` (what recall brought back) contains, are what it asks for ("cache" in "What is the
    cache TTL of Ivrix?"); among the ``candidates`` that contain every name of the question, the best
    one's share of those words is the coverage. A subject whose units never mention the asked-for
    field, when other units do, scores low; 0 when no recalled unit knows any asked word, (1.0, []) when
    the question asks nothing beyond its names. Words are
    compared by their stems (a unit's words are not stemmed: the forms of the question's stems are
    looked up among them, which is cheaper). Also returns the words of the question that the best
    unit lacks."""
    name_words = {_stem(w) for n in names for w in tokenize(n) if w not in _STOPWORDS}
    word_of: dict[str, str] = {}
    for w in tokenize(question):
        if w not in _STOPWORDS:
            word_of.setdefault(_stem(w), w)
    asked = set(word_of) - name_words
    if not asked:
        return 1.0, []
    stems = [(w, tuple((w + x).encode() for x in _SUFFIXES)) for w in asked | name_words]

    def words(text: str) -> set[str]:
        present = set(token_bytes(text))
        return {w for w, forms in stems if not present.isdisjoint(forms)}

    cand = [words(c) for c in candidates]
    known_asked = asked & set().union(*cand, *(words(c) for c in known))
    if not known_asked:  # nothing asked is known to recall at all: no unit answers it
        return 0.0, [w for s, w in word_of.items() if s in asked]
    asked = known_asked
    best: set[str] = set()
    for found in cand:
        if name_words <= found and len(asked & found) > len(best):
            best = asked & found
    return len(best) / len(asked), [w for s, w in word_of.items() if s in asked - best]


# Past forms that suffix stripping cannot reach, to their base form, for phrase_coverage: "When did X go
# into production?" is answered by "X went into production in 2016". (Not in _stem: field_coverage
# looks for the suffixed forms of the question's stems in units, which "go" cannot find "went" by.)
_IRREGULAR = dict(pair.split(":") for pair in """
went:go gone:go began:begin begun:begin wrote:write written:write built:build made:make led:lead held:hold
took:take taken:take gave:give given:give won:win left:leave found:find became:become came:come sold:sell
told:tell brought:bring bought:buy thought:think kept:keep met:meet paid:pay said:say sent:send spent:spend
stood:stand grew:grow grown:grow knew:know known:know rose:rise risen:rise fell:fall fallen:fall chose:choose
chosen:choose drove:drive driven:drive flew:fly flown:fly spoke:speak spoken:speak broke:break broken:break
shot:shoot sang:sing sung:sing taught:teach caught:catch fought:fight sought:seek struck:strike drew:draw
drawn:draw wore:wear worn:wear born:bear borne:bear ran:run saw:see seen:see lost:lose felt:feel heard:hear
meant:mean sat:sit ate:eat eaten:eat hid:hide hidden:hide rode:ride ridden:ride threw:throw thrown:throw
""".split())


def _phrase_word(word: str) -> str:
    return _stem(_IRREGULAR.get(word, word))


def phrase_coverage(question: str, texts: list[str], n: int = 3) -> float:
    """The share of the question's phrases (runs of ``n`` stemmed words, past forms such as "went"
    read as "go", not all stop words) that one of ``texts`` states. A unit that answers a question
    mostly says it in the question's words ("the runner-up in the 1999 World Drivers'
    Championship"); a memory without the answer holds the parts of a phrase in different units, or
    not at all. 0.5 for a question too short to have one."""
    words = [_phrase_word(w) for w in tokenize(question)]
    asked = {g for g in zip(*(words[i:] for i in range(n))) if not set(g) <= _STOPWORDS}
    if not asked:
        return 0.5
    vocab = set(words)
    stated = set()
    for text in texts:  # a word the question lacks breaks every phrase it is in: it need not be kept
        found = [s if (s := _phrase_word(w)) in vocab else None for w in tokenize(text)]
        stated.update(g for g in zip(*(found[i:] for i in range(n))) if g in asked)
    return len(stated) / len(asked)


def _day_number(iso: str) -> float:
    """Days since 0001-01-01 of an ISO date or datetime (time zones ignored: a day is the resolution)."""
    try:
        d = datetime.fromisoformat(iso)
    except ValueError:
        return 0.0
    return d.toordinal() + (d.hour * 3600 + d.minute * 60 + d.second) / 86400.0


def _bm25(query: list[str], texts: list[list[str]], k1: float = 1.2, b: float = 0.75) -> np.ndarray:
    """BM25 of each of ``texts`` (as words) for the ``query`` words, with document frequencies counted
    over ``texts`` alone: words that all of them share weigh little."""
    scores = np.zeros(len(texts))
    query = set(query)
    if not query or not texts:
        return scores
    df: dict[str, int] = {}
    for words in texts:
        for w in query.intersection(words):
            df[w] = df.get(w, 0) + 1
    if not df:
        return scores
    n = len(texts)
    avg = sum(map(len, texts)) / n or 1.0
    idf = {w: np.log1p((n - d + 0.5) / (d + 0.5)) for w, d in df.items()}
    for i, words in enumerate(texts):
        norm = k1 * (1 - b + b * len(words) / avg)
        for w in query.intersection(words):
            tf = words.count(w)
            scores[i] += idf[w] * tf * (k1 + 1) / (tf + norm)
    return scores


# What confidence() weighs, in the order of RetrieveConfig.confidence_weights after the bias.
CONFIDENCE_FEATURES = ("top_similarity", "name_coverage", "title_coverage", "field_coverage", "phrase_coverage")


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
    confidence_threshold: float = 0.75  # below it the result is "not found"
    # Logistic weights (bias, top similarity, name coverage, title coverage, field coverage, phrase
    # coverage), fitted by bench/calibrate_confidence.py (see its docstring) on the HotpotQA tuning
    # sample with 30 % made unanswerable (seed 0) and the generated KB (asmr eval synth, seed 0) together
    confidence_weights: tuple[float, ...] = (-10.11, 6.12, 2.74, 9.37, 5.11, 5.71)
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


class Retriever:
    """Recall over one memory snapshot. ``embedder`` must be the memory's own model."""

    def __init__(self, memory, embedder, config: RetrieveConfig | None = None, graph: UnitGraph | None = None):
        if embedder.name != memory.embed_model:
            raise ValueError(f"embedder {embedder.name!r} is not the memory's model {memory.embed_model!r}")
        self.memory = memory
        self.embedder = embedder
        self.config = config or RetrieveConfig()
        memory.load_indexes()
        self.graph = graph or load_or_build(memory, self.config.graph)
        self._cache: OrderedDict[tuple, Result] = OrderedDict()
        self._cache_lock = threading.Lock()  # servers search from many threads; recall itself needs no lock
        self._cache_generation = memory.generation
        self._titles: set[str] | None = None
        self._subjects: tuple[dict[str, list[tuple[str, str]]], list[str]] | None = None
        self._days: np.ndarray | None = None

    # Seeds
    def seeds(self, question: str, qvec: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray]:
        """Top-n unit rows by reciprocal rank fusion of dense and BM25 results, with seed scores in (0, 1].

        RRF sums are nearly flat over the first ranks (1/61 against 1/66), which would start
        every seed at full strength; a seed's score falls with its fused rank instead."""
        return self._seeds(question, qvec, n)[:2]

    def _seeds(self, question: str, qvec: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """seeds(), and the BM25 ranking it fused."""
        m = self.memory
        depth = max(n, self.config.seed_pool)
        dense_rows, _ = m.search_dense(qvec[None], depth)
        lex_rows, _ = m.search_lexical(question, depth)
        fused: dict[int, float] = {}
        for ranking in (dense_rows[0][dense_rows[0] >= 0], lex_rows):
            for rank, row in enumerate(ranking):
                fused[int(row)] = fused.get(int(row), 0.0) + 1.0 / (self.config.rrf_k + rank + 1)
        if not fused:
            return np.zeros(0, np.int64), np.zeros(0, np.float32), lex_rows
        rows = np.fromiter(fused, np.int64, len(fused))
        scores = np.fromiter(fused.values(), np.float64, len(fused))
        top = np.argsort(-scores, kind="stable")[:n]
        return (rows[top], (1.0 / (1.0 + np.arange(len(top)) / self.config.seed_rank_scale)).astype(np.float32),
                lex_rows)

    def clear_cache(self) -> None:
        """Forget recent questions (benchmarks that time each method from cold)."""
        with self._cache_lock:
            self._cache.clear()

    def search(self, question: str, k: int | None = None) -> Result:
        t0 = time.perf_counter()
        cfg = self.config
        k = cfg.k if k is None else k
        key = (question, k)
        with self._cache_lock:
            if self.memory.generation != self._cache_generation:  # a reopened memory saw an ingest
                self._cache.clear()
                self._cache_generation = self.memory.generation
            hit = self._cache.get(key)
            if hit is not None:
                self._cache.move_to_end(key)
        if hit is not None:
            return replace(hit, seconds=time.perf_counter() - t0, cached=True)
        qvec = self.embedder.embed([question])[0]
        hits, features = self.recall(question, qvec, k)
        confidence = self.confidence(features)
        found = confidence >= cfg.confidence_threshold
        reason = "" if found else _refusal_reason(features, confidence, cfg.confidence_threshold)
        result = Result(question, tuple(hits), time.perf_counter() - t0, confidence, found, reason)
        with self._cache_lock:
            self._cache[key] = result
            if len(self._cache) > cfg.cache_size:
                self._cache.popitem(last=False)
        return result

    def confidence(self, features: dict) -> float:
        """P(the memory holds the answer): a logistic function of the similarity of the best unit,
        the share of the question's names that the recalled units contain, the share that are the
        title of a document in memory (a question about a missing subject), the field coverage
        (a question about a present subject that asks for something no unit about it says: see
        ``field_coverage``) and the phrase coverage (whether the best units say it in the question's
        words: see ``phrase_coverage``)."""
        bias, *weights = self.config.confidence_weights
        z = bias + sum(w * features[name] for w, name in zip(weights, CONFIDENCE_FEATURES))
        return float(1.0 / (1.0 + np.exp(-z)))

    def recall(self, question: str, qvec: np.ndarray, k: int) -> tuple[list[Hit], dict]:
        """The top-k hits for a question whose vector is already known, and the confidence features
        (no cache, no embedding: what search() runs, and what evaluations and benchmarks time)."""
        cfg, g, m = self.config, self.graph, self.memory
        seed_rows, seed_scores, lex_rows = self._seeds(question, qvec, cfg.seeds)
        if not len(seed_rows):
            return [], {**dict.fromkeys(CONFIDENCE_FEATURES, 0.0), "field_missing": "", "field_subject": "",
                        "names": 0}
        res = spread(g.csr, np.array([0, len(seed_rows)]), seed_rows, seed_scores, depth=cfg.depth,
                     decay=cfg.decay, restart=1.0, edge_threshold=cfg.edge_threshold).query(0)
        is_unit = res.node < g.num_rows
        rows = np.asarray(res.node[is_unit], np.int64)
        rows_ok = m.active[rows]
        rows = rows[rows_ok]
        act = res.activation[is_unit][rows_ok]
        hop = res.hop[is_unit][rows_ok]
        strength = np.minimum(res.strength[is_unit][rows_ok], 1.0)
        sim = np.maximum(np.asarray(m.vectors[rows]) @ qvec, 0.0)
        cent = act / max(float(act.max()), 1e-12) / (1.0 + hop)
        score = cfg.mix[0] * sim + cfg.mix[1] * strength + cfg.mix[2] * cent
        if cfg.recency:
            score = score * (1.0 + cfg.recency * self._recency(rows))
        facts = key_facts(question) if cfg.fact_boost else []
        top = np.argsort(-score, kind="stable")[:k * cfg.fact_pool if facts else k]
        units = m.units_at_rows(rows[top])
        if facts:
            stated = np.array([1.0 - len(missing_from(facts, u.content)) / len(facts) for u in units])
            score = score.copy()
            score[top] *= 1.0 + cfg.fact_boost * stated
            order = np.argsort(-score[top], kind="stable")[:k]
            top, units = top[order], [units[i] for i in order]
        seeds = set(seed_rows.tolist())
        paths = [res.path(int(rows[t])) for t in top]
        ids = m.ids_at_rows(n for nodes in paths for n in nodes if n < g.num_rows)  # one query for all paths
        hits = []
        for t, u, nodes in zip(top, units, paths):
            hits.append(Hit(u.id, int(rows[t]), float(score[t]), float(sim[t]), float(strength[t]),
                            float(cent[t]), int(hop[t]), int(rows[t]) in seeds,
                            self._path(nodes, ids), u.effective_at))
        if cfg.bridge_from and cfg.bridge_hits:
            hits, units = self._bridge(question, qvec, hits, units, k)
        previous = self._previous_versions([h.unit_id for h in hits])
        if previous:
            hits = [replace(h, previous_version=previous.get(h.unit_id)) for h in hits]
        hits = self._resolve_conflicts(hits, units)
        return hits, self._features(question, sim, units, lex_rows)

    def _features(self, question: str, sim: np.ndarray, units: list, lex_rows: np.ndarray) -> dict:
        """What confidence() weighs (and the field words the best unit lacks, for the reason)."""
        cfg, m = self.config, self.memory
        if self._titles is None:
            self._titles = {title_key(t) for t, in m.conn.execute("SELECT title FROM documents")}
        names = question_names(question, self._titles)
        recalled = " ".join(normalize(u.content) for u in units[:cfg.coverage_units])
        covered = sum(1 for n in names if f" {n} " in f" {recalled} ")
        content = {u.row: u.content for u in units}
        lexical = [int(r) for r in lex_rows[:cfg.field_lexical]]
        missing = [r for r in lexical if r not in content]
        if missing:
            content.update((u.row, u.content) for u in m.units_at_rows(missing))
        candidates = [u.content for u in units[:cfg.field_units]] + [content[r] for r in lexical if r in content]
        coverage, lacking = field_coverage(question, names, candidates,
                                           [u.content for u in units[cfg.field_units:cfg.coverage_units]])
        # A question that names nothing says nothing either way through names: 0.5, not full marks.
        return {"top_similarity": float(sim.max()) if len(sim) else 0.0,
                "name_coverage": covered / len(names) if names else 0.5,
                "title_coverage": sum(n in self._titles for n in names) / len(names) if names else 0.5,
                "field_coverage": coverage,
                "phrase_coverage": phrase_coverage(question, [u.content for u in units[:cfg.phrase_units]]),
                "field_missing": " ".join(lacking),
                "field_subject": " and ".join(sorted(names)), "names": len(names)}

    def _bridge(self, question: str, qvec: np.ndarray, hits: list[Hit], units: list, k: int) -> tuple[list[Hit], list]:
        """The question's other half, looked for in the documents that the best hits name.

        A hit that answers the first half of a two-hop question ("the system that batches
        inventory counts is owned by the Ochre Kestrel team") names what the second half is
        about; the document about it ("Ochre Kestrel team") holds the answer, but its units
        look little like the question, and a common name's entity edges are too weak to spread
        through. So, for each of the ``bridge_from`` best hits: the documents whose subject it
        names (a document's subject is its title or a name in its title; not one the question
        names, nor one of the hit's own document) have their units ranked against the
        question (dense cosine, fused by reciprocal rank with BM25 over those units alone for
        the question's words the hit does not contain), and the best ``bridge_hits`` join the
        result with ``bridge_decay`` (then its square, ...) times the hit's score, their path
        that of the hit, then the name and the unit (edge kind "entity"). Headings are skipped:
        they state nothing."""
        cfg, m = self.config, self.memory
        subjects, cjk = self._document_subjects()
        asked = f" {normalize(question)} "
        words = tokenize(question)
        bridged: dict[int, tuple[float, Hit, str, float, float]] = {}  # row -> score, from, name, sim, factor
        for h, u in zip(hits[:cfg.bridge_from], units):
            docs: dict[tuple[str, str], str] = {}
            for name in sorted(unit_entities(u.content, subjects, cjk)):
                if name in subjects and f" {name} " not in asked and (u.kb, u.doc_id) not in subjects[name]:
                    for doc in subjects[name]:
                        docs.setdefault(doc, name)
            cand_rows, cand_words, cand_names = [], [], []
            for (kb, doc), name in docs.items():
                for row, kind, content in m.conn.execute(
                        "SELECT row, kind, content FROM units WHERE kb=? AND doc_id=? AND status='active' "
                        "ORDER BY ord LIMIT ?", (kb, doc, cfg.bridge_units)):
                    if kind != "heading" and row != h.row:
                        cand_rows.append(row)
                        cand_words.append(tokenize(content))
                        cand_names.append(name)
            if not cand_rows:
                continue
            sims = np.asarray(m.vectors[np.array(cand_rows, np.int64)]) @ qvec
            known = set(tokenize(u.content))
            lex = _bm25([w for w in words if w not in known], cand_words)
            fused = 1.0 / (cfg.rrf_k + 1 + np.argsort(np.argsort(-sims, kind="stable"), kind="stable"))
            lex_rank = np.argsort(np.argsort(-lex, kind="stable"), kind="stable")
            fused += np.where(lex > 0, 1.0 / (cfg.rrf_k + 1 + lex_rank), 0.0)
            for i, c in enumerate(np.argsort(-fused, kind="stable")[:cfg.bridge_hits]):
                factor = cfg.bridge_decay ** (i + 1)
                row, score = cand_rows[c], h.score * factor
                if row not in bridged or score > bridged[row][0]:
                    bridged[row] = (score, h, cand_names[c], max(float(sims[c]), 0.0), factor)
        if not bridged:
            return hits, units
        at = {h.row: i for i, h in enumerate(hits)}
        new_rows = [r for r in bridged if r not in at]
        unit_of = {u.row: u for u in units}
        unit_of.update((u.row, u) for u in m.units_at_rows(new_rows))
        out = list(hits)
        for row, (score, h, name, sim, factor) in bridged.items():
            if row in at and out[at[row]].score >= score:
                continue
            u = unit_of[row]
            path = h.path + (PathStep(f"entity '{name}'", "entity", 1.0), PathStep(u.id, "entity", factor))
            hit = Hit(u.id, row, score, sim, h.strength * factor, 0.0, h.hop + 2, False, path, u.effective_at)
            if row in at:
                out[at[row]] = replace(hit, seed=out[at[row]].seed)
            else:
                out.append(hit)
        out.sort(key=lambda x: -x.score)
        out = out[:k]
        return out, [unit_of[x.row] for x in out]

    def _document_subjects(self) -> tuple[dict[str, list[tuple[str, str]]], list[str]]:
        """Once per snapshot: what each document is about (its title's key, and the names its title
        contains: "Ochre Kestrel team" is about "ochre kestrel" too, "Novova runbook" about "novova"),
        mapped to the documents; and the CJK ones, which are found by substring."""
        if self._subjects is None:
            subjects: dict[str, list[tuple[str, str]]] = {}
            for kb, doc, title in self.memory.conn.execute("SELECT kb, doc_id, title FROM documents"):
                for key in {title_key(title)} | mentions(title):
                    if len(key) >= 3:
                        subjects.setdefault(key, []).append((kb, doc))
            self._subjects = (subjects, [k for k in subjects if not k.isascii()])
        return self._subjects

    def _previous_versions(self, ids: list[str]) -> dict[str, str]:
        """For each id, the unit it superseded (the newest such), if any."""
        if not ids:
            return {}
        marks = ",".join("?" * len(ids))
        out: dict[str, str] = {}
        for old, new in self.memory.conn.execute(
                f"SELECT id, superseded_by FROM units WHERE superseded_by IN ({marks}) ORDER BY row", ids):
            out[new] = old
        return out

    def _resolve_conflicts(self, hits: list[Hit], units: list) -> list[Hit]:
        """Two recalled units about the same thing (cosine >= conflict_similarity, and neither names
        a document subject the other does not) that say different things and carry different
        effective dates: the newer is the answer, the older an alternative marked with the newer's
        id and ranked right after it. (``units``: the hits' units, in the same order.)

        Units written from one template ("Brelova pages the on-call engineer when ...", "Brisade
        pages ...") are as alike as two versions of one rule; the subjects they name tell them apart.
        Two active units of one document never conflict: a revision that changed a statement
        superseded its old unit, so both belong to the document as it stands (a changelog's old row
        and the row added by the last revision carry different dates and look alike)."""
        if len(hits) < 2:
            return hits
        vecs = np.asarray(self.memory.vectors[[h.row for h in hits]])
        cos = vecs @ vecs.T
        subjects, cjk = self._document_subjects()
        names: dict[int, set[str]] = {}

        def named(i: int) -> set[str]:
            if i not in names:
                names[i] = unit_entities(units[i].content, subjects, cjk) & subjects.keys()
            return names[i]

        newer_of: dict[int, int] = {}  # each unit in at most one conflict, as the older or the newer
        for i in range(len(hits)):
            for j in range(i + 1, len(hits)):
                if not self.config.conflict_similarity <= cos[i, j] < 0.9999:  # identical text is no conflict
                    continue
                if hits[i].effective_at == hits[j].effective_at:
                    continue
                if (units[i].kb, units[i].doc_id) == (units[j].kb, units[j].doc_id):
                    continue  # both active in one document: its current version states both
                if named(i) - named(j) and named(j) - named(i):  # about different things
                    continue
                old, new = (i, j) if hits[i].effective_at < hits[j].effective_at else (j, i)
                taken = newer_of.keys() | set(newer_of.values())
                if old not in taken and new not in taken:
                    newer_of[old] = new
        if not newer_of:
            return hits
        order = [i for i in range(len(hits)) if i not in newer_of]
        for old, new in sorted(newer_of.items(), key=lambda kv: -kv[0]):
            order.insert(order.index(new) + 1, old)
        return [replace(hits[i], alternative_to=hits[newer_of[i]].unit_id) if i in newer_of else hits[i]
                for i in order]

    def _recency(self, rows: np.ndarray) -> np.ndarray:
        """Where each unit's effective date lies between the oldest (0) and newest (1) among ``rows``;
        all 0 when they span less than a day."""
        if self._days is None:  # once per snapshot: a day number per unit row
            self._days = np.zeros(self.memory.num_rows, np.float64)
            for row, iso in self.memory.conn.execute("SELECT row, effective_at FROM units WHERE status='active'"):
                self._days[row] = _day_number(iso)
        days = self._days[rows]
        span = days.max() - days.min() if len(days) else 0.0
        return ((days - days.min()) / span).astype(np.float32) if span >= 1.0 else np.zeros(len(rows), np.float32)

    def _path(self, nodes: list[int], id_of: dict[int, str]) -> tuple[PathStep, ...]:
        steps = []
        for i, n in enumerate(nodes):
            label = id_of[n] if n < self.graph.num_rows else self.graph.node_name(n)
            edge = self.graph.edge(nodes[i - 1], n) if i else None
            steps.append(PathStep(label, edge[0] if edge else None, edge[1] if edge else None))
        return tuple(steps)
