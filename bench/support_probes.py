"""Hand-written claims against the units they cite, and how many the verifier's support rule decides wrongly.

    python bench/support_probes.py [--data bench/data/support_probes.jsonl] [--rounds p1 p2] [--json]

Each line of the data is one claim: ``round``, ``claim``, ``unit`` (the cited unit's text) and
``supported`` (whether the unit states the claim), and optionally ``kind`` (paraphrase, negation, number, …:
the figures then give how many of each kind are kept). The claims are the kind an answer generator writes:
true ones in other words, and lies a reader would believe (a value of another sentence, "always" for
"may", "all" of a narrowed group, a word put for another). The rule is that of ``asmr eval verifier``:
a citation is kept when the support model's probability reaches ``hard`` and no checked key fact of the
claim is missing from the unit. With the shipped model: MiniLM, and multilingual-e5-small for the pairs
MiniLM cannot read.

Most rounds are in sample: their authors read the wrong decisions while making the rules they measure
(bench/README.md, "Values put in another sentence's place", says when each was written and read). Rounds
``n1`` to ``n10`` (English) and ``nz1`` to ``nz13`` (Chinese) were written by helpers who saw no code or data
of the project (bench/README.md, "Claims written apart"): ``n1`` and ``nz1`` were read for rules;
``nz1`` to ``nz11`` are what the support model's part for Chinese is fitted on
(``bench/calibrate_unread_support.py``), and ``nz12`` and ``nz13``, never read, what it is checked on;
``n4`` to ``n6``, written beside them, await an English fit;
``n2``, ``nz2``, ``n3``, ``nz3``, ``n7``, ``n8``, ``nz8`` and ``nz9`` were never read; ``n9``, ``n10``,
``nz10`` and ``nz11``, written later in other domains, were scored as totals only while rules were made
(their claims were shown once afterwards). They show what a rule or a fit fixes and what it breaks on
claims it was not made from; the out-of-source checks are
``bench/support_claims.py``, AttributionBench dev (``asmr eval verifier``) and ``asmr eval answers``.
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from asmr.verify.claims import core_claim
from asmr.verify.support_model import SupportModel
from asmr.verify.verifier import VerifierConfig

DEFAULT_DATA = Path(__file__).resolve().parent / "data" / "support_probes.jsonl"


def load(path: Path) -> list[dict]:
    rows = []
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        row = json.loads(line)
        missing = {"round", "claim", "unit", "supported"} - set(row)
        if missing:
            raise ValueError(f"{path}:{n}: missing {', '.join(sorted(missing))}")
        rows.append(row)
    return rows


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", type=Path, default=DEFAULT_DATA, help="JSON lines of claims (default: %(default)s)")
    ap.add_argument("--rounds", nargs="+", default=None, help="only these rounds (default: all)")
    ap.add_argument("--json", action="store_true", help="print the figures as JSON")
    ap.add_argument("--totals", action="store_true",
                    help="the figures only, no claim: for rounds kept out of every rule, whose claims stay unread")
    args = ap.parse_args(argv)
    try:
        rows = load(args.data)
    except (OSError, ValueError) as e:
        print(f"support_probes: {e}", file=sys.stderr)
        return 2
    if args.rounds:
        rows = [r for r in rows if r["round"] in set(args.rounds)]
    if not rows:
        print("support_probes: no claims in the rounds asked for", file=sys.stderr)
        return 2
    model = SupportModel.load()
    rule = VerifierConfig.from_support(model)
    p = model.score([r["claim"] for r in rows], [r["unit"] for r in rows])
    report: dict[str, dict] = {}
    for row, prob in zip(rows, p):
        kept = bool(prob >= model.hard) and not rule.missing(core_claim(row["claim"]), row["unit"])
        entry = report.setdefault(row["round"], {"n": 0, "wrong": 0, "wrong_claims": []})
        entry["n"] += 1
        if "kind" in row:  # rounds written with a kind per claim: kept by kind
            tally = entry.setdefault("by_kind", {}).setdefault(row["kind"], {"n": 0, "kept": 0})
            tally["n"] += 1
            tally["kept"] += kept
        if kept != row["supported"]:
            entry["wrong"] += 1
            entry["wrong_claims"].append({"claim": row["claim"], "supported": row["supported"],
                                          "probability": round(float(prob), 3)})
    if args.totals:
        for entry in report.values():
            del entry["wrong_claims"]
    if args.json:
        print(json.dumps(report, ensure_ascii=False, indent=1))
        return 0
    for name, entry in report.items():
        print(f"{name}: {entry['wrong']} of {entry['n']} decided wrongly")
        if "by_kind" in entry:
            kinds = sorted(entry["by_kind"].items())
            print("  kept by kind: " + ", ".join(f"{k} {t['kept']}/{t['n']}" for k, t in kinds))
        for w in entry.get("wrong_claims", ()):
            print(f"  {'true, dropped' if w['supported'] else 'lie, kept'} (p {w['probability']}): {w['claim']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
