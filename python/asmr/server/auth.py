"""API keys: where they come from, their scopes, and the constant-time check.

Keys are bearer tokens (``Authorization: Bearer KEY``) with a scope, ``read`` or
``write`` (write includes read). They come from

- ``ASMR_API_KEYS``: comma-separated ``KEY`` (read) or ``KEY:write`` / ``KEY:read``;
- ``--api-keys FILE``: one ``KEY [read|write]`` a line (default read); blank lines and
  lines starting with ``#`` are skipped.

A key is 16 to 256 printable characters without whitespace or commas. Rules: with no key
configured, reads are open and writes are refused (403: configure a write key); with
keys, every read needs a valid key (401 without one) and a write needs a write key (403
for a read key). A key never appears in a message or a log line; the check compares a
digest of the given token with every configured key's digest using
``hmac.compare_digest``, so its time does not depend on where a guess goes wrong.
"""
from __future__ import annotations

import hashlib
import hmac
import os
import re
from dataclasses import dataclass
from pathlib import Path

SCOPES = ("read", "write")
ENV_VAR = "ASMR_API_KEYS"
_KEY = re.compile(r"[!-~]{16,256}")  # printable ASCII, no space


class KeyConfigError(ValueError):
    """A key file or ASMR_API_KEYS entry is malformed (the message never contains the key)."""


@dataclass(frozen=True)
class Principal:
    """Who made a request: ``key_id`` is a short digest (safe to log and to rate-limit by)."""

    key_id: str
    scope: str  # "read", "write", or "anonymous" when no keys are configured

    @property
    def can_write(self) -> bool:
        return self.scope == "write"


def _digest(key: str) -> bytes:
    return hashlib.sha256(key.encode("utf-8")).digest()


def _check_key(key: str, where: str) -> str:
    if "," in key or not _KEY.fullmatch(key):
        raise KeyConfigError(f"{where}: a key must be 16-256 printable characters without spaces or commas")
    return key


def parse_env(value: str) -> list[tuple[str, str]]:
    """``KEY,KEY:write`` -> [(key, scope)]."""
    out = []
    for i, item in enumerate(x.strip() for x in value.split(",")):
        if not item:
            continue
        key, scope = item, "read"
        head, sep, tail = item.rpartition(":")
        if sep and tail in SCOPES:
            key, scope = head, tail
        out.append((_check_key(key, f"{ENV_VAR} entry {i + 1}"), scope))
    return out


def parse_file(path: str | os.PathLike) -> list[tuple[str, str]]:
    """A key file: ``KEY [read|write]`` a line."""
    try:
        lines = Path(path).read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        raise KeyConfigError(f"--api-keys {path}: cannot read ({getattr(exc, 'strerror', None) or exc})") from None
    out = []
    for n, line in enumerate(lines, 1):
        parts = line.split()
        if not parts or parts[0].startswith("#"):
            continue
        if len(parts) > 2 or (len(parts) == 2 and parts[1] not in SCOPES):
            raise KeyConfigError(f"--api-keys {path}:{n}: expected 'KEY [read|write]'")
        out.append((_check_key(parts[0], f"--api-keys {path}:{n}"), parts[1] if len(parts) == 2 else "read"))
    return out


class KeyRing:
    """The configured keys, held only as SHA-256 digests."""

    def __init__(self, keys: list[tuple[str, str]] = ()):
        scopes: dict[bytes, str] = {}
        for key, scope in keys:
            d = _digest(key)
            if scopes.get(d) != "write":  # the same key listed twice keeps its widest scope
                scopes[d] = scope
        self._keys = list(scopes.items())

    @classmethod
    def load(cls, env: str | None = None, file: str | os.PathLike | None = None) -> "KeyRing":
        """Keys from ``env`` (the value of ASMR_API_KEYS) and ``file``."""
        keys = parse_env(env) if env else []
        if file:
            keys += parse_file(file)
        return cls(keys)

    @property
    def configured(self) -> bool:
        return bool(self._keys)

    def lookup(self, token: str) -> Principal | None:
        """The principal of a presented token, or None. Every key is compared, in constant time."""
        given = _digest(token)
        scope = None
        for digest, s in self._keys:
            if hmac.compare_digest(given, digest):
                scope = s
        return None if scope is None else Principal(given[:6].hex(), scope)
