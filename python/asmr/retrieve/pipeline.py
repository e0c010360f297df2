"""One question's recall: cache -> seeds -> spread -> score -> bridge -> conflicts -> confidence.

Seeds are the dense (faiss) and BM25 results fused by reciprocal rank, the dense
ranking weighted by how much of the question and of the memory the embedding model
can read (``readable``: an English model's cosines of Chinese text are noise), BM25
searching an English question over Chinese units by its terms' Chinese words too
(``Retriever.lexical_query``); their
scores, falling with rank, start a spread of activation over the unit graph
(``asmr_kernels.SpreadSession``: depth 2, edges under the threshold ignored). Each
reached unit is scored by

    mix[0] * (r * similarity + (1 - r) * lexical) + mix[1] * path strength + mix[2] * centrality / (1 + hop)

with r the readable share, similarity the cosine of question and unit, lexical its stand-in where the
model cannot read (``lexical_similarity``: a unit the spreading reaches that says none of the question's
words must not outrank BM25's own results by its path alone), path strength the seed score
times the product of edge weights on the unit's recall path, and centrality
its activation relative to the strongest; a recency factor favours newer
effective dates, the units of the documents the question names gain ``title_boost``, units that
state the question's key facts gain up to ``fact_boost``, and units that name another code of a kind
the question names, and none it names, keep ``other_code_factor``. Then bridging (``bridge.py``: the
documents the best hits name, and the units that verified answers cited with them), conflicts
(``conflicts.py``) and
the confidence (``confidence.py``); below its threshold the result is "not found".
Every hit carries its recall path.
"""
from __future__ import annotations

import re
import threading
import time
from collections import OrderedDict
from dataclasses import replace
from datetime import datetime

import numpy as np

from asmr_kernels import SpreadSession

from ..embed.models import (cross_script_offset, embedder_scripts, on_default_scale, question_vectors,
                            reads_across_scripts)
from ..graph import UnitGraph, load_or_build
from ..text.bilingual import chinese_words
from ..text.cjk import CJK_CHAR
from ..text.entities import code_kind, kind_codes, kind_pattern, normalize, unit_entities
from ..text.facts import key_facts, missing_from
from ..text.scripts import main_script, readable_share, readable_share_of, script_words, written_in
from ..text.turns import about, named_speakers, only_asks, parse_turn, speaker_names, without_names
from ..text.when import asks_when, says_when
from ..text.words import tokenize
from .bridge import (
    DocumentSubjects,
    RowKeys,
    bridge,
    document_subjects,
    named_documents,
    table_row_keys,
    usage_bridge,
)
from .confidence import confidence, confidence_features, no_features, refusal_reason
from .conflicts import resolve_conflicts
from .signals import question_terms
from .types import Hit, PathStep, Result, RetrieveConfig


# A memory whose sampled text the model reads to this share has its share stand in for the units'
# a question's vector ranks first (``Retriever.readable``): one-language memories pay no lookup.
WHOLE_MEMORY_READABLE = 0.99
READABLE_UNITS = 10  # the dense ranking's first units whose readable share weighs it
READABLE_HEAD = 300  # characters of a unit read for its share: a unit rarely changes language midway
# The least share of a memory's units written mostly in Chinese for an English question's terms to be
# searched in Chinese too: below it (an English encyclopedia quoting names in characters) there is no
# Chinese unit to reach, only noise to add
OTHER_LANGUAGE_UNITS = 0.01
_LATIN = re.compile("[A-Za-z]")


def _day_number(iso: str) -> float:
    """Days since 0001-01-01 of an ISO date or datetime (time zones ignored: a day is the resolution)."""
    try:
        d = datetime.fromisoformat(iso)
    except ValueError:
        return 0.0
    return d.toordinal() + (d.hour * 3600 + d.minute * 60 + d.second) / 86400.0


def lexical_similarity(rows: np.ndarray, lex_rows: np.ndarray, lex_scores: np.ndarray) -> np.ndarray:
    """Each of ``rows``' BM25 score for the question over the best one's, 0 for a row outside the BM25
    ranking (``lex_rows``, ``lex_scores``): the stand-in for the cosine where the model cannot read."""
    out = np.zeros(len(rows), np.float64)
    if not len(lex_rows) or not len(rows) or float(lex_scores[0]) <= 0.0:
        return out
    order = np.argsort(lex_rows, kind="stable")
    ranked = np.asarray(lex_rows, np.int64)[order]
    at = np.minimum(np.searchsorted(ranked, rows), len(ranked) - 1)
    found = ranked[at] == rows
    out[found] = np.asarray(lex_scores, np.float64)[order][at[found]] / float(lex_scores[0])
    return out


def section_heading(unit) -> str:
    """The heading of the section ``unit`` stands in, below its document's title (the first heading of
    its path); "" for a heading itself and for a unit outside any section."""
    return unit.section_path[-1] if len(unit.section_path) > 1 and unit.kind != "heading" else ""


def memory_scripts(memory, sample: int = 2000) -> tuple[dict[str, int], dict[str, int]]:
    """Words per script (``asmr.text.scripts``) in about ``sample`` active units spread over the memory,
    and how many of those units are written mostly in each script (``main_script``)."""
    words: dict[str, int] = {}
    units: dict[str, int] = {}
    for text in memory.sample_active_contents(sample):
        counts = script_words(text)
        for name, n in counts.items():
            words[name] = words.get(name, 0) + n
        if counts:
            script = main_script(counts)
            units[script] = units.get(script, 0) + 1
    return words, units


def memory_script_words(memory, sample: int = 2000) -> dict[str, int]:
    """Words per script in about ``sample`` active units spread over the memory (``memory_scripts``)."""
    return memory_scripts(memory, sample)[0]


# The key facts that name one thing exactly, and that the dense model barely tells apart: a unit that
# states them is where the question starts (names, numbers and dates are stated by too many units:
# every turn of a chat log holds its speaker's name).
ANCHOR_KINDS = frozenset({"code", "version"})


def names_other_code(text: str, asked: set[str], kinds: re.Pattern) -> bool:
    """Whether ``text`` names a code of the kinds of ``asked`` (the question's codes and versions,
    lower-cased; ``kinds``: their ``kind_pattern``) but none of them."""
    named = kind_codes(text, kinds)
    return bool(named) and named.isdisjoint(asked)


class Retriever:
    """Recall over one memory snapshot. ``embedder`` must be the memory's own model."""

    def __init__(self, memory, embedder, config: RetrieveConfig | None = None, graph: UnitGraph | None = None):
        if embedder.name != memory.embed_model:
            raise ValueError(f"embedder {embedder.name!r} is not the memory's model {memory.embed_model!r}")
        self.memory = memory
        self.embedder = embedder
        self.config = (config or RetrieveConfig()).for_embedder(embedder.name)
        memory.load_indexes()
        self.graph = graph or load_or_build(memory, self.config.graph)
        self._cache: OrderedDict[tuple, Result] = OrderedDict()
        self._cache_lock = threading.Lock()  # servers search from many threads; recall itself needs no lock
        self._cache_generation = memory.generation
        self._subjects: tuple[dict[str, list[tuple[str, str]]], list[str]] | None = None
        self._row_keys: RowKeys | None = None
        self._days: np.ndarray | None = None
        self._documents: dict[tuple[str, str], tuple[str, str]] | None = None
        self._undated: frozenset[tuple[str, str]] | None = None
        # (memory generation, words by script, units by the script they are mostly written in)
        self._memory_scripts: tuple[int, dict[str, int], dict[str, int]] | None = None
        self._unit_readable: tuple[int, dict[int, float]] = (-1, {})  # (generation, share by row)
        self._spread: SpreadSession | None = None
        self._speakers: dict[str, np.ndarray] | None = None
        self._asking: set[int] = set()  # rows of the turns that only ask, read with _speakers
        self._addressed: np.ndarray | None = None
        self._stating: dict[str, np.ndarray] | None = None

    def readable(self, question: str, qvec: np.ndarray | None = None) -> float:
        """How far the embedding model's cosines can be trusted for ``question``: the share of its
        words in scripts the model reads, times that share in the units its vector ranks first.

        Over a memory the model reads (nearly) all of, or without ``qvec``, the memory's share stands
        in for the units'. In a memory of two languages an English question's dense ranking is led
        by English units and is worth what it is in an English memory, while the memory's share would
        halve it; over units the model cannot read, the ranking is noise and counts for nothing."""
        return self._readable_and_dense(question, qvec, READABLE_UNITS)[0]

    def _readable_and_dense(self, question: str, qvec: np.ndarray | None, depth: int
                            ) -> tuple[float, np.ndarray | None]:
        """``readable``, and the dense ranking (``depth`` rows) where it had to be searched for it, so
        that the seeds do not search it again."""
        scripts = embedder_scripts(self.embedder)
        share = readable_share(question, scripts)
        memory = self._memory_share()
        if share == 0.0 or qvec is None or memory >= WHOLE_MEMORY_READABLE:
            return share * memory, None
        rows, _ = self.memory.search_dense(qvec[None], max(depth, READABLE_UNITS))
        rows = rows[0][rows[0] >= 0]
        units = list(self._unit_shares([int(r) for r in rows[:READABLE_UNITS]], scripts).values())
        return share * (sum(units) / len(units) if units else memory), rows

    def _unit_shares(self, rows: list[int], scripts, texts: dict[int, str] | None = None) -> dict[int, float]:
        """The readable share of each unit's first ``READABLE_HEAD`` characters (each unit weighs alike,
        a long paragraph as much as a short one), by row, remembered per row for this snapshot; the
        texts of rows not yet known are read from the memory unless ``texts`` holds them."""
        generation = self.memory.generation
        if self._unit_readable[0] != generation or len(self._unit_readable[1]) > 1_000_000:
            self._unit_readable = (generation, {})
        known = self._unit_readable[1]
        missing = [r for r in rows if r not in known]
        if missing:
            texts = dict(texts or {})
            unread = [r for r in missing if r not in texts]
            if unread:
                texts.update(self.memory.contents_at_rows(unread))
            for row in missing:
                if row in texts:
                    known[row] = readable_share_of(script_words(texts[row][:READABLE_HEAD]), scripts)
        return {r: known[r] for r in rows if r in known}

    def _hit_shares(self, hits: list, units: list) -> list[float] | None:
        """The readable share of each hit's unit (``units``: theirs, in order); None over a memory the
        model reads (nearly) all of, which looks nothing up."""
        if self._memory_share() >= WHOLE_MEMORY_READABLE:
            return None
        rows = [h.row for h in hits]
        texts = {h.row: u.content for h, u in zip(hits, units)}
        shares = self._unit_shares(rows, embedder_scripts(self.embedder), texts)
        return [shares[r] for r in rows]

    def memory_languages(self) -> tuple[dict[str, int], dict[str, int]]:
        """``memory_scripts`` of the memory (once per snapshot; a memory rarely changes language between
        ingests)."""
        generation = self.memory.generation
        if self._memory_scripts is None or self._memory_scripts[0] != generation:
            self._memory_scripts = (generation, *memory_scripts(self.memory))
        return self._memory_scripts[1:]

    def _memory_share(self) -> float:
        """The readable share of the memory's text."""
        scripts = embedder_scripts(self.embedder)
        return 1.0 if scripts is None else readable_share_of(self.memory_languages()[0], scripts)

    def lexical_query(self, question: str) -> str:
        """What BM25 searches for ``question``: the question, and where it asks in English over a memory
        with units written in Chinese (``OTHER_LANGUAGE_UNITS`` of them or more), the commonest Chinese
        words of its English terms too (``text.bilingual.chinese_words``): BM25 matches no word across
        languages, and a Chinese unit that answers an English question would otherwise be reached by no
        ranking that reads it (an English model cannot read the Chinese). A question asked in Chinese
        (most of its terms Chinese) is searched as asked: the English of "卡拉OK" in it is a name. (The
        other way, a Chinese question searching English units by its words' English glosses, refused
        fewer of CMRC's unanswerable questions over a memory that also held HotpotQA's passages:
        bench/README.md, "A question in one language over units in the other".)"""
        _, units = self.memory_languages()
        if units.get("cjk", 0) < OTHER_LANGUAGE_UNITS * sum(units.values()) or not _LATIN.search(question):
            return question
        terms, _ = question_terms(question, self.memory.inverse_document_frequencies)
        english = [t for t in terms if not CJK_CHAR.match(t)]
        if 2 * len(english) < len(terms):
            return question
        return " ".join([question, *(w for t in english for w in chinese_words(t))])

    # Seeds
    def seeds(self, question: str, qvec: np.ndarray, n: int, readable: float | None = None
              ) -> tuple[np.ndarray, np.ndarray]:
        """Top-n unit rows by reciprocal rank fusion of dense and BM25 results, with seed scores in (0, 1].
        The dense ranking counts ``readable`` times (default ``self.readable(question, qvec)``; 1.0 is plain RRF).

        RRF sums are flat-ish over the first ranks (1/11 against 1/16, or with the customary constant of
        60, 1/61 against 1/66), which would start every seed near full strength; a seed's score falls with
        its fused rank instead."""
        dense = None
        if readable is None:
            readable, dense = self._readable_and_dense(question, qvec, max(n, self.config.seed_pool))
        return self._seeds(question, qvec, n, readable, dense_rows=dense)[:2]

    def _seeds(self, question: str, qvec: np.ndarray, n: int, readable: float,
               own: tuple[np.ndarray, np.ndarray | None] | None = None, dense_rows: np.ndarray | None = None
               ) -> tuple[np.ndarray, np.ndarray, tuple[np.ndarray, np.ndarray]]:
        """seeds(), and the BM25 ranking it fused (rows and scores); the dense ranking (``dense_rows``
        where the caller already searched it) counts ``readable`` times, and ``own`` (the turns of the
        people the question names, and the question's vector without their names, None for a question
        the model cannot read) ``speaker_seeds`` times: ranked by cosine ``readable`` of it, in BM25's
        order the rest."""
        m = self.memory
        depth = max(n, self.config.seed_pool)
        lex_rows, lex_scores = m.search_lexical(self.lexical_query(question), depth)
        rankings = [(lex_rows, 1.0)]
        # Where BM25 finds nothing at all, the dense ranking seeds however little the model reads: a
        # question in one language over a memory in another has no other way in.
        dense_weight = readable if readable > 0.0 or len(lex_rows) else 1.0
        if dense_weight > 0.0:
            if dense_rows is None:
                found, _ = m.search_dense(qvec[None], depth)
                dense_rows = found[0][found[0] >= 0]
            rankings.insert(0, (dense_rows[:depth], dense_weight))
        if own is not None and self.config.speaker_seeds > 0.0:
            # their turns by cosine as far as the model reads the question, by BM25 the rest (a Chinese
            # question's cosines are noise to an English model)
            turns, anyone = own
            speaker_weight = self.config.speaker_seeds
            if readable > 0.0:
                by_cosine = turns[np.argsort(-m.cosines(turns, anyone), kind="stable")]
                rankings.append((by_cosine[:depth], speaker_weight * readable))
            if readable < 1.0:
                by_bm25 = lex_rows[np.isin(lex_rows, turns)]
                rankings.append((by_bm25[:depth], speaker_weight * (1.0 - readable)))
        fused: dict[int, float] = {}
        for ranking, weight in rankings:
            for rank, row in enumerate(ranking):
                fused[int(row)] = fused.get(int(row), 0.0) + weight / (self.config.rrf_k + rank + 1)
        if not fused:
            return np.zeros(0, np.int64), np.zeros(0, np.float32), (lex_rows, lex_scores)
        rows = np.fromiter(fused, np.int64, len(fused))
        scores = np.fromiter(fused.values(), np.float64, len(fused))
        top = np.argsort(-scores, kind="stable")[:n]
        return (rows[top], (1.0 / (1.0 + np.arange(len(top)) / self.config.seed_rank_scale)).astype(np.float32),
                (lex_rows, lex_scores))

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
        qvec = question_vectors(self.embedder, [question])[0]
        hits, features = self.recall(question, qvec, k)
        confidence = self.confidence(features)
        found = confidence >= cfg.confidence_threshold
        reason = "" if found else refusal_reason(features, confidence, cfg.confidence_threshold)
        result = Result(question, tuple(hits), time.perf_counter() - t0, confidence, found, reason)
        with self._cache_lock:
            self._cache[key] = result
            if len(self._cache) > cfg.cache_size:
                self._cache.popitem(last=False)
        return result

    def confidence(self, features: dict) -> float:
        """P(the memory holds the answer) for ``recall``'s features, by this config's weights."""
        return confidence(features, self.config.confidence_weights)

    def recall(self, question: str, qvec: np.ndarray, k: int) -> tuple[list[Hit], dict]:
        """The top-k hits for a question whose vector is already known, and the confidence features
        (no cache, no embedding: what search() runs, and what evaluations and benchmarks time)."""
        cfg, g, m = self.config, self.graph, self.memory
        readable, dense_rows = self._readable_and_dense(question, qvec, max(cfg.seeds, cfg.seed_pool))
        persons = named_speakers(question, self.speakers())
        own = None  # the turns of the people the question names, and the question without their names
        if persons:
            speakers = self.speakers()
            # Among a person's turns their name says nothing: the question without it is compared, where
            # the model reads the question at all (no cosine of an unread question counts: _seeds, below).
            own = (np.unique(np.concatenate([speakers[p] for p in persons])),
                   question_vectors(self.embedder, [without_names(question, persons)])[0] if readable > 0.0
                   else None)
        seed_rows, seed_scores, (lex_rows, lex_scores) = self._seeds(question, qvec, cfg.seeds, readable, own,
                                                                      dense_rows)
        facts = key_facts(question) if cfg.fact_boost or cfg.fact_seeds or cfg.other_code_factor < 1.0 else []
        anchors = [f for f in facts if f.kind in ANCHOR_KINDS] if cfg.fact_seeds else []
        if anchors and len(lex_rows):
            seed_rows, seed_scores = self._fact_seeds(anchors, self._anchored(anchors, lex_rows), seed_rows,
                                                      seed_scores)
        if not len(seed_rows):
            return [], {**no_features(), "readable": readable}
        res = self._spread_session().run(seed_rows, seed_scores)
        is_unit = res.node < g.num_rows
        rows = np.asarray(res.node[is_unit], np.int64)
        rows_ok = m.active[rows]
        rows = rows[rows_ok]
        act = res.activation[is_unit][rows_ok]
        hop = res.hop[is_unit][rows_ok]
        strength = np.minimum(res.strength[is_unit][rows_ok], 1.0)
        sim = np.maximum(m.cosines(rows, qvec), 0.0)
        cent = act / max(float(act.max()), 1e-12) / (1.0 + hop)
        # The mix's weights were chosen on MiniLM's cosines: another model's are read on that scale, as the
        # graph reads them (E5 gives unrelated text about 0.75; its narrow band left path strength to rank)
        cos = on_default_scale(m.embed_model, sim)
        like = readable * cos + (1.0 - readable) * lexical_similarity(rows, lex_rows, lex_scores) \
            if readable < 1.0 else cos
        score = cfg.mix[0] * like + cfg.mix[1] * strength + cfg.mix[2] * cent
        if cfg.title_boost:
            score = self._boost_named(question, rows, score, cfg.title_boost)
        if cfg.recency:
            score = score * (1.0 + cfg.recency * self._recency(rows))
        # the codes and versions the question names, of kinds that tell them apart (not a bare "4.3.1")
        asked_codes = {c for f in facts if f.kind in ANCHOR_KINDS and code_kind(c := f.text.lower())} \
            if cfg.other_code_factor < 1.0 else set()
        kinds = kind_pattern({code_kind(c) for c in asked_codes}) if asked_codes else None
        facts = facts if cfg.fact_boost else []
        when = cfg.when_boost > 0.0 and asks_when(question)
        asking = cfg.asking_turn_factor < 1.0 and bool(self.speakers())
        rescore = bool(facts) or when or bool(asked_codes) or asking
        top = np.argsort(-score, kind="stable")[:k * cfg.fact_pool if rescore else k]
        units = m.units_at_rows(rows[top])
        if rescore:
            factor = np.ones(len(units))
            if facts:
                factor *= 1.0 + cfg.fact_boost * np.array([1.0 - len(missing_from(facts, u.content)) / len(facts)
                                                           for u in units])
            if when:
                factor *= 1.0 + cfg.when_boost * np.array([says_when(u.content) for u in units])
            if asked_codes:
                factor *= np.array([cfg.other_code_factor if names_other_code(u.content, asked_codes, kinds)
                                    else 1.0 for u in units])
            if asking:
                asks = self._asking
                factor *= np.array([cfg.asking_turn_factor if u.row in asks else 1.0 for u in units])
            score = score.copy()
            score[top] *= factor
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
            start = None  # the first round bridges from the best hits, each next one from what the last joined
            for _ in range(cfg.bridge_rounds):
                before = {id(h) for h in hits}  # a hit the bridge joins or raises is a new object
                hits, units = bridge(m, cfg, self._document_subjects(), question, qvec, hits, units, k,
                                     self.stating_speakers() if cfg.speaker_bridge else None,
                                     self._table_row_keys(), start)
                start = [(h, u) for h, u in zip(hits[:cfg.bridge_from], units) if id(h) not in before]
                if not start:
                    break
        if cfg.bridge_from and g.learned:
            hits, units = usage_bridge(m, g, cfg, qvec, hits, units, k)
        previous = m.predecessors([h.unit_id for h in hits])
        if previous:
            hits = [replace(h, previous_version=previous.get(h.unit_id)) for h in hits]
        hits = resolve_conflicts(hits, units, m.vectors, self._document_subjects(), cfg.conflict_similarity,
                                 self._document_titles_and_types(), self._undated_documents(),
                                 self._hit_shares(hits, units))
        # a gap of cosines, which the model gives as far as it reads the question
        gap, own_similarity = self.speaker_signals(persons, own) if own is not None and readable > 0.0 \
            else (0.0, None)
        gap *= readable
        if len(sim) and reads_across_scripts(m.embed_model):
            # the best cosine on the scale of its unit's script, as a question in that script has it
            best = m.units_at_rows([int(rows[int(np.argmax(sim))])])[0]
            sim = sim + cross_script_offset(m.embed_model, written_in(question), written_in(best.content))
        return hits, self._features(question, sim, units, lex_rows, readable, gap, own_similarity)

    def _anchored(self, anchors, lex_rows: np.ndarray) -> np.ndarray:
        """The units that may state every code and version of the question (``anchors``): BM25's best
        ``fact_seeds``, and all that hold their words where no more than ``fact_seeds`` do. A code that
        one unit holds is rare to BM25, yet a long unit that holds it (a table row under its header)
        ranks below short ones that share several of the question's common words. (BM25's best stay
        candidates: a unit may state a version in other words than the question's, "3.5.0" for "v3.5.0".)"""
        n = self.config.fact_seeds
        held = self.memory.rows_with_words(sorted({w for f in anchors for w in tokenize(f.text)}))
        best = lex_rows[:n]
        return np.concatenate([held[~np.isin(held, best)], best]) if 0 < len(held) <= n else best

    def _fact_seeds(self, facts, lexical: np.ndarray, rows: np.ndarray, scores: np.ndarray
                    ) -> tuple[np.ndarray, np.ndarray]:
        """The seeds with the best BM25 units that state every code and version of the question at full
        strength. Fusion flattens a unit that only BM25 ranks first: a code that one unit holds
        (ERR-8338) is rare to BM25 and near nothing to the dense model, and that unit fell below the
        seeds of units both rankings put in their middle."""
        contents = self.memory.contents_at_rows(int(r) for r in lexical)
        anchored = [int(r) for r in lexical if not missing_from(facts, contents.get(int(r), ""))]
        if not anchored:
            return rows, scores
        scores = scores.copy()
        at = {int(r): i for i, r in enumerate(rows.tolist())}
        new = [r for r in anchored if r not in at]
        for r in anchored:
            if r in at:
                scores[at[r]] = 1.0
        return (np.concatenate([rows, np.array(new, rows.dtype)]),
                np.concatenate([scores, np.ones(len(new), scores.dtype)]))

    def speaker_signals(self, persons: list[str], own: tuple[np.ndarray, np.ndarray]) -> tuple[float, float]:
        """(gap, own similarity) of a question that names ``persons`` who speak in the memory.

        Own similarity: the best cosine of their own turns (``own[0]``, less those that name another
        speaker: asking someone about their news is not news of one's own) to the question without
        their names (``own[1]``). Every turn of theirs holds the name in its head, so the question's
        cosine to any of them says little; without the name it says whether they said the thing asked.

        Gap: how much closer the best active unit comes to the question without the names than that
        best own turn does; 0 when that best unit is about one of them (``text.turns.about``: their
        turn, or one naming them). A question that gives one person's experience to another finds it
        said by someone else."""
        rows, anyone = own
        rows = rows[~np.isin(rows, self.addressed())]  # what they say of themselves, not asking others
        best_own = float(np.max(self.memory.cosines(rows, anyone))) if len(rows) else 0.0
        best, _ = self.memory.search_dense(anyone[None], 1)
        best_row = int(best[0][0])
        if best_row < 0:
            return 0.0, best_own
        best_any = float(np.asarray(self.memory.vectors[best_row]) @ anyone)
        if best_own >= best_any:
            return 0.0, best_own
        content = self.memory.contents_at_rows([best_row]).get(best_row, "")
        return (0.0 if any(about(content, p) for p in persons) else best_any - best_own), best_own

    def _spread_session(self) -> SpreadSession:
        """The spread over this graph with this config: graph and parameters validated once, so that
        a question pays only for its own seeds."""
        session, csr = self._spread, self.graph.csr
        if session is None or session.graph is not csr:  # racing threads build equal sessions
            cfg = self.config
            session = self._spread = SpreadSession(csr, depth=cfg.depth, decay=cfg.decay, restart=1.0,
                                                   edge_threshold=cfg.edge_threshold)
        return session

    def _features(self, question: str, sim: np.ndarray, units: list, lex_rows: np.ndarray,
                  readable: float, speaker_gap: float = 0.0, own_similarity: float | None = None) -> dict:
        """``confidence_features``, with the best BM25 units' texts and the memory's idf."""
        cfg, m = self.config, self.memory
        unit_of = {u.row: u for u in units}
        lexical = [int(r) for r in lex_rows[:cfg.alignment_lexical]]
        missing = [r for r in lexical if r not in unit_of]
        if missing:
            unit_of.update((u.row, u) for u in m.units_at_rows(missing))
        best = units[:cfg.alignment_units]
        texts = {u.content for u in best}
        extra = [unit_of[r] for r in lexical if r in unit_of and unit_of[r].content not in texts]
        return confidence_features(question, sim, [u.content for u in units], [u.content for u in extra],
                                   m.inverse_document_frequencies, cfg, readable, speaker_gap, own_similarity,
                                   self.chain_links(question, best + extra) if cfg.chain_units > 1 else None,
                                   [section_heading(u) for u in best + extra])

    def chain_links(self, question: str, units: list) -> dict[int, list[int]]:
        """Which of ``units`` name what another is about: i -> j where unit i names the subject of unit j's
        document (``bridge.document_subjects``: its title, a name in it, or its name without its kind),
        a name that neither the question gives nor unit i's own document is about, as ``bridge`` follows
        names. A chain of such units states what a question of several hops asks (``signals.chain_masks``);
        untitled documents make no chain."""
        subjects = self._document_subjects()
        asked = f" {normalize(question)} "
        docs = [(u.kb, u.doc_id) for u in units]
        # A chat session's title names its people, not one subject: its turns are no hop (people are
        # bridged by what they said, ``bridge``'s speakers).
        turns = {i for i, u in enumerate(units) if parse_turn(u.content) is not None}
        links: dict[int, list[int]] = {}
        for i, u in enumerate(units):
            if i in turns:
                continue
            about = named_documents(u, subjects, asked)
            to = [j for j, d in enumerate(docs) if d in about and j not in turns]
            if to:
                links[i] = to
        return links

    def speakers(self) -> dict[str, np.ndarray]:
        """The rows of the chat turns (``text.turns``) each speaker says, by normalised name and by its
        first word (a first word two speakers share belongs to both); read once per snapshot, with the
        rows of the turns that only ask (``text.turns.only_asks``), which recall scores lower."""
        if self._speakers is None:
            rows: dict[str, list[int]] = {}
            asking: set[int] = set()
            for row, content in self.memory.active_contents(starting="["):
                turn = parse_turn(content)
                if turn is not None:
                    for name in speaker_names(turn.speaker):
                        rows.setdefault(name, []).append(row)
                    if only_asks(content):
                        asking.add(row)
            self._asking = asking
            self._speakers = {name: np.array(r, np.int64) for name, r in rows.items()}
        return self._speakers

    def stating_speakers(self) -> dict[str, np.ndarray]:
        """``speakers()`` less the turns that only ask: what each person stated, where the bridge from a
        recalled turn looks. Made once per snapshot."""
        if self._stating is None:
            speakers = self.speakers()
            asking = np.fromiter(self._asking, np.int64, len(self._asking))
            self._stating = {name: rows[~np.isin(rows, asking)] for name, rows in speakers.items()}
        return self._stating

    def addressed(self) -> np.ndarray:
        """The rows of the turns whose words name another speaker ("Mirela, how was the concert?"):
        about that person more than about who says them. Read once per snapshot."""
        if self._addressed is None:
            speakers = self.speakers()
            out = []
            if speakers:
                for row, content in self.memory.active_contents(starting="["):
                    turn = parse_turn(content)
                    if turn is not None:
                        if set(named_speakers(turn.body, speakers)) - speaker_names(turn.speaker):
                            out.append(row)
            self._addressed = np.array(out, np.int64)
        return self._addressed

    def _document_titles_and_types(self) -> dict[tuple[str, str], tuple[str, str]]:
        if self._documents is None:  # once per snapshot
            self._documents = self.memory.document_titles_and_types()
        return self._documents

    def _undated_documents(self) -> frozenset[tuple[str, str]]:
        if self._undated is None:  # once per snapshot
            self._undated = self.memory.undated_documents()
        return self._undated

    def _table_row_keys(self) -> RowKeys:
        if self._row_keys is None:  # once per snapshot
            self._row_keys = table_row_keys(self.memory)
        return self._row_keys

    def named_documents(self, question: str) -> list[tuple[str, str]]:
        """The documents ``question`` names: by their title, or a name their title holds (the subjects
        that bridging follows, ``bridge.document_subjects``); of names inside one another the longest
        ("Marrow Lake Ferry", not also "Marrow Lake")."""
        by_name, cjk = self._document_subjects()
        names = {n for n in unit_entities(question, by_name, cjk) if n in by_name}
        names = {n for n in names if not any(n != o and f" {n} " in f" {o} " for o in names)}
        return sorted({doc for n in names for doc in by_name[n]})

    def _boost_named(self, question: str, rows: np.ndarray, score: np.ndarray, boost: float) -> np.ndarray:
        """``score`` with the recalled units of the documents the question names raised by ``boost``."""
        named = self.named_documents(question)
        if not named:
            return score
        score = score.copy()
        held = np.concatenate([self.memory.rows_of_document(kb, doc) for kb, doc in named])
        score[np.isin(rows, held)] *= 1.0 + boost
        return score

    def _document_subjects(self) -> DocumentSubjects:
        if self._subjects is None:  # once per snapshot
            self._subjects = document_subjects(self.memory)
        return self._subjects

    def _recency(self, rows: np.ndarray) -> np.ndarray:
        """Where each unit's effective date lies between the oldest (0) and newest (1) among ``rows``;
        all 0 when they span less than a day."""
        if self._days is None:  # once per snapshot: a day number per unit row
            self._days = np.zeros(self.memory.num_rows, np.float64)
            for row, iso in self.memory.active_effective_dates():
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
