"""The chat prompt of the model backends (local and OpenAI-compatible).

Sources come first, each introduced by the very marker that cites it, so the
model sees the citation form next to the text it vouches for; the redundancy
block comes after the sources (closest to the question, where a small model
attends most), then the question.
"""
from __future__ import annotations

from typing import Sequence

from asmr.decoding.markers import CITE, Marker

from .base import Source

SYSTEM = ("You answer questions using only the numbered sources. Write one to three short sentences. "
          "End every sentence with the marker of the source that supports it, exactly as shown, "
          "for example {example}. If the sources do not contain the answer, say that it is not in the sources.")


def build_messages(question: str, sources: Sequence[Source], *, redundancy: str = "",
                   marker: Marker = CITE) -> list[dict]:
    example = marker.spell(sources[0].id) if sources else marker.spell("ID")
    lines = ["Sources:"]
    for s in sources:
        where = " / ".join(p for p in (s.title, s.section) if p)
        lines.append(f"{marker.spell(s.id)}{f' ({where})' if where else ''} {' '.join(s.text.split())}")
    if redundancy:
        lines += ["", redundancy]
    lines += ["", f"Question: {question}"]
    return [{"role": "system", "content": SYSTEM.format(example=example)},
            {"role": "user", "content": "\n".join(lines)}]
