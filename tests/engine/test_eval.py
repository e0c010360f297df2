"""The evaluations' honesty: questions without an answer, refusing baselines, the three unanswerable
constructions, and reports that keep answerable and unanswerable questions apart (hash embedder,
tiny corpora)."""
import json
from pathlib import Path

import pytest

from asmr.answer.answerer import NOT_FOUND, Answerer
from asmr.cli import main
from asmr.embed.models import get_embedder
from asmr.eval.answers import AnswerEval, answer_queries
from asmr.eval.retrieval import (Query, baseline_score, load_queries, refusal_by_category, refusal_by_method,
                                 refusal_features, refusal_report, roc_auc)
from asmr.eval.unanswerable import cut_sentences, make
from asmr.generate.extractive import ExtractiveGenerator
from asmr.retrieve import Retriever
from asmr.retrieve import confidence as confidence_model
from asmr.store.memory import Memory
from asmr.store.writer import ingest
from asmr.units.read import iter_jsonl

CORPUS = [
    {"pid": "ana", "title": "Ana Lind", "text": "Ana Lind is a painter from Oslo. Ana Lind studied chemistry at "
                                                "Uppsala. She paints harbours in winter."},
    {"pid": "ben", "title": "Ben Holt", "text": "Ben Holt is a sailor from Bergen. He owns a red boat."},
    {"pid": "oslo", "title": "Oslo", "text": "Oslo is the capital of Norway. It lies on a fjord."},
    {"pid": "carl", "title": "Carl Berg (writer)", "text": "Carl Berg is a writer. His novel is set in Tromso."},
    {"pid": "dora", "title": "Dora Voss", "text": "Dora Voss is a pilot. She flies over Tromso every week."},
]
QUERIES = [
    {"qid": "ana", "question": "What did Ana Lind study?", "answers": ["chemistry"], "gold_pids": ["ana"],
     "category": "person"},
    {"qid": "oslo", "question": "What is Oslo the capital of?", "answers": ["Norway"], "gold_pids": ["oslo"],
     "category": "place"},
    {"qid": "ben", "question": "What does Ben Holt own?", "answers": ["a red boat"], "gold_pids": ["ben"],
     "category": "person"},
    {"qid": "carl", "question": "Where is the novel of Carl Berg set?", "answers": ["Tromso"],
     "gold_pids": ["carl"]},
    {"qid": "mayor", "question": "Who is the mayor of Bergen?", "answers": [], "gold_pids": [],
     "category": "nowhere"},
    {"qid": "moon", "question": "Who painted the moon?", "answerable": False},
]

ANA = Query("ana", "What did Ana Lind study at Uppsala?", ("ana",), ("chemistry",))
MOON = Query("moon", "Who painted the moon?", (), (), answerable=False)


def write(tmp_path, corpus=CORPUS, queries=QUERIES):
    c, q = tmp_path / "corpus.jsonl", tmp_path / "q.jsonl"
    c.write_text("".join(json.dumps(r) + "\n" for r in corpus))
    q.write_text("".join(json.dumps(r) + "\n" for r in queries))
    return c, q


def retrieval(tmp_path, capsys, *flags):
    c, q = write(tmp_path)
    code = main(["eval", "retrieval", "--corpus", str(c), "--queries", str(q), "--memory", str(tmp_path / "m"),
                 "--embedder", "hash-64", "--json", *flags])
    captured = capsys.readouterr()
    return code, json.loads(captured.out) if code == 0 else captured.err


def test_questions_without_gold_are_unanswerable_and_left_out_of_recall(tmp_path, capsys):
    queries = {q.qid: q for q in load_queries(write(tmp_path)[1])}
    assert not queries["mayor"].answerable and not queries["moon"].answerable and queries["moon"].gold == ()
    assert queries["ana"].answerable and queries["ana"].category == "person" and queries["carl"].category is None
    code, report = retrieval(tmp_path, capsys, "--methods", "dense,asmr")
    assert code == 0 and report["params"]["answerable"] == 4
    # Five passages, so dense ranks every one within five: recall 1 unless a no-gold question counted.
    assert report["methods"]["dense"]["recall@5"] == 1.0
    assert report["refusal"]["unanswerable"] == 2 and report["refusal"]["answerable"] == 4
    assert set(report["refusal_by_method"]) == {"dense", "hybrid", "asmr"}
    assert report["refusal"] == report["refusal_by_method"]["asmr"] and "roc_auc" in report["refusal"]
    assert "refusal_modes" not in report


def test_per_question_lines_say_what_each_method_showed_and_how_refusal_scored_it(tmp_path, capsys):
    out = tmp_path / "per-question.jsonl"
    code, report = retrieval(tmp_path, capsys, "--methods", "bm25,asmr", "--unanswerable", "0.5",
                             "--unanswerable-mode", "swap", "--per-question", str(out))
    assert code == 0
    lines = {r["qid"]: r for r in map(json.loads, out.read_text(encoding="utf-8").splitlines())}
    assert list(lines) == [q["qid"] for q in QUERIES]
    ana = lines["ana"]
    assert set(ana["documents"]) == {"bm25", "asmr"} and len(ana["documents"]["asmr"]) <= 5
    assert ana["recall@5"]["bm25"] == float("ana" in ana["documents"]["bm25"])
    assert "documents" in lines["moon"] and "recall@5" not in lines["moon"]  # shown, but no answer to recall
    # every question report["refusal"] scored has its confidence and verdict, the constructed ones marked
    scored = [r for r in lines.values() if "confidence" in r]
    assert len(scored) == report["refusal"]["answerable"] + report["refusal"]["unanswerable"]
    made = [r for r in scored if r.get("made_unanswerable") == "swap"]
    assert made and all(not r["answerable_here"] and r["asked"] != r["question"] for r in made)
    assert all(r["refused"] == (r["confidence"] < report["params"]["retrieve"]["confidence_threshold"])
               for r in scored)
    assert sum(not r["answerable_here"] and r["refused"] for r in scored) == round(
        report["refusal"]["recall"] * report["refusal"]["unanswerable"])
    code, err = retrieval(tmp_path, capsys, "--methods", "bm25", "--per-question", str(tmp_path / "no" / "f"))
    assert code == 2 and "--per-question" in err and len(err.strip().splitlines()) == 1


def test_a_record_that_says_answerable_wrongly_is_a_clear_error(tmp_path, capsys):
    bad = [{"qid": "1", "question": "Who?", "gold_pids": ["ana"], "answerable": "no"}]
    c, q = write(tmp_path, queries=bad)
    code = main(["eval", "retrieval", "--corpus", str(c), "--queries", str(q), "--memory", str(tmp_path / "m"),
                 "--embedder", "hash-64"])
    err = capsys.readouterr().err
    assert code == 2 and f"{q}:1" in err and "answerable" in err and len(err.strip().splitlines()) == 1


def test_roc_auc_counts_ties_half():
    assert roc_auc([0.9, 0.5], [0.5, 0.1]) == pytest.approx(3.5 / 4)
    assert roc_auc([0.2], [0.8]) == 0.0 and roc_auc([0.3], []) is None
    rows = [{"qid": q, "confidence": c, "refused": c < 0.5} for q, c in
            (("a1", 0.9), ("a2", 0.5), ("u1", 0.5), ("u2", 0.1))]
    rep = refusal_report(rows, {"u1", "u2"})
    assert rep["roc_auc"] == pytest.approx(0.875)
    assert rep["recall"] == 0.5 and rep["precision"] == 1.0 and rep["false_refusal_rate"] == 0.0


def test_baselines_refuse_below_their_threshold(monkeypatch):
    rows = [{"qid": "a", "confidence": 0.9, "refused": False, "dense_score": 0.8, "hybrid_score": 0.4},
            {"qid": "u", "confidence": 0.2, "refused": True, "dense_score": 0.3, "hybrid_score": 0.6}]
    monkeypatch.setitem(confidence_model.BASELINE_THRESHOLDS, "dense", 0.5)
    monkeypatch.setitem(confidence_model.BASELINE_THRESHOLDS, "hybrid", 0.5)
    by = refusal_by_method(rows, {"u"})
    assert by["dense"]["recall"] == 1.0 and by["dense"]["false_refusal_rate"] == 0.0 and by["dense"]["roc_auc"] == 1.0
    assert by["hybrid"]["recall"] == 0.0 and by["hybrid"]["false_refusal_rate"] == 1.0 and by["hybrid"]["roc_auc"] == 0.0
    assert by["asmr"]["recall"] == 1.0 and by["dense"]["threshold"] == 0.5
    monkeypatch.setitem(confidence_model.BASELINE_THRESHOLDS, "dense", 0.0)
    assert refusal_by_method(rows, {"u"})["dense"]["recall"] == 0.0  # 0 refuses nothing


def test_refusal_is_reported_per_category_answerable_and_unanswerable_apart():
    queries = [Query("a1", "q", ("d",), category="single"), Query("a2", "q", ("d",), category="single"),
               Query("t1", "q", ("d",), category="temporal"),
               Query("u1", "q", (), answerable=False, category="adversarial"),
               Query("u2", "q", (), answerable=False, category="adversarial")]
    conf = {"a1": 0.9, "a2": 0.3, "t1": 0.8, "u1": 0.2, "u2": 0.85}
    rows = [{"qid": q, "confidence": c, "refused": c < 0.5, "dense_score": c, "hybrid_score": 1 - c}
            for q, c in conf.items()]
    by = refusal_by_category(rows, queries, {"dense": 0.5, "hybrid": 0.5})
    assert set(by) == {"single", "temporal", "adversarial"}
    assert by["single"]["answerable"] == 2 and by["single"]["unanswerable"] == 0
    assert by["single"]["asmr"] == {"refused_answerable": 0.5, "refused_unanswerable": None, "roc_auc": None}
    adv = by["adversarial"]
    assert adv["unanswerable"] == 2 and adv["asmr"]["refused_unanswerable"] == 0.5
    # ranked against every answerable question: u1 below all three, u2 above two of them
    assert adv["asmr"]["roc_auc"] == pytest.approx((3 + 1) / 6) and adv["dense"]["roc_auc"] == adv["asmr"]["roc_auc"]
    assert adv["hybrid"]["roc_auc"] == pytest.approx(1 - 4 / 6) and adv["hybrid"]["refused_unanswerable"] == 0.5


def test_eval_retrieval_reports_refusal_per_category(tmp_path, capsys):
    code, report = retrieval(tmp_path, capsys, "--methods", "bm25")
    assert code == 0 and set(report["refusal_by_category"]) == {"person", "place", "nowhere"}
    nowhere = report["refusal_by_category"]["nowhere"]
    assert nowhere["unanswerable"] == 1 and set(nowhere) == {"answerable", "unanswerable", "dense", "hybrid", "asmr"}
    assert nowhere["asmr"]["roc_auc"] is not None and report["refusal_by_category"]["person"]["asmr"]["roc_auc"] is None


@pytest.fixture
def memory(tmp_path):
    c, _ = write(tmp_path)
    ingest(tmp_path / "mem", list(iter_jsonl(c)), embedder="hash-64", progress=False)
    with Memory(tmp_path / "mem") as m:
        yield m


def test_baseline_score_is_the_cosine_of_the_best_unit_shown(memory):
    emb = get_embedder("hash-64")
    retriever = Retriever(memory, emb)
    question = "What did Ana Lind study?"
    qvec = emb.embed([question])[0]
    best = max(float(v @ qvec) for v in memory.vectors[:memory.num_rows])
    assert baseline_score("dense", memory, retriever, question, qvec, 3) == pytest.approx(max(best, 0.0), abs=1e-5)
    assert 0.0 <= baseline_score("hybrid", memory, retriever, question, qvec, 3) <= best + 1e-5
    rows = refusal_features(memory, emb, [ANA, MOON], baselines=("dense", "hybrid"))
    assert all({"dense_score", "hybrid_score", "confidence"} <= set(r) for r in rows)


def test_by_category_reports_recall_per_category_and_method(tmp_path, capsys):
    code, report = retrieval(tmp_path, capsys, "--methods", "bm25,dense")
    assert code == 0 and set(report["by_category"]) == {"person", "place", "nowhere"}
    assert set(report["by_category"]["person"]) == {"bm25", "dense"}
    assert set(report["by_category"]["person"]["dense"]) == {"recall@2", "recall@5"}
    assert report["by_category"]["place"]["dense"]["recall@5"] == 1.0
    assert report["by_category"]["nowhere"]["dense"]["recall@5"] is None  # no answerable question in it


def test_without_categories_there_is_no_by_category(tmp_path, capsys):
    c, q = write(tmp_path, queries=[{k: v for k, v in r.items() if k != "category"} for r in QUERIES])
    code = main(["eval", "retrieval", "--corpus", str(c), "--queries", str(q), "--memory", str(tmp_path / "m"),
                 "--embedder", "hash-64", "--methods", "bm25", "--json"])
    assert code == 0 and "by_category" not in json.loads(capsys.readouterr().out)


def docs_and_queries(tmp_path):
    c, q = write(tmp_path)
    return list(iter_jsonl(c)), load_queries(q)


def test_removed_mode_leaves_out_the_gold_passages(tmp_path):
    docs, queries = docs_and_queries(tmp_path)
    made = make("removed", queries, docs, 0.5, seed=0)
    chosen = [q for q in queries if q.qid in made.qids]
    assert len(chosen) == 2 and all(q.answerable for q in chosen)
    assert made.removed == {d for q in chosen for d in q.gold}
    assert {d.doc_id for d in made.documents(docs)} == {d.doc_id for d in docs} - made.removed


def test_sentence_mode_cuts_only_the_answering_sentence(tmp_path):
    docs, queries = docs_and_queries(tmp_path)
    assert cut_sentences("A is red. B owns a boat. C.", ("a boat",)) == "A is red. C."
    assert cut_sentences("A is red.", ("boat",)) is None
    made = make("sentence", queries, docs, 0.9, seed=0)
    # "Tromso" is stated by another passage too (dora), so carl's question cannot be built this way.
    assert made.qids == {"ana", "oslo", "ben"} and not made.removed
    kept = {d.doc_id: d.text for d in made.documents(docs)}
    assert kept["ana"] == "Ana Lind is a painter from Oslo. She paints harbours in winter."
    assert kept["oslo"] == "It lies on a fjord." and kept["carl"] == CORPUS[3]["text"]
    ingest(tmp_path / "cut", list(made.documents(docs)), embedder="hash-64", progress=False)
    with Memory(tmp_path / "cut") as m:
        text = " ".join(u.content for u in m.units_of("kb", "ana"))
    assert "chemistry" not in text and "paints harbours" in text


def test_sentence_mode_needs_answers_a_sentence_states(tmp_path):
    docs, queries = docs_and_queries(tmp_path)
    with pytest.raises(ValueError, match="sentence"):
        make("sentence", [q for q in queries if q.qid == "carl"], docs, 0.5)


def test_swap_mode_asks_a_real_entity_and_keeps_the_memory(tmp_path):
    docs, queries = docs_and_queries(tmp_path)
    made = make("swap", queries, docs, 0.9, seed=3)
    assert made.qids and not made.changes_memory
    titles = {"Ana Lind", "Ben Holt", "Oslo", "Carl Berg", "Dora Voss"}  # "(writer)" is no part of a name
    for before, after in zip(queries, made.queries):
        if before.qid not in made.qids:
            assert after == before
            continue
        gold = next(d for d in docs if d.doc_id == before.gold[0])
        other = [t for t in titles if t in after.question]
        assert len(other) == 1 and gold.title.split(" (")[0] not in after.question and not after.answerable
        holder = next(d for d in docs if d.title.startswith(other[0]))
        assert before.answers[0] not in holder.text  # the new entity does not have the asked attribute
    assert make("swap", queries, docs, 0.9, seed=3) == made


def test_other_questions_over_the_same_memory_get_their_own_memory_without_their_answers(tmp_path, capsys):
    """Another --queries over the same --memory removes other passages: the memory made for the first
    questions (which still holds the second ones' passages) must not be reused for them."""
    c, _ = write(tmp_path)
    answerable = [q for q in QUERIES if q.get("gold_pids")]
    memories = []
    for i, asked in enumerate((answerable[:2], answerable[2:])):
        q = tmp_path / f"q{i}.jsonl"
        q.write_text("".join(json.dumps(r) + "\n" for r in asked))
        code = main(["eval", "retrieval", "--corpus", str(c), "--queries", str(q), "--memory", str(tmp_path / "m"),
                     "--embedder", "hash-64", "--methods", "bm25", "--unanswerable", "0.5", "--json"])
        report = json.loads(capsys.readouterr().out)
        assert code == 0
        where = report["params"]["unanswerable"]["memory"]
        memories.append(where)
        with Memory(where) as m:
            held = {doc for _, doc in m.documents()}
        gone = {d.doc_id for d in iter_jsonl(c)} - held
        assert gone and gone <= {p for r in asked for p in r["gold_pids"]}, gone  # only its own passages
    assert memories[0] != memories[1]


def test_eval_answers_removes_passages_in_a_memory_of_its_own(tmp_path, capsys):
    """--unanswerable removed over a --memory that holds the whole corpus: the passages are left out of
    a memory beside it (the one eval retrieval makes), never ingested around in the given one."""
    c, q = write(tmp_path, queries=[r for r in QUERIES if r.get("gold_pids")])
    args = ["--corpus", str(c), "--queries", str(q), "--memory", str(tmp_path / "m"), "--embedder", "hash-64",
            "--unanswerable", "0.5"]
    assert main(["eval", "retrieval", *args, "--methods", "bm25", "--json"]) == 0
    made = Path(json.loads(capsys.readouterr().out)["params"]["unanswerable"]["memory"])
    assert main(["eval", "answers", *args, "--methods", "dense_rag", "--no-progress", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["methods"]["dense_rag"]["unanswerable"] == 2
    assert out["memory"] == str(made)  # the one eval retrieval made, reused
    assert sorted(p.name for p in tmp_path.glob("m-unanswerable-*")) == [made.name]
    with Memory(tmp_path / "m") as m, Memory(made) as cut:
        assert len(m.documents()) == len(CORPUS) and len(cut.documents()) < len(CORPUS)


def test_a_memory_that_holds_another_corpus_is_said_to(tmp_path, capsys):
    code, report = retrieval(tmp_path, capsys, "--methods", "bm25")
    assert code == 0 and report["params"]["other_documents"] == 0
    other = tmp_path / "other"
    other.mkdir()
    c, q = write(other, corpus=[{"pid": "zed", "title": "Zed", "text": "Zed Moor is a potter from Tromso."}],
                 queries=[{"qid": "z", "question": "Where is Zed Moor from?", "answers": ["Tromso"],
                           "gold_pids": ["zed"]}])
    code = main(["eval", "retrieval", "--corpus", str(c), "--queries", str(q), "--memory", str(tmp_path / "m"),
                 "--embedder", "hash-64", "--methods", "bm25", "--json"])
    captured = capsys.readouterr()
    assert code == 0 and json.loads(captured.out)["params"]["other_documents"] == len(CORPUS)
    assert f"holds {len(CORPUS)} documents that are not in {c}" in captured.err


def test_a_memory_made_for_unanswerable_questions_reads_with_the_main_memorys_model(tmp_path, capsys):
    """Without --embedder, the memory made beside a memory of hash-32 vectors is of hash-32 vectors too
    (it was of the default model: its questions were scored by another model's cosines and weights)."""
    c, q = write(tmp_path, queries=[r for r in QUERIES if r.get("gold_pids")])
    base = ["--corpus", str(c), "--queries", str(q), "--memory", str(tmp_path / "m")]
    assert main(["eval", "retrieval", *base, "--embedder", "hash-32", "--methods", "bm25", "--json"]) == 0
    capsys.readouterr()
    assert main(["eval", "retrieval", *base, "--methods", "bm25", "--unanswerable", "0.5", "--json"]) == 0
    made = json.loads(capsys.readouterr().out)["params"]["unanswerable"]["memory"]
    assert main(["eval", "answers", *base, "--methods", "dense_rag", "--no-progress", "--unanswerable", "0.5",
                 "--unanswerable-mode", "sentence", "--json"]) == 0
    cut = json.loads(capsys.readouterr().out)["memory"]
    with Memory(made) as m, Memory(cut) as n:
        assert m.embed_model == n.embed_model == "hash-32"


def test_every_mode_is_reported_apart(tmp_path, capsys):
    code, report = retrieval(tmp_path, capsys, "--methods", "bm25", "--unanswerable", "0.5",
                             "--unanswerable-mode", "all")
    assert code == 0 and set(report["refusal_modes"]) == {"removed", "sentence", "swap", "natural"}
    modes = report["params"]["unanswerable"]["modes"]
    for mode in ("removed", "sentence", "swap"):
        by = report["refusal_modes"][mode]
        assert set(by) == {"dense", "hybrid", "asmr"} and "roc_auc" in by["dense"]
        # each construction against the answerable questions alone: the two natural ones are not in it
        assert by["asmr"]["unanswerable"] == modes[mode]["questions"] == 2
        assert by["asmr"]["answerable"] == 2
    assert report["refusal_modes"]["natural"]["asmr"]["unanswerable"] == 2
    assert modes["swap"]["memory"] == str(tmp_path / "m")  # swap asks other questions of the same memory
    assert modes["sentence"]["memory"] != modes["removed"]["memory"] != str(tmp_path / "m")
    assert report["refusal"]["unanswerable"] == 2 + modes["removed"]["questions"]


@pytest.mark.parametrize("flags, says", [
    (["--unanswerable-mode", "swap"], "needs --unanswerable"),
    (["--unanswerable", "1.5"], "between 0 and 1"),
    (["--unanswerable", "0.5", "--seed", "-1"], "--seed -1"),
])
def test_bad_unanswerable_flags_are_one_line_and_exit_2(tmp_path, capsys, flags, says):
    code, err = retrieval(tmp_path, capsys, *flags)
    assert code == 2 and says in err and len(err.strip().splitlines()) == 1


def test_answer_eval_splits_answerable_and_unanswerable(memory):
    emb = get_embedder("hash-64")
    queries = answer_queries([ANA, MOON])
    report = AnswerEval(memory, ExtractiveGenerator(emb), embedder=emb, kb="kb",
                    baseline_thresholds={"dense": 0.0, "hybrid": 0.0}).run(queries, ["dense_rag"])
    m = report["methods"]["dense_rag"]
    assert m["answerable"] == 1 and m["unanswerable"] == 1
    # The answerable question is answered right; the other one is answered too (threshold 0 refuses nothing).
    assert m["answerable_accuracy"] == 1.0 and m["unanswerable_accuracy"] == 0.0 and m["memory_accuracy"] == 0.5
    assert m["hallucination_answerable"] == 0.0 and m["hallucination_unanswerable"] == 1.0
    assert m["conflict_rate"] == 0.0


def test_answer_eval_baselines_refuse_below_their_threshold(memory):
    emb = get_embedder("hash-64")
    queries = answer_queries([ANA])
    ev = AnswerEval(memory, ExtractiveGenerator(emb), embedder=emb, kb="kb",
                    baseline_thresholds={"dense": 1.5, "hybrid": 0.0})  # no cosine reaches 1.5
    report = ev.run(queries, ["dense_rag", "hybrid_rag"])
    assert report["methods"]["dense_rag"]["refusal_rate_answerable"] == 1.0
    assert report["methods"]["hybrid_rag"]["refusal_rate_answerable"] == 0.0
    refused = next(o for o in report["outcomes"] if o["method"] == "dense_rag")
    assert refused["answer"] == NOT_FOUND


def test_a_method_refused_by_its_threshold_is_compared_at_the_others_refusal(memory):
    emb = get_embedder("hash-64")
    ev = AnswerEval(memory, ExtractiveGenerator(emb), embedder=emb, kb="kb",
                    baseline_thresholds={"dense": 1.5, "hybrid": 0.0})
    report = ev.run(answer_queries([ANA, MOON]), ["dense_rag", "hybrid_rag"])
    # At its fitted threshold dense RAG refuses both questions; hybrid RAG refuses neither. At hybrid's
    # refusal of the unanswerable question (none), dense RAG answers what it would have answered.
    assert report["methods"]["dense_rag"]["answerable_accuracy"] == 0.0
    x = report["at_equal_refusal"]["dense_rag"]["hybrid_rag"]
    assert x["against_unanswerable_refused"] == 0.0 and x["unanswerable_refused"] == 0.0
    assert x["answerable_accuracy"] == 1.0 and x["against_answerable_accuracy"] == 1.0
    refused = next(o for o in report["outcomes"] if o["method"] == "dense_rag" and o["qid"] == ANA.qid)
    assert refused["answer"] == NOT_FOUND and refused["extra"]["unrefused"] == {"refused": False, "correct": True}
    # a model generator's refusals are not answered again unless asked
    assert "at_equal_refusal" not in ev.run(answer_queries([ANA, MOON]), ["dense_rag"], equal_refusal=False)


def test_equal_refusal_takes_the_lowest_threshold_that_refuses_as_many_unanswerable_questions():
    from asmr.eval.answers import AnswerQuery, _Outcome, equal_refusal_table
    queries = {q: AnswerQuery(q, q, "single", (("x",),)) for q in ("a1", "a2", "a3")}
    queries |= {q: AnswerQuery(q, q, "unanswerable", ()) for q in ("u1", "u2")}

    def outcome(method, qid, score, threshold, correct):
        right = queries[qid].answerable and correct
        refused = score < threshold
        extra = {"score": score}
        if refused:
            extra["unrefused"] = {"refused": not queries[qid].answerable and correct, "correct": correct}
        return _Outcome(qid, method, refused, [right and not refused], False, [], [right and not refused],
                        None, 0.0, extra=extra)
    # method A: scores answerable questions high, fitted threshold 0.5 refuses u1 only
    rows = [outcome("A", "a1", 0.9, 0.5, True), outcome("A", "a2", 0.8, 0.5, True),
            outcome("A", "a3", 0.6, 0.5, False), outcome("A", "u1", 0.4, 0.5, False),
            outcome("A", "u2", 0.7, 0.5, False)]
    # method B: fitted threshold 0.75 refuses both unanswerable questions and a2
    rows += [outcome("B", "a1", 0.9, 0.75, True), outcome("B", "a2", 0.5, 0.75, True),
             outcome("B", "a3", 0.8, 0.75, True), outcome("B", "u1", 0.6, 0.75, False),
             outcome("B", "u2", 0.7, 0.75, False)]
    table = equal_refusal_table(rows, queries)
    # A must refuse both unanswerable questions, as B does: its lowest such threshold is above 0.7
    # (at 0.8), which refuses a3 (wrong anyway) and keeps a1 and a2 right
    a = table["A"]["B"]
    assert a["threshold"] == 0.8 and a["unanswerable_refused"] == 1.0
    assert a["answerable_accuracy"] == 2 / 3 and a["against_answerable_accuracy"] == 2 / 3
    # B need refuse only half the unanswerable questions, as A does: at 0.5 it refuses nothing, at 0.6
    # only a2, at 0.7 a2 and u1
    b = table["B"]["A"]
    assert b["threshold"] == 0.7 and b["unanswerable_refused"] == 0.5 and b["answerable_accuracy"] == 2 / 3


def test_answer_eval_counts_answers_that_say_their_sources_disagree(memory, monkeypatch):
    real = Answerer.answer

    def disagreeing(self, *args, **kwargs):
        ans = real(self, *args, **kwargs)
        ans.disagreement = ("unit-a", "unit-b") if "Ana" in ans.question else ("unit-a",)
        return ans
    monkeypatch.setattr(Answerer, "answer", disagreeing)
    emb = get_embedder("hash-64")
    queries = answer_queries([ANA, Query("oslo", "What is Oslo the capital of?", ("oslo",),
                                                               ("Norway",))])
    m = AnswerEval(memory, ExtractiveGenerator(emb), embedder=emb, kb="kb",
                    baseline_thresholds={"dense": 0.0, "hybrid": 0.0}).run(queries, ["dense_rag"])
    assert m["methods"]["dense_rag"]["conflict_rate"] == 0.5  # one id is no disagreement


def test_eval_answers_takes_questions_without_answers_when_they_are_unanswerable(tmp_path, capsys):
    c, q = write(tmp_path)
    code = main(["eval", "answers", "--corpus", str(c), "--queries", str(q), "--memory", str(tmp_path / "m"),
                 "--embedder", "hash-64", "--methods", "dense_rag", "--no-progress", "--json"])
    out = json.loads(capsys.readouterr().out)
    assert code == 0 and out["methods"]["dense_rag"]["unanswerable"] == 2
    assert out["methods"]["dense_rag"]["answerable"] == 4
    # each category of the file on its own: accuracy, refusals and hallucinations
    by = out["methods"]["dense_rag"]["by_category"]
    assert set(by) == {"person", "place", "nowhere"} and by["person"]["questions"] == 2
    assert set(by["nowhere"]) == {"questions", "accuracy", "refused", "hallucination"}
    assert by["nowhere"]["accuracy"] == by["nowhere"]["refused"]  # an unanswerable question is right when refused
    # the plain report ends with the refusing methods side by side at equal refusal
    assert main(["eval", "answers", "--corpus", str(c), "--queries", str(q), "--memory", str(tmp_path / "m"),
                 "--methods", "dense_rag,hybrid_rag", "--no-progress"]) == 0
    lines = capsys.readouterr().out.splitlines()
    at = next(i for i, line in enumerate(lines) if line.startswith("at equal refusal"))
    assert [line.split()[:3] for line in lines[at + 1:at + 3]] == [["dense_rag", "vs", "hybrid_rag"],
                                                                   ["hybrid_rag", "vs", "dense_rag"]]
    assert main(["eval", "answers", "--corpus", str(c), "--queries", str(q), "--memory", str(tmp_path / "m"),
                 "--methods", "dense_rag,hybrid_rag", "--no-progress", "--no-equal-refusal", "--json"]) == 0
    assert "at_equal_refusal" not in json.loads(capsys.readouterr().out)
    bad = [{"qid": "x7", "question": "What did Ana Lind study?", "answers": [], "gold_pids": ["ana"]}]
    c, q = write(tmp_path, queries=bad)
    code = main(["eval", "answers", "--corpus", str(c), "--queries", str(q), "--memory", str(tmp_path / "m"),
                 "--embedder", "hash-64", "--methods", "dense_rag", "--no-progress"])
    err = capsys.readouterr().err
    assert code == 2 and "x7" in err and str(q) in err and len(err.strip().splitlines()) == 1


def test_eval_answers_builds_the_mode_it_is_asked_for(tmp_path, capsys, monkeypatch):
    data = tmp_path / "data"
    data.mkdir()
    c, q = write(data)
    monkeypatch.setenv("ASMR_CACHE_DIR", str(tmp_path / "cache"))
    before = sorted(data.iterdir())
    code = main(["eval", "answers", "--corpus", str(c), "--queries", str(q), "--embedder", "hash-64",
                 "--methods", "dense_rag", "--no-progress", "--json", "--unanswerable", "0.5",
                 "--unanswerable-mode", "sentence"])
    out = json.loads(capsys.readouterr().out)
    assert code == 0 and out["methods"]["dense_rag"]["unanswerable"] == 2 + 2
    # the memory is in the cache, never beside the corpus (a data folder may be read-only or shared)
    assert sorted(data.iterdir()) == before
    made, = (tmp_path / "cache" / "eval-corpus").iterdir()
    assert made.name.startswith("corpus-") and "-unanswerable-sentence-0.5-0-" in made.name and made.is_dir()
    assert out["memory"] == str(made)


def test_sentence_mode_never_empties_a_passage(tmp_path):
    c, q = write(tmp_path, corpus=[{"pid": "zed", "title": "Zed", "text": "Zed is tall."}],
                 queries=[{"qid": "z", "question": "How is Zed?", "answers": ["tall"], "gold_pids": ["zed"]}])
    with pytest.raises(ValueError, match="sentence"):  # cutting would remove the passage, not keep it
        make("sentence", load_queries(q), list(iter_jsonl(c)), 0.5)


def test_swap_mode_finds_names_in_unspaced_chinese(tmp_path):
    c, q = write(tmp_path, corpus=[{"pid": "li", "title": "李明（作家）", "text": "李明在北京工作。"},
                                   {"pid": "wang", "title": "王芳", "text": "王芳是一名医生。"}],
                 queries=[{"qid": "1", "question": "李明在哪里工作？", "answers": ["北京"], "gold_pids": ["li"]}])
    made = make("swap", load_queries(q), list(iter_jsonl(c)), 0.5)
    assert made.qids == {"1"} and made.queries[0].question == "王芳在哪里工作？"


@pytest.mark.parametrize("flags, says", [
    (["--unanswerable-mode", "sentence"], "needs --unanswerable"),
    (["--limit", "-2"], "--limit -2"),
])
def test_bad_eval_answers_flags_are_one_line_and_exit_2(tmp_path, capsys, flags, says):
    c, q = write(tmp_path)
    code = main(["eval", "answers", "--corpus", str(c), "--queries", str(q), "--memory", str(tmp_path / "m"),
                 "--embedder", "hash-64", "--no-progress", *flags])
    err = capsys.readouterr().err
    assert code == 2 and says in err and len(err.strip().splitlines()) == 1


# ---- generated contradictions (asmr.eval.contradictions): a contradicted claim is a false one --------

SAME_AMOUNT_UNITS = [
    ("d1", "Logs are kept for 1 hour in the central log store."),
    ("d2", "Sessions expire after 60 minutes of inactivity."),
    ("d3", "Tokens stay valid for a week after they are issued."),
    ("d4", "Backups run every day at 02:00 UTC."),
    ("d5", "Reports are kept for 14 days before they are archived."),
    ("d6", "值班工程师在1小时内响应所有告警。"),
    ("d7", "系统每日凌晨两点做一次全量备份。"),
]


@pytest.mark.parametrize("seed", range(8))
def test_a_same_value_rewrite_is_never_labelled_contradicted(seed):
    """"1 hour" as "one hour", "60 minutes" as "one hour", "every day" as "daily": the same amount, so
    no claim of a changed duration, frequency, number or unit states what its sentence states."""
    from asmr.eval.contradictions import generate
    from asmr.text.facts import key_facts, missing_facts

    sentence = dict(SAME_AMOUNT_UNITS)
    changed = [c for c in generate(SAME_AMOUNT_UNITS, seed=seed, per_kind=None)
               if c.kind in ("duration", "frequency", "number", "unit")]
    assert {c.kind for c in changed} >= {"duration", "frequency", "unit"}
    for c in changed:
        assert c.label == "contradicted"
        amounts = [f for f in key_facts(c.text) if f.kind == "number"]
        # the claim states an amount its sentence does not (the sentence is the unit's only one)
        differ = missing_facts(c.text, sentence[c.unit]) + missing_facts(sentence[c.unit], c.text)
        assert amounts and differ, c


@pytest.mark.parametrize("sentence, changed", [
    ("The disk holds 10 MB of logs.", "The disk holds 10 GB of logs."),
    ("The cache holds 5GB at most.", "The cache holds 5MB at most."),
    ("The trail is 5 km long and steep.", "The trail is 5 miles long and steep."),
    ("The trail is 1 km long and steep.", "The trail is 1 mile long and steep."),
    ("The box weighs 3 kg when it is full.", "The box weighs 3 pounds when it is full."),
    ("Sessions expire after 30 minutes of inactivity.", "Sessions expire after 30 hours of inactivity."),
    ("Growth was above 10% in the last year.", None),  # a percentage has no unit to put for it
    ("Growth was 10 percent in the last year.", None),
])
def test_a_unit_change_is_a_well_formed_other_unit(sentence, changed):
    """A changed unit of measure is another unit of the same quantity, spaced and inflected as written
    ("1 mile", "5 miles"), which the key-fact extractor reads as another amount."""
    import random

    from asmr.eval.contradictions import _en_unit
    from asmr.text.facts import missing_facts

    out = _en_unit(sentence, random.Random(0))
    assert out == changed
    if out is not None:
        assert missing_facts(out, sentence)


def test_the_swap_pool_holds_names_not_capitalised_words():
    """A word the memory also writes in lower case ("On-call", "Planned") names nothing, and a span
    across a sentence end ("Rhonix. Planned") is two: neither is put for a name."""
    from asmr.eval.contradictions import _Pool

    pool = _Pool([("a", "On-call\nThe on-call engineer pages Rhonix. Planned maintenance happens weekly. "
                        "The planned window is set by Bill Gates. Travel is paid. We travel to Paris.")])
    assert pool.entities == ["Bill Gates", "Paris", "Rhonix"]


def test_eval_retrieval_and_eval_answers_share_a_memory_without_holding_the_corpus_twice(tmp_path, capsys):
    c, q = write(tmp_path)
    mem = tmp_path / "m"
    assert main(["eval", "retrieval", "--corpus", str(c), "--queries", str(q), "--memory", str(mem),
                 "--embedder", "hash-64", "--methods", "bm25", "--json"]) == 0
    capsys.readouterr()
    assert main(["eval", "answers", "--corpus", str(c), "--queries", str(q), "--memory", str(mem),
                 "--methods", "asmr", "--generator", "extractive", "--no-progress", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    with Memory(mem) as m:
        assert m.count_units("active") == sum(len(m.units_of("eval", r["pid"])) for r in CORPUS)
    # the citations are scored against the copy they cite
    assert out["methods"]["asmr"]["citation_recall"] > 0


def test_a_fit_the_line_search_gave_up_on_at_its_optimum_is_kept(monkeypatch):
    """L-BFGS-B stops "ABNORMAL" where rounding leaves no step that lowers the loss: at a gradient far
    below the loss's scale that is the optimum (it stopped ``bench/calibrate_support.py --seed 1``); at a
    large gradient the fit still fails."""
    import numpy as np
    import scipy.optimize
    from scipy.optimize import OptimizeResult

    from asmr.eval.fit import sign_bounds, signed_logistic

    a, y = np.array([[1.0, 0.5], [1.0, -0.5], [1.0, 1.5]]), np.array([1.0, 0.0, 1.0])
    bounds = sign_bounds([0, 1])

    def stopped(gradient):
        return lambda *args, **kw: OptimizeResult(x=np.array([0.1, -0.0]), fun=459.0, success=False,
                                                  message="ABNORMAL: ", jac=np.array(gradient))
    monkeypatch.setattr(scipy.optimize, "minimize", stopped([3.9e-6, 2e-6]))
    assert signed_logistic(a, y, np.zeros(2), bounds).tolist() == [0.1, 0.0]
    # x[1] at its bound of 0 with the gradient pushing it below: no step can follow that
    monkeypatch.setattr(scipy.optimize, "minimize", stopped([3.9e-6, 5.0]))
    assert signed_logistic(a, y, np.zeros(2), bounds).tolist() == [0.1, 0.0]
    monkeypatch.setattr(scipy.optimize, "minimize", stopped([0.5, 0.0]))
    with pytest.raises(RuntimeError, match="did not converge"):
        signed_logistic(a, y, np.zeros(2), bounds)


def test_eval_retrieval_takes_no_progress_as_eval_answers_does(tmp_path, capsys):
    """`asmr eval answers --no-progress` ran, and the same flag on `eval retrieval` was an error of usage."""
    c, q = write(tmp_path)
    code = main(["eval", "retrieval", "--corpus", str(c), "--queries", str(q), "--memory",
                 str(tmp_path / "m"), "--embedder", "hash-64", "--methods", "bm25", "--no-progress"])
    captured = capsys.readouterr()
    assert code == 0 and "R@5" in captured.out and captured.err == ""
