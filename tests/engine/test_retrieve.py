"""Recall: seeds, spread over the unit graph, scores, recall paths, cache; the eval harness and CLI."""
import json
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from asmr.cli import main
from asmr.embed import get_embedder
from asmr.eval.retrieval import evaluate, load_queries
from asmr.retrieve import RetrieveConfig, Retriever
from asmr.store import Memory, Writer, ingest
from asmr.units.model import Document

CORPUS = [
    ("alice", "Alice Smith", "Alice Smith is a novelist. Alice Smith wrote the novel Blue River in 1998."),
    ("river", "Blue River", "Blue River is set in the city of Lyon during a long winter."),
    ("lyon", "Lyon", "Lyon is a city in France known for its food and silk."),
    ("bob", "Bob Jones", "Bob Jones is a painter who lives in Oslo."),
    ("oslo", "Oslo", "Oslo is the capital of Norway."),
]


def docs():
    return [Document(d, t, "text", title=title, source=d) for d, title, t in CORPUS]


@pytest.fixture()
def memory(tmp_path):
    ingest(tmp_path / "mem", docs(), embedder="hash-64")
    return tmp_path / "mem"


def test_two_hop_unit_comes_back_with_its_path(memory):
    with Memory(memory) as m:
        r = Retriever(m, get_embedder("hash-64"), RetrieveConfig(seeds=1, k=5))
        result = r.search("Who wrote the novel by Alice Smith?")
        by_doc = {h.unit_id.split("/")[3]: h for h in result.hits}
        assert result.hits[0].seed and by_doc["alice"].hop == 0
        river = by_doc["river"]  # not a seed: reached through the entity "blue river"
        assert not river.seed and river.hop == 2
        assert [p.node for p in river.path] == [by_doc["alice"].unit_id, "entity 'blue river'", river.unit_id]
        assert river.path[1].edge_kind == "entity" and 0.65 <= river.path[1].edge_weight <= 1
        assert 0 < river.strength < 1 and river.score > 0
        assert "bob" not in by_doc and "oslo" not in by_doc  # nothing links there
        assert [h.score for h in result.hits] == sorted((h.score for h in result.hits), reverse=True)


def test_edge_threshold_and_depth_bound_the_spread(memory):
    with Memory(memory) as m:
        e = get_embedder("hash-64")
        shallow = Retriever(m, e, RetrieveConfig(seeds=1, depth=1, bridge_from=0)).search(
            "Who wrote the novel by Alice Smith?")
        assert all(h.hop <= 1 for h in shallow.hits)
        strict = Retriever(m, e, RetrieveConfig(seeds=1, edge_threshold=1.01, bridge_from=0)).search(
            "Who wrote the novel by Alice Smith?")
        assert all(h.seed for h in strict.hits)


def test_cache_hits_and_reopen_after_ingest(memory):
    m = Memory(memory)
    r = Retriever(m, get_embedder("hash-64"))
    first = r.search("Where is Blue River set?")
    again = r.search("Where is Blue River set?")
    assert not first.cached and again.cached and again.hits == first.hits
    ingest(memory, [Document("river", "Blue River is set in the city of Grenoble in spring.", "text",
                             title="Blue River", source="river")], embedder="hash-64")
    assert r.search("Where is Blue River set?").cached  # the snapshot has not moved
    m.reopen()
    r = Retriever(m, get_embedder("hash-64"))
    fresh = r.search("Where is Blue River set?")
    assert not fresh.cached and any("Grenoble" in u.content for u in m.units_at_rows([h.row for h in fresh.hits]))
    assert all(m.unit(h.unit_id).status == "active" for h in fresh.hits)
    m.close()


def test_embedder_must_be_the_memorys(memory):
    with Memory(memory) as m, pytest.raises(ValueError, match="not the memory's model"):
        Retriever(m, get_embedder("hash-32"))


def write_eval_files(tmp_path):
    corpus = tmp_path / "c.jsonl"
    corpus.write_text("".join(json.dumps({"pid": d, "title": title, "text": t}) + "\n" for d, title, t in CORPUS))
    queries = tmp_path / "q.jsonl"
    queries.write_text(json.dumps({"qid": "1", "question": "Where is the novel by Alice Smith set?",
                                   "gold_pids": ["alice", "river"]}) + "\n" +
                       json.dumps({"qid": "2", "question": "What is Oslo the capital of?", "gold_pids": ["oslo"]}))
    return corpus, queries


def test_eval_reports_every_method_with_the_promised_names(tmp_path, capsys):
    corpus, queries = write_eval_files(tmp_path)
    code = main(["eval", "retrieval", "--corpus", str(corpus), "--queries", str(queries), "--memory",
                 str(tmp_path / "m"), "--embedder", "hash-64", "--json"])
    out = json.loads(capsys.readouterr().out)
    assert code == 0
    assert set(out["methods"]) == {"bm25", "dense", "hybrid", "ppr", "asmr"}
    for r in out["methods"].values():
        assert set(r) == {"recall@2", "recall@5", "p50_ms", "p95_ms"}
        assert 0 <= r["recall@2"] <= r["recall@5"] <= 1 and r["p95_ms"] >= r["p50_ms"] >= 0
    assert out["params"]["retrieve"]["seeds"] == RetrieveConfig().seeds
    assert out["methods"]["asmr"]["recall@5"] == 1.0  # the two-hop gold is reachable here
    assert "refusal" not in out
    code = main(["eval", "retrieval", "--corpus", str(corpus), "--queries", str(queries), "--memory",
                 str(tmp_path / "m"), "--methods", "bm25", "--unanswerable", "0.5", "--json"])
    out = json.loads(capsys.readouterr().out)
    assert code == 0 and set(out["refusal"]) >= {"precision", "recall", "false_refusal_rate"}
    assert out["refusal"]["unanswerable"] == 1 and out["refusal"]["answerable"] == 1
    code = main(["eval", "retrieval", "--corpus", str(corpus), "--queries", str(queries), "--memory",
                 str(tmp_path / "m"), "--methods", "bm25,magic"])
    assert code == 2 and "magic" in capsys.readouterr().err


def test_search_command(memory, capsys):
    code = main(["search", "Who wrote the novel by Alice Smith?", "--memory", str(memory), "--seeds", "1"])
    out = capsys.readouterr().out
    assert code == 0 and "path:" in out and "entity 'blue river'" in out
    code = main(["search", "Alice", "--memory", str(memory), "--json"])
    data = json.loads(capsys.readouterr().out)
    assert code == 0 and data["hits"] and data["params"]["edge_threshold"] == 0.65
    assert 0 <= data["confidence"] <= 1 and isinstance(data["found"], bool)
    code = main(["search", "Who painted the Mona Lisa in Florence?", "--memory", str(memory)])
    out = capsys.readouterr().out
    assert code == 0 and out.startswith("not found (confidence") and "of the question's terms" in out
    assert main(["search", "x", "--memory", str(memory), "--mix", "1,2"]) == 2


HOTPOT = Path(__file__).resolve().parents[3] / "shared" / "data"


@pytest.mark.skipif(not (HOTPOT / "hotpotqa_train.corpus.jsonl").exists(),
                    reason="../shared/data/hotpotqa_train.* is not here")
def test_hotpotqa_sample_asmr_beats_dense(tmp_path):
    pytest.importorskip("sentence_transformers", reason="sentence-transformers is not installed")
    from asmr.units.read import iter_jsonl

    ingest(tmp_path / "m", iter_jsonl(HOTPOT / "hotpotqa_train.corpus.jsonl"), progress=False)
    with Memory(tmp_path / "m") as m:
        report = evaluate(m, get_embedder(m.embed_model),
                          load_queries(HOTPOT / "hotpotqa_train.queries.jsonl"), methods=("dense", "asmr"))
    dense, asmr = report["methods"]["dense"], report["methods"]["asmr"]
    assert asmr["recall@5"] > dense["recall@5"]
    assert asmr["recall@5"] >= 0.85


def test_confidence_falls_when_the_subject_is_missing(memory):
    with Memory(memory) as m:
        r = Retriever(m, get_embedder("hash-64"))
        known = r.search("Where is the novel Blue River by Alice Smith set?")
        unknown = r.search("Where is the novel Green Meadow by Carol Danvers set?")
        assert known.confidence > unknown.confidence
        assert not unknown.found and "confidence" in unknown.reason and unknown.hits  # candidates still shown


def test_config_is_frozen_and_echoed():
    cfg = replace(RetrieveConfig(), seeds=5)
    assert cfg.to_dict()["seeds"] == 5 and cfg.to_dict()["graph"]["semantic_k"] == 10


def test_the_conflict_cosine_is_the_embedders_unless_given():
    # E5's unrelated passages score about 0.75 where MiniLM's score 0.04: one cosine cannot serve both
    assert RetrieveConfig().conflict_similarity is None
    assert RetrieveConfig().for_embedder("all-MiniLM-L6-v2").conflict_similarity == 0.85
    assert RetrieveConfig().for_embedder("multilingual-e5-small").conflict_similarity == 0.944
    assert RetrieveConfig(conflict_similarity=0.6).for_embedder("multilingual-e5-small").conflict_similarity == 0.6


def test_the_mix_reads_a_models_cosine_on_the_default_models_scale(memory, monkeypatch):
    """Similarity and path strength are added with weights chosen on MiniLM's cosines, so another model's
    cosine is read on MiniLM's scale first, as the graph reads it: E5 gives unrelated text about 0.75,
    and added raw, its narrow band of cosines left the ranking to path strength."""
    from asmr.embed import models
    quiet = RetrieveConfig(k=5, recency=0.0, title_boost=0.0, fact_boost=0.0, when_boost=0.0, bridge_from=0,
                           conflict_similarity=2.0, mix=(0.5, 0.5, 0.0))
    question = "Who wrote the novel by Alice Smith?"
    with Memory(memory) as m:
        plain = Retriever(m, get_embedder("hash-64"), quiet).search(question).hits
        # this model's cosines halved
        monkeypatch.setitem(models._COSINE_KNOTS, "hash-64", ((0.0, 1.0), (0.0, 0.5)))
        halved = Retriever(m, get_embedder("hash-64"), quiet).search(question).hits
    assert len(plain) >= 3 and any(h.similarity > 0.05 for h in plain)
    for h in plain:
        assert h.score == pytest.approx(0.5 * h.similarity + 0.5 * h.strength, rel=1e-5)
    for h in halved:
        assert h.score == pytest.approx(0.5 * (0.5 * h.similarity) + 0.5 * h.strength, rel=1e-5)


def test_newer_statement_wins_and_older_is_a_marked_alternative(tmp_path):
    mem = tmp_path / "m"
    ingest(mem, [Document("policy", "The API rate limit is 600 requests per minute per key.", "text",
                          title="Policy", source="policy", effective_date="2025-01-01"),
                 Document("notice", "The API rate limit is 900 requests per minute per key.", "text",
                          title="Notice", source="notice", effective_date="2026-06-01")], embedder="hash-64")
    ingest(mem, [Document("policy", "The API rate limit is 600 requests per minute per key, per region.",
                          "text", title="Policy", source="policy", effective_date="2025-03-01")],
           embedder="hash-64")
    with Memory(mem) as m:
        r = Retriever(m, get_embedder("hash-64"), RetrieveConfig(conflict_similarity=0.6))
        hits = r.search("What is the API rate limit per key?").hits
        ids = [h.unit_id for h in hits]
        newer = next(h for h in hits if "/notice/" in h.unit_id)
        older = next(h for h in hits if "/policy/" in h.unit_id)
        assert older.alternative_to == newer.unit_id and newer.alternative_to is None
        assert ids.index(older.unit_id) == ids.index(newer.unit_id) + 1
        assert older.previous_version is not None  # the policy unit replaced its own first version
        assert m.unit(older.previous_version).status == "superseded"


def test_units_of_one_template_about_different_subjects_do_not_conflict(tmp_path):
    mem = tmp_path / "m"
    docs = [Document(f"runbooks.{name.lower()}", f"{name} pages the on-call engineer when the error rate stays "
                     f"above {rate}% for 5 minutes.", "text", title=f"{name} runbook", source=name,
                     effective_date=date)
            for name, rate, date in (("Brelova", 15, "2025-01-01"), ("Brisade", 2, "2026-01-01"))]
    ingest(mem, docs, embedder="hash-64")
    with Memory(mem) as m:
        r = Retriever(m, get_embedder("hash-64"), RetrieveConfig(conflict_similarity=0.6))
        hits = r.search("Above what error rate does Brelova page the on-call engineer?").hits
        assert "/runbooks.brelova/" in hits[0].unit_id  # the newer Brisade rule does not replace it
        assert all(h.alternative_to is None for h in hits)
        assert list(hits) == sorted(hits, key=lambda h: -h.score)


def test_rows_of_one_document_do_not_conflict(tmp_path):
    """A changelog's old row and the row its last revision added look alike and carry different
    dates; both are the document as it stands, so the newer does not replace the one asked for."""
    mem = tmp_path / "m"
    rows = ["| Version | Released | Change |", "|---|---|---|",
            "| v1.2.0 | 2024-03-01 | Added audit log streaming |"]
    ingest(mem, [Document("changelogs.novara", "\n".join(rows), "markdown", title="Novara changelog",
                          source="novara", effective_date="2024-03-01")], embedder="hash-64")
    rows.append("| v1.3.0 | 2025-06-01 | Added scheduled reports |")
    ingest(mem, [Document("changelogs.novara", "\n".join(rows), "markdown", title="Novara changelog",
                          source="novara", effective_date="2025-06-01")], embedder="hash-64")
    with Memory(mem) as m:
        units = [u for u in m.units_at_rows(range(m.num_rows)) if u.status == "active" and "| v1." in u.content]
        assert len({u.effective_at for u in units}) == 2  # the premise: the rows carry different dates
        r = Retriever(m, get_embedder("hash-64"), RetrieveConfig(conflict_similarity=0.3))
        hits = r.search("When was Novara v1.2.0 released?").hits
        assert "v1.2.0" in m.unit(hits[0].unit_id).content
        assert all(h.alternative_to is None for h in hits)


def test_a_unit_stating_the_questions_key_facts_gains_up_to_fact_boost(tmp_path):
    mem = tmp_path / "m"
    docs = [Document(f"runbooks.{name.lower()}", f"{name} pages the on-call engineer when the error rate stays "
                     f"above {rate}% for 5 minutes.", "text", title=f"{name} runbook", source=name)
            for name, rate in (("Brelova", 15), ("Brisade", 2), ("Brisune", 3))]
    ingest(mem, docs, embedder="hash-64")
    question = "Does Brisade page the on-call engineer above 2% for 5 minutes?"  # Brisade, 2 %, 5 minutes
    with Memory(mem) as m:
        plain = {h.unit_id: h.score for h in
                 Retriever(m, get_embedder("hash-64"), RetrieveConfig(fact_boost=0.0)).search(question).hits}
        boosted = {h.unit_id: h.score for h in
                   Retriever(m, get_embedder("hash-64"), RetrieveConfig(fact_boost=0.4)).search(question).hits}
    gain = {uid.split("/")[-2]: boosted[uid] / plain[uid] for uid in plain}
    assert gain["runbooks.brisade"] == pytest.approx(1.4)  # all three facts
    assert gain["runbooks.brelova"] == pytest.approx(1 + 0.4 / 3)  # only "5 minutes"
    assert gain["runbooks.brisune"] == pytest.approx(1 + 0.4 / 3)
    assert max(boosted, key=boosted.get).split("/")[-2] == "runbooks.brisade"
    for bad in ({"fact_boost": -0.1}, {"fact_pool": 0}):
        with pytest.raises(ValueError, match=next(iter(bad))):
            RetrieveConfig(**bad)



def test_the_unit_that_states_a_code_of_the_question_starts_the_spread(tmp_path):
    mem = tmp_path / "m"
    # Many pages about teams and leads, and one list of error codes that names none of those words.
    docs = [Document(f"teams.t{i}", f"Team T{i} owns system S{i}; the lead of the team is person P{i}.", "text",
                     title=f"Team T{i}", source=f"t{i}") for i in range(12)]
    docs.append(Document("runbooks.quorix", "ERR-5600 means an expired token. ERR-8338 means a lost database "
                         "connection. ERR-2464 means an upstream timeout.", "text", title="Codes", source="q"))
    ingest(mem, docs, embedder="hash-64")
    question = "Name the lead of the team behind the system that throws ERR-8338."
    with Memory(mem) as m:
        def seeds(**config):
            hits = Retriever(m, get_embedder("hash-64"), RetrieveConfig(seeds=2, **config)).search(question).hits
            return {h.unit_id.split("/")[-2] for h in hits if h.seed}
        assert "runbooks.quorix" not in seeds(fact_seeds=0)  # fused with the dense ranking, it is no seed
        assert "runbooks.quorix" in seeds()
        # a name is no anchor: every page of a person names them
        hits = Retriever(m, get_embedder("hash-64"), RetrieveConfig(seeds=2)).search("Who leads team T3?").hits
        assert len([h for h in hits if h.seed]) == 2
    with pytest.raises(ValueError, match="fact_seeds"):
        RetrieveConfig(fact_seeds=-1)


def test_a_long_unit_that_holds_the_code_of_the_question_seeds_though_bm25_ranks_it_low(tmp_path):
    """Short pages that share several of the question's common words outrank, to BM25, the long row that
    holds its code: the unit is found by the code's words, and seeds; a code that more units hold than
    fact_seeds is looked for among BM25's best only."""
    mem = tmp_path / "m"
    docs = [Document(f"teams.t{i}", f"The T{i} team works from office O{i} and owns system S{i}.", "text",
                     title=f"Team T{i}", source=f"t{i}") for i in range(12)]
    filler = " ".join(f"step{j} done" for j in range(40))
    docs.append(Document("runbooks.novium", f"ERR-1689 is raised by Novium on an upstream timeout: {filler}.",
                         "text", title="Novium runbook", source="n"))
    docs += [Document(f"runbooks.r{i}", f"ERR-2000 is raised by R{i} on a full disk: {filler}.", "text",
                      title=f"R{i} runbook", source=f"r{i}") for i in range(4)]
    ingest(mem, docs, embedder="hash-64")
    question = "From which office does the team work that owns the system raising error code ERR-1689?"
    with Memory(mem) as m:
        rows, _ = m.search_lexical(question, 3)
        assert "runbooks.novium" not in {u.doc_id for u in m.units_at_rows(rows)}  # BM25's best three lack it
        assert m.rows_with_words(["err", "1689"]).size == 1 and m.rows_with_words(["err", "zzz"]).size == 0

        def seeds(q: str, **config) -> set[str]:
            hits = Retriever(m, get_embedder("hash-64"), RetrieveConfig(seeds=2, **config)).search(q).hits
            return {h.unit_id.split("/")[-2] for h in hits if h.seed}
        assert "runbooks.novium" in seeds(question)
        assert "runbooks.novium" not in seeds(question, fact_seeds=0)
        # BM25's best stay candidates beside the units found by the code's words: a unit may state a
        # version in other words than the question's ("3.5.0" for "v3.5.0")
        from asmr.text.facts import key_facts
        lex, _ = m.search_lexical(question, 50)
        candidates = Retriever(m, get_embedder("hash-64"), RetrieveConfig())._anchored(key_facts(question), lex)
        assert set(lex[:3].tolist()) | set(m.rows_with_words(["err", "1689"]).tolist()) == set(candidates.tolist())
        # a code four units hold, more than fact_seeds: not all of them seed, as they do where four may
        shared = "From which office does the team work that owns the system raising error code ERR-2000?"
        runbooks = {f"runbooks.r{i}" for i in range(4)}
        assert not runbooks <= seeds(shared) and runbooks <= seeds(shared, fact_seeds=4)


# Two hops through a common name: the system's page names its team, whose page names the lead.
# "Ochre Kestrel" is named by so many units that its entity edges are too weak to spread through.
SYSTEMS = ["Ivrix batches inventory counts", "Rhonova reconciles payroll exports", "Novant audits tax filings",
           "Lumant archives supplier invoices", "Marrix validates shipping labels", "Dornant prices partner payouts",
           "Galdent indexes support tickets", "Yarova routes fleet telemetry", "Pellade encrypts badge logs",
           "Zelent forecasts loyalty points", "Brelix schedules customer refunds", "Orvara deduplicates contracts",
           "Quorent tracks meeting rooms", "Sarnune books travel"]


def team_docs():
    out = [Document(f"systems.{s.split()[0].lower()}", f"{s}. It is owned by the Ochre Kestrel team.", "text",
                    title=f"{s.split()[0]} service specification", source=s.split()[0]) for s in SYSTEMS]
    out.append(Document("teams.ochre-kestrel", "# Ochre Kestrel team\n\nThe Ochre Kestrel team is led by Oriane "
                        "Brackenridge.\n\nFenna Fairweather is the Ochre Kestrel team's product designer.\n",
                        "markdown", title="Ochre Kestrel team", source="ochre-kestrel"))
    out.append(Document("teams.slate-ibex", "# Slate Ibex team\n\nThe Slate Ibex team is led by Maren Holloway.\n",
                        "markdown", title="Slate Ibex team", source="slate-ibex"))
    return out


def _titled(pages):
    """Documents of one unit each from (doc_id, title, text)."""
    return [Document(doc, text, "text", title=title, source=doc) for doc, title, text in pages]


def test_both_documents_a_question_names_come_up_though_the_spread_favours_one(tmp_path):
    ingest(tmp_path / "m", _titled([
        ("alpha", "Alpha Widget", "Alpha Widget is a kitchen tool made in Ohio by a family firm."),
        ("alpha.review", "Widget review",
         "A review of the Alpha Widget: the kitchen tool made in Ohio is the same as ever."),
        ("alpha.history", "Widget history",
         "The Alpha Widget firm has made the same kitchen tool in Ohio since 1950."),
        ("alpha.sales", "Widget sales", "Sales of the Alpha Widget rose in the same state where it is made."),
        ("beta", "Beta Gadget", "Beta Gadget is a garden tool from Oregon.")]), embedder="hash-64")
    question = "Are Alpha Widget and Beta Gadget made in the same state?"
    with Memory(tmp_path / "m") as m:
        e = get_embedder("hash-64")

        def top(**cfg):
            hits = Retriever(m, e, RetrieveConfig(k=3, bridge_from=0, **cfg)).search(question).hits
            return [h.unit_id.split("/")[-2] for h in hits]

        assert Retriever(m, e).named_documents(question) == [("kb", "alpha"), ("kb", "beta")]
        assert "alpha" not in top(title_boost=0.0)  # pages that mention it and share more words came first
        assert {"alpha", "beta"} <= set(top())


def test_the_units_of_a_document_the_question_names_gain_title_boost_and_the_longest_name_counts(tmp_path):
    ingest(tmp_path / "m", _titled([
        ("ferry", "Marrow Lake Ferry", "The Marrow Lake Ferry is a paddle steamer from Dunmere."),
        ("lake", "Marrow Lake", "The Marrow Lake is a reservoir near Dunmere and Ashby."),
        ("heron", "Quill Heron", "The Quill Heron is a paddle steamer from Ashby, built for mail.")]),
        embedder="hash-64")
    question = "Were the Quill Heron and the Marrow Lake Ferry built in the same town?"
    with Memory(tmp_path / "m") as m:
        e = get_embedder("hash-64")
        off = Retriever(m, e, RetrieveConfig(bridge_from=0, title_boost=0.0))
        on = Retriever(m, e, RetrieveConfig(bridge_from=0, title_boost=0.5))
        # "Marrow Lake" is named only inside the longer name: the lake's page is not asked about
        assert on.named_documents(question) == [("kb", "ferry"), ("kb", "heron")]
        assert on.named_documents("Which steamers come from Dunmere?") == []
        plain = {h.unit_id.split("/")[-2]: h.score for h in off.search(question).hits}
        boosted = {h.unit_id.split("/")[-2]: h.score for h in on.search(question).hits}
    assert boosted["heron"] == pytest.approx(1.5 * plain["heron"])
    assert boosted["ferry"] == pytest.approx(1.5 * plain["ferry"])
    assert boosted["lake"] == pytest.approx(plain["lake"])


def test_a_unit_that_names_another_code_of_the_kind_asked_scores_less(tmp_path):
    ingest(tmp_path / "m", _titled([
        ("quill", "Quill runbook", "Quill raises ERR-4471 when its queue is full; restart the worker."),
        ("heron", "Heron runbook", "Heron raises ERR-2210 when its queue is full; restart the worker."),
        ("wren", "Wren runbook", "Wren raises ERR-3150 and ERR-4471 when its queue is full."),
        ("ferry", "Ferry notes", "The ferry worker restarts when its queue is full.")]), embedder="hash-64")
    question = "Which system raises ERR-4471 when its queue is full?"
    with Memory(tmp_path / "m") as m:
        e = get_embedder("hash-64")
        off = {h.unit_id.split("/")[-2]: h.score for h in
               Retriever(m, e, RetrieveConfig(bridge_from=0, other_code_factor=1.0)).search(question).hits}
        on = {h.unit_id.split("/")[-2]: h.score for h in
              Retriever(m, e, RetrieveConfig(bridge_from=0, other_code_factor=0.25)).search(question).hits}
    assert on["heron"] == pytest.approx(0.25 * off["heron"])  # another code of the kind asked, not the one
    # a unit that names the code asked keeps its score, whatever other codes it names
    assert on["quill"] == pytest.approx(off["quill"]) and on["wren"] == pytest.approx(off["wren"])
    assert on["ferry"] == pytest.approx(off["ferry"])  # no code at all


def test_the_qualifier_in_brackets_that_closes_a_title_names_nothing(tmp_path):
    from asmr.retrieve.bridge import document_subjects

    ingest(tmp_path / "m", _titled([
        ("orrin", "Orrin Vale (Northern rowing coach)", "Orrin Vale coached the harbour crew."),
        ("tamsin", "Tamsin Reed", "Tamsin Reed is a Northern ferry pilot.")]), embedder="hash-64")
    with Memory(tmp_path / "m") as m:
        subjects, _ = document_subjects(m)
        hits = Retriever(m, get_embedder("hash-64")).search("Is Tamsin Reed a ferry pilot?").hits
    assert subjects["orrin vale"] == [("kb", "orrin")]
    assert "northern" not in subjects  # every page that says "Northern" bridged to the coach's
    assert not any(step.node == "entity 'northern'" for h in hits for step in h.path)


def test_a_title_capitalised_only_as_a_sentence_names_nothing_by_its_first_word(tmp_path):
    from asmr.retrieve.bridge import document_subjects

    ingest(tmp_path / "m", _titled([
        ("floods", "Harbour closures of 1968", "The harbour at Solby closed for six weeks."),
        ("sorrel", "Sorrel, 2031-04-02", "Sorrel said the ferry leaves at noon."),
        ("runbook", "Solby runbook", "Restart the Solby gateway first."),
        ("crew", "Tamsin Reed", "Harbour staff said Tamsin Reed pilots the ferry.")]), embedder="hash-64")
    with Memory(tmp_path / "m") as m:
        subjects, _ = document_subjects(m)
        hits = Retriever(m, get_embedder("hash-64")).search("Who pilots the ferry?").hits
    # "Harbour" opens the title as a sentence's first word: every unit that opens with it bridged there
    assert "harbour" not in subjects and subjects["harbour closures of 1968"] == [("kb", "floods")]
    assert subjects["sorrel"] == [("kb", "sorrel")] and subjects["solby"] == [("kb", "runbook")]
    assert not any(step.node == "entity 'harbour'" for h in hits for step in h.path)


def test_a_name_many_other_pages_hold_is_no_subject_of_a_title_that_holds_it(tmp_path):
    from asmr.retrieve.bridge import document_subjects

    pages = [("r1994", "Solby harbour regatta, 1994", "The 1994 regatta in Solby was held in May."),
             ("r1996", "Solby harbour regatta, 1996", "The 1996 regatta in Solby was held in June.")]
    pages += [(f"p{i}", f"Person {i}", f"Ana Vale {i} moved to Solby in 200{i}.") for i in range(5)]
    pages += [(f"s{i}", f"Sorrel, 2031-04-0{i + 1}", f"Sorrel: the ferry leaves at {i + 1} pm.")
              for i in range(5)]
    ingest(tmp_path / "m", _titled(pages), embedder="hash-64")
    with Memory(tmp_path / "m") as m:
        few = document_subjects(m, common_units=3)[0]
        many = document_subjects(m, common_units=10)[0]
    # five other pages speak of Solby: it is a place, not what the regatta pages are about
    assert "solby" not in few and sorted(many["solby"]) == [("kb", "r1994"), ("kb", "r1996")]
    assert few["solby harbour regatta 1994"] == [("kb", "r1994")]
    # Sorrel's own turns say her name: they do not count against it
    assert sorted(few["sorrel"]) == [("kb", f"s{i}") for i in range(5)]


def test_bridge_finds_the_second_hop_in_the_document_the_first_names(tmp_path):
    ingest(tmp_path / "m", team_docs(), embedder="hash-64")
    question = "Which team owns the system that batches inventory counts, and who leads that team?"
    with Memory(tmp_path / "m") as m:
        e = get_embedder("hash-64")
        lead = next(u for u in m.units_of("kb", "teams.ochre-kestrel") if "led by" in u.content)
        plain = Retriever(m, e, RetrieveConfig(seeds=1, bridge_from=0)).search(question)
        assert plain.hits[0].unit_id.startswith("memo://kb/systems.ivrix/")
        assert lead.id not in [h.unit_id for h in plain.hits]  # neither a seed nor reached by the spread

        r = Retriever(m, e, RetrieveConfig(seeds=1))
        hits = r.search(question).hits
        first = hits[0]
        assert first.unit_id == plain.hits[0].unit_id  # the first hop keeps its place
        bridged = hits[1]
        assert bridged.unit_id == lead.id  # the team's lead, not its designer, and not the heading
        assert [p.node for p in bridged.path] == [first.unit_id, "entity 'ochre kestrel'", lead.id]
        assert [p.edge_kind for p in bridged.path] == [None, "entity", "entity"]
        assert bridged.score == pytest.approx(first.score * r.config.bridge_decay)
        assert bridged.hop == 2 and not bridged.seed and 0 <= bridged.similarity <= 1
        assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)

        # A name the question already gives is no bridge: the hit is about it, not past it.
        named = r.search("Which system does the Ochre Kestrel team own that batches inventory counts?").hits
        assert not any(len(h.path) > 1 and h.path[1].node == "entity 'ochre kestrel'" and h.hop == 2
                       and h.path[-1].edge_weight == r.config.bridge_decay for h in named)


def test_a_second_round_of_bridging_reaches_the_third_hop(tmp_path):
    """The policy names the system, the system's page names its team, the team's page names the lead: a
    second round bridges from what the first joined, and the path runs through both names (no spreading
    here, which in a memory this small reaches the team by itself)."""
    docs = team_docs() + [Document("policies.expenses", "Expense claims are submitted in Ivrix within 30 days.",
                                   "text", title="Expenses policy", source="expenses")]
    ingest(tmp_path / "m", docs, embedder="hash-64")
    question = "Who is in charge of the owners of the system in which expense claims are submitted?"
    with Memory(tmp_path / "m") as m:
        e = get_embedder("hash-64")
        lead = next(u for u in m.units_of("kb", "teams.ochre-kestrel") if "led by" in u.content)
        system = m.units_of("kb", "systems.ivrix")[-1]
        one = Retriever(m, e, RetrieveConfig(seeds=1, depth=0, bridge_rounds=1)).search(question).hits
        assert one[0].unit_id.startswith("memo://kb/policies.expenses/") and one[1].unit_id == system.id
        assert lead.id not in [h.unit_id for h in one]
        r = Retriever(m, e, RetrieveConfig(seeds=1, depth=0))
        hits = r.search(question).hits
        assert [h.unit_id for h in hits[:3]] == [one[0].unit_id, system.id, lead.id]
        assert [p.node for p in hits[2].path] == [one[0].unit_id, "entity 'ivrix'", system.id,
                                                  "entity 'ochre kestrel'", lead.id]
        assert hits[2].score == pytest.approx(hits[0].score * r.config.bridge_decay ** 2)
        assert hits[2].hop == 4


def test_bridge_follows_a_role_to_the_table_row_it_opens(tmp_path):
    """A unit that names what a table row of another page is about ("the events officer", 活动专员)
    brings that row in: the contacts table's extension is the second hop. A key the question names is
    no bridge, nor a first cell that opens several rows (a rota's weekday)."""
    from asmr.retrieve.bridge import named_rows
    from asmr.text.tables import row_key as _row_key
    contacts = ("# Contacts\n\n| Role | Name | Extension |\n|---|---|---|\n"
                "| Events officer | Wu Ting | 8033 |\n| IT contact | Zhao Lei | 8045 |\n| 活动专员 | 吴婷婷 | 8033 |\n")
    rota = "# Rota\n\n| Day | Desk | Shelves |\n|---|---|---|\n" + "".join(
        f"| Monday | {a} | {b} |\n" for a, b in (("Ana", "Ben"), ("Cy", "Di"), ("Ed", "Flo"), ("Gus", "Hal")))
    booking = ("# Hall bookings\n\nSchools that want the hall fill in the booking form and hand it to the "
               "events officer, who replies within a week. 多功能厅的申请表交活动专员审核。\n")
    docs = [Document("events", booking, "markdown", title="Hall bookings", source="events"),
            Document("contacts", contacts, "markdown", title="Contacts", source="contacts"),
            Document("rota", rota, "markdown", title="Rota", source="rota")]
    ingest(tmp_path / "m", docs, embedder="hash-64")
    with Memory(tmp_path / "m") as m:
        e = get_embedder("hash-64")
        rows = [u for u in m.units_of("kb", "contacts") if u.kind == "table_row"]
        row = next(u for u in rows if "Events officer" in u.content)
        zh_row = next(u for u in rows if "活动专员" in u.content)
        r = Retriever(m, e, RetrieveConfig(seeds=1))
        hits = r.search("A school wants the hall: who gets the booking form, and on which extension?").hits
        assert hits[0].unit_id.startswith("memo://kb/events/")
        via = next(h for h in hits if h.unit_id in (row.id, zh_row.id))
        assert via.hop == 2 and via.path[0].node == hits[0].unit_id
        assert via.score == pytest.approx(hits[0].score * r.config.bridge_decay)
        off = Retriever(m, e, RetrieveConfig(seeds=1, bridge_from=0)).search(
            "A school wants the hall: who gets the booking form, and on which extension?").hits
        assert row.id not in [h.unit_id for h in off] and zh_row.id not in [h.unit_id for h in off]
        events = next(u for u in m.units_of("kb", "events") if "officer" in u.content)
        assert named_rows(events, r._table_row_keys(), " which extension has the hall ") == {
            row.row: "events officer", zh_row.row: "活动专员"}
        assert named_rows(events, r._table_row_keys(), " which extension has the events officer ") == {
            zh_row.row: "活动专员"}  # the question names it: its own words find the row
        keys = r._table_row_keys()[0]
        assert {"events officer", "it contact", "活动专员"} <= set(keys) and "monday" not in keys
    assert _row_key("副馆长（排班、人事）") == "副馆长" and _row_key("8033") is None and _row_key("2026-10-01") is None
    assert _row_key("Staff who arrive after the doors close must sign in") is None  # a sentence, no name


def test_body_rows_are_the_rows_after_a_tables_rule():
    """``text.tables.body_rows``: each pipe table's rows after its header and |---| line, as cells; a
    header without its rule, and the lines around a table, are no rows."""
    from asmr.text.tables import body_rows

    text = ("Intro line.\n| Card | Loans | Period |\n|---|:--:|---|\n| Adult | 10 | 30 days |\n"
            "| Child | 5 | 21 days |\nBetween.\n| Not | a body |\n| Key | Value |\n| --- | --- |\n| A | 1 |\n")
    assert body_rows(text) == [["Adult", "10", "30 days"], ["Child", "5", "21 days"], ["A", "1"]]
    assert body_rows("no table here") == []


def test_row_statements_read_each_cell_under_its_columns_name():
    """``text.tables.row_statements``: a line for each cell after a row's first, behind its column's name
    (left out where the cell says it; Chinese joined without a break); the header and rule dropped, the
    text around kept; a header line and one row alone (a table row unit) read the same way; and
    ``column_names`` the names put before the values."""
    from asmr.text.tables import column_names, row_statements

    text = ("Intro.\n| Room | Seats | Booking |\n|---|:--:|---|\n| Oak room | 12 | booking online |\n"
            "| Pine room | | phone |\nAfter.")
    assert row_statements(text) == ("Intro.\nOak room: Seats 12\nOak room: booking online\n"
                                    "Pine room: Booking phone\nAfter.")
    assert column_names(text) == ["Seats", "Booking"]
    assert row_statements("| 证件类型 | 借期 |\n| 少儿证 | 21天 |") == "少儿证借期21天"
    assert row_statements("| 车型 | 押金 |\n|---|---|\n| 经济型 | 2000元 |") == "经济型押金2000元"
    plain = "No table | here.\nA second line."
    assert row_statements(plain) == plain and column_names(plain) == []


def test_a_cjk_row_key_may_hold_latin_letters_and_digits():
    """"IT联络人" and "3号楼" are names a Chinese table opens rows with; a Latin word inside another ("edit"
    holds "it") names no key, and a key holds two CJK characters at least."""
    from asmr.text.tables import keys_named, longest_keys, row_key

    assert row_key("IT联络人") == "it联络人" and row_key("3号楼") == "3号楼"
    assert row_key("IT") is None and row_key("AB联") is None and row_key("Wi-Fi 联络人") is None
    keys = {"it联络人", "活动专员", "3号楼"}
    words, chars = longest_keys(keys)
    assert keys_named("重启后仍不能使用的，联系分馆IT联络人。", keys, words, chars) == {"it联络人"}
    assert keys_named("请在3号楼的活动专员处登记", keys, words, chars) == {"3号楼", "活动专员"}
    assert keys_named("联系editit联络人", keys, words, chars) == set()
    assert keys_named("it联络人x", keys, words, chars) == {"it联络人"}


def test_a_title_that_opens_with_its_kind_is_named_without_it(tmp_path):
    from asmr.retrieve.bridge import name_cores
    # "Team X" pages, called "the X team" by the pages that name them: the bridge still finds them
    retitled = [replace(d, title=f"Team {d.title.removesuffix(' team')}") if d.doc_id.startswith("teams.") else d
                for d in team_docs()]
    ingest(tmp_path / "m", retitled, embedder="hash-64")
    with Memory(tmp_path / "m") as m:
        lead = next(u for u in m.units_of("kb", "teams.ochre-kestrel") if "led by" in u.content)
        hits = Retriever(m, get_embedder("hash-64"), RetrieveConfig(seeds=1)).search(
            "Which team owns the system that batches inventory counts, and who leads that team?").hits
        assert hits[1].unit_id == lead.id and hits[1].path[1].node == "entity 'ochre kestrel'"
    # the end more titles share is the kind, if two do; what remains must still be a name
    assert name_cores("Team Amber Heron", {(0, "team"): 9, (-1, "heron"): 2}) == {"amber heron"}
    assert name_cores("Team Amber Heron", {(0, "team"): 1}) == set()
    assert name_cores("Team Amber Heron", {(0, "team"): 2, (-1, "heron"): 2}) == set()
    assert name_cores("Amber Heron Team", {(-1, "team"): 2}) == {"amber heron"}
    assert name_cores("Bank of America Plaza", {(-1, "plaza"): 3}) == set()
    assert name_cores("Lake Tahoe", {(0, "lake"): 3}) == set()


def test_chain_masks_join_what_linked_units_hold_and_nothing_else():
    from asmr.retrieve.signals import chain_masks
    masks = [np.array([1, 1, 0, 0, 0, 0], bool), np.array([0, 0, 1, 1, 0, 0], bool),
             np.array([0, 0, 0, 0, 1, 1], bool), np.array([0, 0, 0, 0, 0, 1], bool)]
    joined = {tuple(m.astype(int)) for m in chain_masks(masks, {0: [1], 1: [2]}, 3)}
    assert joined == {(1, 1, 1, 1, 0, 0), (0, 0, 1, 1, 1, 1), (1, 1, 1, 1, 1, 1)}  # 3 is linked to nothing
    assert {tuple(m.astype(int)) for m in chain_masks(masks, {0: [1], 1: [2]}, 2)} == {(1, 1, 1, 1, 0, 0),
                                                                                     (0, 0, 1, 1, 1, 1)}
    assert chain_masks(masks, {0: [1], 1: [0]}, 4) != []  # a cycle ends
    assert chain_masks(masks, {}, 4) == []
    assert chain_masks(masks, {0: [3], 2: [3]}, 4) == []  # a unit holding one term is no hop
    assert len(chain_masks(masks, {0: [3]}, 4, least=1)) == 1


def test_a_two_hop_question_aligns_along_the_chain_its_units_make(tmp_path):
    ingest(tmp_path / "m", team_docs(), embedder="hash-64")
    question = "Which team owns the system that batches inventory counts, and who leads that team?"
    with Memory(tmp_path / "m") as m:
        e = get_embedder("hash-64")
        system = m.units_of("kb", "systems.ivrix")[0]
        lead = next(u for u in m.units_of("kb", "teams.ochre-kestrel") if "led by" in u.content)
        other = next(u for u in m.units_of("kb", "teams.slate-ibex") if "led by" in u.content)
        r = Retriever(m, e, RetrieveConfig(seeds=1))
        assert r.chain_links(question, [system, lead, other]) == {0: [1]}  # the system names its team only
        assert r.chain_links("Who leads the Ochre Kestrel team?", [system, lead]) == {}  # a name asked: no hop
        assert r.chain_links(question, [lead, system]) == {1: [0]}  # one way: the lead names nothing the system is about
        qvec = e.embed([question])[0]
        chained = r.recall(question, qvec, 5)[1]
        alone = Retriever(m, e, RetrieveConfig(seeds=1, chain_units=1)).recall(question, qvec, 5)[1]
        assert alone["term_alignment"] < chained["term_alignment"]
        assert chained["kind_alignment"] >= alone["kind_alignment"]


def test_bridge_hits_per_hit_and_off_switch(tmp_path):
    ingest(tmp_path / "m", team_docs(), embedder="hash-64")
    question = "Which team owns the system that batches inventory counts, and who leads that team?"
    with Memory(tmp_path / "m") as m:
        e = get_embedder("hash-64")
        two = Retriever(m, e, RetrieveConfig(seeds=1, bridge_hits=2)).search(question).hits
        via = [h for h in two if h.hop == 2 and h.path[1].node == "entity 'ochre kestrel'"]
        assert len(via) == 2 and via[1].score == pytest.approx(two[0].score * RetrieveConfig().bridge_decay ** 2)
        assert all("/teams.ochre-kestrel/" in h.unit_id for h in via)
        off = Retriever(m, e, RetrieveConfig(seeds=1, bridge_hits=0)).search(question).hits
        assert not any("/teams." in h.unit_id for h in off)


FIELD_SYSTEMS = [
    ("ivrix", "Ivrix", "Ivrix batches inventory counts. It is owned by the Ochre Kestrel team.\n\n"
                       "| Ivrix setting | Value |\n|---|---|\n| Request timeout | 30 seconds |\n| Log retention | 30 days |"),
    ("brelova", "Brelova", "Brelova routes fleet telemetry. It is owned by the Juniper Wren team.\n\n"
                           "| Brelova setting | Value |\n|---|---|\n| Cache TTL | 45 minutes |\n| Log retention | 21 days |"),
    ("quorent", "Quorent", "Quorent escalates incidents in the #quorent-oncall channel.\n\n"
                           "| Quorent setting | Value |\n|---|---|\n| Cache TTL | 5 minutes |"),
]


@pytest.fixture()
def systems(tmp_path):
    ingest(tmp_path / "sys", [Document(d, t, "text", title=title, source=d) for d, title, t in FIELD_SYSTEMS],
           embedder="hash-64")
    return tmp_path / "sys"


def test_a_field_the_subject_lacks_is_refused_and_one_it_has_is_answered(systems):
    """Both questions name a stored system; only one asks for something a unit about it says.
    The weights are fitted for MiniLM, so the threshold here sits where hashing vectors put
    confidences; what must hold is the order, and the reason naming the unheld term."""
    with Memory(systems) as m:
        e = get_embedder("hash-64")
        r = Retriever(m, e)
        present_q, absent_q = "What is the log retention of Ivrix?", "What is the cache TTL of Ivrix?"
        present, absent = r.search(present_q), r.search(absent_q)
        _, f_present = r.recall(present_q, e.embed([present_q])[0], 10)
        _, f_absent = r.recall(absent_q, e.embed([absent_q])[0], 10)
        # a unit about Ivrix states "log retention"; the units that state "cache TTL" are about others (in a
        # memory this small "ttl" is as rare as "ivrix", so subject phrases cannot tell them apart here)
        assert f_present["subject_phrases"] >= f_absent["subject_phrases"]
        assert f_present["term_alignment"] == 1.0 > f_absent["term_alignment"]
        assert present.confidence > absent.confidence
        threshold = (present.confidence + absent.confidence) / 2
        r = Retriever(m, e, RetrieveConfig(confidence_threshold=threshold))
        assert r.search(present_q).found
        refused = r.search(absent_q)
        assert not refused.found and "of the question's terms" in refused.reason and refused.hits
        # another system's cache TTL is no answer: the unit must also be about Ivrix
        assert r.search("What is the cache TTL of Brelova?").found


def test_term_alignment_weighs_rare_terms_and_meets_word_forms():
    from asmr.retrieve.signals import alignment, question_terms, term_key

    assert term_key("founded") == term_key("founding") and term_key("went") == term_key("go")
    idf = {"yarade": 5.0, "recovered": 1.0, "recover": 1.0, "escalated": 1.0}

    def idf_of(tokens):
        return [idf.get(t, 0.5) for t in tokens]
    terms, weights = question_terms("When is a Yarade incident escalated if it does not recover?", idf_of)
    assert "when" not in terms and term_key("yarade") in terms  # question words are no terms
    units = ["Yarade is recovered within 5 minutes or the incident is escalated.", "Brelova caches for 45 minutes."]
    assert alignment(terms, weights, units) == 1.0
    # the rare subject weighs most: a unit without it aligns less than one without a common word
    without_subject = alignment(terms, weights, ["The incident is escalated if it does not recover."])
    without_common = alignment(terms, weights, ["Yarade is recovered within 5 minutes."])
    assert without_subject < without_common
    # the question's terms split between two units: no one unit states them
    assert alignment(terms, weights, ["Yarade runs on Tuesdays.", "An incident is escalated if it does not recover."]) < 1
    assert alignment([], weights[:0], units) == 0.5


def test_the_kind_of_answer_asked_for_is_read_in_both_languages():
    from asmr.retrieve.signals import answer_kinds, term_key

    assert answer_kinds("Which river flows past the old mill?") == {term_key("river")}
    assert answer_kinds("What is the height of the north tower?") == {term_key("height")}
    assert answer_kinds("What did the committee decide in March?") == set()  # "what" asks, no kind named
    assert answer_kinds("what's the height of the north tower") == {term_key("height")}  # "what's": "what is"
    assert answer_kinds("Who founded the guild?") == set()
    assert "省" in answer_kinds("这座城市位于哪个省？")
    assert "首都" in answer_kinds("这个国家的首都是哪里？")
    assert answer_kinds("周明远是谁？") == set()  # without 的, the word before the question is its subject


def test_the_noun_a_relative_clause_describes_is_a_kind_of_thing_passed_through():
    """A question of several hops names each thing it passes through by its kind and a clause ("the
    committee that approves ...", "the museum in which ..."); the units about them name them by name, so
    those nouns weigh as a kind asked for does. "That" after a word that is no noun phrase's is no
    relative clause."""
    from asmr.retrieve.signals import answer_kinds, kind_weights, term_key

    question = "Who chairs the committee that approves the budget of the museum in which the mosaic is kept?"
    assert {term_key("committee"), term_key("museum")} <= answer_kinds(question)
    assert not {term_key("mosaic"), term_key("budget")} & answer_kinds(question)
    assert term_key("person") in answer_kinds("Which desk does the person who signs the permits sit at?")
    assert answer_kinds("Is it true that the ferry stops at night?") == set()
    # the "which" that opens a clause asks nothing: the name after it is what the question is about
    assert answer_kinds("Which river flows past the town in which Tamsin Reed was born?") == {
        term_key("river"), term_key("town")}
    # a question word opening the next sentence opens no clause of the one before
    assert answer_kinds("The crate came in a broken box. Which shelf does it go on?") == {term_key("shelf")}
    terms = [term_key(w) for w in ("chairs", "committee", "approves", "budget", "museum", "mosaic", "kept")]
    weights = kind_weights(question, terms, [1.0] * len(terms))
    assert weights.tolist() == [1.0, 0.5, 1.0, 1.0, 0.5, 1.0, 1.0]


def test_what_is_left_of_a_contraction_is_no_term():
    from asmr.retrieve.signals import question_terms

    def idf_of(tokens):
        return [2.0] * len(tokens)
    assert question_terms("what's the default port?", idf_of)[0] == question_terms("what is the default port?",
                                                                                   idf_of)[0]
    assert question_terms("Why doesn't the relay start?", idf_of)[0] == question_terms(
        "Why does the relay not start?", idf_of)[0]
    assert question_terms("What happens if I'm late for my slot?", idf_of)[0] == question_terms(
        "What happens if I am late for my slot?", idf_of)[0] == ["happen", "late", "slot"]


def test_the_verbs_that_ask_what_may_or_must_be_done_are_no_terms():
    """"Am I allowed to", "Do I need to", "Am I able to" ask as "may", "must" and "can" do (需要 and 可以 are no
    terms of a Chinese question either); a unit that answers says "may", "only" or "must", seldom them."""
    from asmr.retrieve.signals import alignment, question_terms

    def idf_of(tokens):
        return [2.0] * len(tokens)
    for question in ("Am I allowed to work alone at night?", "Do I need to work alone at night?",
                     "Am I able to work alone at night?", "Am I permitted to work alone at night?"):
        assert question_terms(question, idf_of)[0] == question_terms("Can I work alone at night?", idf_of)[0]
    terms, weights = question_terms("Am I allowed to bring guests?", idf_of)
    assert alignment(terms, weights, ["Guests may be brought on weekdays only."]) == 1.0


def test_the_time_of_asking_is_no_term():
    """"now", "currently", "still" (现在, 目前, 还要) say when the question is asked: a unit that answers says
    who holds the post, not that they hold it now."""
    from asmr.retrieve.signals import alignment, question_terms

    def idf_of(tokens):
        return [2.0] * len(tokens)
    plain = question_terms("Who is the safety officer?", idf_of)[0]
    for question in ("Who is the safety officer now?", "Who is currently the safety officer?",
                     "Who is the current safety officer?", "Is Ines still the safety officer?"):
        terms = question_terms(question, idf_of)[0]
        assert set(terms) - set(plain) <= set(question_terms("Ines", idf_of)[0]), question
    terms, weights = question_terms("晚班现在几点开始？", idf_of)
    assert "现在" not in terms and "晚班" in terms
    terms, weights = question_terms("单册逾期费目前是多少？", idf_of)
    assert alignment(terms, weights, ["单册逾期费上限为5元。"]) == 1.0
    assert "还要" not in question_terms("现在还要交逾期费吗？", idf_of)[0]


def test_a_word_said_another_way_is_held():
    """A unit holds a question's word that it says by a WordNet synonym of few senses ("physician" for
    "doctor") or as a hyphenated pair written as one ("wifi" for "Wi-Fi", and the other way round); a
    word of many senses ("open": 15) and another thing of the same kind ("Tuesday" for "Monday") are
    not held."""
    from asmr.retrieve.signals import alignment, held, question_terms, term_senses

    def idf_of(tokens):
        return [2.0] * len(tokens)

    def holds(question, unit):
        terms = question_terms(question, idf_of)[0]
        return dict(zip(terms, held(terms, unit, term_senses(question, terms))))
    assert all(holds("Which physician covers nights?", "Dr Lee is the doctor on call each night.")[t]
               for t in question_terms("physician nights", idf_of)[0])
    assert all(holds("Which wifi network do laptops join?", "Laptops join the Wi-Fi network rch-staff.").values())
    assert all(holds("Which Wi-Fi network do laptops join?", "Laptops join the WiFi network.").values())
    assert all(holds("What is the clinic's e-mail address?", "Clinic email address: a@b.org").values())
    assert not any(holds("When does the lab open?", "The lab starts at 8 am.")[t]
                   for t in question_terms("open", idf_of)[0])
    assert not any(holds("Who is on call on Monday?", "Dr Lee is on call on Tuesday.")[t]
                   for t in question_terms("Monday", idf_of)[0])
    # without the senses, as subject_phrases reads a unit, only the word's own forms count
    terms, weights = question_terms("Which physician covers nights?", idf_of)
    assert alignment(terms, weights, ["Dr Lee is the doctor on call each night."]) < 1.0
    assert held(terms, "Dr Lee is the doctor on call each night.", term_senses("Which physician covers nights?",
                                                                               terms)).sum() == 2

def test_the_verbs_that_open_a_request_are_no_terms():
    """"Tell me the port of X" asks what "What is the port of X?" asks; no unit that answers says "tell"."""
    from asmr.retrieve.signals import question_terms

    def idf_of(tokens):
        return [2.0] * len(tokens)
    asked = question_terms("What is the budget code of the Umber Wren team?", idf_of)[0]
    for request in ("Tell me the budget code of the Umber Wren team.", "Look up the budget code of the Umber Wren team",
                    "Could you please find out the budget code of the Umber Wren team?",
                    "I need to know: the budget code of the Umber Wren team"):
        assert question_terms(request, idf_of)[0] == asked, request
    assert "look" in question_terms("What does the Umber Wren logo look like?", idf_of)[0]  # not an opener


def test_the_word_that_makes_how_ask_for_a_measure_is_no_term():
    """"how long", "how often": a unit that answers states "within 30 days" or "weekly", never "long"."""
    from asmr.retrieve.signals import alignment, question_terms

    def idf_of(tokens):
        return [2.0] * len(tokens)
    terms, weights = question_terms("How long do I have to submit receipts?", idf_of)
    assert terms == ["submit", "receipt"]
    assert alignment(terms, weights, ["Receipts must be submitted within 30 days."]) == 1.0
    assert question_terms("How often are backups taken?", idf_of)[0] == ["backup", "take"]
    assert "long" in question_terms("Which long river flows past the mill?", idf_of)[0]  # not after "how"


FAQ_PAGE = """---
title: Lab FAQ
---
# Lab FAQ

## Can I work alone in the lab at night?

No. Bench work after 8 pm needs a second person in the same corridor.

## Where do I get dry ice?

Dry ice is ordered from stores by 10 am.
"""


def test_a_unit_is_read_under_its_sections_heading_and_never_under_the_documents_title(tmp_path):
    """A FAQ's answer says "No." and the rest of the rule; the question heading above it says what
    the rule is about. Alignment reads the unit under that heading; the page's title is no part of it
    (titles are there or not as a corpus was put together)."""
    from asmr.retrieve.pipeline import section_heading
    ingest(tmp_path / "m", [Document("faq", FAQ_PAGE, "markdown", title="Lab FAQ", source="faq.md")],
           embedder="hash-64")
    question = "Can I do bench work alone at night?"
    with Memory(tmp_path / "m") as m:
        units = m.units_of("kb", "faq")
        answer = next(u for u in units if u.content.startswith("No."))
        heading = next(u for u in units if u.kind == "heading" and "alone" in u.content)
        assert section_heading(answer) == "Can I work alone in the lab at night?"
        assert section_heading(heading) == "" and section_heading(units[0]) == ""  # a heading; the title
        e = get_embedder("hash-64")
        r = Retriever(m, e, RetrieveConfig(alignment_lexical=0))
        features = r._features(question, np.array([0.5]), [answer], np.zeros(0, np.int64), 1.0)
        assert features["term_alignment"] == 1.0 and features["unheld_terms"] == ""  # bench, work | alone, night
        alone = confidence_features_of(question, [answer.content])
        assert alone["term_alignment"] < 1.0 and alone["unheld_terms"] == "alone, night"
        # the title's words count for no unit: "lab" is in the page's title, not in this section
        titled = r._features("Which lab orders dry ice?", np.array([0.5]),
                             [next(u for u in units if u.content.startswith("Dry ice"))], np.zeros(0, np.int64), 1.0)
        assert titled["unheld_terms"] == "lab"


def confidence_features_of(question, texts):
    from asmr.retrieve.confidence import confidence_features
    return confidence_features(question, np.array([0.5] * len(texts)), texts, [], lambda tokens: [2.0] * len(tokens),
                               RetrieveConfig())


def test_kind_alignment_counts_a_missing_kind_word_less_than_a_missing_name():
    import numpy as np

    from asmr.retrieve.confidence import confidence_features
    question = "Which river flows past the Korvane mill?"
    unit = "The Veslin flows past the Korvane mill before it joins the sea."  # names the river, not "river"
    f = confidence_features(question, np.array([0.5]), [unit], [], lambda tokens: [2.0] * len(tokens),
                            RetrieveConfig())
    assert f["term_alignment"] < f["kind_alignment"] < 1.0
    g = confidence_features("Which river flows past the old mill?", np.array([0.5]), [unit], [],
                            lambda tokens: [2.0] * len(tokens), RetrieveConfig())
    assert g["kind_alignment"] > g["term_alignment"]


def test_the_refusal_reason_names_the_unheld_words_as_asked():
    import numpy as np

    from asmr.retrieve.confidence import confidence_features
    f = confidence_features("Who is the chief executive of the company?", np.array([0.1]), ["Tea is sold here."], [],
                            lambda tokens: [1.0] * len(tokens), RetrieveConfig())
    assert f["term_alignment"] == 0.0 and f["unheld_terms"] == "chief, executive, company"  # words, not stems


def test_chinese_questions_have_terms_and_align():
    from asmr.retrieve.signals import alignment, question_terms, subject_phrases

    def idf_of(tokens):
        return [3.0 if "兴" in t or "韩" in t else 1.0 for t in tokens]
    question = "韩立兴现在效力于哪个球队？"
    terms, weights = question_terms(question, idf_of)
    assert "韩立兴" in terms and "哪个" not in terms
    unit = "韩立兴是广州足球运动员，现时效力中国超级联赛球队广州城。"
    other = "陈伟豪是广州足球运动员，现时效力中国超级联赛球队。"
    assert alignment(terms, weights, [unit]) > alignment(terms, weights, [other])
    assert subject_phrases(terms, weights, question, [other]) == 0.0


def test_chinese_words_that_ask_by_their_form_are_no_terms():
    """多久 / 多长时间 (how long), 几年 / 几个 (how many), 哪天 (which day), 这座 (this one) ask or point;
    a unit that answers never holds them, so they must not count against it. 几乎 and 多年 name something."""
    from asmr.retrieve.signals import alignment, asks, question_terms

    def idf_of(tokens):
        return [2.0] * len(tokens)
    for question, expected in (("服务日志保存多久？", ["服务", "日志", "保存"]),
                               ("服务日志保存多长时间？", ["服务", "日志", "保存"]),
                               ("审计日志要保存几年？", ["审计", "日志", "保存"]),
                               ("例会在哪天举行？", ["例会", "举行"])):
        terms, weights = question_terms(question, idf_of)
        assert terms == expected, question
        assert alignment(terms, weights, ["服务日志和审计日志保存十四天，例会每周二举行。"]) == 1.0
    assert all(asks(w) for w in ("多久", "有多深", "几分钟", "哪天", "这座", "多少"))
    assert not any(asks(w) for w in ("几乎", "多年", "多元", "日志", "哪吒"))


def test_one_or_each_with_the_measure_word_of_a_counted_thing_is_no_term():
    """一张 / 一间 / 每位 (a sheet, a room, each reader) count what the question names beside them, as 一个
    and 每个 do; a unit that answers says 每间 or gives a price per sheet. A span of time (一年) is a value
    the unit must state, 一层 names the ground floor, and 一样 / 一般 / 一楼 are words of their own."""
    from asmr.retrieve.signals import alignment, asks, question_terms

    def idf_of(tokens):
        return [2.0] * len(tokens)
    assert all(asks(w) for w in ("一张", "一间", "每张", "每间", "每位", "每层"))
    assert not any(asks(w) for w in ("一年", "一次", "一天", "一样", "一般", "一楼", "一层"))  # 一层: the ground floor
    for question, expected in (("黑白复印一张多少钱？", ["黑白", "复印"]), ("会议室一间能坐几个人？", ["会议室"]),
                               ("会员一年交多少钱？", ["会员", "一年"])):
        assert question_terms(question, idf_of)[0] == expected, question
    assert alignment(*question_terms("会议室一间能坐几个人？", idf_of), ["每间会议室可坐十二人。"]) == 1.0


def test_how_many_or_which_of_a_counted_thing_asks():
    """几 / 哪 / 这 + any measure word asks or points, those of counted things (几人, 几间, 这台) as those of
    time (几年) do: one list of measure words serves both rules."""
    from asmr.retrieve.signals import asks

    assert all(asks(w) for w in ("几人", "几间", "这台", "哪首", "几年", "这座"))
    assert not any(asks(w) for w in ("几乎", "人间", "间隔"))


def test_chinese_modal_negation_and_quantity_words_are_no_terms():
    """The Chinese for should / must / need, not, each, at least, before and after ask nothing of a unit, as
    their English counterparts (QUESTION_STOP_WORDS) do not."""
    from asmr.retrieve.signals import alignment, question_terms

    def idf_of(tokens):
        return [2.0] * len(tokens)
    for question, expected in (("员工应该在几点以前提交报销单？", ["员工", "提交", "报销"]),
                               ("没有预约的车辆需要等多久？", ["预约", "车辆"]),
                               ("每个订单至少要包含几件货物？", ["订单", "包含", "货物"])):
        terms, weights = question_terms(question, idf_of)
        assert terms == expected, (question, terms)
    assert alignment(*question_terms("员工应该在几点以前提交报销单？", idf_of),
                     ["员工在下午五点前提交报销单。"]) == 1.0


def test_a_name_jieba_glued_to_its_neighbour_is_cut_back_to_what_the_memory_holds():
    """jieba does not know 郑舒 and cuts "郑舒史称什么" as 郑舒史 + 称: the memory, which has the pair 郑舒
    but never 舒史, says where the name ends. A name the memory lacks altogether stays asked."""
    from asmr.retrieve.signals import alignment, question_terms
    from asmr.text.words import cjk_bigrams

    unit = "郑舒，中国春秋时晋国的武将、政治家，郑氏第三代领袖，史称郑文子。"
    held_pairs = set(cjk_bigrams(["郑舒中国春秋时晋国的武将政治家郑氏第三代领袖史称郑文子"]))

    def idf_of(tokens):
        return [1.0 if t in held_pairs else 5.0 for t in tokens]
    terms, weights = question_terms("郑舒史称什么？", idf_of)
    assert "郑舒" in terms and "郑舒史" not in terms
    assert alignment(terms, weights, [unit]) == 1.0
    held_pairs = set(cjk_bigrams(["春秋时晋国的武将"]))  # a memory without the name
    terms, weights = question_terms("郑舒史称什么？", idf_of)
    assert "郑舒史" in terms and alignment(terms, weights, [unit[3:]]) == 0.0


def test_a_name_jieba_glued_to_words_on_both_sides_is_cut_where_the_memory_never_writes_the_pair():
    """A speaker's name glued to what they did: jieba cuts "江浩学琴用了几年" with 江浩学琴 as one word, which
    no unit holds, so a question the memory answers read as stating nothing (neither end cut off leaves a
    word the memory writes). The memory writes 江浩 and 学琴 but never 浩学: the word is cut there, into
    the two terms it holds."""
    from asmr.retrieve.signals import _jieba_cut, alignment, question_terms
    from asmr.text.words import cjk_bigrams

    question = "江浩学琴用了几年？"
    assert "江浩学琴" in _jieba_cut(question)
    units = ["江浩：我从去年春天开始学琴，每周一节课", "江浩：老师说再练两年就能考级"]
    held_pairs = set(cjk_bigrams([u.replace("：", "") for u in units]))

    def idf_of(tokens):
        return [1.0 if t in held_pairs else 5.0 for t in tokens]
    terms, weights = question_terms(question, idf_of)
    assert terms == ["江浩", "学琴"]
    assert alignment(terms, weights, units[:1]) == 1.0


def test_single_characters_jieba_left_side_by_side_are_a_word_where_the_memory_writes_them_together():
    """jieba does not know 年假 ("annual leave") and cuts "年假可以顺延吗" as 年 + 假 + 可以 + 顺延 + 吗:
    without the run 年假 the question asks only for 顺延 ("carried over"), which a unit on time off in
    lieu holds. A memory that has the pair 年假 makes the run a term, and cuts a run where a character
    the memory never writes beside it is glued on; a run of function characters (由 + 谁) is none, whatever
    the memory holds."""
    from asmr.retrieve.signals import alignment, question_terms
    from asmr.text.words import cjk_bigrams

    in_lieu = "调休可以顺延到下个月。"
    leave = "年假可以顺延到次年三月。"
    held_pairs = set(cjk_bigrams(["调休可以顺延到下个月", "年假可以顺延到次年三月", "由谁负责"]))

    def idf_of(tokens):
        return [1.0 if t in held_pairs else 5.0 for t in tokens]
    terms, weights = question_terms("年假可以顺延吗？", idf_of)
    assert "年假" in terms
    assert alignment(terms, weights, [in_lieu]) < 1.0 == alignment(terms, weights, [leave])
    assert "由谁" not in question_terms("调休由谁批准？", idf_of)[0]
    # a run with a character glued on that the memory never writes beside it (年 + 假 + 有, then 几天): the
    # run is cut there, and 年假 is still what is asked
    terms, _ = question_terms("年假有几天？", idf_of)
    assert terms == ["年假"]
    held_pairs -= {"年假"}  # a memory that never writes 年假: the characters stay no term
    terms, weights = question_terms("年假可以顺延吗？", idf_of)
    assert "年假" not in terms and alignment(terms, weights, [in_lieu]) == 1.0
    assert question_terms("年假有几天？", idf_of)[0] == []


def test_a_modal_jieba_glued_to_a_verb_the_memory_never_writes_with_it_is_no_term():
    """jieba cuts "仓储系统的密码多久要换一次" with 要换 ("must change") as one guessed word; the memory says
    更换 and never 要换, so the word is no term and the unit that states the rule holds the question.
    Where the memory writes 要换 the word stays a term; and a word of two characters that does not open
    with a grammatical one (a name the memory lacks) stays asked."""
    from asmr.retrieve.signals import alignment, question_terms
    from asmr.text.words import cjk_bigrams

    unit = "仓储系统的密码每九十天更换一次。"
    held_pairs = set(cjk_bigrams(["仓储系统的密码每九十天更换一次"]))

    def idf_of(tokens):
        return [1.0 if t in held_pairs else 5.0 for t in tokens]
    terms, weights = question_terms("仓储系统的密码多久要换一次？", idf_of)
    assert "要换" not in terms and alignment(terms, weights, [unit]) == 1.0
    held_pairs |= {"要换"}
    assert "要换" in question_terms("仓储系统的密码多久要换一次？", idf_of)[0]
    held_pairs -= {"要换"}
    assert "证借" in question_terms("证借的书超期了吗？", idf_of)[0]  # guessed, no unit has it: still asked

def test_a_question_in_one_language_is_held_by_a_unit_in_the_other():
    """CC-CEDICT's glosses carry a term across: "borrow" is held by a unit that writes 借, 日志 and 保存 by
    "Logs are kept"; a word the unit says in neither language is not, and a unit of the question's
    own language is read as before."""
    from asmr.retrieve.signals import held, term_key
    english = [term_key(w) for w in ("borrow", "backups", "retained", "parking")]
    assert held(english, "普通读者证一次最多可借10册。").tolist() == [True, False, False, False]
    assert held(english, "备份保留三十天。").tolist() == [False, True, True, False]
    assert held(["日志", "保存", "停车"], "Logs are kept for 14 days.").tolist() == [True, True, False]
    assert held(english, "Backups are kept for 30 days.").tolist() == [False, True, False, False]
    assert held(["日志"], "日志保留十四天。").tolist() == [True]
    # a unit is read in the language it is written in: a name in English inside a Chinese unit says
    # nothing the unit's Chinese does not
    assert held(["神学院"], "The Baptist Theological Seminary was founded in 1951.").tolist() == [True]
    assert held(["神学院"], "浸信会（Baptist Theological Seminary）成立于1951年。").tolist() == [False]
    # and in the language it is asked in: the English of a Chinese title is a name, not words to carry
    assert held(["ok", "卡拉", "表现"], "他的表现很好。").tolist() == [False, False, True]
    assert held(["good"], "他的表现很好。").tolist() == [True]  # asked in English: 好


def test_an_english_question_searches_a_chinese_memory_by_the_chinese_words_of_its_terms(tmp_path):
    """BM25 matches no word across languages: over a memory with Chinese units, an English question also
    searches the commonest Chinese words of its terms (港口 for "port", 城市 for "city"), and finds the unit
    that says them; over an English memory it searches only its own words, and so does a question asked
    in Chinese whose English is a name."""
    from asmr.text.bilingual import chinese_words
    from asmr.text.words import term_key
    assert "港口" in chinese_words(term_key("port")) and "城市" in chinese_words(term_key("cities"))
    ingest(tmp_path / "zh", [Document(d, t, "text", title=title, source=d) for d, title, t in ZH_CORPUS],
           embedder="hash-64")
    question = "Which port city lies where the river meets the sea?"
    with Memory(tmp_path / "zh") as m:
        r = Retriever(m, LatinOnlyHashEmbedder(), RetrieveConfig(k=3, bridge_from=0))
        searched = r.lexical_query(question)
        assert searched.startswith(question) and "港口" in searched and "城市" in searched
        rows, _ = m.search_lexical(searched, 3)
        assert m.units_at_rows([int(rows[0])])[0].doc_id == "shanghai"
        qvec = r.embedder.embed([question])[0]
        assert int(r.seeds(question, qvec, 3)[0][0]) == int(rows[0])
        assert r.lexical_query("《卡拉OK》在哪个城市首演？") == "《卡拉OK》在哪个城市首演？"
    ingest(tmp_path / "en", [Document("lyon", "Lyon is a port city on the Rhone and the Saone.", "text",
                                      title="Lyon", source="lyon")], embedder="hash-64")
    with Memory(tmp_path / "en") as m:
        assert Retriever(m, LatinOnlyHashEmbedder(), RetrieveConfig(k=3)).lexical_query(question) == question


def test_a_chinese_compound_is_held_by_a_unit_that_states_its_parts():
    """jieba keeps 工资福利 ("pay and benefits") whole in a question; a unit that gives 工资 and 福利
    apart states it, a unit with one part does not."""
    from asmr.retrieve.signals import held
    terms = ["工资福利", "办公地"]
    assert held(terms, "今年工资上调5%，福利维持不变，员工在总部上班。").tolist() == [True, False]
    assert held(terms, "今年工资上调5%，办公地为深圳。").tolist() == [False, True]
    assert held(["办公地"], "办公于深圳").tolist() == [False]  # 办公 is held, 地 is no word of its own


def test_subject_phrases_needs_the_subject_and_the_asked_phrase_in_one_unit():
    from asmr.retrieve.signals import question_terms, subject_phrases

    def idf_of(tokens):
        return [4.0 if t == "ivrix" else 1.0 for t in tokens]
    q = "What is the cache TTL of Ivrix?"
    terms, weights = question_terms(q, idf_of)
    assert subject_phrases(terms, weights, q, ["Ivrix keeps its cache TTL at 5 minutes."]) > 0.0
    assert subject_phrases(terms, weights, q, ["Ivrix keeps logs.", "Brelova has a cache TTL of 45 minutes."]) == 0.0
    assert subject_phrases(terms, weights, "Ivrix?", ["Ivrix keeps logs."]) == 0.5  # no phrase asked


# One value out of range for every field of RetrieveConfig.
OUT_OF_RANGE = {
    "k": 0, "seeds": 0, "seed_pool": 0, "rrf_k": -1, "seed_rank_scale": 0.0, "depth": 9,
    "edge_threshold": float("nan"), "decay": -0.5, "mix": (0.0, 0.0, 0.0), "recency": -0.1, "fact_boost": -0.1,
    "fact_pool": 0, "cache_size": -1, "confidence_threshold": 1.5, "confidence_weights": (1.0, 2.0),
    "alignment_units": -1, "alignment_lexical": -1, "chain_units": 0, "fact_seeds": -1,
    "conflict_similarity": float("inf"), "bridge_from": -1, "bridge_hits": -1, "bridge_decay": -0.9,
    "bridge_units": -1, "bridge_rounds": 0, "graph": {"alpha": 0.6}, "speaker_seeds": -1.0, "when_boost": -0.3, "speaker_bridge": 1,
    "title_boost": -1.0, "other_code_factor": 1.5, "asking_turn_factor": 1.5,
}


def test_every_config_field_is_checked_and_named():
    from dataclasses import fields

    from asmr.retrieve import ConfigError

    assert set(OUT_OF_RANGE) == {f.name for f in fields(RetrieveConfig)}
    for name, bad in OUT_OF_RANGE.items():
        for value in (bad, "3"):  # out of range; of the wrong type
            with pytest.raises(ConfigError, match=f"^{name} must be ") as caught:
                RetrieveConfig(**{name: value})
            assert caught.value.field == name and caught.value.reason.startswith("must be ")
    # replace() checks too: the CLI and the server build their configs with it
    with pytest.raises(ConfigError, match="^depth must be in 0..8, got -1$"):
        replace(RetrieveConfig(), depth=-1)
    # the edges of the ranges are allowed; edge_threshold above 1 turns the edges off
    RetrieveConfig(depth=0, k=1, confidence_threshold=0.0, mix=(1, 0, 0), edge_threshold=1.01, bridge_from=0)


def test_confidence_weights_must_match_the_features():
    from asmr.retrieve.confidence import FEATURES as CONFIDENCE_FEATURES

    assert RetrieveConfig().confidence_weights is None  # the memory's embedder decides
    assert len(RetrieveConfig().for_embedder("all-MiniLM-L6-v2").confidence_weights) == len(CONFIDENCE_FEATURES) + 1
    n = len(CONFIDENCE_FEATURES) + 1
    with pytest.raises(ValueError, match=f"confidence_weights must be {n} numbers"):
        RetrieveConfig(confidence_weights=(1.0,) * (n - 1))


def test_each_embedder_gets_the_confidence_fitted_for_its_cosines(tmp_path):
    import json

    from asmr.retrieve import confidence as confidence_model

    model = json.loads(confidence_model.MODEL_PATH.read_text(encoding="utf-8"))
    n = len(confidence_model.FEATURES) + 1
    model.update(features=list(confidence_model.FEATURES), weights=[0.25] * n)
    # a model fitted before the last feature existed weighs it 0
    model["embedders"] = {"other-model": {"weights": [0.5] * n, "threshold": 0.9, "baselines": {"dense": 0.8}},
                          "older-model": {"features": list(confidence_model.FEATURES[:-1]),
                                          "weights": [0.5] * (n - 1), "threshold": 0.8}}
    path = tmp_path / "model.json"
    path.write_text(json.dumps(model), encoding="utf-8")
    default, per = confidence_model._load_models(path)
    assert default[:2] == (tuple(model["weights"]), model["threshold"])
    assert per["other-model"] == ((0.5,) * n, 0.9, {"dense": 0.8})
    assert per["older-model"] == ((0.5,) * (n - 1) + (0.0,), 0.8, {})
    model["embedders"]["bad"] = {"features": ["no_such_signal"], "weights": [0.0, 1.0], "threshold": 0.5}
    path.write_text(json.dumps(model), encoding="utf-8")
    with pytest.raises(ValueError, match="no_such_signal"):
        confidence_model._load_models(path)
    # the shipped file: an embedder without a model of its own takes the default one
    assert confidence_model.fitted_model("hash-64") == confidence_model.fitted_model("all-MiniLM-L6-v2")
    config = RetrieveConfig(confidence_threshold=0.3).for_embedder("hash-64")
    assert config.confidence_threshold == 0.3 and config.confidence_weights == confidence_model.DEFAULT_WEIGHTS


def test_shipped_confidence_weights_take_the_signs_of_their_features():
    from asmr.retrieve import confidence as confidence_model

    for name, (weights, _, _) in [("default", confidence_model._DEFAULT_MODEL),
                                  *confidence_model._EMBEDDER_MODELS.items()]:
        for feature, w in zip(confidence_model.FEATURES, weights[1:]):
            assert w * confidence_model.SIGNS[feature] >= 0, (name, feature, w)


def _calibrate_confidence():
    import importlib.util

    path = Path(__file__).resolve().parents[2] / "bench" / "calibrate_confidence.py"
    spec = importlib.util.spec_from_file_location("calibrate_confidence", path)
    calibrate = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(calibrate)
    return calibrate


def test_the_confidence_fit_keeps_each_weight_to_its_sign():
    calibrate = _calibrate_confidence()
    rng = np.random.default_rng(0)
    stated = rng.normal(size=2000)
    together = stated + rng.normal(scale=0.3, size=2000)  # moves with it, and alone says less
    y = (stated - 0.5 * together + rng.normal(scale=0.5, size=2000) > 0).astype(float)
    x, weight = np.column_stack([stated, together]), np.ones(2000)
    free = calibrate.fit_logistic(x, y, weight)
    assert free[2] < -0.5  # fitted free, the second takes a weight against the first
    signed = calibrate.fit_logistic(x, y, weight, (1, 1))
    assert signed[1] > 0 and signed[2] == 0.0
    assert calibrate.fit_logistic(x, y, weight, (0, -1))[2] == pytest.approx(free[2], abs=1e-3)


def test_each_fit_group_weighs_the_same_however_many_sources_it_holds():
    calibrate = _calibrate_confidence()
    share = calibrate.source_weights([["a", "b", "c"], ["d"], []])
    assert share == pytest.approx({"a": 1 / 6, "b": 1 / 6, "c": 1 / 6, "d": 1 / 2})
    assert calibrate.without([["a", "b"], ["d"]], ["d"]) == [["a", "b"]]
    # three sources of one group best served by 0.7, one source of another best served by 0.4, where 0.7
    # refuses its answerable question: counted source by source the three outvote it; weighed as two
    # groups, the one source's threshold wins
    same = (np.array([0.05, 0.5, 0.7]), np.array([False, False, True]))
    other = (np.array([0.2, 0.4]), np.array([False, True]))
    scores, answerable = zip(same, same, same, other)
    assert calibrate.best_threshold(list(scores), list(answerable)) == 0.7
    weights = [calibrate.source_weights([["s1", "s2", "s3"], ["o"]])[n] for n in ("s1", "s2", "s3", "o")]
    assert calibrate.best_threshold(list(scores), list(answerable), weights) == 0.4


def test_of_thresholds_the_fitted_sources_cannot_tell_apart_the_one_that_refuses_least_is_taken():
    calibrate = _calibrate_confidence()
    # every threshold from 0.5 up refuses all three unanswerable questions; 0.6 and 0.9 also refuse one
    # and two of 300 answerable ones, a loss within the tolerance
    scores = np.array([0.1, 0.2, 0.3, 0.5, 0.6] + [0.9] * 298)
    answerable = np.array([False] * 3 + [True] * 300)
    threshold = calibrate.best_threshold([scores], [answerable])
    assert threshold == 0.5
    assert (scores[~answerable] < threshold).all() and not (scores[answerable] < threshold).any()


# Conflicts without dates: one slot, two values

def _gateway_docs(dates=(None, None)):
    return [Document("notes", "The metrics gateway listens on port 7001. It exports data every minute.", "text",
                     title="Network notes", source="notes", effective_date=dates[0]),
            Document("setup", "The metrics gateway listens on port 7002. Restart it after changes.", "text",
                     title="Gateway setup", source="setup", effective_date=dates[1])]


def _search(mem, question, **cfg):
    with Memory(mem) as m:
        return list(Retriever(m, get_embedder("hash-64"), RetrieveConfig(**cfg)).search(question).hits)


def _of(hits, doc):
    return next(h for h in hits if f"/{doc}/" in h.unit_id)


def test_undated_units_of_two_documents_that_give_one_slot_two_values_disagree(tmp_path):
    ingest(tmp_path / "m", _gateway_docs(), embedder="hash-64")  # one ingest: one default date for both
    hits = _search(tmp_path / "m", "Which port does the metrics gateway listen on?")
    a, b = _of(hits, "notes"), _of(hits, "setup")
    assert a.disagrees_with == b.unit_id and b.disagrees_with == a.unit_id
    assert a.alternative_to is None and b.alternative_to is None  # neither wins: both stay


def test_dated_units_that_disagree_resolve_newer_wins(tmp_path):
    ingest(tmp_path / "m", _gateway_docs(("2026-05-01", "2025-01-01")), embedder="hash-64")
    hits = _search(tmp_path / "m", "Which port does the metrics gateway listen on?")
    newer, older = _of(hits, "notes"), _of(hits, "setup")
    assert older.alternative_to == newer.unit_id and newer.alternative_to is None
    assert older.disagrees_with is None and newer.disagrees_with is None
    ids = [h.unit_id for h in hits]
    assert ids.index(older.unit_id) == ids.index(newer.unit_id) + 1


def test_an_undated_document_ingested_later_does_not_outdate_a_dated_one(tmp_path):
    # the setup page states a date; the notes page states none and comes in a later ingest, so its
    # effective date is that ingest's day: newer, but no date of what it says
    ingest(tmp_path / "m", _gateway_docs((None, "2025-01-01"))[1:2], embedder="hash-64")
    ingest(tmp_path / "m", _gateway_docs()[:1], embedder="hash-64")
    with Memory(tmp_path / "m") as m:
        assert m.undated_documents() == {("kb", "notes")}
    hits = _search(tmp_path / "m", "Which port does the metrics gateway listen on?")
    a, b = _of(hits, "notes"), _of(hits, "setup")
    assert a.disagrees_with == b.unit_id and b.disagrees_with == a.unit_id
    assert a.alternative_to is None and b.alternative_to is None
    # given a date at its ingest, the notes page is dated, and the newer wins
    for docs, day in ((_gateway_docs()[1:2], "2025-01-01"), (_gateway_docs()[:1], "2026-01-01")):
        with Writer(tmp_path / "n", embedder="hash-64") as w:
            w.ingest(docs, effective_date=day)
    with Memory(tmp_path / "n") as m:
        assert m.undated_documents() == frozenset()
    hits = _search(tmp_path / "n", "Which port does the metrics gateway listen on?")
    assert _of(hits, "setup").alternative_to == _of(hits, "notes").unit_id


def test_two_values_in_one_document_are_no_conflict(tmp_path):
    ingest(tmp_path / "m", [Document("ports", "The metrics gateway listens on port 7001.\n\n"
                                     "The metrics gateway listens on port 7002.", "markdown", title="Ports",
                                     source="ports")], embedder="hash-64")
    hits = _search(tmp_path / "m", "Which port does the metrics gateway listen on?")
    assert len(hits) >= 2 and all(h.disagrees_with is None and h.alternative_to is None for h in hits)


def test_units_about_different_subjects_do_not_disagree(tmp_path):
    # titles that do not name the subjects: the sentences alone must tell them apart
    docs = [Document(name.lower(), f"{name} pages the on-call engineer when the queue stays full.", "text",
                     title=title, source=name) for name, title in (("Brelova", "Paging"), ("Brisade", "On-call"))]
    docs.append(Document("quota", "The export job writes its report to the Tarn bucket at night.", "text",
                         title="Export", source="quota"))
    docs.append(Document("quota2", "The import job reads its input from the Vell bucket at noon.", "text",
                         title="Import", source="quota2"))
    ingest(tmp_path / "m", docs, embedder="hash-64")
    for q in ("When does Brelova page the on-call engineer?", "Which bucket does the export job write to?"):
        hits = _search(tmp_path / "m", q)
        assert all(h.disagrees_with is None and h.alternative_to is None for h in hits)


def test_a_chinese_pair_that_gives_one_slot_two_values_disagrees(tmp_path):
    ingest(tmp_path / "m", [Document("a", "值班工程师在十五分钟内响应告警。", "text", title="值班", source="a"),
                            Document("b", "值班工程师在三十分钟内响应告警。", "text", title="值班规定", source="b")],
           embedder="hash-64")
    hits = _search(tmp_path / "m", "值班工程师多久响应告警？")
    a, b = _of(hits, "a"), _of(hits, "b")
    assert a.disagrees_with == b.unit_id and b.disagrees_with == a.unit_id


def test_differing_value_needs_one_value_slot_and_the_same_subject():
    from asmr.retrieve.conflicts import differing_value
    assert differing_value("The billing service is owned by the Vega team.",
                           "The billing service is owned by the Lyra team.") == ("Vega", "Lyra")
    assert differing_value("该公司总部位于北京市海淀区。", "该公司总部位于上海市海淀区。") == ("北京", "上海")
    assert differing_value("Vega owns the billing service.", "Lyra owns the billing service.") is None  # subject
    assert differing_value("The Orion job listens on 8080.", "The Vega job listens on 9090.") is None  # two slots
    assert differing_value("The job listens on port 8080.", "The job listens on port 8080 and logs.") is None
    assert differing_value("The job is fast and cheap.", "The job is slow and cheap.") is None  # no value


def owner_handbook(mem):
    """A page whose owner was revised twice, a revision history on the page and a changelog that
    records each change: the first owner is stated in the changelog in the page's own words."""
    history = ["- 2026-01-05: page created."]
    log = ["## 2026-01-05\n\nThe search service page was created. The search service is owned by the Orion team."]
    for date, old, new in (("2026-01-05", None, "Orion"), ("2026-04-01", "Orion", "Vega"),
                           ("2026-08-01", "Vega", "Lyra")):
        if old:
            history.append(f"- {date}: owner changed from {old} to {new}.")
            log.insert(0, f"## {date}\n\nThe search service moved from the {old} team to the {new} team.")
        page = ("# Search service\n\nThe search service answers queries from the storefront. It runs in three "
                f"regions.\n\n## Ownership\n\nThe search service is owned by the {new} team. Page the {new} "
                "on-call for incidents.\n\n## Revision history\n\n" + "\n".join(history) + "\n")
        ingest(mem, [Document("search-service", page, "markdown", title="Search service", doc_type="manual",
                              effective_date=date, source="search-service"),
                     Document("changelog", "# Changelog\n\n" + "\n\n".join(log) + "\n", "markdown",
                              title="Changelog", doc_type="changelog", effective_date=date, source="changelog")],
               embedder="hash-64")


def test_a_changelog_line_does_not_beat_the_current_page(tmp_path):
    owner_handbook(tmp_path / "m")
    with Memory(tmp_path / "m") as m:
        r = Retriever(m, get_embedder("hash-64"))
        hits = r.search("Who owns the search service?").hits
        text = {h.unit_id: m.unit(h.unit_id).content for h in hits}
    stating = [h for h in hits if "owned by" in text[h.unit_id]]
    current = next(h for h in stating if "Lyra" in text[h.unit_id])
    first = next(h for h in stating if "Orion" in text[h.unit_id])
    assert stating[0] is current  # the current owner comes first
    assert first.alternative_to == current.unit_id  # the changelog's first owner is an older statement
    ids = [h.unit_id for h in hits]
    history = [h for h in hits if "moved from" in text[h.unit_id] or "changed from" in text[h.unit_id]]
    assert all(ids.index(h.unit_id) > ids.index(current.unit_id) for h in history)


class LatinOnlyHashEmbedder:
    """hash-64 vectors from a model that says it reads only Latin script (as MiniLM does)."""

    scripts = frozenset({"latin"})

    def __init__(self):
        self._inner = get_embedder("hash-64")
        self.name, self.dim = self._inner.name, self._inner.dim

    def embed(self, texts, *, progress=False):
        return self._inner.embed(texts)


ZH_CORPUS = [
    ("beijing", "北京", "北京是中华人民共和国的首都，有故宫和长城。"),
    ("shanghai", "上海", "上海是中国最大的港口城市，位于长江入海口。"),
    ("lyon", "Lyon", "Lyon is a city in France known for its food and silk."),
]


def test_a_ranking_the_model_cannot_read_does_not_outvote_bm25(tmp_path):
    ingest(tmp_path / "mem", [Document(d, t, "text", title=title, source=d) for d, title, t in ZH_CORPUS],
           embedder="hash-64")
    with Memory(tmp_path / "mem") as m:
        r = Retriever(m, LatinOnlyHashEmbedder(), RetrieveConfig(k=3, bridge_from=0))
        share = r._memory_share()
        assert 0.0 < share < 0.5  # two of three documents are Chinese
        assert r.readable("上海位于哪条河的入海口？") == 0.0
        assert r.readable("Which city is known for silk?") == pytest.approx(share)  # without its vector
        question = "上海位于哪条河的入海口？"
        qvec = r.embedder.embed([question])[0]
        rows, _ = r.seeds(question, qvec, 3)
        lexical, _ = m.search_lexical(question, 3)
        assert list(rows[:len(lexical)]) == list(lexical)  # the dense ranking took no part
        plain, _ = r.seeds(question, qvec, 3, readable=1.0)  # plain RRF fuses both
        assert set(plain) >= set(lexical)
        result = r.search(question)
        assert result.hits[0].unit_id.split("/")[3] == "shanghai"
        assert result.hits[0].score > 0



def test_lexical_similarity_is_the_bm25_score_over_the_best_and_zero_outside_its_ranking():
    from asmr.retrieve.pipeline import lexical_similarity

    rows = np.array([7, 3, 9, 1])
    got = lexical_similarity(rows, np.array([3, 7, 5]), np.array([8.0, 4.0, 2.0], np.float32))
    assert got.tolist() == [0.5, 1.0, 0.0, 0.0]
    assert lexical_similarity(rows, np.zeros(0, np.int64), np.zeros(0, np.float32)).tolist() == [0.0] * 4


def test_where_the_model_cannot_read_bm25_stands_in_for_the_cosine_in_the_score(tmp_path):
    """A Chinese memory read by a model of Latin script: a unit's cosine counts nothing in its score, and
    its BM25 score (over the best unit's) takes its place, so a unit that the spreading reaches but that
    says none of the question's words scores by its path alone, below a unit BM25 ranks as well as it
    is reached. Before, the path strength took the cosine's share too, and units reached two hops
    from the first seed outranked the question's own lower BM25 results."""
    docs = [Document(d, t, "text", title=title, source=d) for d, title, t in ZH_CORPUS if d != "lyon"]
    hangzhou = "杭州是浙江的省会，西湖在杭州，杭州离上海不远。\n\n这座城市的地铁线路很多，交通方便。"
    docs += [Document("hangzhou", hangzhou, "text", title="杭州", source="hangzhou")]
    ingest(tmp_path / "mem", docs, embedder="hash-64")
    # The memory's one edge, between the two paragraphs of one page, weighs its kind's prior alone (0.4)
    config = RetrieveConfig(k=10, bridge_from=0, fact_boost=0.0, when_boost=0.0, recency=0.0,
                            edge_threshold=0.3)
    question = "上海位于哪条河的入海口？"
    with Memory(tmp_path / "mem") as m:
        r = Retriever(m, LatinOnlyHashEmbedder(), config)
        hits, _ = r.recall(question, r.embedder.embed([question])[0], config.k)
        lex_rows, lex_scores = m.search_lexical(question, config.seed_pool)
    share = dict(zip(lex_rows.tolist(), (lex_scores / lex_scores[0]).tolist()))
    assert len(hits) > 1 and any(h.row not in share for h in hits)  # some are reached by the graph alone
    for h in hits:
        assert h.score == pytest.approx(config.mix[0] * share.get(h.row, 0.0) + config.mix[1] * h.strength
                                        + config.mix[2] * h.centrality, abs=1e-6)
    assert hits[0].unit_id.split("/")[3] == "shanghai"


def test_a_cosine_the_model_cannot_read_makes_no_reworded_rule(tmp_path):
    """Two rules of a Chinese handbook with different dates: a model that reads only Latin script gives
    them a cosine that says nothing, so neither outdates the other (read by a model that reads them,
    a cosine above the conflict similarity makes the older one the newer's alternative)."""
    docs = [Document("fleet", "司机每天连续驾驶不得超过四小时，之后至少休息二十分钟。", "text", title="车队管理",
                     source="fleet", effective_date="2026-01-15"),
            Document("safety", "叉车司机必须持有特种设备操作证，消防通道宽度不得小于四米。", "text", title="消防安全",
                     source="safety", effective_date="2026-01-10")]
    ingest(tmp_path / "mem", docs, embedder="hash-64")
    question = "叉车司机需要持有什么证？"
    with Memory(tmp_path / "mem") as m:
        config = RetrieveConfig(k=2, bridge_from=0, conflict_similarity=-1.0, confidence_threshold=0.0)
        reading = Retriever(m, get_embedder("hash-64"), config).search(question).hits
        blind = Retriever(m, LatinOnlyHashEmbedder(), config).search(question).hits
    assert any(h.alternative_to for h in reading)  # the premise: a model that reads them sees a revision
    assert len(blind) == 2 and not any(h.alternative_to or h.disagrees_with for h in blind)

def test_a_refusal_over_text_the_model_cannot_read_says_so(tmp_path):
    """An English question over a Chinese memory, with a model that reads Latin script only: "not found",
    and the reason says how little the model's similarity counted and which embedder reads the script. A refusal over
    a memory the model reads says nothing of it."""
    from asmr.retrieve.confidence import refusal_reason

    zh = [(d, title, text) for d, title, text in ZH_CORPUS if d != "lyon"]
    ingest(tmp_path / "mem", [Document(d, t, "text", title=title, source=d) for d, title, t in zh],
           embedder="hash-64")
    with Memory(tmp_path / "mem") as m:
        result = Retriever(m, LatinOnlyHashEmbedder(), RetrieveConfig(k=3, bridge_from=0)).search(
            "What colour is the neighbour's bicycle?")
        assert not result.found
        assert "similarity counts 0%" in result.reason and "multilingual-e5-small" in result.reason
    read = {"term_alignment": 0.0, "unheld_terms": "", "top_similarity": 0.1, "readable": 1.0}
    assert "similarity counts" not in refusal_reason(read, 0.2, 0.7)


def test_where_bm25_finds_nothing_a_dense_ranking_the_model_cannot_read_still_seeds(tmp_path):
    """An English question over a Chinese memory, with a model that reads Latin script only: BM25 finds no
    unit, in either language, and the dense ranking, which counts for nothing beside a BM25 result, seeds
    alone, so recall shows the units nearest the question's vector (still "not found": nothing the model
    reads states it). A Chinese question, which BM25 answers, is seeded by BM25 alone as before."""
    zh = [(d, title, text) for d, title, text in ZH_CORPUS if d != "lyon"]
    ingest(tmp_path / "mem", [Document(d, t, "text", title=title, source=d) for d, title, t in zh],
           embedder="hash-64")
    question = "What colour is the neighbour's bicycle?"
    with Memory(tmp_path / "mem") as m:
        r = Retriever(m, LatinOnlyHashEmbedder(), RetrieveConfig(k=3, bridge_from=0))
        qvec = r.embedder.embed([question])[0]
        assert r.readable(question, qvec) == 0.0
        assert r.lexical_query(question) != question  # its words are searched in Chinese too
        assert len(m.search_lexical(r.lexical_query(question), 3)[0]) == 0
        rows, _ = r.seeds(question, qvec, 3)
        dense, _ = m.search_dense(qvec[None], 3)
        assert len(rows) > 0 and list(rows) == [row for row in dense[0] if row >= 0][:len(rows)]
        result = r.search(question)
        assert result.hits and not result.found
        chinese = "上海位于哪条河的入海口？"
        lexical, _ = m.search_lexical(chinese, 3)
        assert list(r.seeds(chinese, r.embedder.embed([chinese])[0], 3)[0]) == list(lexical)


def test_an_english_question_over_a_mixed_memory_trusts_the_dense_ranking_of_what_it_reads(tmp_path):
    """The dense ranking counts by the readable share of the units it ranks first, not of the whole
    memory: half the memory being Chinese does not halve an English question's semantic half."""
    french = [Document(f"fr{i}", f"Lyon is a city in France known for silk and food, district {i}.", "text",
                       title=f"Lyon {i}", source=f"fr{i}") for i in range(12)]
    chinese = [Document(f"zh{i}", "北京是中华人民共和国的首都，有故宫和长城，人口众多，历史悠久。" * 3, "text",
                        title=f"北京 {i}", source=f"zh{i}") for i in range(12)]
    ingest(tmp_path / "mem", french + chinese, embedder="hash-64")
    with Memory(tmp_path / "mem") as m:
        r = Retriever(m, LatinOnlyHashEmbedder(), RetrieveConfig(k=3, bridge_from=0))
        assert r._memory_share() < 0.5
        english = "Which city in France is known for silk?"
        qvec = r.embedder.embed([english])[0]
        assert r.readable(english) == pytest.approx(r._memory_share())
        assert r.readable(english, qvec) == pytest.approx(1.0)  # its first ten dense units are all English
        chinese_question = "北京有什么？"
        assert r.readable(chinese_question, r.embedder.embed([chinese_question])[0]) == 0.0


def test_recall_paths_name_usage_and_cooccurrence_edges(memory, tmp_path):
    from datetime import datetime, timezone

    from asmr.graph import GraphConfig, learn
    from asmr.store import UsageLog

    question = "Who wrote the novel by Alice Smith?"
    now = datetime.now(timezone.utc).isoformat()
    with Memory(memory) as m:
        alice, bob = m.units_of("kb", "alice")[0], m.units_of("kb", "bob")[0]
        e = get_embedder("hash-64")
        cold = Retriever(m, e, RetrieveConfig(seeds=1, k=5, bridge_from=0)).search(question)
        assert bob.id not in {h.unit_id for h in cold.hits}  # nothing links Alice to Bob yet
        records = [{"time": now, "question": f"q{i}", "audit": [{"outcome": "keep", "citations": [
            {"id": alice.id, "kept": True}, {"id": bob.id, "kept": True}]}]} for i in range(2)]
        with UsageLog(memory, create=True) as log:
            learn(m, log, records, {})
        warm = Retriever(m, e, RetrieveConfig(seeds=1, k=5, bridge_from=0)).search(question)
        hit = next(h for h in warm.hits if h.unit_id == bob.id)
        assert [p.node for p in hit.path] == [alice.id, bob.id] and hit.path[1].edge_kind == "usage"
        off = RetrieveConfig(seeds=1, k=5, bridge_from=0, graph=GraphConfig(usage=False))
        assert bob.id not in {h.unit_id for h in Retriever(m, e, off).search(question).hits}

    from test_graph import _cooccur_docs
    ingest(tmp_path / "co", _cooccur_docs(), embedder="hash-64")
    with Memory(tmp_path / "co") as m:
        lone = m.units_of("kb", "lone")[0].id
        cfg = RetrieveConfig(seeds=1, k=10, bridge_from=0, edge_threshold=0.5,
                             graph=GraphConfig(cooccur_beta=1.0))
        result = Retriever(m, get_embedder("hash-64"), cfg).search("Who lectured on tides in the winter?")
        assert result.hits[0].unit_id == lone
        reached = [h for h in result.hits if len(h.path) == 3 and h.path[1].edge_kind == "cooccur"]
        assert reached and all(h.path[1].node == "entity 'kestrel bay'" for h in reached)


def test_units_cited_together_are_recalled_together(memory):
    """A unit that verified answers cited with one of the best hits joins it (``usage_bridge``): at
    bridge_decay times the edge's weight times that hit's score, its path the hit's and then the learned
    edge, above where spreading alone puts it. Without learned edges recall is as before."""
    from datetime import datetime, timezone

    from asmr.graph import GraphConfig, learn
    from asmr.store import UsageLog

    question = "Who wrote the novel by Alice Smith?"
    now = datetime.now(timezone.utc).isoformat()
    with Memory(memory) as m:
        alice, bob = m.units_of("kb", "alice")[0], m.units_of("kb", "bob")[0]
        e = get_embedder("hash-64")
        cfg = RetrieveConfig(seeds=1, k=5, bridge_from=1)
        cold = Retriever(m, e, cfg).search(question)
        assert cold.hits[0].unit_id == alice.id and bob.id not in {h.unit_id for h in cold.hits}
        records = [{"time": now, "question": f"q{i}", "audit": [{"outcome": "keep", "citations": [
            {"id": alice.id, "kept": True}, {"id": bob.id, "kept": True}]}]} for i in range(2)]
        with UsageLog(memory, create=True) as log:
            learn(m, log, records, {})
        warm = Retriever(m, e, cfg)
        assert warm.graph.learned and not cold.hits[0].path[-1].edge_kind == "usage"
        hits = warm.search(question).hits
        top, joined = hits[0], next(h for h in hits if h.unit_id == bob.id)
        assert top.unit_id == alice.id
        weight = warm.graph.edge(top.row, joined.row)[1]
        assert joined.score == pytest.approx(top.score * cfg.bridge_decay * weight, rel=1e-5)
        assert [p.node for p in joined.path] == [alice.id, bob.id] and joined.path[-1].edge_kind == "usage"
        spread = Retriever(m, e, replace(cfg, bridge_from=0)).search(question).hits  # the edge, spread only
        assert next(h for h in spread if h.unit_id == bob.id).score < joined.score
        off = Retriever(m, e, replace(cfg, graph=GraphConfig(usage=False))).search(question).hits
        assert [h.unit_id for h in off] == [h.unit_id for h in cold.hits]


# Conversations: who said what, and when

def _chat_memory(tmp_path, turns=None):
    """A memory of one document a turn: ``turns`` as (speaker, words, date), by default five English ones."""
    from datetime import date

    from asmr.units.chat import render_turn
    turns = turns or [("Mirela", "I adopted a cat called Mochi last week.", date(2023, 5, 8)),
                      ("Mirela", "Mochi chewed through my slippers again.", date(2023, 6, 2)),
                      ("Tobias", "Tobias here, my Volvo broke down.", date(2023, 5, 8)),
                      ("Tobias", "Mirela, how is Mochi settling in?", date(2023, 5, 20)),
                      ("Oona", "I work as a nurse.", date(2023, 5, 8))]
    docs = [Document(f"t{i}", render_turn(day, who, said), "text", title=f"chat {i}", source=f"t{i}",
                     effective_date=day.isoformat()) for i, (who, said, day) in enumerate(turns)]
    ingest(tmp_path / "chat", docs, embedder="hash-64")
    return Memory(tmp_path / "chat")


def test_like_worded_turns_of_two_days_are_no_revision_but_a_changed_value_is(tmp_path):
    """Two turns are no rule reworded: one speaker who talks of one thing on two days says it in like words,
    and the earlier turn stays a turn of its own, with no newer one it is an alternative to. A turn that
    gives a slot another value still outdates the earlier one, each turn a document or not."""
    from datetime import date
    turns = [("Mirela", "I walk the dog along the canal every morning.", date(2023, 5, 8)),
             ("Mirela", "I walk the dog along the canal every morning before work.", date(2023, 6, 2)),
             ("Mirela", "My pottery class meets on Thursday.", date(2023, 5, 9)),
             ("Mirela", "My pottery class meets on Friday.", date(2023, 6, 3))]
    cfg = RetrieveConfig(k=4, conflict_similarity=0.5, bridge_from=0, confidence_threshold=0.0)
    with _chat_memory(tmp_path, turns) as m:
        r = Retriever(m, get_embedder("hash-64"), cfg)
        walk = r.search("When does Mirela walk the dog along the canal?").hits
        assert float(m.vectors[walk[0].row] @ m.vectors[walk[1].row]) >= 0.5  # the premise: alike enough
        assert len(walk) >= 2 and not any(h.alternative_to or h.disagrees_with for h in walk[:2])
        pottery = {h.unit_id.split("/")[3]: h
                   for h in r.search("When does Mirela's pottery class meet?").hits}
        assert pottery["t2"].alternative_to == pottery["t3"].unit_id


def test_the_bridge_to_a_speakers_turns_passes_over_turns_that_only_ask(tmp_path):
    """A recalled turn bridges to the other turns of its speaker to find what they said; a turn that only
    asks ("That was kind. What did you get?") states nothing, and is not joined, whatever its cosine."""
    from datetime import date

    from asmr.retrieve.bridge import bridge
    turns = [("Tobias", "I ran the Riverside 10K on Sunday.", date(2023, 5, 8)),
             ("Tobias", "That was kind. What did you get?", date(2023, 5, 9)),
             ("Tobias", "My new job is at the harbour office.", date(2023, 5, 10)),
             ("Mirela", "I baked bread all weekend.", date(2023, 5, 11))]
    question = "Where does the person who ran the Riverside 10K work?"
    cfg = RetrieveConfig(k=1, bridge_from=0, conflict_similarity=2.0, confidence_threshold=0.0)
    with _chat_memory(tmp_path, turns) as m:
        r = Retriever(m, get_embedder("hash-64"), cfg)
        qvec = r.embedder.embed([question])[0]
        hits, _ = r.recall(question, qvec, 1)
        assert hits[0].unit_id.split("/")[3] == "t0"  # the premise: the first hop is found
        stating = r.stating_speakers()
        assert stating.keys() == r.speakers().keys() and len(stating["tobias"]) == 2  # not the asking turn
        joined, _ = bridge(m, replace(cfg, bridge_from=1, bridge_hits=3), r._document_subjects(), question,
                           qvec, hits, m.units_at_rows([hits[0].row]), 4, stating)
    assert sorted(h.unit_id.split("/")[3] for h in joined) == ["t0", "t2"]


def test_the_speakers_of_a_memory_and_the_question_without_their_names(tmp_path):
    with _chat_memory(tmp_path) as m:
        r = Retriever(m, get_embedder("hash-64"))
        speakers = r.speakers()
        assert set(speakers) == {"mirela", "tobias", "oona"} and len(speakers["mirela"]) == 2
        hits = r.search("When did Mirela adopt Mochi?").hits
        assert "adopted" in m.unit(hits[0].unit_id).content  # the dated turn before the later mentions


def test_speaker_gap_finds_one_persons_news_asked_of_another(tmp_path):
    with _chat_memory(tmp_path) as m:
        r = Retriever(m, get_embedder("hash-64"))

        def gap(question):
            return r.recall(question, r.embedder.embed([question])[0], 5)[1]["speaker_gap"]
        assert gap("When did Mirela adopt a cat called Mochi?") == 0.0  # her own turn says it
        assert gap("When did Oona adopt a cat called Mochi?") > 0.1  # Mirela's does, none of Oona's
        # Tobias asks Mirela about Mochi: a turn addressed to her is no news of his own
        assert gap("When did Tobias adopt a cat called Mochi?") > 0.1
        assert r.addressed().tolist() == [r.speakers()["tobias"][1]]
        assert gap("When did someone adopt a cat called Mochi?") == 0.0  # names no speaker


def test_turn_share_is_the_share_of_the_best_units_that_are_chat_turns(tmp_path):
    from asmr.retrieve.confidence import turn_share
    assert turn_share([]) == 0.0
    assert turn_share(["[2023-05-08] Oona: I work as a nurse.", "Nurses work in shifts."]) == 0.5
    assert turn_share(["[note] Oona: not a dated stamp"]) == 0.0
    with _chat_memory(tmp_path) as m:
        r = Retriever(m, get_embedder("hash-64"))
        assert r.recall("What does Oona work as?", r.embedder.embed(["What does Oona work as?"])[0],
                        5)[1]["turn_share"] == 1.0
    docs = [Document("a", "The harbour festival moved to the old pier.", "text", title="Festival", source="a")]
    ingest(tmp_path / "d", docs, embedder="hash-64")
    with Memory(tmp_path / "d") as m:
        r = Retriever(m, get_embedder("hash-64"))
        assert r.recall("Where is the festival?", r.embedder.embed(["Where is the festival?"])[0],
                        5)[1]["turn_share"] == 0.0


def test_a_when_question_prefers_the_unit_that_says_when(tmp_path):
    docs = [Document("a", "The harbour festival moved to the old pier.", "text", title="Festival", source="a"),
            Document("b", "The harbour festival moved to the old pier in 2019.", "text", title="History",
                     source="b")]
    ingest(tmp_path / "m", docs, embedder="hash-64")
    with Memory(tmp_path / "m") as m:
        def scores(question, config):
            hits = Retriever(m, get_embedder("hash-64"), config).search(question).hits
            return {m.unit(h.unit_id).doc_id: h.score for h in hits}

        q = "When did the harbour festival move to the old pier?"
        on, off = scores(q, RetrieveConfig()), scores(q, RetrieveConfig(when_boost=0.0))
        assert on["b"] / on["a"] == pytest.approx(1.3 * off["b"] / off["a"])  # when_boost 0.3 for the dated unit
        where = scores("Where did the harbour festival move to?", RetrieveConfig())  # asks no time: no boost
        assert where == scores("Where did the harbour festival move to?", RetrieveConfig(when_boost=0.0))


def test_a_question_in_traditional_script_is_read_as_one_in_simplified():
    """Written in Traditional characters, the same question and unit: the question words (什麼, 哪個) ask
    nothing and the words align as they do in Simplified, over units written in either script."""
    simplified_q, traditional_q = "韩立兴现在效力于哪个球队？", "韓立興現在效力於哪個球隊？"
    simplified_u = "韩立兴是广州足球运动员，现时效力中国超级联赛球队广州城。"
    traditional_u = "韓立興是廣州足球運動員，現時效力中國超級聯賽球隊廣州城。"
    expected = confidence_features_of(simplified_q, [simplified_u])
    assert expected["unheld_terms"] == ""
    for question, unit in ((traditional_q, traditional_u), (traditional_q, simplified_u),
                           (simplified_q, traditional_u)):
        f = confidence_features_of(question, [unit])
        assert f["term_alignment"] == expected["term_alignment"], (question, unit)
        assert f["unheld_terms"] == "", (question, unit)
    # the refusal reason names a word as it was asked, in its own script
    assert confidence_features_of("韓立興的球衣號碼是多少？", [traditional_u])["unheld_terms"] == "球衣, 號碼"


def test_the_dictionary_is_built_where_its_cache_cannot_be_written(tmp_path, monkeypatch):
    """The bilingual tables are kept in the cache after their first build; a cache that cannot be written
    (a read-only home; here a file where the folder should be) costs the build, not the question."""
    from asmr.text import bilingual
    from asmr.text.words import term_key
    blocked = tmp_path / "a-file"
    blocked.write_text("not a folder")
    monkeypatch.setenv("ASMR_CACHE_DIR", str(blocked / "cache"))
    bilingual._tables.cache_clear()
    try:
        assert "港口" in bilingual.chinese_words(term_key("port"))
    finally:
        bilingual._tables.cache_clear()
        bilingual.english_keys.cache_clear()


class _GivenLexicalRanking:
    """A memory whose BM25 search answers with a ranking given in advance."""

    def __init__(self, lexical: list[int]):
        self.lexical = np.array(lexical, np.int64)

    def search_lexical(self, query: str, k: int):
        return self.lexical[:k], np.linspace(9.0, 1.0, len(self.lexical[:k])).astype(np.float32)


def test_a_unit_one_ranking_puts_first_is_not_outvoted_by_units_both_rank_middling():
    """A unit the dense ranking puts first and BM25 misses (a question asked in other words than the unit's)
    seeds among the first, ahead of units that both rankings put from 12th to 30th: reciprocal rank fusion
    with the customary constant of 60 gave each of those more than the first unit (2/72 > 1/61)."""
    middling = list(range(100, 119))
    dense = [7, *range(200, 211), *middling]  # unit 7 first, then 11 units BM25 does not rank
    lexical = [*range(300, 311), *middling]   # 11 units the dense ranking does not rank, then the middling
    fake = type("R", (), {"memory": _GivenLexicalRanking(lexical), "config": RetrieveConfig(),
                          "lexical_query": lambda self, q: q})()
    rows, _, _ = Retriever._seeds(fake, "q", np.zeros(4, np.float32), 5, 1.0, dense_rows=np.array(dense))
    order = rows.tolist()
    assert 7 in order[:2]  # level with the unit BM25 alone puts first
    assert all(order.index(7) < order.index(m) for m in middling if m in order)


def test_a_chinese_question_names_its_speaker_and_is_seeded_by_their_turns_in_bm25_order(tmp_path):
    """Chinese writes names with neither capitals nor spaces: "秦岚" in the question names the speaker
    秦岚. A model that reads no Chinese gives its cosines as noise, so the speaker's turns seed in BM25's
    order (not the cosine's), and the speaker gap, a gap of cosines, counts for nothing; before, no
    Chinese question named a speaker at all."""
    from datetime import date

    from asmr.text.turns import named_speakers
    turns = [("秦岚", "我家那只仓鼠叫布丁，特别能吃。", date(2023, 5, 8)),
             ("秦岚", "周末去爬山了，累死。", date(2023, 5, 9)),
             ("魏然", "仓鼠能活几年啊？", date(2023, 5, 9)),
             ("魏然", "我养了一只猫，叫年糕。", date(2023, 5, 10))]
    question = "秦岚的仓鼠叫什么名字？"
    with _chat_memory(tmp_path, turns) as m:
        r = Retriever(m, LatinOnlyHashEmbedder(), RetrieveConfig(k=3, bridge_from=0))
        assert named_speakers(question, r.speakers()) == ["秦岚"]
        qvec = r.embedder.embed([question])[0]
        assert r.readable(question, qvec) == 0.0
        hits, features = r.recall(question, qvec, 3)
        assert "布丁" in m.unit(hits[0].unit_id).content
        assert features["speaker_gap"] == 0.0
        # the question about the other speaker: the turn that answers is theirs, found the same way
        hits, _ = r.recall("魏然的猫叫什么？", r.embedder.embed(["魏然的猫叫什么？"])[0], 3)
        assert "年糕" in m.unit(hits[0].unit_id).content


def test_an_unreadable_question_seeds_its_speakers_turns_in_bm25_order():
    """With ``readable`` 0 the speaker's turns join the seeds in the order BM25 ranks them, and no cosine
    of theirs is read (the stand-in memory has none to give)."""
    lexical = [*range(300, 307), 42, 43]  # 42 and 43 are the speaker's turns, BM25's 8th and 9th
    fake = type("R", (), {"memory": _GivenLexicalRanking(lexical), "config": RetrieveConfig(),
                          "lexical_query": lambda self, q: q})()
    own = (np.array([43, 42, 99], np.int64), np.zeros(4, np.float32))
    rows, _, _ = Retriever._seeds(fake, "q", np.zeros(4, np.float32), 4, 0.0, own=own,
                                  dense_rows=np.zeros(0, np.int64))
    assert rows.tolist()[:2] == [42, 43]


def test_a_turn_that_only_asks_ranks_after_the_reply_that_answers_it(tmp_path):
    """A question finds the turn that asked the same thing by its words; the answer is in the reply after
    it (whose vector reads the question too), which must come first."""
    from asmr.units.read import iter_jsonl
    said = [("Noor", "did the ferry to the island run on time this morning?"), ("Ilse", "forty minutes late, again"),
            *[(who, f"{w} {w}s grow slowly") for w, who in zip(["tulip", "fern", "moss", "ivy", "oak", "kale"],
                                                               ["Noor", "Ilse"] * 3)]]
    records = tmp_path / "turns.jsonl"
    records.write_text("".join(json.dumps({"pid": f"t{i}", "text": t, "speaker": w, "effective_date": "2025-04-02"})
                               + "\n" for i, (w, t) in enumerate(said)), encoding="utf-8")
    ingest(tmp_path / "m", list(iter_jsonl(records)), embedder="hash-64")
    question = "Did the ferry to the island run on time?"
    with Memory(tmp_path / "m") as m:
        def ranked(**config) -> dict[str, float]:
            hits = Retriever(m, get_embedder("hash-64"), RetrieveConfig(k=5, **config)).search(question).hits
            return {u.doc_id: h.score for u, h in zip(m.units_at_rows([h.row for h in hits]), hits)}
        plain, shipped, low = ranked(asking_turn_factor=1.0), ranked(), ranked(asking_turn_factor=0.5)
        assert plain["t0"] > plain["t1"]  # by its words the asking turn comes first
        assert shipped["t0"] == pytest.approx(RetrieveConfig().asking_turn_factor * plain["t0"])
        assert shipped["t1"] == pytest.approx(plain["t1"])  # the reply states: as it was
        assert RetrieveConfig().asking_turn_factor < 1.0
        assert low["t1"] > low["t0"]


def test_a_question_in_another_script_than_its_best_unit_is_read_on_that_scripts_scale(tmp_path):
    """E5 gives an English question about 0.12 less cosine to a Chinese unit than a Chinese question has
    (embed.models.cross_script_offset): the confidence reads the best cosine on the unit's scale."""
    from conftest import named_hash_embedder

    units = [Document("kiln", "陶窑每周四烧制，周末不开放。", "text"),
             Document("glaze", "釉料订单中午截止，逾期顺延到次日。", "text")]
    for model, offset in (("multilingual-e5-small", 0.123), ("all-MiniLM-L6-v2", 0.0)):
        e = named_hash_embedder(model)
        ingest(tmp_path / model, units, embedder=e)
        with Memory(tmp_path / model) as m:
            r = Retriever(m, e)
            for question, shift in (("When is the kiln fired?", offset), ("陶窑哪天烧制？", 0.0)):
                qvec = e.embed([question])[0]
                _, features = r.recall(question, qvec, 5)
                best = float(np.max(m.vectors @ qvec))  # every unit of so small a memory is reached
                assert features["top_similarity"] == pytest.approx(best + shift, abs=1e-6), (model, question)


def test_recall_margin_reports_asmr_over_the_better_baseline_read_and_never_read_apart(tmp_path):
    import subprocess
    import sys

    docs = [{"pid": "port", "title": "Ports", "text": "The API server listens on port 9090 in production."},
            {"pid": "logs", "title": "Logs", "text": "Logs are kept for 14 days in the log directory."},
            {"pid": "backup", "title": "Backups", "text": "Backups run every night at two o'clock."}]
    questions = [{"qid": "q1", "question": "Which port does the API server listen on?",
                  "gold_pids": ["port"]},
                 {"qid": "q2", "question": "How long are logs kept?", "gold_pids": ["logs"]},
                 {"qid": "q3", "question": "Who painted the lobby portrait?", "gold_pids": []}]
    corpus, queries = tmp_path / "corpus.jsonl", tmp_path / "queries.jsonl"
    corpus.write_text("".join(json.dumps(d) + "\n" for d in docs))
    queries.write_text("".join(json.dumps(q) + "\n" for q in questions))
    script = Path(__file__).resolve().parents[2] / "bench" / "recall_margin.py"
    spec = f"{corpus},{queries}"
    run = [sys.executable, str(script), "--work", str(tmp_path / "work"), "--embedder", "hash-256",
           "--source", f"a={spec}", "--source", f"b={spec}", "--read", "a",
           "--json", str(tmp_path / "out.json")]
    done = subprocess.run(run, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    out = json.loads((tmp_path / "out.json").read_text())
    rows = {r["source"]: r for r in out["rows"]}
    assert rows["a"]["status"] == "read" and rows["b"]["status"] == "never read"
    assert rows["a"]["questions"] == 2  # the question without an answer is not one recall is measured on
    recall = rows["b"]["recall@5"]
    assert rows["b"]["margin"] == pytest.approx(recall["asmr"] - max(recall["dense"], recall["hybrid"]))
    assert out["summary"]["never read"] == {"sources": 1, "mean_margin": rows["b"]["margin"],
                                            "at_goal": int(rows["b"]["margin"] >= 0.05)}
    bad = subprocess.run(run[:-2] + ["--read", "c"], capture_output=True, text=True)
    assert bad.returncode == 2 and "--read ['c']: no such --source" in bad.stderr
    # the memories under --work are hash-256's: another embedder is refused in one line, nothing written
    other = subprocess.run([*run[:5], "hash-384", *run[6:]], capture_output=True, text=True)
    assert other.returncode == 2 and other.stderr.strip().startswith("--source a: memory ")
    assert "hash-256" in other.stderr and "Traceback" not in other.stderr
