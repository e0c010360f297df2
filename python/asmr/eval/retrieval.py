"""Retrieval evaluation: Recall@2/@5 over gold documents and latency, per method, side by side.

Methods, all over the same memory and, where they use one, the same graph:

- ``bm25``: the lexical index alone;
- ``dense``: the faiss index alone (same embedder as the memory);
- ``hybrid``: both fused by reciprocal rank (ASMR's seeds);
- ``ppr``: HippoRAG-style personalized PageRank over the unit graph from the
  hybrid seeds (``asmr_kernels.diffuse`` on the row-normalised graph, damping 0.5);
- ``asmr``: the full recall (``asmr.retrieve``).

A method's ranked units become a ranked list of documents (first appearance);
Recall@k is the share of a question's gold documents among the first k,
averaged over questions. Latency is per question, including its embedding.
"""
from __future__ import annotations

import statistics
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from asmr_kernels import CSRGraph, diffuse

from ..retrieve import RetrieveConfig, Retriever
from .jsonl import records

METHODS = ("bm25", "dense", "hybrid", "ppr", "asmr")
DEPTH = 50  # units each method ranks before they become documents
PPR_DAMPING = 0.5
PPR_STEPS = 20


@dataclass(frozen=True)
class Query:
    qid: str
    question: str
    gold: tuple[str, ...]  # document ids
    answers: tuple[str, ...] = ()  # accepted answers, where the file gives them


def load_queries(path: str | Path) -> list[Query]:
    out = []
    for where, r in records(path):
        try:
            out.append(Query(str(r.get("qid", where.rsplit(":", 1)[1])), r["question"],
                             tuple(str(p) for p in r["gold_pids"]), tuple(str(a) for a in r.get("answers") or ())))
        except (AttributeError, KeyError, TypeError) as exc:
            raise ValueError(f"{where}: not a query record with question and gold_pids ({exc})") from None
    if not out:
        raise ValueError(f"{path}: no queries")
    return out


def _docs_of(memory, rows, limit: int = 5) -> list[str]:
    docs: list[str] = []
    for u in memory.units_at_rows([int(r) for r in rows if r >= 0]):
        if u.doc_id not in docs:
            docs.append(u.doc_id)
            if len(docs) == limit:
                break
    return docs


class _PPR:
    def __init__(self, graph):
        w = graph.weights.astype(np.float64)
        src = np.repeat(np.arange(graph.num_nodes), np.diff(graph.indptr))
        sums = np.bincount(src, weights=w, minlength=graph.num_nodes)
        norm = (w / np.maximum(sums[src], 1e-12)).astype(np.float32)
        self.csr = CSRGraph(graph.indptr, graph.indices, norm, num_nodes=graph.num_nodes)
        self.num_rows = graph.num_rows

    def rank(self, seed_rows, seed_scores, active) -> np.ndarray:
        p = np.zeros(self.csr.num_nodes, np.float32)
        p[seed_rows] = seed_scores / max(float(seed_scores.sum()), 1e-12)
        x = diffuse(self.csr, p, steps=PPR_STEPS, decay=PPR_DAMPING, restart=1.0 - PPR_DAMPING)
        units = x[:self.num_rows] * active
        top = np.argpartition(-units, min(DEPTH, len(units) - 1))[:DEPTH]
        return top[np.argsort(-units[top], kind="stable")]


def evaluate(memory, embedder, queries: list[Query], config: RetrieveConfig | None = None,
             methods=METHODS) -> dict:
    """Recall@2, Recall@5 and latency per method; the report's ``params`` echo every setting."""
    config = config or RetrieveConfig()
    retriever = Retriever(memory, embedder, config)
    ppr = _PPR(retriever.graph) if "ppr" in methods else None
    active = memory.active.astype(np.float32)

    def run(method: str, q: Query) -> list[str]:
        if method == "bm25":
            return _docs_of(memory, memory.search_lexical(q.question, DEPTH)[0])
        qvec = embedder.embed([q.question])[0]
        if method == "dense":
            return _docs_of(memory, memory.search_dense(qvec[None], DEPTH)[0][0])
        if method == "hybrid":
            return _docs_of(memory, retriever.seeds(q.question, qvec, DEPTH)[0])
        if method == "ppr":
            rows, scores = retriever.seeds(q.question, qvec, config.seeds)
            return _docs_of(memory, ppr.rank(rows, scores, active))
        hits, _ = retriever.recall(q.question, qvec, DEPTH)
        return _docs_of(memory, [h.row for h in hits])

    report = {"methods": {}, "params": {"retrieve": config.to_dict(), "depth": DEPTH,
                                        "ppr": {"damping": PPR_DAMPING, "steps": PPR_STEPS},
                                        "embedder": embedder.name, "queries": len(queries),
                                        "graph": {"nodes": retriever.graph.num_nodes,
                                                  "edges": retriever.graph.num_edges,
                                                  "entities": len(retriever.graph.entities)}}}
    for method in methods:
        r2, r5, ms = [], [], []
        for q in queries:
            t = time.perf_counter()
            docs = run(method, q)
            ms.append((time.perf_counter() - t) * 1000)
            gold = set(q.gold)
            r2.append(len(gold & set(docs[:2])) / len(gold))
            r5.append(len(gold & set(docs[:5])) / len(gold))
        report["methods"][method] = {"recall@2": statistics.fmean(r2), "recall@5": statistics.fmean(r5),
                                     "p50_ms": float(np.percentile(ms, 50)), "p95_ms": float(np.percentile(ms, 95))}
    return report


def split_unanswerable(queries: list[Query], fraction: float, seed: int = 0) -> tuple[set[str], set[str]]:
    """Choose ``fraction`` of the questions to make unanswerable: (their qids, the gold documents to remove)."""
    if not 0.0 < fraction < 1.0:
        raise ValueError(f"--unanswerable {fraction}: must be between 0 and 1")
    rng = np.random.default_rng(seed)
    chosen = rng.choice(len(queries), size=max(1, round(fraction * len(queries))), replace=False)
    qids = {queries[i].qid for i in chosen}
    return qids, {d for i in chosen for d in queries[i].gold}


def synth_refusal_queries(path: str | Path) -> tuple[list[Query], set[str]]:
    """The questions of ``asmr eval synth`` (queries.jsonl) for refusal: (queries, the unanswerable qids).

    An unanswerable one asks for something the knowledge base does not hold (often a field that its
    subject lacks and other subjects have); the others are answerable from the memory built from
    docs/v1 then docs/v2."""
    from .synth import load_queries as load_synth
    queries, unanswerable = [], set()
    for r in load_synth(path):
        queries.append(Query(r["qid"], r["question"], tuple(r["gold_docs"]), tuple(r["answers"])))
        if r["type"] == "unanswerable":
            unanswerable.add(r["qid"])
    return queries, unanswerable


def refusal_features(memory, embedder, queries: list[Query], config: RetrieveConfig | None = None) -> list[dict]:
    """Per question: the confidence features, the confidence and whether the result was "not found"."""
    retriever = Retriever(memory, embedder, config or RetrieveConfig())
    out = []
    for q in queries:
        qvec = embedder.embed([q.question])[0]
        _, features = retriever.recall(q.question, qvec, retriever.config.k)
        conf = retriever.confidence(features)
        out.append({**features, "qid": q.qid, "confidence": conf,
                    "refused": conf < retriever.config.confidence_threshold})
    return out


def refusal_report(rows: list[dict], unanswerable: set[str]) -> dict:
    """Refusal precision and recall on the unanswerable share, false refusals on the answerable one."""
    refused = {r["qid"] for r in rows if r["refused"]}
    answerable = {r["qid"] for r in rows} - unanswerable
    true_refusals = len(refused & unanswerable)
    return {"precision": true_refusals / len(refused) if refused else 1.0,
            "recall": true_refusals / len(unanswerable) if unanswerable else 1.0,
            "false_refusal_rate": len(refused & answerable) / len(answerable) if answerable else 0.0,
            "unanswerable": len(unanswerable), "answerable": len(answerable)}


def reliability_table(rows: list[dict], unanswerable: set[str], bins: int = 5) -> list[dict]:
    """Confidence bins: how many questions, their mean confidence, and the share that was answerable."""
    edges = np.linspace(0, 1, bins + 1)
    table = []
    for lo, hi in zip(edges[:-1], edges[1:]):
        inside = [r for r in rows if lo <= r["confidence"] < hi or (hi == 1 and r["confidence"] == 1)]
        if inside:
            table.append({"bin": f"{lo:.1f}-{hi:.1f}", "questions": len(inside),
                          "mean_confidence": statistics.fmean(r["confidence"] for r in inside),
                          "answerable": statistics.fmean(r["qid"] not in unanswerable for r in inside)})
    return table
