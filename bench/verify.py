"""Verification latency: an answer with 10 citations against a generated memory (default 1,000,000 units).

    python bench/verify.py                        # 1,000,000 units, 200 answers
    python bench/verify.py --units 100000 --answers 100

The memory holds generated documents of one-paragraph units (two sentences
with numbers, versions and names, so the key-fact check has work to do). Its
stored vectors are random unit vectors handed out under the name of
all-MiniLM-L6-v2: the verifier then hands them to the support model as it
would real MiniLM vectors, and its cost does not depend on their values. The
memory is built once per size in --workdir and reused.

Each answer is 10 sentences, the first sentence of 10 random active units,
each citing its unit; the turn's allowlist holds those 10 ids and 10 others.
Two figures, each over its own answers (units never cited before):

- without embedding: the claims' MiniLM vectors are computed before the
  timer starts, and the unit side is warm (an answer with other wording over
  the same units is verified first, untimed: the embedder's vector cache keeps
  the units' sentence vectors, the verifier the unit records); claim-side work
  (parsing, core claims, key facts, features) is cold. Any embedding call inside
  the timer is counted and reported.
  The support model's ``score`` call is timed inside as well, so the table
  splits the figure into the model's share and the verifier's own.
- with embedding: a fresh support model, MiniLM's vector cache emptied, and the
  real MiniLM embedder: the claims and every candidate sentence of the cited
  units are embedded inside the timer.

Timing: ``time.perf_counter`` around ``Verifier.verify`` (one call per answer). The figure without
embedding is taken in --rounds rounds over the same answers, every claim-side cache forgotten before
each (the core claims and the facts remembered per text; the unit side warmed again by each answer's
untimed twin): a round's 200 calls take under half a second, and a shared host's slow spell can cover
one whole round. Each percentile is the median of the rounds' own, with their range beside it; and, apart,
the percentiles of each answer's fastest round: the code's own cost, the host's slow spells left out.
"""
from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import time
from pathlib import Path

import numpy as np

MODEL = "all-MiniLM-L6-v2"
UNITS_PER_DOC = 50
NOUNS = ("cache queue index shard replica backup token quota region cluster node disk worker gateway "
         "scheduler ledger archive pipeline").split()
VERBS = "rotate inspect drain restart compact rebuild snapshot verify".split()
NAMES = "Atlas Borealis Cobalt Delphi Ember Fjord Gale Helix Ion Juniper".split()


def unit_text(rng: random.Random) -> str:
    a, b, c = rng.sample(NOUNS, 3)
    return (f"The {a} service of project {rng.choice(NAMES)} keeps {rng.randint(2, 64)} replicas in region "
            f"eu-{rng.randint(1, 9)} and rotates its {b} every {rng.randint(1, 90)} days. Operators "
            f"{rng.choice(VERBS)} the {c} before release {rng.randint(1, 9)}.{rng.randint(0, 30)}.")


class RandomVectors:
    """Random unit vectors from a fixed pool, named like the support model's embedder."""

    def __init__(self, dim: int = 384, pool: int = 65536, seed: int = 0):
        rng = np.random.default_rng(seed)
        self.pool = rng.standard_normal((pool, dim), dtype=np.float32)
        self.pool /= np.linalg.norm(self.pool, axis=1, keepdims=True)
        self.dim, self.name, self._next = dim, MODEL, 0

    def embed(self, texts, *, progress=False):
        idx = (np.arange(len(texts)) + self._next) % len(self.pool)
        self._next += len(texts)
        return self.pool[idx]


class Timed:
    """The support model with the time of its ``score`` calls added up (the rest is the verifier's own)."""

    def __init__(self, model):
        self.model, self.seconds = model, 0.0
        self.hard, self.soft, self.embedder = model.hard, model.soft, model.embedder

    def score(self, *args, **kwargs):
        t = time.perf_counter()
        try:
            return self.model.score(*args, **kwargs)
        finally:
            self.seconds += time.perf_counter() - t


class Lookup:
    """MiniLM vectors computed ahead; counts the texts it had to embed on demand."""

    def __init__(self, model):
        self.model, self.name, self.dim = model, model.name, model.dim
        self.vectors: dict[str, np.ndarray] = {}
        self.misses = 0

    def add(self, texts) -> None:
        todo = [t for t in dict.fromkeys(texts) if t not in self.vectors]
        if todo:
            self.vectors.update(zip(todo, self.model.embed(todo)))

    def embed(self, texts, *, progress=False):
        todo = [t for t in texts if t not in self.vectors]
        self.misses += len(todo)
        self.add(todo)
        return np.stack([self.vectors[t] for t in texts]) if texts else np.zeros((0, self.dim), np.float32)


def build(memory: Path, units: int, seed: int) -> float:
    from asmr.store import Writer
    from asmr.units.model import Document

    rng = random.Random(seed)
    docs = (units + UNITS_PER_DOC - 1) // UNITS_PER_DOC

    def documents():
        for d in range(docs):
            n = min(UNITS_PER_DOC, units - d * UNITS_PER_DOC)
            text = "\n\n".join(unit_text(rng) for _ in range(n)) + "\n"
            yield Document(f"doc{d}", text, fmt="text", title=f"Document {d}", source=f"doc{d}.txt")

    t = time.perf_counter()
    # A flat dense index: the verifier reads vectors by row and never searches, so no HNSW build.
    with Writer(memory, embedder=RandomVectors(), flat_max=units + 1, progress=False) as w:
        w.ingest(documents(), kb="bench", total=docs)
    return time.perf_counter() - t


def first_sentence(text: str) -> str:
    return text[:text.index(". ") + 1] if ". " in text else text


def answers(memory, rng: np.random.Generator, count: int, cites: int, used: set[int]):
    """(answer, warm-up answer over the same units, allowlist ids) per answer; units never reused."""
    out = []
    for _ in range(count):
        rows = []
        while len(rows) < 2 * cites:
            r = int(rng.integers(0, memory.num_rows))
            if r not in used:
                used.add(r)
                rows.append(r)
        units = memory.units_at_rows(rows)
        cited, others = units[:cites], units[cites:]
        answer = " ".join(f"{first_sentence(u.content)[:-1]} [cite:{u.id}]." for u in cited)
        warm = " ".join(f"In short, {first_sentence(u.content)[:-1].lower()} [cite:{u.id}]." for u in cited)
        out.append((answer, warm, [u.id for u in cited + others]))
    return out


def pct(xs: list[float], q: float) -> float:
    return float(np.percentile(np.asarray(xs) * 1000, q))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--units", type=int, default=1_000_000, help="units in the generated memory")
    ap.add_argument("--answers", type=int, default=200, help="answers timed for each figure")
    ap.add_argument("--citations", type=int, default=10, help="citations per answer")
    ap.add_argument("--workdir", type=Path, default=Path("/tmp/asmr-bench-verify"))
    ap.add_argument("--seed", type=int, default=5)
    ap.add_argument("--rounds", type=int, default=5, help="rounds of the figure without embedding (default 5)")
    ap.add_argument("--json", action="store_true", help="print one JSON object")
    args = ap.parse_args()
    if args.rounds < 1:
        ap.error(f"--rounds {args.rounds}: need at least one round")
    if args.units < 4 * args.citations * args.answers:
        ap.error(f"--units {args.units}: need at least 4 x citations x answers units (answers use fresh ones)")

    from asmr.embed import get_embedder
    from asmr.embed.cache import shared_cache
    from asmr.store import Memory
    from asmr.verify.allowlist import Allowlist
    from asmr.verify.citations import parse_answer
    from asmr.text.facts import clear_caches as clear_fact_caches
    from asmr.verify.claims import clear_core_claims, core_claim
    from asmr.verify.support_model import SupportModel
    from asmr.verify.verifier import Verifier

    memory_dir = args.workdir / f"memory-{args.units}-{args.seed}"
    build_s = None
    if not (memory_dir / "memory.sqlite").exists():
        shutil.rmtree(memory_dir, ignore_errors=True)
        build_s = build(memory_dir, args.units, args.seed)
        print(f"# built {args.units:,} units in {build_s:.0f} s", flush=True)
    minilm = get_embedder(MODEL)
    rng = np.random.default_rng(args.seed)
    with Memory(memory_dir, load_indexes=False) as m:
        used: set[int] = set()
        warm_set = answers(m, rng, args.answers, args.citations, used)
        cold_set = answers(m, rng, args.answers, args.citations, used)

        # Without embedding: claim vectors ahead, the cited units' sentence vectors warm.
        lookup = Lookup(minilm)
        support = Timed(SupportModel.load())
        verifier = Verifier(m, support=support, embedder=lookup)
        lookup.add([core_claim(s.text) for a, _, _ in warm_set for s in parse_answer(a).sentences])
        rounds = []  # (times, in_support) of each round
        outcomes = {"keep": 0, "weaken": 0, "drop": 0, "uncited": 0}
        misses = 0
        for r in range(args.rounds):
            clear_core_claims()  # the claims' vectors are ready; their cores and facts must still be cold
            clear_fact_caches()
            times, in_support = [], []
            for answer, warm, ids in warm_set:
                allow = Allowlist(1, {uid: 1.0 - k / 100 for k, uid in enumerate(ids)})
                verifier.verify(warm, allow)
                before, support.seconds = lookup.misses, 0.0
                t = time.perf_counter()
                v = verifier.verify(answer, allow)
                times.append(time.perf_counter() - t)
                in_support.append(support.seconds)
                misses += lookup.misses - before
                if r == 0:
                    for k in outcomes:
                        outcomes[k] += v.counts[k]
            rounds.append((times, in_support))

        # With embedding: nothing embedded before (MiniLM's vector cache emptied), MiniLM inside the timer.
        cold = []
        for answer, _, ids in cold_set:
            allow = Allowlist(1, {uid: 1.0 - k / 100 for k, uid in enumerate(ids)})
            shared_cache(minilm).clear()
            v = Verifier(m, support=SupportModel.load(), embedder=minilm)
            t = time.perf_counter()
            v.verify(answer, allow)
            cold.append(time.perf_counter() - t)
        rows = m.num_rows

    def over_rounds(per_round: list[list[float]]) -> dict:
        """P50 and P95 as the median of the rounds' own, with each one's range over the rounds."""
        out = {}
        for name, q in (("p50", 50), ("p95", 95)):
            each = [pct(xs, q) for xs in per_round]
            out[name] = float(np.median(each))
            out[f"{name}_range"] = [min(each), max(each)]
        return out

    report = {"units": rows, "answers": args.answers, "citations": args.citations, "cores": os.cpu_count(),
              "rounds": args.rounds, "build_s": build_s, "embedding_calls_in_timer": misses,
              "outcomes": outcomes,
              "without_embedding_ms": over_rounds([t for t, _ in rounds]),
              "support_model_ms": over_rounds([s for _, s in rounds]),
              "verifier_own_ms": over_rounds([[a - b for a, b in zip(t, s)] for t, s in rounds]),
              "with_embedding_ms": {"p50": pct(cold, 50), "p95": pct(cold, 95)}}
    # Each answer at its fastest round: what the code costs with a shared host's slow spells left out
    # (they move one round's percentiles by more than the code's own spread), for comparing code.
    fastest = np.min([t for t, _ in rounds], axis=0).tolist()
    report["without_embedding_fastest_ms"] = {"p50": pct(fastest, 50), "p95": pct(fastest, 95)}
    if args.json:
        print(json.dumps(report, indent=2))
        return
    print(f"\n## Verify latency ({rows:,} units, {args.answers} answers of {args.citations} citations each, "
          f"{os.cpu_count()} cores; without embedding: the median of {args.rounds} rounds [their range])\n")
    print("| measure | P50 ms | P95 ms | goal |\n|---|---:|---:|---|")
    w, c = report["without_embedding_ms"], report["with_embedding_ms"]
    s, o = report["support_model_ms"], report["verifier_own_ms"]

    def cell(d: dict, q: str) -> str:
        lo, hi = d[f"{q}_range"]
        return f"{d[q]:.2f} [{lo:.2f}–{hi:.2f}]"

    print(f"| verify, without embedding | {cell(w, 'p50')} | {cell(w, 'p95')} | P95 ≤ 2: "
          f"{'met' if w['p95'] <= 2 else '**missed**'} |")
    print(f"| of which the support model's score call | {cell(s, 'p50')} | {cell(s, 'p95')} | |")
    print(f"| of which the rest (parse, store, kernel, facts, render) | {cell(o, 'p50')} | {cell(o, 'p95')} | |")
    f = report["without_embedding_fastest_ms"]
    print(f"| verify, without embedding, each answer at its fastest of the rounds | {f['p50']:.2f} | "
          f"{f['p95']:.2f} | (the code's own cost) |")
    print(f"| verify, with embedding (claims + cited units' sentences, MiniLM), one round | {c['p50']:.2f} | "
          f"{c['p95']:.2f} | |")
    print(f"\nembedding calls inside the timer without embedding: {misses}; sentence outcomes "
          + ", ".join(f"{k} {n}" for k, n in outcomes.items()))


if __name__ == "__main__":
    main()
