"""An OpenAI-compatible chat endpoint as the generator (for example a vLLM server started
with ASMR's logits processor: ``--logits-processors asmr.decoding.vllm:CitationLogitsProcessor``).

The allowlist travels in the request: ``vllm_xargs`` is how vLLM's OpenAI server fills
``SamplingParams.extra_args``, which the processor reads (``asmr_allowlist``,
``asmr_require_citation``). Other servers ignore the field; the verifier still checks
every id that comes back. Base URL, model and key come from arguments or from
``ASMR_OPENAI_BASE_URL``, ``ASMR_OPENAI_MODEL`` and ``ASMR_OPENAI_API_KEY``
(falling back to ``OPENAI_BASE_URL`` / ``OPENAI_API_KEY``).
"""
from __future__ import annotations

import json
import os
import time
import urllib.error
import urllib.request

from asmr.decoding.markers import CITE, Marker, marker_pattern

from .base import Generation, GeneratorError, check_sources
from .prompt import PARAPHRASE_PROMPT, build_messages


class OpenAIGenerator:
    name = "openai"

    def __init__(self, base_url: str | None = None, model: str | None = None, *, api_key: str | None = None,
                 max_tokens: int = 160, timeout: float = 60.0) -> None:
        env = os.environ.get
        self.base_url = (base_url or env("ASMR_OPENAI_BASE_URL") or env("OPENAI_BASE_URL") or "").rstrip("/")
        self.model = model or env("ASMR_OPENAI_MODEL") or ""
        self.api_key = api_key or env("ASMR_OPENAI_API_KEY") or env("OPENAI_API_KEY") or ""
        if not self.base_url.startswith(("http://", "https://")):
            raise ValueError("openai generator: a base URL (http[s]://host[:port]/v1) is needed: pass --base-url "
                             "or set ASMR_OPENAI_BASE_URL")
        if not self.model:
            raise ValueError("openai generator: a model name is needed: pass --model or set ASMR_OPENAI_MODEL")
        self.max_tokens = max_tokens
        self.timeout = timeout

    def _chat(self, messages: list[dict], extra: dict, max_tokens: int) -> tuple[str, int]:
        body = {"model": self.model, "messages": messages, "temperature": 0.0, "max_tokens": max_tokens, **extra}
        req = urllib.request.Request(f"{self.base_url}/chat/completions", data=json.dumps(body).encode(),
                                     headers={"Content-Type": "application/json",
                                              **({"Authorization": f"Bearer {self.api_key}"} if self.api_key else {})})
        try:
            with urllib.request.urlopen(req, timeout=self.timeout) as resp:
                data = json.load(resp)
        except urllib.error.HTTPError as exc:  # the server's own message says what was wrong
            raise GeneratorError(self.name, f"{self.base_url} answered {exc.code}: "
                                            f"{exc.read(500).decode('utf-8', 'replace')}") from None
        except (urllib.error.URLError, TimeoutError, OSError) as exc:
            raise GeneratorError(self.name, f"cannot reach {self.base_url}: {exc}") from None
        except ValueError as exc:  # a body that is not JSON
            raise GeneratorError(self.name, f"{self.base_url} answered something other than JSON: {exc}"
                                 ) from None
        try:
            text = data["choices"][0]["message"]["content"] or ""
        except (KeyError, IndexError, TypeError):
            raise GeneratorError(self.name, f"unexpected response from {self.base_url}: {str(data)[:300]}"
                                 ) from None
        return text.strip(), int((data.get("usage") or {}).get("completion_tokens") or 0)

    def generate(self, question: str, sources, *, redundancy: str = "", marker: Marker = CITE,
                 require_citation: bool = True) -> Generation:
        t0 = time.perf_counter()
        sources = check_sources(sources)
        if not sources:
            return Generation("", self.name)
        extra = {"vllm_xargs": {"asmr_allowlist": [s.id for s in sources],
                                "asmr_require_citation": bool(require_citation)}}
        text, n = self._chat(build_messages(question, sources, redundancy=redundancy, marker=marker), extra,
                             self.max_tokens)
        return Generation(text, self.name, time.perf_counter() - t0, n, info={"model": self.model})

    def rewrite(self, sentence: str, unit_text: str) -> str:
        messages = [{"role": "system", "content": "Rewrite the sentence so that it says only what the source "
                                                  "says. Reply with the rewritten sentence only."},
                    {"role": "user", "content": f"Source: {unit_text}\n\nSentence: {sentence}"}]
        text, _ = self._chat(messages, {}, 64)
        return marker_pattern().sub("", text).strip()

    def paraphrase(self, text: str) -> str | None:
        messages = [{"role": "system", "content": PARAPHRASE_PROMPT},
                    {"role": "user", "content": f"Sentence: {text}"}]
        out, _ = self._chat(messages, {}, 64)
        return marker_pattern().sub("", out).strip() or None
