"""How a revised document's units relate to the ones already stored.

A unit whose kind and text are unchanged keeps its id. The rest are aligned in
document order (difflib on the id sequences): inside a replaced stretch, an old
unit is paired with the new unit of the same kind whose text is most alike, and
becomes ``superseded`` by it; an old unit with no partner is ``deprecated``.
"""
from __future__ import annotations

import difflib
import re
from dataclasses import dataclass, field


# Below this similarity a changed unit is a different statement, not a revision.
MIN_REVISION_SIMILARITY = 0.4
_WORDS = re.compile(r"\w+")


@dataclass(slots=True)
class Revision:
    kept: list[tuple[int, str]] = field(default_factory=list)  # (new chunk index, existing id)
    added: list[int] = field(default_factory=list)  # new chunk indices
    superseded: list[tuple[str, int]] = field(default_factory=list)  # (old id, new chunk index)
    deprecated: list[str] = field(default_factory=list)  # old ids

    @property
    def changed(self) -> bool:
        return bool(self.added or self.superseded or self.deprecated)


def assign_keys(hashes: list[str], taken: set[str]) -> list[str]:
    """Keys for a document's chunks from their content hashes (``ids.content_hash``).

    A key is the first 12 hex digits of the hash; repeats of the same kind and
    text in one document get ``-1``, ``-2``, ... ``taken`` holds keys of the
    document's units that are no longer active: a text that comes back after
    being superseded gets a fresh key, so an id never names two lifetimes.
    """
    seen: dict[str, int] = {}
    keys = []
    for h in hashes:
        base = h[:12]
        n = seen.get(base, 0)
        key = base if n == 0 else f"{base}-{n}"
        while key in taken:
            n += 1
            key = f"{base}-{n}"
        seen[base] = n + 1
        keys.append(key)
    return keys


def _similarity(a: str, b: str) -> float:
    ta, tb = set(_WORDS.findall(a.lower())), set(_WORDS.findall(b.lower()))
    if len(ta) > 1 and len(tb) > 1:
        return len(ta & tb) / len(ta | tb)
    return difflib.SequenceMatcher(None, a, b, autojunk=False).ratio()  # CJK or one word


def _candidates(olds: list[int], news: list[int], band: int = 64):
    """All pairs of a replaced stretch, or, for a long one, pairs near the same relative position."""
    if len(olds) * len(news) <= band * band:
        return ((i, j) for i in olds for j in news)
    scale = len(news) / max(len(olds), 1)
    return ((i, news[t]) for k, i in enumerate(olds)
            for t in range(max(0, int(k * scale) - band // 2), min(len(news), int(k * scale) + band // 2)))


def plan_revision(old: list[tuple[str, str, str]], new_ids: list[str], new: list[tuple[str, str]]) -> Revision:
    """Relate stored units to the units of a new version.

    ``old``: (id, kind, content) of the document's active units in document order;
    ``new_ids``/``new``: ids and (kind, content) of the new version's chunks.
    """
    rev = Revision()
    old_ids = [o[0] for o in old]
    matcher = difflib.SequenceMatcher(None, old_ids, new_ids, autojunk=False)
    old_set, new_set = set(old_ids), set(new_ids)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            rev.kept.extend((j1 + d, old_ids[i1 + d]) for d in range(i2 - i1))
            continue
        olds = [i for i in range(i1, i2)]
        news = [j for j in range(j1, j2)]
        # A unit that only moved is kept, wherever it went.
        news_moved = [j for j in news if new_ids[j] in old_set]
        rev.kept.extend((j, new_ids[j]) for j in news_moved)
        news = [j for j in news if new_ids[j] not in old_set]
        olds = [i for i in olds if old_ids[i] not in new_set]
        pairs = sorted(((_similarity(old[i][2], new[j][1]), i, j) for i, j in _candidates(olds, news)
                        if old[i][1] == new[j][0]), reverse=True)
        used_old: set[int] = set()
        used_new: set[int] = set()
        for sim, i, j in pairs:
            if sim < MIN_REVISION_SIMILARITY:
                break
            if i in used_old or j in used_new:
                continue
            used_old.add(i)
            used_new.add(j)
            rev.superseded.append((old_ids[i], j))
        rev.added.extend(j for j in news if j not in used_new)
        rev.deprecated.extend(old_ids[i] for i in olds if i not in used_old)
    rev.kept.sort()
    rev.added.sort()
    return rev
