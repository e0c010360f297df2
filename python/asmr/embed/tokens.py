"""The package's tokenizer as every runtime reads it: the Rust tokenizer of ``tokenizer.json``, texts cut at
the model's ``max_seq_length`` and left unpadded (a runtime pads, if it must, as it batches)."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Sequence


def load_tokenizer(model_dir: Path):
    from tokenizers import Tokenizer

    max_tokens = json.loads((model_dir / "sentence_bert_config.json").read_text())["max_seq_length"]
    tokenizer = Tokenizer.from_file(str(model_dir / "tokenizer.json"))
    tokenizer.enable_truncation(max_tokens)
    tokenizer.no_padding()  # tokenizer.json pads to 128
    return tokenizer


def token_ids(tokenizer, texts: Sequence[str]) -> list[list[int]]:
    """Each text's token ids, [CLS] and [SEP] included, encoded on the tokenizer's own threads."""
    return [e.ids for e in tokenizer.encode_batch(list(texts))]
