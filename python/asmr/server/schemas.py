"""Request and response bodies of the HTTP face (they are the OpenAPI document's schemas).

The shapes of ``SearchRequest`` (``{"question", "k"?}``) and ``IngestRequest``
(``{"documents": [{"id", "text", "title"?, "type"?, "effective_date"?}]}``) are relied on by
other tools: add optional fields only (``IngestRequest`` with ``"type": "chat"`` takes
``sessions`` instead of ``documents``). Limits that the operator sets at start
(question length, documents per ingest, ...) are checked by the handlers, which
answer 422 naming the field, so the schemas carry only fixed bounds.
"""
from __future__ import annotations

from typing import Any, Literal, Optional, Union

from pydantic import BaseModel, ConfigDict, Field

from ..retrieve.types import MIN_K
from ..units.model import DOC_TYPES

# A request's k: at least RetrieveConfig's MIN_K, at most MAX_K, a limit of this API (the server's
# own --k has none). Declared in the schemas so that the OpenAPI document shows the bounds.
MAX_K = 100
CONVERSATION_ID = r"^[A-Za-z0-9_.:-]{1,64}$"
NAME = r"^[A-Za-z0-9_][A-Za-z0-9_.\-]{0,127}$"  # a kb or document name (asmr.units.ids.check_name)
Generator = Literal["extractive", "local", "openai"]
DocType = Literal[DOC_TYPES]  # type: ignore[valid-type]


class ErrorDetail(BaseModel):
    code: str = Field(description="machine-readable: invalid_request, unauthorized, forbidden, not_found, "
                                  "conflict, body_too_large, rate_limited, memory_empty, ingest_busy, internal")
    type: str = Field(description="OpenAI-style error type (invalid_request_error, authentication_error, ...)")
    field: Optional[str] = Field(description="the request field at fault, dotted (documents.0.id), if any")
    param: Optional[str] = Field(description="the same as field, under OpenAI's name")
    message: str


class ErrorResponse(BaseModel):
    error: ErrorDetail


# -- search ----------------------------------------------------------------------------------

class SearchRequest(BaseModel):
    question: str = Field(min_length=1, description="the question; at most the server's question limit "
                                                    "(default 2000 characters)")
    k: Optional[int] = Field(None, ge=MIN_K, le=MAX_K,
                             description="units returned (default: the server's k, 10)")


class PathStep(BaseModel):
    node: str
    edge_kind: Optional[str]
    edge_weight: Optional[float]


class Hit(BaseModel):
    unit_id: str
    row: int
    score: float
    similarity: float
    strength: float
    centrality: float
    hop: int
    seed: bool
    path: list[PathStep]
    effective_at: str
    alternative_to: Optional[str]
    previous_version: Optional[str]
    disagrees_with: Optional[str] = Field(None, description="a recalled unit of another document that gives "
                                          "the same slot another value, where nothing tells which holds")
    doc_id: str
    section: list[str]
    text: str
    kind: Optional[str] = Field(None, description="the unit's kind: paragraph, list, table_row, heading, ...")


class SearchResponse(BaseModel):
    question: str
    found: bool = Field(description="false: the memory is not confident it holds the answer (hits are the "
                                    "closest candidates)")
    confidence: float
    reason: str
    hits: list[Hit]
    seconds: float
    cached: bool
    generation: int = Field(description="the memory generation (snapshot) every hit was read from")


# -- answer and verify ----------------------------------------------------------------------

REMEMBER = ("write the question and the sentences of the answer the memory confirmed into the memory, as "
            "document conversation.<conversation> (a chat session of user and assistant turns); default: "
            "the server's setting (asmr serve --remember-conversations, off unless given); true on a server "
            "that does not remember is a 422")


class AnswerRequest(BaseModel):
    question: str = Field(min_length=1)
    conversation: Optional[str] = Field(None, pattern=CONVERSATION_ID,
                                        description="conversation id; turns of one conversation get their "
                                                    "own allowlists; a new id starts a conversation, none "
                                                    "starts an anonymous one")
    generator: Optional[Generator] = Field(None, description="default: the server's --generator")
    k: Optional[int] = Field(None, ge=MIN_K, le=MAX_K)
    remember: Optional[bool] = Field(None, description=REMEMBER)


class PreviousVersion(BaseModel):
    unit_id: str = Field(description="the superseded unit the cited one replaced")
    text: str = Field(description="its sentence that changed")
    until: str = Field(description="the date the cited unit took effect")


class OlderStatement(BaseModel):
    unit_id: str = Field(description="the recalled unit that said otherwise before the cited one")
    text: str = Field(description="its sentence that gives the other value")
    effective_at: str


class Citation(BaseModel):
    number: int
    unit_id: str
    doc_id: str
    section: str
    text: str
    previous: Optional[PreviousVersion] = Field(None, description="what the cited fact was before it "
                                                "changed; null when the unit has no earlier version")
    older: Optional[OlderStatement] = Field(None, description="a recalled unit that said otherwise "
                                            "before (an older document, an earlier turn of a conversation), "
                                            "kept out of the answer; null when none was recalled")


class RecallHit(BaseModel):
    unit_id: str
    score: float
    similarity: float
    hop: int
    seed: bool
    path: list[PathStep] = Field(description="seed -> ... -> unit, with each edge's kind and weight")
    alternative_to: Optional[str]
    disagrees_with: Optional[str] = None


class AnswerResponse(BaseModel):
    question: str
    answer: str = Field(description="the verified answer with [cite:ID] markers")
    answer_numbered: str = Field(description="the same with [1], [2], ... for the citations")
    found: bool
    refused: bool = Field(description="not found, or the answer declines (nothing confirmed, 'not found', "
                                      "'the sources do not say')")
    confidence: float
    reason: str
    citations: list[Citation]
    disagreement: list[str] = Field(default_factory=list, description="the cited units the answer states as "
                                    "disagreeing (two per disagreement), empty when none")
    confirmed: str = Field("", description="the numbered answer's sentences the memory confirms (each "
                                           "keeps a valid citation)")
    unconfirmed: list[str] = Field(default_factory=list, description="its sentences the memory does not "
                                   "confirm (uncited or weakened): show them as such, not as the memory's")
    candidates: list[str]
    recall: list[RecallHit] = Field(description="the recalled units (the candidates when not found), best first, "
                                                "each with its recall path")
    conversation: str
    turn: str = Field(description="<conversation>/<n>: pass conversation and n to /v1/verify")
    redundancy: str
    verification: Optional[dict[str, Any]] = Field(description="the audit record: every sentence, its "
                                                               "citations, checks and outcome")
    generator: Optional[str]
    timings: dict[str, float]
    generation: int
    remembered: Optional[str] = Field(None, description="the document this turn was written to "
                                      "(conversation.<id>, in kb); null when it was not remembered")
    remember_error: Optional[str] = Field(None, description="why a turn that was to be remembered was not "
                                          "(the memory was busy); the answer stands")


class VerifyRequest(BaseModel):
    answer: str = Field(description="an answer with [cite:ID] markers; at most the server's citation limit")
    conversation: str = Field(pattern=CONVERSATION_ID, description="the conversation whose turn allowed the ids")
    turn: Optional[int] = Field(None, ge=1, description="the turn (default: the conversation's latest)")


class VerifyResponse(BaseModel):
    turn: str
    text: str = Field(description="the answer after keep / weaken / drop")
    counts: dict[str, int]
    audit: list[dict[str, Any]]
    seconds: float
    config: dict[str, Any]
    generation: int


# -- units, ingest, health -------------------------------------------------------------------

class Link(BaseModel):
    kind: str
    target: str
    target_doc: Optional[str]
    text: str


class UnitResponse(BaseModel):
    row: int
    id: str
    kb: str
    doc_id: str
    doc_version: int
    ord: int
    kind: str
    parent_id: Optional[str]
    section_path: list[str]
    offset_start: int
    offset_end: int
    content: str
    content_hash: str
    created_at: str
    effective_at: str
    status: Literal["active", "superseded", "deprecated"]
    superseded_by: Optional[str]
    embed_model: str
    links: list[Link]
    generation: int


class IngestDocument(BaseModel):
    id: str = Field(pattern=NAME, description="document id: 1-128 letters, digits, '_', '.', '-', not starting "
                                              "with '.' or '-', without '..'")
    text: str = Field(description="the document's text (stored as given)")
    title: Optional[str] = None
    type: Optional[DocType] = None
    effective_date: Optional[str] = Field(None, description="ISO 8601 date or datetime")
    format: Optional[Literal["text", "markdown"]] = Field(None, description="default text")


class ContentPart(BaseModel):
    model_config = ConfigDict(extra="allow")
    type: str
    text: Optional[str] = None


class ChatTurn(BaseModel):
    """A turn: ``speaker`` and ``text``, or an OpenAI message (``role``, ``content``, ``name``?)."""

    model_config = ConfigDict(extra="allow")
    speaker: Optional[str] = None
    text: Optional[str] = None
    role: Optional[str] = Field(None, description="an OpenAI message's role: the speaker unless name is "
                                                  "given; system, tool, function and developer messages are "
                                                  "left out")
    content: Union[str, list[ContentPart], None] = None
    name: Optional[str] = None
    caption: Optional[str] = Field(None, description="an image's caption, kept after the text")
    time: Optional[str] = Field(None, description="the turn's own date-time (default: the session's)")


class ChatSession(BaseModel):
    """One conversation session: a document dated by the session, a turn a paragraph."""

    model_config = ConfigDict(extra="allow")
    id: str = Field(pattern=NAME, description="document id of the session; sending the session again with "
                                              "turns appended revises it, and every unit it had keeps its id")
    title: Optional[str] = None
    date_time: Optional[str] = Field(None, description="when the session took place: ISO 8601, '1:56 pm on 8 "
                                                       "May, 2023' or '2023/05/20 (Sat) 02:21'; also read "
                                                       "from date (default: the request's effective_date)")
    date: Optional[str] = None
    type: Optional[DocType] = None
    turns: Optional[list[ChatTurn]] = Field(None, description="the turns, in order (or messages)")
    messages: Optional[list[ChatTurn]] = Field(None, description="OpenAI messages, in order (or turns)")


class IngestRequest(BaseModel):
    documents: Optional[list[IngestDocument]] = Field(None, min_length=1,
                                                      description="at most the server's document limit "
                                                                  "(default 1000); not with type chat")
    kb: Optional[str] = Field(None, pattern=NAME, description="knowledge base (default kb)")
    type: Optional[Literal["documents", "chat"]] = Field(
        None, description="documents (default): documents holds texts; chat: sessions holds conversations, a "
                          "session a document and a turn a unit, relative time resolved (see docs/memory.md)")
    sessions: Optional[list[ChatSession]] = Field(None, min_length=1, description="type chat: the sessions, "
                                                  "at most the server's document limit")
    effective_date: Optional[str] = Field(None, description="type chat: the date of sessions that carry none")
    join_turns: bool = Field(True, description="type chat: consecutive short turns (up to 12 words) of one "
                                               "speaker make one unit; false: a turn a unit")


class IngestedDocument(BaseModel):
    kb: str
    doc_id: str
    version: int
    status: Literal["new", "revised", "unchanged"]
    units: int
    kept: int
    added: int
    superseded: int
    deprecated: int


class IngestResponse(BaseModel):
    documents: list[IngestedDocument]
    counts: dict[str, int]
    embedded: int
    reused_vectors: int
    generation: int = Field(description="the generation readers answer from once this response is sent")
    active_units: int
    seconds: float
    timings: dict[str, float]


class HealthResponse(BaseModel):
    status: Literal["ok"]
    generation: int
    active_units: int
    embed_model: Optional[str]
    worker: int = Field(description="process id of the worker that answered (with --workers N)")
    warmed_up: bool = Field(description="the worker's start-up work is done (the verifier's model and what "
                                        "recall reads on a first question, in each language of the memory, are "
                                        "loaded in the background meanwhile): a readiness signal")


# -- OpenAI-compatible chat ------------------------------------------------------------------

class ChatMessage(BaseModel):
    model_config = ConfigDict(extra="allow")
    role: str
    content: Union[str, list[ContentPart], None] = None


class ChatRequest(BaseModel):
    """OpenAI's chat request; fields this server does not use (temperature, top_p, ...) are accepted
    and ignored. The question is the last user message."""

    model_config = ConfigDict(extra="allow")
    model: str = Field(description="asmr (the server's generator) or asmr-<generator>; see GET /v1/models")
    messages: list[ChatMessage] = Field(min_length=1)
    stream: Optional[bool] = False
    conversation: Optional[str] = Field(None, pattern=CONVERSATION_ID,
                                        description="ASMR extension: conversation id for turn allowlists")
    remember: Optional[bool] = Field(None, description="ASMR extension: " + REMEMBER)


class ChatResponseMessage(BaseModel):
    role: Literal["assistant"]
    content: str


class ChatChoice(BaseModel):
    index: int
    message: ChatResponseMessage
    finish_reason: str


class Usage(BaseModel):
    prompt_tokens: int
    completion_tokens: int
    total_tokens: int


class ChatResponse(BaseModel):
    id: str
    object: Literal["chat.completion"]
    created: int
    model: str
    choices: list[ChatChoice]
    usage: Usage
    asmr: dict[str, Any] = Field(description="ASMR extension: found, citations, conversation, turn, snapshot "
                                             "generation and the verifier's audit record")


class ModelCard(BaseModel):
    id: str
    object: Literal["model"]
    created: int
    owned_by: str


class ModelList(BaseModel):
    object: Literal["list"]
    data: list[ModelCard]
