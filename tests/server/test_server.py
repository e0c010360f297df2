"""The HTTP face, run as a real `asmr serve` process: endpoints, auth, limits, snapshots under ingest."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time

import httpx
import pytest

from asmr.store.memory import Memory
from serverproc import EXAMPLES, FILE_KEY, READ, READ_KEY, WRITE, WRITE_KEY, Server, build_memory

PORT_QUESTION = "Which port does the API server listen on?"


@pytest.fixture(scope="module")
def memory(tmp_path_factory):
    return build_memory(tmp_path_factory.mktemp("served") / "memory")


@pytest.fixture(scope="module")
def server(memory, tmp_path_factory):
    d = tmp_path_factory.mktemp("server")
    keyfile = d / "keys"
    keyfile.write_text(f"# operators\n{FILE_KEY} read\n\n")
    s = Server(memory, d / "log", "--api-keys", str(keyfile), "--rate-limit", "0", "--max-body", "200000",
               "--max-question", "300", "--max-citations", "4", "--max-documents", "3", "--poll-seconds", "0.1",
               keys=f"{READ_KEY}, {WRITE_KEY}:write").wait()
    yield s
    s.stop()
    log = s.log.read_text()
    assert READ_KEY not in log and WRITE_KEY not in log and FILE_KEY not in log, "a key reached the log"
    assert "Traceback" not in log, log[-3000:]


@pytest.fixture(scope="module")
def client(server):
    with httpx.Client(base_url=server.url, timeout=60) as c:
        yield c


def _error(r: httpx.Response, status: int, field: str | None = None) -> dict:
    assert r.status_code == status, r.text
    assert r.headers["content-type"].startswith("application/json")
    err = r.json()["error"]
    assert set(err) == {"code", "type", "field", "param", "message"} and err["message"]
    assert "Traceback" not in err["message"]
    if field is not None:
        assert err["field"] == field == err["param"], err
    return err


def _active(directory) -> tuple[int, set[str]]:
    with Memory(directory, load_indexes=False) as m:
        return m.generation, {u.id for u in m.units_with_status("active")}


# -- reading -----------------------------------------------------------------------------------

def test_search_returns_ranked_units_of_one_generation(client, memory):
    r = client.post("/v1/search", json={"question": PORT_QUESTION, "k": 5}, headers=READ)
    assert r.status_code == 200, r.text
    body = r.json()
    gen, active = _active(memory)
    assert body["found"] and body["generation"] == gen and 0 < len(body["hits"]) <= 5
    assert {h["unit_id"] for h in body["hits"]} <= active
    assert any("8080" in h["text"] for h in body["hits"])
    scores = [h["score"] for h in body["hits"]]
    assert scores == sorted(scores, reverse=True)
    again = client.post("/v1/search", json={"question": PORT_QUESTION, "k": 5}, headers=READ).json()
    assert again["cached"] and [h["unit_id"] for h in again["hits"]] == [h["unit_id"] for h in body["hits"]]


def test_answer_verify_and_units(client):
    r = client.post("/v1/answer", json={"question": PORT_QUESTION, "conversation": "conv-1"}, headers=READ)
    assert r.status_code == 200, r.text
    ans = r.json()
    assert ans["found"] and "8080" in ans["answer"] and ans["turn"] == "conv-1/1"
    assert ans["citations"][0]["number"] == 1 and "[1]" in ans["answer_numbered"]
    assert ans["verification"]["counts"]["keep"] >= 1 and ans["generator"] == "extractive"
    cited = ans["citations"][0]["unit_id"]

    # the answer as given verifies; an id this turn never allowed is weakened, not kept
    v = client.post("/v1/verify", json={"answer": ans["answer"], "conversation": "conv-1"}, headers=READ).json()
    assert v["turn"] == "conv-1/1" and v["counts"]["keep"] >= 1 and v["counts"]["weaken"] == 0
    forged = "The API server listens on port 8080 [cite:memo://kb/ops.deploy/0123456789ab]."
    v = client.post("/v1/verify", json={"answer": forged, "conversation": "conv-1", "turn": 1}, headers=READ)
    assert v.status_code == 200 and v.json()["counts"]["keep"] == 0 and "[cite:" not in v.json()["text"]
    _error(client.post("/v1/verify", json={"answer": forged, "conversation": "conv-1", "turn": 2}, headers=READ),
           404, "turn")
    _error(client.post("/v1/verify", json={"answer": forged, "conversation": "nobody"}, headers=READ),
           404, "conversation")

    u = client.get(f"/v1/units/{cited}", headers=READ)
    assert u.status_code == 200 and u.json()["id"] == cited and u.json()["status"] == "active"
    _error(client.get("/v1/units/memo://kb/ops.deploy/0123456789ab", headers=READ), 404, "unit_id")
    _error(client.get("/v1/units/not-an-address", headers=READ), 422, "unit_id")


def test_openai_chat_completions_plain_and_streamed(client):
    request = {"model": "asmr", "messages": [{"role": "system", "content": "Be brief."},
                                             {"role": "user", "content": PORT_QUESTION}],
               "temperature": 0.2, "conversation": "chat-1"}
    r = client.post("/v1/chat/completions", json=request, headers=READ)
    assert r.status_code == 200, r.text
    body = r.json()
    assert body["object"] == "chat.completion" and body["model"] == "asmr"
    content = body["choices"][0]["message"]["content"]
    assert "8080" in content and "[1]" in content and "Sources:" in content and "[cite:" not in content
    ext = body["asmr"]
    assert ext["found"] and ext["turn"] == "chat-1/1" and ext["audit"]["counts"]["keep"] >= 1
    assert all(c["unit_id"] in content for c in ext["citations"])

    with client.stream("POST", "/v1/chat/completions", json={**request, "stream": True}, headers=READ) as s:
        assert s.status_code == 200 and s.headers["content-type"].startswith("text/event-stream")
        events = [line[len("data: "):] for line in s.iter_lines() if line.startswith("data: ")]
    assert events[-1] == "[DONE]"
    chunks = [json.loads(e) for e in events[:-1]]
    assert all(c["object"] == "chat.completion.chunk" for c in chunks)
    assert "".join(c["choices"][0]["delta"].get("content", "") for c in chunks) == content
    assert chunks[-1]["choices"][0]["finish_reason"] == "stop" and chunks[-1]["asmr"]["turn"] == "chat-1/2"

    models = client.get("/v1/models", headers=READ).json()
    assert "asmr" in [m["id"] for m in models["data"]]
    _error(client.post("/v1/chat/completions", json={**request, "model": "gpt-4"}, headers=READ), 404, "model")
    _error(client.post("/v1/chat/completions", json={**request, "messages": [{"role": "system", "content": "x"}]},
                       headers=READ), 422, "messages")


def test_healthz_and_metrics(client):
    h = client.get("/healthz")  # no key needed
    assert h.status_code == 200 and h.json()["status"] == "ok" and h.json()["active_units"] > 0
    deadline = time.monotonic() + 120  # the verifier's model loads in the background at start
    while not client.get("/healthz").json()["warmed_up"] and time.monotonic() < deadline:
        time.sleep(0.2)
    assert client.get("/healthz").json()["warmed_up"]
    client.post("/v1/search", json={"question": "What is the capital of Atlantis in 1850?"}, headers=READ)
    m = client.get("/metrics", headers=READ)
    assert m.status_code == 200 and m.headers["content-type"].startswith("text/plain")
    text = m.text
    assert 'asmr_requests_total{method="POST",route="/v1/search",status="200"}' in text
    assert 'asmr_request_seconds_bucket{le="0.025",route="/v1/search"}' in text
    assert 'asmr_retrieval_cache_total{result="hit"}' in text
    assert "asmr_verifier_outcomes_total{outcome=\"keep\"}" in text
    assert "asmr_memory_generation" in text
    _error(client.get("/metrics"), 401)


# -- security and limits -------------------------------------------------------------------------

def test_keys_and_scopes(client):
    q = {"question": PORT_QUESTION}
    err = _error(client.post("/v1/search", json=q), 401, "authorization")
    assert err["code"] == "unauthorized"
    r = client.post("/v1/search", json=q)
    assert r.headers["www-authenticate"].startswith("Bearer")
    _error(client.post("/v1/search", json=q, headers={"Authorization": "Bearer " + READ_KEY[:-1] + "X"}), 401)
    _error(client.post("/v1/search", json=q, headers={"Authorization": "Basic " + READ_KEY}), 401)
    assert client.post("/v1/search", json=q, headers={"Authorization": f"Bearer {FILE_KEY}"}).status_code == 200
    assert client.post("/v1/search", json=q, headers=WRITE).status_code == 200  # write includes read
    doc = {"documents": [{"id": "scoped", "text": "Scoped keys guard writes."}]}
    _error(client.post("/v1/ingest", json=doc), 401)
    err = _error(client.post("/v1/ingest", json=doc, headers=READ), 403, "authorization")
    assert err["code"] == "forbidden"
    _error(client.post("/v1/ingest", json=doc, headers={"Authorization": f"Bearer {FILE_KEY}"}), 403)


def test_limits_are_json_errors_naming_the_field(client):
    _error(client.post("/v1/search", json={"question": "x" * 301}, headers=READ), 422, "question")
    _error(client.post("/v1/search", json={"question": "   "}, headers=READ), 422, "question")
    _error(client.post("/v1/search", json={"question": PORT_QUESTION, "k": 0}, headers=READ), 422, "k")
    _error(client.post("/v1/search", json={"k": 3}, headers=READ), 422, "question")
    _error(client.post("/v1/search", content=b"{not json", headers={**READ, "content-type": "application/json"}),
           422, "body")
    big = {"documents": [{"id": "big", "text": "word " * 50_000}]}
    _error(client.post("/v1/ingest", json=big, headers=WRITE), 413, "body")

    def chunked():  # no Content-Length: counted as it arrives
        yield b'{"question": "'
        for _ in range(30):
            yield b"y" * 10_000
        yield b'"}'
    _error(client.post("/v1/search", content=chunked(), headers={**READ, "content-type": "application/json"}),
           413, "body")
    five = " ".join(f"Port 80{i} [cite:memo://kb/ops.deploy/0123456789a{i}]." for i in range(5))
    client.post("/v1/answer", json={"question": PORT_QUESTION, "conversation": "lim"}, headers=READ)
    _error(client.post("/v1/verify", json={"answer": five, "conversation": "lim"}, headers=READ), 422, "answer")
    docs = {"documents": [{"id": f"d{i}", "text": "Text."} for i in range(4)]}
    _error(client.post("/v1/ingest", json=docs, headers=WRITE), 422, "documents")


def test_bad_ingest_writes_nothing(client, memory):
    before = _active(memory)
    good = {"id": "cafeteria", "text": "The cafeteria opens at 7 am on weekdays."}
    cases = [([good, {"id": "../escape", "text": "Bad id."}], "documents.1.id"),
             ([good, {"text": "No id."}], "documents.1.id"),
             ([good, {"id": "when", "text": "Bad date.", "effective_date": "yesterday"}], "documents.1.effective_date"),
             ([good, {"id": "kind", "text": "Bad type.", "type": "poem"}], "documents.1.type"),
             ([good, {"id": "cafeteria", "text": "Twice."}], "documents.1.id"),
             ([good, {"id": "blank", "text": " \n "}], "documents.1.text")]
    for docs, field in cases:
        _error(client.post("/v1/ingest", json={"documents": docs}, headers=WRITE), 422, field)
    # half a surrogate pair, escaped in the JSON: UTF-8 cannot store it (was a 500)
    for body, field in (('{"documents": [{"id": "s", "text": "a \\ud800 b"}]}', "documents.0.text"),
                        ('{"documents": [{"id": "s", "text": "a", "title": "\\udfff"}]}', "documents.0.title")):
        err = _error(client.post("/v1/ingest", content=body, headers={**WRITE, "Content-Type": "application/json"}),
                     422, field)
        assert "lone surrogate" in err["message"]
    assert _active(memory) == before
    r = client.post("/v1/search", json={"question": "When does the cafeteria open?"}, headers=READ).json()
    assert all("cafeteria" not in h["text"] for h in r["hits"])


def test_no_keys_reads_open_writes_refused_and_rate_limited(memory, tmp_path):
    # one request back every 100 s: the burst is spent whatever time the machine takes to answer (at 0.5 a
    # second a loaded 2-core machine refilled it between the searches)
    s = Server(memory, tmp_path / "log", "--rate-limit", "0.01", "--burst", "3").wait()
    try:
        with httpx.Client(base_url=s.url, timeout=30) as c:
            assert c.post("/v1/search", json={"question": PORT_QUESTION}).status_code == 200
            err = _error(c.post("/v1/ingest", json={"documents": [{"id": "x", "text": "y"}]}), 403)
            assert "ASMR_API_KEYS" in err["message"]
            statuses = [c.post("/v1/search", json={"question": PORT_QUESTION}).status_code for _ in range(4)]
            assert statuses.count(429) >= 2, statuses
            r = c.post("/v1/search", json={"question": PORT_QUESTION})
            _error(r, 429)
            assert int(r.headers["retry-after"]) >= 1
    finally:
        s.stop()


def test_docs_are_open_and_say_they_need_the_internet(client):
    r = client.get("/docs")  # no key: /docs and /openapi.json describe the API, not the memory
    assert r.status_code == 200 and "needs the internet" in r.text and 'href="/openapi.json"' in r.text
    doc = client.get("/openapi.json")
    assert doc.status_code == 200 and "`/docs` and `/openapi.json`" in doc.json()["info"]["description"]
    assert client.get("/redoc").status_code == 404  # a second CDN page is not offered


def test_search_and_ask_use_the_running_server_that_holds_the_memory(tmp_path, capsys, monkeypatch):
    from asmr.cli import main

    memory = build_memory(tmp_path / "memory")
    s = Server(memory, tmp_path / "log", "--rate-limit", "0", keys=f"{READ_KEY}, {WRITE_KEY}:write").wait()
    try:
        info = json.loads((memory / "server.json").read_text())
        assert info["url"] == s.url and info["pid"] == s.proc.pid
        monkeypatch.setenv("ASMR_API_KEY", READ_KEY)
        assert main(["search", PORT_QUESTION, "--memory", str(memory), "--k", "3"]) == 0
        out = capsys.readouterr().out
        assert "8080" in out and out.strip().endswith(f"answered by the server at {s.url})")
        assert main(["ask", PORT_QUESTION, "--memory", str(memory), "--json"]) == 0
        ans = json.loads(capsys.readouterr().out)
        assert "8080" in ans["answer"] and "generation" in ans  # the server's answer
        assert main(["ask", PORT_QUESTION, "--server", s.url]) == 0
        assert "8080" in capsys.readouterr().out
        # a question sent to the server loads neither the store nor the retriever in the command
        probe = ("import sys; from asmr.cli import main; "
                 "main(['search', sys.argv[1], '--memory', sys.argv[2]]); "
                 "print(sorted(m for m in ('asmr.store', 'asmr.retrieve', 'asmr.embed', 'numpy') "
                 "if m in sys.modules))")
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
        out = subprocess.run([sys.executable, "-c", probe, PORT_QUESTION, str(memory)], capture_output=True,
                             text=True, check=True, env=env)
        assert "answered by the server" in out.stdout and out.stdout.strip().endswith("[]")
        # what the server cannot honour is refused with --server, and answered here without it
        assert main(["search", PORT_QUESTION, "--server", s.url, "--depth", "1"]) == 2
        assert "--depth cannot be sent to a server" in capsys.readouterr().err
        assert main(["search", PORT_QUESTION, "--memory", str(memory), "--depth", "1"]) == 0
        assert "answered by the server" not in capsys.readouterr().out
        # without the key: a found server is passed over (said on stderr); a named one is an error
        monkeypatch.delenv("ASMR_API_KEY")
        assert main(["search", PORT_QUESTION, "--memory", str(memory)]) == 0
        out, err = capsys.readouterr()
        assert "answered by the server" not in out and "ASMR_API_KEY" in err and "answering here" in err
        assert main(["search", PORT_QUESTION, "--server", s.url]) == 2
        assert capsys.readouterr().err.startswith(f"asmr: server {s.url}: 401")
    finally:
        s.stop()
    assert not (memory / "server.json").exists()
    # a file left by a server that died (kill -9) names a dead process: ignored
    (memory / "server.json").write_text(json.dumps({"url": s.url, "pid": s.proc.pid, "memory": str(memory)}))
    assert main(["search", PORT_QUESTION, "--memory", str(memory)]) == 0
    assert "answered by the server" not in capsys.readouterr().out


def test_chat_content_sets_apart_what_the_memory_does_not_confirm(memory):
    from asmr.answer import Answerer
    from asmr.embed import get_embedder
    from asmr.generate.base import Generation
    from asmr.retrieve import RetrieveConfig
    from asmr.server.openai_compat import _content

    class SaysMore:
        name = "says-more"

        def generate(self, question, sources, **_):
            port = next(s for s in sources if "listens on port 8080" in s.text)
            return Generation(f"The API server listens on port 8080 [cite:{port.id}]. The moon is cheese.",
                              self.name)

    with Memory(memory) as m:
        emb = get_embedder(m.embed_model)
        ans = Answerer(m, SaysMore(), embedder=emb, retrieve_config=RetrieveConfig(confidence_threshold=0.05)
                       ).ask(PORT_QUESTION)
    answer, apart = _content(ans).split("Not confirmed by the memory:", 1)
    assert "8080 [1]" in answer and "cheese" not in answer and "- The moon is cheese." in apart


# -- snapshots ---------------------------------------------------------------------------------

def _revision() -> dict:
    text = (EXAMPLES / "handbook-v2" / "ops" / "deploy.md").read_text()
    return {"documents": [{"id": "ops.deploy", "text": text, "format": "markdown"}]}


def test_ingest_while_reading_never_fails_or_mixes_snapshots(client, server, memory):
    g0, active0 = _active(memory)
    deadline = time.monotonic() + 10
    while client.get("/healthz").json()["generation"] != g0 and time.monotonic() < deadline:
        time.sleep(0.05)
    questions = [PORT_QUESTION, "How long does a rollout take?", "How much memory must be free?",
                 "Which flag sets the TCP port?"]
    results: list[tuple[float, int, int, list[str]]] = []  # (start, status, generation, ids)
    stop = threading.Event()

    def read(i: int) -> None:
        with httpx.Client(base_url=server.url, timeout=30) as c:
            n = 0
            while not stop.is_set():
                q = questions[(i + n) % len(questions)] + (" " * (n % 7))  # spaces: past the cache too
                n += 1
                t = time.monotonic()
                try:
                    r = c.post("/v1/search", json={"question": q, "k": 8}, headers=READ)
                    body = r.json() if r.status_code == 200 else {}
                    results.append((t, r.status_code, body.get("generation", -1),
                                    [h["unit_id"] for h in body.get("hits", [])]))
                except httpx.HTTPError as exc:
                    results.append((t, -1, -1, [repr(exc)]))

    threads = [threading.Thread(target=read, args=(i,)) for i in range(3)]
    def wait_for(enough) -> None:  # counts, not sleeps: the machine may be slow and shared
        deadline = time.monotonic() + 60
        while not enough() and time.monotonic() < deadline:
            time.sleep(0.02)

    for t in threads:
        t.start()
    wait_for(lambda: len(results) >= 12)
    r = client.post("/v1/ingest", json=_revision(), headers=WRITE)
    committed = time.monotonic()
    wait_for(lambda: sum(x[0] > committed for x in list(results)) >= 12)
    stop.set()
    for t in threads:
        t.join()
    assert r.status_code == 200, r.text
    report = r.json()
    assert report["documents"][0]["status"] == "revised" and report["documents"][0]["superseded"] >= 1
    g1, active1 = _active(memory)
    assert report["generation"] == g1 == g0 + 1
    active = {g0: active0, g1: active1}

    failed = [x for x in results if x[1] != 200]
    assert not failed, failed[:3]
    assert {x[2] for x in results} == {g0, g1}
    for start, _, gen, ids in results:
        assert set(ids) <= active[gen], f"generation {gen} answered with units not active in it"
        if start > committed:
            assert gen == g1, "a read that started after the commit was answered from the old snapshot"
    # the check has teeth: old-generation answers held units the new generation superseded
    assert any(set(ids) - active1 for _, _, gen, ids in results if gen == g0)
    after = client.post("/v1/search", json={"question": PORT_QUESTION}, headers=READ).json()
    assert any("9090" in h["text"] for h in after["hits"]) and not any("8080" in h["text"] for h in after["hits"])


def test_workers_start_empty_and_serve_each_others_commits(tmp_path):
    mem = tmp_path / "memory"  # does not exist: the first ingest creates it
    s = Server(mem, tmp_path / "log", "--rate-limit", "0", "--poll-seconds", "0.1", "--embedder", "hash-256",
               keys=f"{WRITE_KEY}:write", workers=2).wait()
    try:
        with httpx.Client(base_url=s.url, timeout=60, headers=WRITE) as c:
            assert _error(c.post("/v1/search", json={"question": PORT_QUESTION}), 409)["code"] == "memory_empty"
            root = EXAMPLES / "handbook"
            docs = [{"id": p.relative_to(root).with_suffix("").as_posix().replace("/", "."),
                     "text": p.read_text(), "format": "markdown"} for p in sorted(root.rglob("*.md"))]
            r = c.post("/v1/ingest", json={"documents": docs})
            assert r.status_code == 200 and r.json()["generation"] == 1, r.text
            r = c.post("/v1/ingest", json=_revision())
            assert r.status_code == 200 and r.json()["generation"] == 2, r.text
        assert _active(mem)[0] == 2
        seen: dict[int, int] = {}  # worker pid -> generation it serves
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and (len(seen) < 2 or set(seen.values()) != {2}):
            h = httpx.get(s.url + "/healthz", headers={"Connection": "close"}).json()  # a new connection each time
            seen[h["worker"]] = h["generation"]
            time.sleep(0.02)
        assert len(seen) == 2, f"only worker(s) {list(seen)} answered"
        assert set(seen.values()) == {2}, seen
        for _ in range(6):
            body = httpx.post(s.url + "/v1/search", json={"question": PORT_QUESTION}, headers={**WRITE,
                                                                                              "Connection": "close"})
            assert body.json()["generation"] == 2
        # one conversation across both workers: turns numbered in order, each verifiable on either
        fresh = {**WRITE, "Connection": "close"}
        turns = []
        for _ in range(6):
            r = httpx.post(s.url + "/v1/answer", json={"question": PORT_QUESTION, "conversation": "shared"},
                           headers=fresh, timeout=60)
            assert r.status_code == 200, r.text
            turns.append(r.json()["turn"])
        assert turns == [f"shared/{n}" for n in range(1, 7)]
        forged = "The port is 1. [cite:memo://kb/nowhere/000000000000]"
        for n in range(1, 7):
            r = httpx.post(s.url + "/v1/verify", json={"answer": forged, "conversation": "shared", "turn": n},
                           headers=fresh, timeout=60)
            assert r.status_code == 200, r.text
            assert r.json()["turn"] == f"shared/{n}"
    finally:
        s.stop()
    assert "Traceback" not in s.log.read_text()


def test_a_worker_that_starts_during_the_first_ingest_serves_an_empty_memory(tmp_path):
    """A second worker may open the memory while the first worker's ingest is creating it."""
    import sqlite3

    from asmr.server.state import SnapshotHolder
    from asmr.store import schema
    from asmr.units.model import Document

    mem = tmp_path / "memory"
    mem.mkdir()
    sqlite3.connect(mem / schema.DB_FILE).close()  # the file exists; no ingest has committed to it yet
    holder = SnapshotHolder(mem, poll_seconds=0, new_embedder="hash-256")
    try:
        assert holder.current.memory is None
        holder.ingest([Document("cafeteria", "The cafeteria opens at 7 am.", "text")], "kb")
        assert holder.current.generation == 1
        assert holder.current.search("When does the cafeteria open?").hits
    finally:
        holder.close()


def test_a_held_snapshot_outlives_the_swap(tmp_path):
    from asmr.server.state import SnapshotHolder
    from asmr.units.model import Document

    holder = SnapshotHolder(build_memory(tmp_path / "memory"), poll_seconds=0)
    try:
        with holder.use() as old:
            holder.ingest([Document("cafeteria", "The cafeteria opens at 7 am.", "text")], "kb")
            assert holder.current is not old and holder.current.generation == old.generation + 1
            assert old.search(PORT_QUESTION).hits and old.memory.count_units() > 0  # still open, same data
            assert old.memory.unit("memo://kb/cafeteria/000000000000") is None
        with pytest.raises(Exception, match="closed"):
            old.memory.count_units()  # released by its last user: closed
        assert holder.current.search("When does the cafeteria open?").hits
    finally:
        holder.close()


def test_the_server_learns_usage_edges_from_its_audit_records(tmp_path):
    """The learner's fold (``--learn-every``) counts new audit records and serves the same generation
    again with the learned edges; another worker sees the usage log's new version and does the same;
    a fold with nothing new swaps nothing."""
    from datetime import datetime, timezone

    from asmr.server.state import SnapshotHolder
    from asmr.store import UsageLog

    mem = build_memory(tmp_path / "memory")
    holder = SnapshotHolder(mem, poll_seconds=0)
    other = SnapshotHolder(mem, poll_seconds=0)  # a second worker of the same memory
    try:
        first, other_first = holder.current, other.current
        assert holder.learn()["records"] == 0 and holder.current is first  # no audit record yet
        hits = first.search(PORT_QUESTION, 10).hits
        a, b = hits[0].unit_id, hits[-1].unit_id
        now = datetime.now(timezone.utc).isoformat(timespec="milliseconds")
        (mem / "audit").mkdir(exist_ok=True)
        with open(mem / "audit" / f"{now[:10]}.jsonl", "a") as f:
            for question in ("Which port does the server use?", "What port is the API on?"):
                f.write(json.dumps({"time": now, "question": question, "audit": [
                    {"outcome": "keep", "citations": [{"id": a, "kept": True}, {"id": b, "kept": True}]}]}) + "\n")
        report = holder.learn()
        assert report["questions"] == 2 and report["pairs"] == 2
        served = holder.current
        assert served is not first and served.generation == first.generation
        with UsageLog(mem) as usage:
            assert served.usage_version == usage.version() > 0
        rows = {u.id: u.row for u in served.memory.unit_states({a, b})}
        assert served.retriever.graph.edge(rows[a], rows[b])[0] == "usage"
        assert first.retriever.graph.edge(rows[a], rows[b]) is None or \
            first.retriever.graph.edge(rows[a], rows[b])[0] != "usage"
        assert other.refresh() is not other_first and other.current.usage_version == served.usage_version
        assert holder.learn()["questions"] == 0 and holder.current is served  # nothing new: no swap
    finally:
        holder.close()
        other.close()


def test_serve_refuses_bad_settings_without_echoing_keys(tmp_path, capsys, monkeypatch):
    from asmr.cli import main

    keys = tmp_path / "keys"
    keys.write_text(f"{READ_KEY} admin\n")
    assert main(["serve", "--memory", str(tmp_path), "--api-keys", str(keys)]) == 2
    monkeypatch.setenv("ASMR_API_KEYS", "short:write")
    assert main(["serve", "--memory", str(tmp_path)]) == 2
    monkeypatch.delenv("ASMR_API_KEYS")
    assert main(["serve", "--memory", str(keys)]) == 4  # a file, not a memory directory
    assert main(["serve", "--memory", str(tmp_path), "--rate-limit", "-1"]) == 2
    assert main(["serve", "--memory", str(tmp_path), "--learn-every", "-5"]) == 2
    err = capsys.readouterr().err
    assert "keys:1: expected 'KEY [read|write]'" in err and READ_KEY not in err and "short" not in err
    assert "--learn-every -5.0: must be >= 0" in err


def test_retrieve_config_errors_are_422_naming_the_field(tmp_path):
    # RetrieveConfig checks its fields; the server does not check them again but answers its
    # refusal as any invalid request: 422 in the one error shape, naming the field
    from fastapi import FastAPI
    from fastapi.testclient import TestClient

    from asmr.retrieve import ConfigError, RetrieveConfig
    from asmr.server import errors
    from asmr.server.context import ServerConfig

    app = FastAPI()
    errors.install(app)

    @app.get("/configured")
    def configured(depth: int):
        return RetrieveConfig(depth=depth).to_dict()

    with TestClient(app) as c:
        assert c.get("/configured", params={"depth": 3}).json()["depth"] == 3
        r = c.get("/configured", params={"depth": 9})
    err = _error(r, 422, "depth")
    assert err == {**err, "code": "invalid_request", "message": "depth: must be in 0..8"}
    # the settings a server starts with (asmr serve --workers N hands them to each worker) too
    with pytest.raises(ConfigError, match="^mix must be three non-negative numbers"):
        ServerConfig(memory=str(tmp_path), retrieve={"mix": [0, 0, 0]}).retrieve_config()


def test_serve_makes_openmp_threads_wait_passively_unless_told_otherwise(tmp_path, monkeypatch):
    # set before the native libraries load (they read it once), so it must be in the environment
    # by the time the serve handler runs; a value the user set is kept
    import os

    from asmr import cli
    from asmr.cli import serve

    seen = []
    monkeypatch.setattr(serve, "cmd_serve", lambda args: seen.append(os.environ.get("OMP_WAIT_POLICY")) or 0)
    monkeypatch.delenv("OMP_WAIT_POLICY", raising=False)
    assert cli.main(["serve", "--memory", str(tmp_path)]) == 0
    monkeypatch.setenv("OMP_WAIT_POLICY", "ACTIVE")
    assert cli.main(["serve", "--memory", str(tmp_path)]) == 0
    assert seen == ["PASSIVE", "ACTIVE"]


def test_conversation_store_numbers_turns_across_processes_and_drops_the_oldest(tmp_path):
    from asmr.retrieve import Hit, Result
    from asmr.server import conversations as C

    def result(uid):
        return Result("q", (Hit(uid, 0, 0.9, 0.9, 0.0, 0.0, 0, True, ()),), 0.0, found=True)

    a = C.ConversationStore(tmp_path, capacity=3, max_turns=3)
    b = C.ConversationStore(tmp_path, capacity=3, max_turns=3)  # another worker, same file
    assert a.open_turn("c1", result("memo://kb/d/1")).turn == 1
    assert b.open_turn("c1", result("memo://kb/d/2")).turn == 2
    assert [t.ids for t in a.turns("c1")] == [("memo://kb/d/1",), ("memo://kb/d/2",)]
    assert b.open_turn("c1", result("memo://kb/d/3")).turn == 3
    with pytest.raises(C.TurnLimit, match="limit of 3 turns"):
        a.open_turn("c1", result("memo://kb/d/4"))
    assert len(b.turns("c1")) == 3 and a.turns("nobody") == []
    a.close()
    # A restart keeps the turns; this one prunes at every turn.
    again = C.ConversationStore(tmp_path, capacity=3, max_turns=3, prune_every=1)
    assert [t.turn for t in again.turns("c1")] == [1, 2, 3]
    for cid in ("c2", "c3", "c4"):
        time.sleep(0.01)
        again.open_turn(cid, result("memo://kb/d/1"))
    assert again.turns("c1") == [] and [len(again.turns(c)) for c in ("c2", "c3", "c4")] == [1, 1, 1]


def test_a_worker_warms_up_recall_in_each_language_of_its_memory(tmp_path, monkeypatch):
    """At a worker's start, recall reads a question in each language its memory is written in (what a
    first question loads: lemmas, synonyms; jieba and the bilingual tables for Chinese text), and
    caches nothing: the first user's question is still answered fresh."""
    from asmr.retrieve import Retriever
    from asmr.server.state import _WARM_UP_QUESTIONS, SnapshotHolder
    from asmr.store.writer import ingest
    from asmr.units.model import Document

    asked = []
    recall = Retriever.recall
    monkeypatch.setattr(Retriever, "recall", lambda self, q, qvec, k: (asked.append(q), recall(self, q, qvec, k))[1])
    english = [Document("cafeteria", "The cafeteria opens at 7 am. Lunch is served until 2 pm.", "text")]
    chinese = [Document("shitang", "食堂早上七点开门，午饭供应到下午两点。", "text")]
    for name, docs, languages in (("en", english, {"latin"}), ("both", english + chinese, {"latin", "cjk"})):
        ingest(tmp_path / name, docs, embedder="hash-256", progress=False)
        holder = SnapshotHolder(tmp_path / name, poll_seconds=0)
        try:
            asked.clear()
            holder.warm_up()
            assert holder.warmed_up.is_set()
            assert sorted(asked) == sorted(_WARM_UP_QUESTIONS[s] for s in languages)
            assert not holder.current.search(_WARM_UP_QUESTIONS["latin"]).cached
        finally:
            holder.close()


def test_a_worker_warms_up_what_the_first_answer_reads_after_recall(tmp_path):
    """The first answer of a worker that said warmed_up waits for nothing to load: the embedder has
    embedded a batch (the extractive generator and the support check embed sentences together), and a
    memory with Chinese text has read a Chinese numeral (cn2an, imported at the first one: a third of
    a second), which a memory without any never loads. A fresh interpreter, so that no other test has
    imported cn2an before."""
    script = """
import sys
from asmr.embed.models import HashingEmbedder
from asmr.server.state import SnapshotHolder
from asmr.store.writer import ingest
from asmr.units.model import Document

batches = []
embed = HashingEmbedder.embed
HashingEmbedder.embed = lambda self, texts, **kw: (batches.append(len(texts)), embed(self, texts, **kw))[1]
english = [Document("cafeteria", "The cafeteria opens at 7 am. Lunch is served until 2 pm.", "text")]
chinese = [Document("shitang", "食堂早上七点开门，午饭供应到下午两点。", "text")]
for name, docs in (("en", english), ("both", english + chinese)):
    ingest(sys.argv[1] + "/" + name, docs, embedder="hash-256", progress=False)
    holder = SnapshotHolder(sys.argv[1] + "/" + name, poll_seconds=0)
    batches.clear()
    holder.warm_up()
    holder.close()
    print(name, max(batches), "cn2an" in sys.modules)
"""
    done = subprocess.run([sys.executable, "-c", script, str(tmp_path)], capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    (en, en_batch, en_cn2an), (both, both_batch, both_cn2an) = (line.split() for line in done.stdout.split("\n")[:2])
    assert (en, both) == ("en", "both")
    assert int(en_batch) >= 2 and int(both_batch) >= 2
    assert (en_cn2an, both_cn2an) == ("False", "True")
