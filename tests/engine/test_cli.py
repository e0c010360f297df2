"""The ``asmr`` command line: ingest, units show, doc history, check; exit codes and bad input."""
import json
import os
import sqlite3
import subprocess
import sys

import pytest

from asmr.cli import main
from asmr.store import schema


def asmr(capsys, *args):
    code = main([str(a) for a in args])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture()
def docs(tmp_path):
    src = tmp_path / "docs"
    (src / "guides").mkdir(parents=True)
    (src / "guides" / "setup.md").write_text("---\ntype: manual\n---\n# Setup\n\nRun the installer. "
                                             "See [the FAQ](../faq.html).\n")
    (src / "faq.html").write_text("<html><head><title>FAQ</title><style>p{}</style></head><body>"
                                  "<h1>FAQ</h1><p>Ports are 8080.</p><script>alert(1)</script></body></html>")
    (src / "notes.txt").write_text("Plain notes.\n\nSecond paragraph.\n")
    (src / ".hidden.md").write_text("# skipped\n")
    return src


def test_ingest_show_history_check(tmp_path, docs, capsys):
    mem = tmp_path / "mem"
    code, out, _ = asmr(capsys, "ingest", docs, "--memory", mem, "--embedder", "hash-64", "--json")
    assert code == 0
    report = json.loads(out)
    assert sorted(d["doc_id"] for d in report["documents"]) == ["faq", "guides.setup", "notes"]
    conn = sqlite3.connect(mem / schema.DB_FILE)
    uid, = conn.execute("SELECT id FROM units WHERE content='Ports are 8080.'").fetchone()
    types = dict(conn.execute("SELECT doc_id, doc_type FROM documents"))
    raw_html = conn.execute("SELECT raw FROM versions WHERE doc_id='faq'").fetchone()[0]
    link_doc = conn.execute("SELECT target_doc FROM links WHERE kind='document'").fetchone()[0]
    conn.close()
    assert types["guides.setup"] == "manual" and "<script>" in raw_html and link_doc == "faq"
    assert not any("alert" in c for c in _contents(mem))

    code, out, _ = asmr(capsys, "units", "show", uid, "--memory", mem)
    assert code == 0 and uid in out and "[active]" in out and "Ports are 8080." in out
    code, out, _ = asmr(capsys, "units", "show", uid, "--memory", mem, "--json")
    assert json.loads(out)["doc_id"] == "faq"

    (docs / "notes.txt").write_text("Plain notes, revised.\n\nSecond paragraph.\n")
    code, out, _ = asmr(capsys, "ingest", docs, "--memory", mem)  # the memory's embedder is remembered
    assert code == 0 and "1 revised" in out and "2 unchanged" in out
    code, out, _ = asmr(capsys, "doc", "history", "notes", "--memory", mem)
    assert code == 0 and "2 version(s)" in out and "v2" in out
    code, out, _ = asmr(capsys, "doc", "history", "notes", "--memory", mem, "--json")
    assert [v["version"] for v in json.loads(out)] == [1, 2]
    code, out, _ = asmr(capsys, "check", "--memory", mem)
    assert code == 0 and out.startswith("ok")


def _contents(mem):
    conn = sqlite3.connect(mem / schema.DB_FILE)
    rows = [c for c, in conn.execute("SELECT content FROM units")]
    conn.close()
    return rows


def test_not_found_and_bad_ids(tmp_path, docs, capsys):
    mem = tmp_path / "mem"
    assert asmr(capsys, "ingest", docs / "notes.txt", "--memory", mem, "--embedder", "hash-64")[0] == 0
    code, _, err = asmr(capsys, "units", "show", "memo://kb/notes/0123456789ab", "--memory", mem)
    assert code == 3 and "not in memory" in err
    code, _, err = asmr(capsys, "units", "show", "memo://kb/../0123456789ab", "--memory", mem)
    assert code == 2 and "'..'" in err
    code, _, err = asmr(capsys, "doc", "history", "nope", "--memory", mem)
    assert code == 3
    code, _, err = asmr(capsys, "check", "--memory", tmp_path / "nothing")
    assert code == 4 and "no memory.sqlite" in err


@pytest.mark.parametrize("name,content,reason", [
    ("bad.txt", b"fine text " * 10 + b"\xff\xfe broken", "invalid UTF-8 at byte offset 100"),
    ("blob.txt", b"MZ\x00\x00\x01binary", "binary file"),
    ("empty.md", b"   \n\n", "empty document"),
    ("typed.md", b"---\ntype: novel\n---\n# X\n\ntext\n", "novel"),
    ("dated.md", b"---\neffective_date: yesterday\n---\n# X\n\ntext\n", "yesterday"),
])
def test_bad_input_is_named_and_nothing_is_written(tmp_path, docs, capsys, name, content, reason):
    mem = tmp_path / "mem"
    assert asmr(capsys, "ingest", docs / "notes.txt", "--memory", mem, "--embedder", "hash-64")[0] == 0
    before = _contents(mem)
    bad = tmp_path / name
    bad.write_bytes(content)
    code, _, err = asmr(capsys, "ingest", docs / "guides", bad, "--memory", mem)
    assert code == 2 and str(bad) in err and reason in err and "nothing was written" in err
    assert _contents(mem) == before
    code, out, err = asmr(capsys, "ingest", docs / "guides", bad, "--memory", mem, "--skip-bad")
    assert code == 5 and str(bad) in err and "1 new" in out  # the good file went in, the exit says not all did


def test_errors_replace_accepts_invalid_utf8(tmp_path, capsys):
    bad = tmp_path / "bad.txt"
    bad.write_bytes(b"caf\xe9 au lait.")
    mem = tmp_path / "mem"
    code, _, _ = asmr(capsys, "ingest", bad, "--memory", mem, "--embedder", "hash-64", "--errors", "replace")
    assert code == 0 and _contents(mem) == ["caf\ufffd au lait."]


def test_jsonl_corpus_and_id_tricks(tmp_path, capsys):
    corpus = tmp_path / "c.jsonl"
    corpus.write_text('{"pid": "p1", "title": "One", "text": "First passage."}\n\n'
                      '{"id": "p2", "title": "Two", "text": "Second passage."}\n')
    mem = tmp_path / "mem"
    code, out, _ = asmr(capsys, "ingest", corpus, "--memory", mem, "--embedder", "hash-64", "--kb", "wiki")
    assert code == 0 and "2 new" in out
    assert sorted(_contents(mem)) == ["First passage.", "Second passage."]
    evil = tmp_path / "evil.jsonl"
    evil.write_text('{"id": "../../etc/passwd", "title": "x", "text": "y"}\n')
    code, _, err = asmr(capsys, "ingest", evil, "--memory", mem)
    assert code == 2 and "evil.jsonl:1" in err and ".." in err
    dup = tmp_path / "dup.jsonl"
    dup.write_text('{"id": "p9", "text": "a"}\n{"id": "p9", "text": "b"}\n')
    code, _, err = asmr(capsys, "ingest", dup, "--memory", mem)
    assert code == 2 and "'p9'" in err and "unique" in err
    code, _, err = asmr(capsys, "ingest", corpus, "--memory", mem, "--kb", "bad kb")
    assert code == 2 and "knowledge base" in err


def test_newer_schema_exit_code(tmp_path, docs, capsys):
    mem = tmp_path / "mem"
    assert asmr(capsys, "ingest", docs / "notes.txt", "--memory", mem, "--embedder", "hash-64")[0] == 0
    conn = sqlite3.connect(mem / schema.DB_FILE)
    conn.execute("UPDATE meta SET value='7' WHERE key='schema_version'")
    conn.commit()
    conn.close()
    code, _, err = asmr(capsys, "ingest", docs / "notes.txt", "--memory", mem)
    assert code == 4 and "newer ASMR" in err


def test_check_exits_nonzero_on_inconsistency(tmp_path, docs, capsys):
    mem = tmp_path / "mem"
    assert asmr(capsys, "ingest", docs, "--memory", mem, "--embedder", "hash-64")[0] == 0
    conn = sqlite3.connect(mem / schema.DB_FILE)
    conn.execute("UPDATE units SET offset_end = offset_end + 3 WHERE row = 0")
    conn.commit()
    conn.close()
    code, out, _ = asmr(capsys, "check", "--memory", mem, "--json")
    assert code == 1 and json.loads(out)["ok"] is False


def test_memory_from_environment_and_console_script(tmp_path, docs):
    env = {"ASMR_MEMORY": str(tmp_path / "envmem"), "PATH": "/usr/bin:/bin"}
    exe = [sys.executable, "-m", "asmr.cli"]
    r = subprocess.run([*exe, "ingest", str(docs / "notes.txt"), "--embedder", "hash-64"], env=env,
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert (tmp_path / "envmem" / schema.DB_FILE).exists()
    r = subprocess.run([*exe, "--help"], capture_output=True, text=True)
    assert r.returncode == 0 and "ingest" in r.stdout and "Exit codes" in r.stdout


def test_default_embedder_needs_no_flags(tmp_path, docs, capsys):
    pytest.importorskip("sentence_transformers", reason="sentence-transformers is not installed")
    mem = tmp_path / "mem"
    code, out, err = asmr(capsys, "ingest", docs / "notes.txt", "--memory", mem)
    assert code == 0, err
    conn = sqlite3.connect(mem / schema.DB_FILE)
    assert conn.execute("SELECT value FROM meta WHERE key='embed_model'").fetchone()[0] == "all-MiniLM-L6-v2"
    assert conn.execute("SELECT value FROM meta WHERE key='dim'").fetchone()[0] == "384"
    conn.close()


@pytest.mark.parametrize("flags, line", [
    (["--k", "0"], "asmr: --k 0: must be at least 1"),
    (["--seeds", "-2"], "asmr: --seeds -2: must be at least 1"),
    (["--depth", "9"], "asmr: --depth 9: must be in 0..8"),
    (["--confidence-threshold", "1.5"], "asmr: --confidence-threshold 1.5: must be in [0, 1]"),
    (["--edge-threshold", "nan"], "asmr: --edge-threshold nan: must be a finite number"),
    (["--mix", "1,x,1"], "asmr: --mix '1,x,1': must be three non-negative numbers, not all zero"),
    (["--mix", "0,0,0"], "asmr: --mix '0,0,0': must be three non-negative numbers, not all zero"),
    (["--k", "0", "--confidence-threshold", "2"], "asmr: --confidence-threshold 2.0: must be in [0, 1]"),
])
@pytest.mark.parametrize("command", [["search", "a question"], ["serve"],
                                     ["eval", "retrieval", "--corpus", "c.jsonl", "--queries", "q.jsonl"]])
def test_retrieval_flags_refused_by_retrieve_config_name_the_flag(tmp_path, capsys, command, flags, line):
    # RetrieveConfig checks the values; the command line says which flag, in one line, and exits 2
    code, out, err = asmr(capsys, *command, "--memory", tmp_path / "none", *flags)
    assert (code, out, err) == (2, "", line + "\n")


def test_ingest_says_when_the_embedder_cannot_read_the_memory(tmp_path, capsys, monkeypatch):
    import asmr.embed as embed_package

    (tmp_path / "zh").mkdir()
    (tmp_path / "zh" / "city.md").write_text("# 北京\n\n北京是中华人民共和国的首都，有故宫和长城。\n", encoding="utf-8")
    mem = str(tmp_path / "mem")
    code, out, err = asmr(capsys, "ingest", str(tmp_path / "zh"), "--memory", mem, "--embedder", "hash-64")
    assert code == 0 and "note" not in err  # a lexical embedder reads every script
    # as all-MiniLM-L6-v2 would: Latin only
    monkeypatch.setattr(embed_package, "scripts_of", lambda name: frozenset({"latin"}))
    code, out, err = asmr(capsys, "ingest", str(tmp_path / "zh"), "--memory", mem)
    assert code == 0 and "100% of this memory's text is in scripts hash-64 does not read (cjk)" in err
    assert "--embedder multilingual-e5-small" in err
    code, out, _ = asmr(capsys, "ingest", str(tmp_path / "zh"), "--memory", mem, "--json")
    assert json.loads(out)["readable_share"] == 0.0


def test_ingest_says_which_model_it_chose_for_a_new_memory(tmp_path, capsys, monkeypatch):
    import asmr.store.writer as writer_module
    from conftest import named_hash_embedder

    monkeypatch.setattr(writer_module, "get_embedder", named_hash_embedder)
    (tmp_path / "zh").mkdir()
    (tmp_path / "zh" / "kiln.md").write_text("# 陶窑\n\n陶窑每周四烧制，釉料订单中午截止。\n", encoding="utf-8")
    code, out, err = asmr(capsys, "ingest", tmp_path / "zh", "--memory", tmp_path / "mem")
    assert code == 0 and err == ("asmr ingest: note: a new memory made with multilingual-e5-small: 100% of "
                                 "its text is in scripts all-MiniLM-L6-v2 does not read (--embedder "
                                 "all-MiniLM-L6-v2 to choose it anyway)\n")
    code, out, err = asmr(capsys, "ingest", tmp_path / "zh", "--memory", tmp_path / "mem")
    assert code == 0 and err == ""  # said once, when it was chosen
    code, out, err = asmr(capsys, "ingest", tmp_path / "zh", "--memory", tmp_path / "other", "--json")
    assert code == 0 and json.loads(out)["embed_model"] == "multilingual-e5-small"


def test_non_ascii_file_names_are_distinct_documents(tmp_path, capsys):
    src = tmp_path / "kb"
    src.mkdir()
    (src / "文件.md").write_text("# 文件\n\nFile one text.\n")
    (src / "名字.md").write_text("# 名字\n\nName two text.\n")
    mem = tmp_path / "mem"
    code, out, err = asmr(capsys, "ingest", src, "--memory", mem, "--embedder", "hash-64", "--json")
    assert code == 0, err
    ids = sorted(d["doc_id"] for d in json.loads(out)["documents"])
    assert ids == ["MingZi_a64de092", "WenJian_5972770a"]  # readable, and told apart by their hash
    # one file ingested again revises its own document, never the other's
    code, out, _ = asmr(capsys, "ingest", src, "--memory", mem, "--json")
    assert code == 0 and json.loads(out)["counts"] == {"new": 0, "revised": 0, "unchanged": 2}


def test_two_paths_with_one_id_in_one_ingest_are_an_error_naming_both(tmp_path, capsys):
    src = tmp_path / "kb"
    src.mkdir()
    (src / "setup.md").write_text("# Setup\n\nOne.\n")
    (src / "setup.txt").write_text("Two.\n")
    mem = tmp_path / "mem"
    code, _, err = asmr(capsys, "ingest", src, "--memory", mem, "--embedder", "hash-64")
    assert code == 2 and "setup.md" in err and "setup.txt" in err and "'setup'" in err
    assert not (mem / schema.DB_FILE).exists() or _contents(mem) == []


def test_lone_surrogate_in_jsonl_is_one_line_naming_the_record(tmp_path, capsys):
    corpus = tmp_path / "c.jsonl"
    corpus.write_text('{"id": "ok", "text": "Fine."}\n{"id": "s", "text": "a \\ud800 b"}\n')
    mem = tmp_path / "mem"
    code, _, err = asmr(capsys, "ingest", corpus, "--memory", mem, "--embedder", "hash-64")
    assert code == 2 and f"{corpus}:2: \"text\" holds a lone surrogate (U+D800)" in err
    assert "Traceback" not in err and (not (mem / schema.DB_FILE).exists() or _contents(mem) == [])
    code, _, err = asmr(capsys, "ingest", corpus, "--memory", mem, "--errors", "replace")
    assert code == 0 and "a \ufffd b" in _contents(mem)


def test_a_fifo_named_like_a_document_is_refused_not_waited_on(tmp_path, capsys):
    import os

    src = tmp_path / "kb"
    src.mkdir()
    (src / "a.md").write_text("# A\n\nText.\n")
    os.mkfifo(src / "x.md")
    os.mkfifo(tmp_path / "c.jsonl")
    mem = tmp_path / "mem"
    code, _, err = asmr(capsys, "ingest", src, "--memory", mem, "--embedder", "hash-64")
    assert code == 2 and f"{src / 'x.md'}: is a FIFO, not a regular file" in err
    code, _, err = asmr(capsys, "ingest", tmp_path / "c.jsonl", "--memory", mem)
    assert code == 2 and "c.jsonl: is a FIFO, not a regular file" in err
    code, out, err = asmr(capsys, "ingest", src, "--memory", mem, "--skip-bad", "--json")
    assert [d["doc_id"] for d in json.loads(out)["documents"]] == ["a"] and "x.md: is a FIFO" in err


def test_memory_that_is_a_file_is_named_as_such(tmp_path, capsys):
    afile = tmp_path / "afile"
    afile.write_text("not a memory\n")
    for command in (["search", "deploy"], ["check"], ["units", "show", "memo://kb/a/0123456789ab"],
                    ["doc", "history", "a"]):
        code, _, err = asmr(capsys, *command, "--memory", afile)
        assert code == 4 and f"memory {afile}: is a file, not a memory directory" in err, (command, err)


def test_check_during_a_live_ingest_does_not_call_its_files_leftovers(tmp_path, docs, capsys):
    from asmr.store import Writer

    mem = tmp_path / "mem"
    assert asmr(capsys, "ingest", docs, "--memory", mem, "--embedder", "hash-64")[0] == 0
    with Writer(mem):  # holds the write lock, as a running ingest does
        (mem / schema.dense_file(2)).write_bytes(b"in progress")
        code, out, _ = asmr(capsys, "check", "--memory", mem)
        assert code == 0 and "being written by the running ingest" in out and "interrupted" not in out
        assert "an ingest is writing this memory now" in out
    code, out, _ = asmr(capsys, "check", "--memory", mem)
    assert code == 0 and "left by an interrupted or older ingest" in out


def test_output_into_a_closed_pipe_stops_quietly(tmp_path, docs, capsys):
    """`asmr search ... | head`: the reader goes away; no BrokenPipe traceback, exit 141."""
    import os

    mem = tmp_path / "mem"
    assert asmr(capsys, "ingest", docs, "--memory", mem, "--embedder", "hash-64")[0] == 0
    read, write = os.pipe()
    os.close(read)  # the reader is gone before asmr writes a byte
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    for command in (["search", "installer", "--json"], ["check", "--json"]):
        proc = subprocess.run([sys.executable, "-m", "asmr.cli", *command, "--memory", str(mem)], stdout=write,
                              stderr=subprocess.PIPE, text=True, env=env, timeout=120)
        assert proc.returncode == 141 and proc.stderr == "", (command, proc.stderr)
    os.close(write)


def test_root_maps_a_single_file_to_its_document(tmp_path, capsys):
    kb = tmp_path / "kb"
    (kb / "ops").mkdir(parents=True)
    (kb / "ops" / "deploy.md").write_text("# Deploy\n\nDeploy takes 10 minutes.\n")
    mem = tmp_path / "mem"
    assert asmr(capsys, "ingest", kb, "--memory", mem, "--embedder", "hash-64")[0] == 0
    (kb / "ops" / "deploy.md").write_text("# Deploy\n\nDeploy takes 7 minutes.\n")
    code, out, _ = asmr(capsys, "ingest", kb / "ops" / "deploy.md", "--root", kb, "--memory", mem, "--json")
    assert code == 0 and [(d["doc_id"], d["status"]) for d in json.loads(out)["documents"]] == \
        [("ops.deploy", "revised")]
    code, _, err = asmr(capsys, "ingest", kb / "ops" / "deploy.md", "--root", tmp_path / "elsewhere", "--memory",
                        mem)
    assert code == 2 and "is not under the ingest root" in err


def test_another_effective_date_does_not_version_unchanged_text(tmp_path, docs, capsys):
    mem = tmp_path / "mem"
    assert asmr(capsys, "ingest", docs, "--memory", mem, "--embedder", "hash-64",
                "--effective-date", "2024-01-01")[0] == 0
    code, out, _ = asmr(capsys, "ingest", docs, "--memory", mem, "--effective-date", "2024-06-01", "--json")
    assert code == 0 and json.loads(out)["counts"] == {"new": 0, "revised": 0, "unchanged": 3}
    (docs / "notes.txt").write_text("Plain notes, revised.\n\nSecond paragraph.\n")
    code, out, _ = asmr(capsys, "ingest", docs, "--memory", mem, "--effective-date", "2024-06-01", "--json")
    assert code == 0 and json.loads(out)["counts"] == {"new": 0, "revised": 1, "unchanged": 2}
    code, out, _ = asmr(capsys, "doc", "history", "notes", "--memory", mem, "--json")
    assert [v["effective_date"] for v in json.loads(out)] == ["2024-01-01", "2024-06-01"]


@pytest.mark.parametrize("worker", ["0", "1"])  # the planner in this process, or in its own
def test_prune_retires_documents_whose_files_are_gone(tmp_path, docs, capsys, monkeypatch, worker):
    monkeypatch.setenv("ASMR_INGEST_WORKER", worker)
    mem = tmp_path / "mem"
    assert asmr(capsys, "ingest", docs, "--memory", mem, "--embedder", "hash-64")[0] == 0
    notes = (docs / "notes.txt").read_text()
    (docs / "notes.txt").unlink()
    code, out, _ = asmr(capsys, "ingest", docs, "--memory", mem, "--json")  # without --prune: kept
    assert code == 0 and len(json.loads(out)["documents"]) == 2 and "Plain notes." in _active_contents(mem)
    (docs / "faq.html").write_bytes(b"\xff bad")  # still there, but unreadable: skipped, never retired
    code, out, err = asmr(capsys, "ingest", docs, "--memory", mem, "--prune", "--skip-bad", "--json")
    report = json.loads(out)
    assert code == 5 and report["counts"] == {"new": 0, "revised": 0, "unchanged": 1, "retired": 1}
    assert [(d["doc_id"], d["status"], d["deprecated"]) for d in report["documents"] if d["status"] == "retired"] \
        == [("notes", "retired", 2)]
    active = _active_contents(mem)
    assert "Plain notes." not in active and "Ports are 8080." in active
    assert "Plain notes." in _contents(mem)  # deprecated, never deleted
    code, out, _ = asmr(capsys, "doc", "history", "notes", "--memory", mem, "--json")
    assert [(v["units_total"], v["units_deprecated"]) for v in json.loads(out)] == [(2, 0), (0, 2)]
    assert asmr(capsys, "check", "--memory", mem)[0] == 0
    (docs / "notes.txt").write_text(notes)  # back again: a revision with fresh unit ids
    code, out, _ = asmr(capsys, "ingest", docs / "notes.txt", "--root", docs, "--memory", mem, "--json")
    assert code == 0 and json.loads(out)["documents"][0]["status"] == "revised"
    assert "Plain notes." in _active_contents(mem)
    assert asmr(capsys, "check", "--memory", mem)[0] == 0
    code, _, err = asmr(capsys, "ingest", docs / "notes.txt", "--memory", mem, "--prune")
    assert code == 2 and "--prune: no directory" in err


def _active_contents(mem):
    conn = sqlite3.connect(mem / schema.DB_FILE)
    rows = [c for c, in conn.execute("SELECT content FROM units WHERE status='active'")]
    conn.close()
    return rows


def test_docs_list_and_units_list_show_what_the_memory_holds(tmp_path, docs, capsys):
    mem = tmp_path / "mem"
    assert asmr(capsys, "ingest", docs, "--memory", mem, "--embedder", "hash-64")[0] == 0
    (docs / "notes.txt").write_text("Plain notes, revised.\n\nSecond paragraph.\n")
    assert asmr(capsys, "ingest", docs, "--memory", mem)[0] == 0
    code, out, _ = asmr(capsys, "docs", "list", "--memory", mem)
    assert code == 0 and [line.split()[0] for line in out.splitlines()] == ["kb/faq", "kb/guides.setup", "kb/notes"]
    assert "kb/notes  v2  other  [active]  2 units" in out
    code, out, _ = asmr(capsys, "doc", "list", "--memory", mem, "--type", "manual", "--json")
    listed = json.loads(out)
    assert code == 0 and [(d["doc_id"], d["doc_type"], d["status"], d["units"]) for d in listed] == \
        [("guides.setup", "manual", "active", 2)]
    code, out, _ = asmr(capsys, "units", "list", "--memory", mem, "--doc", "notes")
    assert code == 0 and len(out.splitlines()) == 3 and "[superseded]  paragraph  Plain notes." in out
    code, out, _ = asmr(capsys, "units", "list", "--memory", mem, "--doc", "notes", "--status", "active", "--json")
    assert [u["content"] for u in json.loads(out)] == ["Plain notes, revised.", "Second paragraph."]
    code, out, _ = asmr(capsys, "units", "list", "--memory", mem, "--type", "manual", "--kind", "heading", "--json")
    assert [(u["doc_id"], u["content"]) for u in json.loads(out)] == [("guides.setup", "Setup")]
    code, out, err = asmr(capsys, "units", "list", "--memory", mem, "--kb", "other", "--json")
    assert code == 3 and json.loads(out) == [] and "no unit matches" in err
    code, out, err = asmr(capsys, "docs", "list", "--memory", mem, "--status", "retired")
    assert code == 3 and out == "" and "no document matches" in err


def test_search_loads_only_what_it_needs(tmp_path, docs):
    """A search on a memory whose embedder needs no model imports no model library (nor the Chinese
    numeral parser, which only a Chinese number in a fact needs), nor bm25s and SciPy (the lexical index
    is read without them), nor the writer and the document readers: starting stays short."""
    mem = tmp_path / "mem"
    assert main(["ingest", str(docs), "--memory", str(mem), "--embedder", "hash-64", "--no-progress"]) == 0
    probe = ("import sys; from asmr.cli import main; main(['search', 'Which port?', '--memory', sys.argv[1], "
             "'--no-server']); print(sorted(m for m in ('torch', 'transformers', 'sentence_transformers', "
             "'cn2an', 'fastapi', 'uvicorn', 'bm25s', 'scipy', 'asmr.store.writer', 'asmr.units.read') "
             "if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", probe, str(mem)], capture_output=True, text=True, check=True,
                         env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}).stdout
    assert out.strip().splitlines()[-1] == "[]"


def test_a_chinese_search_of_a_chinese_memory_loads_no_english_lemmatizer(tmp_path):
    """A Chinese question over Chinese units reads no English word: simplemma (its import compiles the
    rules of every language it has) stays unloaded, and a CJK token is its own term key."""
    from asmr.text.words import term_key

    assert term_key("顺延") == "顺延" and term_key("年假") == "年假"
    src = tmp_path / "zh"
    src.mkdir()
    (src / "leave.md").write_text("# 年假\n\n年假可以顺延到下一年的三月底。\n", encoding="utf-8")
    mem = tmp_path / "mem"
    assert main(["ingest", str(src), "--memory", str(mem), "--embedder", "hash-64", "--no-progress"]) == 0
    probe = ("import sys; from asmr.cli import main; main(['search', '年假可以顺延吗？', '--memory', sys.argv[1], "
             "'--no-server']); print('simplemma' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", probe, str(mem)], capture_output=True, text=True, check=True,
                         env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}).stdout
    assert out.strip().splitlines()[-1] == "False"


def test_ingest_shows_progress_on_a_terminal_and_never_with_json(tmp_path, docs, capsys, monkeypatch):
    import asmr.store.writer

    shown = []
    real = asmr.store.writer.tqdm

    def recording(*args, **kwargs):
        shown.append((kwargs.get("desc"), not kwargs.get("disable")))
        return real(*args, **{**kwargs, "disable": True})
    monkeypatch.setattr(asmr.store.writer, "tqdm", recording)
    monkeypatch.setattr(sys.stderr, "isatty", lambda: True, raising=False)
    json_run = ["ingest", str(docs), "--memory", str(tmp_path / "a"), "--embedder", "hash-64", "--json"]
    assert main(json_run) == 0
    assert shown and not any(on for _, on in shown)
    shown.clear()
    # a directory walk does not know how many files it holds: the bar shows all the same
    assert main(["ingest", str(docs), "--memory", str(tmp_path / "b"), "--embedder", "hash-64"]) == 0
    assert ("ingest", True) in shown and any(on for desc, on in shown if desc.startswith("dense index"))
    shown.clear()
    assert main(["ingest", str(docs), "--memory", str(tmp_path / "c"), "--embedder", "hash-64",
                 "--no-progress"]) == 0
    assert not any(on for _, on in shown)
    capsys.readouterr()


def test_graph_learn_show_forget(tmp_path, docs, capsys):
    from datetime import datetime, timezone

    mem = tmp_path / "mem"
    assert asmr(capsys, "ingest", docs, "--memory", mem, "--embedder", "hash-64")[0] == 0
    code, out, _ = asmr(capsys, "search", "installer", "--memory", mem, "--json")
    ids = sorted({h["unit_id"] for h in json.loads(out)["hits"]})
    a, b = ids[0], ids[1]
    now = datetime.now(timezone.utc).isoformat(timespec="milliseconds")

    def record(question, *cited, outcome="keep"):
        return json.dumps({"time": now, "question": question, "text": "...", "audit": [
            {"outcome": outcome, "citations": [{"id": c, "kept": outcome == "keep"} for c in cited]}]}) + "\n"
    (mem / "audit").mkdir(exist_ok=True)
    log = mem / "audit" / f"{now[:10]}.jsonl"
    log.write_text(record("q1", a, b) + record("q2", a, b) + record("q3", a, b, outcome="weaken")
                   + '{"cut short')  # a line still being written: left for the next learn
    code, out, _ = asmr(capsys, "graph", "learn", "--memory", mem, "--json")
    assert code == 0 and json.loads(out)["records"] == 3 and json.loads(out)["pairs"] == 2
    code, out, _ = asmr(capsys, "graph", "learn", "--memory", mem, "--json")  # remembers what it read
    assert json.loads(out)["records"] == 0
    code, out, _ = asmr(capsys, "graph", "show", a, "--memory", mem)
    assert code == 0 and "usage (1)" in out and b in out and "cited together with it by 2.0 questions" in out
    code, out, _ = asmr(capsys, "graph", "show", a, "--memory", mem, "--json")
    assert {e["kind"] for e in json.loads(out)["edges"]} >= {"usage"}
    assert asmr(capsys, "graph", "show", a.rsplit("/", 2)[0] + "/none/000000000000", "--memory", mem)[0] == 3
    code, out, _ = asmr(capsys, "graph", "forget", "--kind", "usage", "--memory", mem)
    assert code == 0 and "forgot 1" in out
    assert "usage" not in asmr(capsys, "graph", "show", a, "--memory", mem)[1]
    with pytest.raises(SystemExit):  # only learned edges can be forgotten
        main(["graph", "forget", "--kind", "entity", "--memory", str(mem)])
    assert asmr(capsys, "search", "installer", "--memory", mem, "--no-learned-edges")[0] == 0


def test_the_confidence_threshold_help_names_the_fitted_default(capsys):
    from asmr.retrieve.confidence import DEFAULT_THRESHOLD

    with pytest.raises(SystemExit):
        main(["search", "--help"])
    out = " ".join(capsys.readouterr().out.split())
    assert f"{DEFAULT_THRESHOLD} for all-MiniLM-L6-v2" in out
