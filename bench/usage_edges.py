"""Do the new edges help recall? Usage edges learned from a stream of verified answers, and the
co-occurrence weight beta fitted on one source and reported on the other.

    python bench/usage_edges.py                      # generated KB (seed 0) and the HotpotQA sample
    python bench/usage_edges.py --synth-questions 300 --betas 0,0.5,1

Two sources: the generated knowledge base (``asmr.eval.synth.generate(seed=0)``, its v2 corpus and
questions) and the HotpotQA sample (../shared/data, a tuning sample: no public test set is read).
Each is ingested once into --workdir (all-MiniLM-L6-v2), and only its answerable questions are used.

Usage edges. The questions are shuffled (--seed) and split in two disjoint halves: a stream and a
held-out set (no question text in both). Each stream question is answered by the extractive
generator (no model) and verified; its audit record is appended and ``asmr graph learn``'s fold
reads the records. No gold label reaches the learning: only the verifier's kept citations. Recall@5
(``asmr``) is then measured on the held-out questions, and on the stream's own questions, with the
learned edges and with learning off (``GraphConfig(usage=False)``: the same as before any
learning). Held-out questions that share a gold document with a stream question ("related") are
reported apart from the others.

``--chains`` learns, in place of the stream's answers, the gold chains of its questions that span two
or more documents (of each gold document, the unit that holds most of the question's and the answer's
terms), each walked by two users (two question keys): what learning could teach recall at best. Gold
labels reach the learning there, so it bounds the method and fits nothing. Held-out figures are then
also given per question category.

Co-occurrence. For each beta of --betas, Recall@5 of all answerable questions of each source (usage
off). Beta is chosen on one source (in-sample: the best there) and reported on the other (out of
source), both ways, side by side.

Figures depend on the machine only through latency (P95 per question, embedding included); report
that they were measured while other jobs shared it, where they were.
"""
from __future__ import annotations

import argparse
import json
import random
import shutil
import time
from dataclasses import replace
from pathlib import Path

DATA = Path(__file__).resolve().parents[2] / "shared" / "data"


def sources(args) -> dict[str, tuple[Path, Path]]:
    """name: (corpus.jsonl, queries.jsonl)."""
    from asmr.eval.synth import generate

    synth = args.workdir / "synth"
    if not (synth / "corpus.queries.jsonl").exists():
        generate(synth, seed=0)
    out = {"synth": (synth / "corpus.jsonl", synth / "corpus.queries.jsonl")}
    # Family B words the same company's questions another way: paraphrases, asked of family A's memory
    # (document ids are paths, the same in both families).
    paraphrases = args.workdir / "synth-b"
    if not (paraphrases / "corpus.queries.jsonl").exists():
        generate(paraphrases, seed=0, family="B")
    hotpot = args.data / "hotpotqa_train.corpus.jsonl"
    if hotpot.exists():
        out["hotpotqa"] = (hotpot, args.data / "hotpotqa_train.queries.jsonl")
    else:
        print(f"(no {hotpot}: HotpotQA left out)")
    return out


def memory_of(args, name: str, corpus: Path) -> Path:
    from asmr.store import Writer
    from asmr.units.read import iter_jsonl

    mem = args.workdir / f"memory-{name}"
    if not (mem / "memory.sqlite").exists():
        with Writer(mem, embedder=args.embedder, progress=False) as w:
            w.ingest(iter_jsonl(corpus), kb="eval")
    return mem


def recall_of(memory, embedder, queries, qvecs, config) -> tuple[dict[str, float], float]:
    """Recall@2 and @5 of each question (qid: shares of its gold documents among the first 2 and 5),
    and the P95 of recall in ms (the question's vector is given: embedding not included)."""
    import numpy as np

    from asmr.retrieve import Retriever

    r = Retriever(memory, embedder, config)
    out, ms = {}, []
    for q, v in zip(queries, qvecs):
        t = time.perf_counter()
        hits, _ = r.recall(q.question, v, 50)
        ms.append((time.perf_counter() - t) * 1000)
        docs: list[str] = []
        for h in hits:
            doc = h.unit_id.split("/")[3]
            if doc not in docs:
                docs.append(doc)
        gold = set(q.gold)
        out[q.qid] = (len(gold & set(docs[:2])) / len(gold), len(gold & set(docs[:5])) / len(gold))
    return out, float(np.percentile(ms, 95)) if ms else 0.0


def mean(values) -> float | None:
    values = list(values)
    return sum(values) / len(values) if values else None


def usage_run(args, name: str, mem: Path, queries, paraphrased=()) -> dict:
    """Learn from the stream's verified answers; Recall@5 before/after, learning off."""
    from asmr.answer import Answerer
    from asmr.embed import get_embedder
    from asmr.generate import get_generator
    from asmr.embed.models import question_vectors
    from asmr.graph import EDGE_KINDS, GraphConfig, learn, load_or_build
    from asmr.retrieve import RetrieveConfig
    from asmr.store import Memory, UsageLog
    from asmr.verify import audit

    shutil.rmtree(mem / "audit", ignore_errors=True)
    (mem / "usage.sqlite").unlink(missing_ok=True)
    for extra in ("usage.sqlite-wal", "usage.sqlite-shm"):
        (mem / extra).unlink(missing_ok=True)
    rng = random.Random(args.seed)
    shuffled = sorted(queries, key=lambda q: q.qid)
    rng.shuffle(shuffled)
    half = len(shuffled) // 2
    stream, held = shuffled[:half], shuffled[half:]
    asked = {q.question.strip().casefold() for q in stream}
    held = [q for q in held if q.question.strip().casefold() not in asked]
    stream_docs = {d for q in stream for d in q.gold}
    related = [q for q in held if stream_docs & set(q.gold)]
    other = [q for q in held if not stream_docs & set(q.gold)]
    paraphrased = [replace(q, qid="B" + q.qid) for q in paraphrased
                   if q.question.strip().casefold() not in asked]
    para_related = [q for q in paraphrased if stream_docs & set(q.gold)]
    off = RetrieveConfig(graph=GraphConfig(usage=False))
    on = RetrieveConfig()
    # One question alone makes no edge (usage_min_count 2): also shown with 1, as if it did.
    single = RetrieveConfig(graph=GraphConfig(usage_min_count=1.0))
    out = {"stream_n": len(stream), "held_out_n": len(held), "related_n": len(related)}
    with Memory(mem) as m:
        emb = get_embedder(m.embed_model)
        t = time.perf_counter()
        if args.chains:
            with UsageLog(m.directory, create=True) as log:
                out["learned"] = log.fold(gold_chains(m, stream), {}, GraphConfig().usage_half_life_days * 86400.0)
        else:
            answerer = Answerer(m, get_generator("extractive", embedder=emb), embedder=emb, retrieve_config=off)
            for q in stream:
                ans = answerer.ask(q.question)
                if ans.verification is not None:
                    audit.append(m.directory, ans.verification, question=q.question,
                                 answer=ans.generation.text if ans.generation else None)
            with UsageLog(m.directory, create=True) as log:
                records, offsets = audit.read_new(m.directory, log.offsets())
                out["learned"] = learn(m, log, records, offsets)
        out["stream_s"] = time.perf_counter() - t
        everyone = stream + held + paraphrased
        qvecs = question_vectors(emb, [q.question for q in everyone])
        runs = {label: recall_of(m, emb, everyone, qvecs, cfg)
                for label, cfg in (("off", off), ("on", on), ("on_min1", single))}
        for label, qs in (("held_out", held), ("related", related), ("unrelated", other), ("stream", stream),
                          ("paraphrased", paraphrased), ("para_related", para_related)):
            out[label] = {"n": len(qs), **{k: mean(r[0][q.qid][1] for q in qs) for k, r in runs.items()},
                          **{k + "_r2": mean(r[0][q.qid][0] for q in qs) for k, r in runs.items()}}
        out["held_out_by_category"] = {
            c: {"n": len(qs), **{k: mean(r[0][q.qid][1] for q in qs) for k, r in runs.items()}}
            for c in sorted({q.category or "" for q in held})
            if (qs := [q for q in held if (q.category or "") == c])}
        out["p95_ms"] = {k: r[1] for k, r in runs.items()}
        for label, cfg in (("usage_edges", on), ("usage_edges_min1", single)):
            g = load_or_build(m, cfg.graph)
            out[label] = int((g.kinds == EDGE_KINDS.index("usage")).sum())
    return out


def gold_chains(memory, questions) -> list[tuple[str, float, list[str]]]:
    """(question key, now, unit ids) of the gold chain of each question spanning two or more documents,
    twice (two users): of each gold document, the unit holding most of the question's and the answer's
    terms (their idf weights)."""
    from asmr.retrieve.signals import held, question_terms

    out, now = [], time.time()
    for q in questions:
        if len(q.gold) < 2:
            continue
        terms, weights = question_terms(" ".join([q.question, *q.answers]), memory.inverse_document_frequencies)
        chain = []
        for doc in q.gold:
            units = memory.units_of("eval", doc)
            if units:
                chain.append(max(units, key=lambda u: float(weights[held(terms, u.content)].sum())).id)
        out += [(f"{user}: {q.question}", now, chain) for user in ("one", "two")]
    return out


def beta_grid(args, mems: dict[str, Path], queries: dict) -> dict:
    from asmr.embed import get_embedder
    from asmr.embed.models import question_vectors
    from asmr.graph import GraphConfig
    from asmr.retrieve import RetrieveConfig
    from asmr.store import Memory

    grid: dict[str, dict[float, tuple[float, float]]] = {}
    for name, mem in mems.items():
        grid[name] = {}
        with Memory(mem) as m:
            emb = get_embedder(m.embed_model)
            qs = queries[name]
            qvecs = question_vectors(emb, [q.question for q in qs])
            for beta in args.betas:
                cfg = RetrieveConfig(graph=replace(GraphConfig(usage=False), cooccur_beta=beta))
                per, p95 = recall_of(m, emb, qs, qvecs, cfg)
                grid[name][beta] = (mean(r[1] for r in per.values()), p95, mean(r[0] for r in per.values()))
    return grid


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--workdir", type=Path, default=Path("/tmp/asmr-bench-usage"))
    ap.add_argument("--data", type=Path, default=DATA, help="the shared data folder (HotpotQA sample)")
    ap.add_argument("--embedder", default="all-MiniLM-L6-v2")
    ap.add_argument("--synth-questions", type=int, default=400, help="answerable generated questions used")
    ap.add_argument("--betas", type=lambda s: [float(x) for x in s.split(",")],
                    default=[0.0, 0.25, 0.5, 0.75, 1.0], help="co-occurrence weights tried")
    ap.add_argument("--seed", type=int, default=0, help="the stream / held-out split")
    ap.add_argument("--chains", action="store_true",
                    help="learn the stream's gold chains instead of its answers (an upper bound; see above)")
    ap.add_argument("--no-beta", action="store_true", help="skip the co-occurrence weights")
    ap.add_argument("--json", type=Path, default=None, help="also write the figures here")
    args = ap.parse_args()
    args.workdir.mkdir(parents=True, exist_ok=True)

    from asmr.eval.retrieval import load_queries

    mems, queries = {}, {}
    for name, (corpus, qpath) in sources(args).items():
        t = time.perf_counter()
        mems[name] = memory_of(args, name, corpus)
        qs = [q for q in load_queries(qpath) if q.answerable]
        queries[name] = qs[:args.synth_questions] if name == "synth" else qs
        print(f"{name}: {len(queries[name])} answerable questions, memory ready in "
              f"{time.perf_counter() - t:.0f} s")
    paraphrased = [q for q in load_queries(args.workdir / "synth-b" / "corpus.queries.jsonl") if q.answerable]

    report = {"usage": {}, "beta": {}}
    print("\nUsage edges: Recall@5 (asmr) with learning off (= before learning), with the learned edges (on),"
          "\nand with edges from pairs only one question cited too (on, min 1)")
    print(f"{'source':10} {'questions':12} {'n':>4} {'off':>7} {'on':>7} {'delta':>7} {'on,min1':>8} "
          f"{'delta':>7}")
    for name, mem in mems.items():
        para = paraphrased[:args.synth_questions] if name == "synth" else []
        r = usage_run(args, name, mem, queries[name], para)
        report["usage"][name] = r
        for label in ("held_out", "related", "unrelated", "paraphrased", "para_related", "stream"):
            x = r[label]
            if x["off"] is None:
                continue
            print(f"{name:10} {label:12} {x['n']:>4} {x['off']:7.3f} {x['on']:7.3f} "
                  f"{x['on'] - x['off']:+7.3f} {x['on_min1']:8.3f} {x['on_min1'] - x['off']:+7.3f}   "
                  f"R@2 {x['off_r2']:.3f} {x['on_r2']:.3f} "
                  f"{x['on_min1_r2']:.3f}")
        for c, x in r["held_out_by_category"].items():
            print(f"{name:10} {'  ' + (c or '-'):12} {x['n']:>4} {x['off']:7.3f} {x['on']:7.3f} "
                  f"{x['on'] - x['off']:+7.3f} {x['on_min1']:8.3f} {x['on_min1'] - x['off']:+7.3f}")
        p95 = r["p95_ms"]
        print(f"{'':10} {r['stream_n']} stream answers learned ({r['stream_s']:.0f} s): {r['learned']}; "
              f"{r['usage_edges']} usage edges ({r['usage_edges_min1']} at min 1); recall P95 ms off "
              f"{p95['off']:.1f}, on {p95['on']:.1f}, on min 1 {p95['on_min1']:.1f}")

    if args.no_beta:
        if args.json:
            args.json.write_text(json.dumps(report, indent=2))
        return
    grid = beta_grid(args, mems, queries)
    report["beta"]["grid"] = {n: {str(b): v for b, v in g.items()} for n, g in grid.items()}
    print("\nCo-occurrence weight beta: Recall@5 (asmr, usage off) of all answerable questions "
          "(recall P95 ms)")
    print(f"{'beta':>6} " + " ".join(f"{n:>18}" for n in grid))
    for b in args.betas:
        print(f"{b:6.2f} " + " ".join(f"{grid[n][b][0]:10.3f} ({grid[n][b][1]:5.1f}) R@2 {grid[n][b][2]:.3f}"
                                      for n in grid))
    names = list(grid)
    if len(names) == 2:
        print(f"\n{'fitted on':10} {'beta':>5} {'in-sample R@5':>14} {'reported on':12} "
              f"{'out-of-source R@5':>18} "
              f"{'there at 0':>11}")
        for fit, other in (names, names[::-1]):
            best = max(args.betas, key=lambda b: (grid[fit][b][0], -b))  # ties: the smaller beta
            zero = grid[other][0.0][0] if 0.0 in grid[other] else None
            report["beta"][f"fit_on_{fit}"] = {"beta": best, "in_sample": grid[fit][best][0],
                                               "out_of_source": grid[other][best][0], "other_at_0": zero}
            print(f"{fit:10} {best:5.2f} {grid[fit][best][0]:14.3f} {other:12} {grid[other][best][0]:18.3f} "
                  f"{'-' if zero is None else format(zero, '11.3f')}")
    if args.json:
        args.json.write_text(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
