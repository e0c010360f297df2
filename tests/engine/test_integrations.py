"""The LangChain and LlamaIndex retrievers: the engine's own result, as each framework's objects."""
import asyncio
import subprocess
import sys
import threading
from dataclasses import asdict
from pathlib import Path

import pytest

from asmr.embed import get_embedder
from asmr.retrieve import RetrieveConfig, Retriever
from asmr.store import Memory, MemoryStateError, Writer, ingest
from asmr.units.model import Document
from asmr.units.read import read_path

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
# refusal is calibrated for MiniLM; with hashing vectors a lower bar keeps these questions answerable
CONFIG = RetrieveConfig(confidence_threshold=0.25)  # hashing vectors: confidences sit low
QUESTIONS = ["What does release 2.3 add?", "Which port does the API server listen on?",
             "Which kernel version does the host need?"]
NONSENSE = "purple elephant quantum banana"
MISSING = "{} is not installed (the test extra has it)"


def _docs(root: Path):
    return [read_path(p, root=root) for p in sorted(root.rglob("*")) if p.is_file()]


@pytest.fixture(scope="module")
def handbook(tmp_path_factory):
    """The bundled handbook, then its revision: superseded units stay in the store, not in recall."""
    d = tmp_path_factory.mktemp("hb")
    ingest(d, _docs(EXAMPLES / "handbook"), embedder="hash-256", progress=False)
    ingest(d, _docs(EXAMPLES / "handbook-v2"), embedder="hash-256", progress=False)
    return d


class LangChain:
    name = "langchain"

    def __init__(self):
        pytest.importorskip("langchain_core", reason=MISSING.format("langchain-core"))
        from asmr.integrations.langchain import AsmrRetriever
        self.cls = AsmrRetriever

    def query(self, r, question):
        return [(d.id, d.page_content, d.metadata, d.metadata["score"]) for d in r.invoke(question)]

    def aquery(self, r, question):
        return [(d.id, d.page_content, d.metadata, d.metadata["score"])
                for d in asyncio.run(r.ainvoke(question))]


class LlamaIndex:
    name = "llamaindex"

    def __init__(self):
        pytest.importorskip("llama_index.core", reason=MISSING.format("llama-index-core"))
        from asmr.integrations.llamaindex import AsmrRetriever
        self.cls = AsmrRetriever

    def query(self, r, question):
        return [(n.node.node_id, n.node.text, n.node.metadata, n.score) for n in r.retrieve(question)]

    def aquery(self, r, question):
        return [(n.node.node_id, n.node.text, n.node.metadata, n.score)
                for n in asyncio.run(r.aretrieve(question))]


@pytest.fixture(params=[LangChain, LlamaIndex], ids=lambda c: c.name)
def fw(request):
    return request.param()


def _search(memory_dir, question, k, config=CONFIG):
    with Memory(memory_dir) as m:
        result = Retriever(m, get_embedder(m.embed_model), config).search(question, k)
        return result, {u.id: u for u in m.units_at_rows([h.row for h in result.hits])}


def test_results_are_the_engines_with_addresses_scores_and_paths(fw, handbook):
    with fw.cls.from_directory(handbook, k=6, config=CONFIG) as r, Memory(handbook) as m:
        for question in QUESTIONS:
            result, _ = _search(handbook, question, 6)
            assert result.found, question
            got = fw.query(r, question)
            assert [g[0] for g in got] == [h.unit_id for h in result.hits]  # same ids, same order
            assert len(got) == 6
            for rank, ((uid, text, md, score), hit) in enumerate(zip(got, result.hits), 1):
                unit = m.unit(uid)
                assert uid.startswith(f"memo://{unit.kb}/{unit.doc_id}/") and md["id"] == uid
                assert unit.status == "active"
                assert text == unit.content
                assert score == md["score"] == hit.score
                assert md["rank"] == rank and md["hop"] == hit.hop and md["seed"] == hit.seed
                assert md["similarity"] == hit.similarity and md["path_strength"] == hit.strength
                assert md["recall_path"] == [asdict(p) for p in hit.path]
                assert md["recall_path"][-1]["node"] == uid and md["recall_path"][0]["edge_kind"] is None
                assert (md["kb"], md["doc_id"], md["doc_version"], md["kind"]) == \
                    (unit.kb, unit.doc_id, unit.doc_version, unit.kind)
                assert md["section_path"] == list(unit.section_path)
                assert (md["offset_start"], md["offset_end"]) == (unit.offset_start, unit.offset_end)
                assert md["effective_at"] == unit.effective_at
                assert md["found"] is True and md["reason"] == "" and md["confidence"] == result.confidence
            # the engine's order: scores fall, except where an older alternative follows its newer unit
            main = [g[3] for g in got if g[2]["alternative_to"] is None]
            assert main == sorted(main, reverse=True)


def test_recall_path_through_the_graph(fw, tmp_path):
    corpus = [("alice", "Alice Smith",
               "Alice Smith is a novelist. Alice Smith wrote the novel Blue River in 1998."),
              ("river", "Blue River", "Blue River is set in the city of Lyon during a long winter."),
              ("bob", "Bob Jones", "Bob Jones is a painter who lives in Oslo.")]
    ingest(tmp_path, [Document(d, t, "text", title=title, source=d) for d, title, t in corpus],
           embedder="hash-64", progress=False)
    config = RetrieveConfig(seeds=1, k=5, confidence_threshold=0.0)
    with fw.cls.from_directory(tmp_path, config=config) as r:
        got = {g[0].split("/")[3]: g[2] for g in fw.query(r, "Who wrote the novel by Alice Smith?")}
    river = got["river"]  # not a seed: reached through the entity "blue river"
    assert river["hop"] == 2 and not river["seed"]
    path = river["recall_path"]
    assert [p["node"] for p in path] == [got["alice"]["id"], "entity 'blue river'", river["id"]]
    assert path[1]["edge_kind"] == "entity" and 0 < path[1]["edge_weight"] <= 1


def test_not_found_is_empty_or_marked_candidates(fw, handbook):
    result, _ = _search(handbook, NONSENSE, 4)
    assert not result.found and result.hits
    with fw.cls.from_directory(handbook, k=4, config=CONFIG) as r:
        assert fw.query(r, NONSENSE) == []  # the system's refusal
    with fw.cls.from_directory(handbook, k=4, config=CONFIG, include_not_found=True) as r:
        got = fw.query(r, NONSENSE)
    assert [g[0] for g in got] == [h.unit_id for h in result.hits]
    assert all(md["found"] is False and md["reason"] == result.reason and "confidence" in md["reason"]
               for _, _, md, _ in got)


def test_async_and_threads_give_the_same_result(fw, handbook):
    with fw.cls.from_directory(handbook, k=5, config=CONFIG) as r:
        want = [fw.query(r, q) for q in QUESTIONS]
        assert [fw.aquery(r, q) for q in QUESTIONS] == want
        out = [None] * 6

        def work(i):
            out[i] = fw.query(r, QUESTIONS[i % 3])

        threads = [threading.Thread(target=work, args=(i,)) for i in range(6)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert out == want * 2


def test_borrowed_memory_stays_open_and_k_defaults_to_config(fw, handbook):
    with Memory(handbook) as m:
        r = fw.cls(m, config=RetrieveConfig(k=3, confidence_threshold=0.05))
        assert len(fw.query(r, QUESTIONS[0])) == 3
        r.close()
        assert m.unit(fw.query(r, QUESTIONS[1])[0][0]).status == "active"  # still open


def test_reopen_moves_to_the_newest_ingest(fw, tmp_path):
    ingest(tmp_path, _docs(EXAMPLES / "handbook"), embedder="hash-256", progress=False)
    with fw.cls.from_directory(tmp_path, k=8, config=CONFIG) as r:
        before = [g[0] for g in fw.query(r, QUESTIONS[0])]
        ingest(tmp_path, _docs(EXAMPLES / "handbook-v2"), embedder="hash-256", progress=False)
        assert [g[0] for g in fw.query(r, QUESTIONS[0])] == before  # its snapshot has not moved
        r.reopen()
        after = [g[0] for g in fw.query(r, QUESTIONS[0])]
    result, _ = _search(tmp_path, QUESTIONS[0], 8)
    assert after == [h.unit_id for h in result.hits]
    with Memory(tmp_path) as m:
        assert all(m.unit(uid).status == "active" for uid in after)
        assert any(m.unit(uid).status == "superseded" for uid in before)


def test_clear_errors(fw, tmp_path, handbook):
    with pytest.raises(MemoryStateError, match="no such directory; run `asmr ingest`"):
        fw.cls.from_directory(tmp_path / "nowhere")
    with pytest.raises(MemoryStateError, match="no memory.sqlite here"):
        fw.cls.from_directory(tmp_path)
    with Writer(tmp_path / "empty", embedder="hash-64", progress=False):
        pass
    with pytest.raises(MemoryStateError, match="empty; run `asmr ingest` first"):
        fw.cls.from_directory(tmp_path / "empty")
    with pytest.raises((TypeError, ValueError), match="RetrieveConfig"):
        fw.cls.from_directory(handbook, config={"k": 3})
    with pytest.raises(ValueError, match="k must be at least 1"):
        fw.cls.from_directory(handbook, k=0)
    with fw.cls.from_directory(handbook) as r, pytest.raises(ValueError, match="question: empty"):
        fw.query(r, "  ")


def test_llamaindex_node_shows_only_the_address_to_an_llm(handbook):
    pytest.importorskip("llama_index.core", reason=MISSING.format("llama-index-core"))
    from llama_index.core.schema import MetadataMode

    from asmr.integrations.llamaindex import AsmrRetriever
    with AsmrRetriever.from_directory(handbook, k=3, config=CONFIG) as r:
        node = r.retrieve(QUESTIONS[1])[0].node
    llm = node.get_content(metadata_mode=MetadataMode.LLM)
    assert f"id: {node.node_id}" in llm and "recall_path" not in llm and node.text in llm
    assert node.get_content(metadata_mode=MetadataMode.EMBED) == node.text
    assert (node.start_char_idx, node.end_char_idx) == \
        (node.metadata["offset_start"], node.metadata["offset_end"])


def test_importing_the_package_loads_no_framework():
    code = ("import sys, asmr.integrations, asmr.integrations.common; "
            "assert not any(m.split('.')[0] in ('langchain_core', 'llama_index') for m in sys.modules)")
    subprocess.run([sys.executable, "-c", code], check=True, timeout=60)
