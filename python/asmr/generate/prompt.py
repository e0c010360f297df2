"""The chat prompt of the model backends (local and OpenAI-compatible).

Sources come first, each followed by the very marker that cites it ("tags":
with SmolLM2-135M this wording gave 26 of 40 answers a valid citation under
the citation processor, where sources labelled "[ID] text" gave none:
bench/citations_smollm2.py); the redundancy block comes after the sources
(closest to the question, where a small model attends most), then the
question.
"""
from __future__ import annotations

from typing import Sequence

from asmr.decoding.markers import CITE, Marker

from .base import Source

# The redundancy block's paraphrase: the facts must survive word for word (the block checks they do).
PARAPHRASE_PROMPT = ("Say the sentence in other words. Keep every number, unit, date, version, code and name "
                     "exactly as written. Reply with the new sentence only.")
SYSTEM = ("Answer in one or two sentences from the sources and end each sentence with the {opener}...{closer} "
          "tag of the source you used, for example {example}.")


def build_messages(question: str, sources: Sequence[Source], *, redundancy: str = "",
                   marker: Marker = CITE) -> list[dict]:
    example = marker.spell(sources[0].id) if sources else marker.spell("ID")
    lines = ["Sources:"]
    for s in sources:
        where = " / ".join(p for p in (s.title, s.section) if p)
        lines.append(f"{f'({where}) ' if where else ''}{' '.join(s.text.split())} {marker.spell(s.id)}")
    if redundancy:
        lines += ["", redundancy]
    lines += ["", f"Question: {question}"]
    return [{"role": "system", "content": SYSTEM.format(opener=marker.opener, closer=marker.closer, example=example)},
            {"role": "user", "content": "\n".join(lines)}]
