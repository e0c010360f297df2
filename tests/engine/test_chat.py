"""Conversations as memory: `asmr ingest --format chat`, a session a document, a turn a unit, time
resolved."""
import json
import re
import sqlite3

import pytest

from asmr.cli import main
from asmr.eval.synth_chat import generate_chat
from asmr.store import schema
from asmr.text.facts import key_facts
from asmr.units.chat import iter_chat, parse_time
from asmr.units.model import InputError
from asmr.units.read import chunk_document

SESSION = {"id": "trip", "date_time": "2023-05-08T14:02", "turns": [
    {"speaker": "Alice", "text": "I moved to Porto yesterday!"},
    {"speaker": "Bob", "text": "Congrats!\n\nWhen do we visit?", "caption": "a harbour at dusk"},
    {"speaker": "Alice", "text": "Congrats!"},
    {"speaker": "Alice", "text": "Congrats!"},
]}


def asmr(capsys, *args):
    code = main([str(a) for a in args])
    out, err = capsys.readouterr()
    return code, out, err


def write_jsonl(path, records):
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records), encoding="utf-8")
    return path


def units(mem):
    conn = sqlite3.connect(mem / schema.DB_FILE)
    rows = conn.execute("SELECT id, content, status FROM units ORDER BY doc_id, ord, row").fetchall()
    conn.close()
    return rows


def test_a_session_is_a_document_and_a_turn_is_a_unit(tmp_path):
    log = write_jsonl(tmp_path / "log.jsonl", [SESSION])
    (doc,) = iter_chat(log)
    assert (doc.doc_id, doc.effective_date, doc.fmt) == ("trip", "2023-05-08T14:02:00", "chat")
    assert doc.source == f"{tmp_path / 'log.jsonl'}:1"
    turns = [c.content for c in chunk_document(doc).chunks]
    assert turns == ["[2023-05-08 14:02] Alice: I moved to Porto yesterday (2023-05-07)!",
                     "[2023-05-08 14:02] Bob: Congrats!\nWhen do we visit? [image: a harbour at dusk]",
                     "[2023-05-08 14:02] Alice: Congrats!\n\n[2023-05-08 14:02] Alice: Congrats!"]
    (plain,) = iter_chat(log, join_turns=False)  # --no-join-turns: a turn a unit
    assert plain.fmt == "text" and plain.text == doc.text
    assert [c.content for c in chunk_document(plain).chunks] == [*turns[:2], *turns[2].split("\n\n")]


def test_resolved_dates_are_key_facts_of_the_turn(tmp_path):
    session = {"date": "2023-05-08", "turns": [{"speaker": "Li", "text": "我上周五去了上海，去年在北京。"},
                                              {"speaker": "Ann", "text": "Two years ago I started pottery."}]}
    (doc,) = iter_chat(write_jsonl(tmp_path / "zh.jsonl", [session]))
    first, second = [c.content for c in chunk_document(doc).chunks]
    assert first == "[2023-05-08] Li: 我上周五 (2023-05-05)去了上海，去年 (2022)在北京。"
    assert second == "[2023-05-08] Ann: Two years ago (2021) I started pottery."
    assert {"2023-05-05", "2022"} <= {f.norm for f in key_facts(first) if f.kind == "date"}
    assert "2021" in {f.norm for f in key_facts(second) if f.kind == "date"}


def test_openai_messages_take_the_default_date_and_skip_the_system_prompt(tmp_path):
    path = tmp_path / "openai.json"
    path.write_text(json.dumps({"sessions": [{"messages": [
        {"role": "system", "content": "You are helpful."},
        {"role": "user", "content": [{"type": "text", "text": "I adopted a cat last week."}]},
        {"role": "assistant", "name": "Ada", "content": "Lovely!"}]}]}))
    with pytest.raises(InputError, match=r"openai\.json: record 1: session has no date"):
        list(iter_chat(path))
    (doc,) = iter_chat(path, default_date="2023-05-08")
    assert doc.doc_id == "openai.session-1" and doc.effective_date == "2023-05-08"
    assert doc.text == ("[2023-05-08] user: I adopted a cat last week (2023-05-01 to 2023-05-07).\n\n"
                        "[2023-05-08] Ada: Lovely!")


def test_the_generated_chat_log_reads_one_session_a_document(tmp_path):
    generate_chat(tmp_path / "synth", seed=1, sessions=3, people=4, turns=24, titles="session")
    lines = [json.loads(x) for x in (tmp_path / "synth" / "corpus.jsonl").read_text().splitlines()]
    docs = list(iter_chat(tmp_path / "synth" / "corpus.jsonl"))
    assert len(docs) == len({r["session"] for r in lines}) == 3
    first = [r for r in lines if r["session"] == lines[0]["session"]]
    assert docs[0].effective_date == first[0]["effective_date"]
    speaker, said = first[0]["speaker"], first[0]["text"].split(": ", 1)[1]
    assert docs[0].text.startswith(f"[{first[0]['effective_date']}] {speaker}: {said.split()[0]}")
    assert docs[0].text.count("\n\n") == len(first) - 1


def test_locomo_samples_and_their_date_form(tmp_path):
    sample = {"sample_id": "conv-26", "conversation": {
        "speaker_a": "Caroline", "speaker_b": "Melanie",
        "session_1_date_time": "1:56 pm on 8 May, 2023",
        "session_1": [{"speaker": "Caroline", "dia_id": "D1:1",
                       "text": "I went to a support group yesterday."},
                      {"speaker": "Melanie", "dia_id": "D1:2", "text": "",
                       "blip_caption": "a photo of a lake"}],
        "session_2_date_time": "2023/05/20 (Sat) 02:21",
        "session_2": [{"speaker": "Melanie", "text": "Hi!"}]}}
    path = tmp_path / "locomo.json"
    path.write_text(json.dumps([sample]))
    one, two = iter_chat(path)
    assert (one.doc_id, one.effective_date) == ("locomo.conv-26.session-1", "2023-05-08T13:56:00")
    assert one.text.split("\n\n") == [
        "[2023-05-08 13:56] Caroline: I went to a support group yesterday (2023-05-07).",
        "[2023-05-08 13:56] Melanie: [image: a photo of a lake]"]
    assert (two.doc_id, two.effective_date) == ("locomo.conv-26.session-2", "2023-05-20T02:21:00")


def test_longmemeval_records(tmp_path):
    record = {"question_id": "q7", "haystack_session_ids": ["s_a", "s_b"],
              "haystack_dates": ["2023/05/20 (Sat) 02:21", "2023/05/30 (Tue) 10:00"],
              "haystack_sessions": [
                  [{"role": "user", "content": "I got a puppy 3 days ago.", "has_answer": True}],
                  [{"role": "assistant", "content": "Noted."}]]}
    path = tmp_path / "lme.json"
    path.write_text(json.dumps([record]))
    one, two = iter_chat(path)
    assert (one.doc_id, two.doc_id) == ("lme.q7.s_a", "lme.q7.s_b")
    assert one.text == "[2023-05-20 02:21] user: I got a puppy 3 days ago (2023-05-17)."
    path.write_text(json.dumps([dict(record, haystack_dates=["2023/05/20 (Sat) 02:21"])]))
    with pytest.raises(InputError, match=r"lme\.json: record 1: needs one haystack_dates entry"):
        list(iter_chat(path))


def test_dates_in_the_accepted_forms():
    assert str(parse_time("2023-05-08", "x")) == "2023-05-08"
    assert str(parse_time("2023-05-08T14:02:00Z", "x")) == "2023-05-08 14:02:00+00:00"
    assert str(parse_time("1:56 pm on 8 May, 2023", "x")) == "2023-05-08 13:56:00"
    with pytest.raises(InputError, match="x: date 'May 8th' is not ISO 8601"):
        parse_time("May 8th", "x")


@pytest.mark.parametrize("record, reason", [
    ({"turns": [{"speaker": "A", "text": "hi"}]}, "log.jsonl:2: session has no date"),
    ({"date": "2023-13-01", "turns": [{"speaker": "A", "text": "hi"}]},
     "log.jsonl:2: 'date': date '2023-13-01' is not ISO 8601"),
    ({"date": "2023-05-01", "turns": [{"speaker": "A", "text": "hi"}, {"speaker": "B"}]},
     "log.jsonl:2, turn 2: turn has no text"),
    ({"date": "2023-05-01", "turns": [{"text": "hi"}]}, 'log.jsonl:2, turn 1: needs a "speaker"'),
    ({"date": "2023-05-01", "turns": []}, "log.jsonl:2: session has no turns"),
    ({"date": "2023-05-01"}, 'log.jsonl:2: session needs a "turns" or "messages" list'),
])
def test_bad_input_is_one_line_naming_the_record_and_nothing_is_written(tmp_path, capsys, record, reason):
    mem = tmp_path / "mem"
    log = write_jsonl(tmp_path / "log.jsonl", [SESSION, record])
    code, out, err = asmr(capsys, "ingest", "--format", "chat", log, "--memory", mem, "--embedder", "hash-64")
    assert code == 2 and reason in err, err
    assert err.count(reason) == 1 and f"asmr ingest: {tmp_path}" in err
    assert not (mem / schema.DB_FILE).exists() or units(mem) == []


def test_appending_turns_keeps_the_ids_of_earlier_turns(tmp_path, capsys):
    mem, log = tmp_path / "mem", tmp_path / "log.jsonl"
    write_jsonl(log, [SESSION])
    code, out, _ = asmr(capsys, "ingest", "--format", "chat", log, "--memory", mem, "--embedder", "hash-64")
    assert code == 0 and "1 new" in out
    before = units(mem)
    assert len(before) == 3 and before[2][1].count("Alice: Congrats!") == 2  # two short turns, one unit
    grown = dict(SESSION, turns=[*SESSION["turns"], {"speaker": "Alice", "text": "Congrats!"},
                                 {"speaker": "Bob", "text": "See you next Friday."}])
    write_jsonl(log, [grown, {"date": "2023-05-20", "turns": [{"speaker": "Bob", "text": "Back home."}]}])
    code, out, _ = asmr(capsys, "ingest", "--format", "chat", log, "--memory", mem, "--embedder", "hash-64")
    assert code == 0 and "1 new, 1 revised" in out and "0 superseded, 0 deprecated" in out
    after = [u for u in units(mem) if u[0].startswith("memo://kb/trip/")]
    assert after[:3] == before  # the same ids, still active
    # the appended short turn of Alice does not join the stored unit of her two: that unit keeps its id
    assert [a[1] for a in after[3:]] == ["[2023-05-08 14:02] Alice: Congrats!",
                                         "[2023-05-08 14:02] Bob: See you next Friday (2023-05-12)."]
    assert [u[1] for u in units(mem) if u[0].startswith("memo://kb/log.session-2/")] == \
        ["[2023-05-20] Bob: Back home."]


def test_without_joining_a_repeated_turn_gets_an_occurrence_suffix(tmp_path, capsys):
    mem, log = tmp_path / "mem", write_jsonl(tmp_path / "log.jsonl", [SESSION])
    code, _, _ = asmr(capsys, "ingest", "--format", "chat", "--no-join-turns", log, "--memory", mem,
                      "--embedder", "hash-64")
    before = units(mem)
    assert code == 0 and len(before) == 4 and before[3][0] == before[2][0] + "-1"
    grown = dict(SESSION, turns=[*SESSION["turns"], {"speaker": "Alice", "text": "Congrats!"}])
    write_jsonl(log, [grown])
    code, _, _ = asmr(capsys, "ingest", "--format", "chat", "--no-join-turns", log, "--memory", mem,
                      "--embedder", "hash-64")
    after = units(mem)
    assert code == 0 and after[:4] == before and after[4][0] == before[2][0] + "-2"
    with pytest.raises(SystemExit) as exit_:
        main(["ingest", "--no-join-turns", str(log), "--memory", str(mem)])
    assert exit_.value.code == 2 and "--no-join-turns: only with --format chat" in capsys.readouterr().err


def test_sessions_without_a_date_take_effective_date_and_a_directory_is_read_for_json(tmp_path, capsys):
    mem, src = tmp_path / "mem", tmp_path / "chats"
    src.mkdir()
    (src / "a.json").write_text(json.dumps({"messages": [{"role": "user", "content": "tomorrow then"}]}))
    (src / "notes.md").write_text("# not a chat\n")
    code, _, err = asmr(capsys, "ingest", "--format", "chat", src, "--memory", mem, "--embedder", "hash-64")
    assert code == 2 and "a.json: record 1: session has no date" in err
    code, out, _ = asmr(capsys, "ingest", "--format", "chat", src, "--memory", mem, "--embedder", "hash-64",
                        "--effective-date", "2024-02-28")
    assert code == 0 and "1 documents" in out
    assert [u[1] for u in units(mem)] == ["[2024-02-28] user: tomorrow (2024-02-29) then"]


def _chunks(turns, **session):
    from asmr.units.chat import session_document
    doc = session_document({"date_time": "2023-05-08T14:02", **session, "turns": turns}, "s", "s")
    return [c.content for c in chunk_document(doc).chunks]


def test_short_turns_of_one_speaker_join_and_nothing_else_does():
    short = ["Hi!", "Are you free tonight?", "Say 7?"]
    long_turn = "I found the old photos of the harbour we took in Porto and put them all in the shared album."
    got = _chunks([{"speaker": "Ann", "text": t} for t in short])
    assert got == ["\n\n".join(f"[2023-05-08 14:02] Ann: {t}" for t in short)]  # one unit, its span exact
    # different speakers never join; a long turn never joins, before or after
    got = _chunks([{"speaker": "Ann", "text": "Hi!"}, {"speaker": "Bo", "text": "Hey."},
                   {"speaker": "Ann", "text": "Ok."}, {"speaker": "Ann", "text": long_turn},
                   {"speaker": "Ann", "text": "Nice?"}, {"speaker": "Ann", "text": "Right."}])
    assert [c.split(": ", 1)[1] for c in got] == ["Hi!", "Hey.", "Ok.", long_turn,
                                                  "Nice?\n\n[2023-05-08 14:02] Ann: Right."]
    # turns stamped more than 10 minutes apart are two utterances
    got = _chunks([{"speaker": "Ann", "text": "Back.", "time": "2023-05-08T14:02"},
                   {"speaker": "Ann", "text": "Anyone?", "time": "2023-05-08T14:09"},
                   {"speaker": "Ann", "text": "Hello?", "time": "2023-05-08T14:30"}])
    assert len(got) == 2 and got[1] == "[2023-05-08 14:30] Ann: Hello?"
    # a run stops at the length cap: every joined unit stays short
    many = _chunks([{"speaker": "Ann", "text": f"Point number {i} of my list of things."} for i in range(20)])
    assert 1 < len(many) < 20 and all(len(c) <= 400 for c in many)
    # Chinese: each character counts as a word, so a long Chinese turn stays alone
    got = _chunks([{"speaker": "李", "text": "好的"}, {"speaker": "李", "text": "明天见"},
                   {"speaker": "李", "text": "我上周五去了上海，见了很多老朋友，还吃了小笼包。"}])
    assert len(got) == 2 and got[0].endswith("明天 (2023-05-09)见")


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_a_growing_log_never_changes_a_stored_id(tmp_path, seed):
    """Turns appended in random steps: every unit ever stored stays active under its id, its text
    unchanged, and nothing is superseded or deprecated."""
    import random

    from asmr.store.writer import ingest
    from asmr.units.chat import session_document

    rng = random.Random(seed)
    words = ["ok", "sure", "yes", "no", "maybe", "later", "tonight", "the", "harbour", "photos", "from",
             "porto", "were", "lovely"]
    turns = [{"speaker": rng.choice("AB"), "text": " ".join(rng.choices(words, k=rng.choice([1, 2, 3, 16])))}
             for _ in range(40)]
    mem, end, seen = tmp_path / "mem", 0, {}
    while end < len(turns):
        end = min(len(turns), end + rng.randint(1, 6))
        doc = session_document({"id": "log", "date": "2023-05-08", "turns": turns[:end]}, "log", "log")
        ingest(mem, [doc], embedder="hash-64", progress=False)
        rows = units(mem)
        assert all(status == "active" for _, _, status in rows)
        for uid, content, _ in rows:
            assert seen.setdefault(uid, content) == content
        assert set(seen) == {r[0] for r in rows}
    assert len(seen) < len(turns)  # some turns did join


# -- asmr chat --remember --------------------------------------------------------------------------

@pytest.fixture
def handbook(tmp_path):
    from pathlib import Path

    from asmr.store.writer import ingest
    from asmr.units.read import read_path

    root = Path(__file__).resolve().parents[2] / "examples" / "handbook"
    ingest(tmp_path / "mem", [read_path(p, root=root) for p in sorted(root.rglob("*.md"))],
           embedder="hash-256", progress=False)
    return tmp_path / "mem"


def _chat(capsys, monkeypatch, mem, conv, lines, *flags):
    import io

    monkeypatch.setattr("sys.stdin", io.StringIO("".join(f"{x}\n" for x in lines)))
    code = main(["chat", "--memory", str(mem), "--confidence-threshold", "0.05", "--no-audit",
                 "--conversation", str(conv), *flags])
    out, err = capsys.readouterr()
    return code, out, err


def test_chat_remember_writes_each_exchange_and_a_later_run_appends(handbook, tmp_path, capsys, monkeypatch):
    conv = tmp_path / "conv.json"
    code, out, err = _chat(capsys, monkeypatch, handbook, conv, ["Which port does the API server listen on?"],
                           "--remember")
    assert code == 0 and "8080 by default [1]" in out, err
    doc = f"conversation.{json.loads(conv.read_text())['id']}"
    first = [u for u in units(handbook) if f"/{doc}/" in u[0]]
    assert [u[1].split("] ", 1)[1] for u in first] == [
        "user: Which port does the API server listen on?",
        # what the memory confirmed, as the user saw it, without the citation markers
        ("assistant: The API server listens on port 8080 by default. Flag: `--port`; Default: 8080; "
         "Meaning: TCP port of the API server.")]
    # a later command recalls the remembered exchange
    code, out, _ = asmr(capsys, "search", "Which port does the API server listen on?", "--memory", handbook,
                        "--confidence-threshold", "0.05", "--no-server", "--json")
    assert code == 0 and any(h["unit_id"].startswith(f"memo://kb/{doc}/") for h in json.loads(out)["hits"])
    # the same conversation resumed: its document grows, the units it had keep their ids
    code, out, err = _chat(capsys, monkeypatch, handbook, conv, ["My flight to Porto leaves tomorrow."],
                           "--remember", "--confidence-threshold", "0.99")
    assert code == 0 and "Not found in memory" in out, err
    after = [u for u in units(handbook) if f"/{doc}/" in u[0]]
    assert after[:2] == first and all(status == "active" for _, _, status in after)
    # nothing was confirmed: only the user's words are remembered, their relative time resolved
    assert len(after) == 3 and re.fullmatch(r"\[\d{4}-\d\d-\d\d \d\d:\d\d\] user: My flight to Porto "
                                            r"leaves tomorrow \(\d{4}-\d\d-\d\d\)\.", after[2][1])
    with sqlite3.connect(handbook / schema.DB_FILE) as c:
        versions = c.execute("SELECT count(*), max(fmt) FROM versions WHERE doc_id=?", (doc,)).fetchone()
    assert versions == (2, "chat")


def test_chat_remember_needs_verification_and_reports_a_busy_memory(handbook, tmp_path, capsys, monkeypatch):
    from asmr.store.writer import Writer

    with pytest.raises(SystemExit) as exit_:
        _chat(capsys, monkeypatch, handbook, tmp_path / "c.json", ["Which port?"], "--remember",
              "--no-verify")
    assert exit_.value.code == 2 and "--remember: remembers only what verification confirmed" in \
        capsys.readouterr().err
    with Writer(handbook, embedder="hash-256"):  # another ingest holds the memory
        code, out, err = _chat(capsys, monkeypatch, handbook, tmp_path / "c.json",
                               ["Which port does the API server listen on?", "How long are logs kept?"],
                               "--remember")
    assert code == 4 and "8080" in out and "[turn" in out and out.count("[turn") == 1
    assert err.count("\n") == 1 and "--remember: turn " in err and "another ingest is writing it" in err
    assert not [u for u in units(handbook) if "/conversation." in u[0]]


def test_a_conversation_document_grows_by_turns_and_never_takes_over_another_document():
    from datetime import datetime

    from asmr.units.chat import SaidTurn, conversation_doc_id, conversation_document
    from asmr.units.model import Document

    assert conversation_doc_id("ab6919f36b7242ef") == "conversation.ab6919f36b7242ef"
    odd = [conversation_doc_id(c) for c in ("team:7", "team/7", "..", "x" * 200)]
    assert odd[0].startswith("conversation.team_7_") and len(set(odd)) == 4
    assert all(len(d) <= 128 and ".." not in d for d in odd)
    asked = datetime(2026, 3, 2, 9, 30, 41)
    turns = [SaidTurn(asked, "user", "I fly tomorrow."), SaidTurn(asked, "assistant", "Noted yesterday.",
                                                                   resolve=False),
             SaidTurn(asked, "assistant", "  ")]  # nothing to say: left out
    first = conversation_document("conversation.c", None, turns, source="test")
    assert (first.fmt, first.effective_date, first.title) == ("chat", "2026-03-02T09:30:00",
                                                              "Conversation, 2026-03-02 09:30")
    assert first.text == ("[2026-03-02 09:30] user: I fly tomorrow (2026-03-03).\n\n"
                          "[2026-03-02 09:30] assistant: Noted yesterday.")
    hello = SaidTurn(datetime(2026, 3, 5, 8, 0), "user", "Hi")
    later = conversation_document("conversation.c", first, [hello], source="test")
    assert later.text.startswith(first.text + "\n\n") and later.effective_date == first.effective_date
    with pytest.raises(InputError, match="conversation.c: exists and is not a conversation"):
        conversation_document("conversation.c", Document("conversation.c", "# Notes", "markdown"), turns,
                              source="test")
    with pytest.raises(InputError, match="no turn with text"):
        conversation_document("conversation.c", None, turns[2:], source="test")


# -- a corrected statement supersedes the earlier one, within one conversation ---------------------

def _recall(mem, question):
    """The hits of ``question``, by what their unit says (a turn without its head), in rank order."""
    from asmr.embed import get_embedder
    from asmr.retrieve import Retriever
    from asmr.store import Memory

    with Memory(mem) as m:
        hits = Retriever(m, get_embedder(m.embed_model)).search(question).hits
        texts = {u.row: u.content for u in m.units_at_rows([h.row for h in hits])}
    return {texts[h.row].split(": ", 1)[-1]: h for h in hits}


def test_a_later_turn_of_one_speaker_outdates_their_earlier_turn_and_nobody_elses(tmp_path, capsys):
    session = {"id": "trip", "date": "2023-05-08", "turns": [
        {"speaker": "Alice", "text": "My flight to Porto is on Thursday, I can't wait to see the river."},
        {"speaker": "Bob", "text": "My flight to Porto is on Monday, I can't wait to see the river."},
        {"speaker": "Alice",
         "text": "Sorry, my mistake: my flight to Porto is on Friday, I can't wait to see the river."}]}
    notes = tmp_path / "notes.md"  # an ordinary document states both: its current version holds both
    notes.write_text("# Notes\n\nThe Porto flight of the team is on Tuesday this season.\n\n"
                     "The Porto flight of the team is on Wednesday this season.\n", encoding="utf-8")
    mem = tmp_path / "mem"
    assert asmr(capsys, "ingest", "--format", "chat", write_jsonl(tmp_path / "s.jsonl", [session]),
                "--memory", mem, "--embedder", "hash-256")[0] == 0
    assert asmr(capsys, "ingest", notes, "--memory", mem)[0] == 0
    hits = _recall(mem, "When is the flight to Porto?")
    thursday, monday, friday = (hits[t["text"]] for t in session["turns"])
    assert thursday.alternative_to == friday.unit_id  # the later turn of the same speaker wins
    assert friday.alternative_to is None and monday.alternative_to is None  # Bob's is his own
    order = list(hits.values())
    assert order.index(thursday) == order.index(friday) + 1  # the older side right after the newer
    plain = [h for t, h in hits.items() if "this season" in t]
    assert len(plain) == 2 and not any(h.alternative_to or h.disagrees_with for h in plain)


def test_chat_remember_a_corrected_statement_is_answered_with_the_later_turn(handbook, tmp_path, capsys,
                                                                            monkeypatch):
    conv = tmp_path / "conv.json"
    code, out, err = _chat(capsys, monkeypatch, handbook, conv, [
        "My train to Ghent leaves on Thursday morning.",
        "Sorry, I was wrong: my train to Ghent leaves on Saturday morning.",
        "When does my train to Ghent leave?"], "--remember")
    assert code == 0, err
    lines = out.split("[turn ")[-1].splitlines()
    assert "Saturday morning [1]" in lines[1] and "Thursday" not in lines[1]  # the answer
    doc = f"conversation.{json.loads(conv.read_text())['id']}"
    said = {u[1].split("] ", 1)[1]: u[0] for u in units(handbook) if f"/{doc}/" in u[0]}
    later = said["user: Sorry, I was wrong: my train to Ghent leaves on Saturday morning."]
    earlier = said["user: My train to Ghent leaves on Thursday morning."]
    assert f"[1] {later}" in lines  # the later turn is cited, the earlier is not
    assert not any(earlier in x for x in lines if x.startswith("["))
    # the earlier statement (or the assistant's echo of it) shown as the older side, not as the answer
    assert lines[2].startswith("  [1] said later than memo://") and lines[2].endswith("Thursday morning.")


def test_a_terse_correction_outdates_the_turn_it_corrects_and_two_true_values_stand(tmp_path, capsys):
    from asmr.answer.answerer import AnswerConfig, Answerer
    from asmr.embed import get_embedder
    from asmr.generate import get_generator
    from asmr.retrieve import Retriever
    from asmr.store import Memory

    said = ["Alice: My flight to Porto is on Thursday, I can't wait to see the river.",
            "Tom: I bring the salad to the picnic.",
            "Alice: I visited Rome last spring with my sister.",
            "Carol: I live in Tartu with my two cats.",
            "Alice: Sorry, I meant Friday.",
            "Tom: I bring the wine to the picnic.",  # plain words in the slot, and no correction's mark
            "Alice: I visited Paris too last spring with my sister.",  # "too": a second value
            "Carol: No wait, Bologna, not Tartu!"]
    session = {"id": "trip", "date": "2023-05-08",
               "turns": [dict(zip(("speaker", "text"), t.split(": ", 1))) for t in said]}
    mem = tmp_path / "mem"
    assert asmr(capsys, "ingest", "--format", "chat", write_jsonl(tmp_path / "s.jsonl", [session]),
                "--memory", mem, "--embedder", "hash-256")[0] == 0
    with Memory(mem) as m:
        emb = get_embedder(m.embed_model)
        retriever = Retriever(m, emb)
        answerer = Answerer(m, get_generator("extractive", embedder=emb), retriever=retriever, embedder=emb,
                            config=AnswerConfig(refuse=False))
        result = retriever.search("When is the flight to Porto? Where does Carol live? Tartu")
        texts = {u.id: u.content.split("] ", 1)[1] for u in m.units_at_rows([h.row for h in result.hits])}
        hits = {texts[h.unit_id]: h for h in result.hits}
        assert set(hits) == set(said)
        thursday, friday = hits[said[0]], hits[said[4]]
        assert thursday.alternative_to == friday.unit_id  # "I meant Friday": the weekday it replaces
        assert hits[said[3]].alternative_to == hits[said[7]].unit_id  # "Bologna, not Tartu"
        # two true values, and another speaker's turn, correct nothing
        assert not any(hits[t].alternative_to or hits[t].disagrees_with for t in (said[1], said[2], said[5],
                                                                                 said[6]))
        question = "Which city does Carol live in?"
        answer = answerer.answer(question, retriever.search(question))
        cited = {c.unit_id: c for c in answer.citations}
        bologna = hits[said[7]].unit_id
        assert "Bologna" in answer.text and bologna in cited  # the correcting turn states the answer
        assert cited[bologna].older["text"] == "I live in Tartu with my two cats."  # the older side
        assert hits[said[3]].unit_id not in cited
