"""The one error shape of the HTTP face, and the handlers that produce it.

Every 4xx and 5xx body is ``{"error": {"code", "type", "field", "param", "message"}}``.
``code`` and ``field`` are ASMR's (``field`` names the request field at fault, dotted:
``documents.0.id``); ``type`` and ``param`` (= ``field``) are there so that OpenAI clients,
which read those keys, show a useful message for ``/v1/chat/completions`` too.
Request validation fails with 422, and so does a retrieval setting that RetrieveConfig refuses
(it checks its own fields; the message names the field). A server error says only that it
happened: the traceback goes to the server log, never to the client.
"""
from __future__ import annotations

import logging

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException as StarletteHTTPException

from ..retrieve.types import ConfigError

log = logging.getLogger("asmr.server")

# OpenAI's error "type" for each status
_TYPES = {400: "invalid_request_error", 401: "authentication_error", 403: "permission_error",
          404: "not_found_error", 405: "invalid_request_error", 409: "conflict_error",
          413: "invalid_request_error", 422: "invalid_request_error", 429: "rate_limit_error"}
_CODES = {400: "bad_request", 401: "unauthorized", 403: "forbidden", 404: "not_found", 405: "method_not_allowed",
          409: "conflict", 413: "body_too_large", 422: "invalid_request", 429: "rate_limited"}


class ApiError(Exception):
    """An error a handler raises on purpose: status, code, the field at fault, a message."""

    def __init__(self, status: int, code: str, message: str, field: str | None = None,
                 headers: dict[str, str] | None = None):
        super().__init__(message)
        self.status, self.code, self.message, self.field, self.headers = status, code, message, field, headers


def error_body(status: int, code: str, message: str, field: str | None = None) -> dict:
    return {"error": {"code": code, "type": _TYPES.get(status, "server_error"), "field": field, "param": field,
                      "message": message}}


def error_response(status: int, code: str, message: str, field: str | None = None,
                   headers: dict[str, str] | None = None) -> JSONResponse:
    return JSONResponse(error_body(status, code, message, field), status_code=status, headers=headers)


def _field(loc: tuple) -> str | None:
    """``("body", "documents", 0, "id")`` -> ``documents.0.id``; the whole body -> ``body``."""
    parts = [str(p) for p in loc]
    if parts and parts[0] in ("body", "query", "path", "header"):
        parts = parts[1:] or parts[:1]
    return ".".join(parts) or None


def _validation_message(err: dict) -> str:
    msg = err.get("msg", "invalid")
    if err.get("type") == "json_invalid":
        return "the body is not valid JSON"
    if err.get("type") == "missing":
        return "required"
    return msg


def install(app: FastAPI) -> None:
    """Route every error through the one shape."""

    @app.exception_handler(ApiError)
    async def _api_error(request: Request, exc: ApiError):
        return error_response(exc.status, exc.code, exc.message, exc.field, exc.headers)

    @app.exception_handler(RequestValidationError)
    async def _invalid(request: Request, exc: RequestValidationError):
        errors = exc.errors()
        first = errors[0] if errors else {}
        field = "body" if first.get("type") == "json_invalid" else _field(tuple(first.get("loc", ())))
        message = f"{field}: {_validation_message(first)}" if field else _validation_message(first)
        if len(errors) > 1:
            message += f" (and {len(errors) - 1} more problem(s))"
        return error_response(422, "invalid_request", message, field)

    @app.exception_handler(ConfigError)
    async def _config(request: Request, exc: ConfigError):
        return error_response(422, "invalid_request", f"{exc.field}: {exc.reason}", exc.field)

    @app.exception_handler(StarletteHTTPException)
    async def _http(request: Request, exc: StarletteHTTPException):
        status = exc.status_code
        message = exc.detail if isinstance(exc.detail, str) else "request refused"
        return error_response(status, _CODES.get(status, "error"), message, None, getattr(exc, "headers", None))

    @app.exception_handler(Exception)
    async def _crash(request: Request, exc: Exception):
        log.exception("unhandled error in %s %s", request.method, request.url.path)
        return error_response(500, "internal", "internal server error; the details are in the server log")
