"""The unit graph: weighted edges between active units and the entities they name, as CSR arrays.

Nodes ``0 .. num_rows-1`` are unit rows (only active units get edges);
nodes ``num_rows ..`` are entities. Edge kinds, each with its own evidence:

- ``semantic``: a unit and its nearest neighbours by cosine (faiss), above a floor; none for a
  unit whose text is mostly in scripts the embedding model does not read (an English model's
  cosines of Chinese text are noise, and spreading along them outranks what BM25 found);
- ``structure``: list/table/paragraph parent and child, neighbouring units of
  one document, a cross-reference ("see section 4", a link to another file);
- ``entity``: a unit and an entity it names, or the title of its own document.
  Units that name the same entity, or a unit that names another document's
  title and that document's units, are two hops apart through it;
- ``temporal``: two versions of one statement (semantic neighbours of different
  documents, nearly alike, naming a common entity node, with different effective
  dates), and a changelog unit and the units of other documents that name what
  it names (not another changelog's: two change notes naming one system are not one
  statement's history, and activation through them reached other systems' notes). A unit and its
  own predecessor need no edge: the predecessor is superseded, so it has none,
  and the store's ``superseded_by`` pointer gives it (``Hit.previous_version``);
- ``cooccur``: a unit and an entity it does not name that co-occurs, across documents, with the ones
  it names more than chance: normalised PMI ``ln(c_ab N / (c_a c_b)) / -ln(c_ab / N)`` over the N
  documents (an entity everywhere has PMI 0 with everything), at least ``cooccur_floor``, in at least
  ``cooccur_min_count`` documents. The edge goes to the entity's node, and through it, one hop on, to
  the units naming it: one edge per (unit, entity) where edges to each of those units would be
  ``max_entity_units`` times as many. Each unit keeps its ``cooccur_k`` strongest;
- ``usage``: units cited together in kept citations of verified answers (``usage.py``, learned by
  ``asmr graph learn``); not built here but laid over the saved graph when it is loaded.

Every edge weighs ``alpha * cosine + beta * specificity + gamma * prior[kind]`` (``cooccur_beta *
NPMI`` in place of the middle term for co-occurrence edges, ``usage_beta * NPMI`` for usage edges)
clipped to [0, 1], where cosine is that of the two units' vectors (unit-unit
edges), and specificity, for an entity named by ``df`` units, is
``1 - ln(df) / ln(max_entity_units)`` (a pointwise-mutual-information weight:
an entity that co-occurs with everything says little); entities named by more
than ``max_entity_units`` units, or by one, get no node. Each node keeps its
``max_degree`` strongest edges, so the graph stays sparse as the memory grows.

A build is incremental when the graph of an earlier generation is on disk
(``load_or_build``): its per-unit parts (each unit's entity keys and semantic
neighbours) are reused for the units still active, and only the new units are
read, scanned for names and searched for neighbours, plus the units that may
name a title added or dropped since. Structure, entity nodes, weights and
pruning are then assembled over the whole memory as in a full build, so those
edges are the same either way. Semantic neighbours of an unchanged unit are its
earlier ones still active, and the new units that find it among their own
nearest (``2 * semantic_k``): the full build's lists where the neighbour search
is symmetric enough, which exact (flat) search of a small change mostly is.
Past ``INCREMENTAL_MAX_CHANGE`` of the memory changed, a build starts afresh.
"""
from __future__ import annotations

import hashlib
import json
import math
import os
from array import array
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path

import numpy as np

from asmr_kernels import CSRGraph

from ..embed.models import draws_neighbour_edges, on_default_scale, scripts_of
from ..text.entities import title_key, unit_entities
from ..text.scripts import ALL_SCRIPTS, READ_FOR_COSINE, readable_share
from ..text.words import tokenize

EDGE_KINDS = ("semantic", "structure", "entity", "temporal", "cooccur", "usage")
# Entities of one document paired for co-occurrence counts: its most specific (bounds a long
# document's pairs).
COOCCUR_DOC_ENTITIES = 32
# Fields that weigh the learned (usage) edges laid over a saved graph: they do not name its file.
USAGE_FIELDS = ("usage", "usage_beta", "usage_cap", "usage_min_count", "usage_half_life_days", "usage_k",
                "usage_max_units")
# Share of the active units (new plus retired) up to which a build reuses the last graph's parts.
INCREMENTAL_MAX_CHANGE = 0.25
# raise when the same config would give another graph (3: no semantic edge of unread text;
# 4: co-occurrence edges, and the usage fields left out of the key; 5: cosines on the default model's scale;
# 6: no temporal edge between two changelogs; 7: entity keys and words with Traditional Han folded to
# Simplified; 8: no neighbour edges from E5's cosines)
BUILDER_VERSION = 8


@dataclass(frozen=True)
class GraphConfig:
    alpha: float = 0.6  # weight of the cosine of the two units
    beta: float = 0.6  # weight of the entity's specificity
    gamma: float = 0.4  # weight of the edge kind's prior
    prior: dict = field(default_factory=lambda: {"semantic": 0.5, "structure": 1.0, "entity": 1.0,
                                                 "temporal": 1.0, "cooccur": 0.5, "usage": 0.5})
    semantic_k: int = 10
    semantic_floor: float = 0.6
    temporal_similarity: float = 0.85  # neighbours this alike, of other documents and dates: versions
    changelog_edges: bool = True  # changelog units to the other documents' units naming what they name
    semantic_ef_search: int = 32  # HNSW breadth for the neighbour self-search (96 took 85 % of a build)
    max_entity_units: int = 64
    max_degree: int = 64
    # Co-occurrence edges (module docstring): weight of their NPMI; 0 builds none.
    cooccur_beta: float = 0.0
    cooccur_min_count: int = 2  # documents naming both entities, at least
    cooccur_floor: float = 0.2  # NPMI, at least
    cooccur_k: int = 4  # co-occurrence edges per unit, at most
    # Usage edges learned from verified answers (``usage.py``). False: recall reads none (switched off).
    usage: bool = True
    usage_beta: float = 0.6  # weight of their NPMI
    usage_cap: float = 0.9  # no usage edge weighs more, however often its units are cited together
    usage_min_count: float = 2.0  # distinct questions citing both, decayed by whole days, at least
    usage_half_life_days: float = 90.0  # a co-citation counts half after this long
    usage_k: int = 8  # usage edges per unit, at most
    usage_max_units: int = 8  # units of one answer counted (its first cited): bounds one answer's pairs

    def key(self) -> str:
        """Names the graph files built with this config by this builder (a saved graph of an older
        builder is not read: it lacks edge kinds or the parts an incremental build needs). The usage
        fields do not: those edges are laid over the saved graph when it is loaded."""
        described = {k: v for k, v in asdict(self).items() if k not in USAGE_FIELDS}
        described["prior"] = {k: v for k, v in self.prior.items() if k != "usage"}
        described["builder"] = BUILDER_VERSION
        return hashlib.blake2b(json.dumps(described, sort_keys=True).encode(), digest_size=4).hexdigest()


@dataclass
class GraphParts:
    """What a build found per unit, which the next generation's build reuses for units still active.

    ``rows`` are the active unit rows, ascending; the entity keys of ``rows[i]`` are
    ``vocab[ids[ptr[i]:ptr[i + 1]]]``, found with ``titles`` as the document titles.
    ``sem_src -> sem_dst`` (cosine ``sem_cos``) are the semantic neighbour pairs; ``unread`` the rows
    whose text is mostly in scripts the embedding model does not read (``asmr.text.scripts``).
    """
    rows: np.ndarray
    ptr: np.ndarray
    ids: np.ndarray
    vocab: list[str]
    titles: list[str]
    sem_src: np.ndarray
    sem_dst: np.ndarray
    sem_cos: np.ndarray
    vectors: str  # "<embed model>/<dim>": the neighbours hold only for the same vectors
    unread: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))

    def keys_at(self, i: int) -> list[str]:
        return [self.vocab[j] for j in self.ids[self.ptr[i]:self.ptr[i + 1]]]

    def arrays(self) -> dict:
        narrow = np.int32 if not len(self.rows) or self.rows[-1] < 2**31 else np.int64  # 10 pairs a unit
        return {"p_rows": self.rows, "p_ptr": self.ptr, "p_ids": self.ids, "p_vocab": _join(self.vocab),
                "p_titles": _join(self.titles), "p_sem_src": self.sem_src.astype(narrow),
                "p_sem_dst": self.sem_dst.astype(narrow),
                "p_sem_cos": self.sem_cos, "p_vectors": np.array(self.vectors),
                "p_unread": self.unread.astype(narrow)}

    @classmethod
    def load(cls, path: Path) -> "GraphParts | None":
        """The parts saved with a graph file; None if it has none (or cannot be read)."""
        try:
            with np.load(path) as z:
                if "p_rows" not in z.files:
                    return None
                return cls(z["p_rows"], z["p_ptr"], z["p_ids"], _split(z["p_vocab"]), _split(z["p_titles"]),
                           z["p_sem_src"].astype(np.int64), z["p_sem_dst"].astype(np.int64), z["p_sem_cos"],
                           str(z["p_vectors"]), z["p_unread"].astype(np.int64))
        except (OSError, ValueError, KeyError):
            return None


def _join(keys: list[str]) -> np.ndarray:
    # One blob, not a fixed-width string array: a million keys would take the longest one's width each.
    return np.frombuffer("\n".join(keys).encode("utf-8", "surrogatepass"), np.uint8)


def _split(blob: np.ndarray) -> list[str]:
    text = blob.tobytes().decode("utf-8", "surrogatepass")
    return text.split("\n") if text else []


@dataclass
class UnitGraph:
    num_rows: int
    indptr: np.ndarray
    indices: np.ndarray
    weights: np.ndarray
    kinds: np.ndarray  # uint8 index into EDGE_KINDS, per edge
    entities: list[str]  # name of node num_rows + i
    config: GraphConfig
    parts: GraphParts | None = None  # set by a build, for the next one; not read back by load()
    reused: int = 0  # units whose parts this build took from an earlier graph (0: a full build)
    _csr: CSRGraph | None = None
    _learned: bool | None = None

    @property
    def num_nodes(self) -> int:
        return self.num_rows + len(self.entities)

    @property
    def num_edges(self) -> int:
        return int(self.indptr[-1])

    @property
    def csr(self) -> CSRGraph:
        if self._csr is None:
            self._csr = CSRGraph(self.indptr, self.indices, self.weights, num_nodes=self.num_nodes)
        return self._csr

    @property
    def learned(self) -> bool:
        """Whether the graph holds edges learned from use (``usage``), read once."""
        if self._learned is None:
            self._learned = bool(np.any(self.kinds == EDGE_KINDS.index("usage")))
        return self._learned

    def edge(self, src: int, dst: int) -> tuple[str, float] | None:
        """Kind and weight of the edge src -> dst, if there is one."""
        lo, hi = int(self.indptr[src]), int(self.indptr[src + 1])
        hit = np.flatnonzero(self.indices[lo:hi] == dst)
        if not len(hit):
            return None
        e = lo + int(hit[0])
        return EDGE_KINDS[self.kinds[e]], float(self.weights[e])

    def node_name(self, node: int) -> str:
        return f"row {node}" if node < self.num_rows else f"entity '{self.entities[node - self.num_rows]}'"

    def save(self, path: Path) -> None:
        tmp = path.with_name(path.name + ".tmp.npz")
        np.savez(tmp, num_rows=self.num_rows, indptr=self.indptr, indices=self.indices, weights=self.weights,
                 kinds=self.kinds, entities=np.array(self.entities, dtype=object).astype(str),
                 config=json.dumps(asdict(self.config)), **(self.parts.arrays() if self.parts else {}))
        os.replace(tmp, path)

    @classmethod
    def load(cls, path: Path) -> "UnitGraph":
        with np.load(path) as z:
            config = GraphConfig(**json.loads(str(z["config"])))
            return cls(int(z["num_rows"]), z["indptr"], z["indices"], z["weights"], z["kinds"],
                       [str(e) for e in z["entities"]], config)

    def with_edges(self, src: np.ndarray, dst: np.ndarray, weights: np.ndarray, kind: str) -> "UnitGraph":
        """A copy with the edges ``src[i] -> dst[i]`` of ``kind`` added: of one (src, dst) the strongest
        edge stays, and each node touched keeps its ``max_degree`` strongest. The rows no new edge
        leaves keep their edges as they are."""
        if not len(src):
            return self
        n = self.num_nodes
        old_src = np.repeat(np.arange(n, dtype=np.int64), np.diff(self.indptr))
        touched = np.zeros(n, bool)
        touched[src] = True
        redo = touched[old_src]
        s = np.concatenate([old_src[redo], src.astype(np.int64)])
        d = np.concatenate([self.indices[redo].astype(np.int64), dst.astype(np.int64)])
        w = np.concatenate([self.weights[redo], weights.astype(np.float32)])
        k = np.concatenate([self.kinds[redo], np.full(len(src), EDGE_KINDS.index(kind), np.uint8)])
        keep = _strongest(s, d, w, self.config.max_degree, n)
        s = np.concatenate([old_src[~redo], s[keep]])
        order = np.argsort(s, kind="stable")
        d = np.concatenate([self.indices[~redo], d[keep].astype(self.indices.dtype)])[order]
        w = np.concatenate([self.weights[~redo], w[keep]])[order]
        k = np.concatenate([self.kinds[~redo], k[keep]])[order]
        indptr = np.zeros(n + 1, np.int64)
        np.cumsum(np.bincount(s, minlength=n), out=indptr[1:])
        return UnitGraph(self.num_rows, indptr, d, w.astype(np.float32), k, self.entities, self.config,
                         self.parts, self.reused)


def graph_path(memory, config: GraphConfig) -> Path:
    return memory.directory / f"graph.{memory.generation}.{config.key()}.npz"


def _earlier_graph(memory, config: GraphConfig) -> Path | None:
    """The newest graph file of an earlier generation built with the same config."""
    best = None
    for p in memory.directory.glob(f"graph.*.{config.key()}.npz"):
        gen = p.name.split(".")[1]
        if gen.isdigit() and int(gen) < memory.generation and (best is None or int(gen) > best[0]):
            best = (int(gen), p)
    return best[1] if best else None


def load_or_build(memory, config: GraphConfig | None = None) -> UnitGraph:
    """The graph of a memory snapshot: from its file when built before, else built (from an earlier
    generation's graph where there is one) and saved beside the store; with the usage edges learned
    so far laid over it, unless ``config.usage`` is off."""
    from .usage import with_usage  # usage.py imports this module

    config = config or GraphConfig()
    return with_usage(_load_or_build(memory, config), memory, config)


def _load_or_build(memory, config: GraphConfig) -> UnitGraph:
    path = graph_path(memory, config)
    if path.exists():
        graph = UnitGraph.load(path)
        return graph if graph.config == config else replace(graph, config=config)  # usage fields differ
    earlier = _earlier_graph(memory, config)
    graph = build_graph(memory, config, previous=GraphParts.load(earlier) if earlier else None)
    try:
        graph.save(path)
        for old in memory.directory.glob("graph.*.npz"):
            gen = old.name.split(".")[1]
            if gen.isdigit() and int(gen) < memory.generation - 1:  # a reader may still be on the one before
                old.unlink(missing_ok=True)
    except OSError:
        pass  # a read-only memory still answers, it just builds its graph each time
    return graph


def build_graph(memory, config: GraphConfig | None = None, previous: GraphParts | None = None) -> UnitGraph:
    """Build the graph of the active units of a ``Memory`` snapshot, reusing ``previous`` (the parts of
    an earlier generation's build) for units that did not change, when it applies."""
    config = config or GraphConfig()
    units = memory.active_unit_outline()
    row_of_id = {u[1]: u[0] for u in units}
    active_rows = np.array(sorted(row_of_id.values()), dtype=np.int64)
    docs = memory.document_titles_and_types()
    title_keys = {k for k in (title_key(t) for t, _ in docs.values()) if len(k) >= 3}
    vectors_key = f"{memory.embed_model}/{memory.dim}"
    previous = _applicable(previous, active_rows, memory, vectors_key)
    edges = _EdgeList()

    # Structure: parent/child and neighbours in document order.
    prev = None
    for row, uid, kb, doc, parent_id, _ in units:
        if parent_id in row_of_id:
            edges.add_pair(row, row_of_id[parent_id], "structure")
        if prev is not None and prev[1:3] == (kb, doc):
            edges.add_pair(prev[0], row, "structure")
        prev = (row, kb, doc)
    first_of_doc: dict[tuple[str, str], int] = {}
    doc_of_row: dict[int, tuple[str, str]] = {}
    for row, uid, kb, doc, *_ in units:
        first_of_doc.setdefault((kb, doc), row)
        doc_of_row[row] = (kb, doc)
    # Cross-references.
    for source_id, kind, target, target_doc in memory.active_links():
        src = row_of_id.get(source_id)
        if src is None or target_doc is None:
            continue
        kb = doc_of_row[src][0]
        if kind == "section":
            dst = _section_heading(memory, kb, target_doc, target)
        else:
            dst = first_of_doc.get((kb, target_doc))
        if dst is not None and dst != src:
            edges.add_pair(src, dst, "structure")

    # Entities: mentions and titles; a document's units own its title.
    keys_of, unread = _unit_entity_keys(memory, active_rows, title_keys, previous)
    entity_units: dict[str, set[int]] = {}
    for row, keys in zip(active_rows.tolist(), keys_of):
        for key in keys:
            entity_units.setdefault(key, set()).add(row)
    rows_of_doc: dict[tuple[str, str], list[int]] = {}
    for row, doc_key in doc_of_row.items():
        rows_of_doc.setdefault(doc_key, []).append(row)
    for doc_key, (title, _) in docs.items():
        key = title_key(title)
        rows = rows_of_doc.get(doc_key, [])
        if key in title_keys and rows:
            # A short document is its title's owner throughout; a long one through its first unit.
            entity_units.setdefault(key, set()).update(rows if len(rows) <= 8 else rows[:1])
    entities = sorted(k for k, rows in entity_units.items() if 2 <= len(rows) <= config.max_entity_units)
    log_max = math.log(max(config.max_entity_units, 2))
    num_rows = memory.num_rows
    changelog = {row for row, d in doc_of_row.items() if docs.get(d, (None, None))[1] == "changelog"} \
        if config.changelog_edges else set()
    for i, key in enumerate(entities):
        rows = entity_units[key]
        specificity = 1.0 - math.log(len(rows)) / log_max
        for row in rows:
            edges.add_pair(row, num_rows + i, "entity", specificity=specificity)
        if changelog and not changelog.isdisjoint(rows):
            # Temporal: a changelog unit and the other documents' units that name what it names, but
            # not another changelog's (templated notes of other systems came one full-weight hop away).
            for c in rows & changelog:
                for row in rows - changelog:
                    if doc_of_row[row] != doc_of_row[c]:
                        edges.add_pair(c, row, "temporal", specificity=specificity)

    # Semantic neighbours; near-duplicates of other documents with other dates are versions (temporal).
    sem_src, sem_dst, sem_cos = _semantic_pairs(memory, active_rows, config, previous)
    parts_sem = sem_src, sem_dst, sem_cos
    if len(unread):  # the cosines of text the model cannot read are noise: no neighbours, no versions
        noise = np.zeros(num_rows, bool)
        noise[unread] = True
        read = ~(noise[sem_src] | noise[sem_dst])
        sem_src, sem_dst, sem_cos = sem_src[read], sem_dst[read], sem_cos[read]
    doc_number, day_number = np.zeros(num_rows, np.int64), np.zeros(num_rows, np.int64)
    numbers: dict = {}
    for row, _, kb, doc, _, effective in units:
        doc_number[row] = numbers.setdefault((kb, doc), len(numbers))
        day_number[row] = numbers.setdefault(effective[:10], len(numbers))
    version = ((sem_cos >= config.temporal_similarity) & (doc_number[sem_src] != doc_number[sem_dst])
               & (day_number[sem_src] != day_number[sem_dst]))
    if version.any():  # and about the same thing (templated facts about two systems look alike too):
        keys_of_row = dict(zip(active_rows.tolist(), keys_of))  # a name specific enough to be a node
        specific = set(entities)
        for i in np.flatnonzero(version).tolist():
            version[i] = bool(keys_of_row[int(sem_src[i])] & keys_of_row[int(sem_dst[i])] & specific)
    edges.extend(sem_src[~version], sem_dst[~version], "semantic", sem_cos[~version])
    if config.cooccur_beta > 0 and config.cooccur_k > 0 and entities:
        co_src, co_dst, co_npmi = cooccurrence(entities, entity_units, doc_of_row, config)
        edges.extend(co_src, co_dst + num_rows, "cooccur", np.zeros(len(co_src), np.float32), co_npmi)
    for a, b in ((sem_src, sem_dst), (sem_dst, sem_src)):
        edges.extend(a[version], b[version], "temporal", sem_cos[version])

    vocab = sorted({k for keys in keys_of for k in keys})
    index = {k: i for i, k in enumerate(vocab)}
    ptr = np.zeros(len(active_rows) + 1, np.int64)
    np.cumsum([len(keys) for keys in keys_of], out=ptr[1:])
    ids = np.fromiter((index[k] for keys in keys_of for k in sorted(keys)), np.int32, count=int(ptr[-1]))
    parts = GraphParts(active_rows, ptr, ids, vocab, sorted(title_keys), *parts_sem, vectors_key, unread)
    graph = edges.to_graph(num_rows, entities, memory.vectors, config)
    graph.parts = parts
    if previous is not None:
        graph.reused = int(np.isin(active_rows, previous.rows, assume_unique=True).sum())
    return graph


def kind_beta(config: GraphConfig, kind: str) -> float:
    """The weight of an edge's middle term: NPMI for co-occurrence and usage, specificity otherwise."""
    return {"cooccur": config.cooccur_beta, "usage": config.usage_beta}.get(kind, config.beta)


def npmi(both: np.ndarray, a: np.ndarray, b: np.ndarray, total: float) -> np.ndarray:
    """Normalised PMI of two events seen together ``both`` times, apart ``a`` and ``b`` times, of
    ``total``: 1 always together, 0 independent (or ``both == total``: what is everywhere tells
    nothing), below 0 less often than chance."""
    both, a, b = (np.asarray(x, np.float64) for x in (both, a, b))
    with np.errstate(divide="ignore", invalid="ignore"):
        p = both / total
        out = np.log(both * total / (a * b)) / -np.log(p)
    return np.where((both > 0) & (p < 1), np.clip(out, -1.0, 1.0), 0.0).astype(np.float32)


def cooccurrence(entities: list[str], entity_units: dict[str, set[int]], doc_of_row: dict,
                 config: GraphConfig) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(unit row, entity index, NPMI) of the co-occurrence edges: each unit to its ``cooccur_k``
    entities most associated, across documents, with the ones it names (module docstring)."""
    ent_of_doc: dict = {}
    unit_rows, unit_ents = [], []
    for i, key in enumerate(entities):
        for row in entity_units[key]:
            ent_of_doc.setdefault(doc_of_row[row], set()).add(i)
            unit_rows.append(row)
            unit_ents.append(i)
    n_ent, n_docs = len(entities), len(ent_of_doc)
    size = np.array([len(entity_units[k]) for k in entities], np.int64)  # fewer units: more specific
    df = np.zeros(n_ent, np.int64)
    codes = []
    for ents in ent_of_doc.values():
        e = np.fromiter(ents, np.int64, len(ents))
        df[e] += 1
        e = np.sort(e[np.lexsort((e, size[e]))[:COOCCUR_DOC_ENTITIES]])
        a, b = np.triu_indices(len(e), 1)
        codes.append(e[a] * n_ent + e[b])
    empty = (np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros(0, np.float32))
    if not codes:
        return empty
    pair, count = np.unique(np.concatenate(codes), return_counts=True)
    a, b = pair // n_ent, pair % n_ent
    score = npmi(count, df[a], df[b], n_docs)
    ok = (count >= config.cooccur_min_count) & (score >= config.cooccur_floor)
    a, b, score = a[ok], b[ok], score[ok]
    if not len(a):
        return empty
    # Each entity's partners (both ways), its strongest k: a unit's candidates are its entities' partners.
    pa, pb, ps = np.concatenate([a, b]), np.concatenate([b, a]), np.concatenate([score, score])
    keep = _strongest(pa, pb, ps, config.cooccur_k, n_ent)
    pa, pb, ps = pa[keep], pb[keep], ps[keep]
    ptr = np.zeros(n_ent + 1, np.int64)
    np.cumsum(np.bincount(pa, minlength=n_ent), out=ptr[1:])
    u, e = np.array(unit_rows, np.int64), np.array(unit_ents, np.int64)
    per = ptr[e + 1] - ptr[e]
    src = np.repeat(u, per)
    at = np.repeat(ptr[e] - np.concatenate([[0], np.cumsum(per)[:-1]]), per) + np.arange(int(per.sum()))
    dst, strength = pb[at], ps[at]
    named = np.isin(src * n_ent + dst, u * n_ent + e)  # an entity the unit names is an entity edge already
    src, dst, strength = src[~named], dst[~named], strength[~named]
    if not len(src):
        return empty
    keep = _strongest(src, dst, strength, config.cooccur_k, int(src.max()) + 1)
    return src[keep], dst[keep], strength[keep]


def _applicable(previous: GraphParts | None, active_rows: np.ndarray, memory, vectors_key: str):
    """``previous`` if this build can start from it: same vectors, rows this memory has, and a change
    small enough to be worth it."""
    if previous is None or previous.vectors != vectors_key or not len(active_rows):
        return None
    if len(previous.rows) and int(previous.rows[-1]) >= memory.num_rows:
        return None  # parts of another memory, or of rows this one never committed
    kept = np.isin(active_rows, previous.rows, assume_unique=True).sum()
    changed = (len(active_rows) - kept) + (len(previous.rows) - kept)
    return previous if changed <= INCREMENTAL_MAX_CHANGE * len(active_rows) else None


def _unit_entity_keys(memory, rows: np.ndarray, title_keys: set[str],
                      previous: GraphParts | None) -> tuple[list[set[str]], np.ndarray]:
    """The entity keys of each unit of ``rows``, and the rows (ascending) whose text the embedding model
    does not read: from ``previous`` where the unit and the titles it could name are unchanged, else
    found in its text."""
    cjk_titles = [k for k in title_keys if not k.isascii()]
    scripts = scripts_of(memory.embed_model)
    unread: set[int] = set()

    def read(row: int, content: str) -> set[str]:
        if scripts is not ALL_SCRIPTS and not content.isascii() and readable_share(content, scripts) < READ_FOR_COSINE:
            unread.add(row)
        return unit_entities(content, title_keys, cjk_titles)

    if previous is None:
        found = {row: read(row, content) for row, content in memory.active_contents()}
        return [found[r] for r in rows.tolist()], np.array(sorted(unread), np.int64)
    pos = np.searchsorted(previous.rows, rows)
    pos_ok = np.minimum(pos, max(len(previous.rows) - 1, 0))
    was = (pos < len(previous.rows)) & (previous.rows[pos_ok] == rows) if len(previous.rows) else \
        np.zeros(len(rows), bool)
    out: list[set[str]] = [set(previous.keys_at(int(p))) if w else set() for p, w in zip(pos_ok, was)]
    unread.update(int(r) for r in previous.unread[np.isin(previous.unread, rows[was])])
    redo = set(np.flatnonzero(~was).tolist())
    old_titles = set(previous.titles)
    dropped, added = old_titles - title_keys, title_keys - old_titles
    if dropped:  # units that named a title no longer in memory may have named it only as a title
        redo.update(i for i in np.flatnonzero(was).tolist() if not dropped.isdisjoint(out[i]))
    if added:  # units that may name a new title: those holding all of its words
        candidates = _rows_with_words(memory, added)
        if candidates is None:
            redo = set(range(len(rows)))
        else:
            redo.update(np.flatnonzero(np.isin(rows, candidates)).tolist())
    at = {int(rows[i]): i for i in redo}
    unread.difference_update(at)
    for row, content in memory.contents_at_rows(sorted(at)).items():
        out[at[row]] = read(row, content)
    return out, np.array(sorted(unread), np.int64)


def _rows_with_words(memory, keys: set[str]) -> np.ndarray | None:
    """Unit rows that hold every BM25 word of at least one of ``keys`` (None: no index to ask)."""
    lexical = getattr(memory, "lexical", None)
    if lexical is None:
        return None
    found = [lexical.rows_with_all(tokenize(k)) for k in keys]
    return np.unique(np.concatenate(found)) if found else np.zeros(0, np.int64)


def _semantic_pairs(memory, active_rows: np.ndarray, config: GraphConfig, previous: GraphParts | None):
    """(src, dst, cosine) of each active unit and its ``semantic_k`` nearest above the floor, the cosines
    on the default model's scale (``embed.models.on_default_scale``); none for a model whose cosines do not
    carry onto that scale (``embed.models.draws_neighbour_edges``)."""
    k = config.semantic_k
    empty = (np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros(0, np.float32))
    if memory.dense is None or len(active_rows) < 2 or k <= 0:
        return empty
    if not draws_neighbour_edges(memory.embed_model):
        return empty
    src, dst, cos = [], [], []
    if previous is None:
        search, fetch = active_rows, k + 1
    else:
        active = memory.active
        keep = active[previous.sem_src] & active[previous.sem_dst]
        src.append(previous.sem_src[keep])
        dst.append(previous.sem_dst[keep])
        cos.append(previous.sem_cos[keep])
        search = active_rows[~np.isin(active_rows, previous.rows, assume_unique=True)]
        fetch = 2 * k + 1  # and each of a new unit's 2k nearest is offered it back (the reverse pairs)
    for lo in range(0, len(search), 4096):
        part = search[lo:lo + 4096]
        nbr, cs = memory.dense.search(np.asarray(memory.vectors[part]), fetch, active=memory.active,
                                      ef_search=max(config.semantic_ef_search, fetch))
        r = np.repeat(part, nbr.shape[1])
        n, c = nbr.ravel(), on_default_scale(memory.embed_model, cs.ravel())  # one floor for every model
        ok = (n >= 0) & (n != r) & (c >= config.semantic_floor)
        src.append(r[ok])
        dst.append(n[ok])
        cos.append(c[ok].astype(np.float32))
        if previous is not None:  # the reverse pairs: an old unit may now have this one among its k nearest
            src.append(n[ok])
            dst.append(r[ok])
            cos.append(c[ok].astype(np.float32))
    if not src:
        return empty
    src, dst, cos = np.concatenate(src), np.concatenate(dst), np.concatenate(cos)
    keep = _strongest(src, dst, cos, k, memory.num_rows)  # each unit's k nearest
    return src[keep], dst[keep], cos[keep]


def _strongest(src: np.ndarray, dst: np.ndarray, strength: np.ndarray, limit: int,
               num_nodes: int) -> np.ndarray:
    """Which edges to keep: of each (src, dst) the strongest, then each src's ``limit`` strongest; as
    indices ordered by src, strongest first."""
    order = np.lexsort((-strength, dst, src))
    s, d = src[order], dst[order]
    first = np.ones(len(order), bool)
    first[1:] = (s[1:] != s[:-1]) | (d[1:] != d[:-1])
    order = order[first]
    order = order[np.lexsort((-strength[order], src[order]))]
    counts = np.bincount(src[order], minlength=num_nodes)
    starts = np.concatenate([[0], np.cumsum(counts)[:-1]])
    return order[(np.arange(len(order)) - np.repeat(starts, counts)) < limit]


def _section_heading(memory, kb: str, doc: str, target: str) -> int | None:
    """The heading unit of section ``target`` ("4", "4.2") in a document, if it has one."""
    for row, content in memory.headings_of(kb, doc):
        head = content.strip().lower()
        for prefix in (target, f"section {target}", f"§{target}", f"第{target}"):
            if head.startswith(prefix) and (len(head) == len(prefix) or not head[len(prefix)].isdigit()):
                return row
    return None


class _EdgeList:
    """Edges as typed arrays: 17 bytes an edge, where lists of Python numbers took over 100; and
    whole arrays of them (the semantic pairs), with the cosines their search already gave."""

    def __init__(self):
        self.src, self.dst = array("q"), array("q")
        self.kind, self.spec = array("B"), array("f")
        self.chunks: list[tuple[np.ndarray, ...]] = []  # (src, dst, kind, spec, cos)

    def add(self, a: int, b: int, kind: str, specificity: float = 0.0) -> None:
        self.src.append(a)
        self.dst.append(b)
        self.kind.append(EDGE_KINDS.index(kind))
        self.spec.append(specificity)

    def add_pair(self, a: int, b: int, kind: str, specificity: float = 0.0) -> None:
        self.add(a, b, kind, specificity)
        self.add(b, a, kind, specificity)

    def extend(self, src: np.ndarray, dst: np.ndarray, kind: str, cos: np.ndarray,
               specificity: np.ndarray | None = None) -> None:
        """Edges src[i] -> dst[i] whose cosines (0 for an entity) and specificities (or NPMI) are known."""
        kinds = np.full(len(src), EDGE_KINDS.index(kind), np.uint8)
        spec = np.zeros(len(src), np.float32) if specificity is None else specificity.astype(np.float32)
        self.chunks.append((src.astype(np.int64), dst.astype(np.int64), kinds, spec, cos.astype(np.float32)))

    def to_graph(self, num_rows: int, entities: list[str], vectors, config: GraphConfig) -> UnitGraph:
        n = num_rows + len(entities)
        listed = len(self.src)
        src = np.concatenate([np.frombuffer(self.src, np.int64) if listed else np.zeros(0, np.int64),
                              *(c[0] for c in self.chunks)])
        dst = np.concatenate([np.frombuffer(self.dst, np.int64) if listed else np.zeros(0, np.int64),
                              *(c[1] for c in self.chunks)])
        kind = np.concatenate([np.frombuffer(self.kind, np.uint8) if listed else np.zeros(0, np.uint8),
                               *(c[2] for c in self.chunks)])
        spec = np.concatenate([np.frombuffer(self.spec, np.float32) if listed else np.zeros(0, np.float32),
                               *(c[3] for c in self.chunks)])
        cos = np.concatenate([np.zeros(listed, np.float32), *(c[4] for c in self.chunks)])
        where = np.flatnonzero((src[:listed] < num_rows) & (dst[:listed] < num_rows))
        for lo in range(0, len(where), 65536):  # cosine of the two units, for unit-unit edges listed
            part = where[lo:lo + 65536]
            a = np.asarray(vectors[src[part]])
            b = np.asarray(vectors[dst[part]])
            cos[part] = np.einsum("ij,ij->i", a, b)
        prior = np.array([config.prior.get(k, 0.0) for k in EDGE_KINDS], np.float32)
        beta = np.array([kind_beta(config, k) for k in EDGE_KINDS], np.float32)
        w = np.clip(config.alpha * np.maximum(cos, 0) + beta[kind] * spec + config.gamma * prior[kind], 0, 1)
        # One edge per (src, dst), the strongest evidence; bounded degree: each node keeps its strongest.
        keep = _strongest(src, dst, w, config.max_degree, n)
        src, dst, w, kind = src[keep], dst[keep], w[keep], kind[keep]
        indptr = np.zeros(n + 1, np.int64)
        np.cumsum(np.bincount(src, minlength=n), out=indptr[1:])
        index_dtype = np.int32 if n < 2**31 else np.int64
        return UnitGraph(num_rows, indptr, dst.astype(index_dtype), w.astype(np.float32), kind, entities,
                         config)
