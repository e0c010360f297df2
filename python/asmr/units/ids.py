"""Unit addresses: ``memo://<kb>/<doc>/<key>``.

The key is a hash of the unit's kind and text, so a unit keeps its address for
as long as its text does not change, wherever it moves in its document. Names
are restricted to a small alphabet so an address is never a path trick and
always reads the same to a tokenizer.
"""
from __future__ import annotations

import hashlib
import re
from pathlib import PurePosixPath

from .model import InputError

SCHEME = "memo://"
_NAME = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.\-]{0,127}")
_KEY = re.compile(r"[0-9a-f]{12}(?:-[0-9]+)?")
_UNSAFE = re.compile(r"[^A-Za-z0-9_.\-]+")


def check_name(value: str, what: str) -> str:
    """Return ``value`` if it is a valid kb or document name, else raise InputError."""
    if not isinstance(value, str) or not _NAME.fullmatch(value):
        raise InputError(
            f"{what} {value!r}: must be 1-128 characters of letters, digits, '_', '.', '-', "
            "not starting with '.' or '-'")
    if ".." in value:
        raise InputError(f"{what} {value!r}: must not contain '..'")
    return value


def doc_id_from_path(relpath: str) -> str:
    """A document id from a path relative to the ingest root: ``guides/setup.md`` -> ``guides.setup``.

    Ids stay in the ASCII alphabet of ``check_name``: the citation automaton and the markers read
    an id the same way whatever the tokenizer, and ``memo://`` addresses are typed and pasted.
    ASCII characters outside the alphabet become ``_``. A path part with other characters is written
    as a readable ASCII transliteration (anyascii: ``文件`` reads ``WenJian``, ``café`` ``cafe``)
    followed by ``_`` and 8 hex digits of a hash of the part as written, so that ``文件.md`` and
    ``名字.md`` name different documents instead of both becoming ``_``. Two paths of one ingest that
    still map to one id are an error.
    """
    parts = PurePosixPath(relpath.replace("\\", "/")).parts
    parts = [p for p in parts if p not in ("", ".")]
    if not parts or ".." in parts:
        raise InputError(f"path {relpath!r}: cannot name a document (empty or uses '..')")
    stem = parts[-1].rsplit(".", 1)[0] if "." in parts[-1].lstrip(".") else parts[-1]
    return check_name(".".join(_id_part(p) for p in (*parts[:-1], stem)), "document id from path")


def _id_part(part: str) -> str:
    """One path part in the id alphabet. An ASCII part keeps the mapping ids always had (``my file`` ->
    ``my_file``), so existing memories keep their ids; a part with other characters, whose ASCII form
    would drop them, gets a hash of its original."""
    if part.isascii():
        return _UNSAFE.sub("_", part).strip(".-") or "_"
    from anyascii import anyascii  # only for such names

    ascii_form = anyascii(part)
    readable = _UNSAFE.sub("_", ascii_form.replace("..", "_")).strip("._-")
    digest = hashlib.blake2b(part.encode("utf-8", "surrogatepass"), digest_size=4).hexdigest()
    return f"{readable}_{digest}" if readable else f"_{digest}"


def content_hash(kind: str, content: str) -> str:
    return hashlib.blake2b(f"{kind}\x00{content}".encode("utf-8", "surrogatepass"),
                           digest_size=16).hexdigest()


def unit_key(kind: str, content: str, occurrence: int = 0) -> str:
    """Key of a unit: 12 hex digits of its content hash, ``-N`` for the N-th repeat in one document."""
    base = content_hash(kind, content)[:12]
    return base if occurrence == 0 else f"{base}-{occurrence}"


def unit_id(kb: str, doc_id: str, key: str) -> str:
    return f"{SCHEME}{kb}/{doc_id}/{key}"


def parse_unit_id(uid: str) -> tuple[str, str, str]:
    """Split an address into (kb, doc, key); raise InputError if it is not one."""
    if not isinstance(uid, str) or not uid.startswith(SCHEME):
        raise InputError(f"unit id {uid!r}: must start with {SCHEME}")
    parts = uid[len(SCHEME):].split("/")
    if len(parts) != 3:
        raise InputError(f"unit id {uid!r}: must be {SCHEME}<kb>/<doc>/<key>")
    kb, doc, key = parts
    check_name(kb, "knowledge base")
    check_name(doc, "document id")
    if not _KEY.fullmatch(key):
        raise InputError(f"unit id {uid!r}: key {key!r} is not 12 hex digits with an optional -N")
    return kb, doc, key
