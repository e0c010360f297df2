"""Verifying an answer's citations: exists · active · allowed · supports, then keep / weaken / drop.

For every sentence and every citation in it, in one batched pass (one SQL
query for the cited and allowlisted units, one embedding call for the claims,
one ``pair_cosine`` call against the units' stored vectors, one support-model
call):

1. exists: the id is a unit of the memory;
2. active: the unit is not ``superseded`` or ``deprecated`` (the audit says
   which, and names the successor);
3. allowed: the id is in this turn's allowlist;
4. supports: the sentence's core claim (hedges and markers stripped) is
   supported by the unit's text: the support model's probability is at least
   ``hard`` and every key fact of the claim (numbers with units, dates,
   versions, codes; names weigh in through the model, see
   ``VerifierConfig.fact_kinds``) appears in the unit. A citation in the soft zone
   (probability at least ``soft``, or above ``hard`` with a fact missing) gets
   one rewrite of its sentence grounded in the unit, if a ``rewrite``
   callable was given, and the rewrite is checked the same way.

A citation that passes all four is valid. Each sentence then gets one outcome:

- keep: at least one valid citation; only valid markers stay;
- weaken: no valid citation and nothing speaks against the sentence (the id
  is invented, not allowed in this turn, only near the support threshold, a
  marker hidden in quoted or copied source text, or a malformed marker): the
  sentence stays without markers and is flagged;
- drop: no valid citation and a unit the sentence cites says otherwise or no
  longer holds (unsupported, or superseded/deprecated, so the claim comes from
  an outdated version): the sentence is replaced by a notice that its source
  cannot be confirmed.

A hidden marker (quoted, or copied: its text is also in an allowlisted unit)
cites nothing, so it is never kept and never keeps its sentence; but the unit
it names is checked all the same (its entry's ``unit_verdict``), and one that
says otherwise drops the sentence: a model may not escape the support check by
citing with a marker that a unit of the turn happens to contain.

Sentences without any marker pass unchanged ("uncited"). Malformed and
truncated markers never reach the output text, which is scanned once more at
the end: cutting markers out cannot splice a new one together unseen.
"""
from __future__ import annotations

import time
from collections import Counter, OrderedDict
from dataclasses import dataclass, field
from typing import Callable

import numpy as np

from asmr_kernels import pair_cosine

from ..decoding.markers import DEFAULT_MARKERS, Marker, check_markers
from ..embed.cache import shared_cache
from ..store.memory import UnitState
from ..text.cjk import CJK_CHAR
from ..text.facts import KINDS as FACT_KINDS, missing_facts
from .allowlist import Allowlist
from .citations import CitationMarker, ParsedAnswer, Sentence, cut_spans, parse_answer, scan_markers, strip_markers
from .claims import core_claim
from .support_model import SupportModel

DROPPED = "(The source for this part cannot be confirmed.)"
DROPPED_CJK = "（此部分的来源无法确认。）"
_FINAL_PUNCT = ".!?。！？"
OUTCOMES = ("keep", "weaken", "drop", "uncited")
# A sentence with no valid citation is dropped when a unit it cites says otherwise or is outdated.
_DROP_VERDICTS = frozenset(("superseded", "deprecated", "unsupported"))


@dataclass(frozen=True)
class VerifierConfig:
    """Support thresholds (probabilities from the support model), the key facts a unit must state,
    and the citation markers.

    The thresholds come from the shipped support model, calibrated on dev data
    (``VerifierConfig.from_support``); pass others to trade recall for precision.
    ``fact_kinds``: a claim's facts of these kinds must all appear in the cited unit.
    Named entities are left to the support model, which weighs them (its
    ``missing_entity`` feature): names are paraphrased and abbreviated, and on
    AttributionBench dev requiring every one flagged 19 % of the pairs and cost
    1.6 points of macro-F1, where numbers, dates, versions and codes flagged 7 %
    and gained 0.2 (see bench/README.md).
    """

    hard: float
    soft: float
    fact_kinds: tuple[str, ...] = ("number", "date", "version", "code")
    markers: tuple[Marker, ...] = DEFAULT_MARKERS

    def __post_init__(self) -> None:
        for name in ("hard", "soft"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, (int, float)) or not 0.0 <= v <= 1.0:
                raise ValueError(f"verifier {name} threshold {v!r}: must be a probability in [0, 1]")
        if self.soft > self.hard:
            raise ValueError(f"verifier thresholds: soft {self.soft} must not exceed hard {self.hard}")
        unknown = set(self.fact_kinds) - set(FACT_KINDS)
        if isinstance(self.fact_kinds, str) or unknown:
            raise ValueError(f"verifier fact_kinds {self.fact_kinds!r}: must be a tuple of "
                             f"{', '.join(FACT_KINDS)}")
        object.__setattr__(self, "fact_kinds", tuple(self.fact_kinds))
        object.__setattr__(self, "markers", check_markers(self.markers))

    def missing(self, claim: str, unit_text: str) -> list[str]:
        """The claim's key facts of the checked kinds that ``unit_text`` does not state."""
        return [f.text for f in missing_facts(claim, unit_text) if f.kind in self.fact_kinds]

    @classmethod
    def from_support(cls, support, **changes) -> "VerifierConfig":
        return cls(hard=float(support.hard), soft=float(support.soft), **changes)

    def to_dict(self) -> dict:
        return {"hard": self.hard, "soft": self.soft, "fact_kinds": list(self.fact_kinds),
                "markers": [[m.opener, m.closer] for m in self.markers]}


@dataclass
class Verification:
    """The cleaned answer, one audit entry per sentence, and counts."""

    text: str
    audit: list[dict]
    counts: dict[str, int]
    turn: str
    seconds: float = 0.0
    config: dict = field(default_factory=dict)

    @property
    def flagged(self) -> list[str]:
        """Sentences kept without a source (weakened)."""
        return [d["sentence"] for d in self.audit if d["outcome"] == "weaken" and d["sentence"]]

    def to_dict(self) -> dict:
        return {"turn": self.turn, "text": self.text, "counts": self.counts, "audit": self.audit,
                "seconds": self.seconds, "config": self.config}


@dataclass
class _Pair:
    """One (sentence, citation) whose unit exists: the support check runs on it."""

    sentence: int
    sentence_text: str  # without markers; ``claim`` is its core
    citation: CitationMarker
    unit: UnitState
    claim: str
    record: dict


class Verifier:
    """Checks answers against one memory snapshot. ``embedder`` must be the memory's own model.

    ``rewrite(sentence, unit_text) -> str`` is the generator's one chance to restate a
    sentence in the soft zone from the unit it cites. Not for concurrent use: it keeps the
    units it has read (``UNIT_CACHE`` of them, dropped when the memory moves to a newer commit).
    """

    UNIT_CACHE = 4096

    def __init__(self, memory, *, support: SupportModel | None = None, embedder=None,
                 rewrite: Callable[[str, str], str] | None = None, config: VerifierConfig | None = None):
        from ..embed import get_embedder

        self.memory = memory
        self.support = support if support is not None else SupportModel.load()
        self.embedder = embedder if embedder is not None else get_embedder(memory.embed_model)
        if self.embedder.name != memory.embed_model:
            raise ValueError(f"embedder {self.embedder.name!r} is not the memory's model "
                             f"{memory.embed_model!r}")
        if rewrite is not None and not callable(rewrite):
            raise ValueError(f"rewrite {rewrite!r}: must be callable(sentence, unit_text) -> str")
        self.rewrite = rewrite
        self.config = config if config is not None else VerifierConfig.from_support(self.support)
        self._units: OrderedDict[str, UnitState] = OrderedDict()  # by id, of the snapshot below
        self._cached_generation = memory.generation

    # Store
    def _lookup(self, ids) -> dict[str, UnitState]:
        """The cited and allowlisted units, by id (missing ids are absent): the ones read before from
        this snapshot from the cache, the others in one query. A turn's units are cited answer after
        answer, and a cold B-tree walk per id costs more than the rest of a citation's checks."""
        if self._cached_generation != self.memory.generation:  # reopened on a newer commit
            self._units.clear()
            self._cached_generation = self.memory.generation
        found: dict[str, UnitState] = {}
        todo = []
        for uid in set(ids):
            unit = self._units.get(uid)
            if unit is None:
                todo.append(uid)
            else:
                found[uid] = unit
                self._units.move_to_end(uid)
        if todo:
            for unit in self.memory.unit_states(todo):
                found[unit.id] = self._units[unit.id] = unit
            while len(self._units) > self.UNIT_CACHE:
                self._units.popitem(last=False)
        return found

    # The check
    @property
    def _one_model(self) -> bool:
        """Whether the memory's embedder is the support model's: the support model was calibrated on its
        own embedder's cosines, so the memory's vectors (and the embedder) are handed over only then."""
        return self.embedder.name == self.support.embedder

    @property
    def _unread_embedder(self):
        """The memory's embedder where it is the support model's ``unread`` part's (a multilingual memory's):
        handed over, so the process loads that model once."""
        unread = getattr(self.support, "unread", None)  # a support model of one's own may have no such part
        return self.embedder if unread is not None and self.embedder.name == unread.embedder else None

    def warm_up(self) -> None:
        """Load now what the first verification loads on its way: the support model's embedder, which
        is this memory's own where they are one model (``verify`` hands it over) and the support
        model's own otherwise; and, in a memory of the ``unread`` part's embedder, that part's."""
        self.support.score(["warm up"], ["warm up"], embedder=self.embedder if self._one_model else None)
        if self._unread_embedder is not None:
            self.support.score(["预热"], ["预热"], unread_embedder=self._unread_embedder)

    def verify(self, answer: str, allowlist: Allowlist) -> Verification:
        if not isinstance(answer, str):
            raise ValueError(f"answer: must be a string, got {type(answer).__name__}")
        if not isinstance(allowlist, Allowlist):
            raise ValueError(f"allowlist: must be an Allowlist, got {type(allowlist).__name__}")
        t0 = time.perf_counter()
        parsed = parse_answer(answer, self.config.markers)
        units = self._lookup([c.unit_id for c in parsed.citations] + list(allowlist.ids))
        # The units of this turn are what the model saw: a marker copied out of one is source text.
        parsed = parsed.copied_from(units[i].content for i in allowlist.ids if i in units)
        records = [self._record(s) for s in parsed.sentences]
        pairs = self._structural(parsed, allowlist, units, records)
        self._supports(pairs)
        rewritten = self._rewrite(parsed, pairs, records)
        for k, (s, rec) in enumerate(zip(parsed.sentences, records)):
            rec["outcome"], rec["reason"] = _outcome(s, rec, k in rewritten)
        text = _render(parsed, records, rewritten, self.config.markers)
        return Verification(text, records, _counts(records), allowlist.turn_id, time.perf_counter() - t0,
                            self.config.to_dict())

    @staticmethod
    def _record(s: Sentence) -> dict:
        return {"sentence": s.text, "span": [s.start, s.end], "claim": "", "outcome": "", "reason": "",
                "rewritten": None, "citations": [], "malformed": [m.to_dict() for m in s.malformed]}

    def _structural(self, parsed: ParsedAnswer, allowlist: Allowlist, units: dict[str, UnitState],
                    records: list[dict]) -> list[_Pair]:
        """exists · active · allowed for every citation; the pairs that need a support check."""
        pairs = []
        for k, (s, rec) in enumerate(zip(parsed.sentences, records)):
            claim = core_claim(s.text) if s.citations else ""
            rec["claim"] = claim
            for c in s.citations:
                entry = {**c.to_dict(), "checks": {}, "status": None, "successor": None,
                         "scores": {}, "missing_facts": [], "verdict": "", "kept": False}
                rec["citations"].append(entry)
                unit = units.get(c.unit_id)
                checks = entry["checks"]
                checks["exists"] = unit is not None
                checks["allowed"] = c.unit_id in allowlist
                if c.unit_id in allowlist:
                    entry["scores"]["retrieval"] = allowlist.scores[c.unit_id]
                if unit is None:
                    entry["verdict"] = "invented"
                else:
                    checks["active"] = unit.status == "active"
                    entry["status"], entry["successor"] = unit.status, unit.superseded_by
                    if not checks["active"]:
                        entry["verdict"] = unit.status
                    elif not checks["allowed"]:
                        entry["verdict"] = "not allowed"
                    # Support is scored even where a check above failed: the audit shows what the unit says.
                    pairs.append(_Pair(k, s.text, c, unit, claim, entry))
                if c.hidden:  # source text, not a citation: what its unit says is kept aside
                    entry["unit_verdict"], entry["verdict"] = entry["verdict"], c.hidden
        return pairs

    def _score(self, sentences: list[str], units: list[UnitState]) -> tuple[np.ndarray, np.ndarray]:
        """Cosine (native kernel, stored unit vectors) and support probability of each (sentence, unit).

        The sentences' core claims are embedded; the support model is handed the sentences and takes
        their core itself, as when it was calibrated (``core_claim`` caches it: no work twice)."""
        claims = [core_claim(s) for s in sentences]
        if not claims:
            return np.zeros(0, np.float32), np.zeros(0, np.float64)
        first = {c: i for i, c in enumerate(dict.fromkeys(claims))}  # each claim embedded once
        # an extractive answer's claims are its units' own sentences, which the generator has embedded
        claim_vecs = shared_cache(self.embedder).embed(self.embedder, list(first))  # float32 rows
        claim_idx = np.fromiter((first[c] for c in claims), np.int64, len(claims))
        unit_rows = np.fromiter((u.row for u in units), np.int64, len(units))
        # Few pairs: one thread, no OpenMP start-up.
        cosine = pair_cosine(claim_vecs, self.memory.vectors, claim_idx, unit_rows, num_threads=1)
        shared = self._one_model
        prob = np.asarray(self.support.score(
            sentences, [u.content for u in units],
            claim_vecs=claim_vecs[claim_idx] if shared else None,
            evidence_vecs=np.asarray(self.memory.vectors[unit_rows]) if shared else None,
            embedder=self.embedder if shared else None,
            **({"unread_embedder": self._unread_embedder} if self._unread_embedder is not None else {})),
            dtype=np.float64)
        if prob.shape != (len(claims),):
            raise ValueError(f"support model returned shape {prob.shape} for {len(claims)} pairs")
        return cosine, prob

    def _judge(self, claim: str, unit: UnitState, cosine: float, prob: float, entry: dict) -> str:
        """Record the support scores of one pair and return its support verdict."""
        missing = self.config.missing(claim, unit.content) if claim else []
        entry["scores"].update(cosine=round(float(cosine), 4), support=round(float(prob), 4))
        entry["missing_facts"] = missing
        supported = bool(claim and prob >= self.config.hard and not missing)
        entry["checks"]["supports"] = supported
        if supported:
            return "valid"
        if claim and prob >= self.config.soft and not missing:
            return "uncertain"
        return "unsupported"

    def _supports(self, pairs: list[_Pair]) -> None:
        cosine, prob = self._score([p.sentence_text for p in pairs], [p.unit for p in pairs])
        for p, cos, pr in zip(pairs, cosine, prob):
            verdict = self._judge(p.claim, p.unit, cos, pr, p.record)
            key = "unit_verdict" if p.citation.hidden else "verdict"
            if not p.record[key]:  # a store check already failed: that is the verdict
                p.record[key] = verdict
            p.record["kept"] = p.record["verdict"] == "valid"

    def _rewrite(self, parsed: ParsedAnswer, pairs: list[_Pair], records: list[dict]) -> set[int]:
        """One rewrite per sentence with no valid citation but one in the soft zone, re-checked in one
        batch; returns the sentences whose rewrite passed."""
        if self.rewrite is None:
            return set()
        chosen: dict[int, _Pair] = {}
        for p in pairs:
            rec = records[p.sentence]
            if any(c["kept"] for c in rec["citations"]) or p.record["checks"].get("active") is not True \
                    or not p.record["checks"]["allowed"] or p.record["scores"]["support"] < self.config.soft \
                    or p.citation.hidden:  # a hidden marker is no citation for a rewrite to rescue
                continue
            best = chosen.get(p.sentence)
            if best is None or p.record["scores"]["support"] > best.record["scores"]["support"]:
                chosen[p.sentence] = p
        if not chosen:
            return set()
        retry: list[tuple[int, _Pair, str]] = []
        for k, p in chosen.items():
            new = self.rewrite(parsed.sentences[k].text, p.unit.content)
            if not isinstance(new, str):
                raise ValueError(f"rewrite returned {type(new).__name__}, not a string")
            new = strip_markers(new, self.config.markers)
            records[k]["rewritten"] = {"text": new, "id": p.citation.unit_id}
            if new:
                retry.append((k, p, new))
        claims = [core_claim(new) for _, _, new in retry]
        cosine, prob = self._score([new for _, _, new in retry], [p.unit for _, p, _ in retry])
        passed = set()
        for (k, p, new), claim, cos, pr in zip(retry, claims, cosine, prob):
            check = {"scores": {}, "checks": {}}
            verdict = self._judge(claim, p.unit, cos, pr, check)
            records[k]["rewritten"].update(claim=claim, scores=check["scores"],
                                           missing_facts=check["missing_facts"], verdict=verdict)
            if verdict == "valid":
                p.record["verdict"], p.record["kept"] = "valid after rewrite", True
                passed.add(k)
        return passed


def _outcome(s: Sentence, rec: dict, rewritten: bool) -> tuple[str, str]:
    cites = rec["citations"]
    if not cites and not rec["malformed"]:
        return "uncited", ""
    if any(c["kept"] for c in cites):
        removed = sum(not c["kept"] for c in cites) + len(rec["malformed"])
        why = "rewritten from the cited unit" if rewritten else "supported"
        return "keep", why + (f"; {removed} bad marker(s) removed" if removed else "")
    verdicts = [c["verdict"] for c in cites]
    against = sorted({c.get("unit_verdict", c["verdict"]) for c in cites} & _DROP_VERDICTS)
    if against and s.text:
        return "drop", "cited unit " + "/".join(against)
    why = sorted(set(verdicts)) + sorted({m["reason"] for m in rec["malformed"]})
    return "weaken", "no valid citation: " + ", ".join(why)


def _render(parsed: ParsedAnswer, records: list[dict], rewritten: set[int], markers) -> str:
    text = parsed.text
    out: list[str] = []
    pos = 0
    last_dropped = False
    for k, (s, rec) in enumerate(zip(parsed.sentences, records)):
        gap = text[pos:s.start]
        pos = s.end
        outcome = rec["outcome"]
        if outcome == "drop":
            if last_dropped and not gap.strip():
                continue  # consecutive dropped sentences share one notice
            out.append(gap + (DROPPED_CJK if CJK_CHAR.search(s.text) else DROPPED))
            last_dropped = True
            continue
        last_dropped = False
        kept = [c for c, e in zip(s.citations, rec["citations"]) if e["kept"]]
        if k in rewritten:
            body = _with_markers(rec["rewritten"]["text"], kept)
        else:
            gone = [(m.start, m.end) for m in s.malformed]
            gone += [(c.start, c.end) for c in s.citations if c not in kept]
            body = cut_spans(text, gone, s.start, s.end)
        out.append(gap + body)
    out.append(text[pos:])
    rendered = "".join(out).strip()
    if not rewritten and all(e["kept"] for rec in records for e in rec["citations"]) \
            and not any(rec["malformed"] for rec in records):
        return rendered  # nothing was cut out, so nothing can have been spliced together
    kept_ids = Counter(e["id"] for rec in records for e in rec["citations"] if e["kept"])
    return _scrub(rendered, kept_ids, markers)


def _scrub(text: str, kept: Counter, markers) -> str:
    """Cut any marker that removing others has spliced together ("[ci" + "[cite:A]" + "te:B]" loses A and
    would read "[cite:B]"), until the text shows exactly the kept markers and nothing malformed."""
    while True:
        cites, bad = scan_markers(text, markers)
        budget = Counter(kept)
        extra = [(b.start, b.end) for b in bad]
        for c in cites:
            if budget[c.unit_id] > 0:
                budget[c.unit_id] -= 1
            else:
                extra.append((c.start, c.end))
        if not extra:
            return text
        text = cut_spans(text, extra).strip()


def _with_markers(sentence: str, cites: list[CitationMarker]) -> str:
    """A rewritten sentence with its markers before its final punctuation, as models write them."""
    spelled = "".join(c.marker.spell(c.unit_id) for c in cites)
    body = sentence.rstrip()
    tail = ""
    while body and body[-1] in _FINAL_PUNCT:
        body, tail = body[:-1], body[-1] + tail
    sep = "" if CJK_CHAR.search(body[-1:] or "") else " "
    return f"{body}{sep}{spelled}{tail}"


def _counts(records: list[dict]) -> dict[str, int]:
    counts = {o: 0 for o in OUTCOMES}
    for r in records:
        counts[r["outcome"]] += 1
    cites = [c for r in records for c in r["citations"]]
    counts.update(sentences=len(records), citations=len(cites), valid=sum(c["kept"] for c in cites),
                  removed=sum(not c["kept"] for c in cites), hidden=sum(bool(c["hidden"]) for c in cites),
                  malformed=sum(len(r["malformed"]) for r in records),
                  rewritten=sum(r["rewritten"] is not None for r in records))
    return counts
