"""The unit graph: entities, edge kinds and weights, lifecycle, bounded degree, saved beside the store."""
from datetime import datetime, timedelta, timezone

import numpy as np
import pytest

from asmr.graph import EDGE_KINDS, GraphConfig, build_graph, load_or_build
from asmr.text.entities import mentions, title_key, unit_entities
from asmr.store import Memory, ingest
from asmr.units.model import Document


def test_mentions_find_names_codes_and_cjk():
    text = ("The Lantern is a 2006 film directed by Orrin Vale. It stars Tamsin Reed and "
            "Ilsa Marrowby. In 1979 Jean Moulin visited the Bank of the West; see ERR 4471, v2.3 and "
            "--port. "
            "他在《三体》中写道。")
    found = mentions(text)
    assert {"lantern", "orrin vale", "tamsin reed", "ilsa marrowby", "jean moulin",
            "bank of the west", "err 4471", "v2.3", "--port", "三体"} <= found
    assert not {"the", "it", "in", "1979", "orrin vale it"} & found
    assert title_key("Solby (harbour)") == "solby" and title_key("The Lantern Tide") == "lantern tide"
    # a number in a name is read whole: two releases are two names, not one "release 2"
    assert {"release 2 4", "windows 3 1"} <= mentions("Release 2.4 replaced Windows 3.1 in 1992.")
    assert "release 2 2" in mentions("Release 2.2 added it.") and "release 2" not in mentions("Release 2.2 added it.")
    assert "lantern tide" in unit_entities("He loved Vale's The Lantern Tide Returns trilogy.",
                                           {"lantern tide"})


def test_a_title_inside_a_longer_name_names_only_the_longest():
    titles = {"solby", "marrow lake", "marrow lake ferry", "lantern", "ilsa marrowby"}
    # a one-word title inside a longer name is not named; the whole name still is
    assert unit_entities("She moved to Port Solby Road in May.", titles) == {"port solby road"}
    # of titles inside one another, the longest
    found = unit_entities("Was the Marrow Lake Ferry built in Solby?", titles)
    assert "marrow lake ferry" in found and "marrow lake" not in found and "solby" in found
    # a leading common word and a possessive do not make a name longer
    assert {"solby", "lantern", "ilsa marrowby"} <= unit_entities(
        "Which harbour is Solby's? Ilsa Marrowby's report The Lantern says.", titles)


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
    ingest(memory, [doc("river", "Blue River is set in the city of Grenoble.", "Blue River")],
           embedder="hash-64")
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


def _edges(g, kinds=EDGE_KINDS):
    """(src name, dst name, kind, weight) of every edge whose kind is in ``kinds``; entity nodes by name."""
    src = np.repeat(np.arange(g.num_nodes), np.diff(g.indptr))
    name = lambda n: int(n) if n < g.num_rows else g.entities[n - g.num_rows]  # noqa: E731
    return {(name(s), name(d), EDGE_KINDS[k], round(float(w), 5))
            for s, d, k, w in zip(src, g.indices, g.kinds, g.weights) if EDGE_KINDS[k] in kinds}


def test_versions_in_other_documents_and_changelogs_get_temporal_edges(tmp_path):
    limit = "The upload limit of the {} gateway is {} megabytes per request."
    ingest(tmp_path, [
        Document("old", limit.format("Orion", 10), "text", title="Gateway 2025", effective_date="2025-01-10",
                 source="old"),
        Document("new", limit.format("Orion", 20), "text", title="Gateway 2026", effective_date="2026-02-01",
                 source="new"),
        Document("same-day", limit.format("Orion", 30), "text", title="Gateway copy",
                 effective_date="2026-02-01", source="same-day"),
        Document("other", limit.format("Vega", 40), "text", title="Vega notes", effective_date="2024-05-05",
                 source="other"),
        Document("changes", "Version 2.4 renamed --listen-port and raised the upload limit.", "text",
                 title="Changes", doc_type="changelog", effective_date="2026-03-01", source="changes"),
        Document("manual", "Start the server with --listen-port 8080.", "text", title="Manual",
                 source="manual"),
        Document("faq", "Use --listen-port to move the server off port 80.", "text", title="FAQ",
                 source="faq"),
        Document("other-changes", "Version 7.1 of the proxy dropped --listen-port.", "text",
                 title="Proxy changes", doc_type="changelog", effective_date="2026-04-01", source="proxy"),
    ], embedder="hash-64")
    with Memory(tmp_path) as m:
        docs = ("old", "new", "same-day", "other", "changes", "manual", "faq", "other-changes")
        row = {d: m.units_of("kb", d)[0].row for d in docs}
        cos = lambda a, b: float(m.vectors[row[a]] @ m.vectors[row[b]])  # noqa: E731
        alike = min(cos("old", "new"), cos("new", "same-day"), cos("old", "other"), cos("new", "other"))
        g = build_graph(m, GraphConfig(temporal_similarity=alike - 1e-3, semantic_floor=alike - 1e-3))
        assert g.edge(row["old"], row["new"])[0] == "temporal" == g.edge(row["new"], row["old"])[0]
        # Alike but of one date, or about another gateway: not versions of each other, plain neighbours.
        assert g.edge(row["new"], row["same-day"])[0] == "semantic"
        assert g.edge(row["old"], row["other"])[0] == "semantic"
        assert g.edge(row["new"], row["other"])[0] == "semantic"
        # The changelog unit reaches the units naming what it names in one hop, both ways.
        for d in ("manual", "faq"):
            assert g.edge(row["changes"], row[d])[0] == "temporal"
            assert g.edge(row[d], row["changes"])[0] == "temporal"
        assert g.edge(row["manual"], row["faq"]) is None  # two non-changelog units go through the entity node
        # Two changelogs naming one name are not one thing's history: no temporal edge between them.
        assert g.edge(row["other-changes"], row["manual"])[0] == "temporal"
        assert g.edge(row["changes"], row["other-changes"]) is None
        assert g.edge(row["other-changes"], row["changes"]) is None
        strict = build_graph(m, GraphConfig(temporal_similarity=1.01, changelog_edges=False))
        assert strict.edge(row["old"], row["new"])[0] == "semantic"
        assert strict.edge(row["changes"], row["manual"]) is None


def test_a_build_after_an_ingest_reuses_the_last_graph_and_equals_a_full_build(memory, monkeypatch):
    # This memory is small, so any change is a large share of it: let the build reuse the parts anyway.
    monkeypatch.setattr("asmr.graph.build.INCREMENTAL_MAX_CHANGE", 1.0)
    # Most pairs are candidates (not the many ties at cosine 0), so the semantic lists are exercised too.
    cfg = GraphConfig(semantic_floor=0.05)
    with Memory(memory) as m:
        first = load_or_build(m, cfg)
        assert first.reused == 0 and first.parts is not None
    ingest(memory, [
        doc("opera", "The Grand Theatre stages one opera a month.", "Grand Theatre"),  # a new title
        doc("singer", "Marie Dubois sang at the Grand Theatre of Lyon in 2001.", "Marie Dubois"),
        doc("river", "Blue River is set in the city of Grenoble.", "Blue River"),  # revised: a unit replaced
    ], embedder="hash-64")
    ingest(memory, [doc("venue", "Marie Dubois often sang at the Grand Theatre.", "Venue notes")],
           embedder="hash-64")
    with Memory(memory) as m:
        assert m.generation == 3 and not list(memory.glob("graph.3.*"))
        again = load_or_build(m, cfg)  # from generation 1's parts, two ingests back
        assert again.reused == len(first.parts.rows) - 1  # every unit but the revised one
        full = build_graph(m, cfg)
        assert full.reused == 0
        assert _edges(again) == _edges(full)
        assert again.entities == full.entities
        singer = m.units_of("kb", "singer")[0].row
        alice = m.units_of("kb", "alice")[0].row
        theatre = again.num_rows + again.entities.index("grand theatre")
        assert again.edge(singer, theatre)[0] == "entity"
        old_river = next(u for u in m.units_of("kb", "river", status="superseded")).row
        assert not any(old_river in (s, d) for s, d, *_ in _edges(again))
        assert again.edge(alice, again.num_rows + again.entities.index("blue river"))[0] == "entity"
        # Graphs older than the one before are removed (none was built at 2): the newest holds the parts.
        assert [p.name.split(".")[1] for p in memory.glob("graph.*.npz")] == ["3"]


def test_an_earlier_graph_is_not_reused_for_other_vectors_or_a_large_change(memory, tmp_path):
    from asmr.graph.build import GraphParts

    with Memory(memory) as m:
        first = build_graph(m)
        wrong = GraphParts(**{**first.parts.__dict__, "vectors": "another-model/64"})
        assert build_graph(m, previous=wrong).reused == 0
        assert build_graph(m, previous=first.parts).reused == len(first.parts.rows)
    other = tmp_path / "other"
    ingest(other, [doc(f"d{i}", f"Unit number {i} of a memory about Item{i}.") for i in range(8)],
           embedder="hash-64")
    with Memory(other) as m:  # 8 units, 7 of them new to these parts: too large a change to patch
        assert build_graph(m, previous=first.parts).reused == 0


def test_rows_with_all_words_intersects_postings(memory):
    with Memory(memory) as m:
        lyon = m.lexical.rows_with_all(["lyon"])
        both = m.lexical.rows_with_all(["city", "lyon"])
        assert set(both) <= set(lyon) and len(both) >= 1
        assert {u.row for u in m.units_of("kb", "lyon")} <= set(lyon)
        assert len(m.lexical.rows_with_all(["lyon", "nowhere"])) == 0


def test_text_the_embedder_cannot_read_gets_no_semantic_edges(tmp_path, monkeypatch):
    """An English model's cosines of Chinese text are noise: such units keep their entity and structure
    edges but no semantic ones, in a full build and in one that reuses the last graph's parts."""
    monkeypatch.setattr("asmr.graph.build.INCREMENTAL_MAX_CHANGE", 1.0)
    docs = [doc("a", "Blue River runs through Lyon in France."), doc("b", "Blue River is long and runs through Lyon."),
            doc("c", "蓝河流经法国的里昂市。"), doc("d", "蓝河很长，流经里昂。")]
    ingest(tmp_path, docs, embedder="hash-64")
    cfg = GraphConfig(semantic_floor=0.0)

    def semantic_rows(graph):
        return {r for s, d, kind, _ in _edges(graph) if kind in ("semantic", "temporal") for r in (s, d)}

    with Memory(tmp_path) as m:
        rows = {d.doc_id: m.units_of("kb", d.doc_id)[0].row for d in docs}
        assert semantic_rows(build_graph(m, cfg)) >= set(rows.values())  # hash-64 reads every script
        monkeypatch.setattr("asmr.graph.build.scripts_of", lambda name: frozenset({"latin"}))
        first = build_graph(m, cfg)
        assert semantic_rows(first) == {rows["a"], rows["b"]}
        assert sorted(first.parts.unread.tolist()) == sorted([rows["c"], rows["d"]])
        first.save(tmp_path / "parts.npz")
    ingest(tmp_path, [doc("e", "红河流经越南。"), doc("f", "Red River runs through Hanoi.")], embedder="hash-64")
    from asmr.graph.build import GraphParts
    with Memory(tmp_path) as m:
        again = build_graph(m, cfg, previous=GraphParts.load(tmp_path / "parts.npz"))
        assert again.reused == 4
        e, f = m.units_of("kb", "e")[0].row, m.units_of("kb", "f")[0].row
        assert set(again.parts.unread.tolist()) == {rows["c"], rows["d"], e}
        assert f in semantic_rows(again) and not {rows["c"], rows["d"], e} & semantic_rows(again)
        assert _edges(again) == _edges(build_graph(m, cfg))


def test_a_models_cosines_are_read_on_the_default_models_scale(memory, monkeypatch):
    """E5 scores unrelated passages about 0.75 where MiniLM scores 0.03: the semantic floor and the
    edge weights read each model's cosines mapped onto MiniLM's scale, so one floor means one thing."""
    from asmr.embed import models
    from asmr.embed.models import conflict_similarity_of, on_default_scale
    e5 = "multilingual-e5-small"
    raw = np.array([0.70, 0.80, 0.87, 0.95, 1.0], np.float32)
    mapped = on_default_scale(e5, raw)
    assert mapped.dtype == np.float32 and np.all(np.diff(mapped) > 0) and mapped[0] < 0.05 and mapped[-1] == 1.0
    assert on_default_scale("all-MiniLM-L6-v2", raw) is raw and on_default_scale("hash-64", raw) is raw
    assert float(on_default_scale(e5, np.float32(conflict_similarity_of(e5)))) == pytest.approx(0.85, abs=2e-3)
    cfg = GraphConfig(semantic_floor=0.3)
    with Memory(memory) as m:
        assert m.embed_model == "hash-64"
        semantic = [w for *_, kind, w in _edges(build_graph(m, cfg)) if kind == "semantic"]
        assert semantic
        monkeypatch.setitem(models._COSINE_KNOTS, "hash-64", ((0.0, 1.0), (0.0, 0.5)))  # every cosine halved: fewer edges above the floor, lighter
        halved = [w for *_, kind, w in _edges(build_graph(m, cfg)) if kind == "semantic"]
        assert len(halved) < len(semantic) and max(halved, default=0) < max(semantic)


def test_a_model_whose_cosines_do_not_carry_over_draws_no_neighbour_edges(memory, monkeypatch):
    """E5's cosines sit on MiniLM's scale in one kind of text and not in another (short turns pass any
    floor together): a memory of such a model has no semantic or version edges, and the edges that do not
    read the model (entity, structure) are the same."""
    from asmr.embed import models
    with Memory(memory) as m:
        before = build_graph(m, GraphConfig(semantic_floor=0.0))
        monkeypatch.setattr(models, "_NO_NEIGHBOUR_EDGES", frozenset({"hash-64"}))
        after = build_graph(m, GraphConfig(semantic_floor=0.0))
    assert _edges(before, ("semantic",)) and not _edges(after, ("semantic", "temporal"))
    assert _edges(after, ("entity", "structure")) == _edges(before, ("entity", "structure"))
    assert len(after.parts.sem_src) == 0


def _cooccur_docs():
    """Nadia Orlov and Kestrel Bay are named together by three documents; "Acme" by nearly all."""
    both = ["Nadia Orlov surveyed Kestrel Bay for Acme.", "Acme hired Nadia Orlov after Kestrel Bay flooded.",
            "Kestrel Bay honoured Nadia Orlov with an Acme medal."]
    other = ["Tomas Reyes repaired the Lumen Works roof for Acme.", "Acme sold Lumen Works to Tomas Reyes.",
             "Acme opened a depot at Kestrel Bay harbour."]
    return ([doc(f"both{i}", t) for i, t in enumerate(both)]
            + [doc(f"other{i}", t) for i, t in enumerate(other)]
            + [doc("lone", "Nadia Orlov lectured on tides in the winter."),
               doc("acme", "Acme keeps a warehouse of rope and tools.")])


def test_cooccurrence_edges_weigh_npmi_and_ignore_what_is_everywhere(tmp_path):
    ingest(tmp_path, _cooccur_docs(), embedder="hash-64")
    with Memory(tmp_path) as m:
        lone = m.units_of("kb", "lone")[0].row
        off = build_graph(m, GraphConfig())
        assert not (off.kinds == EDGE_KINDS.index("cooccur")).any()  # cooccur_beta 0: none built
        g = build_graph(m, GraphConfig(cooccur_beta=1.0, alpha=0.0, gamma=0.5))
        bay = g.num_rows + g.entities.index("kestrel bay")
        kind, w = g.edge(lone, bay)  # the lone unit does not name Kestrel Bay: associated through Nadia Orlov
        # 8 documents name entities; Orlov in 4, the Bay in 4, both in 3
        expected = np.log(3 * 8 / (4 * 4)) / -np.log(3 / 8)
        assert kind == "cooccur" and w == pytest.approx(expected + 0.5 * 0.5, rel=1e-5)
        acme = g.num_rows + g.entities.index("acme")
        assert g.edge(lone, acme) is None  # Acme is everywhere: no association with anything
        # fewer documents than the minimum count: no edge
        strict = build_graph(m, GraphConfig(cooccur_beta=1.0, cooccur_min_count=4))
        assert strict.edge(lone, bay) is None


def _answer(question, *cited, outcome="keep", kept=True, when=None):
    """An audit record of one sentence citing ``cited`` (now, unless ``when``)."""
    when = when or datetime.now(timezone.utc).isoformat(timespec="milliseconds")
    return {"time": when, "question": question, "text": "...",
            "audit": [{"outcome": outcome, "citations": [{"id": c, "kept": kept} for c in cited]}]}


def _usage(g):
    usage = g.kinds == EDGE_KINDS.index("usage")
    src = np.repeat(np.arange(g.num_nodes), np.diff(g.indptr))
    return {(int(s), int(d)): float(w) for s, d, w in zip(src[usage], g.indices[usage], g.weights[usage])}


def test_usage_edges_come_from_kept_citations_of_distinct_questions(memory):
    from asmr.graph import cited_together, learn
    from asmr.store import UsageLog

    with Memory(memory) as m:
        a, b, c = (m.units_of("kb", d)[0] for d in ("alice", "lyon", "river"))
        weak = _answer("q weak", a.id, c.id, outcome="weaken", kept=False)
        assert cited_together(weak) == [] and cited_together(_answer("q", a.id, b.id)) == [a.id, b.id]
        dropped = {**_answer("q drop", a.id), "audit": [
            {"outcome": "keep", "citations": [{"id": a.id, "kept": True}, {"id": c.id, "kept": False}]},
            {"outcome": "drop", "citations": [{"id": c.id, "kept": False}]}]}
        assert cited_together(dropped) == [a.id]
        with UsageLog(memory, create=True) as log:
            learn(m, log, [_answer("Who wrote it?", a.id, b.id), weak, dropped, weak], {})
        assert not _usage(load_or_build(m))  # one question is not enough (usage_min_count 2)
        with UsageLog(memory, create=True) as log:
            report = learn(m, log, [_answer("  who WROTE it? ", a.id, b.id),  # the same question again
                                    _answer("Where is it set?", b.id, a.id)], {"x.jsonl": 10})
            assert report["pairs"] == 1 and log.offsets() == {"x.jsonl": 10}
        g = load_or_build(m)
        edges = _usage(g)
        assert set(edges) == {(a.row, b.row), (b.row, a.row)} and 0 < edges[(a.row, b.row)] <= 0.9
        assert g.edge(a.row, b.row)[0] == "usage"
        base = load_or_build(m, GraphConfig(usage=False))
        for node in range(base.num_nodes):  # laid over the saved graph: every other edge as it was
            old = {(int(d), int(k)) for d, k in zip(base.indices[base.indptr[node]:base.indptr[node + 1]],
                                                    base.kinds[base.indptr[node]:base.indptr[node + 1]])}
            new = {(int(d), int(k)) for d, k in zip(g.indices[g.indptr[node]:g.indptr[node + 1]],
                                                    g.kinds[g.indptr[node]:g.indptr[node + 1]])}
            extra = {(b.row, EDGE_KINDS.index("usage"))} if node == a.row else \
                {(a.row, EDGE_KINDS.index("usage"))} if node == b.row else set()
            assert new == old | extra
        assert not _usage(load_or_build(m, GraphConfig(usage=False)))  # switched off
        with UsageLog(memory) as log:
            assert log.forget() == 1
        assert not _usage(load_or_build(m))


def test_a_poisoned_stream_moves_no_weight_past_its_cap(memory):
    from asmr.graph import learn
    from asmr.store import UsageLog

    with Memory(memory) as m:
        a, b = (m.units_of("kb", d)[0] for d in ("alice", "lyon"))
        contents = [(u.id, u.content, u.content_hash) for u in m.units_with_status("active")]
        with UsageLog(memory, create=True) as log:
            learn(m, log, [_answer("Is Alice the best?", a.id, b.id)] * 10_000, {})
            learn(m, log, [_answer("Only Alice", a.id)] * 10_000, {})
        assert not _usage(load_or_build(m))  # the same question 10,000 times counts once
        with UsageLog(memory, create=True) as log:
            learn(m, log, [_answer(f"Is Alice the best? ({i})", a.id, b.id) for i in range(10_000)], {})
        edges = _usage(load_or_build(m))
        cap = GraphConfig().usage_cap
        assert edges and max(edges.values()) <= cap + 1e-6
        assert max(_usage(load_or_build(m, GraphConfig(usage_cap=0.7))).values()) <= 0.7 + 1e-6
    with Memory(memory) as m:  # learning never changes what a unit says
        assert [(u.id, u.content, u.content_hash) for u in m.units_with_status("active")] == contents


def test_usage_edges_never_reach_retired_units(memory):
    from asmr.graph import learn
    from asmr.store import UsageLog

    with Memory(memory) as m:
        a, r = (m.units_of("kb", d)[0] for d in ("alice", "river"))
        with UsageLog(memory, create=True) as log:
            learn(m, log, [_answer(f"q{i}", a.id, r.id) for i in range(3)], {})
        assert set(_usage(load_or_build(m))) == {(a.row, r.row), (r.row, a.row)}
    ingest(memory, [doc("river", "Blue River is set in the city of Grenoble.", "Blue River")],
           embedder="hash-64")
    with Memory(memory) as m:
        assert m.unit(r.id).status == "superseded"
        g = load_or_build(m)
        assert all(r.row not in pair for pair in _usage(g))
        with UsageLog(memory) as log:  # learned after it was retired: not counted at all
            report = learn(m, log, [_answer(f"p{i}", a.id, r.id) for i in range(3)], {})
        assert report["inactive_citations"] == 3 and report["pairs"] == 0


def test_usage_counts_decay_with_time(memory):
    from asmr.graph import learn
    from asmr.store import UsageLog

    with Memory(memory) as m:
        a, b = (m.units_of("kb", d)[0] for d in ("alice", "lyon"))
        year_ago = (datetime.now(timezone.utc) - timedelta(days=365)).isoformat()
        with UsageLog(memory, create=True) as log:
            learn(m, log, [_answer(f"q{i}", a.id, b.id, when=year_ago) for i in range(10)], {})
        assert _usage(load_or_build(m, GraphConfig(usage_half_life_days=1000)))
        assert not _usage(load_or_build(m))  # 10 questions a year ago count 10 / 2**(365/90) < 2 now


def test_a_fold_that_fails_counts_nothing_and_reads_nothing(memory):
    from asmr.store import UsageLog

    def answers():
        yield "q1", 0.0, ["memo://kb/a/1", "memo://kb/b/2"]
        raise OSError("disk gone")

    with UsageLog(memory, create=True) as log:
        with pytest.raises(OSError):
            log.fold(answers(), {"2026-12-01.jsonl": 4096}, 86400.0)
        assert log.offsets() == {} and log.counts(0.0, 86400.0) == (0.0, {}, [])
