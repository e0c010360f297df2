"""The generated enterprise knowledge base: determinism, gold texts, revisions, question mix."""
import json
from pathlib import Path

import pytest

from asmr.eval.synth import DEEP_SHARE, DEEP_TYPES, MIX, TYPES, generate, load_queries
from asmr.store import Memory, ingest
from asmr.units.ids import doc_id_from_path
from asmr.units.read import chunk_document, read_path

UNITS, QUESTIONS = 300, 60


@pytest.fixture(scope="module")
def kb(tmp_path_factory):
    out = tmp_path_factory.mktemp("synth")
    report = generate(out, seed=3, units_target=UNITS, questions=QUESTIONS)
    return out, report


def _docs(root: Path) -> dict[str, object]:
    """Documents of one version by id, read the way ingest reads them."""
    return {d.doc_id: d for d in (read_path(p, root=root) for p in sorted(root.rglob("*.md")))}


def _files(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def test_same_seed_same_files(kb, tmp_path):
    out, _ = kb
    generate(tmp_path / "again", seed=3, units_target=UNITS, questions=QUESTIONS)
    assert _files(tmp_path / "again") == _files(out)
    generate(tmp_path / "other", seed=4, units_target=UNITS, questions=QUESTIONS)
    assert _files(tmp_path / "other")["queries.jsonl"] != _files(out)["queries.jsonl"]


def test_layout_size_and_markdown(kb):
    out, report = kb
    v1, v2 = _docs(out / "docs" / "v1"), _docs(out / "docs" / "v2")
    assert set(v1) == set(v2) and len(v1) == report.documents
    assert {d.doc_type for d in v2.values()} == {"spec", "manual", "faq", "changelog", "notes", "other"}
    assert all(d.effective_date for d in v2.values())
    revised = [i for i in v1 if v1[i].text != v2[i].text]
    assert len(revised) == report.revised > 0
    assert all(v2[i].effective_date > v1[i].effective_date for i in revised)
    kinds = [c.kind for d in v2.values() for c in chunk_document(d).chunks]
    assert len(kinds) == report.units_v2 and abs(len(kinds) - UNITS) <= 0.15 * UNITS
    assert {"heading", "paragraph", "list_item", "table_row"} <= set(kinds)
    assert f"| conflict | {report.questions['conflict']} |" in (out / "README.md").read_text()


def test_questions_mix_and_gold(kb):
    out, _ = kb
    queries = load_queries(out / "queries.jsonl")
    v1, v2 = _docs(out / "docs" / "v1"), _docs(out / "docs" / "v2")
    deep = round(QUESTIONS * DEEP_SHARE)
    assert len(queries) == QUESTIONS + deep and len({q["question"] for q in queries}) == len(queries)
    # The deep questions come after the others, so that adding them changed no earlier question.
    assert [q["type"] in DEEP_TYPES for q in queries] == [False] * QUESTIONS + [True] * deep
    for kind in TYPES:
        share = sum(q["type"] == kind for q in queries) / QUESTIONS
        assert abs(share - MIX[kind]) <= 0.03, kind
    for q in queries:
        assert len(q["gold_docs"]) == len(q["gold_texts"])
        for doc_id, text in zip(q["gold_docs"], q["gold_texts"]):
            assert text in v2[doc_id].text, (q["qid"], doc_id, text)
        # Every fact an answer must state is in a gold text, and is one of the accepted answers.
        for fact in q["key_facts"]:
            assert any(fact in t for t in q["gold_texts"]) and fact in q["answers"], q
        if q["type"] == "multi":
            assert 2 <= len(set(q["gold_docs"])) <= 3
        if q["type"] == "conflict":
            (doc_id,) = q["gold_docs"]
            (stale,) = q["stale_answers"]
            assert stale in v1[doc_id].text and stale not in v2[doc_id].text, q
        else:
            assert q["stale_answers"] == []


def test_unanswerable_subject_exists_field_does_not(kb):
    out, _ = kb
    queries = [q for q in load_queries(out / "queries.jsonl") if q["type"] == "unanswerable"]
    assert queries
    docs = [d for v in ("v1", "v2") for d in _docs(out / "docs" / v).values()]
    units = [c.content.lower() for d in docs for c in chunk_document(d).chunks]
    for q in queries:
        assert q["answers"] == [] and q["gold_docs"] == [] and q["key_facts"] == []
        subject, field = q["subject"].lower(), q["field"].lower()
        assert any(subject in d.text.lower() for d in docs), q
        # A system's or team's missing field is one others state: it is plausibly there.
        if not any(d.title.lower() == subject for d in docs):  # a policy's missing rule is plausible as is
            assert any(field in u for u in units), q
        for d in docs:
            if subject in d.title.lower():
                assert field not in d.text.lower(), (q, d.doc_id)
        assert not any(subject in u and field in u for u in units), q


def test_ingesting_v1_then_v2_supersedes_and_deprecates(kb, tmp_path):
    out, _ = kb
    v1, v2 = _docs(out / "docs" / "v1"), _docs(out / "docs" / "v2")
    ingest(tmp_path, list(v1.values()), embedder="hash-64", progress=False)
    report = ingest(tmp_path, list(v2.values()), embedder="hash-64", progress=False)
    assert sum(d.superseded for d in report.documents) > 0
    assert sum(d.deprecated for d in report.documents) > 0
    # Every gold text lies inside an active unit of its document: it maps to a unit id.
    with Memory(tmp_path) as m:
        for q in load_queries(out / "queries.jsonl"):
            for doc_id, text in zip(q["gold_docs"], q["gold_texts"]):
                assert any(text in u.content for u in m.units_of("kb", doc_id)), (q["qid"], text)


def test_gold_doc_ids_follow_paths(kb):
    out, _ = kb
    root = out / "docs" / "v2"
    ids = {doc_id_from_path(p.relative_to(root).as_posix()) for p in root.rglob("*.md")}
    assert {d for q in load_queries(out / "queries.jsonl") for d in q["gold_docs"]} <= ids


def test_load_queries_names_the_bad_line(kb, tmp_path):
    out, _ = kb
    lines = (out / "queries.jsonl").read_text().splitlines()
    bad = json.loads(lines[1])
    bad["type"] = "maybe"
    path = tmp_path / "q.jsonl"
    path.write_text("\n".join([lines[0], json.dumps(bad)]) + "\n")
    with pytest.raises(ValueError, match=r"q\.jsonl:2: 'type'"):
        load_queries(path)
    path.write_text(lines[0] + "\n" + lines[0] + "\n")
    with pytest.raises(ValueError, match=r":2: duplicate qid"):
        load_queries(path)
    path.write_text(lines[0] + "\n{not json\n")
    with pytest.raises(ValueError, match=r":2: bad JSON"):
        load_queries(path)
