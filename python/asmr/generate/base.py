"""What every generator backend takes and returns.

A generator writes an answer from the sources of one turn. The sources are the
allowlisted units (their ids are the only ones it may cite); the redundancy
block, when there is one, restates their key facts. Backends: ``extractive``
(no model), ``local`` (SmolLM2 with the citation-closure processor) and
``openai`` (an OpenAI-compatible endpoint).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol, Sequence

from asmr.decoding.markers import CITE, Marker


@dataclass(frozen=True)
class Source:
    """One citable unit as the generator sees it."""

    id: str
    text: str
    title: str = ""
    section: str = ""
    score: float = 0.0
    # What the unit's words stand for when they do not say it themselves (the statement a terse
    # correction corrects: "Correction: Bologna, not Tartu!" of "I live in Tartu"): for ranking, never quoted.
    context: str = ""


@dataclass
class Generation:
    text: str
    backend: str
    seconds: float = 0.0
    tokens: int = 0
    # backend details worth an audit line (prompt size, markers refused, ...)
    info: dict = field(default_factory=dict)


class Generator(Protocol):
    name: str

    def generate(self, question: str, sources: Sequence[Source], *, redundancy: str = "",
                 marker: Marker = CITE, require_citation: bool = True) -> Generation: ...

    def rewrite(self, sentence: str, unit_text: str) -> str:
        """One sentence restated so that the unit supports it, without its marker
        (the verifier's soft zone; it puts the marker back)."""
        ...

    def paraphrase(self, text: str) -> str | None:
        """``text`` said in other words, without markers, for the redundancy block's ``full`` mode;
        None when the backend cannot paraphrase (the block then has no paraphrase)."""
        ...


class GeneratorError(RuntimeError):
    """A generator cannot load its model or its endpoint failed; says which generator and why."""

    def __init__(self, generator: str, reason: str) -> None:
        self.generator = generator
        self.reason = " ".join(reason.split())  # one line: an HTTP error body may span several
        super().__init__(f"generator {generator}: {self.reason}")


def check_sources(sources: Sequence[Source]) -> list[Source]:
    sources = list(sources)
    seen: set[str] = set()
    for i, s in enumerate(sources):
        if not isinstance(s, Source):
            raise ValueError(f"sources[{i}] must be a Source, got {type(s).__name__}")
        if s.id in seen:
            raise ValueError(f"sources[{i}]: id {s.id!r} given twice")
        seen.add(s.id)
    return sources
