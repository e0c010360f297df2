"""Generated claims from the shared data, the generated knowledge base and the example handbooks, and how many
of each kind the verifier's support rule keeps.

    python bench/support_claims.py --out /tmp/claims [--model python/asmr/verify/support_model.json] [--json]

Sources (units as a memory holds them; claims by ``asmr.eval.contradictions``, seed 0):

- ``hotpotqa``: the passages of ../shared/data/hotpotqa_train.corpus.jsonl (English Wikipedia);
- ``cmrc``: the paragraphs of ../shared/data/cmrc2018_trial.corpus.jsonl (Chinese Wikipedia);
- ``handbook``: the example handbook and its revision (examples/), the units of its memory;
- ``handbook-zh``: the Chinese handbook and its revision (examples/zh), the same way;
- ``synth-a`` / ``synth-b``: the generated knowledge base, family A seed 0 and family B seed 1, the
  units of a memory of its current documents;
- ``clinic``, ``bakery``, ``zh-library``, ``zh-property``, and since 2026-12-07 ``hotel``, ``pool``,
  ``vet``, ``school``, ``courier``, ``theatre``, ``zh-gym``, ``zh-restaurant``: the twelve handbooks
  written apart from the code (examples/<name>), as ``handbook-zh``; no model was fitted on them.

Claims are written to OUT/SOURCE.jsonl (reused when present; ``--fresh`` rebuilds them) so that
``bench/calibrate_support.py --claims`` fits on some sources and reports on the others. The report
is the rule of ``asmr eval verifier``: kept when the model's probability reaches ``hard`` and no
checked key fact is missing.
"""
from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

from asmr.eval.contradictions import Claim, generate, units_of_memory
from asmr.eval.verification import build_example_memory, contradictions
from asmr.verify.support_model import SupportModel
from asmr.verify.verifier import VerifierConfig

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT.parent / "shared" / "data"
# examples/ handbooks written apart from the code
APART = ("clinic", "bakery", "zh-library", "zh-property", "hotel", "pool", "vet", "school", "courier",
         "theatre", "zh-gym", "zh-restaurant")
SOURCES = ("hotpotqa", "cmrc", "handbook", "handbook-zh", "synth-a", "synth-b", *APART)
PER_KIND = 300


def _corpus_units(path: Path) -> list[tuple[str, str]]:
    return [(r["pid"], r["text"]) for r in map(json.loads, path.open(encoding="utf-8")) if r.get("text")]


def _memory_units(directory: Path) -> list[tuple[str, str]]:
    from asmr.store import Memory
    with Memory(directory, load_indexes=False) as m:
        return units_of_memory(m)


def _synth_units(tmp: Path, family: str, seed: int) -> list[tuple[str, str]]:
    from asmr.eval.synth import generate as synth
    from asmr.store import Writer
    from asmr.units.read import read_path

    out = tmp / f"kb-{family}"
    synth(out, seed=seed, family=family, units_target=1500, questions=50)
    root = out / "docs" / "v1"
    with Writer(tmp / f"mem-{family}", embedder="hash-256", progress=False) as w:
        w.ingest([read_path(p, root=root) for p in sorted(root.rglob("*")) if p.is_file()], kb="kb")
    return _memory_units(tmp / f"mem-{family}")


def _handbook_units(tmp: Path, folder: str, name: str) -> list[tuple[str, str]]:
    """The units of a memory of ``examples/<folder>/handbook`` and then its revision, as a user
    ingests them."""
    from asmr.store import Writer
    from asmr.units.read import FORMAT_BY_SUFFIX, read_path

    for version in ("handbook", "handbook-v2"):  # a page, then its revision
        root = ROOT / "examples" / folder / version
        with Writer(tmp / name, embedder="hash-256", progress=False) as w:
            w.ingest([read_path(p, root=root) for p in sorted(root.rglob("*"))
                      if p.is_file() and p.suffix.lower() in FORMAT_BY_SUFFIX], kb="handbook")
    return _memory_units(tmp / name)


def units_of(source: str, tmp: Path) -> list[tuple[str, str]]:
    if source == "hotpotqa":
        return _corpus_units(DATA / "hotpotqa_train.corpus.jsonl")
    if source == "cmrc":
        return _corpus_units(DATA / "cmrc2018_trial.corpus.jsonl")
    if source == "handbook":
        return _memory_units(build_example_memory(tmp / "handbook", "hash-256"))
    if source == "handbook-zh":
        return _handbook_units(tmp, "zh", source)
    if source in APART:
        return _handbook_units(tmp, source, source)
    if source == "synth-a":
        return _synth_units(tmp, "A", 0)
    return _synth_units(tmp, "B", 1)


def load_claims(path: Path) -> list[Claim]:
    return [Claim(**json.loads(line)) for line in path.open(encoding="utf-8") if line.strip()]


def build(out: Path, sources=SOURCES, fresh: bool = False) -> dict[str, list[Claim]]:
    out.mkdir(parents=True, exist_ok=True)
    claims = {}
    with tempfile.TemporaryDirectory(prefix="asmr-claims-") as tmp:
        for source in sources:
            path = out / f"{source}.jsonl"
            if fresh or not path.exists():
                made = generate(units_of(source, Path(tmp)), seed=0, per_kind=PER_KIND)
                path.write_text("".join(json.dumps(c.to_dict(), ensure_ascii=False) + "\n" for c in made),
                                encoding="utf-8")
            claims[source] = load_claims(path)
    return claims


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", type=Path, required=True, help="folder for the claim files")
    ap.add_argument("--model", type=Path, default=None, help="support model JSON (default: the shipped one)")
    ap.add_argument("--sources", nargs="+", choices=SOURCES, default=list(SOURCES))
    ap.add_argument("--fresh", action="store_true", help="regenerate the claim files")
    ap.add_argument("--cache", type=Path, default=Path.home() / ".cache" / "asmr" / "support_vectors.npz",
                    help="sentence-vector cache shared with calibrate_support.py (outside the repository)")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    claims = build(args.out, args.sources, args.fresh)
    support = SupportModel.load(args.model)
    config = VerifierConfig.from_support(support)
    from asmr.embed.models import get_embedder
    from calibrate_support import CachedEmbedder
    emb = CachedEmbedder(get_embedder(support.embedder), args.cache)
    report = {source: contradictions(c, support, config, embedder=emb) for source, c in claims.items()}
    emb.save()
    if args.json:
        print(json.dumps(report, indent=1))
        return 0
    kinds = sorted({k for r in report.values() for k in (*r["by_kind"], *r["unsupported"]["by_kind"],
                                                          *r["supported_by_kind"])})
    print("kept / n by kind (contradicted and unsupported: lower is better; supported: higher)")
    print(f"{'kind':14}" + "".join(f"{s:>14}" for s in report))
    for kind in kinds:
        cells = []
        for r in report.values():
            t = r["by_kind"].get(kind) or r["unsupported"]["by_kind"].get(kind) or r["supported_by_kind"].get(kind)
            cells.append(f"{t['kept']}/{t['n']}" if t else "-")
        print(f"{kind:14}" + "".join(f"{c:>14}" for c in cells))
    return 0


if __name__ == "__main__":
    sys.exit(main())
