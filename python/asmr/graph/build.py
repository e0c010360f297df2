"""The unit graph: weighted edges between active units and the entities they name, as CSR arrays.

Nodes ``0 .. num_rows-1`` are unit rows (only active units get edges);
nodes ``num_rows ..`` are entities. Edge kinds, each with its own evidence:

- ``semantic``: a unit and its nearest neighbours by cosine (faiss), above a floor;
- ``structure``: list/table/paragraph parent and child, neighbouring units of
  one document, a cross-reference ("see section 4", a link to another file);
- ``entity``: a unit and an entity it names, or the title of its own document.
  Units that name the same entity, or a unit that names another document's
  title and that document's units, are two hops apart through it.

Every edge weighs ``alpha * cosine + beta * specificity + gamma * prior[kind]``
clipped to [0, 1], where cosine is that of the two units' vectors (unit-unit
edges), and specificity, for an entity named by ``df`` units, is
``1 - ln(df) / ln(max_entity_units)`` (a pointwise-mutual-information weight:
an entity that co-occurs with everything says little); entities named by more
than ``max_entity_units`` units, or by one, get no node. Each node keeps its
``max_degree`` strongest edges, so the graph stays sparse as the memory grows.
"""
from __future__ import annotations

import hashlib
import json
import math
import os
from array import array
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np

from asmr_kernels import CSRGraph

from .entities import title_key, unit_entities

EDGE_KINDS = ("semantic", "structure", "entity")


@dataclass(frozen=True)
class GraphConfig:
    alpha: float = 0.6  # weight of the cosine of the two units
    beta: float = 0.6  # weight of the entity's specificity
    gamma: float = 0.4  # weight of the edge kind's prior
    prior: dict = field(default_factory=lambda: {"semantic": 0.5, "structure": 1.0, "entity": 1.0})
    semantic_k: int = 10
    semantic_floor: float = 0.6
    semantic_ef_search: int = 32  # HNSW breadth for the neighbour self-search (96 took 85 % of a build)
    max_entity_units: int = 64
    max_degree: int = 64

    def key(self) -> str:
        return hashlib.blake2b(json.dumps(asdict(self), sort_keys=True).encode(), digest_size=4).hexdigest()


@dataclass
class UnitGraph:
    num_rows: int
    indptr: np.ndarray
    indices: np.ndarray
    weights: np.ndarray
    kinds: np.ndarray  # uint8 index into EDGE_KINDS, per edge
    entities: list[str]  # name of node num_rows + i
    config: GraphConfig
    _csr: CSRGraph | None = None

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
                 config=json.dumps(asdict(self.config)))
        os.replace(tmp, path)

    @classmethod
    def load(cls, path: Path) -> "UnitGraph":
        with np.load(path) as z:
            config = GraphConfig(**json.loads(str(z["config"])))
            return cls(int(z["num_rows"]), z["indptr"], z["indices"], z["weights"], z["kinds"],
                       [str(e) for e in z["entities"]], config)


def graph_path(memory, config: GraphConfig) -> Path:
    return memory.directory / f"graph.{memory.generation}.{config.key()}.npz"


def load_or_build(memory, config: GraphConfig | None = None) -> UnitGraph:
    """The graph of a memory snapshot: from its file when built before, else built and saved beside the store."""
    config = config or GraphConfig()
    path = graph_path(memory, config)
    if path.exists():
        return UnitGraph.load(path)
    graph = build_graph(memory, config)
    try:
        graph.save(path)
        for old in memory.directory.glob("graph.*.npz"):
            gen = old.name.split(".")[1]
            if gen.isdigit() and int(gen) < memory.generation - 1:
                old.unlink(missing_ok=True)
    except OSError:
        pass  # a read-only memory still answers, it just builds its graph each time
    return graph


def build_graph(memory, config: GraphConfig | None = None) -> UnitGraph:
    """Build the graph of the active units of a ``Memory`` snapshot."""
    config = config or GraphConfig()
    conn = memory.conn
    units = conn.execute("SELECT row, id, kb, doc_id, kind, parent_id, ord, content FROM units "
                         "WHERE status='active' ORDER BY kb, doc_id, ord").fetchall()
    row_of_id = {u[1]: u[0] for u in units}
    titles = {(kb, doc): t for kb, doc, t in conn.execute("SELECT kb, doc_id, title FROM documents")}
    edges = _EdgeList()

    # Structure: parent/child and neighbours in document order.
    prev = None
    for row, uid, kb, doc, kind, parent_id, ord_, content in units:
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
    for source_id, kind, target, target_doc in conn.execute(
            "SELECT l.source_id, l.kind, l.target, l.target_doc FROM links l JOIN units u ON u.id = l.source_id "
            "WHERE u.status='active'"):
        src = row_of_id.get(source_id)
        if src is None or target_doc is None:
            continue
        kb = doc_of_row[src][0]
        if kind == "section":
            dst = _section_heading(conn, kb, target_doc, target)
        else:
            dst = first_of_doc.get((kb, target_doc))
        if dst is not None and dst != src:
            edges.add_pair(src, dst, "structure")

    # Entities: mentions and titles; a document's units own its title.
    title_keys = {k for k in (title_key(t) for t in titles.values()) if len(k) >= 3}
    cjk_titles = [k for k in title_keys if not k.isascii()]
    entity_units: dict[str, set[int]] = {}
    for row, uid, kb, doc, kind, parent_id, ord_, content in units:
        for key in unit_entities(content, title_keys, cjk_titles):
            entity_units.setdefault(key, set()).add(row)
    rows_of_doc: dict[tuple[str, str], list[int]] = {}
    for row, doc_key in doc_of_row.items():
        rows_of_doc.setdefault(doc_key, []).append(row)
    for doc_key, title in titles.items():
        key = title_key(title)
        rows = rows_of_doc.get(doc_key, [])
        if key in title_keys and rows:
            # A short document is its title's owner throughout; a long one through its first unit.
            entity_units.setdefault(key, set()).update(rows if len(rows) <= 8 else rows[:1])
    entities = sorted(k for k, rows in entity_units.items() if 2 <= len(rows) <= config.max_entity_units)
    log_max = math.log(max(config.max_entity_units, 2))
    num_rows = memory.num_rows
    for i, key in enumerate(entities):
        rows = entity_units[key]
        specificity = 1.0 - math.log(len(rows)) / log_max
        for row in rows:
            edges.add_pair(row, num_rows + i, "entity", specificity=specificity)

    # Semantic neighbours.
    active_rows = np.array(sorted(row_of_id.values()), dtype=np.int64)
    if memory.dense is not None and len(active_rows) > 1 and config.semantic_k > 0:
        for lo in range(0, len(active_rows), 4096):
            part = active_rows[lo:lo + 4096]
            nbr, cos = memory.dense.search(np.asarray(memory.vectors[part]), config.semantic_k + 1,
                                           active=memory.active, ef_search=config.semantic_ef_search)
            for r, ns, cs in zip(part, nbr, cos):
                for n, c in zip(ns, cs):
                    if n >= 0 and n != r and c >= config.semantic_floor:
                        edges.add(int(r), int(n), "semantic")

    return edges.to_graph(num_rows, entities, memory.vectors, config)


def _section_heading(conn, kb: str, doc: str, target: str) -> int | None:
    """The heading unit of section ``target`` ("4", "4.2") in a document, if it has one."""
    for row, content in conn.execute("SELECT row, content FROM units WHERE kb=? AND doc_id=? AND kind='heading' "
                                     "AND status='active' ORDER BY ord", (kb, doc)):
        head = content.strip().lower()
        for prefix in (target, f"section {target}", f"§{target}", f"第{target}"):
            if head.startswith(prefix) and (len(head) == len(prefix) or not head[len(prefix)].isdigit()):
                return row
    return None


class _EdgeList:
    """Edges as typed arrays: 17 bytes an edge, where lists of Python numbers took over 100."""

    def __init__(self):
        self.src, self.dst = array("q"), array("q")
        self.kind, self.spec = array("B"), array("f")

    def add(self, a: int, b: int, kind: str, specificity: float = 0.0) -> None:
        self.src.append(a)
        self.dst.append(b)
        self.kind.append(EDGE_KINDS.index(kind))
        self.spec.append(specificity)

    def add_pair(self, a: int, b: int, kind: str, specificity: float = 0.0) -> None:
        self.add(a, b, kind, specificity)
        self.add(b, a, kind, specificity)

    def to_graph(self, num_rows: int, entities: list[str], vectors, config: GraphConfig) -> UnitGraph:
        n = num_rows + len(entities)
        src = np.frombuffer(self.src, np.int64) if len(self.src) else np.zeros(0, np.int64)
        dst = np.frombuffer(self.dst, np.int64) if len(self.dst) else np.zeros(0, np.int64)
        kind = np.frombuffer(self.kind, np.uint8) if len(self.kind) else np.zeros(0, np.uint8)
        spec = np.frombuffer(self.spec, np.float32) if len(self.spec) else np.zeros(0, np.float32)
        cos = np.zeros(len(src), np.float32)
        uu = (src < num_rows) & (dst < num_rows)
        if uu.any():  # cosine of the two units, for unit-unit edges
            where = np.flatnonzero(uu)
            for lo in range(0, len(where), 65536):
                part = where[lo:lo + 65536]
                a = np.asarray(vectors[src[part]])
                b = np.asarray(vectors[dst[part]])
                cos[part] = np.einsum("ij,ij->i", a, b)
        prior = np.array([config.prior.get(k, 0.0) for k in EDGE_KINDS], np.float32)
        w = np.clip(config.alpha * np.maximum(cos, 0) + config.beta * spec + config.gamma * prior[kind], 0, 1)
        # One edge per (src, dst): the strongest evidence wins.
        order = np.lexsort((-w, dst, src))
        src, dst, w, kind = src[order], dst[order], w[order], kind[order]
        first = np.ones(len(src), bool)
        first[1:] = (src[1:] != src[:-1]) | (dst[1:] != dst[:-1])
        src, dst, w, kind = src[first], dst[first], w[first], kind[first]
        # Bounded degree: each node keeps its strongest edges.
        order = np.lexsort((-w, src))
        src, dst, w, kind = src[order], dst[order], w[order], kind[order]
        counts = np.bincount(src, minlength=n)
        starts = np.concatenate([[0], np.cumsum(counts)[:-1]])
        rank = np.arange(len(src)) - np.repeat(starts, counts)
        keep = rank < config.max_degree
        src, dst, w, kind = src[keep], dst[keep], w[keep], kind[keep]
        indptr = np.zeros(n + 1, np.int64)
        np.cumsum(np.bincount(src, minlength=n), out=indptr[1:])
        index_dtype = np.int32 if n < 2**31 else np.int64
        return UnitGraph(num_rows, indptr, dst.astype(index_dtype), w.astype(np.float32), kind, entities, config)
