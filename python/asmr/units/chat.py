"""Reading conversations into Documents: a session is a document, a turn is a unit.

Accepted input (a JSON file, or JSONL with one record a line):

- sessions: ``{"id"?, "title"?, "date_time"|"date"|"effective_date"|..., "turns": [{"speaker",
  "text", "caption"?, "time"?}]}``; a JSON file may hold one session, a list of them, or
  ``{"sessions": [...]}``;
- the OpenAI form: ``{"date": ..., "messages": [{"role", "content", "name"?}]}`` (the speaker is
  ``name``, else ``role``; ``system`` and ``tool`` messages are instructions, not conversation,
  and are left out); a session without a date takes ``default_date`` (``--effective-date``);
- one turn a line, as ``asmr eval synth --chat`` writes: ``{"speaker", "text", "session",
  "effective_date"}``; the lines of one ``session`` make one document;
- LoCoMo-style records: ``{"sample_id", "conversation": {"session_1_date_time",
  "session_1": [turns], ...}}``; LongMemEval-style records: ``{"question_id", "haystack_sessions":
  [[messages]], "haystack_dates": [...], "haystack_session_ids"?}``.

Dates are ISO 8601, or written as "1:56 pm on 8 May, 2023" or "2023/05/20 (Sat) 02:21".

Each turn is written as one paragraph of the document's text, so the chunker makes it one unit::

    [2023-05-08 14:02] Alice: I moved to Porto yesterday (2023-05-07). [image: a harbour at dusk]

The stamp is the turn's own time, else its session's; relative time in the text is followed by
its absolute form (``text.relative_time.annotate``), so that BM25, the dense index, key facts and
answers all see the date. The document's format is ``chat``: consecutive short turns of one
speaker make one unit (``units.turns``; ``join_turns=False`` gives format ``text``, a turn a
unit). A unit's key is a hash of its text, and the units already stored are kept as they are, so
appending turns to a session keeps the ids of the turns already stored. Every problem is an
InputError naming the file, the line or session, and the turn.

``conversation_document`` grows the document of a conversation held with the memory itself
(``asmr chat --remember``, a server's remembered conversations) by one exchange at a time.
"""
from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import date, datetime
from pathlib import Path

from ..text.relative_time import annotate
from .ids import check_name, doc_id_from_path
from .model import DOC_TYPES, Document, InputError
from .read import check_encodable, read_text_file

DATE_FIELDS = ("date_time", "datetime", "date", "time", "timestamp", "effective_date", "session_date")
# Written forms of a date-time that chat datasets use besides ISO 8601.
_DATE_FORMATS = ("%I:%M %p on %d %B, %Y", "%I:%M %p on %d %b, %Y", "%Y/%m/%d (%a) %H:%M", "%Y/%m/%d")
_SKIPPED_ROLES = ("system", "tool", "function", "developer")
_BLANK_LINES = re.compile(r"\s*\n\s*\n\s*")  # a blank line inside a turn would split it into two units
_SESSION_KEY = re.compile(r"session_(\d+)")


def parse_time(value, where: str) -> datetime | date:
    """A session's or turn's date or date-time; InputError naming ``where`` if it is none."""
    if isinstance(value, str) and value.strip():
        text = value.strip()
        try:
            parsed = datetime.fromisoformat(text.replace("Z", "+00:00") if text.endswith("Z") else text)
            return parsed if len(text) > 10 else parsed.date()
        except ValueError:
            pass
        for fmt in _DATE_FORMATS:
            try:
                parsed = datetime.strptime(text, fmt)
            except ValueError:
                continue
            return parsed if "%H" in fmt or "%I" in fmt else parsed.date()
    raise InputError(f"{where}: date {value!r} is not ISO 8601 (2023-05-08T14:02), "
                     "'1:56 pm on 8 May, 2023' or '2023/05/20 (Sat) 02:21'")


def _stamp(when: datetime | date) -> str:
    if isinstance(when, datetime):
        return when.strftime("%Y-%m-%d %H:%M")
    return when.isoformat()


def _iso(when: datetime | date) -> str:
    if isinstance(when, datetime):
        return when.replace(tzinfo=None, microsecond=0).isoformat()
    return when.isoformat()


def _one_line(value: str) -> str:
    return " ".join(value.split())


def _text_of(content) -> str | None:
    """A message's text: a string, or the text parts of an OpenAI content list."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = [p.get("text") for p in content if isinstance(p, dict) and p.get("type") == "text"]
        if all(isinstance(p, str) for p in parts):
            return "\n".join(parts)
    return None


def render_turn(when: datetime | date, speaker: str, text: str, caption: str = "", *,
                resolve: bool = True) -> str:
    """One turn as a paragraph: ``[2023-05-08 14:02] Alice: text (dates resolved) [image: caption]``.

    ``resolve=False`` leaves relative time as written: for text that quotes others (an assistant's
    answer made of the memory's sentences, already resolved against their own dates)."""
    day = when.date() if isinstance(when, datetime) else when
    body = _BLANK_LINES.sub("\n", annotate(text.strip(), day) if resolve else text.strip())
    if caption:
        body = f"{body} [image: {_one_line(caption)}]".strip()
    return f"[{_stamp(when)}] {_one_line(speaker)}: {body}"


def _session_time(record: dict, where: str, default_date: str | None) -> datetime | date:
    for key in DATE_FIELDS:
        if record.get(key) is not None:
            return parse_time(record[key], f"{where}: {key!r}")
    if default_date is not None:
        return parse_time(default_date, "--effective-date")
    raise InputError(f"{where}: session has no date (give it one of {', '.join(DATE_FIELDS)}, "
                     "or pass --effective-date)")


def _turn(item, where: str, session_time: datetime | date, errors: str) -> str | None:
    """The rendered turn, or None for a message that is not conversation (a system prompt)."""
    if not isinstance(item, dict):
        raise InputError(f"{where}: expected a JSON object, got {type(item).__name__}")
    role = item.get("role")
    if role in _SKIPPED_ROLES and "speaker" not in item:
        return None
    speaker = item.get("speaker") or item.get("name") or role
    if not isinstance(speaker, str) or not speaker.strip():
        raise InputError(f'{where}: needs a "speaker" (or a message "role")')
    text = item["text"] if "text" in item else _text_of(item.get("content"))
    caption = item.get("caption") or item.get("blip_caption") or item.get("image_caption") or ""
    if not isinstance(caption, str):
        raise InputError(f'{where}: "caption" must be a string')
    if not isinstance(text, str) or not (text.strip() or caption.strip()):
        raise InputError(f'{where}: turn has no text (needs a non-empty "text" or "content" string)')
    if text.startswith(f"{speaker}: "):  # a log that already names the speaker in the text
        text = text[len(speaker) + 2:]
    when = session_time
    for key in ("time", "date_time", "timestamp"):
        if item.get(key) is not None:
            when = parse_time(item[key], f"{where}: {key!r}")
            break
    return render_turn(when, check_encodable(where, '"speaker"', speaker, errors),
                       check_encodable(where, '"text"', text, errors),
                       check_encodable(where, '"caption"', caption, errors))


def session_document(record: dict, where: str, doc_id: str, *, default_date: str | None = None,
                     doc_type: str | None = None, errors: str = "strict", join_turns: bool = True,
                     dotted: bool = False) -> Document:
    """One session (``turns`` or ``messages``) as a Document whose effective date is the session's.

    ``join_turns``: short turns of one speaker may make one unit (``units.turns``); else every turn
    is a unit of its own. ``dotted`` names a turn as a JSON path (``sessions.0.turns.1``) rather
    than ``where, turn 2``."""
    if not isinstance(record, dict):
        raise InputError(f"{where}: expected a JSON object, got {type(record).__name__}")
    key = "turns" if "turns" in record else "messages"
    items = record.get(key)
    if not isinstance(items, list):
        raise InputError(f'{where}: session needs a "turns" or "messages" list')
    when = _session_time(record, where, default_date)
    turns = [t for i, item in enumerate(items, 1)
             if (t := _turn(item, f"{where}.{key}.{i - 1}" if dotted else f"{where}, turn {i}", when,
                            errors)) is not None]
    if not turns:
        raise InputError(f"{where}: session has no turns")
    title = record.get("title") or f"Conversation, {_stamp(when)}"
    if not isinstance(title, str):
        raise InputError(f'{where}: "title" must be a string')
    kind = doc_type or record.get("type") or "other"
    if kind not in DOC_TYPES:
        raise InputError(f"{where}: document type {kind!r} is not one of {', '.join(DOC_TYPES)}")
    return Document(doc_id=doc_id, text="\n\n".join(turns), fmt="chat" if join_turns else "text",
                    title=check_encodable(where, '"title"', title, errors), doc_type=kind,
                    effective_date=_iso(when), source=where)


def _doc_id(record: dict, where: str, prefix: str, number) -> str:
    """The session's ``id`` as given, else ``<prefix>.session-<session or number>``."""
    given = record.get("id")
    session = record.get("session_id", record.get("session"))
    try:
        if given is not None and not isinstance(given, (bool, dict, list, float)):
            return check_name(str(given), "session id")
        if session is not None and not isinstance(session, (bool, dict, list, float)):
            number = session
        return check_name(f"{prefix}.session-{number}", "session id")
    except InputError as e:
        raise InputError(f"{where}: {e}") from None


def chat_documents(records: list, name: str, prefix: str, *, default_date: str | None = None,
                   doc_type: str | None = None, errors: str = "strict", lines: list[int] | None = None,
                   on_error: Callable[[InputError], None] | None = None,
                   join_turns: bool = True) -> Iterator[Document]:
    """Documents of parsed chat records (sessions, one-turn records or LoCoMo samples).

    ``name`` names the input in errors; ``lines`` gives each record's line number (JSONL), else a
    record is named by its position; ``prefix`` starts the ids of sessions that carry none;
    ``join_turns``: see ``session_document``.
    """
    fmt = "chat" if join_turns else "text"
    flat: dict[str, list[tuple[str, dict]]] = {}  # one-turn records, by session
    number = 0
    for i, record in enumerate(records):
        where = f"{name}:{lines[i]}" if lines is not None else f"{name}: record {i + 1}"
        try:
            if not isinstance(record, dict):
                raise InputError(f"{where}: expected a JSON object, got {type(record).__name__}")
            if isinstance(record.get("conversation"), dict):
                yield from _locomo(record, where, prefix, doc_type, errors, on_error, join_turns)
                continue
            if isinstance(record.get("haystack_sessions"), list):
                yield from _haystack(record, where, prefix, doc_type, errors, on_error, join_turns)
                continue
            if "turns" not in record and "messages" not in record and (
                    "speaker" in record or "role" in record):
                session = record.get("session", record.get("session_id", ""))
                flat.setdefault(str(session), []).append((where, record))
                continue
            number += 1
            yield session_document(record, where, _doc_id(record, where, prefix, number),
                                   default_date=default_date, doc_type=doc_type, errors=errors,
                                   join_turns=join_turns)
        except InputError as e:
            if on_error is None:
                raise
            on_error(e)
    for session, turns in flat.items():
        where = turns[0][0] if len(turns) == 1 else f"{turns[0][0]}-{turns[-1][0].rsplit(':', 1)[-1]}"
        try:
            first = turns[0][1]
            when = _session_time(first, turns[0][0], default_date)
            rendered = [_turn(t, w, _session_time(t, w, default_date), errors) for w, t in turns]
            doc_id = check_name(f"{prefix}.session-{session}" if session else prefix, "session id")
            yield Document(doc_id=doc_id, text="\n\n".join(r for r in rendered if r is not None), fmt=fmt,
                           title=f"Conversation, {_stamp(when)}", doc_type=doc_type or "other",
                           effective_date=_iso(when), source=where)
        except InputError as e:
            if on_error is None:
                raise
            on_error(e)


def _scoped(prefix: str, owner, where: str) -> str:
    """The session ids' prefix of a record that names its owner (a sample, a question): ``prefix.owner``."""
    if owner is None:
        return prefix
    try:
        return check_name(f"{prefix}.{owner}", "session id")
    except InputError as e:
        raise InputError(f"{where}: {e}") from None


def _locomo(record: dict, where: str, prefix: str, doc_type, errors, on_error,
            join_turns) -> Iterator[Document]:
    """The sessions of one LoCoMo-style sample: ``conversation.session_N`` with ``session_N_date_time``."""
    conversation = record["conversation"]
    prefix = _scoped(prefix, record.get("sample_id"), where)
    numbers = sorted(int(m.group(1)) for key in conversation if (m := _SESSION_KEY.fullmatch(key)))
    for n in numbers:
        here = f"{where}: session_{n}"
        try:
            session = {"turns": conversation[f"session_{n}"],
                       "date_time": conversation.get(f"session_{n}_date_time")}
            if session["date_time"] is None:
                raise InputError(f"{here}: session has no date (needs session_{n}_date_time)")
            yield session_document(session, here, f"{prefix}.session-{n}", doc_type=doc_type, errors=errors,
                                   join_turns=join_turns)
        except InputError as e:
            if on_error is None:
                raise
            on_error(e)


def _haystack(record: dict, where: str, prefix: str, doc_type, errors, on_error,
              join_turns) -> Iterator[Document]:
    """The sessions of one LongMemEval-style record: ``haystack_sessions`` (lists of messages) with
    ``haystack_dates`` and, if given, ``haystack_session_ids``."""
    sessions, dates = record["haystack_sessions"], record.get("haystack_dates")
    ids = record.get("haystack_session_ids") or [None] * len(sessions)
    if not isinstance(dates, list) or len(dates) != len(sessions) or len(ids) != len(sessions):
        raise InputError(f"{where}: needs one haystack_dates entry (and session id) a haystack session")
    prefix = _scoped(prefix, record.get("question_id"), where)
    for n, (messages, when, sid) in enumerate(zip(sessions, dates, ids), 1):
        here = f"{where}: session {n}"
        try:
            name = check_name(f"{prefix}.{sid if sid is not None else f'session-{n}'}", "session id")
            yield session_document({"messages": messages, "date_time": when}, here, name, doc_type=doc_type,
                                   errors=errors, join_turns=join_turns)
        except InputError as e:
            if on_error is None:
                raise
            on_error(e)


def iter_chat(path: str | Path, *, errors: str = "strict", doc_type: str | None = None,
              default_date: str | None = None, on_error: Callable[[InputError], None] | None = None,
              join_turns: bool = True) -> Iterator[Document]:
    """Documents of a chat file: one a session (see the module's docstring).

    The file is JSON, or, when it does not parse as one JSON value, JSONL. Session ids that the
    input does not give start with the file's name: ``chat.jsonl`` -> ``chat.session-1``.
    ``join_turns``: see ``session_document``.
    """
    path = Path(path)
    name = str(path)
    text = read_text_file(path, errors)
    try:
        prefix = doc_id_from_path(path.name)
    except InputError as e:
        raise InputError(f"{name}: {e}") from None
    value = None
    if path.suffix.lower() != ".jsonl":
        try:
            value = json.loads(text)
        except json.JSONDecodeError as e:
            if e.msg != "Extra data":  # more than one value: JSONL
                raise InputError(f"{name}: bad JSON: {e.msg} at line {e.lineno} column {e.colno}") from None
    if value is None:
        records, lines = [], []
        for number, line in enumerate(text.splitlines(), 1):
            if not line.strip():
                continue
            try:
                records.append(json.loads(line))
            except json.JSONDecodeError as e:
                raise InputError(f"{name}:{number}: bad JSON: {e.msg} at column {e.colno}") from None
            lines.append(number)
        yield from chat_documents(records, name, prefix, default_date=default_date, doc_type=doc_type,
                                  errors=errors, lines=lines, on_error=on_error, join_turns=join_turns)
        return
    if isinstance(value, dict) and isinstance(value.get("sessions"), list):
        value = value["sessions"]
    records = value if isinstance(value, list) else [value]
    if not records:
        raise InputError(f"{name}: no sessions")
    yield from chat_documents(records, name, prefix, default_date=default_date, doc_type=doc_type,
                              errors=errors, on_error=on_error, join_turns=join_turns)


# -- conversations held with the memory ----------------------------------------------------------

CONVERSATION_PREFIX = "conversation"  # the document of conversation <id> is conversation.<id>
_PLAIN_ID = re.compile(r"[A-Za-z0-9_\-][A-Za-z0-9_.\-]{0,63}")
_UNSAFE_ID = re.compile(r"[^A-Za-z0-9_.\-]+")


def conversation_doc_id(conversation: str) -> str:
    """The document that holds a conversation with the memory: ``conversation.<id>``. An id the
    document-name alphabet cannot hold as it is (a server's ``a:b``, a long one) is written in it,
    shortened, with 8 hex digits of a hash of the id: two conversations never share a document."""
    if _PLAIN_ID.fullmatch(conversation) and ".." not in conversation:
        return check_name(f"{CONVERSATION_PREFIX}.{conversation}", "conversation")
    readable = _UNSAFE_ID.sub("_", conversation).replace("..", "_").strip("._-")[:64]
    digest = hashlib.blake2b(conversation.encode("utf-8", "surrogatepass"), digest_size=4).hexdigest()
    return check_name(f"{CONVERSATION_PREFIX}.{readable}_{digest}" if readable else
                      f"{CONVERSATION_PREFIX}.{digest}", "conversation")


@dataclass(frozen=True, slots=True)
class SaidTurn:
    """One turn of a conversation with the memory: when, who (``user``, ``assistant``) and what.
    ``resolve``: resolve relative time in it against ``when`` (the user's words; not an answer
    made of the memory's sentences, whose dates are their own)."""
    when: datetime
    speaker: str
    text: str
    resolve: bool = True


def conversation_document(doc_id: str, previous: Document | None, turns: list[SaidTurn], *,
                          source: str) -> Document:
    """The document of a conversation grown by ``turns``: the current version's text (``previous``,
    None for a new conversation) with the turns appended as paragraphs, its title, type and date
    kept, so that every unit it has keeps its id (``units.turns``). A new conversation is dated by
    its first turn. InputError when ``previous`` is a document of another kind, or no turn has text.
    """
    if previous is not None and previous.fmt != "chat":
        raise InputError(f"document {doc_id}: exists and is not a conversation (its format is "
                         f"{previous.fmt})")
    said = [t for t in turns if t.text.strip()]
    if not said:
        raise InputError(f"document {doc_id}: no turn with text to remember")
    rendered = "\n\n".join(render_turn(t.when, t.speaker, check_encodable(source, '"text"', t.text,
                                                                          "replace"), resolve=t.resolve)
                           for t in said)
    if previous is None:
        started = said[0].when.replace(second=0, microsecond=0)
        return Document(doc_id=doc_id, text=rendered, fmt="chat", title=f"Conversation, {_stamp(started)}",
                        effective_date=_iso(started), source=source)
    return Document(doc_id=doc_id, text=f"{previous.text}\n\n{rendered}", fmt="chat", title=previous.title,
                    doc_type=previous.doc_type, effective_date=previous.effective_date, source=source)
