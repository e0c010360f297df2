"""Conversations' turns, shared by every worker of a server: ``<memory>/conversations.sqlite``.

With ``--workers N`` the turns of one conversation land on any worker, and /v1/verify may ask a
worker that did not answer the turn. So a turn's allowlist is written to one SQLite file beside
the memory (WAL: readers never wait) when the turn opens, before the model generates, and its
number is taken in the same transaction, so two workers never hand out the same turn. The file
also outlives a restart. Past ``capacity`` conversations, the least recently used are dropped.

A server started with ``--remember-conversations`` also writes each answered turn into the memory
itself (``remember_exchange``): the conversation's document grows by the question and what the
memory confirmed of the answer, the way ``asmr chat --remember`` grows it.
"""
from __future__ import annotations

import json
from datetime import datetime
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


def remember_exchange(holder, conversation: str, question: str, ans, asked: datetime) -> str:
    """Append ``question`` and the sentences of the answer ``ans`` the memory confirmed (markers
    removed: the answer as the client was shown it) to the document of ``conversation``
    (``conversation.<id>`` of kb), read and written under the writer lock; returns its id. Raises
    ApiError (409) when another writer holds the memory too long, InputError when the document is
    not a conversation."""
    from ..store import DEFAULT_KB
    from ..units.chat import SaidTurn, conversation_doc_id, conversation_document
    from ..verify.citations import confirmed_sentences

    reply = " ".join(confirmed_sentences(ans.text, [c.unit_id for c in ans.citations])) if ans.found else ""
    turns = [SaidTurn(asked, "user", question), SaidTurn(datetime.now(), "assistant", reply, resolve=False)]
    doc_id = conversation_doc_id(conversation)

    def grown(writer) -> list:
        return [conversation_document(doc_id, writer.current_document(DEFAULT_KB, doc_id), turns,
                                      source=f"asmr serve, conversation {conversation}")]

    holder.ingest(grown, DEFAULT_KB)
    return doc_id
