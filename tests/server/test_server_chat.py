"""Conversations through the HTTP face, in process: POST /v1/ingest with "type": "chat", and the
opt-in remembering of the server's own conversations."""
from __future__ import annotations

import functools
import re

import pytest
from fastapi.testclient import TestClient

from asmr.server.app import create_app
from asmr.server.auth import KeyRing
from asmr.server.context import ServerConfig
from asmr.store.memory import Memory
from serverproc import READ, READ_KEY, WRITE, WRITE_KEY, build_memory

TRIP = {"id": "trip", "date_time": "2023-05-08T14:02", "turns": [
    {"speaker": "Alice", "text": "I moved to Porto yesterday!"},
    {"speaker": "Bob", "text": "Congrats!"},
    {"speaker": "Bob", "text": "When do we visit?"}]}
OPENAI = {"id": "support", "messages": [
    {"role": "system", "content": "You are helpful."},
    {"role": "user", "content": [{"type": "text", "text": "I adopted a cat last week."}]},
    {"role": "assistant", "name": "Ada", "content": "Lovely!"}]}


def _client(memory, **config) -> TestClient:
    app = create_app(ServerConfig(memory=str(memory), retrieve={"confidence_threshold": 0.05}, **config),
                     keys=KeyRing.load(f"{READ_KEY},{WRITE_KEY}:write"))
    return TestClient(app)


@pytest.fixture
def served(tmp_path):
    """A client of a server over the small handbook memory; yields (client, memory directory)."""
    memory = build_memory(tmp_path / "memory")
    with _client(memory) as c:
        yield c, memory
        c.app.state.context.holder.warmed_up.wait(120)  # no model load left running at exit


def _units(memory, doc_id: str, status: str | None = "active") -> list[tuple[str, str]]:
    with Memory(memory, load_indexes=False) as m:
        return [(u.id, u.content) for u in m.units_of("kb", doc_id, status=status)]


def _error(r, field: str) -> str:
    assert r.status_code == 422, r.text
    err = r.json()["error"]
    assert err["field"] == err["param"] == field, err
    assert err["message"].startswith(field.split(".")[0]) and "Traceback" not in err["message"]
    return err["message"]


def test_ingest_chat_takes_sessions_and_openai_messages(served):
    c, memory = served
    body = {"type": "chat", "sessions": [TRIP, OPENAI], "effective_date": "2023-05-08"}
    r = c.post("/v1/ingest", json=body, headers=WRITE)
    assert r.status_code == 200, r.text
    assert [(d["doc_id"], d["status"], d["units"]) for d in r.json()["documents"]] == \
        [("trip", "new", 2), ("support", "new", 2)]
    trip = _units(memory, "trip")
    assert [t for _, t in trip] == [
        "[2023-05-08 14:02] Alice: I moved to Porto yesterday (2023-05-07)!",
        "[2023-05-08 14:02] Bob: Congrats!\n\n[2023-05-08 14:02] Bob: When do we visit?"]  # short turns join
    assert [t for _, t in _units(memory, "support")] == [
        "[2023-05-08] user: I adopted a cat last week (2023-05-01 to 2023-05-07).",
        "[2023-05-08] Ada: Lovely!"]
    # the session sent again with a turn appended: a revision that keeps every unit and its id
    grown = {**TRIP, "turns": [*TRIP["turns"], {"speaker": "Bob", "text": "Next Friday?"}]}
    r = c.post("/v1/ingest", json={"type": "chat", "sessions": [grown]}, headers=WRITE)
    d = r.json()["documents"][0]
    assert (d["status"], d["kept"], d["added"], d["superseded"], d["deprecated"]) == ("revised", 2, 1, 0, 0)
    assert _units(memory, "trip")[:2] == trip
    # join_turns false: a turn a unit
    body = {"type": "chat", "join_turns": False, "sessions": [{**TRIP, "id": "apart"}]}
    r = c.post("/v1/ingest", json=body, headers=WRITE)
    assert r.status_code == 200 and len(_units(memory, "apart")) == 3
    found = c.post("/v1/search", json={"question": "Who moved to Porto?"}, headers=READ).json()
    assert any(h["doc_id"] in ("trip", "apart") for h in found["hits"])


X = {"speaker": "A", "text": "x"}


@pytest.mark.parametrize("body, field", [
    ({"sessions": [{"id": "t", "turns": [X]}]}, "sessions.0"),  # no date
    ({"sessions": [{"id": "t", "date": "someday", "turns": [X]}]}, "sessions.0.date"),
    ({"sessions": [{"id": "t", "date": "2023-01-01", "turns": [X, {"speaker": "B"}]}]}, "sessions.0.turns.1"),
    ({"sessions": [{"id": "t", "date": "2023-01-01", "turns": [{**X, "time": "noon"}]}]},
     "sessions.0.turns.0.time"),
    ({"sessions": [{"id": "t", "date": "2023-01-01", "messages": [{"content": "who?"}]}]},
     "sessions.0.messages.0"),
    ({"sessions": [{"id": "t", "date": "2023-01-01", "turns": []}]}, "sessions.0"),
    ({"sessions": [{"id": "t", "date": "2023-01-01"}]}, "sessions.0"),
    ({"sessions": [{"id": "../t", "date": "2023-01-01", "turns": [X]}]}, "sessions.0.id"),
    ({"sessions": [{"date": "2023-01-01", "turns": [X]}]}, "sessions.0.id"),
    ({"sessions": [TRIP, TRIP]}, "sessions.1.id"),
    ({"sessions": [TRIP], "effective_date": "soon"}, "effective_date"),
    ({"sessions": [TRIP], "documents": [{"id": "a", "text": "b"}]}, "documents"),
    ({}, "sessions"),
    ({"sessions": [TRIP] * 4}, "sessions"),  # over the server's document limit
])
def test_bad_chat_ingest_is_422_naming_the_field_and_writes_nothing(tmp_path, body, field):
    memory = build_memory(tmp_path / "memory")
    with _client(memory, limits={"max_documents": 3}) as c:
        before = c.get("/healthz").json()["generation"]
        _error(c.post("/v1/ingest", json={"type": "chat", **body}, headers=WRITE), field)
        assert c.get("/healthz").json()["generation"] == before
        c.app.state.context.holder.warmed_up.wait(120)
    assert _units(memory, "t") == [] and _units(memory, "trip") == []


def test_chat_fields_only_with_type_chat_and_a_lone_surrogate_is_named(served):
    c, memory = served
    assert "only with" in _error(c.post("/v1/ingest", json={"sessions": [TRIP]}, headers=WRITE), "sessions")
    doc = {"id": "a", "text": "The cafeteria opens at 7."}
    for name, value in (("effective_date", "2023-01-01"), ("join_turns", False)):
        _error(c.post("/v1/ingest", json={"documents": [doc], name: value}, headers=WRITE), name)
    body = ('{"type": "chat", "sessions": [{"id": "t", "date": "2023-01-01", "turns": '
            '[{"speaker": "A", "text": "a \\ud800 b"}]}]}')
    r = c.post("/v1/ingest", content=body, headers={**WRITE, "Content-Type": "application/json"})
    message = _error(r, "sessions.0.turns.0.text")
    assert "lone surrogate" in message and "--errors" not in message
    assert c.post("/v1/ingest", json={"type": "chat", "sessions": [TRIP]}, headers=READ).status_code == 403
    assert _units(memory, "t") == [] and _units(memory, "trip") == []


# -- remembering the server's conversations ---------------------------------------------------------

PORT = "Which port does the API server listen on?"


def _conversation_docs(memory) -> list[str]:
    with Memory(memory, load_indexes=False) as m:
        return [d for _, d in m.documents() if d.startswith("conversation.")]


def test_a_server_remembers_nothing_unless_started_to(served):
    c, memory = served
    r = c.post("/v1/answer", json={"question": PORT, "conversation": "c1"}, headers=READ)
    assert r.status_code == 200 and r.json()["remembered"] is None and r.json()["remember_error"] is None
    _error(c.post("/v1/answer", json={"question": PORT, "remember": True}, headers=READ), "remember")
    chat = {"model": "asmr", "messages": [{"role": "user", "content": PORT}], "remember": True}
    _error(c.post("/v1/chat/completions", json=chat, headers=READ), "remember")
    assert _conversation_docs(memory) == []


def test_a_server_started_to_remember_writes_each_turn_of_a_conversation(tmp_path):
    memory = build_memory(tmp_path / "memory")
    with _client(memory, remember_conversations=True) as c:
        r = c.post("/v1/answer", json={"question": PORT, "conversation": "c1"}, headers=READ).json()
        assert r["remembered"] == "conversation.c1" and "8080" in r["confirmed"]
        first = _units(memory, "conversation.c1")
        # the answer as the client was shown it (what the memory confirmed), without citation numbers
        said = re.sub(r" ?\[\d+\]", "", r["confirmed"])
        assert said.startswith("The API server listens on port 8080 by default.")
        assert [t.split("] ", 1)[1] for _, t in first] == [f"user: {PORT}", f"assistant: {said}"]
        # the next turn appends: the units already stored keep their ids
        r = c.post("/v1/answer", json={"question": "How long are logs kept?", "conversation": "c1"},
                   headers=READ).json()
        after = _units(memory, "conversation.c1")
        assert r["remembered"] == "conversation.c1" and after[:2] == first and len(after) > 2
        # a request may keep its turn out
        kept_out = {"question": PORT, "conversation": "c1", "remember": False}
        r = c.post("/v1/answer", json=kept_out, headers=READ)
        assert r.json()["remembered"] is None and _units(memory, "conversation.c1") == after
        # the OpenAI face too; a conversation id outside the document-name alphabet gets a hashed name
        chat = {"model": "asmr", "messages": [{"role": "user", "content": PORT}], "conversation": "team:7"}
        ext = c.post("/v1/chat/completions", json=chat, headers=READ).json()["asmr"]
        assert ext["remembered"].startswith("conversation.team_7_") and _units(memory, ext["remembered"])
        # what was remembered is recalled
        hits = c.post("/v1/search", json={"question": PORT}, headers=READ).json()["hits"]
        assert any(h["doc_id"].startswith("conversation.") for h in hits)
        c.app.state.context.holder.warmed_up.wait(120)
    assert sorted(_conversation_docs(memory)) == sorted(["conversation.c1", ext["remembered"]])


def test_a_turn_the_memory_cannot_take_is_answered_and_reported(tmp_path):
    from asmr.store.writer import Writer

    memory = build_memory(tmp_path / "memory")
    with _client(memory, remember_conversations=True) as c:
        holder = c.app.state.context.holder
        holder.ingest = functools.partial(type(holder).ingest, holder, wait_seconds=0.2)  # not 10 s
        with Writer(memory, embedder="hash-256"):  # another ingest holds the memory past the wait
            r = c.post("/v1/answer", json={"question": PORT, "conversation": "busy"}, headers=READ)
        assert r.status_code == 200 and "8080" in r.json()["confirmed"] and r.json()["remembered"] is None
        error = r.json()["remember_error"]
        assert error.startswith("turn busy/1 not remembered: cannot write the memory now")
        c.app.state.context.holder.warmed_up.wait(120)
    assert _conversation_docs(memory) == []


def test_a_remembered_correction_outdates_the_statement_it_corrects(tmp_path):
    memory = build_memory(tmp_path / "memory")
    with _client(memory, remember_conversations=True) as c:
        for said in ("My train to Ghent leaves on Thursday morning.",
                     "Sorry, I was wrong: my train to Ghent leaves on Saturday morning."):
            c.post("/v1/answer", json={"question": said, "conversation": "c2"}, headers=READ)
        asked = {"question": "When does my train to Ghent leave?", "conversation": "c2"}
        r = c.post("/v1/answer", json=asked, headers=READ).json()
        turns = {t.split("] ", 1)[1]: uid for uid, t in _units(memory, "conversation.c2")}
        later = turns["user: Sorry, I was wrong: my train to Ghent leaves on Saturday morning."]
        earlier = turns["user: My train to Ghent leaves on Thursday morning."]
        assert "Saturday" in r["confirmed"] and "Thursday" not in r["confirmed"]
        (cited,) = [x for x in r["citations"] if x["unit_id"] == later]
        assert cited["older"]["text"].endswith("Thursday morning.")  # the older side, shown apart
        assert earlier not in {x["unit_id"] for x in r["citations"]}
        assert {h["unit_id"]: h["alternative_to"] for h in r["recall"]}[earlier] == later
        c.app.state.context.holder.warmed_up.wait(120)
