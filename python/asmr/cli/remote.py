"""Asking a running ``asmr serve`` instead of loading the memory and its models again.

A server that holds a memory leaves ``<memory>/server.json`` (its URL, process id and the memory's
real path) while it runs, and removes it when it stops. ``asmr search`` and ``asmr ask`` read it
before loading anything: when the process is alive, the memory is the same and the server
answers, the question goes to it (milliseconds, where a cold start takes seconds); otherwise the
command answers by itself. ``--server URL`` names a server explicitly; ``--no-server`` never asks
one. The API key, when the server needs one, comes from ``ASMR_API_KEY``.

Only the standard library is imported here: this runs before anything heavy loads.
"""
from __future__ import annotations

import json
import os
import sys
import urllib.error
import urllib.request
from pathlib import Path

from .common import EXIT_BAD_INPUT, EXIT_NOT_FOUND, fail, memory_dir

FILE = "server.json"
KEY_ENV = "ASMR_API_KEY"
TIMEOUT = 600.0  # seconds; a local model's first answer on a busy machine takes a while


class RemoteError(Exception):
    """The server could not be reached (``status`` 0) or refused the request (its HTTP status)."""

    def __init__(self, url: str, status: int, message: str):
        super().__init__(f"server {url}: {message}")
        self.status, self.message = status, message


def announce(memory: str | os.PathLike, url: str) -> Path | None:
    """Write ``<memory>/server.json`` for this process; None when the directory cannot take it."""
    path = Path(memory) / FILE
    part = path.with_name(FILE + ".part")
    try:
        part.write_text(json.dumps({"url": url, "pid": os.getpid(), "memory": os.path.realpath(memory)}))
        os.replace(part, path)  # a reader sees the old file or the new one, never half of one
    except OSError:
        return None
    return path


def withdraw(path: Path | None) -> None:
    """Remove the file ``announce`` wrote, unless another server has written its own since."""
    if path is None:
        return
    try:
        if json.loads(path.read_text()).get("pid") == os.getpid():
            path.unlink()
    except (OSError, ValueError):
        pass


def discover(memory: str | os.PathLike) -> str | None:
    """The URL of the server that holds ``memory`` now, or None (no file, a dead process, another memory)."""
    try:
        info = json.loads((Path(memory) / FILE).read_text())
        pid, url, where = int(info["pid"]), str(info["url"]), str(info["memory"])
    except (OSError, ValueError, KeyError, TypeError):
        return None
    if where != os.path.realpath(memory) or not _alive(pid):
        return None
    return url


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # alive, another user's
        return True
    return True


def post(url: str, route: str, body: dict, *, timeout: float = TIMEOUT) -> dict:
    """POST ``body`` as JSON to ``url + route``; the decoded reply, or RemoteError."""
    headers = {"content-type": "application/json"}
    key = os.environ.get(KEY_ENV)
    if key:
        headers["authorization"] = f"Bearer {key}"
    request = urllib.request.Request(url.rstrip("/") + route, json.dumps(body).encode(), headers)
    try:
        with urllib.request.urlopen(request, timeout=timeout) as reply:
            return json.loads(reply.read())
    except urllib.error.HTTPError as exc:
        try:
            message = json.loads(exc.read())["error"]["message"]
        except (ValueError, KeyError, TypeError):
            message = exc.reason
        raise RemoteError(url, exc.code, f"{exc.code}: {message}") from None
    except (urllib.error.URLError, OSError, ValueError) as exc:
        reason = getattr(exc, "reason", exc)
        raise RemoteError(url, 0, f"cannot reach it ({reason})") from None


def local_only(args, defaults: dict) -> list[str]:
    """The flags given that a server cannot honour (it answers with its own settings), as typed."""
    return ["--" + name.replace("_", "-") for name, default in defaults.items()
            if getattr(args, name, default) != default]


def exchange(args, url: str, named: bool, route: str, body: dict, defaults: dict, does: str
             ) -> dict | int | None:
    """The server's reply to ``body`` at ``route``; else an exit code (flags ``defaults`` lists that a
    ``--server`` cannot honour, or the server's refusal), or None: a server found by itself cannot be
    used, and this process answers. ``does``: what the server does with its own settings ("answers")."""
    unsent = local_only(args, defaults)
    if unsent:
        return fail(f"--server: {', '.join(unsent)} cannot be sent to a server (it {does} with its own "
                    "settings); leave them out, or drop --server", EXIT_BAD_INPUT) if named else None
    try:
        return post(url, route, body)
    except RemoteError as exc:
        return failed(exc, named)


def server_for(args) -> tuple[str | None, bool]:
    """(URL, named): the server to ask — ``--server`` (named) or the one the memory's file names —
    or None with ``--no-server`` or when none runs."""
    if getattr(args, "server", None):
        return args.server, True
    if getattr(args, "no_server", False):
        return None, False
    return discover(memory_dir(args)), False


def failed(exc: RemoteError, named: bool) -> int | None:
    """The exit code of a server's refusal; None (answer here) when a server found by itself cannot
    be used (gone, or it needs a key this shell lacks)."""
    if not named and exc.status in (0, 401, 403):
        hint = f" (set {KEY_ENV})" if exc.status in (401, 403) else ""
        print(f"asmr: {exc}{hint}; answering here instead", file=sys.stderr)
        return None
    return fail(str(exc), EXIT_NOT_FOUND if exc.status in (404, 409) else EXIT_BAD_INPUT)
