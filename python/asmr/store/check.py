"""Integrity check of a memory directory: every invariant of DESIGN.md section 3 that the store owns."""
from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ..index import DenseIndex, LexicalIndex
from ..units.ids import parse_unit_id
from ..units.model import DOC_TYPES, UNIT_KINDS, InputError
from . import schema
from .schema import MemoryStateError

_BATCH = 20_000


@dataclass(slots=True)
class CheckReport:
    problems: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    counts: dict[str, int] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return not self.problems

    def to_dict(self) -> dict:
        return {"ok": self.ok, "problems": self.problems, "notes": self.notes, "counts": self.counts}


def check_memory(directory: str | os.PathLike, *, max_problems: int = 200) -> CheckReport:
    """Check a memory without changing it; problems make ``ok`` false."""
    directory = Path(directory)
    rep = CheckReport()

    def problem(msg: str) -> None:
        if len(rep.problems) < max_problems:
            rep.problems.append(msg)
        elif len(rep.problems) == max_problems:
            rep.problems.append("... more problems not listed")

    if directory.exists() and not directory.is_dir():
        raise MemoryStateError(f"memory {directory}: is a file, not a memory directory")
    if not (directory / schema.DB_FILE).exists():
        raise MemoryStateError(f"memory {directory}: no {schema.DB_FILE} here")
    writing = schema.ingest_running(directory)  # its files in progress are not an interrupted ingest's
    if writing:
        rep.notes.append("an ingest is writing this memory now; this check reads the last committed state")
    if schema.never_committed(directory):  # the first ingest was killed before its commit: nothing to lose
        rep.notes.append("no ingest has committed here yet (the first one is running)" if writing else
                         "no ingest has committed here yet (the first one was interrupted); "
                         "`asmr ingest` creates the memory")
        return rep
    conn = schema.connect(directory, create=False)
    try:
        conn.execute("BEGIN")
        result = conn.execute("PRAGMA integrity_check").fetchall()
        if result != [("ok",)]:
            problem(f"sqlite integrity_check: {'; '.join(r[0] for r in result[:5])}")
            return rep
        gen = int(schema.get_meta(conn, "generation", "0"))
        rows = int(schema.get_meta(conn, "rows", "0"))
        dim = int(schema.get_meta(conn, "dim", "0"))
        model = schema.get_meta(conn, "embed_model")
        rep.counts = {"generation": gen, "rows": rows,
                      **{s: n for s, n in conn.execute("SELECT status, count(*) FROM units GROUP BY status")},
                      "documents": conn.execute("SELECT count(*) FROM documents").fetchone()[0],
                      "versions": conn.execute("SELECT count(*) FROM versions").fetchone()[0]}
        runtimes = schema.get_meta(conn, "embed_runtimes")
        if model and runtimes:
            rep.notes.append(f"vectors of {model} made by runtime {runtimes.replace(',', ', ')}")
        _check_tables(conn, rows, model, problem)
        _check_spans(conn, problem)
        if gen > 0:
            _check_files(directory, conn, gen, rows, dim, problem, rep.notes, writing)
        elif rows:
            problem(f"meta: {rows} unit rows but generation 0")
    finally:
        conn.rollback()
        conn.close()
    return rep


def _check_tables(conn, rows: int, model: str | None, problem) -> None:
    indexes = {name for name, in conn.execute("SELECT name FROM sqlite_master WHERE type='index'")}
    for name in schema.UNIT_INDEXES:
        if name not in indexes:
            problem(f"sqlite: index {name} is missing")
    n, lo, hi = conn.execute("SELECT count(*), min(row), max(row) FROM units").fetchone()
    if n != rows or (n and (lo != 0 or hi != rows - 1)):
        problem(f"units: {n} rows numbered {lo}..{hi}, meta says rows 0..{rows - 1}")
    for uid, kb, doc, kind, status, sup, emb in conn.execute(
            "SELECT id, kb, doc_id, kind, status, superseded_by, embed_model FROM units"):
        try:
            ukb, udoc, _ = parse_unit_id(uid)
            if (ukb, udoc) != (kb, doc):
                problem(f"unit {uid}: address names {ukb}/{udoc} but the row says {kb}/{doc}")
        except InputError as exc:
            problem(str(exc))
        if kind not in UNIT_KINDS:
            problem(f"unit {uid}: unknown kind {kind!r}")
        if status == "superseded" and not sup:
            problem(f"unit {uid}: superseded without a successor")
        if status != "superseded" and sup:
            problem(f"unit {uid}: {status} but names a successor {sup}")
        if emb != model:
            problem(f"unit {uid}: embedded by {emb!r}, the memory by {model!r}")
    for uid, sup in conn.execute(
            "SELECT u.id, u.superseded_by FROM units u LEFT JOIN units s ON s.id = u.superseded_by "
            "WHERE u.superseded_by IS NOT NULL AND s.id IS NULL"):
        problem(f"unit {uid}: successor {sup} does not exist")
    for uid, parent in conn.execute(
            "SELECT u.id, u.parent_id FROM units u LEFT JOIN units p ON p.id = u.parent_id "
            "WHERE u.parent_id IS NOT NULL AND (p.id IS NULL OR (u.status='active' AND p.status!='active'))"):
        problem(f"unit {uid}: parent {parent} is missing or not active")
    for kb, doc, cur, doc_type in conn.execute("SELECT kb, doc_id, current_version, doc_type FROM documents"):
        versions = [v for v, in conn.execute(
            "SELECT version FROM versions WHERE kb=? AND doc_id=? ORDER BY version", (kb, doc))]
        if versions != list(range(1, cur + 1)):
            problem(f"document {kb}/{doc}: versions {versions}, current {cur}")
        if doc_type not in DOC_TYPES:
            problem(f"document {kb}/{doc}: unknown type {doc_type!r}")
    for kb, doc, version, status, n in conn.execute(
            "SELECT u.kb, u.doc_id, u.doc_version, u.status, count(*) FROM units u "
            "LEFT JOIN documents d ON d.kb=u.kb AND d.doc_id=u.doc_id GROUP BY u.kb, u.doc_id, u.doc_version, "
            "u.status HAVING d.current_version IS NULL OR (u.status='active' AND u.doc_version != d.current_version)"):
        problem(f"document {kb}/{doc}: {n} {status} units point at version {version}, not the current one")
    for kb, doc, total, active in conn.execute(
            "SELECT v.kb, v.doc_id, v.units_total, (SELECT count(*) FROM units u WHERE u.kb=v.kb AND "
            "u.doc_id=v.doc_id AND u.status='active') FROM documents d JOIN versions v ON v.kb=d.kb AND "
            "v.doc_id=d.doc_id AND v.version=d.current_version WHERE v.units_total != "
            "(SELECT count(*) FROM units u WHERE u.kb=v.kb AND u.doc_id=v.doc_id AND u.status='active')"):
        problem(f"document {kb}/{doc}: current version has {total} units, {active} are active")


def _check_spans(conn, problem) -> None:
    """``text[offset_start:offset_end]`` is the unit's source span, for every unit of every version."""
    text_cache: dict[tuple, str] = {}
    cur = conn.execute("SELECT id, kb, doc_id, doc_version, kind, offset_start, offset_end, content FROM units "
                       "ORDER BY kb, doc_id, doc_version")
    for uid, kb, doc, version, kind, a, b, content in cur:
        key = (kb, doc, version)
        if key not in text_cache:
            text_cache.clear()
            r = conn.execute("SELECT text FROM versions WHERE kb=? AND doc_id=? AND version=?", key).fetchone()
            text_cache[key] = r[0] if r else None
        text = text_cache[key]
        if text is None:
            problem(f"unit {uid}: its document version {kb}/{doc} v{version} is missing")
            continue
        span = text[a:b] if 0 <= a <= b <= len(text) else None
        if span is None:
            problem(f"unit {uid}: span {a}..{b} is outside the text ({len(text)} characters)")
        elif not (content.endswith("\n" + span) if kind == "table_row" else content == span):
            problem(f"unit {uid}: content differs from text[{a}:{b}]")


def _check_files(directory: Path, conn, gen: int, rows: int, dim: int, problem, notes, writing: bool) -> None:
    vec_path = directory / schema.VECTORS_FILE
    size = vec_path.stat().st_size if vec_path.exists() else -1
    if size < rows * dim * 4:
        problem(f"{schema.VECTORS_FILE}: {size} bytes, {rows} rows x {dim} need {rows * dim * 4}")
        return
    if size > rows * dim * 4:
        notes.append(f"{schema.VECTORS_FILE}: an uncommitted tail of {size - rows * dim * 4} bytes " +
                     ("(the running ingest's)" if writing else "(removed by the next ingest)"))
    vectors = np.memmap(vec_path, dtype=np.float32, mode="r", shape=(rows, dim)) if rows else np.zeros((0, dim))
    for i in range(0, rows, _BATCH):
        block = np.asarray(vectors[i:i + _BATCH])
        norms = np.linalg.norm(block, axis=1)
        bad = np.flatnonzero(~np.isfinite(norms) | (np.abs(norms - 1) > 1e-3) & (norms != 0))
        if len(bad):
            problem(f"{schema.VECTORS_FILE}: row {i + bad[0]} is not a unit vector (norm {norms[bad[0]]})")
            break
    active = np.array([r for r, in conn.execute("SELECT row FROM units WHERE status='active' ORDER BY row")],
                      dtype=np.int64)
    try:
        dense = DenseIndex.load(directory / schema.dense_file(gen))
        drows = np.sort(dense.rows())
        if dense.dim != dim:
            problem(f"{schema.dense_file(gen)}: dimension {dense.dim}, vectors have {dim}")
        if dense.kind == "flat" and not np.array_equal(drows, active):
            problem(f"{schema.dense_file(gen)}: holds {len(drows)} rows, not the {len(active)} active units")
        if dense.kind == "hnsw" and len(np.setdiff1d(active, drows)):
            problem(f"{schema.dense_file(gen)}: misses {len(np.setdiff1d(active, drows))} active units")
    except Exception as exc:  # a missing or unreadable file, whatever faiss raises
        problem(f"{schema.dense_file(gen)}: cannot be read ({exc})")
    try:
        lexical = LexicalIndex.load(directory / schema.lexical_dir(gen))
        if not np.array_equal(np.sort(np.asarray(lexical.rows)), active):
            problem(f"{schema.lexical_dir(gen)}: holds {lexical.size} rows, not the {len(active)} active units")
    except Exception as exc:
        problem(f"{schema.lexical_dir(gen)}/: cannot be read ({exc})")
    current = {schema.dense_file(gen), schema.lexical_dir(gen), schema.dense_file(gen - 1),
               schema.lexical_dir(gen - 1)}
    for p in sorted(directory.iterdir()):
        if p.name.startswith(("dense.", "lexical.")) and p.name not in current:
            notes.append(f"{p.name}: being written by the running ingest" if writing else
                         f"{p.name}: left by an interrupted or older ingest (removed by the next ingest)")


__all__ = ["CheckReport", "check_memory"]
