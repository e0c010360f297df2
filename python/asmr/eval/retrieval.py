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
averaged over the answerable questions (a question with ``gold_pids: []`` or
``"answerable": false`` has no gold to recall: it only counts for refusal).
Latency is per question, including its embedding.

Refusal is scored for three systems: ``asmr`` (its confidence against its
threshold) and the ``dense`` and ``hybrid`` baselines, each refusing when its
``baseline_score`` (the cosine of the question and the best unit it would
show) is below its threshold (``asmr.retrieve.confidence.fitted_model``: fitted for each embedder).
"""
from __future__ import annotations

import statistics
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from asmr_kernels import CSRGraph, diffuse

from ..embed.models import question_vectors
from ..retrieve import RetrieveConfig, Retriever
from ..retrieve import confidence as confidence_model
from .jsonl import records

METHODS = ("bm25", "dense", "hybrid", "ppr", "asmr")
BASELINES = ("dense", "hybrid")  # the methods that refuse on baseline_score
REFUSING = BASELINES + ("asmr",)
DEPTH = 50  # units each method ranks before they become documents
PPR_DAMPING = 0.5
PPR_STEPS = 20


@dataclass(frozen=True)
class Query:
    qid: str
    question: str
    gold: tuple[str, ...]  # document ids
    answers: tuple[str, ...] = ()  # accepted answers, where the file gives them
    answerable: bool = True  # False: the memory is not meant to hold the answer
    category: str | None = None


def load_queries(path: str | Path) -> list[Query]:
    """Questions of ``{"qid", "question", "gold_pids", "answers"?, "answerable"?, "category"?}``; one
    with ``gold_pids: []`` or ``"answerable": false`` (then ``gold_pids`` may be left out) has no answer."""
    out = []
    for where, r in records(path):
        try:
            answerable = r.get("answerable", True)
            if not isinstance(answerable, bool):
                raise ValueError(f"{where}: \"answerable\" must be true or false, not {answerable!r}")
            category = r.get("category")
            if category is not None and not isinstance(category, str):
                raise ValueError(f"{where}: \"category\" must be a string, not {category!r}")
            gold = tuple(str(p) for p in (r["gold_pids"] if answerable or "gold_pids" in r else ()))
            out.append(Query(str(r.get("qid", where.rsplit(":", 1)[1])), r["question"], gold,
                             tuple(str(a) for a in r.get("answers") or ()), answerable and bool(gold), category))
        except (AttributeError, KeyError, TypeError) as exc:
            raise ValueError(f"{where}: not a query record with question and gold_pids ({exc})") from None
    if not out:
        raise ValueError(f"{path}: no queries")
    if len({q.qid for q in out}) < len(out):
        raise ValueError(f"{path}: qids repeat; each question needs its own")
    return out


def baseline_rows(method: str, memory, retriever: Retriever, question: str, qvec: np.ndarray,
                  k: int) -> tuple[np.ndarray, np.ndarray]:
    """The units the ``dense`` or ``hybrid`` baseline shows for a question, best first, at most ``k``:
    (rows, their ranking scores)."""
    if method == "dense":
        rows, scores = memory.search_dense(qvec[None], k)
        keep = rows[0] >= 0
        return rows[0][keep], scores[0][keep]
    if method == "hybrid":
        return retriever.seeds(question, qvec, k, readable=1.0)  # plain RRF, as a user would build it
    raise ValueError(f"baseline {method!r}: must be one of {', '.join(BASELINES)}")


def best_cosine(memory, qvec: np.ndarray, rows) -> float:
    """The cosine of the question and the closest of ``rows``, floored at 0 as recall's similarity is
    (so a threshold of 0 refuses nothing); 0 without rows."""
    rows = np.asarray(rows, np.int64)
    return max(float(np.max(memory.cosines(rows, qvec))), 0.0) if len(rows) else 0.0


def baseline_score(method: str, memory, retriever: Retriever, question: str, qvec: np.ndarray, k: int) -> float:
    """What a baseline's refusal threshold is compared with: the cosine of the question and the best
    of the ``k`` units the baseline shows (``baseline_rows``)."""
    return best_cosine(memory, qvec, baseline_rows(method, memory, retriever, question, qvec, k)[0])


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
             methods=METHODS, shown: dict | None = None) -> dict:
    """Recall@2, Recall@5 and latency per method; the report's ``params`` echo every setting.
    ``shown``, where given, receives each question's first five documents by method:
    ``{qid: {method: [doc_id, ...]}}``."""
    config = config or RetrieveConfig()
    retriever = Retriever(memory, embedder, config)
    ppr = _PPR(retriever.graph) if "ppr" in methods else None
    active = memory.active.astype(np.float32)

    def run(method: str, q: Query) -> list[str]:
        if method == "bm25":
            return _docs_of(memory, memory.search_lexical(q.question, DEPTH)[0])
        qvec = question_vectors(embedder, [q.question])[0]
        if method == "dense":
            return _docs_of(memory, memory.search_dense(qvec[None], DEPTH)[0][0])
        if method == "hybrid":
            return _docs_of(memory, retriever.seeds(q.question, qvec, DEPTH, readable=1.0)[0])
        if method == "ppr":
            rows, scores = retriever.seeds(q.question, qvec, config.seeds, readable=1.0)
            return _docs_of(memory, ppr.rank(rows, scores, active))
        hits, _ = retriever.recall(q.question, qvec, DEPTH)
        return _docs_of(memory, [h.row for h in hits])

    report = {"methods": {}, "params": {"retrieve": retriever.config.to_dict(), "depth": DEPTH,
                                        "ppr": {"damping": PPR_DAMPING, "steps": PPR_STEPS},
                                        "embedder": embedder.name, "queries": len(queries),
                                        "graph": {"nodes": retriever.graph.num_nodes,
                                                  "edges": retriever.graph.num_edges,
                                                  "entities": len(retriever.graph.entities)}}}
    report["params"]["answerable"] = sum(q.answerable for q in queries)
    categories = sorted({q.category for q in queries if q.category is not None})
    if categories:
        report["by_category"] = {c: {} for c in categories}
    for method in methods:
        recall: dict[str, tuple[float, float]] = {}  # qid: (recall@2, recall@5), answerable questions only
        ms = []
        for q in queries:
            t = time.perf_counter()
            docs = run(method, q)
            ms.append((time.perf_counter() - t) * 1000)
            if shown is not None:
                shown.setdefault(q.qid, {})[method] = docs[:5]
            if q.answerable:
                gold = set(q.gold)
                recall[q.qid] = (len(gold & set(docs[:2])) / len(gold), len(gold & set(docs[:5])) / len(gold))
        report["methods"][method] = {**_mean_recall(recall.values()), "p50_ms": float(np.percentile(ms, 50)),
                                     "p95_ms": float(np.percentile(ms, 95))}
        for c in categories:
            report["by_category"][c][method] = _mean_recall(
                [recall[q.qid] for q in queries if q.category == c and q.qid in recall])
    return report


def _mean_recall(pairs) -> dict:
    """Mean Recall@2 and @5 of (recall@2, recall@5) pairs; None without any (no answerable question)."""
    pairs = list(pairs)
    return {"recall@2": statistics.fmean(p[0] for p in pairs) if pairs else None,
            "recall@5": statistics.fmean(p[1] for p in pairs) if pairs else None}


def split_unanswerable(queries: list[Query], fraction: float, seed: int = 0) -> tuple[set[str], set[str]]:
    """Choose ``fraction`` of the answerable questions to make unanswerable: (the qids without their
    answer, the gold documents to remove). Every answerable question that loses a gold document is
    among the qids, chosen or not (questions often share a passage). Questions that have no answer
    already are never chosen."""
    if not 0.0 < fraction < 1.0:
        raise ValueError(f"--unanswerable {fraction}: must be between 0 and 1")
    answerable = [q for q in queries if q.answerable]
    if not answerable:
        raise ValueError(f"--unanswerable {fraction}: no answerable question to make unanswerable")
    rng = np.random.default_rng(seed)
    chosen = rng.choice(len(answerable), size=max(1, round(fraction * len(answerable))), replace=False)
    removed = {d for i in chosen for d in answerable[i].gold}
    # A question that shares a removed passage with a chosen one has lost (part of) its answer too.
    return {q.qid for q in answerable if removed & set(q.gold)}, removed


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


def refusal_features(memory, embedder, queries: list[Query], config: RetrieveConfig | None = None, *,
                     baselines: tuple[str, ...] = (), baseline_k: int | None = None) -> list[dict]:
    """Per question: the confidence features, the confidence and whether the result was "not found";
    for each of ``baselines`` ("dense", "hybrid") also its ``baseline_score`` as ``"<name>_score"``,
    over ``baseline_k`` units (default the config's k, ASMR's budget here; ``eval answers`` gives
    the baselines its ``max_sources``)."""
    retriever = Retriever(memory, embedder, config or RetrieveConfig())
    k = retriever.config.k if baseline_k is None else baseline_k
    out = []
    for q in queries:
        qvec = question_vectors(embedder, [q.question])[0]
        _, features = retriever.recall(q.question, qvec, retriever.config.k)
        conf = retriever.confidence(features)
        out.append({**features, "qid": q.qid, "confidence": conf,
                    "refused": conf < retriever.config.confidence_threshold,
                    **{f"{b}_score": baseline_score(b, memory, retriever, q.question, qvec, k) for b in baselines}})
    return out


def roc_auc(answerable: list[float], unanswerable: list[float]) -> float | None:
    """The chance that an answerable question scores above an unanswerable one (ties count half);
    None without both kinds."""
    if not answerable or not unanswerable:
        return None
    a, u = np.asarray(answerable, float)[:, None], np.asarray(unanswerable, float)[None, :]
    return float(np.mean((a > u) + 0.5 * (a == u)))


def refusal_report(rows: list[dict], unanswerable: set[str], score: str = "confidence") -> dict:
    """Refusal precision and recall on the unanswerable share, false refusals on the answerable one,
    and the ROC AUC of ``score`` (answerable against unanswerable) when every row has it."""
    refused = {r["qid"] for r in rows if r["refused"]}
    answerable = {r["qid"] for r in rows} - unanswerable
    true_refusals = len(refused & unanswerable)
    report = {"precision": true_refusals / len(refused) if refused else 1.0,
              "recall": true_refusals / len(unanswerable) if unanswerable else 1.0,
              "false_refusal_rate": len(refused & answerable) / len(answerable) if answerable else 0.0,
              "unanswerable": len(unanswerable), "answerable": len(answerable)}
    if all(score in r for r in rows):
        report["roc_auc"] = roc_auc([r[score] for r in rows if r["qid"] not in unanswerable],
                                    [r[score] for r in rows if r["qid"] in unanswerable])
    return report


def refusal_by_method(rows: list[dict], unanswerable: set[str], thresholds: dict[str, float] | None = None,
                      embedder: str = "") -> dict:
    """``refusal_report`` of each system that can refuse: ``dense`` and ``hybrid`` (their
    ``baseline_score`` below their threshold, default those fitted for ``embedder``'s cosines) and
    ``asmr`` (its confidence below its threshold); rows from ``refusal_features(..., baselines=BASELINES)``."""
    thresholds = confidence_model.fitted_model(embedder)[2] if thresholds is None else thresholds
    out = {}
    for b in BASELINES:
        t = float(thresholds.get(b, 0.0))
        out[b] = {**refusal_report([{**r, "refused": r[f"{b}_score"] < t} for r in rows], unanswerable,
                                   score=f"{b}_score"), "threshold": t}
    out["asmr"] = refusal_report(rows, unanswerable)
    return out


def refusal_by_category(rows: list[dict], queries: list[Query], thresholds: dict[str, float] | None = None,
                        embedder: str = "") -> dict:
    """Refusal per question category (``Query.category``), for each system that can refuse (as
    ``refusal_by_method``): ``{CATEGORY: {"answerable": n, "unanswerable": n, METHOD: {"refused_answerable",
    "refused_unanswerable", "roc_auc"}}}``. A share is None where the category has no such question; the
    ROC AUC sets the category's questions without an answer against every answerable question (of any
    category), so a category of unanswerable questions is ranked against what it must be told apart from."""
    thresholds = confidence_model.fitted_model(embedder)[2] if thresholds is None else thresholds
    by_qid = {r["qid"]: r for r in rows}
    rules = {b: (f"{b}_score", lambda r, b=b: r[f"{b}_score"] < float(thresholds.get(b, 0.0))) for b in BASELINES}
    rules["asmr"] = ("confidence", lambda r: r["refused"])
    answerable = [by_qid[q.qid] for q in queries if q.answerable and q.qid in by_qid]
    out: dict[str, dict] = {}
    for c in sorted({q.category for q in queries if q.category is not None}):
        ans = [by_qid[q.qid] for q in queries if q.category == c and q.answerable and q.qid in by_qid]
        una = [by_qid[q.qid] for q in queries if q.category == c and not q.answerable and q.qid in by_qid]
        out[c] = {"answerable": len(ans), "unanswerable": len(una)}
        for method, (score, refused) in rules.items():
            out[c][method] = {
                "refused_answerable": statistics.fmean(refused(r) for r in ans) if ans else None,
                "refused_unanswerable": statistics.fmean(refused(r) for r in una) if una else None,
                "roc_auc": roc_auc([r[score] for r in answerable], [r[score] for r in una]) if una else None}
    return out


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
