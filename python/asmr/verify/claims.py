"""The core claim of a cited sentence: what it asserts, without attributions, hedges and markers.

"According to the analysis above, the port is 8080 [cite:ID]." asserts "the port is 8080.";
the support check (``support``) and the verifier compare that with the cited unit.
"""
from __future__ import annotations

import re
from functools import lru_cache

from asmr.decoding.markers import marker_pattern

_SOURCE = (r"(?:the\s+|this\s+|that\s+|these\s+|our\s+|my\s+)?(?:above\s+|previous\s+|preceding\s+|cited\s+|given\s+|"
           r"provided\s+|following\s+|retrieved\s+)?(?:source|documentation|document|article|passage|text|"
           r"report|analysis|study|studies|unit|reference|evidence|context|information|data|material|research|"
           r"paper|author|website|page|record|excerpt|search\s+results?|results?|findings)s?(?:\s+(?:above|below|provided))?")
_SAYS = (r"(?:says|said|states|stated|notes|noted|shows|showed|indicates|indicated|suggests|suggested|reports|"
         r"reported|mentions|mentioned|explains|explained|claims|claimed|confirms|confirmed|finds|found|"
         r"describes|described|reveals|revealed|highlights|argues|points\s+out|tells\s+us)")
_LEADING_HEDGES = [re.compile(p, re.IGNORECASE) for p in (
    r"^(?:according\s+to|based\s+on|as\s+per|in\s+light\s+of|judging\s+(?:by|from))"
    r"(?:\s+[^,，]{0,80})?[,，]\s*",
    r"^as\s+(?:noted|stated|mentioned|described|shown|reported|explained|discussed|indicated|seen|"
    r"outlined|cited|suggested)(?:\s+(?:in|by|above|below|earlier|previously|before))?[^,，]{0,60}[,，]\s*",
    rf"^{_SOURCE}\s+{_SAYS}\s+(?:that\s+)?",
    rf"^as\s+{_SOURCE}\s+{_SAYS}[,，]\s*",
    r"^(?:it\s+(?:is|was|has\s+been)\s+(?:reported|noted|stated|said|claimed|shown|known|mentioned|suggested|"
    r"found|believed|estimated|argued|established)\s+(?:that\s+)?)",
    r"^(?:reportedly|apparently|allegedly|notably|importantly|interestingly|specifically|essentially|"
    r"basically|indeed|in\s+fact|in\s+summary|in\s+conclusion|in\s+short|overall|additionally|"
    r"furthermore|moreover|also|however|therefore|thus|hence|so|then|finally|similarly|likewise|"
    r"in\s+addition|for\s+example|for\s+instance|on\s+the\s+other\s+hand|meanwhile)\s*[,，]?\s+",
    r"^(?:根据|依据|按照|据)(?:上文|上述|以上|前文|资料|来源|文档|文献|分析|报道|报告|材料|信息|研究)[^，,。]{0,20}[，,]\s*",
    r"^(?:如上所述|如前所述|综上所述|总之|此外|另外|然而|因此|据报道|据悉|据了解|据称|资料显示|研究表明|报告显示|"
    r"数据显示|文档显示|来源显示)[，,：:]?\s*",
    r"^据[^，,。]{1,12}(?:称|介绍|报道|显示|表示)[，,]\s*",
)]
_TRAILING_HEDGES = [re.compile(p, re.IGNORECASE) for p in (
    r"[,，]?\s*(?<!\w)(?:according\s+to|as\s+(?:noted|stated|reported|mentioned|described|shown)"
    r"\s+(?:in|by))\s+[^,，.。]{0,80}(?=[.。!?！？]?\s*$)",
    rf"[,，]?\s*(?<!\w)as\s+{_SOURCE}\s+{_SAYS}(?=[.。!?！？]?\s*$)",
    r"\s*[(（](?:see|cf\.?|source|sources|参见|见|来源)[:：]?\s*[^)）]{0,80}[)）]",
)]
# First words (and CJK first characters) that can open a hedge: other sentences skip the patterns.
_LEAD_WORDS = frozenset("""
according based as per from in judging the this that these our my above previous preceding cited given
provided following retrieved source sources document documents article articles passage passages text
report reports analysis study studies unit reference references evidence context information data
material research paper author website page record excerpt search results result findings it
reportedly apparently allegedly notably importantly interestingly specifically essentially basically
indeed overall additionally furthermore moreover also however therefore thus hence so then finally
similarly likewise for on meanwhile
""".split())
_LEAD_CJK = frozenset("根依按据如综总此另然因资研报数文来")
# Any leading hedge at all: one match decides whether the rounds below can change anything.
_ANY_LEADING_HEDGE = re.compile("|".join(f"(?:{p.pattern})" for p in _LEADING_HEDGES), re.IGNORECASE)
# Only text holding one of these can hold a trailing hedge: one search spares three patterns.
# (On lower-cased text; the look-behind after the "a" lets the engine skip ahead to an "a" or a bracket.)
_TRAILING_GATE = re.compile(r"a(?<!\wa)(?:ccording|[sſ])\s|[(（]")
_NUMERIC_MARKERS = re.compile(r"\s*\[(?:\d+(?:\s*[,\-–]\s*\d+)*)\]|\s*【\d+】")
_SPACE_RUN = re.compile(r"[ \t]{2,}")
_SPACE_BEFORE_PUNCT = re.compile(r"\s+([.,;:!?。，；：！？])")
_PUNCT_AFTER_SPACE = re.compile(r"[.,;:!?。，；：！？](?<=\s.)")  # where the pattern above can match


@lru_cache(maxsize=1)
def _markers() -> re.Pattern[str]:
    return marker_pattern()


def core_claim(sentence: str) -> str:
    """``sentence`` without attributions, hedges and citation markers: what it asserts.

    "According to the analysis above, the port is 8080 [cite:memo://kb/a/b]." → "the port is 8080."
    Markers are the project's (``[cite:ID]``, ``【引用:ID】``) and numeric ones (``[2]``).
    """
    if not isinstance(sentence, str):
        raise ValueError(f"core_claim: sentence must be a string, got {type(sentence).__name__}")
    return _core_claim(sentence)


def clear_core_claims() -> None:
    """Forget the cached core claims (for benchmarks that time the support check from cold)."""
    _core_claim.cache_clear()


@lru_cache(maxsize=4096)  # the verifier asks for a sentence's core, then the support model does
def _core_claim(sentence: str) -> str:
    text = _markers().sub("", sentence)
    if "[" in text or "【" in text:
        text = _NUMERIC_MARKERS.sub("", text)
    text = text.strip()
    first = text[:12].split(" ", 1)[0].lower().rstrip(",")
    lead = (first in _LEAD_WORDS or text[:1] in _LEAD_CJK) and _ANY_LEADING_HEDGE.match(text) is not None
    for _ in range(3 if lead else 0):  # "Moreover, according to [2], the source says that …"
        before = text
        for p in _LEADING_HEDGES:
            text = p.sub("", text, count=1)
        if text == before:
            break
    if _TRAILING_GATE.search(text.lower()):
        for p in _TRAILING_HEDGES:
            text = p.sub("", text)
    if "  " in text or "\t" in text:
        text = _SPACE_RUN.sub(" ", text)
    if _PUNCT_AFTER_SPACE.search(text):
        text = _SPACE_BEFORE_PUNCT.sub(r"\1", text)
    text = text.strip()
    return text or sentence.strip()
