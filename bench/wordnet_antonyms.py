"""Write the supports check's English antonym table from the WordNet 3.0 database.

    apt-get download wordnet-base && dpkg -x wordnet-base_*.deb wn    # Debian's WordNet 3.0 files
    python bench/wordnet_antonyms.py --wordnet wn/usr/share/wordnet

WordNet marks antonymy between word senses (the ``!`` pointer of ``data.adj``, ``data.adv``,
``data.noun`` and ``data.verb``: "increase"/"decrease", "minor"/"major", "online"/"offline"). The table
keeps the pairs of one-word lemmas, both ways, and the irregular forms of the ``*.exc`` files whose
base form is in it ("worse" → "bad", "lost" → "lose"), so the check can read inflected words without
WordNet at run time. It is written to ``python/asmr/text/antonyms_en.json`` (committed: the package
needs no WordNet installed), with WordNet's licence notice, which allows copying with the notice kept.

It also writes ``python/asmr/text/synonyms_en.json``: WordNet's synsets (the words of one sense,
"keep"/"retain", "begin"/"start") that hold two or more one-word lemmas, and the irregular forms of
their words, so that a claim that puts a synonym for its source's word is not read as one thing put
for another.
"""
from __future__ import annotations

import argparse
import json
from pathlib import Path

OUT = Path(__file__).resolve().parent.parent / "python" / "asmr" / "text" / "antonyms_en.json"
SYNONYMS_OUT = OUT.with_name("synonyms_en.json")
POS = ("adj", "adv", "noun", "verb")



def _lemma(word: str) -> str:
    """A data file's word as text: adjective position markers off ("galore(ip)"), lower case."""
    return word.split("(")[0].lower()


def licence(folder: Path) -> str:
    """WordNet's licence, word for word, as the header of its data files gives it."""
    lines = []
    for line in (folder / "data.adj").open(encoding="latin-1"):
        if not line.startswith("  "):
            break
        lines.append(line.strip().split(" ", 1)[1].rstrip() if " " in line.strip() else "")
    return "\n".join(lines).strip()


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


Sense = tuple[str, str, int]  # a word in one of its senses: part of speech, synset offset, place in the synset


def lexical_links(folder: Path, symbol: str) -> set[tuple[Sense, Sense]]:
    """Every pair of word senses that WordNet's word-to-word pointer ``symbol`` links (``!`` antonym,
    ``+`` derivationally related form), both ways."""
    letter = {"a": "adj", "s": "adj", "r": "adv", "n": "noun", "v": "verb"}
    pairs = set()
    for pos in POS:
        for line in (folder / f"data.{pos}").open(encoding="latin-1"):
            if line.startswith("  "):
                continue
            f = line.split("|")[0].split()
            at = 4 + 2 * int(f[3], 16)
            for k in range(int(f[at])):
                sym, offset, p, st = f[at + 1 + 4 * k: at + 5 + 4 * k]
                source, target = int(st[:2], 16), int(st[2:], 16)
                if sym == symbol and source and target:
                    a, b = (pos, f[0], source), (letter[p], offset, target)
                    pairs.update({(a, b), (b, a)})
    return pairs


def antonym_pairs(folder: Path) -> set[tuple[str, str]]:
    """WordNet's antonyms between one-word lemmas, and the forms derived from them, sense by sense: a
    word derivationally related to the sense of one side of a pair ("death" to "die") is opposite to
    each word related to the sense of the other ("birth"); another sense of the same word is not
    ("presentation" is no opposite of "absent")."""
    synsets = {pos: read_synsets(folder / f"data.{pos}") for pos in POS}

    def word(sense: Sense) -> str | None:
        # an antonym that is the copula and one word is that word: "be_born", the antonym of "die", is
        # "born" (four lemmas; synonyms keep one-word lemmas only, "be_after" is no "after")
        return _word(synsets[sense[0]][sense[1]][sense[2] - 1].removeprefix("be_"))
    related: dict[Sense, set[Sense]] = {}
    for a, b in lexical_links(folder, "+"):
        related.setdefault(a, {a}).add(b)
    pairs = set()
    for a, b in lexical_links(folder, "!"):
        for x in related.get(a, {a}):
            for y in related.get(b, {b}):
                wx, wy = word(x), word(y)
                if wx and wy and wx != wy:
                    pairs.add((wx, wy))
    return pairs


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--wordnet", type=Path, required=True, help="folder of WordNet 3.0's data.* and *.exc files")
    ap.add_argument("--out", type=Path, default=OUT)
    ap.add_argument("--synonyms-out", type=Path, default=SYNONYMS_OUT)
    args = ap.parse_args()
    if not (args.wordnet / "data.adj").is_file():
        raise SystemExit(f"--wordnet {args.wordnet}: no data.adj there (the folder of WordNet's database files)")
    pairs = antonym_pairs(args.wordnet)
    table: dict[str, list[str]] = {}
    for a, b in sorted(pairs):
        table.setdefault(a, []).append(b)
    forms = irregular_forms(args.wordnet, set(table))
    head = {"source": "WordNet 3.0 (Debian wordnet-base 1:3.0): antonym pointers between one-word lemmas, and "
                      "the words derived from them; written by bench/wordnet_antonyms.py",
            "licence": licence(args.wordnet)}
    # one line per word, so that a change to the table reads as a change to its words
    lines = [json.dumps(head, ensure_ascii=False)[:-1] + ","]
    for name, entries in (("antonyms", table), ("forms", dict(sorted(forms.items())))):
        body = ",\n".join(f"  {json.dumps(w)}: {json.dumps(v)}" for w, v in entries.items())
        lines.append(f'"{name}": {{\n{body}\n}}' + ("," if name == "antonyms" else ""))
    args.out.write_text("\n".join(lines) + "}\n", encoding="utf-8")
    print(f"{len(pairs) // 2} pairs over {len(table)} words, {len(forms)} irregular forms -> {args.out}")

    groups = synonym_sets(args.wordnet)
    words = {w for g in groups for w in g}
    forms = irregular_forms(args.wordnet, words)
    head = {"source": "WordNet 3.0 (Debian wordnet-base 1:3.0): synsets of two or more one-word lemmas; "
                      "written by bench/wordnet_antonyms.py",
            "licence": licence(args.wordnet)}
    body = ",\n".join(f"  {json.dumps(g)}" for g in groups)
    form_body = ",\n".join(f"  {json.dumps(w)}: {json.dumps(v)}" for w, v in sorted(forms.items()))
    args.synonyms_out.write_text(json.dumps(head, ensure_ascii=False)[:-1] + f',\n"synsets": [\n{body}\n],\n'
                                 f'"forms": {{\n{form_body}\n}}}}\n', encoding="utf-8")
    print(f"{len(groups)} synsets over {len(words)} words, {len(forms)} irregular forms -> {args.synonyms_out}")


def irregular_forms(folder: Path, words: set[str]) -> dict[str, list[str]]:
    """The irregular forms (``*.exc``) whose base form is one of ``words``: form → base forms."""
    forms: dict[str, list[str]] = {}
    for pos in POS:
        for line in (folder / f"{pos}.exc").open(encoding="latin-1"):
            form, *bases = line.split()
            for base in bases:
                if base in words and form != base and form.isalpha() and base not in forms.get(form, []):
                    forms.setdefault(form, []).append(base)
    return forms


def synonym_sets(folder: Path) -> list[list[str]]:
    """Every synset's one-word lemmas, where it has two or more, sorted and without repeats."""
    groups = set()
    for pos in POS:
        for lemmas in read_synsets(folder / f"data.{pos}").values():
            words = sorted({w for w in map(_word, lemmas) if w})
            if len(words) >= 2:
                groups.add(tuple(words))
    return [list(g) for g in sorted(groups)]


if __name__ == "__main__":
    main()
