"""The FastAPI app of one memory: ``create_app(config)``, and ``app_from_env()`` for uvicorn workers."""
from __future__ import annotations

import os
import threading
from contextlib import asynccontextmanager

from fastapi import FastAPI
from fastapi.openapi.docs import get_swagger_ui_html
from fastapi.openapi.utils import get_openapi
from fastapi.responses import HTMLResponse

from .. import __version__
from . import errors
from .auth import KeyRing
from .context import CONFIG_ENV, Context, ServerConfig
from .limits import BodyLimit
from .metrics import RequestMetrics
from .schemas import ErrorResponse

DESCRIPTION = """\
Retrieval with verified citations over one ASMR memory.

**Auth.** API keys are bearer tokens (`Authorization: Bearer KEY`) with scope `read` or `write`.
With no key configured, reads are open and writes are refused (403). With keys, every route but
`/healthz`, `/docs` and `/openapi.json` (they describe the API, not the memory) needs a valid key
(401), and `/v1/ingest` needs a write key (403 otherwise). Keys are 16 to 256 printable characters.

**Errors.** Every error is `{"error": {"code", "type", "field", "param", "message"}}`; `field`
names the request field at fault (`question`, `documents.0.id`). Invalid requests get 422, bodies
over the size limit 413, too many requests 429 (with `Retry-After`), an empty memory 409.

**Snapshots.** Every search and answer is read from one memory generation, reported as
`generation`. An ingest commits atomically; requests switch to the new generation after the commit.
"""

_ERROR = {"model": ErrorResponse}
ERROR_RESPONSES = {
    401: {**_ERROR, "description": "no API key, or an invalid one (keys are configured)"},
    403: {**_ERROR, "description": "the key lacks write scope, or no write key is configured"},
    404: {**_ERROR, "description": "no such unit, conversation, turn or model"},
    409: {**_ERROR, "description": "the memory is empty, or another ingest holds the writer"},
    413: {**_ERROR, "description": "body larger than the server's limit"},
    422: {**_ERROR, "description": "invalid request; error.field names the field"},
    429: {**_ERROR, "description": "rate limit; see Retry-After"},
    500: {**_ERROR, "description": "server error (details only in the server log)"},
}


def create_app(config: ServerConfig, *, keys: KeyRing | None = None) -> FastAPI:
    """An app serving ``config.memory``; ``keys`` default to ASMR_API_KEYS and ``config.api_keys_file``."""
    from .openai_compat import router as openai_router
    from .routes import router

    ctx = Context(config, keys)

    @asynccontextmanager
    async def lifespan(app: FastAPI):
        ctx.holder.start_watching()
        # in the background: the server answers searches meanwhile, and the first answer waits less
        threading.Thread(target=ctx.holder.warm_up, name="asmr-warm-up", daemon=True).start()
        try:
            yield
        finally:
            ctx.holder.close()
            ctx.conversations.close()

    # /docs is ours (below) and /redoc is off: both load their scripts from a CDN, and no installed
    # package carries Swagger UI's assets to serve them from here
    app = FastAPI(title="ASMR", version=__version__, description=DESCRIPTION, lifespan=lifespan,
                  docs_url=None, redoc_url=None)
    app.state.context = ctx
    errors.install(app)
    app.include_router(router, responses=ERROR_RESPONSES)
    app.include_router(openai_router, responses=ERROR_RESPONSES)
    app.add_middleware(BodyLimit, max_bytes=ctx.limits.max_body_bytes)
    app.add_middleware(RequestMetrics, metrics=ctx.metrics)  # added last: outermost, so it sees 413s too

    def openapi() -> dict:
        if app.openapi_schema is None:
            doc = get_openapi(title=app.title, version=app.version, description=app.description,
                              routes=app.routes)
            # FastAPI's own validation-error schemas describe a shape this server never sends
            for name in ("HTTPValidationError", "ValidationError"):
                doc.get("components", {}).get("schemas", {}).pop(name, None)
            app.openapi_schema = doc
        return app.openapi_schema
    app.openapi = openapi

    @app.get("/docs", include_in_schema=False)
    async def docs() -> HTMLResponse:
        page = get_swagger_ui_html(openapi_url="/openapi.json", title="ASMR API").body.decode()
        return HTMLResponse(page.replace("<body>", "<body>" + OFFLINE_NOTE, 1))
    return app


# Swagger UI's scripts come from a CDN: without the internet the page stays blank, so it says so first.
OFFLINE_NOTE = ('<p style="font-family: sans-serif; margin: 1em">This page loads Swagger UI from '
                'cdn.jsdelivr.net and needs the internet. The API description itself is served from here: '
                '<a href="/openapi.json">/openapi.json</a>.</p>')


def app_from_env() -> FastAPI:
    """The app factory uvicorn imports in each worker (``asmr serve --workers N``)."""
    return create_app(ServerConfig.from_json(os.environ[CONFIG_ENV]))
