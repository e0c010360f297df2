"""The one definition of a CJK character (kana, CJK ideograph or hangul syllable), shared by the
tokenizer, the embedder's word check, key facts, the support features and the verifier, so that
they never disagree on what is CJK text; and which Chinese words are synonyms."""
import json
import re
from functools import lru_cache
from importlib import metadata
from pathlib import Path

CJK_CLASS = r"\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff"  # body of a [...] class
CJK_CHAR = re.compile(f"[{CJK_CLASS}]")
# Scripts written without spaces between words or sentences (kana and ideographs; hangul has spaces):
# a citation marker or the next sentence follows their text directly.
SPACELESS_CHAR = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")


# Words that place what is said at the time it is said ("now", "currently"): a question's 现在 asks no
# more than the plain question (retrieve.signals), and a claim's 现在 says what its unit's 目前 says;
# Cilin puts them in different groups. English: text.words.PRESENT_WORDS.
CJK_PRESENT_WORDS = frozenset("现在 目前 当前 如今 眼下".split())


@lru_cache(maxsize=1)
def _synonym_groups() -> dict[str, frozenset[int]]:
    """Word → the synonym groups it is in: the leaves marked "=" (words of one sense) of HIT's Tongyici
    Cilin (extended), as the ``cilin`` package ships it; "#" leaves (related words) and "@" (a word
    alone) are not synonyms; and CJK_PRESENT_WORDS, one group more."""
    tree = json.loads(Path(metadata.distribution("cilin").locate_file("data/cilin_tree.json"))
                      .read_text(encoding="utf-8"))
    groups: dict[str, set[int]] = {}
    nodes, leaves = list(tree.values()), 0
    while nodes:
        for code, leaf in nodes.pop()["sub"].items():
            if isinstance(leaf, dict):
                nodes.append(leaf)
            elif code.endswith("="):
                leaves += 1
                for word in leaf:
                    groups.setdefault(word, set()).add(leaves)
    for word in CJK_PRESENT_WORDS:
        groups.setdefault(word, set()).add(leaves + 1)
    return {w: frozenset(g) for w, g in groups.items()}


def synonyms(a: str, b: str) -> bool:
    """Whether two different Chinese words share a sense (``_synonym_groups``: "采用" / "使用", "著名" /
    "知名", "现在" / "目前")."""
    table = _synonym_groups()
    return a != b and not table.get(a, frozenset()).isdisjoint(table.get(b, ()))
