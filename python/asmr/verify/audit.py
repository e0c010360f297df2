"""The audit trail: one JSON line per verified answer, under ``<memory>/audit/<UTC date>.jsonl``.

Files are append-only and separate from ``memory.sqlite``: recording a decision
never takes the memory's write lock and never changes what a reader of the
memory sees. Each line is written with one ``write`` to a file opened with
``O_APPEND``, so concurrent writers (server workers) do not interleave lines;
a crash can cut the last line short, and readers skip such a line.
"""
from __future__ import annotations

import json
import os
from datetime import datetime, timezone
from pathlib import Path
from typing import Iterator

from ..store.schema import DB_FILE, MemoryStateError

AUDIT_DIR = "audit"


def audit_dir(memory_dir: str | os.PathLike) -> Path:
    return Path(memory_dir) / AUDIT_DIR


def _check_memory(memory_dir: str | os.PathLike) -> Path:
    d = Path(memory_dir)
    if not (d / DB_FILE).is_file():
        raise MemoryStateError(f"memory {d}: no {DB_FILE}; audit records live in a memory directory")
    return d


def record(verification, *, answer: str | None = None, question: str | None = None,
           now: datetime | None = None) -> dict:
    """The audit line of one verification (``answer``: the text before verification)."""
    now = now or datetime.now(timezone.utc)
    return {"time": now.isoformat(timespec="milliseconds"), "question": question, "answer": answer,
            **verification.to_dict()}


def append(memory_dir: str | os.PathLike, verification, *, answer: str | None = None,
           question: str | None = None, now: datetime | None = None) -> Path:
    """Append the audit line of ``verification``; returns the file it went to."""
    d = audit_dir(_check_memory(memory_dir))
    rec = record(verification, answer=answer, question=question, now=now)
    d.mkdir(exist_ok=True)
    path = d / f"{rec['time'][:10]}.jsonl"
    line = (json.dumps(rec, ensure_ascii=False) + "\n").encode("utf-8")
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    try:
        os.write(fd, line)
    finally:
        os.close(fd)
    return path


def _lines(memory_dir: Path) -> Iterator[dict]:
    d = audit_dir(memory_dir)
    if not d.is_dir():
        return
    for path in sorted(d.glob("*.jsonl")):
        with open(path, encoding="utf-8") as f:
            for line in f:
                try:
                    yield json.loads(line)
                except json.JSONDecodeError:
                    continue  # a line cut short by a crash


def read_new(memory_dir: str | os.PathLike, offsets: dict[str, int]) -> tuple[list[dict], dict[str, int]]:
    """The records appended since ``offsets`` (audit file name -> bytes already read), oldest file
    first, and the offsets after them. A last line without its newline (being written, or cut by a
    crash) is left for the next read; a file shorter than its offset is read again from the start."""
    d = audit_dir(_check_memory(memory_dir))
    records, after = [], dict(offsets)
    for path in sorted(d.glob("*.jsonl")) if d.is_dir() else []:
        start = offsets.get(path.name, 0)
        with open(path, "rb") as f:
            if start > os.fstat(f.fileno()).st_size:
                start = 0
            f.seek(start)
            data = f.read()
        end = data.rfind(b"\n") + 1
        for line in data[:end].splitlines():
            try:
                records.append(json.loads(line))
            except (json.JSONDecodeError, UnicodeDecodeError):
                continue
        after[path.name] = start + end
    return records, after


def load(memory_dir: str | os.PathLike, *, last: int | None = None, turn: str | None = None) -> list[dict]:
    """Audit records, oldest first. ``turn``: a turn id (``<conversation>/<n>``) or a conversation id."""
    if last is not None and (isinstance(last, bool) or not isinstance(last, int) or last < 1):
        raise ValueError(f"last {last!r}: must be a positive integer")
    records = list(_lines(_check_memory(memory_dir)))
    if turn is not None:
        records = [r for r in records
                   if r.get("turn") == turn or str(r.get("turn", "")).startswith(turn + "/")]
    return records[-last:] if last else records


def format_record(rec: dict) -> str:
    """A human-readable account of one verified answer: each sentence, its citations and checks."""
    c = rec.get("counts", {})
    lines = [f"{rec.get('time')}  turn {rec.get('turn')}  {c.get('keep', 0)} kept, {c.get('weaken', 0)} "
             f"weakened, {c.get('drop', 0)} dropped, {c.get('uncited', 0)} uncited; {c.get('valid', 0)}/"
             f"{c.get('citations', 0)} citations valid, {c.get('malformed', 0)} malformed"]
    if rec.get("question"):
        lines.append(f"  question: {rec['question']}")
    for d in rec.get("audit", []):
        reason = f"  ({d['reason']})" if d["reason"] else ""
        lines.append(f"  [{d['outcome'].upper():7}] {d['sentence']!r}{reason}")
        for e in d["citations"]:
            checks = " ".join(f"{k}={'yes' if v else 'NO'}" for k, v in e["checks"].items())
            scores = " ".join(f"{k} {v:.3f}" for k, v in e["scores"].items())
            line = f"      {'+' if e['kept'] else '-'} {e['id']}  {e['verdict']}"
            if e.get("unit_verdict"):  # a hidden marker: what the unit it names says
                line += f" (unit {e['unit_verdict']})"
            if e.get("successor"):
                line += f" (successor {e['successor']})"
            lines.append(line + (f"  {checks}" if checks else "") + (f"  {scores}" if scores else ""))
            if e["missing_facts"]:
                lines.append(f"        missing in the unit: {', '.join(e['missing_facts'])}")
        for m in d["malformed"]:
            lines.append(f"      - {m['text']!r}  malformed ({m['reason']})")
        if d.get("rewritten"):
            r = d["rewritten"]
            lines.append(f"      rewrite from {r['id']}: {r['text']!r} -> {r.get('verdict', 'not checked')}")
    lines.append(f"  text: {rec.get('text', '')!r}")
    return "\n".join(lines)
