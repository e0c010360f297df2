"""WordNet 3.0's English synonyms and antonyms, read in any inflected form: one home for the support
check (a synonym put for a word is no swap, an antonym is a flip) and recall's term alignment (a
question's word held by a unit that says it another way).

The tables are ``antonyms_en.json`` and ``synonyms_en.json`` beside this module, written from Debian's
``wordnet-base`` by ``bench/wordnet_antonyms.py`` (with WordNet's licence), so nothing reads WordNet
at run time. A word's base forms are found as WordNet's own lemmatizer finds them: the word, its
irregular base forms, then the word with an ending detached.
"""
from __future__ import annotations

import json
from functools import lru_cache
from importlib import resources

# WordNet's detachment rules: the endings a noun, verb or adjective takes, and what its base form ends in
_DETACHMENTS = (("s", ""), ("ses", "s"), ("xes", "x"), ("zes", "z"), ("ches", "ch"), ("shes", "sh"),
                ("men", "man"), ("ies", "y"), ("es", "e"), ("es", ""), ("ed", "e"), ("ed", ""), ("ing", "e"),
                ("ing", ""), ("er", ""), ("est", ""), ("er", "e"), ("est", "e"))


def _table(name: str) -> dict:
    return json.loads(resources.files(__package__).joinpath(name).read_text(encoding="utf-8"))


@lru_cache(maxsize=1)
def _antonym_table() -> tuple[dict[str, frozenset[str]], dict[str, tuple[str, ...]]]:
    """Word → its antonyms, and irregular forms (form → base forms)."""
    data = _table("antonyms_en.json")
    return ({w: frozenset(a) for w, a in data["antonyms"].items()},
            {f: tuple(b) for f, b in data["forms"].items()})


@lru_cache(maxsize=1)
def _synonym_table() -> tuple[dict[str, frozenset[int]], dict[str, tuple[str, ...]]]:
    """Word → the synsets it is in (those of two or more one-word lemmas), and irregular forms."""
    data = _table("synonyms_en.json")
    senses: dict[str, set[int]] = {}
    for k, words in enumerate(data["synsets"]):
        for w in words:
            senses.setdefault(w, set()).add(k)
    return {w: frozenset(v) for w, v in senses.items()}, {f: tuple(b) for f, b in data["forms"].items()}


def _candidate_bases(word: str, forms: dict[str, tuple[str, ...]]) -> set[str]:
    """What ``word``'s base form may be: the word, its irregular base forms (``forms``), then the word
    with an ending detached."""
    found = {word, *forms.get(word, ())}
    found.update(word[:len(word) - len(end)] + base for end, base in _DETACHMENTS
                 if word.endswith(end) and len(word) - len(end) + len(base) >= 2)
    return found


@lru_cache(maxsize=65536)
def _antonym_bases(word: str) -> frozenset[str]:
    """The base forms of ``word`` that the antonym table holds ("lost" → "lose", "minors" → "minor")."""
    table, forms = _antonym_table()
    return frozenset(b for b in _candidate_bases(word, forms) if b in table)


def has_antonym(word: str) -> bool:
    """Whether WordNet holds an antonym of some sense of ``word`` (lower case)."""
    return bool(_antonym_bases(word))


def opposite(a: str, b: str) -> bool:
    """Whether WordNet holds a sense of ``a`` and one of ``b`` as antonyms (lower-case words)."""
    table = _antonym_table()[0]
    theirs = _antonym_bases(b)
    return bool(theirs) and any(not theirs.isdisjoint(table[x]) for x in _antonym_bases(a))


@lru_cache(maxsize=65536)
def senses(word: str) -> frozenset[int]:
    """The synsets of a lower-case ``word``'s base forms ("kept" → those of "keep"); empty for a word
    WordNet has no synonym of."""
    table, forms = _synonym_table()
    return frozenset().union(*(table[b] for b in _candidate_bases(word, forms) if b in table))


def synonym(a: str, b: str) -> bool:
    """Whether a sense of ``a`` and one of ``b`` are one WordNet synset ("retained" / "kept")."""
    return a != b and not senses(a).isdisjoint(senses(b))
