"""Retrievers for other frameworks over an ASMR memory.

- ``asmr.integrations.langchain.AsmrRetriever``: a LangChain ``BaseRetriever``
  (``langchain-core``) returning ``Document`` objects.
- ``asmr.integrations.llamaindex.AsmrRetriever``: a LlamaIndex ``BaseRetriever``
  (``llama-index-core``) returning ``NodeWithScore(TextNode)`` objects.

Both run ``asmr.retrieve.Retriever.search`` over one memory snapshot and return
the recalled units in the engine's order, each with its ``memo://`` address,
scores and recall path as metadata (``asmr.integrations.common.hit_metadata``
builds it, once for both). A "not found" result is the engine's refusal: by
default the retrievers return nothing; with ``include_not_found=True`` they
return the closest candidates, marked ``found=False`` with the reason.

Install the frameworks with the ``integrations`` extra
(``pip install asmr[integrations]``); nothing here imports them until one of the
two modules is imported.
"""
