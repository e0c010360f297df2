"""Conflicts: two recalled units that say different things about the same thing; the newer wins."""
from __future__ import annotations

from dataclasses import replace

import numpy as np

from ..text.entities import unit_entities
from .bridge import DocumentSubjects
from .types import Hit


def resolve_conflicts(hits: list[Hit], units: list, vectors, subjects: DocumentSubjects,
                      conflict_similarity: float) -> list[Hit]:
    """Two recalled units about the same thing (cosine >= conflict_similarity, and neither names
    a document subject the other does not) that say different things and carry different
    effective dates: the newer is the answer, the older an alternative marked with the newer's
    id and ranked right after it. (``units``: the hits' units, in the same order.)

    Units written from one template ("Brelova pages the on-call engineer when ...", "Brisade
    pages ...") are as alike as two versions of one rule; the subjects they name tell them apart.
    Two active units of one document never conflict: a revision that changed a statement
    superseded its old unit, so both belong to the document as it stands (a changelog's old row
    and the row added by the last revision carry different dates and look alike)."""
    if len(hits) < 2:
        return hits
    vecs = np.asarray(vectors[[h.row for h in hits]])
    cos = vecs @ vecs.T
    subjects, cjk = subjects
    names: dict[int, set[str]] = {}

    def named(i: int) -> set[str]:
        if i not in names:
            names[i] = unit_entities(units[i].content, subjects, cjk) & subjects.keys()
        return names[i]

    newer_of: dict[int, int] = {}  # each unit in at most one conflict, as the older or the newer
    for i in range(len(hits)):
        for j in range(i + 1, len(hits)):
            if not conflict_similarity <= cos[i, j] < 0.9999:  # identical text is no conflict
                continue
            if hits[i].effective_at == hits[j].effective_at:
                continue
            if (units[i].kb, units[i].doc_id) == (units[j].kb, units[j].doc_id):
                continue  # both active in one document: its current version states both
            if named(i) - named(j) and named(j) - named(i):  # about different things
                continue
            old, new = (i, j) if hits[i].effective_at < hits[j].effective_at else (j, i)
            taken = newer_of.keys() | set(newer_of.values())
            if old not in taken and new not in taken:
                newer_of[old] = new
    if not newer_of:
        return hits
    order = [i for i in range(len(hits)) if i not in newer_of]
    for old, new in sorted(newer_of.items(), key=lambda kv: -kv[0]):
        order.insert(order.index(new) + 1, old)
    return [replace(hits[i], alternative_to=hits[newer_of[i]].unit_id) if i in newer_of else hits[i]
            for i in order]
