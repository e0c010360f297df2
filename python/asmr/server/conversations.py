"""Conversations' turns, shared by every worker of a server: ``<memory>/conversations.sqlite``.

With ``--workers N`` the turns of one conversation land on any worker, and /v1/verify may ask a
worker that did not answer the turn. So a turn's allowlist is written to one SQLite file beside
the memory (WAL: readers never wait) when the turn opens, before the model generates, and its
number is taken in the same transaction, so two workers never hand out the same turn. The file
also outlives a restart. Past ``capacity`` conversations, the least recently used are dropped.
"""
from __future__ import annotations

import json
from pathlib import Path

from ..store.turns import PRUNE_EVERY, TurnLog
from ..verify.allowlist import Allowlist

FILE = "conversations.sqlite"


class TurnLimit(Exception):
    """The conversation already has the most turns allowed."""


class ConversationStore:
    def __init__(self, directory: str | Path, *, capacity: int, max_turns: int,
                 prune_every: int = PRUNE_EVERY):
        self.path = Path(directory) / FILE
        self.max_turns = max_turns
        self._log = TurnLog(self.path, capacity=capacity, prune_every=prune_every)

    def open_turn(self, conversation: str, result) -> Allowlist:
        """The next turn of ``conversation`` with the units ``result`` recalled, numbered and saved."""
        opened: list[Allowlist] = []

        def record(n: int) -> str:  # in the log's transaction: a turn over the limit takes no number
            if n > self.max_turns:
                raise TurnLimit(f"conversation: has reached the limit of {self.max_turns} turns; start a new one")
            opened.append(Allowlist.from_result(result, n, conversation))
            return json.dumps(opened[0].to_dict(), ensure_ascii=False)

        self._log.add(conversation, record)
        return opened[0]

    def turns(self, conversation: str) -> list[Allowlist]:
        """The conversation's turns in order; empty when it is unknown (or was dropped)."""
        return [Allowlist.from_dict(json.loads(r)) for r in self._log.records(conversation)]

    def close(self) -> None:
        self._log.close()


class TurnOpener:
    """What ``Answerer.answer`` asks of a conversation (``new_turn``), backed by the shared store."""

    def __init__(self, store: ConversationStore, conversation: str):
        self.store, self.id = store, conversation

    def new_turn(self, result) -> Allowlist:
        return self.store.open_turn(self.id, result)
