"""Counterfeit twins: a gold passage written again with one value swapped, as a document of its own.

For a share of the questions, one gold passage gets a twin: the same words, with one value (a
name, a number, a date) replaced everywhere it occurs by another value of the same kind taken
from the rest of the corpus. The twin carries the gold's title and no date, so nothing but the
two texts tells which is true; an engine that recalls both should say that its sources disagree.
The value swapped is never the passage's subject (its title): a passage about another subject is
not a counterfeit of this one.

Seeded and deterministic: the same corpus, queries, share and seed give the same twins.
"""
from __future__ import annotations

import json
import random
import re
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Iterable

from asmr.text.cjk import CJK_CHAR
from asmr.text.entities import title_key
from asmr.text.facts import key_facts

TWIN_SUFFIX = "-counterfeit"  # the twin's pid is the gold's pid with this after it
_KINDS = ("entity", "number", "date")
_CJK_QUOTE = "《「『“"


@dataclass(frozen=True)
class Counterfeit:
    qid: str
    gold_pid: str
    pid: str  # the twin's
    original: str  # the value as the gold passage writes it
    replacement: str  # what the twin writes instead

    def to_dict(self) -> dict:
        return asdict(self)


def _shape(fact) -> tuple[str, str]:
    """What a value may be swapped for: the same kind, and for a number the same unit (any
    frequency for a frequency: "daily" for "every 3 hours")."""
    if fact.kind == "number" and fact.norm.startswith("every "):
        return fact.kind, "every"
    unit = fact.norm.split(" ", 1)[1] if fact.kind == "number" and " " in fact.norm else ""
    return fact.kind, unit


def _swappable(fact, text: str, subject: str) -> bool:
    if fact.kind not in _KINDS or len(fact.text) < 2:
        return False
    if fact.kind == "entity":
        key = title_key(fact.text)
        if not key or set(key.split()) & set(subject.split()) or text.lstrip().startswith(fact.text):
            return False  # the passage's subject: its title, or the name it opens with
        if CJK_CHAR.search(fact.text):  # unquoted CJK names are found with the words around them
            at = text.find(fact.text)
            return at > 0 and text[at - 1] in _CJK_QUOTE
    return True


def _values(record: dict) -> list:
    text, subject = record.get("text", ""), title_key(record.get("title", ""))
    seen, out = set(), []
    for f in key_facts(text):
        f = f._replace(text=f.text.strip(" .,;:'\"()"))
        if ". " in f.text:
            continue  # a span across two sentences, not one value
        if f.text not in seen and _swappable(f, text, subject):
            seen.add(f.text)
            out.append(f)
    return out


def _bare(value: str) -> str:
    """A value without case, spaces and punctuation: "1 小时" and "1小时" are one value."""
    return "".join(c for c in value.lower() if c.isalnum())


def _replace_all(text: str, old: str, new: str) -> str:
    """``old`` replaced where it stands as a whole word (or anywhere, in CJK text)."""
    if CJK_CHAR.search(old):
        return text.replace(old, new)
    return re.sub(rf"(?<![\w]){re.escape(old)}(?![\w])", lambda _: new, text)


def counterfeit_corpus(corpus: list[dict], queries: list[dict], *, share: float = 1.0, seed: int = 0
                       ) -> tuple[list[dict], list[Counterfeit]]:
    """The corpus with a counterfeit twin added for ``share`` of the questions (one of each chosen
    question's gold passages), and the twins made. ``corpus`` records are ``{"pid", "title", "text"}``,
    ``queries`` records ``{"qid", "gold_pids"}`` (the shared evaluation format)."""
    if not 0.0 <= share <= 1.0:
        raise ValueError(f"share must be in [0, 1], got {share!r}")
    rng = random.Random(seed)
    by_pid = {r["pid"]: r for r in corpus}
    values = {r["pid"]: _values(r) for r in corpus}
    pool: dict[tuple[str, str], list[str]] = {}
    norms: dict[str, str] = {}
    for pid in sorted(values):
        for f in values[pid]:
            pool.setdefault(_shape(f), []).append(f.text)
            norms[f.text] = f.norm
    for texts in pool.values():
        texts[:] = sorted(set(texts))
    chosen = [q for q in queries if [p for p in q.get("gold_pids") or () if values.get(p)]]
    chosen = sorted(rng.sample(chosen, round(share * len(chosen))), key=queries.index)
    twins, made, used = [], [], set()
    for q in chosen:
        golds = [p for p in q["gold_pids"] if values.get(p) and p not in used]
        if not golds:
            continue
        gold = rng.choice(golds)
        fact = rng.choice(values[gold])
        # another value, not the same one written otherwise ("14 days" for "fourteen days")
        others = [t for t in pool[_shape(fact)] if _bare(t) != _bare(fact.text) and norms[t] != fact.norm
                  and t not in by_pid[gold]["text"]]
        if not others:
            continue
        new = rng.choice(others)
        text = _replace_all(by_pid[gold]["text"], fact.text, new)
        if text == by_pid[gold]["text"]:
            continue
        used.add(gold)
        pid = gold + TWIN_SUFFIX
        twins.append({"pid": pid, "title": by_pid[gold].get("title", ""), "text": text})
        made.append(Counterfeit(q["qid"], gold, pid, fact.text, new))
    return list(corpus) + twins, made


def read_jsonl(path: str | Path) -> list[dict]:
    with open(path, encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def write_jsonl(path: str | Path, records: Iterable[dict]) -> None:
    with open(path, "w", encoding="utf-8") as f:
        for r in records:
            f.write(json.dumps(r, ensure_ascii=False) + "\n")
