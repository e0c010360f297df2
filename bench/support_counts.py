"""Counts and times of day in Chinese numerals: does the support check catch one changed?

    python bench/support_counts.py --claims DIR [--sources cmrc handbook-zh zh-library zh-property]
                                   [--kind count|time]

Reads the units of the claim files that ``bench/support_claims.py --out DIR`` wrote (their
``evidence``). In every sentence of those units, each count in Chinese numerals (2 or more) before
the measure word of what it counts ("十本", "十二人") makes two claims cited to the unit: the sentence
with the count changed to another value in Chinese numerals (contradicted) and with it written in
digits (supported, "10本"). Printed: how many of each the verifier's support rule keeps (the shipped
model: probability at least ``hard`` and no checked key fact missing). The pattern and its measure
words are this script's own, written apart from the checker's (``asmr.text.cjk.CJK_COUNTED``).

``--kind time``: each hour of a time of day in Chinese numerals ("上午十点", "八点半") makes the
sentence with another hour (contradicted) and with the hour in digits ("10点", supported) instead.
"""
from __future__ import annotations

import argparse
import json
import random
import re
import sys
from collections import Counter
from pathlib import Path

import cn2an

from asmr.eval.contradictions import Claim
from asmr.eval.verification import kept_by_rule
from asmr.text.sentences import split_sentences
from asmr.verify.claims import core_claim
from asmr.verify.support_model import SupportModel
from asmr.verify.verifier import VerifierConfig

COUNT = re.compile("(?<![第这那哪每])([〇零一二两三四五六七八九十百千万]+)([本张台个人名位件间份套辆条把页册篇部家座层])")


def _matches(units: list[str], pattern: re.Pattern):
    """(unit, sentence, match) for every match of ``pattern`` in every sentence of ``units``."""
    for unit in units:
        for sentence in split_sentences(unit):
            for m in pattern.finditer(sentence):
                yield unit, sentence, m


def count_claims(units: list[str], rng: random.Random) -> list[Claim]:
    out = []
    for unit, sentence, m in _matches(units, COUNT):
        try:
            value = int(cn2an.cn2an(m.group(1), "smart"))
        except (ValueError, KeyError, IndexError):
            continue
        if value <= 1 or (m.group(2) == "个" and sentence[m.end():m.end() + 1] == "月"):
            continue  # "一本" is "a book"; "三个月" is a span of time
        other = value + rng.choice([1, 2, 5, 10]) if rng.random() < 0.5 else max(2, value * 2)
        head, tail = sentence[:m.start()], sentence[m.end():]
        out.append(Claim(head + cn2an.an2cn(str(other)) + m.group(2) + tail, unit, "", "count", "contradicted", "zh"))
        out.append(Claim(head + str(value) + m.group(2) + tail, unit, "", "count", "supported", "zh"))
    return out


# an hour before 点 that no numeral follows (that 点 is a decimal point: "三点五"); not 一点 ("a little")
HOUR = re.compile("(?<![第这那哪每有])([两二三四五六七八九十]|十[一二]|一(?=点[半钟]))点(?![〇零一二两三四五六七八九十])")


def time_claims(units: list[str], rng: random.Random) -> list[Claim]:
    out = []
    for unit, sentence, m in _matches(units, HOUR):
        value = int(cn2an.cn2an(m.group(1), "smart"))
        other = rng.choice([h for h in range(1, 13) if h != value])
        head, tail = sentence[:m.start()], sentence[m.end():]
        out.append(Claim(head + cn2an.an2cn(str(other)) + "点" + tail, unit, "", "time", "contradicted", "zh"))
        out.append(Claim(head + str(value) + "点" + tail, unit, "", "time", "supported", "zh"))
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--claims", type=Path, required=True, help="the --out folder of bench/support_claims.py")
    ap.add_argument("--sources", nargs="+", default=["cmrc", "handbook-zh", "zh-library", "zh-property"])
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--kind", choices=("count", "time"), default="count",
                    help="change counts before a measure word (default) or the hours of times of day")
    args = ap.parse_args(argv)
    rng = random.Random(args.seed)
    support = SupportModel.load()
    config = VerifierConfig.from_support(support)
    for source in args.sources:
        path = args.claims / f"{source}.jsonl"
        if not path.is_file():
            print(f"support_counts: {path}: no such claim file (run bench/support_claims.py --out {args.claims})",
                  file=sys.stderr)
            return 2
    print(f"{'source':14}{'contradicted kept':>20}{'supported kept':>18}")
    for source in args.sources:
        path = args.claims / f"{source}.jsonl"
        units = sorted({json.loads(line)["evidence"] for line in path.open(encoding="utf-8") if line.strip()})
        claims = (time_claims if args.kind == "time" else count_claims)(units, rng)
        prob = support.score([core_claim(c.text) for c in claims], [c.evidence for c in claims])
        n, kept = Counter(), Counter()
        for c, k in zip(claims, kept_by_rule(claims, prob, config)):
            n[c.label] += 1
            kept[c.label] += k
        print(f"{source:14}{kept['contradicted']:>12} / {n['contradicted']:<5}{kept['supported']:>10} / {n['supported']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
