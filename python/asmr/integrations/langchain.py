"""A LangChain retriever over an ASMR memory (needs ``langchain-core``).

    from asmr.integrations.langchain import AsmrRetriever

    retriever = AsmrRetriever.from_directory("asmr-memory", k=5)
    for doc in retriever.invoke("Which port does the API server listen on?"):
        print(doc.id, doc.metadata["score"], doc.metadata["recall_path"])

Each ``Document`` is one recalled unit: ``page_content`` is its text, ``id`` and
``metadata["id"]`` its ``memo://`` address, and the metadata carries its scores,
recall path, source span and the result's confidence (see
``asmr.integrations.common.hit_metadata``). When the engine finds no confident
answer it returns ``[]`` (its refusal); ``include_not_found=True`` returns the
closest candidates instead, marked ``found=False`` with ``reason``.

Thread safety: one retriever may serve several threads and ``ainvoke`` (which
runs the search in an executor thread); its searches run one at a time under a
lock. For searches in parallel, build one retriever per thread. A retriever
reads the snapshot of the memory it opened; ``reopen()`` moves it to the newest
ingest. ``close()`` (or ``with``) closes a memory it opened from a directory.
"""
from __future__ import annotations

import os
from typing import Any

try:
    from langchain_core.callbacks import CallbackManagerForRetrieverRun
    from langchain_core.documents import Document
    from langchain_core.retrievers import BaseRetriever
except ImportError as exc:  # pragma: no cover - depends on the environment
    raise ImportError("asmr.integrations.langchain needs langchain-core: "
                      "pip install 'asmr[integrations]' (or langchain-core)") from exc
from pydantic import PrivateAttr

from ..retrieve import RetrieveConfig
from .common import MemoryRecall, RecallHandle


class AsmrRetriever(RecallHandle, BaseRetriever):
    """Recalled units of an ASMR memory as LangChain ``Document`` objects.

    memory: a memory directory (opened here) or an open ``asmr.store.Memory`` (borrowed).
    k: units per question (None: ``config.k``).
    config: an ``asmr.retrieve.RetrieveConfig`` (None: the defaults).
    include_not_found: on "not found", return the closest candidates marked ``found=False``
        instead of ``[]``.
    embedder: an embedder for the memory's model (None: ``asmr.embed.get_embedder`` of it).
    """

    memory: Any
    k: int | None = None
    config: Any = None
    include_not_found: bool = False
    embedder: Any = None

    _recall: MemoryRecall = PrivateAttr()

    def __init__(self, memory: Any = None, /, **kwargs: Any) -> None:
        if memory is not None:  # AsmrRetriever(memory, k=...) as well as AsmrRetriever(memory=..., k=...)
            kwargs["memory"] = memory
        super().__init__(**kwargs)

    def model_post_init(self, context: Any, /) -> None:
        super().model_post_init(context)
        if self.k is not None and self.k < 1:
            raise ValueError(f"k must be at least 1, got {self.k}")
        self._recall = MemoryRecall(self.memory, self.config, self.embedder)
        self.config = self._recall.config

    @classmethod
    def from_directory(cls, path: str | os.PathLike, k: int | None = None,
                       config: RetrieveConfig | None = None, **kwargs: Any) -> "AsmrRetriever":
        """A retriever over the memory in ``path`` (closed by ``close()``)."""
        return cls(memory=path, k=k, config=config, **kwargs)

    def _get_relevant_documents(self, query: str, *,
                                run_manager: CallbackManagerForRetrieverRun) -> list[Document]:
        _, recalled = self._recall.search(query, self.k, self.include_not_found)
        return [Document(page_content=r.unit.content, metadata=r.metadata, id=r.unit.id) for r in recalled]
