"""Bridging: the question's other half, looked for in the documents and the table rows that the best
hits name, and the units that verified answers cited together with the best hits."""
from __future__ import annotations

from collections import Counter
from dataclasses import replace

import numpy as np

from ..graph import EDGE_KINDS, GraphConfig
from ..text.entities import normalize, split_words, title_key, title_names, unit_entities
from ..text.tables import keys_named, longest_keys, names_key, table_row_key
from ..text.turns import named_speakers, parse_turn
from ..index.lexical import bm25_scores
from ..text.words import QUESTION_STOP_WORDS, dictionary_word, tokenize
from .types import Hit, PathStep

# What each document is about: subject key -> its documents (kb, doc_id); and the CJK keys,
# which are found by substring
DocumentSubjects = tuple[dict[str, list[tuple[str, str]]], list[str]]


def _name_words(title: str) -> list[str]:
    return split_words(title.split(" (")[0])  # "Solby (harbour)" is "Solby"


def name_cores(title: str, kinds: Counter) -> set[str]:
    """A title's name without the word of its kind that opens or closes it: "Team Amber Heron" is about
    "amber heron", which its neighbours' pages call "the Amber Heron team". ``kinds``: how many titles
    of three words or more (0, word) opens and (-1, word) closes, where the word is a dictionary word
    (``document_subjects``). The kind is the end that more titles share, at least two: "Team" opens
    every team's page while "Heron" closes a few. What remains is still a name: two words or more,
    each capitalised ("Lake Tahoe" keeps no "tahoe", "Bank of America Plaza" no "bank of america")."""
    words = _name_words(title)
    if len(words) < 3:
        return set()
    first, last = kinds.get((0, words[0].lower()), 0), kinds.get((-1, words[-1].lower()), 0)
    if max(first, last) < 2 or first == last:
        return set()
    rest = words[1:] if first > last else words[:-1]
    return {normalize(" ".join(rest))} if all(w[0].isupper() for w in rest) else set()


def document_subjects(memory, common_units: int = GraphConfig.max_entity_units) -> DocumentSubjects:
    """What each document is about (its title's key, the names its title contains: "Ochre Kestrel
    team" is about "ochre kestrel" too, "Novova runbook" about "novova"; and ``name_cores`` unless
    another document is titled so), mapped to the documents; and the CJK ones, which are found by
    substring.

    A name a title holds but is not (not its key) is no subject where more than ``common_units`` units
    of other documents hold its words: it names a place or a kind that many pages speak of ("Ashby,
    Northmere", "Solby harbour regatta, 1994"), and every unit that named it bridged to those pages.
    The graph gives a name that common no entity node (``GraphConfig.max_entity_units``). A title's
    own key stays, and so does a person's name on the turns they said ("Sorrel, 2031-04-02")."""
    titles = [(doc, title) for doc, (title, _) in memory.document_titles_and_types().items()]
    kinds = Counter((end, word) for _, t in titles if len(words := _name_words(t)) >= 3 for end in (0, -1)
                    if (word := words[end].lower()).isalpha() and dictionary_word(word))
    titled = {title_key(t) for _, t in titles}
    subjects: dict[str, list[tuple[str, str]]] = {}
    held: dict[str, list[tuple[str, str]]] = {}  # names titles hold but are not
    for (kb, doc), title in titles:
        key = title_key(title)
        if len(key) >= 3:
            subjects.setdefault(key, []).append((kb, doc))
        for name in title_names(title) | (name_cores(title, kinds) - titled):
            if name != key and len(name) >= 3:
                held.setdefault(name, []).append((kb, doc))
    for name, docs in held.items():
        rows = memory.rows_with_words(tokenize(name))
        if len(rows) > common_units:
            own = np.concatenate([memory.rows_of_document(kb, doc) for kb, doc in docs])
            if len(rows) - int(np.isin(rows, own).sum()) > common_units:
                continue
        for doc in docs:
            if doc not in subjects.setdefault(name, []):
                subjects[name].append(doc)
    return subjects, [k for k in subjects if not k.isascii()]


# What each table row is about: the key of its first cell -> the rows it opens (row, kb, doc_id); and
# the longest key, in words (Latin) and in characters (CJK)
RowKeys = tuple[dict[str, list[tuple[int, str, str]]], int, int]
# A first cell that opens more rows than this (a weekday of a rota) names no one thing
ROW_KEY_MAX_ROWS = 3


def table_row_keys(memory) -> RowKeys:
    """What each active table row is about (``text.tables.table_row_key``), mapped to its rows."""
    keys: dict[str, list[tuple[int, str, str]]] = {}
    for row, kb, doc, content in memory.active_table_rows():
        if key := table_row_key(content):
            keys.setdefault(key, []).append((row, kb, doc))
    keys = {k: v for k, v in keys.items() if len(v) <= ROW_KEY_MAX_ROWS}
    return (keys, *longest_keys(keys))


def named_rows(unit, row_keys: RowKeys, asked: str) -> dict[int, str]:
    """The table rows of other documents whose first cell ``unit`` names ("hand the form to the events
    officer": the row of "Events officer"), each with the key: not a key the question names (``asked``:
    its normalised text between spaces), whose row its own words find."""
    keys, most_words, most_chars = row_keys
    if not keys:
        return {}
    rows: dict[int, str] = {}
    for key in sorted(keys_named(unit.content, keys, most_words, most_chars)):
        if names_key(asked, key):
            continue
        for row, kb, doc in keys[key]:
            if (kb, doc) != (unit.kb, unit.doc_id):
                rows.setdefault(row, key)
    return rows


def named_documents(unit, subjects: DocumentSubjects, asked: str) -> dict[tuple[str, str], str]:
    """The documents whose subject ``unit`` names, each with the name: not a name the question gives
    (``asked``: its normalised text between spaces), nor one the unit's own document is about."""
    by_name, cjk = subjects
    docs: dict[tuple[str, str], str] = {}
    for name in sorted(unit_entities(unit.content, by_name, cjk)):
        if name in by_name and f" {name} " not in asked and (unit.kb, unit.doc_id) not in by_name[name]:
            for doc in by_name[name]:
                docs.setdefault(doc, name)
    return docs


def bridge(memory, cfg, subjects: DocumentSubjects, question: str, qvec: np.ndarray, hits: list[Hit], units: list,
           k: int, speakers: dict[str, np.ndarray] | None = None, row_keys: RowKeys | None = None,
           start: list[tuple[Hit, object]] | None = None) -> tuple[list[Hit], list]:
    """The question's other half, looked for in the documents that the best hits name, and in the turns
    of the people the best hits are about.

    A hit that answers the first half of a two-hop question ("the system that batches
    inventory counts is owned by the Ochre Kestrel team") names what the second half is
    about; the document about it ("Ochre Kestrel team") holds the answer, but its units
    look little like the question, and a common name's entity edges are too weak to spread
    through. So, for each of the ``bridge_from`` best hits: the documents whose subject it
    names (a document's subject is its title or a name in its title; not one the question
    names, nor one of the hit's own document) have their units ranked against the
    question (dense cosine, fused by reciprocal rank with BM25 over those units alone for
    the question's words the hit does not contain; with them, the table rows of other documents
    whose first cell the hit names, ``row_keys``: "send it to the events officer" and the contacts
    table's row "| Events officer | Wu | 8033 |"), and the best ``bridge_hits`` join the
    result with ``bridge_decay`` (then its square, ...) times the hit's score, their path
    that of the hit, then the name and the unit (edge kind "entity"). Headings are skipped:
    they state nothing.

    A conversation's turn is about a person, not a document: in "the person who ran the
    Riverside 10K", the turn that says so is about its speaker (and whoever it names), and what
    the question asks of them is in their other turns. So, for a question that names no speaker, a
    hit that is a chat turn (``text.turns``) also has the turns of the people it is about
    (``speakers``: the rows of each speaker's turns less those that only ask, as
    ``Retriever.stating_speakers`` gives them) ranked against the question less the hit and joined the
    same way: a turn that only asks ("What did you get?") states nothing, and its cosine to the question
    less the hit is noise.

    ``start``: the (hit, unit) pairs bridged from, in place of the ``bridge_from`` best (a later round's)."""
    m = memory
    subjects, cjk = subjects
    asked = f" {normalize(question)} "
    # A question that names its person has recall of their turns already (speaker_seeds): the bridge
    # to people is for one that picks them out by what they said ("the person who ...").
    if speakers and named_speakers(question, speakers):
        speakers = None
    words = tokenize(question)
    bridged: dict[int, tuple[float, Hit, str, float, float]] = {}  # row -> score, from, name, sim, factor
    for h, u in start if start is not None else zip(hits[:cfg.bridge_from], units):
        docs = named_documents(u, (subjects, cjk), asked)
        cand_rows, cand_words, cand_names = [], [], []
        for (kb, doc), name in docs.items():
            for row, kind, content in m.first_units_of(kb, doc, cfg.bridge_units):
                if kind != "heading" and row != h.row:
                    cand_rows.append(row)
                    cand_words.append(tokenize(content))
                    cand_names.append(name)
        if row_keys is not None:
            _add_candidates(m, named_rows(u, row_keys, asked), h.row, cand_rows, cand_words, cand_names)
        turn = parse_turn(u.content) if speakers else None
        if turn is not None:
            people = [p for p in dict.fromkeys([normalize(turn.speaker), *named_speakers(turn.body, speakers)])
                      if p in speakers]
            _add_candidates(m, {int(r): p for p in reversed(people) for r in speakers[p][-cfg.bridge_units:]},
                            h.row, cand_rows, cand_words, cand_names)
        if not cand_rows:
            continue
        probe = qvec
        if turn is not None:  # what the question asks beyond what the hit says: the question less the hit
            hv = np.asarray(m.vectors[h.row], np.float32)
            rest = qvec - float(qvec @ hv) * hv
            probe = rest / max(float(np.linalg.norm(rest)), 1e-12)
        sims = m.cosines(cand_rows, probe)
        known = set(tokenize(u.content))
        # (for turns, whose candidates are one person's chat, without the words that ask: "what", "who")
        lex = bm25_scores([w for w in words if w not in known and (turn is None or w not in QUESTION_STOP_WORDS)],
                          cand_words)
        fused = 1.0 / (cfg.rrf_k + 1 + np.argsort(np.argsort(-sims, kind="stable"), kind="stable"))
        lex_rank = np.argsort(np.argsort(-lex, kind="stable"), kind="stable")
        fused += np.where(lex > 0, 1.0 / (cfg.rrf_k + 1 + lex_rank), 0.0)
        for i, c in enumerate(np.argsort(-fused, kind="stable")[:cfg.bridge_hits]):
            factor = cfg.bridge_decay ** (i + 1)
            row, score = cand_rows[c], h.score * factor
            if row not in bridged or score > bridged[row][0]:
                bridged[row] = (score, h, cand_names[c], max(float(sims[c]), 0.0), factor)
    if not bridged:
        return hits, units

    def named(row: int, score: float, h: Hit, name: str, sim: float, factor: float):
        return lambda u: Hit(u.id, row, score, sim, h.strength * factor, 0.0, h.hop + 2, False,
                             h.path + (PathStep(f"entity '{name}'", "entity", 1.0), PathStep(u.id, "entity", factor)),
                             u.effective_at)
    return _join(m, hits, units, {row: named(row, *joined) for row, joined in bridged.items()}, k)


def _add_candidates(memory, named: dict[int, str], hit_row: int, rows: list[int], words: list[list[str]],
                    names: list[str]) -> None:
    """Append to ``rows``, ``words`` and ``names`` the units of ``named`` (row -> the name that reached
    it) that are neither the hit (``hit_row``) nor candidates already, with their words."""
    taken = set(rows) | {hit_row}
    named = {r: n for r, n in named.items() if r not in taken}
    contents = memory.contents_at_rows(list(named))
    for row, name in named.items():
        if row in contents:
            rows.append(row)
            words.append(tokenize(contents[row]))
            names.append(name)


def _join(memory, hits: list[Hit], units: list, joining: dict, k: int) -> tuple[list[Hit], list]:
    """``hits`` with the units of ``joining`` (row -> a function making that unit's hit), each in place of
    the row's own hit where it scores more; best first, the first ``k``, with their units."""
    at = {h.row: i for i, h in enumerate(hits)}
    unit_of = {u.row: u for u in units}
    unit_of.update((u.row, u) for u in memory.units_at_rows([r for r in joining if r not in unit_of]))
    out = list(hits)
    for row, make in joining.items():
        hit = make(unit_of[row])
        if row not in at:
            out.append(hit)
        elif out[at[row]].score < hit.score:
            out[at[row]] = replace(hit, seed=out[at[row]].seed)
    out.sort(key=lambda x: -x.score)
    out = out[:k]
    return out, [unit_of[x.row] for x in out]


def usage_bridge(memory, graph, cfg, qvec: np.ndarray, hits: list[Hit], units: list, k: int
                 ) -> tuple[list[Hit], list]:
    """The units that verified answers cited together with the best hits (the graph's learned
    ``usage`` edges), for each of the ``bridge_from`` best hits: each joins at ``bridge_decay`` times
    the edge's weight times the hit's score, unless it already scores more; its path is the hit's, then
    the edge.

    Spreading alone cannot use such an edge: it brings the co-cited unit in at a path strength that units
    reached from the other seeds already match, so what earlier questions found together was not found
    together again (bench/usage_edges.py; docs/recall.md). A memory without learned edges is untouched."""
    usage = EDGE_KINDS.index("usage")
    m, at = memory, {h.row: i for i, h in enumerate(hits)}
    found: dict[int, tuple[float, Hit, float]] = {}  # row -> score, from, edge weight
    for h in hits[:cfg.bridge_from]:
        lo, hi = int(graph.indptr[h.row]), int(graph.indptr[h.row + 1])
        learned = graph.kinds[lo:hi] == usage
        for row, w in zip(graph.indices[lo:hi][learned].tolist(), graph.weights[lo:hi][learned].tolist()):
            score = h.score * cfg.bridge_decay * w
            if row >= graph.num_rows or not m.active[row] or (row in at and hits[at[row]].score >= score):
                continue
            if row not in found or found[row][0] < score:
                found[row] = (score, h, w)
    if not found:
        return hits, units
    sims = np.maximum(m.cosines(list(found), qvec), 0.0).tolist()

    def cited(row: int, score: float, h: Hit, w: float, sim: float):
        return lambda u: Hit(u.id, row, score, sim, h.strength * w, 0.0, h.hop + 1, False,
                             h.path + (PathStep(u.id, "usage", w),), u.effective_at)
    return _join(m, hits, units, {row: cited(row, *found[row], sim) for row, sim in zip(found, sims)}, k)
