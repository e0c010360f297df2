"""Usage edges: the graph learns which units answer questions together from its own verified answers.

An audit record (``asmr.verify.audit``) lists each sentence of a verified answer, its outcome and its
citations. Only citations the verifier kept, in sentences it kept, count: a weakened sentence or a
dropped citation teaches nothing. The units one answer cites that way (its first ``usage_max_units``;
only units active when learned) are counted, once per distinct question, in ``asmr.store.UsageLog``:
the questions, each unit's citations and each pair's co-citations, decayed with a half-life of
``usage_half_life_days``. A question asked 10,000 times counts once.

When a graph is loaded, a pair cited together by at least ``usage_min_count`` questions (decayed), both
units active in that snapshot, gets a ``usage`` edge each way, weighing

    min(usage_cap, alpha * cosine + usage_beta * NPMI + gamma * prior["usage"])

with the NPMI of the pair over the questions (plus one that cited nothing, so that two questions
citing the same two units are not certainty): however many questions cite a pair, its edge weighs at
most ``usage_cap``, and each unit keeps its ``usage_k`` strongest. Learning never writes the memory.
"""
from __future__ import annotations

import re
import time
from datetime import datetime

import numpy as np

from ..embed.models import on_default_scale
from ..store.usage import UsageLog
from .build import GraphConfig, UnitGraph, _strongest, npmi

_SPACES = re.compile(r"\s+")
DAY = 86400.0


def cited_together(record: dict) -> list[str]:
    """The unit ids that kept citations of kept sentences of an audit record name, in order."""
    out: list[str] = []
    for sentence in record.get("audit") or []:
        if sentence.get("outcome") != "keep":
            continue
        for c in sentence.get("citations") or []:
            if c.get("kept") is True and not c.get("hidden") and c.get("id") and c["id"] not in out:
                out.append(c["id"])
    return out


def question_key(record: dict) -> str:
    """What makes two records the same question: its text, case and spacing aside (else the answer's)."""
    text = record.get("question") or record.get("text") or ""
    return _SPACES.sub(" ", text).strip().casefold()


def record_time(record: dict) -> float:
    try:
        return datetime.fromisoformat(str(record.get("time"))).timestamp()
    except ValueError:
        return time.time()


def learn(memory, log: UsageLog, records: list[dict], offsets: dict[str, int],
          config: GraphConfig | None = None) -> dict[str, int]:
    """Fold audit ``records`` into ``log`` with the audit ``offsets`` read so far (one transaction).
    Units not active in ``memory`` now are left out. Returns counts of what was read and counted."""
    config = config or GraphConfig()
    cited = [(r, cited_together(r)) for r in records]
    states = {s.id: s.status for s in memory.unit_states({i for _, ids in cited for i in ids})}
    answers, skipped = [], 0
    for r, ids in cited:
        ok = [i for i in ids if states.get(i) == "active"]
        skipped += len(ids) - len(ok)
        if ok:
            answers.append((question_key(r), record_time(r), ok[:config.usage_max_units]))
    counted = log.fold(answers, offsets, config.usage_half_life_days * DAY)
    return {"records": len(records), "answers": len(answers), "inactive_citations": skipped, **counted}


def usage_edges(memory, config: GraphConfig, log: UsageLog, now: float | None = None
                ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(src row, dst row, weight) of the usage edges of a memory snapshot, both ways."""
    now = time.time() if now is None else now
    total, units, pairs = log.counts(now, config.usage_half_life_days * DAY)
    pairs = [p for p in pairs if p[2] >= config.usage_min_count]
    empty = (np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros(0, np.float32))
    if not pairs:
        return empty
    row = {s.id: s.row for s in memory.unit_states({x for a, b, _ in pairs for x in (a, b)})
           if s.status == "active" and s.row < memory.num_rows and memory.active[s.row]}
    pairs = [p for p in pairs if p[0] in row and p[1] in row]
    if not pairs:
        return empty
    a = np.array([row[p[0]] for p in pairs], np.int64)
    b = np.array([row[p[1]] for p in pairs], np.int64)
    both = np.array([p[2] for p in pairs])
    score = npmi(both, [units.get(p[0], p[2]) for p in pairs], [units.get(p[1], p[2]) for p in pairs],
                 total + 1.0)
    cos = on_default_scale(memory.embed_model, np.einsum("ij,ij->i", np.asarray(memory.vectors[a]),
                                                         np.asarray(memory.vectors[b]))) \
        if memory.dim else np.zeros(len(a))
    w = np.minimum(config.alpha * np.maximum(cos, 0) + config.usage_beta * score
                   + config.gamma * config.prior.get("usage", 0.0), config.usage_cap).astype(np.float32)
    ok = score > 0
    src, dst = np.concatenate([a[ok], b[ok]]), np.concatenate([b[ok], a[ok]])
    w = np.concatenate([w[ok], w[ok]])
    keep = _strongest(src, dst, w, config.usage_k, memory.num_rows)
    return src[keep], dst[keep], w[keep]


def with_usage(graph: UnitGraph, memory, config: GraphConfig) -> UnitGraph:
    """``graph`` with the usage edges learned so far; itself when usage is off or nothing was learned."""
    if not config.usage:
        return graph
    with UsageLog(memory.directory) as log:
        src, dst, w = usage_edges(memory, config, log)
    return graph.with_edges(src, dst, w, "usage")
