"""An OpenAI-compatible face: ``POST /v1/chat/completions`` and ``GET /v1/models``.

Any OpenAI client can use the memory as a model that answers only from it. The
question is the last user message (earlier messages do not add context: the
allowlist is per turn). The message content is the verified answer with numbered
citations (a sentence the memory does not confirm is set apart, under "Not confirmed by
the memory:") and a source list; the ``asmr`` field of the response carries the
citations, the turn and the verifier's audit record. With ``stream: true`` the same
answer comes as server-sent events (``chat.completion.chunk`` objects, the last one
with the ``asmr`` field, then ``data: [DONE]``); the whole answer is verified before
the first chunk is sent, so nothing unverified is ever streamed.

Models: ``asmr`` uses the server's generator, ``asmr-<generator>`` picks one.
``conversation`` (an extension field; OpenAI's Python client sends it with
``extra_body``) keeps turn allowlists across requests; ``remember`` (another) asks a server
started with ``--remember-conversations`` to remember the turn or not (see ``routes``).
"""
from __future__ import annotations

import json
import os
import time
import uuid

from fastapi import APIRouter, Depends, Request
from fastapi.responses import StreamingResponse

from . import schemas as S
from .context import Context, context, reader
from .errors import ApiError
from .routes import answer_question

router = APIRouter()
PREFIX = "asmr"
GENERATORS = ("extractive", "local", "openai")
_STARTED = int(time.time())
# One server-sent event (OpenAPI 3.1: the schema of a text/event-stream describes each event)
SSE_EVENT = {"type": "object", "required": ["data"],
             "properties": {"data": {"type": "string", "description": "a chat.completion.chunk as JSON, or "
                                                                     "[DONE] after the last one"},
                            "event": {"type": "string"}, "id": {"type": "string"}}}


def _models(ctx: Context) -> list[str]:
    names = [PREFIX, f"{PREFIX}-extractive", f"{PREFIX}-local"]
    if ctx.config.base_url or os.environ.get("ASMR_OPENAI_BASE_URL"):
        names.append(f"{PREFIX}-openai")
    return names


def _generator_of(model: str) -> str | None:
    if model == PREFIX:
        return None
    name = model[len(PREFIX) + 1:] if model.startswith(PREFIX + "-") else ""
    if name not in GENERATORS:
        raise ApiError(404, "not_found", f"model {model!r}: not served here; use {PREFIX} or "
                                         f"{PREFIX}-<generator> (GET /v1/models)", "model")
    return name


def _question(messages: list[S.ChatMessage]) -> str:
    for i in range(len(messages) - 1, -1, -1):
        m = messages[i]
        if m.role != "user":
            continue
        if isinstance(m.content, str):
            return m.content
        if isinstance(m.content, list):
            return "\n".join(p.text for p in m.content if p.type == "text" and p.text)
        break
    raise ApiError(422, "invalid_request", "messages: needs a user message with text", "messages")


def _content(ans) -> str:
    if not ans.found:
        return f"{ans.text} ({ans.retrieval.reason})" if ans.retrieval.reason else ans.text
    # A chat client shows the content as the answer: what the memory does not confirm is set apart.
    sentences = ans.sentences()
    body = " ".join(t for t, ok in sentences if ok) or "(No sentence of the answer could be confirmed.)"
    unconfirmed = [t for t, ok in sentences if not ok]
    if unconfirmed:
        body += "\n\nNot confirmed by the memory:\n" + "\n".join(f"- {t}" for t in unconfirmed)
    if ans.citations:
        lines = [f"[{c.number}] {c.unit_id} ({c.doc_id}{' > ' + c.section if c.section else ''})"
                 for c in ans.citations]
        body += "\n\nSources:\n" + "\n".join(lines)
    return body


def _extension(ans, cid: str, generation: int) -> dict:
    d = ans.to_dict()
    return {"found": ans.found, "answer": ans.text, "citations": d["citations"], "confidence": d["confidence"],
            "reason": d["reason"], "candidates": d["candidates"], "conversation": cid, "turn": d["turn"],
            "generation": generation, "generator": d["generator"], "audit": d["verification"]}


def _tokens(text: str) -> int:
    return len(text.split())  # a word count: clients show it, nothing is billed


@router.get("/v1/models", response_model=S.ModelList, tags=["openai"], summary="The models (memory + generator) "
                                                                              "served")
def models(request: Request, _=Depends(reader)):
    ctx: Context = context(request)
    return {"object": "list", "data": [{"id": m, "object": "model", "created": _STARTED, "owned_by": "asmr"}
                                       for m in _models(ctx)]}


@router.post("/v1/chat/completions", response_model=S.ChatResponse, tags=["openai"],
             summary="OpenAI-compatible chat: answers only from the memory, with verified citations",
             responses={200: {"content": {"text/event-stream": {"schema": SSE_EVENT}},
                              "description": "a chat.completion, or with stream: true, server-sent "
                                             "chat.completion.chunk events ending with data: [DONE]"}})
def chat_completions(body: S.ChatRequest, request: Request, _=Depends(reader)):
    ctx: Context = context(request)
    generator = _generator_of(body.model)
    question = _question(body.messages)
    ctx.check_question(question, "messages")
    ans, cid, generation, memo = answer_question(ctx, question, body.conversation, generator, None, "chat",
                                                 body.remember)
    content = _content(ans)
    rid, created = f"chatcmpl-{uuid.uuid4().hex}", int(time.time())
    ext = {**_extension(ans, cid, generation), **memo}
    if body.stream:
        return StreamingResponse(_events(rid, created, body.model, content, ext), media_type="text/event-stream",
                                 headers={"Cache-Control": "no-cache"})
    prompt = _tokens(question)
    completion = _tokens(content)
    return {"id": rid, "object": "chat.completion", "created": created, "model": body.model,
            "choices": [{"index": 0, "message": {"role": "assistant", "content": content},
                         "finish_reason": "stop"}],
            "usage": {"prompt_tokens": prompt, "completion_tokens": completion,
                      "total_tokens": prompt + completion},
            "asmr": ext}


def _events(rid: str, created: int, model: str, content: str, ext: dict):
    """The verified answer as chat.completion.chunk events, a few words each."""
    def event(delta: dict, finish: str | None = None, **extra) -> str:
        chunk = {"id": rid, "object": "chat.completion.chunk", "created": created, "model": model,
                 "choices": [{"index": 0, "delta": delta, "finish_reason": finish}], **extra}
        return f"data: {json.dumps(chunk, ensure_ascii=False)}\n\n"

    yield event({"role": "assistant", "content": ""})
    words = content.split(" ")
    for i in range(0, len(words), 8):
        piece = " ".join(words[i:i + 8])
        yield event({"content": piece if i == 0 else " " + piece})
    yield event({}, "stop", asmr=ext)
    yield "data: [DONE]\n\n"
