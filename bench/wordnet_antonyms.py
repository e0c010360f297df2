"""Write the supports check's English antonym table from the WordNet 3.0 database.

    apt-get download wordnet-base && dpkg -x wordnet-base_*.deb wn    # Debian's WordNet 3.0 files
    python bench/wordnet_antonyms.py --wordnet wn/usr/share/wordnet

WordNet marks antonymy between word senses (the ``!`` pointer of ``data.adj``, ``data.adv``,
``data.noun`` and ``data.verb``: "increase"/"decrease", "minor"/"major", "online"/"offline"). The table
keeps the pairs of one-word lemmas, both ways, and the irregular forms of the ``*.exc`` files whose
base form is in it ("worse" → "bad", "lost" → "lose"), so the check can read inflected words without
WordNet at run time. It is written to ``python/asmr/verify/antonyms_en.json`` (committed: the package
needs no WordNet installed), with WordNet's licence notice, which allows copying with the notice kept.
"""
from __future__ import annotations

import argparse
import json
from pathlib import Path

OUT = Path(__file__).resolve().parent.parent / "python" / "asmr" / "verify" / "antonyms_en.json"
POS = ("adj", "adv", "noun", "verb")
NOTICE = ("WordNet Release 3.0. Copyright 2006 by Princeton University. All rights reserved. "
          "Permission to use, copy, modify and distribute this software and database and its "
          "documentation for any purpose and without fee or royalty is hereby granted, provided that "
          "you agree to comply with the following copyright notice and statements, including the "
          "disclaimer, and that the same appear on ALL copies of the software, database and "
          "documentation, including modifications that you make for internal use or for distribution. "
          "THIS SOFTWARE AND DATABASE IS PROVIDED \"AS IS\" AND PRINCETON UNIVERSITY MAKES NO "
          "REPRESENTATIONS OR WARRANTIES, EXPRESS OR IMPLIED. The name of Princeton University or "
          "Princeton may not be used in advertising or publicity pertaining to distribution of the "
          "software and/or database. Title to copyright in this software, database and any associated "
          "documentation shall at all times remain with Princeton University and LICENSEE agrees to "
          "preserve same.")


def _lemma(word: str) -> str:
    """A data file's word as text: adjective position markers off ("galore(ip)"), lower case."""
    return word.split("(")[0].lower()


def read_synsets(path: Path) -> dict[str, list[str]]:
    """Offset → the synset's words, in order."""
    out = {}
    for line in path.open(encoding="latin-1"):
        if line.startswith("  "):  # the licence header
            continue
        f = line.split()
        n = int(f[3], 16)
        out[f[0]] = [_lemma(f[4 + 2 * i]) for i in range(n)]
    return out


def _word(lemma: str) -> str | None:
    """A lemma as one word, or None for a phrase: WordNet hyphenates compounds now written as one
    ("on-line"), so the hyphen goes."""
    word = lemma.replace("-", "")
    return word if word.isalpha() else None


def lexical_links(folder: Path, symbol: str) -> set[tuple[str, str]]:
    """Every (word, word) pair that WordNet's word-to-word pointer ``symbol`` links (``!`` antonym,
    ``+`` derivationally related form), between one-word lemmas, both ways."""
    letter = {"a": "adj", "s": "adj", "r": "adv", "n": "noun", "v": "verb"}
    synsets = {pos: read_synsets(folder / f"data.{pos}") for pos in POS}
    pairs = set()
    for pos in POS:
        for line in (folder / f"data.{pos}").open(encoding="latin-1"):
            if line.startswith("  "):
                continue
            f = line.split("|")[0].split()
            n = int(f[3], 16)
            at = 4 + 2 * n
            for k in range(int(f[at])):
                sym, offset, p, st = f[at + 1 + 4 * k: at + 5 + 4 * k]
                source, target = int(st[:2], 16), int(st[2:], 16)
                if sym != symbol or not (source and target):
                    continue
                a = _word(synsets[pos][f[0]][source - 1])
                b = _word(synsets[letter[p]][offset][target - 1])
                if a and b and a != b:
                    pairs.update({(a, b), (b, a)})
    return pairs


def antonym_pairs(folder: Path) -> set[tuple[str, str]]:
    """WordNet's antonyms, and the forms derived from them: a word derivationally related to one side
    of a pair ("die" to "death") is opposite to each word related to the other ("birth", "bear")."""
    antonyms = lexical_links(folder, "!")
    related: dict[str, set[str]] = {}
    for a, b in lexical_links(folder, "+"):
        related.setdefault(a, {a}).add(b)
    pairs = set()
    for a, b in antonyms:
        pairs.update((x, y) for x in related.get(a, {a}) for y in related.get(b, {b}) if x != y)
    return pairs


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--wordnet", type=Path, required=True, help="folder of WordNet 3.0's data.* and *.exc files")
    ap.add_argument("--out", type=Path, default=OUT)
    args = ap.parse_args()
    if not (args.wordnet / "data.adj").is_file():
        raise SystemExit(f"--wordnet {args.wordnet}: no data.adj there (the folder of WordNet's database files)")
    pairs = antonym_pairs(args.wordnet)
    table: dict[str, list[str]] = {}
    for a, b in sorted(pairs):
        table.setdefault(a, []).append(b)
    forms: dict[str, list[str]] = {}
    for pos in POS:
        for line in (args.wordnet / f"{pos}.exc").open(encoding="latin-1"):
            form, *bases = line.split()
            for base in bases:
                if base in table and form != base and form.isalpha() and base not in forms.get(form, []):
                    forms.setdefault(form, []).append(base)
    args.out.write_text(json.dumps({"source": "WordNet 3.0 (Debian wordnet-base 1:3.0), antonym pointers "
                                              "between one-word lemmas; bench/wordnet_antonyms.py",
                                    "notice": NOTICE, "antonyms": table, "forms": dict(sorted(forms.items()))},
                                   ensure_ascii=False, indent=0, sort_keys=False) + "\n")
    print(f"{len(pairs) // 2} pairs over {len(table)} words, {len(forms)} irregular forms -> {args.out}")


if __name__ == "__main__":
    main()
