"""The native endpoints: search, answer, verify, units, ingest, health and metrics.

Handlers are plain ``def``: FastAPI runs them in its thread pool, and the work they do
(embedding, faiss, the spreading kernel, SQLite) is blocking and mostly releases the GIL.
Each takes one snapshot reference at its start and reads only from it.
"""
from __future__ import annotations

import json
import os
import re
import time
import uuid
from datetime import datetime

from fastapi import APIRouter, Depends, Path, Request
from fastapi.responses import Response

from ..units.model import DOC_TYPES, Document, InputError
from . import schemas as S
from .context import Context, context, reader, writer
from .conversations import TurnLimit, TurnOpener, remember_exchange
from .errors import ApiError

router = APIRouter()


def hit_view(h, unit) -> dict:
    """A retrieval hit with the unit's document, section and text (what a client quotes)."""
    return {"unit_id": h.unit_id, "row": h.row, "score": h.score, "similarity": h.similarity,
            "strength": h.strength, "centrality": h.centrality, "hop": h.hop, "seed": h.seed,
            "path": [{"node": p.node, "edge_kind": p.edge_kind, "edge_weight": p.edge_weight} for p in h.path],
            "effective_at": h.effective_at, "alternative_to": h.alternative_to,
            "previous_version": h.previous_version, "disagrees_with": h.disagrees_with, "doc_id": unit.doc_id,
            "section": list(unit.section_path), "text": unit.content, "kind": unit.kind}


@router.post("/v1/search", response_model=S.SearchResponse, tags=["read"],
             summary="Recall units for a question: ranked, with scores and recall paths")
def search(body: S.SearchRequest, request: Request, _=Depends(reader)):
    ctx: Context = context(request)
    question = ctx.check_question(body.question)
    with ctx.holder.use() as snap:
        result = snap.search(question, body.k)
        units = {u.row: u for u in snap.memory.units_at_rows([h.row for h in result.hits])}
        generation = snap.generation
    ctx.metrics.observe_retrieval(result, "search")
    body = {"question": result.question, "found": result.found, "confidence": result.confidence,
            "reason": result.reason, "hits": [hit_view(h, units[h.row]) for h in result.hits],
            "seconds": result.seconds, "cached": result.cached, "generation": generation}
    # The hot path: encoded directly, skipping FastAPI's re-validation of the model (the schema
    # still documents it, and the schemathesis test checks that the body conforms).
    return Response(json.dumps(body, ensure_ascii=False, allow_nan=False).encode(), media_type="application/json")


def answer_question(ctx: Context, question: str, conversation: str | None, generator: str | None,
                    k: int | None, endpoint: str, remember: bool | None = None):
    """Recall, allowlist, generate and verify one turn, and remember it when asked (``remember``, by
    default the server's setting); returns (Answer, conversation id, generation, {"remembered":
    document id or None, "remember_error": why a turn to remember was not, or None})."""
    question = ctx.check_question(question)
    if remember and not ctx.config.remember_conversations:
        raise ApiError(422, "invalid_request", "remember: this server does not remember conversations "
                                               "(its operator starts it with --remember-conversations)",
                       "remember")
    remember = ctx.config.remember_conversations if remember is None else remember
    cid = conversation or uuid.uuid4().hex[:16]
    asked = datetime.now()
    t0 = time.perf_counter()
    with ctx.holder.use() as snap:
        snap.require()
        gen = ctx.generator(generator)
        result = snap.search(question, k)
        try:
            ans = snap.answerer(gen, ctx.answer_config).answer(question, result, TurnOpener(ctx.conversations, cid),
                                                               started=t0)
        except TurnLimit as exc:
            raise ApiError(422, "invalid_request", str(exc), "conversation") from None
        if ans.verification is not None and ctx.config.audit:
            from ..verify import audit
            audit.append(snap.memory.directory, ans.verification,
                         answer=ans.generation.text if ans.generation else None, question=question)
        generation = snap.generation
    ctx.metrics.observe_retrieval(result, endpoint)
    ctx.metrics.observe_verification(ans.verification)
    memo = {"remembered": None, "remember_error": None}
    if remember:
        try:
            memo["remembered"] = remember_exchange(ctx.holder, cid, question, ans, asked)
        except (ApiError, InputError) as exc:  # the answer stands; the client is told what was not kept
            memo["remember_error"] = f"turn {ans.allowlist.turn_id} not remembered: {exc}"
    return ans, cid, generation, memo


@router.post("/v1/answer", response_model=S.AnswerResponse, tags=["read"],
             summary="Answer from the memory only, with verified citations")
def answer(body: S.AnswerRequest, request: Request, _=Depends(reader)):
    ctx: Context = context(request)
    ans, cid, generation, memo = answer_question(ctx, body.question, body.conversation, body.generator,
                                                 body.k, "answer", body.remember)
    return {**ans.to_dict(), "conversation": cid, "generation": generation, **memo}


@router.post("/v1/verify", response_model=S.VerifyResponse, tags=["read"],
             summary="Check an answer's citations against one turn's allowlist")
def verify(body: S.VerifyRequest, request: Request, _=Depends(reader)):
    from ..verify.citations import scan_markers

    ctx: Context = context(request)
    if len(body.answer) > ctx.limits.max_answer_chars:
        raise ApiError(422, "invalid_request", f"answer: longer than the limit of {ctx.limits.max_answer_chars} "
                                               "characters", "answer")
    cites, bad = scan_markers(body.answer)
    if len(cites) + len(bad) > ctx.limits.max_citations:
        raise ApiError(422, "invalid_request", f"answer: {len(cites) + len(bad)} citation markers, more than "
                                               f"the limit of {ctx.limits.max_citations}", "answer")
    turns = ctx.conversations.turns(body.conversation)
    if not turns:
        raise ApiError(404, "not_found", f"conversation {body.conversation!r}: unknown to this server (answer "
                                         "a question in it first)", "conversation")
    n = body.turn or len(turns)
    if n > len(turns):
        raise ApiError(404, "not_found", f"turn {n}: conversation {body.conversation!r} has {len(turns)} turn(s)",
                       "turn")
    with ctx.holder.use() as snap:
        verification = snap.verifier().verify(body.answer, turns[n - 1])
        if ctx.config.audit:
            from ..verify import audit
            audit.append(snap.memory.directory, verification, answer=body.answer)
        generation = snap.generation
    ctx.metrics.observe_verification(verification)
    return {**verification.to_dict(), "generation": generation}


@router.get("/v1/units/{unit_id:path}", response_model=S.UnitResponse, tags=["read"],
            summary="One unit by its address, with its status, successor and links")
def unit(request: Request, unit_id: str = Path(description="memo://<kb>/<doc>/<key>, as is or percent-encoded"),
         _=Depends(reader)):
    from ..units.ids import parse_unit_id

    ctx: Context = context(request)
    if unit_id.startswith("memo:/") and not unit_id.startswith("memo://"):
        unit_id = "memo://" + unit_id[len("memo:/"):]  # some clients and proxies merge the '//' of a path
    try:
        parse_unit_id(unit_id)
    except InputError as exc:
        raise ApiError(422, "invalid_request", str(exc), "unit_id") from None
    with ctx.holder.use() as snap:
        u = snap.require().memory.unit(unit_id)
        if u is None:
            raise ApiError(404, "not_found", f"unit {unit_id}: not in memory", "unit_id")
        links = snap.memory.links_from(unit_id)
        return {**u.to_dict(), "links": links, "generation": snap.generation}


def _documents(body: S.IngestRequest, limit: int) -> list[Document]:
    """The request's documents, every one checked before the writer opens (bad input writes nothing)."""
    from ..units.ids import check_name
    from ..units.read import check_date, check_encodable, first_h1, front_matter, with_resolved_time

    if body.sessions is not None:
        raise ApiError(422, "invalid_request", 'sessions: only with "type": "chat"', "sessions")
    if body.documents is None:
        raise ApiError(422, "invalid_request", "documents: required", "documents")
    if len(body.documents) > limit:
        raise ApiError(422, "invalid_request", f"documents: {len(body.documents)} documents, more than the "
                                               f"limit of {limit} a request", "documents")
    docs, seen = [], {}
    for i, d in enumerate(body.documents):
        where = f"documents.{i}"
        try:
            check_name(d.id, "document id")
        except InputError as exc:
            raise ApiError(422, "invalid_request", f"{where}.id: {exc}", f"{where}.id") from None
        if d.id in seen:
            raise ApiError(422, "invalid_request", f"{where}.id: {d.id!r} is also documents.{seen[d.id]}.id",
                           f"{where}.id")
        seen[d.id] = i
        if not d.text.strip():
            raise ApiError(422, "invalid_request", f"{where}.text: empty document", f"{where}.text")
        for field in ("text", "title"):
            try:
                check_encodable(f"{where}.{field}", "the string", getattr(d, field) or "")
            except InputError as exc:
                raise ApiError(422, "invalid_request", str(exc), f"{where}.{field}") from None
        if d.effective_date is not None:
            try:
                check_date(f"{where}.effective_date", d.effective_date)
            except InputError as exc:
                raise ApiError(422, "invalid_request", str(exc), f"{where}.effective_date") from None
        fmt = d.format or "text"
        title, doc_type, date = d.title, d.type, d.effective_date
        if fmt == "markdown":  # front matter fills what the request leaves out, as `asmr ingest` does
            fields, body = front_matter(d.text)
            title = title or fields.get("title") or first_h1(d.text, body)
            doc_type = doc_type or fields.get("type") or None
            date = date or fields.get("effective_date") or fields.get("date") or None
            try:
                if doc_type is not None and doc_type not in DOC_TYPES:
                    raise InputError(f"front matter: document type {doc_type!r} is not one of "
                                     f"{', '.join(DOC_TYPES)}")
                if date is not None:
                    check_date("front matter", date)
            except InputError as exc:
                raise ApiError(422, "invalid_request", f"{where}.text: {exc}", f"{where}.text") from None
        # relative time resolved against the document's date, as `asmr ingest` reads a file
        docs.append(with_resolved_time(Document(doc_id=d.id, text=d.text, fmt=fmt, title=title or d.id,
                                                doc_type=doc_type or "other", effective_date=date,
                                                source=f"POST /v1/ingest {where}")))
    return docs


# Where a chat InputError points: "sessions.0.turns.1: 'time': ..." -> sessions.0.turns.1.time
_SESSION_FIELD = re.compile(r"(sessions\.\d+(?:\.(?:turns|messages)\.\d+)?): (?:'(\w+)'|\"(\w+)\")?")


def _sessions(body: S.IngestRequest, limit: int) -> list[Document]:
    """The request's chat sessions as documents (``units.chat``), every one checked before the writer
    opens (bad input writes nothing)."""
    from ..units.chat import DATE_FIELDS, parse_time, session_document

    if body.documents is not None:
        raise ApiError(422, "invalid_request", 'documents: not with "type": "chat" (send sessions)',
                       "documents")
    if body.sessions is None:
        raise ApiError(422, "invalid_request", 'sessions: required with "type": "chat"', "sessions")
    if len(body.sessions) > limit:
        raise ApiError(422, "invalid_request", f"sessions: {len(body.sessions)} sessions, more than the "
                                               f"limit of {limit} a request", "sessions")
    if body.effective_date is not None:
        try:
            parse_time(body.effective_date, "effective_date")
        except InputError as exc:
            raise ApiError(422, "invalid_request", str(exc), "effective_date") from None
    docs, seen = [], {}
    for i, session in enumerate(body.sessions):
        where = f"sessions.{i}"
        if session.id in seen:
            again = f"{where}.id: {session.id!r} is also sessions.{seen[session.id]}.id"
            raise ApiError(422, "invalid_request", again, f"{where}.id")
        seen[session.id] = i
        record = session.model_dump(exclude_none=True)
        if body.effective_date is None and not any(record.get(k) is not None for k in DATE_FIELDS):
            raise ApiError(422, "invalid_request",
                           f"{where}: session has no date (give it date_time, or send effective_date)", where)
        try:
            # errors=None: a lone surrogate is refused without the CLI's hint (--errors replace)
            doc = session_document(record, where, session.id, default_date=body.effective_date,
                                   doc_type=session.type, join_turns=body.join_turns, dotted=True,
                                   errors=None)
        except InputError as exc:
            m = _SESSION_FIELD.match(str(exc))
            field = (m.group(1) + ("." + (m.group(2) or m.group(3)) if m.group(2) or m.group(3) else "")
                     if m else where)
            raise ApiError(422, "invalid_request", str(exc), field) from None
        doc.source = f"POST /v1/ingest {where}"
        docs.append(doc)
    return docs


@router.post("/v1/ingest", response_model=S.IngestResponse, tags=["write"],
             summary="Add or revise documents, or chat sessions, in one transaction (needs a write key)")
def ingest(body: S.IngestRequest, request: Request, _=Depends(writer)):
    from ..store import DEFAULT_KB
    from ..units.ids import check_name

    ctx: Context = context(request)
    kb = body.kb or DEFAULT_KB
    try:
        check_name(kb, "knowledge base")
    except InputError as exc:
        raise ApiError(422, "invalid_request", f"kb: {exc}", "kb") from None
    if body.type == "chat":
        docs = _sessions(body, ctx.limits.max_documents)
    else:
        for name in ("effective_date", "join_turns"):  # a document carries its own effective_date
            if name in body.model_fields_set:
                raise ApiError(422, "invalid_request", f'{name}: only with "type": "chat"', name)
        docs = _documents(body, ctx.limits.max_documents)
    try:
        report = ctx.holder.ingest(docs, kb)
    except InputError as exc:  # found by the chunker; the transaction was rolled back
        ctx.metrics.ingests.labels("rejected").inc()
        raise ApiError(422, "invalid_request", f"{exc}; nothing was written",
                       "sessions" if body.type == "chat" else "documents") from None
    except ApiError:
        ctx.metrics.ingests.labels("busy").inc()
        raise
    ctx.metrics.ingests.labels("committed").inc()
    return report.to_dict()


@router.get("/healthz", response_model=S.HealthResponse, tags=["operations"],
            summary="Liveness and the generation being served (no key needed)")
async def healthz(request: Request):  # async: no thread-pool hop for the probe
    holder = context(request).holder
    snap = holder.current
    return {"status": "ok", "generation": snap.generation, "active_units": snap.active_units,
            "embed_model": snap.memory.embed_model if snap.memory is not None else None, "worker": os.getpid(),
            "warmed_up": holder.warmed_up.is_set()}


@router.get("/metrics", tags=["operations"], summary="Prometheus metrics of this worker",
            response_class=Response, responses={200: {"content": {"text/plain": {"schema": {"type": "string"}}}}})
def metrics(request: Request, _=Depends(reader)):
    body, content_type = context(request).metrics.render()
    return Response(body, media_type=content_type)
