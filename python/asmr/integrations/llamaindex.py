"""A LlamaIndex retriever over an ASMR memory (needs ``llama-index-core``).

    from asmr.integrations.llamaindex import AsmrRetriever

    retriever = AsmrRetriever.from_directory("asmr-memory", k=5)
    for n in retriever.retrieve("Which port does the API server listen on?"):
        print(n.node.node_id, n.score, n.node.metadata["recall_path"])

Each ``NodeWithScore`` is one recalled unit: a ``TextNode`` whose ``id_`` and
``metadata["id"]`` are its ``memo://`` address, whose text is the unit's text and
whose ``start_char_idx``/``end_char_idx`` are its source span, scored with the
engine's score. The metadata (see ``asmr.integrations.common.hit_metadata``)
carries scores, recall path and the result's confidence; only ``id`` is shown
to an LLM and none of it is embedded. When the engine finds no confident
answer it returns ``[]`` (its refusal); ``include_not_found=True`` returns the
closest candidates instead, marked ``found=False`` with ``reason``.

Thread safety: one retriever may serve several threads and ``aretrieve``; its
searches run one at a time under a lock. For searches in parallel, build one
retriever per thread. A retriever reads the snapshot of the memory it opened;
``reopen()`` moves it to the newest ingest. ``close()`` (or ``with``) closes a
memory it opened from a directory.
"""
from __future__ import annotations

import os
from typing import Any

try:
    from llama_index.core.callbacks import CallbackManager
    from llama_index.core.retrievers import BaseRetriever
    from llama_index.core.schema import NodeWithScore, QueryBundle, TextNode
except ImportError as exc:  # pragma: no cover - depends on the environment
    raise ImportError("asmr.integrations.llamaindex needs llama-index-core: "
                      "pip install 'asmr[integrations]' (or llama-index-core)") from exc

from ..retrieve import RetrieveConfig
from ..store import Memory
from .common import MemoryRecall, RecallHandle

LLM_METADATA = ("id",)  # the address is what an answer cites; the rest is for programs


class AsmrRetriever(RecallHandle, BaseRetriever):
    """Recalled units of an ASMR memory as LlamaIndex ``NodeWithScore`` objects.

    memory: a memory directory (opened here) or an open ``asmr.store.Memory`` (borrowed).
    k: units per question (None: ``config.k``).
    config: an ``asmr.retrieve.RetrieveConfig`` (None: the defaults).
    include_not_found: on "not found", return the closest candidates marked ``found=False``
        instead of ``[]``.
    embedder: an embedder for the memory's model (None: ``asmr.embed.get_embedder`` of it).
    """

    def __init__(self, memory: str | os.PathLike | Memory, k: int | None = None,
                 config: RetrieveConfig | None = None, include_not_found: bool = False, embedder=None,
                 callback_manager: CallbackManager | None = None, verbose: bool = False) -> None:
        if k is not None and k < 1:
            raise ValueError(f"k must be at least 1, got {k}")
        self._recall = MemoryRecall(memory, config, embedder)
        self.k = k
        self.include_not_found = include_not_found
        super().__init__(callback_manager=callback_manager, verbose=verbose)

    @classmethod
    def from_directory(cls, path: str | os.PathLike, k: int | None = None,
                       config: RetrieveConfig | None = None, **kwargs: Any) -> "AsmrRetriever":
        """A retriever over the memory in ``path`` (closed by ``close()``)."""
        return cls(path, k=k, config=config, **kwargs)

    @property
    def memory(self) -> Memory:
        return self._recall.memory

    @property
    def config(self) -> RetrieveConfig:
        return self._recall.config

    def _retrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
        _, recalled = self._recall.search(query_bundle.query_str, self.k, self.include_not_found)
        out = []
        for r in recalled:
            keys = list(r.metadata)
            node = TextNode(id_=r.unit.id, text=r.unit.content, metadata=r.metadata,
                            start_char_idx=r.unit.offset_start, end_char_idx=r.unit.offset_end,
                            excluded_embed_metadata_keys=keys,
                            excluded_llm_metadata_keys=[x for x in keys if x not in LLM_METADATA])
            out.append(NodeWithScore(node=node, score=r.score))
        return out
