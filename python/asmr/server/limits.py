"""Request limits: body size (an ASGI middleware), sizes of fields, and a per-key rate limit."""
from __future__ import annotations

import json
import math
import threading
import time
from dataclasses import dataclass

from .errors import error_body


@dataclass(frozen=True)
class Limits:
    """What one request may ask for. ``rate`` is requests per second per key (or per client
    address when no keys are configured), ``burst`` the most at once; rate 0 turns it off."""

    max_body_bytes: int = 10 * 1024 * 1024
    max_question_chars: int = 2000
    max_answer_chars: int = 20_000  # an answer sent to /v1/verify
    max_citations: int = 64        # markers in an answer sent to /v1/verify
    max_documents: int = 1000      # documents in one /v1/ingest
    max_conversations: int = 10_000  # kept in conversations.sqlite, least recently used dropped first
    max_turns: int = 500           # turns of one conversation
    rate: float = 100.0
    burst: int = 200

    def __post_init__(self) -> None:
        for name in ("max_body_bytes", "max_question_chars", "max_answer_chars", "max_citations", "max_documents",
                     "max_conversations", "max_turns", "burst"):
            if getattr(self, name) < 1:
                raise ValueError(f"{name.replace('_', '-')} {getattr(self, name)}: must be at least 1")
        if not (self.rate >= 0 and math.isfinite(self.rate)):
            raise ValueError(f"rate limit {self.rate}: must be a finite number >= 0 (0: off)")


class RateLimiter:
    """Token buckets by client id. Per process: with N workers a client gets up to N times the rate."""

    MAX_CLIENTS = 100_000  # past this many buckets, full (idle) ones are forgotten

    def __init__(self, rate: float, burst: int):
        self.rate, self.burst = rate, burst
        self._buckets: dict[str, tuple[float, float]] = {}  # id -> (tokens, time)
        self._lock = threading.Lock()

    def take(self, client: str) -> float:
        """0.0 if the request may go; else the seconds until it could."""
        if self.rate <= 0:
            return 0.0
        now = time.monotonic()
        with self._lock:
            tokens, t = self._buckets.get(client, (float(self.burst), now))
            tokens = min(float(self.burst), tokens + (now - t) * self.rate)
            if tokens < 1.0:
                self._buckets[client] = (tokens, now)
                return (1.0 - tokens) / self.rate
            self._buckets[client] = (tokens - 1.0, now)
            if len(self._buckets) > self.MAX_CLIENTS:
                self._forget_idle(now)
            return 0.0

    def _forget_idle(self, now: float) -> None:
        full = [c for c, (tok, t) in self._buckets.items() if tok + (now - t) * self.rate >= self.burst]
        for c in full:
            del self._buckets[c]


class BodyLimit:
    """ASGI middleware: a body over ``max_bytes`` gets 413 before any handler reads it.

    The declared Content-Length is checked first; a chunked body is counted as it arrives
    and buffered, so a handler never sees a body past the limit.
    """

    def __init__(self, app, max_bytes: int):
        self.app, self.max_bytes = app, max_bytes

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http" or scope["method"] in ("GET", "HEAD", "OPTIONS"):
            return await self.app(scope, receive, send)
        length = dict(scope["headers"]).get(b"content-length")
        if length is not None:
            try:
                too_big = int(length) > self.max_bytes
            except ValueError:
                too_big = False  # the server rejects a bad Content-Length itself
            if too_big:
                return await self._refuse(send)
            return await self.app(scope, receive, send)
        chunks, size = [], 0
        while True:
            message = await receive()
            if message["type"] != "http.request":
                return  # the client went away
            chunks.append(message.get("body", b""))
            size += len(chunks[-1])
            if size > self.max_bytes:
                return await self._refuse(send)
            if not message.get("more_body"):
                break
        body, sent = b"".join(chunks), False

        async def replay():
            nonlocal sent
            if not sent:
                sent = True
                return {"type": "http.request", "body": body, "more_body": False}
            return await receive()
        return await self.app(scope, replay, send)

    async def _refuse(self, send) -> None:
        payload = json.dumps(error_body(413, "body_too_large", f"body: larger than the limit of "
                                                               f"{self.max_bytes} bytes", "body")).encode()
        await send({"type": "http.response.start", "status": 413,
                    "headers": [(b"content-type", b"application/json"),
                                (b"content-length", str(len(payload)).encode()), (b"connection", b"close")]})
        await send({"type": "http.response.body", "body": payload})
