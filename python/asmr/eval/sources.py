"""Evaluation sources that are not generated: the bundled handbooks with questions written for them.

``handbook_source(root)`` reads ``root/handbook`` and its revision ``root/handbook-v2`` (``root``
is the repository's ``examples`` folder for the operations handbook, ``examples/zh`` for the
Chinese warehouse handbook, ``examples/lab`` for a research lab's; ``examples/clinic``,
``examples/bakery``, ``examples/zh-library`` and ``examples/zh-property`` for four more, a clinic's,
a bakery's, a library branch's and a property office's, and ``examples/hotel``, ``pool``, ``vet``,
``school``, ``courier``, ``theatre``, ``zh-gym`` and ``zh-restaurant`` for eight more (a hotel's, a
leisure centre's, a vet practice's, a school office's, a courier depot's, a community theatre's, a
gym's and a restaurant's, the last two in Chinese), each written by a session that read none of the
code that scores it) and
``root/handbook-questions.jsonl``, and returns
``(docs, queries)``:

- ``docs``: the handbook as it stands after the revision, as ``asmr.store.ingest`` takes it
  (``units.model.Document``, ids as ``asmr ingest examples/handbook`` names them): each v2
  document replaces the v1 document of the same id, and a v1 document that v2 does not revise
  stays (the FAQ). Only the current version is returned, not v1 and v2 side by side: the
  questions ask what the handbook says now. Every sentence that a question names in
  ``remove_sentence`` is cut from its document, so that those questions have no answer.
- ``queries``: the questions, one dict each: ``qid``, ``question``, ``answers``, ``gold_pids``
  (document ids), ``answerable``, ``category``, ``lang`` and, where they apply,
  ``stale_answers`` (what v1 said), ``remove_sentence`` and ``removed_answer`` (the answer the
  cut sentence, or for ``removed_by_revision`` the v1 document, gave: it is in no returned
  document).

Question categories: answerable ``single`` (one document), ``multi`` (two), ``cross_lingual``
(the question in one language, the document in the other); unanswerable ``not_covered`` (the
handbook never mentions it), ``adversarial`` (an attribute the handbook states for another
entity, asked of one it does not state it for), ``sentence_removed`` (the answering sentence is
cut, the rest of its document stays) and ``removed_by_revision`` (only v1 stated it).

``write_source(docs, queries, out_dir)`` writes any such source as ``corpus.jsonl`` and
``queries.jsonl``, the format ``asmr eval retrieval --corpus --queries`` reads.
"""
from __future__ import annotations

import dataclasses
import json
import re
from pathlib import Path

from ..units.model import Document
from ..units.read import FORMAT_BY_SUFFIX, front_matter, read_path
from .jsonl import records

QUESTIONS_FILE = "handbook-questions.jsonl"
_EMPTY_LINE = re.compile(r"\s*(?:[-*+]|\d+[.)])?\s*")  # what is left of a list item whose sentence was cut


def read_folder(folder: Path) -> dict[str, Document]:
    """The documents of ``folder`` by id, read as ``asmr ingest FOLDER`` reads them."""
    paths = sorted(p for p in folder.rglob("*") if p.is_file() and p.suffix.lower() in FORMAT_BY_SUFFIX)
    return {d.doc_id: d for d in (read_path(p, root=folder) for p in paths)}


def cut_sentence(doc: Document, sentence: str) -> Document:
    """``doc`` without ``sentence`` (exact text). A line left with nothing but a list marker is
    dropped with its line break: a table row or list item then disappears whole rather than
    leaving a hole that would split the table or list."""
    def cut(text: str) -> str:
        at = text.find(sentence)
        if at < 0:
            raise ValueError(f"{doc.doc_id}: sentence to remove not found: {sentence!r}")
        after = at + len(sentence)
        start = text.rfind("\n", 0, at) + 1
        end = text.find("\n", after)
        end = len(text) if end < 0 else end
        if _EMPTY_LINE.fullmatch(text[start:at] + text[after:end]):
            return text[:start] + text[end + 1:]
        before, rest = text[:at], text[after:]
        # One space between the sentences that stay, none before the line's end.
        return before.rstrip(" ") + rest if rest[:1] in ("", "\n") else before + rest.lstrip(" ")

    raw = doc.raw
    if raw is not None and sentence in raw:
        raw = raw.replace(sentence, "")
    return dataclasses.replace(doc, text=cut(doc.text), raw=raw)


def load_questions(path: str | Path) -> list[dict]:
    """Questions in the shape of ``handbook-questions.jsonl``; a ValueError naming ``path:line`` for a
    bad one."""
    out, seen = [], set()
    for where, r in records(path):
        if not isinstance(r, dict):
            raise ValueError(f"{where}: expected a JSON object")
        for key in ("qid", "question", "category"):
            if not isinstance(r.get(key), str) or not r[key].strip():
                raise ValueError(f"{where}: {key!r} must be a non-empty string")
        if r["qid"] in seen:
            raise ValueError(f"{where}: duplicate qid {r['qid']!r}")
        seen.add(r["qid"])
        for key in ("answers", "gold_pids"):
            if not isinstance(r.get(key), list) or not all(isinstance(x, str) for x in r[key]):
                raise ValueError(f"{where}: {key!r} must be a list of strings")
        if not isinstance(r.get("answerable"), bool):
            raise ValueError(f"{where}: 'answerable' must be true or false")
        if r["answerable"] != bool(r["answers"]) or r["answerable"] != bool(r["gold_pids"]):
            raise ValueError(f"{where}: an answerable question has answers and gold_pids, an unanswerable "
                             "one neither")
        if "remove_sentence" in r and (r["answerable"] or not isinstance(r["remove_sentence"], str)):
            raise ValueError(f"{where}: 'remove_sentence' is a string, on unanswerable questions only")
        out.append(r)
    return out


def handbook_source(root: str | Path) -> tuple[list[Document], list[dict]]:
    """The handbook after its revision, with the sentences the questions name cut, and the
    questions (see the module doc)."""
    root = Path(root)
    docs = read_folder(root / "handbook")
    docs.update(read_folder(root / "handbook-v2"))  # a revised document replaces its first version
    queries = load_questions(root / QUESTIONS_FILE)
    for q in queries:
        if "remove_sentence" in q:
            holders = [i for i, d in docs.items() if q["remove_sentence"] in d.text]
            if len(holders) != 1:
                raise ValueError(f"{q['qid']}: the sentence to remove is in {len(holders)} documents, "
                                 "not one")
            docs[holders[0]] = cut_sentence(docs[holders[0]], q["remove_sentence"])
    unknown = {p for q in queries for p in q["gold_pids"]} - set(docs)
    if unknown:
        raise ValueError(f"{root / QUESTIONS_FILE}: gold_pids name no handbook document: {sorted(unknown)}")
    return sorted(docs.values(), key=lambda d: d.doc_id), queries


def write_source(docs: list[Document], queries: list[dict], out_dir: str | Path) -> None:
    """``out_dir/corpus.jsonl`` (one document a line: pid, title, text without front matter, type,
    effective_date where known, format "markdown" for a page of Markdown or HTML) and
    ``out_dir/queries.jsonl``."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    with open(out / "corpus.jsonl", "w", encoding="utf-8", newline="\n") as f:
        for d in docs:
            body = d.text[front_matter(d.text)[1]:].lstrip("\n") if d.fmt == "markdown" else d.text
            record = {"pid": d.doc_id, "title": d.title, "text": body, "type": d.doc_type}
            if d.fmt in ("markdown", "html"):  # HTML was read as Markdown: chunked as a user's ingest would
                record["format"] = "markdown"
            if d.effective_date:
                record["effective_date"] = d.effective_date
            f.write(json.dumps(record, ensure_ascii=False) + "\n")
    with open(out / "queries.jsonl", "w", encoding="utf-8", newline="\n") as f:
        for q in queries:
            f.write(json.dumps(q, ensure_ascii=False) + "\n")
