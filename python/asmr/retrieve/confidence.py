"""How sure recall is that the memory states the answer: the logistic model over ``signals``.

``confidence`` is a logistic function of the best unit's similarity to the question (as far as the
embedding model reads the question's script; for the rest, its lexical stand-in, term alignment) and of what
``signals`` reads off the best units against the question (term and kind alignment, subject
phrases), of the speaker gap of questions about people of a conversation, and of
what the best units are: the share that are chat turns (``turn_share``). A question put to a
conversation is answered by a short turn that seldom repeats its words, so the same alignment means
more there than in a document; without this share one threshold refused most answerable questions
over chat logs. Its weights (each of the sign ``SIGNS`` gives it) and threshold load from
``confidence_model.json``, written by ``bench/calibrate_confidence.py``.
"""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from ..text.cjk import fold_han
from ..text.turns import parse_turn
from ..text.words import tokenize
from .signals import (
    alignment,
    chain_masks,
    held,
    kind_weights,
    question_terms,
    subject_phrases,
    term_key,
    term_senses,
)

MODEL_PATH = Path(__file__).with_name("confidence_model.json")

# What confidence() weighs, in the order of the model's weights after the bias.
FEATURES = ("top_similarity", "term_alignment", "kind_alignment", "subject_phrases", "speaker_gap", "turn_share")
# Which way each feature may move confidence, and so the sign its fitted weight must take: +1 (more
# of the question stated, a closer unit) only raises it, -1 (the people asked about said less of it)
# only lowers it, 0 (what kind of units were recalled, not how well they match) either way. Fitted
# free, signals that move together took weights of opposite signs whose balance followed the mix of
# tuning sources: the alignment of the best two units weighed -5.2 when the multi-hop source was left
# out of the fit, and the refusal's ROC AUC on that source fell below the plain cosine's. Held to their
# signs, that alignment and the coverage of the question's three-word phrases weighed 0 in the fits on
# all sources, and were dropped (bench/README.md, "Weights held to their signs").
SIGNS = {"top_similarity": 1, "term_alignment": 1, "kind_alignment": 1, "subject_phrases": 1,
         "speaker_gap": -1, "turn_share": 0}


Model = tuple[tuple[float, ...], float, dict[str, float]]  # weights, threshold, baselines' thresholds


def _load_models(path: Path = MODEL_PATH) -> tuple[Model, dict[str, Model]]:
    """The default model (all-MiniLM-L6-v2's, and any embedder's without its own), and the models
    fitted for other embedders (``"embedders"``)."""
    model = json.loads(path.read_text(encoding="utf-8"))

    def one(m: dict) -> Model:
        """A model, its weights in the order of FEATURES: one fitted before a feature existed (its
        ``features`` lack it) weighs that feature 0."""
        names = tuple(m.get("features", model["features"]))
        if unknown := set(names) - set(FEATURES):
            raise ValueError(f"{path}: features {sorted(unknown)} are not among {list(FEATURES)}")
        if len(m["weights"]) != len(names) + 1:
            raise ValueError(f"{path}: {len(m['weights'])} weights for a bias and {len(names)} features")
        given = dict(zip(names, (float(w) for w in m["weights"][1:])))
        return ((float(m["weights"][0]), *(given.get(f, 0.0) for f in FEATURES)), float(m["threshold"]),
                {name: float(t) for name, t in m.get("baselines", {}).items()})
    return one(model), {name: one(m) for name, m in model.get("embedders", {}).items()}


_DEFAULT_MODEL, _EMBEDDER_MODELS = _load_models()
# BASELINE_THRESHOLDS: the refusal thresholds of the evaluation's baselines ("dense", "hybrid") on the
# cosine of the question and their best unit, fitted by the same script, on the same data, as ours.
DEFAULT_WEIGHTS, DEFAULT_THRESHOLD, BASELINE_THRESHOLDS = _DEFAULT_MODEL


def fitted_model(embedder: str) -> Model:
    """(weights, threshold, baselines' thresholds) fitted for the embedding model called ``embedder``."""
    return _EMBEDDER_MODELS.get(embedder, _DEFAULT_MODEL)


def confidence(features: dict, weights: tuple[float, ...]) -> float:
    """P(the memory holds the answer): the logistic function of ``features`` (``FEATURES``) with
    ``weights`` (a bias, then one weight a feature)."""
    bias, *w = weights
    z = bias + sum(wi * features[name] for wi, name in zip(w, FEATURES))
    return float(1.0 / (1.0 + np.exp(-z)))


READABLE_HINT = 0.5  # below this readable share a refusal says that the model could not read the memory


def refusal_reason(features: dict, value: float, threshold: float) -> str:
    """Why a result is "not found": its confidence ``value`` against ``threshold``, and what the signals saw."""
    parts = [f"confidence {value:.2f} < {threshold:.2f}",
             f"the best unit states {features['term_alignment']:.0%} of the question's terms"]
    if features.get("unheld_terms"):
        parts[-1] += f" (no recalled unit has {features['unheld_terms']})"
    parts.append(f"best similarity {features['top_similarity']:.2f}")
    readable = features.get("readable", 1.0)
    if readable < READABLE_HINT:
        parts.append(f"the embedding model's similarity counts {readable:.0%}: it does not read the script of "
                     "the question or of the units it ranks first (a memory ingested with --embedder "
                     "multilingual-e5-small reads them)")
    return "; ".join(parts)


def no_features() -> dict:
    """The features of a recall that found nothing at all."""
    return {**dict.fromkeys(FEATURES, 0.0), "unheld_terms": "", "readable": 1.0}


def turn_share(texts: list[str]) -> float:
    """The share of ``texts`` that are chat turns (``text.turns.parse_turn``); 0 for none."""
    return sum(parse_turn(t) is not None for t in texts) / len(texts) if texts else 0.0


def confidence_features(question: str, sim: np.ndarray, texts: list[str], lexical_texts: list[str],
                        idf_of, cfg, readable: float = 1.0, speaker_gap: float = 0.0,
                        own_similarity: float | None = None, links: dict[int, list[int]] | None = None,
                        headings: list[str] | None = None) -> dict:
    """What ``confidence`` weighs, and what the refusal reason names.

    ``sim``: the cosine of the question and each reached unit; ``texts``: the recalled units' texts,
    best first; ``lexical_texts``: the best ``cfg.alignment_lexical`` BM25 units' texts; ``idf_of``: the memory's idf of
    index tokens; ``cfg``: the ``RetrieveConfig``; ``readable``: how far the cosines can be trusted
    (``Retriever.readable``): the similarity signal is the cosine that far, term alignment the rest;
    ``speaker_gap``, ``own_similarity``: what ``Retriever.speaker_signals`` measured for a question that
    names speakers of the memory (0 and None for one that names none); the own similarity stands for
    the best cosine, since every turn of the person named holds the name; ``links``: which of the
    units read (the first ``cfg.alignment_units`` of ``texts``, then the lexical ones not among them)
    name what another is about (``Retriever.chain_links``): term and kind alignment also read each chain
    of them as one unit (``signals.chain_masks``), up to ``cfg.chain_units`` long; ``headings``: the
    heading of the section each unit read stands in, below the document's title ("" for none): a
    section's heading is part of what its units say (a FAQ's question, the instrument a paragraph is
    about), so term and kind alignment read each unit under it."""
    # Words compare across Traditional and Simplified script (text.cjk.fold_han): the word lists, jieba's
    # dictionary and Cilin are Simplified, and a question may be written in the other script than its units.
    asked, question = question, fold_han(question)
    texts, lexical_texts = [fold_han(t) for t in texts], [fold_han(t) for t in lexical_texts]
    headings = [fold_han(h) for h in headings] if headings else headings
    candidates = texts[:cfg.alignment_units] + [t for t in lexical_texts if t not in texts[:cfg.alignment_units]]
    terms, weights = question_terms(question, idf_of)
    read_as = [f"{h}\n{c}" if h else c for h, c in zip(headings, candidates)] if headings else candidates
    senses = term_senses(question, terms)
    masks = [held(terms, c, senses) for c in read_as] if terms else []
    read = masks + chain_masks(masks, links, cfg.chain_units) if masks and links else masks
    single = alignment(terms, weights, candidates, read)
    by_kind = alignment(terms, kind_weights(question, terms, weights), candidates, read) if terms else single
    unheld = [t for t, h in zip(terms, np.any(masks, axis=0)) if not h] if terms and candidates else []
    # the reason names words as asked, not stems (folding keeps each token's place and length)
    as_asked = {term_key(f): w
                for f, w in zip(reversed(tokenize(question)), reversed(tokenize(asked, fold=False)))}
    unheld = [as_asked.get(t, t) for t in unheld]
    top = own_similarity if own_similarity is not None else float(sim.max()) if len(sim) else 0.0
    return {"top_similarity": readable * top + (1.0 - readable) * single,
            "term_alignment": single, "kind_alignment": by_kind,
            "subject_phrases": subject_phrases(terms, weights, question, candidates),
            "speaker_gap": speaker_gap,
            "turn_share": turn_share(texts[:cfg.alignment_units]),
            "unheld_terms": ", ".join(unheld), "readable": readable}
