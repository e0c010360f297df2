"""What may be cited in one turn of a conversation.

A turn's allowlist is the set of ``active`` units recalled for that turn, each
with its retrieval score. The decoder gets ``allowlist.ids`` (the only ids it
may spell inside a marker) and the verifier re-checks every cited id against
the same object. Turns do not inherit: a unit allowed in turn 1 is citable in
turn 2 only if turn 2 recalled it again.
"""
from __future__ import annotations

import json
import math
import os
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Iterator, Mapping

from ..decoding.markers import LONE_SURROGATE


@dataclass(frozen=True)
class Allowlist:
    """Unit id -> retrieval score for one turn; ids are ordered by score, best first."""

    turn: int
    scores: Mapping[str, float]
    conversation: str = ""

    def __post_init__(self) -> None:
        if isinstance(self.turn, bool) or not isinstance(self.turn, int) or self.turn < 1:
            raise ValueError(f"allowlist turn {self.turn!r}: must be an integer >= 1")
        if not isinstance(self.conversation, str) or "/" in self.conversation:
            raise ValueError(f"allowlist conversation {self.conversation!r}: must be a string without '/'")
        if not isinstance(self.scores, Mapping):
            raise ValueError(f"allowlist scores: must map unit id to score, got {type(self.scores).__name__}")
        clean: dict[str, float] = {}
        for uid, score in self.scores.items():
            if not isinstance(uid, str) or not uid or any(c.isspace() for c in uid) \
                    or LONE_SURROGATE.search(uid):  # the store's lookup could not even encode it
                raise ValueError(f"allowlist id {uid!r}: must be a non-empty string without whitespace or a "
                                 "lone surrogate")
            if isinstance(score, bool) or not isinstance(score, (int, float)) or not math.isfinite(score):
                raise ValueError(f"allowlist score of {uid}: {score!r} is not a finite number")
            clean[uid] = float(score)
        ordered = dict(sorted(clean.items(), key=lambda kv: -kv[1]))
        # Frozen, so a decoder holding the object sees exactly what the verifier checks against.
        object.__setattr__(self, "scores", MappingProxyType(ordered))

    @classmethod
    def from_result(cls, result, turn: int, conversation: str = "") -> "Allowlist":
        """The allowlist of a retrieval ``Result``.

        The retriever returns only units that are active in its snapshot. A result
        that is "not found" allows nothing: its hits are the closest candidates, and
        an answer must not cite what the memory could not vouch for.
        """
        scores = {h.unit_id: h.score for h in result.hits} if result.found else {}
        return cls(turn, scores, conversation)

    @property
    def ids(self) -> tuple[str, ...]:
        return tuple(self.scores)

    @property
    def turn_id(self) -> str:
        """``<conversation>/<turn>``, or the bare turn number outside a conversation."""
        return f"{self.conversation}/{self.turn}" if self.conversation else str(self.turn)

    def __contains__(self, uid: object) -> bool:
        return uid in self.scores

    def __iter__(self) -> Iterator[str]:
        return iter(self.scores)

    def __len__(self) -> int:
        return len(self.scores)

    def to_dict(self) -> dict:
        return {"conversation": self.conversation, "turn": self.turn, "scores": dict(self.scores)}

    @classmethod
    def from_dict(cls, d: Mapping) -> "Allowlist":
        if not isinstance(d, Mapping) or "turn" not in d or "scores" not in d:
            raise ValueError(f"allowlist {d!r:.80}: must be an object with 'turn' and 'scores'")
        return cls(d["turn"], d["scores"], d.get("conversation", ""))


@dataclass
class Conversation:
    """The turns of one conversation, in order; saved as JSON so a server or ``asmr chat`` can resume it."""

    id: str = field(default_factory=lambda: uuid.uuid4().hex[:16])
    turns: list[Allowlist] = field(default_factory=list)

    def __post_init__(self) -> None:
        if not isinstance(self.id, str) or not self.id or "/" in self.id or any(c.isspace() for c in self.id):
            raise ValueError(f"conversation id {self.id!r}: must be a non-empty string without '/' or "
                             "whitespace")
        for i, a in enumerate(self.turns, 1):
            if not isinstance(a, Allowlist) or a.turn != i or a.conversation != self.id:
                raise ValueError(f"conversation {self.id}: turn {i} is not this conversation's turn {i}")

    def new_turn(self, result) -> Allowlist:
        """Open the next turn with the units ``result`` recalled; earlier turns' units do not carry over."""
        allowlist = Allowlist.from_result(result, len(self.turns) + 1, self.id)
        self.turns.append(allowlist)
        return allowlist

    @property
    def current(self) -> Allowlist:
        if not self.turns:
            raise ValueError(f"conversation {self.id}: has no turns yet; call new_turn first")
        return self.turns[-1]

    def to_dict(self) -> dict:
        return {"id": self.id, "turns": [a.to_dict() for a in self.turns]}

    @classmethod
    def from_dict(cls, d: Mapping) -> "Conversation":
        if not isinstance(d, Mapping) or not isinstance(d.get("turns"), list) or "id" not in d:
            raise ValueError(f"conversation {d!r:.80}: must be an object with 'id' and a list 'turns'")
        return cls(d["id"], [Allowlist.from_dict(t) for t in d["turns"]])

    def save(self, path: str | os.PathLike) -> None:
        """Write atomically: a reader never sees half a conversation."""
        path = Path(path)
        tmp = path.with_name(path.name + ".tmp")
        tmp.write_text(json.dumps(self.to_dict(), ensure_ascii=False), encoding="utf-8")
        os.replace(tmp, path)

    @classmethod
    def load(cls, path: str | os.PathLike) -> "Conversation":
        try:
            data = json.loads(Path(path).read_text(encoding="utf-8"))
        except json.JSONDecodeError as exc:
            raise ValueError(f"conversation file {path}: not JSON ({exc})") from None
        return cls.from_dict(data)
