"""Which writing system each word of a text belongs to, and how much of a text an embedding model
can read.

An embedding model reads the scripts it was trained on; a text in another script still gets a
vector, and its cosines look like any other. ``readable_share`` says how much to trust them.
Scripts are told apart by Unicode block, which is all a share of words needs.
"""
from __future__ import annotations

import re
from functools import lru_cache

from .cjk import CJK_CLASS

ALL_SCRIPTS = None  # an embedder's ``scripts`` when it reads every script (a multilingual or a lexical model)
# The least share of a text the embedding model must read for a cosine of it to mean anything: a
# model gives two texts of a script it does not read a high cosine whatever they say.
READ_FOR_COSINE = 0.5

_BLOCKS = (  # script -> the body of a [...] class of its letters
    ("latin", r"A-Za-z\u00c0-\u024f\u1e00-\u1eff"),
    ("greek", r"\u0370-\u03ff\u1f00-\u1fff"),
    ("cyrillic", r"\u0400-\u052f"),
    ("arabic", r"\u0600-\u06ff\u0750-\u077f"),
    ("hebrew", r"\u0590-\u05ff"),
    ("devanagari", r"\u0900-\u097f"),
    ("thai", r"\u0e00-\u0e7f"),
    ("cjk", CJK_CLASS),
)
_SCRIPT_OF = [(name, re.compile(f"[{body}]")) for name, body in _BLOCKS]
# A word: one CJK character (the script writes no spaces, and a character is about a word's worth of
# meaning), or a run of letters of any other script; so a Chinese and an English sentence weigh alike.
_WORD = re.compile(f"[{CJK_CLASS}]|[^\\W\\d_{CJK_CLASS}]+")
_ANY_LETTER = re.compile("[A-Za-z\u00c0-\u024f\u1e00-\u1eff]")


def script_words(text: str) -> dict[str, int]:
    """How many words of ``text`` each script has; words of no listed script count as "other"."""
    counts: dict[str, int] = {}
    for word in _WORD.findall(text):
        name = next((n for n, pattern in _SCRIPT_OF if pattern.match(word)), "other")
        counts[name] = counts.get(name, 0) + 1
    return counts


def main_script(counts: dict[str, int]) -> str | None:
    """The script most of a text's words are in (its ``script_words``: ``counts``); None for no words."""
    return max(counts, key=counts.__getitem__) if counts else None


# A character that is no letter or a Latin one (ASCII, Latin-1 but its three other letters ª µ º,
# Latin Extended, general punctuation): a text of these alone is all Latin script.
_LATIN_ONLY = re.compile("[\x00-\x7f\u00a0-\u00a9\u00ab-\u00b4\u00b6-\u00b9\u00bb-\u024f\u1e00-\u1eff"
                         "\u2000-\u206f]*")


@lru_cache(maxsize=1 << 12)
def written_in(text: str) -> str | None:
    """The script ``text`` is written in: that of most of its words (``main_script``); None for a text
    without words. A text of Latin characters alone is read without counting."""
    if _LATIN_ONLY.fullmatch(text):
        return "latin" if _ANY_LETTER.search(text) else None
    return main_script(script_words(text))


def readable_share(text: str, scripts: frozenset[str] | None) -> float:
    """The share of ``text``'s words in ``scripts`` (``ALL_SCRIPTS``: every script); 1.0 for a text
    without words (digits and symbols read the same in every model)."""
    if scripts is ALL_SCRIPTS or ("latin" in scripts and _LATIN_ONLY.fullmatch(text)):
        return 1.0  # a model of Latin script reads a Latin text whole: no word need be counted
    return readable_share_of(script_words(text), scripts)


def readable_share_of(counts: dict[str, int], scripts: frozenset[str] | None) -> float:
    """``readable_share`` of a text whose ``script_words`` are ``counts``."""
    if scripts is ALL_SCRIPTS:
        return 1.0
    total = sum(counts.values())
    return sum(n for name, n in counts.items() if name in scripts) / total if total else 1.0
