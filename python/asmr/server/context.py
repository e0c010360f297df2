"""What the handlers of one app share: its settings, snapshot holder, conversations, generators,
keys, rate limiter and metrics; and the auth dependencies that routes declare."""
from __future__ import annotations

import json
import os
import threading
from dataclasses import asdict, dataclass, field, replace
from typing import Optional

from fastapi import Depends, Request
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer

from .auth import ENV_VAR, KeyRing, Principal
from .errors import ApiError
from .limits import Limits, RateLimiter
from .metrics import Metrics

CONFIG_ENV = "ASMR_SERVE_CONFIG"  # how `asmr serve --workers N` hands its settings to each worker


@dataclass(frozen=True)
class ServerConfig:
    """Settings of one server (JSON-serialisable: workers receive them through ASMR_SERVE_CONFIG).
    ``retrieve`` holds RetrieveConfig fields that differ from the defaults. Keys are not in here:
    each worker reads ASMR_API_KEYS and ``api_keys_file`` itself."""

    memory: str
    generator: str = "extractive"
    base_url: Optional[str] = None
    model: Optional[str] = None
    redundancy: str = "list"
    audit: bool = True
    retrieve: dict = field(default_factory=dict)
    limits: dict = field(default_factory=dict)
    api_keys_file: Optional[str] = None
    poll_seconds: float = 0.2
    learn_seconds: float = 300.0  # fold new audit records into learned usage edges this often (0: never)
    embedder: Optional[str] = None  # embedding model of a memory the server creates (default all-MiniLM-L6-v2)
    remember_conversations: bool = False  # write each answered turn into the memory (a request may opt out)

    def to_json(self) -> str:
        return json.dumps(asdict(self))

    @classmethod
    def from_json(cls, text: str) -> "ServerConfig":
        return cls(**json.loads(text))

    def retrieve_config(self):
        from ..retrieve import RetrieveConfig

        changes = dict(self.retrieve)
        if "mix" in changes:
            changes["mix"] = tuple(changes["mix"])
        return replace(RetrieveConfig(), **changes)

    def limits_config(self) -> Limits:
        return Limits(**self.limits)


class _Serialized:
    """A generator used by one thread at a time (a local model's state is not thread-safe)."""

    def __init__(self, inner):
        self._inner, self._lock = inner, threading.Lock()
        self.name = inner.name

    def generate(self, *args, **kwargs):
        with self._lock:
            return self._inner.generate(*args, **kwargs)

    def rewrite(self, sentence: str, unit_text: str) -> str:
        with self._lock:
            return self._inner.rewrite(sentence, unit_text)

    def paraphrase(self, text: str) -> str | None:
        paraphrase = getattr(self._inner, "paraphrase", None)
        if paraphrase is None:
            return None
        with self._lock:
            return paraphrase(text)


class Context:
    """Everything an app's handlers share."""

    def __init__(self, config: ServerConfig, keys: KeyRing | None = None):
        from ..answer import AnswerConfig
        from .conversations import ConversationStore
        from .state import SnapshotHolder

        self.config = config
        self.limits = config.limits_config()
        self.keys = keys if keys is not None else KeyRing.load(os.environ.get(ENV_VAR), config.api_keys_file)
        self.answer_config = AnswerConfig(redundancy=config.redundancy)
        self.metrics = Metrics()
        self.rate = RateLimiter(self.limits.rate, self.limits.burst)
        self.conversations = ConversationStore(config.memory, capacity=self.limits.max_conversations,
                                               max_turns=self.limits.max_turns)
        self.holder = SnapshotHolder(config.memory, retrieve_config=config.retrieve_config(),
                                     poll_seconds=config.poll_seconds, new_embedder=config.embedder,
                                     learn_seconds=config.learn_seconds)
        self.holder.on_swap = lambda snap: self.metrics.generation.set(snap.generation)
        self.metrics.generation.set(self.holder.current.generation)
        self._generators: dict[str, object] = {}
        self._gen_lock = threading.Lock()

    def generator(self, name: str | None):
        """The generator ``name`` (default: the server's), made on first use and kept."""
        from ..generate import get_generator

        name = name or self.config.generator
        with self._gen_lock:
            g = self._generators.get(name)
            if g is not None:
                return g
            snap = self.holder.current.require()
            options = {"base_url": self.config.base_url, "model": self.config.model} if name == "openai" else {}
            try:
                g = get_generator(name, embedder=snap.embedder, **options)
            except ValueError as exc:
                raise ApiError(422, "invalid_request", f"generator: {exc}", "generator") from None
            self._generators[name] = g if name == "extractive" else _Serialized(g)
            return self._generators[name]

    def check_question(self, question: str, field_name: str = "question") -> str:
        if not question.strip():
            raise ApiError(422, "invalid_request", f"{field_name}: empty", field_name)
        if len(question) > self.limits.max_question_chars:
            raise ApiError(422, "invalid_request", f"{field_name}: longer than the limit of "
                                                   f"{self.limits.max_question_chars} characters", field_name)
        return question


_bearer = HTTPBearer(auto_error=False, description="an API key: `Authorization: Bearer KEY`")


def context(request: Request) -> Context:
    return request.app.state.context


def _principal(request: Request, creds: HTTPAuthorizationCredentials | None, ctx: Context) -> Principal:
    if not ctx.keys.configured:
        client = request.client.host if request.client else "unknown"
        return Principal(f"addr:{client}", "anonymous")
    if creds is None or creds.scheme.lower() != "bearer" or not creds.credentials:
        ctx.metrics.auth_failures.labels("401").inc()
        raise ApiError(401, "unauthorized", "this server needs an API key: send 'Authorization: Bearer KEY'",
                       "authorization", {"WWW-Authenticate": "Bearer"})
    who = ctx.keys.lookup(creds.credentials)
    if who is None:
        ctx.metrics.auth_failures.labels("401").inc()
        raise ApiError(401, "unauthorized", "the API key is not valid", "authorization",
                       {"WWW-Authenticate": 'Bearer error="invalid_token"'})
    return who


def _limit_rate(ctx: Context, who: Principal) -> None:
    wait = ctx.rate.take(who.key_id)
    if wait > 0:
        ctx.metrics.rate_limited.inc()
        raise ApiError(429, "rate_limited", f"too many requests; retry in {wait:.2f} s", None,
                       {"Retry-After": str(max(1, int(wait + 0.999)))})


# The two dependencies are async although they never await: FastAPI runs a plain def dependency in
# its thread pool, one more thread hop per request (here a sync search route cost about 0.7 ms more
# than an async one), for work that takes microseconds.
async def reader(request: Request, creds: Optional[HTTPAuthorizationCredentials] = Depends(_bearer)) -> Principal:
    """Dependency of every read route: a valid key when keys are configured; the rate limit."""
    ctx = context(request)
    who = _principal(request, creds, ctx)
    _limit_rate(ctx, who)
    return who


async def writer(request: Request, creds: Optional[HTTPAuthorizationCredentials] = Depends(_bearer)) -> Principal:
    """Dependency of every write route: a key with write scope, always; the rate limit."""
    ctx = context(request)
    if not ctx.keys.configured:
        ctx.metrics.auth_failures.labels("403").inc()
        raise ApiError(403, "forbidden", f"writes need an API key with write scope, and this server has none: "
                                         f"start it with {ENV_VAR}=KEY:write or --api-keys FILE "
                                         f"('KEY write' lines)", "authorization")
    who = _principal(request, creds, ctx)
    if not who.can_write:
        ctx.metrics.auth_failures.labels("403").inc()
        raise ApiError(403, "forbidden", "this API key may read but not write (it needs write scope)",
                       "authorization")
    _limit_rate(ctx, who)
    return who
