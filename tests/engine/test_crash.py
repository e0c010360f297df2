"""SIGKILL during an ingest: the store still opens, checks clean, and the same ingest completes.

Each test runs ``asmr ingest`` in a subprocess. ``ASMR_FAULT=<point>`` makes the
writer kill itself at a named step (store/writer.py); the last test kills it
from outside at moments spread over a real ingest.
"""
import os
import signal
import sqlite3
import subprocess
import sys
import time

import pytest

from asmr.store import Memory, check_memory, schema
from asmr.store.writer import FAULT_POINTS


def write_corpus(root, revised: bool):
    root.mkdir(parents=True, exist_ok=True)
    for i in range(6):
        port = 9000 + i if revised and i % 2 else 8000 + i
        extra = "\n- Restart after changing it.\n" if revised and i == 4 else ""
        (root / f"svc{i}.md").write_text(
            f"# Service {i}\n\nService {i} listens on port {port}.\n\n## Settings\n\nKeys:\n\n"
            f"- `port` is the port.\n- `workers` is {i + 2}.{extra}\n")
    if revised:
        (root / "svc0.md").write_text("# Service 0\n\nService 0 was retired.\n")
        (root / "new.md").write_text("# New service\n\nIt listens on port 7000.\n")


def run_ingest(src, memory, fault=None, wait=True, worker=None):
    env = dict(os.environ, PYTHONUNBUFFERED="1")
    env.pop("ASMR_FAULT", None)
    env.pop("ASMR_INGEST_WORKER", None)
    if fault:
        env["ASMR_FAULT"] = fault
    if worker is not None:
        env["ASMR_INGEST_WORKER"] = str(worker)  # plan in a second process even for this small ingest
    cmd = [sys.executable, "-m", "asmr.cli", "ingest", str(src), "--memory", str(memory),
           "--embedder", "hash-64", "--no-progress"]
    if not wait:
        return subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    return subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=300)


def state(memory):
    """The store's content without timestamps: what two equivalent ingests must agree on."""
    conn = sqlite3.connect(memory / schema.DB_FILE)
    out = {
        "units": sorted(conn.execute("SELECT id, status, superseded_by, doc_version, kind, parent_id, "
                                     "offset_start, offset_end, content FROM units")),
        "documents": sorted(conn.execute("SELECT kb, doc_id, current_version FROM documents")),
        "versions": sorted(conn.execute("SELECT doc_id, version, sha256, units_total FROM versions")),
    }
    conn.close()
    return out


@pytest.fixture(scope="module")
def corpora(tmp_path_factory):
    base = tmp_path_factory.mktemp("corpus")
    write_corpus(base / "v1", revised=False)
    write_corpus(base / "v2", revised=True)
    reference = base / "reference"
    assert run_ingest(base / "v1", reference).returncode == 0
    assert run_ingest(base / "v2", reference).returncode == 0
    return base / "v1", base / "v2", state(reference)


@pytest.mark.parametrize("point,worker", [(p, None) for p in FAULT_POINTS] +
                         [(p, 1) for p in ("after-embed", "after-dense", "in-transaction")])
def test_sigkill_during_revision(tmp_path, corpora, point, worker):
    v1, v2, reference = corpora
    memory = tmp_path / "mem"
    assert run_ingest(v1, memory).returncode == 0
    before = state(memory)
    killed = run_ingest(v2, memory, fault=point, worker=worker)
    assert killed.returncode == -signal.SIGKILL, killed.stderr
    report = check_memory(memory)
    assert report.ok, report.problems
    after_kill = state(memory)
    # All of the ingest or none of it: the commit point decides.
    assert after_kill == (reference if point == "after-commit" else before)
    with Memory(memory) as m:
        assert m.search_lexical("port", 3)[0].size > 0
    done = run_ingest(v2, memory)
    assert done.returncode == 0, done.stderr
    assert state(memory) == reference
    report = check_memory(memory)
    assert report.ok and not report.notes, (report.problems, report.notes)


@pytest.mark.parametrize("point", ["after-vectors", "in-transaction"])
def test_sigkill_during_first_ingest(tmp_path, corpora, point):
    v1, _, _ = corpora
    memory = tmp_path / "mem"
    assert run_ingest(v1, memory, fault=point).returncode == -signal.SIGKILL
    cli = subprocess.run([sys.executable, "-m", "asmr.cli", "check", "--memory", str(memory)],
                         capture_output=True, text=True)
    assert cli.returncode == 0, cli.stdout + cli.stderr
    assert run_ingest(v1, memory).returncode == 0
    assert check_memory(memory).ok and state(memory)["documents"] == [("kb", f"svc{i}", 1) for i in range(6)]


@pytest.mark.parametrize("left", ["empty file", "meta without rows"])
def test_a_creation_killed_before_its_commit(tmp_path, corpora, left):
    """What a kill while the database is being created can leave: a file with no tables, or (from
    versions that created the tables one statement at a time) a meta table with no rows. It checks
    clean, a reader is told no ingest has committed, and the same ingest creates the memory."""
    v1, _, _ = corpora
    memory = tmp_path / "mem"
    memory.mkdir()
    conn = sqlite3.connect(memory / schema.DB_FILE)
    conn.execute("PRAGMA journal_mode=WAL")
    if left == "meta without rows":
        conn.execute("CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)")
        conn.commit()
    conn.close()
    report = check_memory(memory)
    assert report.ok and "no ingest has committed" in report.notes[0]
    with pytest.raises(schema.MemoryStateError, match="no ingest has committed here yet"):
        Memory(memory)
    assert run_ingest(v1, memory).returncode == 0
    assert check_memory(memory).ok and state(memory)["documents"] == [("kb", f"svc{i}", 1) for i in range(6)]


def test_a_database_of_something_else_is_never_written(tmp_path, corpora):
    v1, _, _ = corpora
    memory = tmp_path / "mem"
    memory.mkdir()
    conn = sqlite3.connect(memory / schema.DB_FILE)
    conn.execute("CREATE TABLE accounts (name TEXT)")
    conn.commit()
    conn.close()
    done = run_ingest(v1, memory)
    assert done.returncode == 4 and "not an ASMR memory" in done.stderr, done.stderr
    conn = sqlite3.connect(memory / schema.DB_FILE)
    assert {n for n, in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")} == {"accounts"}
    conn.close()


@pytest.mark.parametrize("worker", [None, 1])
def test_sigkill_at_arbitrary_moments(tmp_path, worker):
    """Kill a real ingest from outside at moments spread over its run, then finish it."""
    src = tmp_path / "big"
    src.mkdir()
    for i in range(400):
        (src / f"doc{i:03d}.md").write_text(
            f"# Doc {i}\n\n" + "\n\n".join(f"Paragraph {j} of document {i} says value {i * j}." for j in range(8))
            + "\n\n- one item\n- two items\n")
    reference = tmp_path / "reference"
    t0 = time.perf_counter()
    assert run_ingest(src, reference).returncode == 0
    duration = time.perf_counter() - t0
    memory = tmp_path / "mem"
    for fraction in (0.3, 0.6, 0.8, 0.9, 0.95):
        proc = run_ingest(src, memory, wait=False, worker=worker)
        time.sleep(duration * fraction)
        proc.send_signal(signal.SIGKILL)
        proc.communicate()
        report = check_memory(memory) if (memory / schema.DB_FILE).exists() else None
        assert report is None or report.ok, (fraction, report.problems)
    assert run_ingest(src, memory).returncode == 0
    assert state(memory) == state(reference)
    assert check_memory(memory).ok
