"""Evaluation sources beyond the first generated knowledge base: three- and four-document chains,
template family B, the bundled handbook with its questions, and the generated chat log."""
import json
import re
from datetime import date
from pathlib import Path

import pytest
from asmr.eval.retrieval import load_queries as load_retrieval_queries
from asmr.eval.sources import cut_sentence, handbook_source, read_folder, write_source
from asmr.eval.synth import DEEP_TYPES, TYPES, generate, load_queries
from asmr.eval.synth_chat import (
    CARS,
    CATEGORIES,
    CITIES,
    CONTINENT,
    COUNTRY,
    EVENTS,
    HOBBIES,
    INSTRUMENTS,
    JOBS,
    MONTHS,
    PEOPLE,
    PET_KINDS,
    PET_NAMES,
    TRIPS,
    generate_chat,
)
from asmr.store import Memory, ingest
from asmr.units.read import chunk_document, iter_jsonl, read_path

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"
UNITS, QUESTIONS, DEEP = 300, 60, 20


def _files(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def _docs(root: Path) -> dict[str, object]:
    return {d.doc_id: d for d in (read_path(p, root=root) for p in sorted(root.rglob("*.md")))}


@pytest.fixture(scope="module")
def families(tmp_path_factory):
    out = tmp_path_factory.mktemp("families")
    for family in ("A", "B"):
        generate(out / family, seed=5, units_target=UNITS, questions=QUESTIONS, deep_questions=DEEP,
                 family=family)
    return out


# -- three- and four-document chains ------------------------------------------------------------

@pytest.mark.parametrize("family", ["A", "B"])
def test_deep_chains_resolve_in_the_written_documents(families, family):
    out = families / family
    v2 = _docs(out / "docs" / "v2")
    deep = [q for q in load_queries(out / "queries.jsonl") if q["type"] in DEEP_TYPES]
    assert {q["type"] for q in deep} == set(DEEP_TYPES) and len(deep) == DEEP
    for q in deep:
        hops = 3 if q["type"] == "multi3" else 4
        assert len(q["gold_docs"]) == len(set(q["gold_docs"])) == hops, q
        for doc_id, text in zip(q["gold_docs"], q["gold_texts"]):
            assert text in v2[doc_id].text, (q["qid"], doc_id)
        # The answer is what the last document of the chain says, and only the chain leads there:
        # the systems and teams after the first hop are named neither in the question nor the answer.
        (answer,) = q["key_facts"]
        assert answer in q["gold_texts"][-1] and answer in q["answers"], q
        for doc_id in q["gold_docs"][1:]:
            subject = doc_id.split(".", 1)[1].replace("-", " ")
            assert subject not in q["question"].lower(), (q["question"], doc_id)


def test_deep_questions_leave_the_other_questions_as_they_were(families, tmp_path):
    generate(tmp_path, seed=5, units_target=UNITS, questions=QUESTIONS, deep_questions=0)
    without = load_queries(tmp_path / "queries.jsonl")
    with_deep = load_queries(families / "A" / "queries.jsonl")
    assert all(q["type"] in TYPES for q in without)
    assert with_deep[:len(without)] == without
    assert _files(tmp_path / "docs") == _files(families / "A" / "docs")


# -- template family B ----------------------------------------------------------------------------

def _lines(root: Path) -> set[str]:
    return {line for d in _docs(root).values() for line in d.text.splitlines()
            if line.strip() and not line.startswith(("---", "type:", "effective_date:", "|---"))}


def test_family_b_words_the_same_world_another_way(families, tmp_path):
    a, b = families / "A", families / "B"
    qa, qb = load_queries(a / "queries.jsonl"), load_queries(b / "queries.jsonl")
    # The same world and the same questions asked: types, facts and gold documents match one to one.
    assert [q["type"] for q in qa] == [q["type"] for q in qb]
    assert [q["key_facts"] for q in qa] == [q["key_facts"] for q in qb]
    assert [q["gold_docs"] for q in qa] == [q["gold_docs"] for q in qb]
    assert set(_docs(a / "docs" / "v2")) == set(_docs(b / "docs" / "v2"))
    # ... worded differently: few questions and few document lines are shared.
    same_questions = sum(x["question"] == y["question"] for x, y in zip(qa, qb))
    assert same_questions <= 0.1 * len(qa), same_questions
    la, lb = _lines(a / "docs" / "v2"), _lines(b / "docs" / "v2")
    assert len(la & lb) <= 0.15 * len(lb), len(la & lb) / len(lb)
    # Each gold text is one line of B's own documents, and the question forms vary.
    v2 = _docs(b / "docs" / "v2")
    v2_a = _docs(a / "docs" / "v2")
    for q in qb:
        for doc_id, text in zip(q["gold_docs"], q["gold_texts"]):
            assert text in v2[doc_id].text and text not in v2_a[doc_id].text, q
    openings = {q["question"].split()[0] for q in qb}
    assert {"Which", "Tell", "Where"} <= openings and any(q["question"][0].islower() for q in qb)
    generate(tmp_path, seed=5, units_target=UNITS, questions=QUESTIONS, deep_questions=DEEP, family="B")
    assert _files(tmp_path) == _files(b)


def test_family_b_unanswerable_fields_are_absent(families):
    out = families / "B"
    docs = [d for v in ("v1", "v2") for d in _docs(out / "docs" / v).values()]
    units = [c.content.lower() for d in docs for c in chunk_document(d).chunks]
    queries = [q for q in load_queries(out / "queries.jsonl") if q["type"] == "unanswerable"]
    assert queries
    for q in queries:
        subject, field = q["subject"].lower(), q["field"].lower()
        assert any(subject in d.text.lower() for d in docs), q
        assert not any(subject in d.title.lower() and field in d.text.lower() for d in docs), q
        assert not any(subject in u and field in u for u in units), q


def test_corpus_files_match_the_documents_and_questions(families):
    out = families / "B"
    corpus = {d.doc_id: d for d in iter_jsonl(out / "corpus.jsonl")}
    v2 = _docs(out / "docs" / "v2")
    assert set(corpus) == set(v2)
    assert all(corpus[i].text in v2[i].text and corpus[i].effective_date == v2[i].effective_date for i in v2)
    queries = [json.loads(line) for line in (out / "corpus.queries.jsonl").read_text().splitlines()]
    full = load_queries(out / "queries.jsonl")
    assert [q["qid"] for q in queries] == [q["qid"] for q in full]
    for q, f in zip(queries, full):
        assert q["category"] == f["type"] and q["answerable"] == (f["type"] != "unanswerable")
        assert q["gold_pids"] == list(dict.fromkeys(f["gold_docs"])) and set(q["gold_pids"]) <= set(corpus)
    assert len(load_retrieval_queries(out / "corpus.queries.jsonl")) == len(queries)


# -- the handbook ---------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def handbook():
    return handbook_source(EXAMPLES)


def test_handbook_questions_gold_documents_hold_the_answers(handbook):
    docs, queries = handbook
    by_id = {d.doc_id: d for d in docs}
    answerable = [q for q in queries if q["answerable"]]
    unanswerable = [q for q in queries if not q["answerable"]]
    assert len(answerable) >= 35 and len(unanswerable) >= 20
    assert {"not_covered", "adversarial", "sentence_removed"} <= {q["category"] for q in unanswerable}
    assert any(q["lang"] == "zh" for q in answerable) and any(q["lang"] == "zh" for q in unanswerable)
    for q in answerable:
        assert set(q["gold_pids"]) <= set(by_id), q
        text = " ".join(by_id[p].text for p in q["gold_pids"])
        assert any(a in text for a in q["answers"]), q
        # What the first version said is gone from the documents that answer now.
        assert not any(stale in text for stale in q.get("stale_answers", [])), q
    for q in unanswerable:
        assert q["answers"] == [] and q["gold_pids"] == []


def test_handbook_sentences_cut_and_their_answers_gone(handbook):
    docs, queries = handbook
    corpus = "\n".join(d.text for d in docs)
    first = {**read_folder(EXAMPLES / "handbook"), **read_folder(EXAMPLES / "handbook-v2")}
    v1_only = "\n".join(d.text for d in read_folder(EXAMPLES / "handbook").values())
    removed = [q for q in queries if "removed_answer" in q]
    assert len(removed) >= 7
    for q in removed:
        assert q["removed_answer"] not in corpus, q
        if "remove_sentence" in q:
            assert q["remove_sentence"] not in corpus
            assert any(q["removed_answer"] in d.text and q["remove_sentence"] in d.text
                       for d in first.values()), q
        else:  # removed by the revision: only v1 said it
            assert q["removed_answer"] in v1_only
    # A table row goes whole: the table keeps its other rows under its header.
    deploy = next(d for d in docs if d.doc_id == "ops.deploy").text
    assert "| `--port` | 9090 |" in deploy and "| `--timeout` | 30s |" in deploy
    assert "\n\n| `--timeout`" not in deploy


def test_handbook_ids_are_the_ones_ingest_gives(handbook, tmp_path):
    docs, queries = handbook
    first = list(read_folder(EXAMPLES / "handbook").values())
    ingest(tmp_path / "m", first, embedder="hash-64", progress=False)
    with Memory(tmp_path / "m") as m:
        for doc_id in {p for q in queries for p in q["gold_pids"]}:
            assert m.units_of("kb", doc_id), doc_id
    write_source(docs, queries, tmp_path / "out")
    corpus = {d.doc_id: d for d in iter_jsonl(tmp_path / "out" / "corpus.jsonl")}
    assert set(corpus) == {d.doc_id for d in docs}
    assert not any(t.startswith("---") for t in (d.text for d in corpus.values()))
    # pages of Markdown and HTML are chunked as `asmr ingest` chunks the files: the same units
    assert {d.fmt for d in corpus.values()} == {"markdown"}
    from asmr.units.read import chunk_document

    def chunks(doc):
        return [(c.content, c.section_path) for c in chunk_document(doc).chunks]
    for d in docs:
        assert chunks(corpus[d.doc_id]) == chunks(d), d.doc_id
    assert len(load_retrieval_queries(tmp_path / "out" / "queries.jsonl")) == len(queries)


@pytest.fixture(scope="module")
def handbook_zh():
    return handbook_source(EXAMPLES / "zh")


def holds_its_answers(docs, queries, stale_gone: bool = True, values_recur: bool = False) -> dict:
    """Checks that a handbook's documents answer its answerable questions (and, with ``stale_gone``,
    no longer say what the first version said) and none of the others; returns the documents by id.
    With ``values_recur`` the value a cut sentence gave may stand elsewhere in another fact ("30天" of
    an invoice, where a lost-property rule was cut): the sentence itself must be gone."""
    by_id = {d.doc_id: d for d in docs}
    corpus = "\n".join(d.text for d in docs)
    answerable = [q for q in queries if q["answerable"]]
    unanswerable = [q for q in queries if not q["answerable"]]
    assert len(answerable) >= 30 and len(unanswerable) >= 15
    assert {"not_covered", "adversarial", "sentence_removed", "removed_by_revision"} <= {
        q["category"] for q in unanswerable}
    for q in answerable:
        text = " ".join(by_id[p].text for p in q["gold_pids"])
        assert any(a.lower() in text.lower() for a in q["answers"]), q  # answers are matched case-blind
        assert not (stale_gone and any(stale in text for stale in q.get("stale_answers", []))), q
    for q in unanswerable:
        if "remove_sentence" in q:
            assert q["remove_sentence"] not in corpus, q
        if "removed_answer" in q and not (values_recur and "remove_sentence" in q):
            assert q["removed_answer"] not in corpus, q
    return by_id


def test_the_chinese_handbook_holds_the_answers_of_its_questions(handbook_zh):
    # a second handbook, in Chinese, written apart from the first and never fitted on
    by_id = holds_its_answers(*handbook_zh)
    assert {q["lang"] for q in handbook_zh[1] if q["category"] == "cross_lingual"} == {"en"}
    # its relative times are dated once: 满一年后 is a condition of service, no date
    assert "(20" not in by_id["hr.attendance"].text


def test_the_lab_handbook_holds_the_answers_of_its_questions():
    # a third handbook, English, of another trade (a research lab), written after the last fit
    by_id = holds_its_answers(*handbook_source(EXAMPLES / "lab"))
    # "three late cancellations in a month" is a rate, no month of the calendar: the rule is read as written
    assert "(20" not in by_id["equipment.booking"].text


@pytest.mark.parametrize("folder", ["clinic", "bakery", "zh-library", "zh-property", "hotel", "pool", "vet",
                                    "school", "courier", "theatre", "zh-gym", "zh-restaurant"])
def test_the_handbooks_written_apart_hold_the_answers_of_their_questions(folder):
    # twelve more handbooks (a clinic, a bakery, a library branch and a property office; then a hotel, a
    # leisure centre, a vet practice, a school office, a courier depot, a community theatre, a gym and a
    # restaurant), each written by a session that read none of the code that scores it: the out-of-source
    # check of refusal. Their changelogs, gold for some questions, say what the value was before, as
    # changelogs do.
    by_id = holds_its_answers(*handbook_source(EXAMPLES / folder), stale_gone=False,
                              values_recur=folder not in ("clinic", "bakery", "zh-library", "zh-property"))
    assert len(by_id) >= 9


CONVERSATION_CATEGORIES = {"single": 24, "multi_hop": 8, "temporal": 8, "current": 6, "adversarial": 8,
                           "not_mentioned": 8, "unstated": 6}
_ISO_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")


CONVERSATIONS = ["friends", "flatmates", "family", "neighbours", "cousins", "band", "mentor",
                 "zh-friends", "zh-colleagues", "zh-roommates"]


@pytest.mark.parametrize("folder", CONVERSATIONS)
def test_the_conversations_written_apart_hold_the_answers_of_their_questions(folder):
    # ten multi-session chat logs (two friends, three former flatmates, a mother and her son, two
    # neighbours, two cousins, three bandmates, a mentor and a graduate; in Chinese two friends, two former
    # colleagues, three former roommates), each written by a session that read none of the code that scores
    # it: the out-of-source check of recall and refusal over conversations, one turn a passage as `asmr eval
    # retrieval` reads them
    root = EXAMPLES / "conversations" / folder
    turns = [json.loads(line) for line in (root / "corpus.jsonl").read_text(encoding="utf-8").splitlines()]
    queries = [json.loads(line) for line in (root / "queries.jsonl").read_text(encoding="utf-8").splitlines()]
    by_pid = {t["pid"]: t for t in turns}
    assert len(by_pid) == len(turns) >= 300
    assert [t["session"] for t in turns] == sorted(t["session"] for t in turns)
    for t in turns:
        assert t["title"] == f"{t['speaker']}, {t['effective_date']}" and "\n" not in t["text"], t
    counts = {c: sum(q["category"] == c for q in queries) for c in CONVERSATION_CATEGORIES}
    assert counts == CONVERSATION_CATEGORIES
    for q in queries:
        if q["category"] in ("adversarial", "not_mentioned", "unstated"):
            assert not q["answerable"] and q["answers"] == [] and q["gold_pids"] == [], q
            continue
        assert q["answerable"] and q["answers"] and q["gold_pids"], q
        text = " ".join(by_pid[p]["text"] for p in q["gold_pids"]).lower()
        for a in q["answers"]:
            # a resolved date may stand for the turn's own words ("next Thursday"), given beside it
            assert (_ISO_DATE.fullmatch(a) and date.fromisoformat(a)) or a.lower() in text, (q, a)
        # the newest value of what changed is stated after the stale one
        for stale in q.get("stale_answers", []):
            said = [t["pid"] for t in turns if stale.lower() in t["text"].lower()]
            assert said and min(said) < max(q["gold_pids"]), q
    # the loaded passages are the turns, so that a question's gold turns are what recall is scored on
    assert {d.doc_id for d in iter_jsonl(root / "corpus.jsonl")} == set(by_pid)
    assert all(p in by_pid for q in load_retrieval_queries(root / "queries.jsonl") for p in q.gold)


def test_cut_sentence_refuses_a_sentence_that_is_not_there(handbook):
    docs, _ = handbook
    with pytest.raises(ValueError, match="not found"):
        cut_sentence(docs[0], "This sentence is in no handbook page.")


# -- the chat log ---------------------------------------------------------------------------------

VALUES = {"city": CITIES, "job": JOBS, "pet_kind": PET_KINDS, "pet_name": PET_NAMES, "hobby": HOBBIES,
          "trip": TRIPS, "car": CARS, "instrument": INSTRUMENTS, "trip_month": MONTHS,
          "birthday": ("birthday",),  # month names also date trips: the word is what a birthday turn has
          **{kind: e["values"] for kind, e in EVENTS.items()}, "pet": PET_NAMES}


@pytest.fixture(scope="module")
def chat(tmp_path_factory):
    out = tmp_path_factory.mktemp("chat")
    report = generate_chat(out, seed=2)
    turns = [json.loads(line) for line in (out / "corpus.jsonl").read_text().splitlines()]
    queries = [json.loads(line) for line in (out / "queries.jsonl").read_text().splitlines()]
    return out, report, turns, queries


def test_chat_same_seed_same_files(chat, tmp_path):
    out, *_ = chat
    generate_chat(tmp_path / "again", seed=2)
    assert _files(tmp_path / "again") == _files(out)
    generate_chat(tmp_path / "other", seed=3)
    assert _files(tmp_path / "other")["corpus.jsonl"] != _files(out)["corpus.jsonl"]
    # Titles written another way: the same turns (the speaker moves into the text) and questions.
    generate_chat(tmp_path / "titles", seed=2, titles="session")
    same, other = (tmp_path / "again" / "corpus.jsonl"), (tmp_path / "titles" / "corpus.jsonl")
    rows = [(json.loads(a), json.loads(b)) for a, b in zip(same.read_text().splitlines(),
                                                            other.read_text().splitlines())]
    assert all(b["text"] == f"{a['speaker']}: {a['text']}" and a["pid"] == b["pid"] for a, b in rows)
    assert not any(b["speaker"] in b["title"] for _, b in rows)
    assert _files(tmp_path / "titles")["queries.jsonl"] == _files(out)["queries.jsonl"]
    # Read as a corpus, both give every turn the same text: who speaks is in it, whatever the title.
    assert [d.text for d in iter_jsonl(same)] == [d.text for d in iter_jsonl(other)]


def test_chat_turns_and_questions_are_readable(chat):
    out, report, turns, queries = chat
    assert len(turns) == report.turns and len({t["session"] for t in turns}) == report.sessions == 20
    assert all(t["title"] == f"{t['speaker']}, {t['effective_date']}" for t in turns)
    assert len(list(iter_jsonl(out / "corpus.jsonl"))) == len(turns)
    assert len(load_retrieval_queries(out / "queries.jsonl")) == len(queries)
    made = set(CATEGORIES) - {"correction"}  # only asked for (corrections=N)
    assert set(report.questions) == set(CATEGORIES) and all(report.questions[c] for c in made)
    assert {q["category"] for q in queries} == made
    assert len({q["question"] for q in queries}) == len(queries)
    # Several wordings of each kind of question: no one wording marks a category.
    for category in ("single", "temporal", "multi_hop", "inference", "adversarial", "unstated"):
        openings = {" ".join(q["question"].split()[:2]) for q in queries if q["category"] == category}
        assert len(openings) >= 3, (category, openings)


def test_chat_answers_are_in_their_turns(chat):
    out, _, turns, queries = chat
    by_pid = {t["pid"]: t for t in turns}
    rendered = {d.doc_id: d.text for d in iter_jsonl(out / "corpus.jsonl")}  # relative time resolved by ingest
    for q in (q for q in queries if q["answerable"]):
        gold = [by_pid[pid] for pid in q["gold_pids"]]
        assert all(t["speaker"] == q["subject"] for t in gold), q
        turn = gold[-1]
        if q["category"] == "temporal":
            # The date the generator worked out is the one ingest resolves from the words, or the
            # session's when the turn says "today" (which ingest leaves to the stamp).
            assert q["answers"][0] in rendered[turn["pid"]] or (
                q["answers"][0] == turn["effective_date"] and "today" in turn["text"].lower()), (q, rendered)
            assert q["answers"][0] != turn["effective_date"] or "today" in turn["text"].lower()
        elif q["category"] == "inference":
            place = next(v for v in (*CITIES, *TRIPS) if v in turn["text"])
            assert q["answers"][0] == {**COUNTRY, **CONTINENT}[place], q
        else:
            assert q["answers"][0] in turn["text"], q
        if q["category"] == "multi_hop":
            # Two turns of one person in two sessions: the first picks them out, the second answers.
            first, second = gold
            assert first["session"] != second["session"]
            assert any(v in first["text"] and v in q["question"] for vs in VALUES.values() for v in vs
                       if len(v) > 3), q
        if q["category"] == "current":
            # The latest value wins: the stale value was said earlier by the same person.
            (stale,) = q["stale_answers"]
            earlier = [t for t in turns if t["speaker"] == q["subject"] and t["pid"] < turn["pid"]]
            assert any(stale in t["text"] for t in earlier), q
            later = [t for t in turns if t["speaker"] == q["subject"] and t["pid"] > turn["pid"]]
            assert not any(v in t["text"] for t in later for v in VALUES[q["attribute"]]), q


def test_chat_corrections_in_one_session_and_the_rest_of_the_log_unchanged(chat, tmp_path):
    out, _, turns, queries = chat
    generate_chat(tmp_path / "c", seed=2, corrections=4)
    fixed = [json.loads(line) for line in (tmp_path / "c" / "corpus.jsonl").read_text().splitlines()]
    asked = [json.loads(line) for line in (tmp_path / "c" / "queries.jsonl").read_text().splitlines()]
    corrections = [q for q in asked if q["category"] == "correction"]
    assert len(corrections) >= 4 and {q["correction_form"] for q in corrections} == {"restated", "terse"}
    by_pid = {t["pid"]: i for i, t in enumerate(fixed)}
    for q in corrections:
        (pid,) = q["gold_pids"]
        at, wrong_at = by_pid[pid], by_pid[pid.removesuffix("c")]
        said, wrong = fixed[at], fixed[wrong_at]
        # the same person, later in the same session; the wrong value said first, nowhere else
        assert wrong_at < at and said["session"] == wrong["session"] and said["speaker"] == wrong["speaker"]
        assert q["answers"][0] in said["text"] and q["stale_answers"][0] in wrong["text"]
        assert q["answers"][0] not in wrong["text"]
        assert sum(q["stale_answers"][0] in t["text"] for t in fixed) <= 2
    # every other turn and question is as without corrections
    others = {t["pid"]: t for t in fixed if not any(t["pid"] in (q["gold_pids"][0], q["gold_pids"][0][:-1])
                                                    for q in corrections)}
    assert [t for t in turns if t["pid"] in others] == list(others.values())
    replaced = {q["gold_pids"][0].removesuffix("c") for q in corrections}  # asked as "single" before
    assert [(q["question"], q["answers"]) for q in asked if q["category"] != "correction"] == [
        (q["question"], q["answers"]) for q in queries
        if not (q["category"] == "single" and q["gold_pids"][0] in replaced)]


def test_chat_news_is_told_with_relative_time_and_comes_up_again(chat):
    out, _, turns, queries = chat
    temporal = [q for q in queries if q["category"] == "temporal"]
    told = {q["gold_pids"][0] for q in temporal}
    rendered = {d.doc_id: d.text for d in iter_jsonl(out / "corpus.jsonl")}
    resolved = [pid for pid in told if "(" in rendered[pid]]
    assert len(resolved) >= len(told) // 2  # most take resolving the words, not the session's date
    # Other turns talk of the same news without a date: the dated one has to be found among them.
    for q in temporal:
        subject_turns = [t for t in turns if t["pid"] not in told and (t["speaker"] == q["subject"] or
                                                                      q["subject"] in t["text"])]
        assert subject_turns


def test_chat_unanswerable_questions_have_no_answer_in_the_log(chat):
    _, _, turns, queries = chat
    adversarial = [q for q in queries if q["category"] == "adversarial"]
    unstated = [q for q in queries if q["category"] == "unstated"]
    never = [q for q in queries if q["category"] == "never_mentioned"]
    assert adversarial and unstated and never
    for q in adversarial + unstated + never:
        assert not q["answerable"] and q["answers"] == [] and q["gold_pids"] == []

    def about(name):
        """What ``name`` says of themselves (not asking someone else about their news), and what names them."""
        return [t for t in turns if name in t["text"] or (
            t["speaker"] == name and not any(p in t["text"] for p in PEOPLE if p != name))]

    for q in adversarial:
        # Someone else's news: what the question names is said by them, never by or of the subject.
        assert q["said_by"] != q["subject"]
        named = [v for vs in VALUES.values() for v in vs if re.search(rf"\b{re.escape(v)}\b", q["question"])]
        if named:
            assert any(v in t["text"] for t in turns if t["speaker"] == q["said_by"] for v in named), q
            assert not any(v in t["text"] for t in about(q["subject"]) for v in named), q
        else:  # asked without the detail: the subject has no news of the kind (they may ask about others')
            values = VALUES[q["attribute"]]
            own = [t for t in turns if t["speaker"] == q["subject"] and not any(p in t["text"] for p in PEOPLE)]
            stated = {v for t in own for v in values if v in t["text"]}
            assert len(stated) <= (1 if q["attribute"] in ("city", "job", "hobby") else 0), q
    for q in unstated:
        values = VALUES[q["attribute"]]
        # Someone else states this attribute (it is plausible), but nothing the person says, and
        # no turn that names them, holds a value of it.
        assert any(v in t["text"] for t in turns for v in values if t["speaker"] != q["subject"]), q
        assert not any(re.search(rf"\b{re.escape(v)}\b", t["text"]) for t in about(q["subject"]) for v in values), q
    words = {"football_club": "football", "university": "university", "language": "language",
             "favourite_book": "favourite book", "siblings": "sibling", "shoe_size": "shoe"}
    for q in never:
        assert not any(words[q["attribute"]] in t["text"].lower() for t in turns), q


# -- the command line -----------------------------------------------------------------------------

def test_eval_synth_writes_each_source_and_refuses_mixed_flags(tmp_path, capsys):
    from asmr.cli import main

    assert main(["eval", "synth", "--chat", "--out", str(tmp_path / "chat"), "--seed", "4", "--sessions", "6",
                 "--turns", "60", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["sessions"] == 6
    assert report["turns"] == len(list(iter_jsonl(tmp_path / "chat" / "corpus.jsonl")))
    assert main(["eval", "synth", "--handbook", str(EXAMPLES), "--out", str(tmp_path / "hb"), "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert sum(report["questions"].values()) == len(load_retrieval_queries(tmp_path / "hb" / "queries.jsonl"))
    assert main(["eval", "synth", "--family", "B", "--out", str(tmp_path / "b"), "--units", "300",
                 "--questions", "30", "--deep-questions", "4", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["family"] == "B" and report["questions"]["multi3"] + report["questions"]["multi4"] == 4
    for bad in (["--sessions", "5"], ["--chat", "--family", "B"], ["--chat", "--handbook", str(EXAMPLES)],
                ["--handbook", str(EXAMPLES), "--deep-questions", "3"]):
        assert main(["eval", "synth", "--out", str(tmp_path / "bad"), *bad]) == 2, bad
    assert not (tmp_path / "bad").exists()
