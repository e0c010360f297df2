"""Answering end to end (extractive generator, hashing embedder) and the answer-accuracy evaluation."""
from pathlib import Path

import pytest

from asmr.answer.answerer import NOT_FOUND, AnswerConfig, Answerer, declines
from asmr.embed.models import get_embedder
from asmr.eval.answers import AnswerEval, AnswerQuery, queries_from_synth, states, write_report
from asmr.eval.synth import generate
from asmr.generate.base import Generation
from asmr.generate.extractive import ExtractiveGenerator
from asmr.verify.verifier import DROPPED
from asmr.retrieve import RetrieveConfig
from asmr.store.memory import Memory
from asmr.store.writer import ingest
from asmr.units.model import Document
from asmr.units.read import read_path
from asmr.verify.allowlist import Conversation

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def _docs(root: Path):
    return [read_path(p, root=root) for p in sorted(root.rglob("*.md"))]


@pytest.fixture(scope="module")
def handbook(tmp_path_factory):
    d = tmp_path_factory.mktemp("hb")
    ingest(d, _docs(EXAMPLES / "handbook"), embedder="hash-256", progress=False)
    ingest(d, _docs(EXAMPLES / "handbook-v2"), embedder="hash-256", progress=False)
    m = Memory(d)
    yield m
    m.close()


def _answerer(memory, **cfg):
    emb = get_embedder(memory.embed_model)
    # refusal is calibrated for MiniLM; with hashing vectors a lower bar keeps the questions answerable
    return Answerer(memory, ExtractiveGenerator(emb), embedder=emb, config=AnswerConfig(**cfg),
                    retrieve_config=RetrieveConfig(confidence_threshold=0.05))


def test_answer_is_verified_cited_and_numbered(handbook):
    ans = _answerer(handbook).ask("Which port does the API server listen on?")
    assert ans.found and "9090" in ans.text
    assert ans.citations and all(c.unit_id in ans.allowlist for c in ans.citations)
    assert ans.verification.counts["keep"] >= 1 and ans.verification.counts["malformed"] == 0
    assert "[1]" in ans.numbered() and "[cite:" not in ans.numbered()
    d = ans.to_dict()
    assert d["found"] and d["citations"][0]["doc_id"] == "ops.deploy"


def test_not_found_runs_no_generator_and_allows_nothing(handbook):
    emb = get_embedder(handbook.embed_model)
    a = Answerer(handbook, ExtractiveGenerator(emb), embedder=emb)  # the shipped threshold
    ans = a.ask("Who painted the portrait in the lobby?")
    assert not ans.found and ans.text == NOT_FOUND and ans.generation is None
    assert len(ans.allowlist) == 0 and ans.to_dict()["candidates"]


def test_turns_scope_allowlists(handbook):
    a = _answerer(handbook)
    conv = Conversation()
    first = a.ask("Which port does the API server listen on?", conv)
    second = a.ask("How long are logs kept?", conv)
    assert first.allowlist.turn == 1 and second.allowlist.turn == 2
    assert set(first.allowlist.ids) != set(second.allowlist.ids)


def test_bad_questions_and_config():
    with pytest.raises(ValueError, match="redundancy"):
        AnswerConfig(redundancy="lots")
    with pytest.raises(ValueError, match="max_sources"):
        AnswerConfig(max_sources=0)
    with pytest.raises(ValueError, match="redundancy_budget_tokens"):
        AnswerConfig(redundancy_budget_tokens=0)
    with pytest.raises(ValueError, match="redundancy_max_facts"):
        AnswerConfig(redundancy_max_facts=-1)


class ScriptedGenerator:
    """Answers each question with a fixed text (a model's answer, without the model)."""

    name = "scripted"

    def __init__(self, answers: dict[str, str], paraphrase: str | None = None) -> None:
        self.answers = answers
        self.prompts: list[str] = []
        self.paraphrased: list[str] = []
        self._paraphrase = paraphrase

    def generate(self, question, sources, *, redundancy="", marker=None, require_citation=True):
        self.prompts.append(redundancy)
        return Generation(self.answers.get(question, ""), self.name)

    def paraphrase(self, text):
        self.paraphrased.append(text)
        return self._paraphrase


class RecordingGenerator(ScriptedGenerator):
    """Keeps the sources each question was answered from."""

    def __init__(self) -> None:
        super().__init__({})
        self.sources: list = []

    def generate(self, question, sources, **kw):
        self.sources.append(list(sources))
        return super().generate(question, sources, **kw)


def test_headings_take_no_source_slot(handbook):
    emb = get_embedder(handbook.embed_model)
    gen = RecordingGenerator()
    a = Answerer(handbook, gen, embedder=emb, config=AnswerConfig(verify=False, max_sources=50),
                 retrieve_config=RetrieveConfig(confidence_threshold=0.05))
    ans = a.ask("Which port does the API server listen on?")
    kinds = {u.id: u.kind for u in handbook.units_at_rows([h.row for h in ans.retrieval.hits])}
    assert "heading" in kinds.values()  # the premise: recall brought headings back
    assert gen.sources[0] and all(kinds[s.id] != "heading" for s in gen.sources[0])


def test_declining_is_not_found_nothing_confirmed_or_a_statement_that_the_answer_is_not_there():
    uid = "memo://kb/ops.deploy/x"
    for text in (NOT_FOUND, "", f"  [cite:{uid}] ", DROPPED, f"{DROPPED} {DROPPED}",
                 f"The sources do not mention a retention period [cite:{uid}].",
                 "I'm sorry, but I don't know. The context does not say.", "未找到相关信息。",
                 "That cannot be confirmed from the sources.", "There is no information about it in memory."):
        assert declines(text), text
    for text in ("Logs are kept for 30 days.",  # no citation, but an answer all the same
                 "The policy does not cover contractors.",  # an absence stated as the answer
                 "Error 404 means the page was not found.", "Signed documents do not include a date.",
                 f"{DROPPED} Logs are kept for 30 days [cite:{uid}].", "日志保留30天。"):
        assert not declines(text), text


def test_key_facts_match_whole_words_and_numbers():
    assert states("Yes, it is.", ["yes"]) and not states("My eyes are fine.", ["yes"])
    assert states("The limit is 2 GB.", ["2 GB"]) and not states("The limit is 12 GB.", ["2 gb"])
    assert not states("Upgrade to 2.4.1 now.", ["2.4"]) and states("Upgrade to 2.4.", ["2.4"])
    assert not states("It costs 1,200 USD.", ["200 USD"]) and states("It costs $1,200.", ["$1,200"])
    assert states("ERR_42 means the disk is full", ["err_42"]) and not states("ERR_420", ["ERR_42"])
    # CJK words are not spaced: a substring, but numbers still do not run into other digits
    assert states("日志保留30天。", ["30天"]) and states("由清华大学负责", ["清华大学"])
    assert not states("日志保留130天。", ["30天"])


def _port_unit(memory) -> str:
    return next(u.id for u in memory.units_of("kb", "ops.deploy") if "port 9090" in u.content)


def test_an_uncited_answer_is_answered_and_counts_as_a_hallucination(handbook):
    emb = get_embedder(handbook.embed_model)
    port = "Which port does the API server listen on?"
    painter = "Who painted the portrait in the lobby?"
    logs = "How long are logs kept?"
    gen = ScriptedGenerator({port: "The API server listens on port 9090.",  # right, but cites nothing
                             painter: "It was painted by Ada Lovelace.",   # memory has no answer
                             logs: "The sources do not say how long logs are kept."})
    queries = [AnswerQuery("port", port, "single", (("9090",),), ("ops.deploy",), ("port 9090",)),
               AnswerQuery("painter", painter, "unanswerable", ()),
               AnswerQuery("logs", logs, "single", (("14 days",),), ("faq",), ("14 days",))]
    # thresholds 0: this test is about what the generator's text counts as, not the baseline's refusal
    report = AnswerEval(handbook, gen, embedder=emb, baseline_thresholds={"dense": 0.0, "hybrid": 0.0}).run(
        queries, ["hybrid_rag"], redundancy_variants=False)
    m = report["methods"]["hybrid_rag"]
    refused = {o["qid"]: o["refused"] for o in report["outcomes"]}
    assert refused == {"port": False, "painter": False, "logs": True}
    # port: answered without a citation; painter: answered with no answer in memory; logs: declined
    assert m["hallucination_rate"] == pytest.approx(2 / 3)
    assert m["refusal_rate_answerable"] == 0.5 and m["refusal_rate_unanswerable"] == 0.0
    assert m["memory_accuracy"] == 0.0


def test_citation_recall_leaves_out_questions_whose_gold_units_do_not_resolve(handbook):
    emb = get_embedder(handbook.embed_model)
    port = "Which port does the API server listen on?"
    gen = ScriptedGenerator({port: f"The API server listens on port 9090 [cite:{_port_unit(handbook)}]."})
    queries = [AnswerQuery("port", port, "single", (("9090",),), ("ops.deploy",), ("port 9090",)),
               AnswerQuery("gone", "Which team owns billing?", "single", (("Kestrel",),), ("no.such.doc",),
                           ("Team Kestrel",))]
    ev = AnswerEval(handbook, gen, embedder=emb, baseline_thresholds={"dense": 0.0, "hybrid": 0.0})
    assert ev.gold_units(queries[1]) == set()
    m = ev.run(queries, ["hybrid_rag"], redundancy_variants=False)["methods"]["hybrid_rag"]
    assert m["citation_recall"] == 1.0 and m["citation_recall_questions"] == 1
    assert m["memory_accuracy"] == 0.5  # the second question is still scored for accuracy


def test_citing_a_sentence_group_cites_the_paragraph_statement_it_is_part_of(tmp_path):
    # A paragraph over the chunker's unit size is stored whole and as sentence groups: both hold the
    # answer, and an answer citing the group that states it has cited the statement.
    filler = " ".join(f"Rule {i} keeps the night shift log tidy and dated." for i in range(40))
    text = "# Ops\n\n" + filler + " The API server listens on port 9090 in production.\n"
    ingest(tmp_path, [Document("ops", text, "markdown")], embedder="hash-256", progress=False)
    with Memory(tmp_path) as memory:
        holding = [u for u in memory.units_of("kb", "ops") if "port 9090" in u.content]
        assert sorted(u.kind for u in holding) == ["paragraph", "sentence"]
        child = next(u.id for u in holding if u.kind == "sentence")
        port = "Which port does the API server listen on?"
        gen = ScriptedGenerator({port: f"The API server listens on port 9090 [cite:{child}]."})
        ev = AnswerEval(memory, gen, embedder=get_embedder(memory.embed_model),
                        baseline_thresholds={"dense": 0.0, "hybrid": 0.0})
        query = AnswerQuery("port", port, "single", (("9090",),), ("ops",), ("port 9090",))
        assert len(ev.gold_units(query)) == 2 and len(ev.gold_statements(query)) == 1
        m = ev.run([query], ["hybrid_rag"], redundancy_variants=False)["methods"]["hybrid_rag"]
    assert m["citation_recall"] == 1.0


@pytest.mark.parametrize("gold_text", [True, False], ids=["gold text", "answer only"])
def test_a_sentence_group_that_states_part_of_a_two_sentence_answer_holds_it(tmp_path, gold_text):
    # Groups of three sentences (about 400 characters, the target): the answer's two sentences end one
    # group and start the next, so neither group holds the whole answer, only the paragraph.
    pad = "and every entry is signed by the engineer on duty before the morning handover begins"
    said = [f"Rule {i} keeps the night shift log tidy, dated {pad}." for i in range(12)]
    said[2] = f"The API server listens on port 9090 in production, {pad}."
    said[3] = f"The staging server listens on port 9191 instead, {pad}."
    ingest(tmp_path, [Document("ops", "# Ops\n\n" + " ".join(said) + "\n", "markdown")], embedder="hash-256",
           progress=False)
    answer = said[2] + " " + said[3]
    with Memory(tmp_path) as memory:
        groups = [u for u in memory.units_of("kb", "ops") if u.kind == "sentence"]
        parts = [u.id for u in groups if said[2] in u.content or said[3] in u.content]
        assert len(parts) == 2 and not any(answer in u.content for u in groups)
        port = "Which ports do the servers listen on?"
        # each sentence quoted and cited to the group that states it; the key fact is the whole answer (as
        # a reading-comprehension answer is), which neither group states alone
        gen = ScriptedGenerator({port: f"{said[2]}[cite:{parts[0]}] {said[3]}[cite:{parts[1]}]"})
        ev = AnswerEval(memory, gen, embedder=get_embedder(memory.embed_model),
                        baseline_thresholds={"dense": 0.0, "hybrid": 0.0})
        # with the gold passage's text (a generated source), or only the answer (``queries_from_corpus``)
        query = AnswerQuery("ports", port, "single", ((answer,),), ("ops",), (answer,) if gold_text else ())
        m = ev.run([query], ["hybrid_rag"], redundancy_variants=False)["methods"]["hybrid_rag"]
    assert m["citation_precision"] == 1.0 and m["memory_accuracy"] == 1.0 and m["citation_recall"] == 1.0


def test_full_redundancy_passes_a_paraphrase_from_the_generator_once_per_unit(handbook):
    port = "Which port does the API server listen on?"
    gen = ScriptedGenerator({}, paraphrase="By default the API server uses port 9090.")
    emb = get_embedder(handbook.embed_model)
    a = Answerer(handbook, gen, embedder=emb, retrieve_config=RetrieveConfig(confidence_threshold=0.05),
                 config=AnswerConfig(redundancy="full", redundancy_budget_tokens=400))
    a.ask(port)
    a.ask(port)
    assert "Example question: " in gen.prompts[0] and port not in gen.prompts[0]
    assert "In other words: By default the API server uses port 9090 [cite:" in gen.prompts[0]
    assert gen.prompts[1] == gen.prompts[0] and len(gen.paraphrased) == 1  # the second came from the cache
    small = Answerer(handbook, gen, embedder=emb, retrieve_config=RetrieveConfig(confidence_threshold=0.05),
                     config=AnswerConfig(redundancy="list", redundancy_budget_tokens=30,
                                         redundancy_max_facts=1))
    small.ask(port)
    assert gen.prompts[-1].count("\n- ") == 1 and "In other words" not in gen.prompts[-1]


def test_answer_eval_runs_the_redundancy_variants_with_the_block_asked_for(handbook):
    port = "Which port does the API server listen on?"
    emb = get_embedder(handbook.embed_model)
    queries = [AnswerQuery("port", port, "single", (("9090",),), ("ops.deploy",), ("port 9090",))]
    for mode, marker in (("list", "\n- "), ("full", "Example question: ")):
        gen = ScriptedGenerator({port: "The API server listens on port 9090."})
        report = AnswerEval(handbook, gen, embedder=emb, baseline_thresholds={"dense": 0.0, "hybrid": 0.0}).run(
            queries, ["hybrid_rag"], redundancy_variants=True, redundancy_mode=mode)
        assert list(report["methods"]) == ["hybrid_rag", "hybrid_rag+redundancy"]
        assert report["redundancy_mode"] == mode
        off, on = gen.prompts
        assert off == "" and marker in on, (mode, on)
        assert ("Example question: " in on) == (mode == "full")
    with pytest.raises(ValueError, match="redundancy_mode 'off'"):
        AnswerEval(handbook, gen, embedder=emb).run(queries, ["hybrid_rag"], redundancy_mode="off")


def test_answer_eval_on_a_small_synthetic_base(tmp_path):
    generate(tmp_path / "synth", units_target=300, questions=40)
    for v in ("v1", "v2"):
        ingest(tmp_path / "mem", _docs(tmp_path / "synth" / "docs" / v), embedder="hash-256", progress=False)
    m = Memory(tmp_path / "mem")
    emb = get_embedder(m.embed_model)
    # baseline thresholds of 0: the baselines refuse nothing, whatever the shipped thresholds are
    ev = AnswerEval(m, ExtractiveGenerator(emb), embedder=emb, baseline_thresholds={"dense": 0.0, "hybrid": 0.0})
    qs = queries_from_synth(tmp_path / "synth" / "queries.jsonl")
    report = ev.run(qs)
    assert set(report["methods"]) == {"dense_rag", "hybrid_rag", "asmr", "asmr_verified"}
    for name, metrics in report["methods"].items():
        for key in ("memory_accuracy", "hallucination_rate", "refusal_rate_answerable",
                    "refusal_rate_unanswerable", "citation_precision", "citation_recall", "key_fact_recall"):
            assert 0.0 <= metrics[key] <= 1.0, (name, key)
    # baselines that refuse nothing answer every unanswerable question: each one is a hallucination
    base = report["methods"]["dense_rag"]
    assert base["refusal_rate_unanswerable"] == 0.0 and base["hallucination_rate"] >= report["types"][
        "unanswerable"] / report["questions"]
    # something is answered right, and gold units resolve from the gold texts
    assert report["methods"]["hybrid_rag"]["memory_accuracy"] > 0
    assert all(ev.gold_units(q) for q in qs if q.answerable)
    files = write_report(report, tmp_path / "report")
    # three tables: the metrics, answerable and unanswerable apart, accuracy by type; and at equal
    # refusal, dense RAG against each other refusing method, and each of them against it
    md = (tmp_path / "report" / "report.md").read_text()
    assert md.count("| dense_rag |") == 3 + 4 and md.count("| dense_rag | hybrid_rag |") == 1
    assert set(report["at_equal_refusal"]) == {"dense_rag", "hybrid_rag", "asmr_verified"}
    assert all(f.exists() and f.stat().st_size > 0 for f in files)
    m.close()


def test_cli_ask_chat_and_eval_answers(handbook, tmp_path, capsys):
    import json

    from asmr.cli import main
    mem = ["--memory", str(handbook.directory), "--generator", "extractive", "--confidence-threshold", "0.05"]
    assert main(["ask", "Which port does the API server listen on?", *mem, "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["found"] and "9090" in out["answer"] and out["citations"][0]["number"] == 1
    assert out["verification"]["counts"]["keep"] >= 1
    recall = {h["unit_id"]: h for h in out["recall"]}
    cited = recall[out["citations"][0]["unit_id"]]  # the cited unit came back with its score and path
    assert cited["score"] > 0 and cited["path"] and cited["path"][-1]["node"] == cited["unit_id"]
    assert main(["audit", "--memory", str(handbook.directory), "--last", "1", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)[0]["question"] == "Which port does the API server listen on?"
    assert main(["ask", "  ", *mem]) == 2
    assert main(["eval", "synth", "--out", str(tmp_path / "s"), "--units", "300", "--questions", "30",
                 "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["units_v2"] > 200
    assert main(["eval", "answers", "--synth", str(tmp_path / "s"), "--embedder", "hash-64", "--generator",
                 "extractive", "--methods", "hybrid_rag,asmr_verified", "--limit", "10", "--no-progress",
                 "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert set(report["methods"]) == {"hybrid_rag", "asmr_verified"} and report["questions"] == 10
    assert set(report["methods"]["hybrid_rag"]) >= {"memory_accuracy", "hallucination_rate", "p95_ms"}
    with Memory(tmp_path / "s" / "memory") as m:
        rows, generation = m.num_rows, m.generation
    # a second run reuses the memory as it is: v1 is not published over v2 again
    assert main(["eval", "answers", "--synth", str(tmp_path / "s"), "--generator", "extractive", "--methods",
                 "hybrid_rag", "--limit", "10", "--no-progress", "--json"]) == 0
    again = json.loads(capsys.readouterr().out)
    assert again["methods"]["hybrid_rag"]["memory_accuracy"] == report["methods"]["hybrid_rag"]["memory_accuracy"]
    with Memory(tmp_path / "s" / "memory") as m:
        assert (m.num_rows, m.generation) == (rows, generation)
    assert main(["eval", "answers", "--synth", str(tmp_path / "s"), "--methods", "bogus"]) == 2


def test_cli_chat_keeps_turns_and_resumes_a_conversation(handbook, tmp_path, capsys, monkeypatch):
    import io
    import json

    from asmr.cli import main
    conv = tmp_path / "conv.json"
    mem = ["--memory", str(handbook.directory), "--generator", "extractive", "--confidence-threshold", "0.05",
           "--no-audit", "--conversation", str(conv)]
    monkeypatch.setattr("sys.stdin", io.StringIO("Which port does the API server listen on?\n\n"
                                                 "How long are logs kept?\n"))
    assert main(["chat", *mem]) == 0
    out = capsys.readouterr().out
    cid = json.loads(conv.read_text())["id"]
    assert f"[turn {cid}/1]" in out and f"[turn {cid}/2]" in out and "9090 by default [1]" in out
    assert len(json.loads(conv.read_text())["turns"]) == 2  # the blank line is no turn
    monkeypatch.setattr("sys.stdin", io.StringIO("Which port does the API server listen on?\n"))
    assert main(["chat", *mem]) == 0
    assert f"[turn {cid}/3]" in capsys.readouterr().out
    assert len(json.loads(conv.read_text())["turns"]) == 3


def test_cli_bad_conversation_file_and_failing_generators_get_one_line_errors(handbook, tmp_path, capsys,
                                                                              monkeypatch):
    import io

    from asmr.cli import main
    mem = ["--memory", str(handbook.directory), "--confidence-threshold", "0.05", "--no-audit"]
    corrupt = tmp_path / "conv.json"
    corrupt.write_text('{"id": "c1", "turns": [')
    monkeypatch.setattr("sys.stdin", io.StringIO("Which port does the API server listen on?\n"))
    assert main(["chat", *mem, "--generator", "extractive", "--conversation", str(corrupt)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f"--conversation {corrupt}: cannot be resumed: not JSON" in err
    corrupt.write_text('{"id": "c1", "turns": [{"turn": 2, "scores": {}}]}')
    assert main(["chat", *mem, "--generator", "extractive", "--conversation", str(corrupt)]) == 2
    assert "turn 1 is not this conversation's turn 1" in capsys.readouterr().err
    # an endpoint nobody listens on (port 9 of this machine): the error names the generator and the reason
    dead = ["--generator", "openai", "--base-url", "http://127.0.0.1:9/v1", "--model", "m"]
    assert main(["ask", "Which port does the API server listen on?", *mem, *dead]) == 2
    err = capsys.readouterr().err
    assert err.startswith("asmr: generator openai: cannot reach http://127.0.0.1:9/v1")
    assert err.count("\n") == 1
    monkeypatch.setattr("sys.stdin", io.StringIO("Which port does the API server listen on?\n"))
    assert main(["chat", *mem, *dead]) == 2
    assert capsys.readouterr().err.startswith("asmr: generator openai: cannot reach")

    def unreadable():
        raise OSError("SmolLM2-135M-Instruct.Q4_1.gguf: unexpected end of file")
    monkeypatch.setattr("asmr.generate.local.load_smollm2", unreadable)
    assert main(["ask", "Which port does the API server listen on?", *mem, "--generator", "local"]) == 2
    assert capsys.readouterr().err == ("asmr: generator local: cannot load SmolLM2-135M: "
                                       "SmolLM2-135M-Instruct.Q4_1.gguf: unexpected end of file\n")


def test_cli_eval_answers_refuses_corpus_flags_with_synth(tmp_path, capsys):
    from asmr.cli import main
    with pytest.raises(SystemExit) as exc:
        main(["eval", "answers", "--synth", str(tmp_path), "--unanswerable", "0.2"])
    assert exc.value.code == 2
    assert "--unanswerable: only with --corpus/--queries" in capsys.readouterr().err
    with pytest.raises(SystemExit) as exc:
        main(["eval", "answers", "--synth", str(tmp_path), "--queries", str(tmp_path / "q.jsonl")])
    assert exc.value.code == 2 and "--queries: only with --corpus" in capsys.readouterr().err
    with pytest.raises(SystemExit) as exc:
        main(["ask", "q", "--redundancy-budget", "0"])
    assert exc.value.code == 2
    assert "argument --redundancy-budget: 0: must be at least 1" in capsys.readouterr().err


# Sources that disagree

def _memory(tmp_path, docs) -> Memory:
    ingest(tmp_path / "m", docs, embedder="hash-256", progress=False)  # one ingest: one date for all
    return Memory(tmp_path / "m")


def test_an_answer_from_disagreeing_sources_says_so_and_cites_both(tmp_path):
    from asmr.units.model import Document
    m = _memory(tmp_path, [
        Document("notes", "The metrics gateway listens on port 7001. It exports data every minute.", "text",
                 title="Network notes", source="notes"),
        Document("setup", "The metrics gateway listens on port 7002. Restart it after changes.", "text",
                 title="Gateway setup", source="setup")])
    with m:
        ans = _answerer(m).ask("Which port does the metrics gateway listen on?")
    assert ans.text.startswith("The sources disagree.")
    cited = {c.unit_id: c.text for c in ans.citations}
    assert len(ans.disagreement) == 2 and set(ans.disagreement) <= cited.keys()
    assert {"7001", "7002"} <= {v for uid in ans.disagreement for v in ("7001", "7002") if v in cited[uid]}
    assert ans.verification.counts["keep"] >= 2 and not ans.verification.counts["drop"]  # both pass the verifier
    assert ans.to_dict()["disagreement"] == list(ans.disagreement)
    assert not ans.refused


def test_a_chinese_question_gets_the_chinese_lead(tmp_path):
    from asmr.units.model import Document
    m = _memory(tmp_path, [Document("a", "值班工程师在十五分钟内响应告警。", "text", title="值班", source="a"),
                           Document("b", "值班工程师在三十分钟内响应告警。", "text", title="值班规定", source="b")])
    with m:
        ans = _answerer(m).ask("值班工程师多久响应告警？")
    assert ans.text.startswith("资料说法不一。") and len(ans.disagreement) == 2
    assert "十五" in ans.text and "三十" in ans.text


def test_sources_that_agree_or_one_dated_later_state_no_disagreement(tmp_path):
    from asmr.units.model import Document
    m = _memory(tmp_path, [
        Document("notes", "The metrics gateway listens on port 7001.", "text", title="Network notes",
                 source="notes", effective_date="2025-01-01"),
        Document("setup", "The metrics gateway listens on port 7002.", "text", title="Gateway setup",
                 source="setup", effective_date="2026-01-01")])
    with m:
        ans = _answerer(m).ask("Which port does the metrics gateway listen on?")
    assert ans.disagreement == () and "disagree" not in ans.text and "7002" in ans.text and "7001" not in ans.text


def test_the_current_owner_is_the_answer_not_the_changelog_s_first_one(tmp_path):
    from tests.engine.test_retrieve import owner_handbook
    owner_handbook(tmp_path / "m")
    with Memory(tmp_path / "m") as m:
        ans = _answerer(m).ask("Who owns the search service?")
    first = ans.text.split("[cite:")[0]
    assert "Lyra" in first and "Orion" not in first
    assert not any("owned by the Orion team" in c.text for c in ans.citations)


# What a reader of the plain answer sees (issue 22)

def test_standalone_asks_get_distinct_turn_ids(handbook):
    a = _answerer(handbook)
    first = a.ask("Which port does the API server listen on?")
    second = a.ask("Which port does the API server listen on?")
    assert first.allowlist.turn_id != second.allowlist.turn_id
    assert first.allowlist.turn_id.startswith("standalone-") and first.allowlist.turn_id.endswith("/1")
    assert first.verification.turn == first.allowlist.turn_id


def test_extractive_never_quotes_a_list_item_again_with_its_list(handbook):
    ans = _answerer(handbook).ask("What is the oldest kernel version a host may run for a deployment?")
    said = [" ".join(t.split()).lower() for t, _ in ans.sentences()]
    assert sum("kernel 5.15" in s for s in said) == 1, said


def test_a_revised_fact_says_what_it_was_and_until_when(handbook):
    ans = _answerer(handbook).ask("Which port does the API server listen on?")
    changed = [c for c in ans.citations if c.previous]
    assert changed and "9090" in changed[0].text
    assert "8080" in changed[0].previous["text"] and changed[0].previous["until"]
    assert handbook.unit(changed[0].previous["unit_id"]).status == "superseded"


class _SaysMore:
    """A generator that cites one allowed unit and adds a sentence of its own, uncited."""
    name = "says-more"

    def generate(self, question, sources, **_):
        port = next(s for s in sources if "listens on port 9090" in s.text)
        text = f"The API server listens on port 9090 [cite:{port.id}]. The moon is made of cheese."
        return Generation(text, self.name)


def test_an_uncited_sentence_is_listed_as_unconfirmed(handbook):
    emb = get_embedder(handbook.embed_model)
    low = RetrieveConfig(confidence_threshold=0.05)
    a = Answerer(handbook, _SaysMore(), embedder=emb, retrieve_config=low)
    ans = a.ask("Which port does the API server listen on?")
    assert ans.unconfirmed() == ["The moon is made of cheese."]
    d = ans.to_dict()
    assert "cheese" not in d["confirmed"] and "[1]" in d["confirmed"]
    unverified = Answerer(handbook, _SaysMore(), embedder=emb, config=AnswerConfig(verify=False),
                          retrieve_config=RetrieveConfig(confidence_threshold=0.05)).ask("Which port?")
    assert all(not ok for _, ok in unverified.sentences())  # nothing is confirmed without the verifier


def test_cli_ask_shows_what_is_not_confirmed_and_what_changed(handbook, capsys, monkeypatch):
    import asmr.generate
    from asmr.cli import common, main

    mem = ["--memory", str(handbook.directory), "--confidence-threshold", "0.05", "--no-audit"]
    monkeypatch.setattr(asmr.generate, "get_generator", lambda name, **_: _SaysMore())
    assert main(["ask", "Which port does the API server listen on?", *mem]) == 0
    out = capsys.readouterr().out
    answer, rest = out.split("Not confirmed by the memory", 1)
    assert "cheese" not in answer and "- The moon is made of cheese." in rest
    monkeypatch.undo()
    monkeypatch.setattr(common, "STARTED", common.STARTED - 30)  # as if starting had taken 30 s
    assert main(["ask", "Which port does the API server listen on?", *mem]) == 0
    out = capsys.readouterr().out
    assert "Not confirmed" not in out and "changed on" in out and "8080" in out
    last = out.strip().splitlines()[-1]  # the time waited, start-up included
    assert last.startswith("(") and " s, of which " in last and "starting" in last


def test_cli_ask_defaults_to_extractive_and_limits_the_question(handbook, capsys):
    from asmr.cli import build_parser, main

    assert build_parser().parse_args(["ask", "q"]).generator == "extractive"
    mem = ["--memory", str(handbook.directory)]
    assert main(["ask", "x" * 2001, *mem]) == 2
    err = capsys.readouterr().err
    assert err == "asmr: question: 2001 characters, longer than the limit of 2000 (--max-question)\n"
    assert main(["search", "x" * 51, *mem, "--max-question", "50"]) == 2
    assert "longer than the limit of 50" in capsys.readouterr().err


def test_cli_chat_skips_a_question_over_the_limit_and_goes_on(handbook, capsys, monkeypatch):
    import io

    from asmr.cli import main
    monkeypatch.setattr("sys.stdin", io.StringIO("y" * 60 + "\nWhich port does the API server listen on?\n"))
    assert main(["chat", "--memory", str(handbook.directory), "--confidence-threshold", "0.05", "--no-audit",
                 "--max-question", "50"]) == 0
    out, err = capsys.readouterr()
    assert "60 characters, longer than the limit of 50 (--max-question); not asked" in err
    assert out.count("[turn ") == 1 and "9090" in out


def test_an_extractive_answer_to_a_when_question_states_the_date_in_words(tmp_path):
    """The date a turn's relative time means, written out in the answer, and kept by the verifier: the
    unit holds it (the annotation ingest wrote, or the turn's stamp)."""
    from datetime import date

    from asmr.units.chat import render_turn
    from asmr.units.model import Document

    turns = [("Mirela", "Big news. Today I moved to Porto.", date(2023, 5, 8)),
             ("Tobias", "I adopted a cat called Mochi last week.", date(2023, 5, 8)),
             ("Oona", "I work as a nurse.", date(2023, 5, 9))]
    docs = [Document(f"t{i}", render_turn(day, who, said), "text", title=f"chat {i}", source=f"t{i}",
                     effective_date=day.isoformat()) for i, (who, said, day) in enumerate(turns)]
    ingest(tmp_path / "m", docs, embedder="hash-64", progress=False)
    with Memory(tmp_path / "m") as m:
        emb = get_embedder("hash-64")
        answerer = Answerer(m, ExtractiveGenerator(emb), config=AnswerConfig(refuse=False), embedder=emb)
        moved = answerer.ask("When did Mirela move to Porto?")
        assert "Today (8 May 2023) I moved to Porto" in moved.text and moved.citations
        adopted = answerer.ask("When did Tobias adopt Mochi?")
        assert "last week (2023-05-01 to 2023-05-07, the week of 1 May 2023)" in adopted.text
        assert adopted.verification.counts["keep"] >= 1 and adopted.verification.counts["drop"] == 0
        assert "May 2023" not in answerer.ask("Where did Mirela move to?").text  # asks no time: no dates added


class _CountingEmbedder:
    """The memory's hashing embedder, keeping every text it is asked to embed as stored text."""

    def __init__(self, inner):
        self.inner, self.name, self.dim, self.scripts = inner, inner.name, inner.dim, inner.scripts
        self.texts: list[str] = []

    def embed(self, texts, **kw):
        self.texts += list(texts)
        return self.inner.embed(texts, **kw)

    def embed_questions(self, texts):
        return self.inner.embed_questions(texts)


def test_an_answer_embeds_each_sentence_once_and_the_next_answer_reuses_them(handbook):
    """The extractive generator embeds the recalled units' sentences to rank them, the verifier the
    claims that quote them, the support check the sentences it compares them with: one cache per
    embedder serves all three, so no text is embedded twice, and asking again over the same units
    embeds nothing (the vectors and the answer are the same either way)."""
    emb = _CountingEmbedder(get_embedder(handbook.embed_model))
    low = RetrieveConfig(confidence_threshold=0.05)
    question = "Which port does the API server listen on?"
    first = Answerer(handbook, ExtractiveGenerator(emb), embedder=emb, retrieve_config=low).ask(question)
    assert first.found and first.verification.counts["keep"] >= 1
    assert emb.texts and len(emb.texts) == len(set(emb.texts))
    embedded = len(emb.texts)
    again = Answerer(handbook, ExtractiveGenerator(emb), embedder=emb, retrieve_config=low).ask(question)
    assert len(emb.texts) == embedded
    assert again.text == first.text
    plain = get_embedder(handbook.embed_model)
    alone = Answerer(handbook, ExtractiveGenerator(plain), embedder=plain, retrieve_config=low).ask(question)
    assert alone.text == first.text
