"""The persistent memory: ingest, revisions, snapshots, integrity, bad input."""
import json
import sqlite3

import numpy as np
import pytest

from asmr.embed import HashingEmbedder
from asmr.store import Memory, MemoryStateError, Writer, check_memory, ingest
from asmr.store import schema
from asmr.units.model import Document, InputError

GUIDE_V1 = """---
title: Server guide
type: manual
effective_date: 2026-01-15
---
# Server guide

The server listens on port 8080 by default. See section 2 for the options.

## 2. Options

Options you can set:

- `--port N` changes the port.
- `--log DIR` moves the logs.

| Setting | Default |
|---|---|
| port | 8080 |
| workers | 4 |

Read [the FAQ](faq.md#ports) before changing ports.
"""

GUIDE_V2 = (GUIDE_V1.replace("listens on port 8080 by default", "listens on port 9090 by default")
            .replace("| port | 8080 |", "| port | 9090 |")
            .replace("- `--log DIR` moves the logs.\n", "")
            .replace("effective_date: 2026-01-15", "effective_date: 2026-06-01"))


class CountingEmbedder(HashingEmbedder):
    def __init__(self):
        super().__init__(64)
        self.seen: list[str] = []

    def embed(self, texts, *, progress=False):
        self.seen.extend(texts)
        return super().embed(texts)


def doc(doc_id, text, **kw):
    kw.setdefault("fmt", "markdown")
    from asmr.units.read import front_matter
    fields, _ = front_matter(text) if kw["fmt"] == "markdown" else ({}, 0)
    return Document(doc_id, text, title=fields.get("title", doc_id), doc_type=fields.get("type", "other"),
                    effective_date=fields.get("effective_date"), path=f"{doc_id}.md", source=f"{doc_id}.md", **kw)


def units_by_status(m, doc_id):
    out = {}
    for u in m.units_of("kb", doc_id, status=None):
        out.setdefault(u.status, []).append(u)
    return out


def test_ingest_creates_addressable_units_with_exact_spans(tmp_path):
    report = ingest(tmp_path, [doc("guide", GUIDE_V1)], embedder="hash-64")
    assert report.counts() == {"new": 1, "revised": 0, "unchanged": 0} and report.generation == 1
    with Memory(tmp_path) as m:
        units = m.units_of("kb", "guide")
        text = m.document_text("kb", "guide")
        assert text == GUIDE_V1  # stored as ingested, front matter included
        kinds = {u.kind for u in units}
        assert {"heading", "paragraph", "list", "list_item", "table", "table_row"} <= kinds
        for u in units:
            assert u.id.startswith("memo://kb/guide/") and u.status == "active"
            span = text[u.offset_start:u.offset_end]
            assert (u.content.endswith("\n" + span) if u.kind == "table_row" else u.content == span)
            assert u.effective_at == "2026-01-15" and u.embed_model == "hash-64"
        by_id = {u.id: u for u in units}
        items = [u for u in units if u.kind == "list_item"]
        assert all(by_id[u.parent_id].kind == "list" for u in items)
        rows = [u for u in units if u.kind == "table_row"]
        assert all(u.content.startswith("| Setting | Default |") for u in rows)
        assert any(u.section_path[-1].endswith("Options") for u in items)
        links = [ln for u in units for ln in m.links_from(u.id)]
        assert {"kind": "section", "target": "2", "target_doc": "guide"} in [
            {k: ln[k] for k in ("kind", "target", "target_doc")} for ln in links]
        assert any(ln["kind"] == "document" and ln["target_doc"] == "faq" for ln in links)
        assert m.vectors.shape == (len(units), 64)
        rows_, _ = m.search_lexical("workers", 3)
        assert m.units_at_rows(rows_[:1])[0].content.endswith("| workers | 4 |")
    assert check_memory(tmp_path).ok


def test_revision_keeps_supersedes_and_deprecates(tmp_path):
    emb = CountingEmbedder()
    ingest(tmp_path, [doc("guide", GUIDE_V1)], embedder=emb)
    with Memory(tmp_path) as m:
        v1 = {u.content: u for u in m.units_of("kb", "guide")}
    emb.seen.clear()
    report = ingest(tmp_path, [doc("guide", GUIDE_V2)], embedder=emb)
    d = report.documents[0]
    assert (d.status, d.version) == ("revised", 2)
    assert d.superseded >= 3 and d.deprecated == 1 and d.kept >= 4
    with Memory(tmp_path) as m:
        st = units_by_status(m, "guide")
        v2 = {u.content: u for u in st["active"]}
        for content, u in v1.items():  # unchanged text keeps its address
            if content in v2:
                assert v2[content].id == u.id and v2[content].doc_version == 2
        para = next(u for u in st["superseded"] if u.kind == "paragraph")
        assert "8080" in para.content
        successor = m.unit(para.superseded_by)
        assert successor.status == "active" and "9090" in successor.content
        gone = st["deprecated"]
        assert [u.content for u in gone] == ["`--log DIR` moves the logs."]
        old_text = m.document_text("kb", "guide", version=1)  # old spans still point into old text
        for u in st["superseded"] + gone:
            assert u.doc_version == 1
            span = old_text[u.offset_start:u.offset_end]
            assert u.content == span or u.content.endswith("\n" + span)
        hist = m.history("kb", "guide")
        assert [v.version for v in hist] == [1, 2]
        assert [v.effective_date for v in hist] == ["2026-01-15", "2026-06-01"]
        assert hist[1].units_deprecated == 1
    # Only texts never embedded before were embedded.
    assert set(emb.seen) <= {u.content for u in st["active"]} - set(v1)
    assert check_memory(tmp_path).ok


def test_unchanged_reingest_changes_nothing(tmp_path):
    emb = CountingEmbedder()
    ingest(tmp_path, [doc("guide", GUIDE_V1), doc("notes", "Just one line.", fmt="text")], embedder=emb)
    dump = _dump(tmp_path)
    emb.seen.clear()
    report = ingest(tmp_path, [doc("guide", GUIDE_V1), doc("notes", "Just one line.", fmt="text")], embedder=emb)
    assert report.counts() == {"new": 0, "revised": 0, "unchanged": 2}
    assert report.generation == 1 and emb.seen == []
    assert _dump(tmp_path) == dump


def test_same_text_elsewhere_reuses_its_vector(tmp_path):
    emb = CountingEmbedder()
    ingest(tmp_path, [doc("a", "Shared sentence about ports.", fmt="text")], embedder=emb)
    emb.seen.clear()
    report = ingest(tmp_path, [doc("b", "Shared sentence about ports.", fmt="text")], embedder=emb)
    assert emb.seen == [] and report.reused_vectors == 1
    with Memory(tmp_path) as m:
        np.testing.assert_array_equal(m.vectors[0], m.vectors[1])


def _dump(path):
    conn = sqlite3.connect(path / schema.DB_FILE)
    out = {t: conn.execute(f"SELECT * FROM {t} ORDER BY 1, 2").fetchall()
           for t in ("meta", "documents", "versions", "units", "links")}
    conn.close()
    return out


def test_reader_keeps_its_snapshot_until_reopen(tmp_path):
    ingest(tmp_path, [doc("guide", GUIDE_V1)], embedder="hash-64")
    reader = Memory(tmp_path)
    before_units = [u.id for u in reader.units_of("kb", "guide")]
    q = HashingEmbedder(64).embed(["port 8080"])
    before_dense = reader.search_dense(q, 5)[0].tolist()
    before_lex = reader.search_lexical("8080", 5)[0].tolist()
    ingest(tmp_path, [doc("guide", GUIDE_V2)], embedder="hash-64")
    ingest(tmp_path, [doc("other", "Another document entirely.", fmt="text")], embedder="hash-64")
    # Two commits later, and the files of the reader's generation are gone: it still sees its state.
    assert not (tmp_path / schema.dense_file(1)).exists()
    assert [u.id for u in reader.units_of("kb", "guide")] == before_units
    assert all(reader.unit(uid).status == "active" for uid in before_units)
    assert reader.search_dense(q, 5)[0].tolist() == before_dense
    assert reader.search_lexical("8080", 5)[0].tolist() == before_lex
    assert reader.documents() == [("kb", "guide")]
    reader.reopen()
    assert reader.generation == 3 and len(reader.documents()) == 2
    assert any(reader.unit(uid).status != "active" for uid in before_units)
    assert "9090" in reader.units_at_rows(reader.search_lexical("9090", 1)[0])[0].content
    reader.close()


def test_duplicate_ids_in_one_batch_write_nothing(tmp_path):
    ingest(tmp_path, [doc("guide", GUIDE_V1)], embedder="hash-64")
    dump = _dump(tmp_path)
    with pytest.raises(InputError, match="'dup'.*unique"):
        ingest(tmp_path, [doc("dup", "One."), doc("dup", "Two.")], embedder="hash-64")
    assert _dump(tmp_path) == dump


def test_newer_schema_is_refused_and_left_alone(tmp_path):
    ingest(tmp_path, [doc("guide", GUIDE_V1)], embedder="hash-64")
    conn = sqlite3.connect(tmp_path / schema.DB_FILE)
    conn.execute("UPDATE meta SET value='99' WHERE key='schema_version'")
    conn.commit()
    conn.close()
    dump = _dump(tmp_path)
    for opener in (lambda: Memory(tmp_path), lambda: Writer(tmp_path, embedder="hash-64")):
        with pytest.raises(MemoryStateError, match="newer ASMR.*schema 99"):
            opener()
    assert _dump(tmp_path) == dump


def test_one_writer_at_a_time_and_embedder_must_match(tmp_path):
    with Writer(tmp_path, embedder="hash-64") as w:
        w.ingest([doc("a", "Text.", fmt="text")])
        with pytest.raises(MemoryStateError, match="another ingest"):
            Writer(tmp_path, embedder="hash-64")
    with pytest.raises(MemoryStateError, match="hash-64.*not 'hash-32'"):
        Writer(tmp_path, embedder="hash-32")
    with pytest.raises(MemoryStateError, match="no such directory"):
        Memory(tmp_path / "missing")


def test_a_new_memory_without_an_embedder_asked_for_takes_the_model_that_reads_it(tmp_path, monkeypatch):
    import asmr.store.writer as writer_module
    from asmr.embed import DEFAULT_EMBEDDER, MULTILINGUAL_EMBEDDER
    from conftest import named_hash_embedder

    monkeypatch.setattr(writer_module, "get_embedder", named_hash_embedder)
    chinese = [doc("kiln", "陶窑每周四烧制，釉料订单中午截止。", fmt="text")]
    english = [doc("glaze", "Glaze orders close at noon on Thursdays.", fmt="text")]
    with Writer(tmp_path / "zh") as w:
        w.embedder()  # one made before the text is seen does not decide
        w.ingest(chinese)
        assert w.default_share == 0.0
    with Writer(tmp_path / "zh") as w:  # the memory's model from then on, whatever the text
        w.ingest(english)
        assert w.default_share is None
    with Writer(tmp_path / "en") as w:
        w.ingest(english)
    with Writer(tmp_path / "asked", embedder=DEFAULT_EMBEDDER) as w:  # asked for: never chosen
        w.ingest(chinese)
    with Writer(tmp_path / "none") as w:  # nothing stored: nothing recorded, the next ingest chooses again
        w.ingest([])
    models = {}
    for name in ("zh", "en", "asked"):
        with Memory(tmp_path / name, load_indexes=False) as m:
            models[name] = m.embed_model
    assert models == {"zh": MULTILINGUAL_EMBEDDER, "en": DEFAULT_EMBEDDER, "asked": DEFAULT_EMBEDDER}
    with Writer(tmp_path / "none") as w:
        w.ingest(chinese)
    with Memory(tmp_path / "none", load_indexes=False) as m:
        assert m.embed_model == MULTILINGUAL_EMBEDDER


def test_citation_markers_in_text_stay_plain_text(tmp_path):
    text = "Earlier answers wrote [cite:memo://kb/x/0123456789ab] and 【引用:memo://kb/y/abcdefabcdef】 here."
    ingest(tmp_path, [doc("raw", text, fmt="text")], embedder="hash-64")
    with Memory(tmp_path) as m:
        (u,) = m.units_of("kb", "raw")
        assert u.content == text and m.links_from(u.id) == []


def test_chinese_document_units_and_search(tmp_path):
    zh = ("# 服务器指南\n\n服务器默认监听8080端口。修改端口需要重启服务！日志保存在本地磁盘吗？是的。\n\n"
          "## 备份\n\n备份每天凌晨两点运行。")
    ingest(tmp_path, [doc("zh", zh)], embedder="hash-64")
    with Memory(tmp_path) as m:
        units = m.units_of("kb", "zh")
        assert any(u.content == "备份每天凌晨两点运行。" for u in units)
        rows, _ = m.search_lexical("备份", 1)
        assert "备份" in m.units_at_rows(rows)[0].content
    assert check_memory(tmp_path).ok


def test_hnsw_above_flat_max_and_filters_retired_rows(tmp_path):
    docs = [doc(f"d{i}", f"Document number {i} talks about topic {i % 7}.", fmt="text") for i in range(40)]
    ingest(tmp_path, docs, embedder="hash-64", flat_max=10)
    ingest(tmp_path, [doc("d3", "Document number 3 now talks about something new.", fmt="text")],
           embedder="hash-64", flat_max=10)
    with Memory(tmp_path) as m:
        assert m.dense.kind == "hnsw"
        old = next(u for u in m.units_of("kb", "d3", status=None) if u.status == "superseded")
        rows, _ = m.search_dense(np.asarray(m.vectors[old.row])[None], 5)
        assert old.row not in rows[0].tolist() and (rows[0] >= 0).all()
    assert check_memory(tmp_path).ok


def test_check_finds_tampering(tmp_path):
    ingest(tmp_path, [doc("guide", GUIDE_V1)], embedder="hash-64")
    assert check_memory(tmp_path).ok
    conn = sqlite3.connect(tmp_path / schema.DB_FILE)
    conn.execute("UPDATE units SET content = content || ' (edited)' WHERE row = 1")
    conn.execute("UPDATE units SET status = 'superseded' WHERE row = 2")
    conn.commit()
    conn.close()
    problems = check_memory(tmp_path).problems
    assert any("content differs" in p for p in problems)
    assert any("superseded without a successor" in p for p in problems)
    assert any("not the" in p and "active units" in p for p in problems)
    (tmp_path / schema.dense_file(1)).unlink()
    with open(tmp_path / schema.VECTORS_FILE, "r+b") as f:
        f.truncate(100)
    problems = check_memory(tmp_path).problems
    assert any("vectors.f32" in p and "need" in p for p in problems)


def test_report_is_json_serialisable(tmp_path):
    report = ingest(tmp_path, [doc("guide", GUIDE_V1)], embedder="hash-64")
    back = json.loads(json.dumps(report.to_dict()))
    assert back["documents"][0]["doc_id"] == "guide" and back["counts"]["new"] == 1


def test_bad_input_after_several_batches_rolls_everything_back(tmp_path, monkeypatch):
    import asmr.store.writer as writer_module

    monkeypatch.setattr(writer_module, "BATCH_DOCUMENTS", 4)
    ingest(tmp_path, [doc("keep", "Stored before.", fmt="text")], embedder="hash-64")
    dump = _dump(tmp_path)
    size = (tmp_path / schema.VECTORS_FILE).stat().st_size

    def stream():
        for i in range(10):
            yield doc(f"n{i}", f"Streamed document {i}.", fmt="text")
        raise InputError("feed.jsonl:11: text is missing")

    with pytest.raises(InputError, match="feed.jsonl:11"):
        ingest(tmp_path, stream(), embedder="hash-64")
    assert _dump(tmp_path) == dump
    with Memory(tmp_path) as m:
        assert m.count_units() == 1 and m.documents() == [("kb", "keep")]
    assert check_memory(tmp_path).ok
    report = ingest(tmp_path, (doc(f"n{i}", f"Streamed document {i}.", fmt="text") for i in range(10)),
                    embedder="hash-64")
    assert report.counts()["new"] == 10
    assert (tmp_path / schema.VECTORS_FILE).stat().st_size == size * 11


def _corpus(n_docs: int, revised: bool = False):
    """Markdown documents with sections, lists, tables and repeated texts; ``revised`` edits some."""
    docs = []
    for i in range(n_docs):
        text = (f"---\neffective_date: 2026-02-01\n---\n# Doc {i}\n\n"
                f"Service {i % 7} listens on port {8000 + i % 5}. See section 2.\n\n"
                f"## 2. Options\n\nKeys:\n\n- `port` is the port.\n- `workers` is {i % 3 + 2}.\n\n"
                f"| Key | Value |\n|---|---|\n| port | {8000 + i} |\n\nShared closing line.\n")
        if revised and i % 3 == 0:
            text = text.replace("listens on port", "now listens on port")
            text = text.replace("- `port` is the port.\n", "")
        if revised and i % 4 == 1:
            text += "\nA new paragraph about ünicode and 北京大学.\n"
        docs.append(doc(f"d{i}", text))
    return docs


def _state(path):
    """Everything two equivalent ingests must agree on (timestamps aside), BM25 answers included."""
    conn = sqlite3.connect(path / schema.DB_FILE)
    out = {
        "units": conn.execute("SELECT row, id, kb, doc_id, doc_version, ord, kind, parent_id, section_path, "
                              "offset_start, offset_end, content, content_hash, effective_at, status, "
                              "superseded_by, embed_model FROM units ORDER BY row").fetchall(),
        "versions": conn.execute("SELECT kb, doc_id, version, sha256, text, units_total, units_kept, "
                                 "units_added, units_superseded, units_deprecated FROM versions "
                                 "ORDER BY 1, 2, 3").fetchall(),
        "documents": conn.execute("SELECT kb, doc_id, title, current_version FROM documents "
                                  "ORDER BY 1, 2").fetchall(),
        "links": conn.execute("SELECT * FROM links ORDER BY rowid").fetchall(),
        "meta": conn.execute("SELECT * FROM meta ORDER BY key").fetchall(),
        "vectors": (path / schema.VECTORS_FILE).read_bytes(),
    }
    conn.close()
    with Memory(path) as m:
        out["search"] = [(q, *(a.tolist() for a in m.search_lexical(q, 8)))
                         for q in ("port", "service 3 listens", "workers 2", "北京", "shared closing",
                                   "absent")]
    return out


def test_planner_process_writes_the_same_memory(tmp_path, monkeypatch):
    """A planner in a second process (large ingests) and one in the writer's process agree on everything."""
    import asmr.store.writer as writer_module

    monkeypatch.setattr(writer_module, "BATCH_DOCUMENTS", 7)  # several batches in flight
    for workers in (0, 1):
        mem = tmp_path / f"w{workers}"
        for revised in (False, True):
            report = ingest(mem, _corpus(40, revised), embedder="hash-64", workers=workers)
            assert ("wait" in report.timings) == bool(workers)
        assert check_memory(mem).ok
    assert report.counts() == {"new": 0, "revised": 21, "unchanged": 19}
    assert _state(tmp_path / "w0") == _state(tmp_path / "w1")


def test_planner_process_errors_roll_back(tmp_path):
    ingest(tmp_path, [doc("keep", GUIDE_V1)], embedder="hash-64")
    dump = _dump(tmp_path)
    docs = [doc(f"n{i}", f"Document {i}.", fmt="text") for i in range(5)] + [doc("empty", "#\n")]
    with pytest.raises(InputError, match="empty.md: no text to store"):
        ingest(tmp_path, docs, embedder="hash-64", workers=1)
    assert _dump(tmp_path) == dump and check_memory(tmp_path).ok
    assert not [p.name for p in tmp_path.iterdir() if p.name.endswith(".tmp")]


def test_planner_process_dies_with_its_writer(tmp_path):
    """SIGKILL of the writer's process takes its planner process with it (nothing left to touch the store)."""
    import os
    import signal
    import subprocess
    import sys
    import time

    ingest(tmp_path, [doc("keep", GUIDE_V1)], embedder="hash-64")
    script = ("import sys, time\n"
              "from asmr.store.plan import PlannerProcess\n"
              "p = PlannerProcess(directory=sys.argv[1], kb='kb', committed_rows=1, embed_model='hash-64',"
              " ingest_time='2026-01-01')\n"
              "print(p._proc.pid, flush=True)\n"
              "time.sleep(60)\n")
    proc = subprocess.Popen([sys.executable, "-c", script, str(tmp_path)], stdout=subprocess.PIPE, text=True)
    child = int(proc.stdout.readline())
    os.kill(child, 0)  # alive
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        try:
            with open(f"/proc/{child}/stat") as f:
                if f.read().split(") ")[-1].startswith("Z"):
                    break  # dead, waiting for its new parent to reap it
        except FileNotFoundError:
            break
        time.sleep(0.05)
    else:
        os.kill(child, signal.SIGKILL)
        pytest.fail("the planner process outlived its writer")


def test_document_summaries_and_iter_units_filter_in_the_store(tmp_path):
    mem = tmp_path / "mem"
    ingest(mem, [doc("guide", GUIDE_V1), doc("faq", "# FAQ\n\nPorts are 8080.\n")], embedder="hash-64")
    ingest(mem, [doc("guide", GUIDE_V2)])
    with Memory(mem, load_indexes=False) as m:
        docs = m.document_summaries()
        assert [(d.doc_id, d.version, d.doc_type, d.status) for d in docs] == \
            [("faq", 1, "other", "active"), ("guide", 2, "manual", "active")]
        assert docs[1].units == len(m.units_of("kb", "guide")) and docs[1].effective_date == "2026-06-01"
        assert [d.doc_id for d in m.document_summaries(doc_type="manual")] == ["guide"]
        assert m.document_summaries(kb="other") == [] and m.document_summaries(status="retired") == []
        every = list(m.iter_units())
        assert len(every) == m.count_units() and {u.doc_id for u in every} == {"faq", "guide"}
        superseded = list(m.iter_units(doc_id="guide", status="superseded"))
        assert superseded and all(u.superseded_by for u in superseded)
        assert [u.content for u in m.iter_units(doc_type="other", kind="paragraph")] == ["Ports are 8080."]


def test_prune_retires_through_the_lifecycle_and_check_passes(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "gone.md").write_text("# Gone\n\nSoon gone.\n")
    gone = doc("gone", "# Gone\n\nSoon gone.\n")
    gone.source = "src/gone.md"
    kept = doc("kept", "# Kept\n\nStays.\n")
    kept.source = "src/kept.md"
    ingest(tmp_path / "mem", [gone, kept], embedder="hash-64")
    (tmp_path / "src" / "gone.md").unlink()
    with Writer(tmp_path / "mem") as w:  # kept.md is missing too, but this ingest reads it again: not retired
        report = w.ingest([kept], prune=["src"])
    assert [(d.doc_id, d.status) for d in report.documents] == [("kept", "unchanged"), ("gone", "retired")]
    with Memory(tmp_path / "mem") as m:
        assert [(d.doc_id, d.status, d.units) for d in m.document_summaries()] == \
            [("gone", "retired", 0), ("kept", "active", 2)]
        assert {u.status for u in m.iter_units(doc_id="gone")} == {"deprecated"}
        assert all(m.unit(u.id).doc_id != "gone" for u in m.units_at_rows(m.lexical.rows))
    assert check_memory(tmp_path / "mem").ok


REGATTA = [("Noor", "how did the regatta on the lake go?"), ("Ilse", "third place!! so happy"),
           ("Ilse", "the wind dropped twice"), ("Noor", "did you see the heron?"), ("Noor", "it was huge")]


def _unit_vectors(memory_dir) -> dict[str, np.ndarray]:
    with Memory(memory_dir) as m:
        return {u.content.split(": ", 1)[1]: np.array(m.vectors[u.row]) for u in m.units_at_rows(range(m.num_rows))}


def test_a_reply_is_embedded_with_the_question_another_speaker_asked_before_it(tmp_path):
    """A conversation stored one turn a document (as eval corpora are) and one stored as a chat document:
    a reply's vector is the mean of its own and that of the question read with it, so it is found by what
    it answers; a turn after a statement, or after its own speaker's question, keeps its own vector."""
    from asmr.units.chat import iter_chat
    from asmr.units.read import iter_jsonl
    records = tmp_path / "turns.jsonl"
    records.write_text("".join(json.dumps({"pid": f"t{i}", "title": "", "text": text, "speaker": who,
                                           "effective_date": "2025-03-09"}) + "\n"
                               for i, (who, text) in enumerate(REGATTA)), encoding="utf-8")
    session = tmp_path / "session.jsonl"
    session.write_text(json.dumps({"id": "s1", "date_time": "2025-03-09T10:00", "turns": [
        {"speaker": who, "text": text} for who, text in REGATTA]}) + "\n", encoding="utf-8")
    embedder = HashingEmbedder(64)
    for name, documents in (("one-turn documents", list(iter_jsonl(records))),
                            ("a chat document", list(iter_chat(session, join_turns=False)))):
        ingest(tmp_path / name, documents, embedder="hash-64")
        vectors = _unit_vectors(tmp_path / name)
        stamp = "[2025-03-09]" if name == "one-turn documents" else "[2025-03-09 10:00]"
        question, reply = (f"{stamp} {w}: {t}" for w, t in REGATTA[:2])
        read = embedder.embed([reply, f"{question}\n\n{reply}"])
        mean = read.sum(axis=0) / np.linalg.norm(read.sum(axis=0))
        assert np.allclose(vectors["third place!! so happy"], mean, atol=1e-6), name
        for who, said in (REGATTA[0], *REGATTA[2:]):
            assert np.allclose(vectors[said], embedder.embed([f"{stamp} {who}: {said}"])[0], atol=1e-6), (name, said)
        with Memory(tmp_path / name) as m:  # found by the question's words, which the reply does not say
            rows = m.search_dense(embedder.embed(["regatta on the lake"]), 2)[0][0]
            assert {u.content.split(": ", 1)[1] for u in m.units_at_rows([int(r) for r in rows])} == \
                {"how did the regatta on the lake go?", "third place!! so happy"}, name


def test_a_turn_never_takes_the_vector_of_the_same_words_read_with_a_question(tmp_path):
    from asmr.units.read import iter_jsonl
    records = tmp_path / "turns.jsonl"
    said = [("Noor", "how did the regatta on the lake go?", "t1"), ("Ilse", "third place!! so happy", "t2")]
    records.write_text("".join(json.dumps({"pid": pid, "text": text, "speaker": who, "effective_date": "2025-03-09"})
                               + "\n" for who, text, pid in said), encoding="utf-8")
    ingest(tmp_path / "m", list(iter_jsonl(records)), embedder="hash-64")
    alone = tmp_path / "alone.jsonl"  # the same turn again, in a document of its own after nothing
    alone.write_text(json.dumps({"pid": "again", "text": said[1][1], "speaker": "Ilse",
                                 "effective_date": "2025-03-09"}) + "\n", encoding="utf-8")
    ingest(tmp_path / "m", list(iter_jsonl(alone)), embedder="hash-64")
    with Memory(tmp_path / "m") as m:
        (reply,), (again,) = m.units_of("kb", "t2"), m.units_of("kb", "again")
        assert reply.content == again.content
        assert np.allclose(m.vectors[again.row], HashingEmbedder(64).embed([again.content])[0], atol=1e-6)
        assert not np.allclose(m.vectors[reply.row], m.vectors[again.row])
