"""The unit graph: entities, edge kinds and weights, lifecycle, bounded degree, saved beside the store."""
import numpy as np
import pytest

from asmr.graph import EDGE_KINDS, GraphConfig, build_graph, load_or_build, mentions, title_key, unit_entities
from asmr.store import Memory, ingest
from asmr.units.model import Document


def test_mentions_find_names_codes_and_cjk():
    text = ("The Prestige is a 2006 film directed by Christopher Nolan. It stars Hugh Jackman and "
            "Christian Bale. In 1979 Jean Moulin visited the Bank of the West; see BWV 1033, v2.3 and --port. "
            "他在《三体》中写道。")
    found = mentions(text)
    assert {"prestige", "christopher nolan", "hugh jackman", "christian bale", "jean moulin",
            "bank of the west", "bwv 1033", "v2.3", "--port", "三体"} <= found
    assert not {"the", "it", "in", "1979", "christopher nolan it"} & found
    assert title_key("Lilu (mythology)") == "lilu" and title_key("The Dark Knight") == "dark knight"
    assert "dark knight" in unit_entities("He loved Nolan's The Dark Knight Rises trilogy.", {"dark knight"})


def doc(doc_id, text, title=None, fmt="text"):
    return Document(doc_id, text, fmt, title=title or doc_id, source=doc_id, path=f"{doc_id}.md")


@pytest.fixture()
def memory(tmp_path):
    ingest(tmp_path, [
        doc("alice", "Alice Smith wrote the novel Blue River in 1998.", "Alice Smith"),
        doc("river", "Blue River is set in the city of Lyon during a long winter.", "Blue River"),
        doc("lyon", "Lyon is a city in France known for its food.", "Lyon"),
        doc("guide", "# Setup\n\nInstall it first:\n\n- Download.\n- Run the installer.\n\nSee section 2.\n\n"
                     "## 2. Options\n\nOptions live in a file.", "Guide", fmt="markdown"),
    ], embedder="hash-64")
    return tmp_path


def test_title_mentions_link_documents_through_entity_nodes(memory):
    with Memory(memory) as m:
        g = build_graph(m, GraphConfig())
        alice = m.units_of("kb", "alice")[0].row
        river = m.units_of("kb", "river")[0].row
        node = g.num_rows + g.entities.index("blue river")
        kind, w = g.edge(alice, node)
        assert kind == "entity" and 0 < w <= 1
        assert g.edge(node, river)[0] == "entity"  # the document titled "Blue River" owns it
        assert g.edge(river, g.num_rows + g.entities.index("lyon"))[0] == "entity"


def test_structure_edges_and_section_references(memory):
    with Memory(memory) as m:
        g = build_graph(m)
        units = {u.content: u for u in m.units_of("kb", "guide")}
        lst, item = units["Install it first:\n\n- Download.\n- Run the installer."], units["Download."]
        assert g.edge(lst.row, item.row)[0] == "structure" and g.edge(item.row, lst.row)[0] == "structure"
        ref, heading = units["See section 2."], units["2. Options"]
        assert g.edge(ref.row, heading.row) is not None


def test_weights_follow_the_formula_and_degree_is_bounded(memory):
    with Memory(memory) as m:
        g = build_graph(m, GraphConfig(max_degree=2, alpha=0.0, beta=0.0, gamma=0.5))
        assert (np.diff(g.indptr) <= 2).all()
        prior = np.array([GraphConfig().prior[k] for k in EDGE_KINDS])
        np.testing.assert_allclose(g.weights, 0.5 * prior[g.kinds], rtol=1e-6)
        full = build_graph(m)
        assert ((full.weights >= 0) & (full.weights <= 1)).all()
        assert full.indices.max() < full.num_nodes and len(full.kinds) == full.num_edges


def test_retired_units_have_no_edges(memory):
    ingest(memory, [doc("river", "Blue River is set in the city of Grenoble.", "Blue River")], embedder="hash-64")
    with Memory(memory) as m:
        g = build_graph(m)
        old = next(u for u in m.units_of("kb", "river", status="superseded"))
        assert g.indptr[old.row + 1] == g.indptr[old.row]
        assert old.row not in set(g.indices.tolist())


def test_graph_is_saved_per_generation_and_reused(memory):
    with Memory(memory) as m:
        g = load_or_build(m)
        files = list(memory.glob("graph.1.*.npz"))
        assert len(files) == 1
        again = load_or_build(m)
        np.testing.assert_array_equal(again.indices, g.indices)
        assert again.entities == g.entities
