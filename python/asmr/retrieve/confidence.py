"""How sure recall is that the memory states the answer: the signals and the logistic model over them.

``confidence`` is a logistic function of the best unit's similarity, whether the question's
names are recalled and are titles in memory, field coverage (whether a unit about those
names also says what the question asks: see ``field_coverage``) and phrase coverage (how
much of the question's wording the best units state). Its weights and threshold load from
``confidence_model.json``, written by ``bench/calibrate_confidence.py``.
"""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from ..text.entities import mentions, normalize, split_words
from ..text.words import QUESTION_STOP_WORDS, STEM_SUFFIXES, base_form, suffix_stem, token_bytes, tokenize

MODEL_PATH = Path(__file__).with_name("confidence_model.json")

# What confidence() weighs, in the order of the model's weights after the bias.
FEATURES = ("top_similarity", "name_coverage", "title_coverage", "field_coverage", "phrase_coverage")


def _load_model(path: Path = MODEL_PATH) -> tuple[tuple[float, ...], float, dict[str, float]]:
    model = json.loads(path.read_text(encoding="utf-8"))
    if tuple(model["features"]) != FEATURES:
        raise ValueError(f"{path}: features {model['features']} are not {list(FEATURES)}")
    baselines = {name: float(t) for name, t in model.get("baselines", {}).items()}
    return tuple(float(w) for w in model["weights"]), float(model["threshold"]), baselines


# BASELINE_THRESHOLDS: the refusal thresholds of the evaluation's baselines ("dense", "hybrid") on the
# cosine of the question and their best unit, fitted by the same script, on the same data, as ours.
DEFAULT_WEIGHTS, DEFAULT_THRESHOLD, BASELINE_THRESHOLDS = _load_model()


def confidence(features: dict, weights: tuple[float, ...]) -> float:
    """P(the memory holds the answer): the logistic function of ``features`` (``FEATURES``) with
    ``weights`` (a bias, then one weight a feature)."""
    bias, *w = weights
    z = bias + sum(wi * features[name] for wi, name in zip(w, FEATURES))
    return float(1.0 / (1.0 + np.exp(-z)))


def refusal_reason(features: dict, value: float, threshold: float) -> str:
    """Why a result is "not found": its confidence ``value`` against ``threshold``, and the signals that kept it low."""
    parts = [f"confidence {value:.2f} < {threshold:.2f}"]
    if features.get("names") and features["name_coverage"] < 1.0:
        parts.append(f"{features['name_coverage']:.0%} of the {features['names']} names in the question "
                     "appear in what was recalled")
    if features.get("field_missing"):
        about = f"that names {features['field_subject']} " if features.get("field_subject") else ""
        parts.append(f"no recalled unit {about}also says {features['field_missing']!r} "
                     f"(field coverage {features['field_coverage']:.0%})")
    parts.append(f"best similarity {features['top_similarity']:.2f}")
    parts.append(f"the best units state {features['phrase_coverage']:.0%} of the question's phrases")
    return "; ".join(parts)


_TITLE_WORDS = 8  # the longest title spelled out in a question that question_names looks for


def spelled_titles(question: str, titles: set[str] | frozenset[str]) -> set[str]:
    """The titles in ``titles`` that the question spells out as a capitalised span, small words and
    punctuation included ("Night at the Harbour", "Ilsa T. Marrowby", "Anselm Ashgrove, 2nd Warden
    of Solby"): spans of at most _TITLE_WORDS words that start with a capital and end with a capital
    or a number, so "the Cobalt Lynx team" spells the team's name, not the title "Cobalt Lynx team"."""
    words = split_words(question)
    out = set()
    for i, first in enumerate(words):
        if not first[0].isupper():
            continue
        for j in range(i, min(len(words), i + _TITLE_WORDS)):
            if words[j][0].isupper() or words[j][0].isdigit():
                key = normalize(" ".join(words[i:j + 1]))
                if key in titles and not set(key.split()) <= QUESTION_STOP_WORDS:
                    out.add(key)
    return out


def question_names(question: str, titles: set[str] | frozenset[str] = frozenset()) -> set[str]:
    """The names a question mentions, as keys comparable with ``normalize``d text: codes lose their
    punctuation ("ERR-9918" is "err 9918"), a possessive its "s", a capitalised question word
    ("Within what time ...") is no name, and "X of Y" that is no title in ``titles`` is two names
    ("What is the cache TTL of Ivrix?" names "ttl" and "ivrix", not "ttl of ivrix"). A title the
    question spells out (``spelled_titles``) is one name, and the mentions inside it are not names of
    their own ("Night at the Harbour" is one name, not "night" and "harbour")."""
    spelled = spelled_titles(question, titles) if titles else set()
    out = set(spelled)
    for name in mentions(question):
        key = normalize(name)
        if key.endswith(" s"):
            key = key[:-2]
        for part in (key.split(" of ") if " of " in key and key not in titles else [key]):
            part = part.removeprefix("the ").strip()
            if (part and not set(tokenize(part)) <= QUESTION_STOP_WORDS
                    and not any(f" {part} " in f" {t} " for t in spelled)):
                out.add(part)
    return out


def field_coverage(question: str, names: set[str], candidates: list[str], known: list[str]) -> tuple[float, list[str]]:
    """How much of what the question asks for the best unit about its subject says.

    The question's words that are neither names nor stop words, and that some unit of ``known`` or
    ``candidates`` (what recall brought back) contains, are what it asks for ("cache" in "What is the
    cache TTL of Ivrix?"); among the ``candidates`` that contain every name of the question, the best
    one's share of those words is the coverage. A subject whose units never mention the asked-for
    field, when other units do, scores low; 0 when no recalled unit knows any asked word, (1.0, []) when
    the question asks nothing beyond its names. Words are
    compared by their stems (a unit's words are not stemmed: the forms of the question's stems are
    looked up among them, which is cheaper). Also returns the words of the question that the best
    unit lacks."""
    name_words = {suffix_stem(w) for n in names for w in tokenize(n) if w not in QUESTION_STOP_WORDS}
    word_of: dict[str, str] = {}
    for w in tokenize(question):
        if w not in QUESTION_STOP_WORDS:
            word_of.setdefault(suffix_stem(w), w)
    asked = set(word_of) - name_words
    if not asked:
        return 1.0, []
    stems = [(w, tuple((w + x).encode() for x in STEM_SUFFIXES)) for w in asked | name_words]

    def words(text: str) -> set[str]:
        present = set(token_bytes(text))
        return {w for w, forms in stems if not present.isdisjoint(forms)}

    cand = [words(c) for c in candidates]
    known_asked = asked & set().union(*cand, *(words(c) for c in known))
    if not known_asked:  # nothing asked is known to recall at all: no unit answers it
        return 0.0, [w for s, w in word_of.items() if s in asked]
    asked = known_asked
    best: set[str] = set()
    for found in cand:
        if name_words <= found and len(asked & found) > len(best):
            best = asked & found
    return len(best) / len(asked), [w for s, w in word_of.items() if s in asked - best]


def _phrase_word(word: str) -> str:
    return suffix_stem(base_form(word))


def phrase_coverage(question: str, texts: list[str], n: int = 3) -> float:
    """The share of the question's phrases (runs of ``n`` stemmed words, past forms such as "went"
    read as "go", not all stop words) that one of ``texts`` states. A unit that answers a question
    mostly says it in the question's words ("the runner-up in the 1999 Lindenfeld
    Regatta"); a memory without the answer holds the parts of a phrase in different units, or
    not at all. 0.5 for a question too short to have one."""
    words = [_phrase_word(w) for w in tokenize(question)]
    asked = {g for g in zip(*(words[i:] for i in range(n))) if not set(g) <= QUESTION_STOP_WORDS}
    if not asked:
        return 0.5
    vocab = set(words)
    stated = set()
    for text in texts:  # a word the question lacks breaks every phrase it is in: it need not be kept
        found = [s if (s := _phrase_word(w)) in vocab else None for w in tokenize(text)]
        stated.update(g for g in zip(*(found[i:] for i in range(n))) if g in asked)
    return len(stated) / len(asked)


def confidence_features(question: str, titles: set[str], sim: np.ndarray, units: list, lexical_texts: list[str],
                        cfg) -> dict:
    """What ``confidence`` weighs, and the field words the best unit lacks (for the refusal reason).

    ``titles``: the memory's document titles as ``title_key``s; ``sim``: the cosine of the question
    and each reached unit; ``units``: the recalled units, best first; ``lexical_texts``: the texts of
    the best ``cfg.field_lexical`` BM25 units; ``cfg``: the ``RetrieveConfig``."""
    names = question_names(question, titles)
    recalled = " ".join(normalize(u.content) for u in units[:cfg.coverage_units])
    covered = sum(1 for n in names if f" {n} " in f" {recalled} ")
    candidates = [u.content for u in units[:cfg.field_units]] + lexical_texts
    coverage, lacking = field_coverage(question, names, candidates,
                                       [u.content for u in units[cfg.field_units:cfg.coverage_units]])
    # A question that names nothing says nothing either way through names: 0.5, not full marks.
    return {"top_similarity": float(sim.max()) if len(sim) else 0.0,
            "name_coverage": covered / len(names) if names else 0.5,
            "title_coverage": sum(n in titles for n in names) / len(names) if names else 0.5,
            "field_coverage": coverage,
            "phrase_coverage": phrase_coverage(question, [u.content for u in units[:cfg.phrase_units]]),
            "field_missing": " ".join(lacking),
            "field_subject": " and ".join(sorted(names)), "names": len(names)}
