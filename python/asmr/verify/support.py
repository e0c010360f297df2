"""The "supports" check: the probability that a piece of evidence supports a claim.

A cited sentence is first reduced to its core claim (``verify.claims.core_claim``: hedges
such as "according to the analysis above" and citation markers removed). Each (claim,
evidence) pair then gets a vector of cheap features (:data:`FEATURES`):

- meaning: the cosine between the claim and its best-matching evidence sentences, and
  the whole evidence (sentence embeddings, gathered by the native ``pair_cosine``);
- words: how much of the claim's content words, word pairs and word runs the evidence
  contains, overall and in its best sentence, with light stemming and a prefix match
  for variants ("cycling"/"cycle");
- key facts (:mod:`asmr.text.facts`): numbers, dates, versions, codes and names
  of the claim missing from the evidence; a changed number or date is strong evidence
  of non-support;
- contradiction cues: a negation on one side only, antonyms ("increase"/"decrease");
- alignment: the claim against the evidence sentence sharing most of its words (Chinese by jieba's
  words; claim words standing where the sentence has other words, names among them, claim words with no
  counterpart) and the ``flip_*`` cues (:data:`FLIP_FEATURES`): a negation, an opposite word
  (WordNet's antonyms, in any inflected form, a short table of stems and Chinese words, and
  Chinese words that differ in a character of opposite sense; a bound on an amount put for the
  opposite one, "at least 5 GB" for "up to 5 GB", each bound read as one word of its direction by
  ``text.facts.bounded``; "must" or "shall" put for "may" or "can", or "will" for "may", before the
  same verb, either way (in Chinese in a short run, with "at least" for "at most": ``_cjk_turned``);
  a comparison of two amounts the unit states the other way round ("costs less
  than" $99 for $299); "to"
  for "by" after a verb of change ("rose to 30 percent" for "rose by 30 percent"); "is" for "was" of
  a state the sentence says has ended ("was the coordinator until March"), or the reverse; or
  another unit of time or measure, "immediately" for an amount of time among them; another value in
  the place of the sentence's own, a time, an amount or a day, "opens at 9 am" for "from 8:00 am", also
  where the unit states that value in another sentence; "all" of a group the sentence narrows, "all
  patients" for "patients who are housebound", or "any" or "every" for a rule the sentence gives with an
  exception ("unless") the claim leaves out, or of a kind the sentence names, "every employee" for
  "full-time employees"; "always" or "all" for what the sentence says "may" happen, a word of certainty
  for it, "guaranteed a place" for "may progress", or its verb said plainly, "is blocking" for "may be
  blocking"; what the sentence allows "only" put beside something else, "either live chat or phone" for
  "only by phone"; two events put the other way round by the same "before" or "after"), a quantifier or a
  name flipped in a claim that otherwise restates the sentence (a negation over an opposite restates it:
  "does not open on Sundays" for "is closed on Sundays", as does an opposite at another statement's
  time: "closes at 6:30 pm" for "open from 8:00 am to 6:30 pm"), one word put for another in the same
  place (``flip_swap``; not a synonym, WordNet's or a verb of change in the same direction, "rose" for
  "increased", nor words put for the sentence's in REWORDED_SWAPS places, a rewording; in Chinese not
  Cilin's synonyms, words of grammar that say one thing, 会 for 将, nor a particle alone, 在 for 通过), or a
  clause the evidence does not state beside one it states word for word. In English a negation stands
  over its own clause, and the sentence's negation of words the claim does not say is no flip; in Chinese
  it stands over the characters after it within its clause. A negation that a word of the other side
  says alone is no flip ("at no cost" for "free", "as long as no one" for "unless", 不得进入 for 禁止进入), nor is the
  name of the sentence before put in the place of the pronoun that refers to it, nor a sentence's "no"
  over no word of the claim a quantifier put for the claim's.

A logistic regression over standardised features (``verify.support_model.SupportModel``, weights in
``support_model.json``, fitted by ``bench/calibrate_support.py`` on the AttributionBench
dev split), less the flip cues weighted by a fit on claims generated from our own units
(``asmr.eval.contradictions``), turns them into a probability. Two thresholds split it three ways: at or
above ``hard`` keep the citation; at or above ``soft`` ask the generator for one
rewrite grounded in the unit; below ``soft`` fail.

Everything is batched: one embedding call for all claims and evidence sentences not
yet seen (vectors are cached per text and embedder, units being cited over and over), one
kernel call for all the cosines; the rest is string work on short texts.
"""
from __future__ import annotations

import math
import operator
import re
from dataclasses import dataclass, field
from functools import lru_cache
from itertools import accumulate, combinations, permutations
from typing import Iterator, NamedTuple, Sequence

import numpy as np
from cydifflib import SequenceMatcher

from asmr.embed.cache import VectorCache, shared_cache
from asmr.text.cjk import (CJK_CAN, CJK_CHAR, CJK_FUNCTION_CHARACTERS, CJK_MUST, CJK_WILL, fold_han,
                           jieba_tokenizer)
from asmr.text.cjk import synonyms as cjk_synonyms
from asmr.text.entities import capitalised_spans, capitalised_words
from asmr.text.wordnet import has_antonym
from asmr.text.wordnet import opposite as wordnet_opposite
from asmr.text.wordnet import senses as wordnet_senses
from asmr.text.wordnet import synonym
from asmr.text.facts import (
    LOWER_BOUND,
    NUMERAL_CHARS,
    UPPER_BOUND,
    Fact,
    bounded,
    key_facts,
    measure_of,
    missing_facts,
    missing_from,
    number_value,
    number_word,
    numeral_value,
    time_span,
    time_word,
)
from asmr.text.relative_time import WEEKDAYS
from asmr.text.scripts import ALL_SCRIPTS, readable_share
from asmr.text.sentences import cut_long, sentence_ends
from asmr.text.tables import body_rows, column_names, row_key, row_statements
from asmr.text.when import MONTH_NAMES
from asmr.text.words import CLAIM_STOP_WORDS, PRONOUNS, claim_words, light_stem

from .claims import core_claim

# ---- words ------------------------------------------------------------------------------------

_NEGATIONS = frozenset("""
not no never none nobody nothing neither nor cannot can't won't don't doesn't didn't isn't aren't wasn't
weren't hasn't haven't hadn't shouldn't wouldn't couldn't mustn't without lack lacks lacking unable fail
fails failed absent
""".split())
_ANTONYMS = {}
for _a, _b in (("increas", "decreas"), ("increas", "reduc"), ("rise", "fall"), ("ris", "fall"), ("more", "less"),
               ("more", "fewer"), ("higher", "lower"), ("larger", "smaller"), ("bigger", "smaller"),
               ("greater", "lesser"), ("before", "after"), ("positiv", "negativ"), ("true", "false"),
               ("safe", "dangerous"), ("safe", "unsaf"), ("legal", "illegal"), ("possibl", "impossibl"),
               ("includ", "exclud"), ("win", "los"), ("won", "lost"), ("first", "last"), ("maximum", "minimum"),
               ("above", "below"), ("ahead", "behind"), ("above", "behind"), ("ahead", "below"),
               ("majority", "minority"), ("strong", "weak"), ("early", "late"),
               ("earlier", "later"), ("success", "failur"), ("allow", "prohibit"), ("allow", "forbid"),
               ("accept", "reject"), ("benefit", "harm"), ("cheap", "expensiv"), ("old", "young"),
               ("old", "new"), ("good", "bad"), ("better", "wors"), ("best", "worst"), ("hot", "cold"),
               ("warm", "cold"), ("fast", "slow"), ("faster", "slower"), ("long", "short"),
               ("longer", "shorter"), ("high", "low"), ("same", "different"), ("similar", "different"),
               ("always", "never"), ("all", "none"), ("male", "femal"), ("men", "women"), ("buy", "sell"),
               ("open", "clos"), ("start", "end"), ("begin", "end"), ("north", "south"), ("east", "west"),
               ("left", "right"), ("up", "down"), ("gain", "loss"), ("profit", "loss"), ("support", "oppos"),
               ("agre", "disagre"), ("common", "rare"), ("effectiv", "ineffectiv"), ("healthy", "unhealthy"),
               ("increas", "lower"), ("enhanc", "impair"), ("enabl", "disabl"), ("promot", "inhibit"),
               ("activ", "inactiv"), ("adde", "remov"), ("addin", "remov"), ("adds", "remov"),
               # what is asked of a person, and the parts of the day and the week (WordNet holds none of these
               # as antonyms; the Chinese are opposites by character: 必/选, 早/晚, 上/下)
               ("mandator", "optional"), ("compulsor", "optional"), ("obligator", "optional"), ("requir", "optional"),
               ("mandator", "voluntar"), ("compulsor", "voluntar"), ("permanent", "temporar"),
               ("weekday", "weekend"), ("morning", "afternoon"), ("morning", "evening"), ("afternoon", "evening"),
               ("noon", "midnight"), ("dawn", "dusk"), ("daytim", "nighttim"),
               # bounds and conditions ("orders over 50 euros", "children under 12"; "if" and "unless")
               ("over", "under"), ("unless", "if"), ("除非", "如果"), (LOWER_BOUND, UPPER_BOUND),
               ("增加", "减少"), ("上升", "下降"), ("提高", "降低"), ("增长", "下降"), ("之前", "之后"), ("最大", "最小"),
               ("支持", "反对"), ("成功", "失败"), ("允许", "禁止"), ("正确", "错误"),
               # the Chinese of the English pairs above (one-character opposites: _CJK_OPPOSITE_CHARS)
               ("第一", "最后"), ("开始", "结束"), ("开放", "关闭"), ("打开", "关闭"), ("接受", "拒绝"), ("包括", "排除"),
               ("以上", "以下"), ("至少", "最多"), ("至少", "至多"),
               ("多数", "少数"), ("便宜", "昂贵"), ("相同", "不同"), ("相似", "不同"), ("总是", "从不"),
               ("男性", "女性"), ("男人", "女人"), ("获得", "失去"), ("盈利", "亏损"), ("同意", "反对"), ("常见", "罕见"),
               ("有效", "无效"), ("增强", "削弱"), ("启用", "禁用"), ("促进", "抑制"), ("安全", "危险"), ("合法", "非法"),
               ("积极", "消极"), ("真实", "虚假"), ("胜利", "失败"), ("最好", "最差"), ("更好", "更差"), ("强大", "弱小")):
    _ANTONYMS.setdefault(_a, set()).add(_b)
    _ANTONYMS.setdefault(_b, set()).add(_a)
_HEDGE_WORDS = frozenset("may might could can possibly perhaps likely unlikely often sometimes generally "
                         "usually typically some many various several potentially suggest suggests".split())
_URL = re.compile(r"https?://\S+|www\.\S+")
_REF_HEAD = re.compile(r"^\s*(?:\[\d+\]\s*)?(?:Title:|Text:|Section:)?\s*", re.MULTILINE)


def _content(words: list[str], stems=None) -> list[str]:
    """The stems of the content words (``stems``: those of all ``words``, when already at hand)."""
    stems = map(light_stem, words) if stems is None else stems
    return [t for w, t in zip(words, stems) if w not in CLAIM_STOP_WORDS and (len(w) > 1 or not w.isascii())]


# A capitalised word and the letter that labels it ("Room A", "Plan B", "Vitamin D"): one word, since a
# letter alone is no content word and "Room B" would read as "Room A" does. Not "I" (a pronoun). In lower
# case only where the text also labels the word capitalised (``_join_labels``): "from A to B" is no label.
_LETTER_LABEL = re.compile(r"\b([A-Za-z][a-z]+) ([A-HJ-Z])\b(?![.'’]\w)")
_LETTER_GATE = re.compile(r" [A-HJ-Z]\b")  # what _LETTER_LABEL needs, found several times faster


def _join_labels(text: str) -> str:
    """``text`` with each letter that labels a thing joined to its word ("Room A" → "RoomA"); in lower case
    too where the text labels the same word capitalised ("room B" after "Room A")."""
    if not _LETTER_GATE.search(text):
        return text
    capitalised = {m.group(1).lower() for m in _LETTER_LABEL.finditer(text) if m.group(1)[0].isupper()}
    return _LETTER_LABEL.sub(lambda m: m.group(1) + m.group(2) if m.group(1)[0].isupper()
                             or m.group(1) in capitalised else m.group(0), text)


def _words(text: str) -> list[str]:
    """The check's words: ``claim_words``, with a bound on an amount as one word of its direction
    (``text.facts.bounded``), so that "up to" and "no more than" read alike, "at least" as their
    opposite, and the "no" of "no more than" is no negation; and a letter that labels a thing joined to
    its word ("rooma")."""
    text = _join_labels(text)
    if not text.isascii() and ("的" in text or "是" in text):
        text = _CJK_JOINERS.sub("", text)
    return bounded(claim_words(text))


# 的 and the copula 是 between two words: a claim puts them where a table's line or a terse sentence has
# none (1号楼的管家是李娜 for a row 1号楼 under 管家 李娜), and each would break two character pairs. Not in
# words they belong to (目的, 的确; 但是, 还是, 总是, 是否 and the like).
_CJK_JOINERS = re.compile(r"(?<![目])的(?![确士])|(?<![不但还总于就只可凡要或正也都即乃若老算像])是(?!否)")


# The word that makes a negation one of time ("no longer", "not ... anymore"), as stems
_NEGATION_TAILS = frozenset(map(light_stem, ("longer", "anymore")))


# Before "failed" these make it a word that describes a noun ("after five failed sign-in attempts", "a
# failed login"), which negates nothing the sentence says.
_BEFORE_ATTRIBUTE = frozenset(("a", "an", "the", "after", "of", "for", "any", "many", "several", "repeated",
                               "multiple", "each", "every", "all"))


def _negating(words: list[str], i: int) -> bool:
    """Whether ``words[i]`` negates: a word of _NEGATIONS or ending in "n't", and "failed" not as
    a describing word."""
    w = words[i]
    if w == "failed":
        before = words[i - 1] if i else ""
        return not (before in _BEFORE_ATTRIBUTE or before[:1].isdigit() or number_word(before))
    return w in _NEGATIONS or w.endswith("n't")


def _negated(words: list[str], text: str) -> bool:
    if not _NEGATIONS.isdisjoint(words) or ("'" in text and any(w.endswith("n't") for w in words)):
        return "failed" not in words or any(_negating(words, i) for i in range(len(words)))
    return not text.isascii() and _cjk_negates(text, 0, len(text))


# ---- evidence, split and indexed once ---------------------------------------------------------

MAX_SENTENCE_CHARS = 400
MAX_CANDIDATES = 12  # evidence sentences per pair whose cosine is computed


@dataclass
class _Evidence:
    sentences: list[str]
    sent_tokens: list[frozenset[str]]
    sent_words: list[frozenset[str]]
    sent_seq: list[list[str]]  # the words of each sentence in order
    sent_neg: list[bool]
    tokens: frozenset[str]
    prefixes: frozenset[str]
    bigrams: frozenset[tuple[str, str]]
    trigrams: frozenset[tuple[str, str, str]]
    n_words: int
    postings: dict[str, list[int]] = field(default_factory=dict)
    rows: tuple[tuple["_Cell | None", ...], ...] = ()  # its tables' body rows, cell by cell (_table_cells)
    columns: frozenset[str] = frozenset()  # the stems of its tables' column names (text.tables.column_names)


# A line break inside a sentence (hard-wrapped text: "take about\n2 minutes"): the next line goes on
# in lower case after a line that does not end a sentence.
_SOFT_BREAK = re.compile(r"(?<=[^\s.!?;:。！？；：])[ \t]*\n[ \t]*(?=[a-z])")


def _split_sentences(text: str) -> list[str]:
    text = _SOFT_BREAK.sub(" ", _URL.sub(" ", text))
    out: list[str] = []
    for line in text.split("\n"):
        line = _REF_HEAD.sub("", line, count=1)
        if len(line.strip()) < 3:
            continue
        start = 0
        for end in sentence_ends(line) + [len(line)]:
            if end > start:
                out.extend(piece for _, _, piece in cut_long(line, start, end, MAX_SENTENCE_CHARS) if len(piece) > 2)
            start = end
    return out


@lru_cache(maxsize=2048)
def _evidence(text: str) -> _Evidence:
    # a table row is read as its cells' statements (text.tables.row_statements)
    sentences = _split_sentences(row_statements(text)) or [text.strip() or "-"]
    sent_tokens, sent_words, sent_seq, sent_neg, words_all = [], [], [], [], []
    postings: dict[str, list[int]] = {}
    for i, s in enumerate(sentences):
        words = _words(s)
        words_all.extend(words)
        toks = frozenset(_content(words))
        sent_tokens.append(toks)
        sent_words.append(frozenset(words))
        sent_seq.append(words)
        sent_neg.append(_negated(words, s))
        for t in toks:
            postings.setdefault(t, []).append(i)
    tokens = frozenset().union(*sent_tokens)
    content = _content(words_all)
    stems = [light_stem(w) for w in words_all]
    return _Evidence(
        sentences=sentences, sent_tokens=sent_tokens, sent_words=sent_words, sent_seq=sent_seq,
        sent_neg=sent_neg, tokens=tokens,
        prefixes=frozenset(t[:4] for t in tokens if len(t) >= 4),
        bigrams=frozenset(zip(content, content[1:])),
        trigrams=frozenset(zip(stems, stems[1:], stems[2:])),
        n_words=len(words_all), postings=postings,
        rows=_table_cells(text) if "|" in text else (),
        columns=frozenset(_content(_words(" ".join(column_names(text))))) if "|" in text else frozenset())


_CLAUSE_SPLIT = re.compile(r"\s*(?:[;；:：]|[,，]\s*(?:while|whereas|but|although|though|and|which|who|as well as|"
                           r"including|with|making|leading to|resulting in)?|\s(?:while|whereas|but|although)\s|"
                           r"(?:但是|但|而|并且|同时|以及))\s*", re.IGNORECASE)
# Where a claim can split at all: a text without one of these is a single clause.
_CLAUSE_GATE = re.compile(r"[;；:：,，]|\s(?:while|whereas|but|although)\s|但|而|并且|同时|以及",
                          re.IGNORECASE)
MIN_CLAUSE_WORDS = 3


def _may_split(core: str) -> bool:
    """Whether ``_CLAUSE_GATE`` finds a place to split ``core``. ASCII text is screened by substring
    tests first: the pattern tries its alternatives at every position (about 4 us a claim), and most
    claims hold no comma and none of its words."""
    if not core.isascii():
        return _CLAUSE_GATE.search(core) is not None
    if "," in core or ";" in core or ":" in core:
        return True
    low = core.lower()
    return ("but" in low or "while" in low or "whereas" in low or "although" in low) \
        and _CLAUSE_GATE.search(core) is not None


@dataclass
class _Claim:
    core: str
    words: list[str]
    stems: list[str]
    content: list[str]
    neg: bool
    clauses: list[str]  # the parts of a compound claim, each of which must be supported; [] when one
    capitals: tuple[list[str], list[str]]  # its capitalised words, inside and opening (capitalised_words)


def _clauses(core: str) -> list[str]:
    """The parts of a compound claim: "A decreases X, while B increases it" → the two halves.

    Parts with fewer than MIN_CLAUSE_WORDS content words join the next part (a leading phrase), the
    last one the part before it.
    """
    if not _may_split(core):
        return []
    parts = [p for p in _CLAUSE_SPLIT.split(core) if p and p.strip()]
    merged: list[str] = []
    lead = ""  # a short part before another: a leading phrase of the next ("for X, A calls B")
    for k, part in enumerate(parts):
        part = f"{lead}, {part}" if lead else part
        lead = ""
        if len(_content(_words(part))) < MIN_CLAUSE_WORDS:
            if k + 1 < len(parts):
                lead = part
            elif merged:
                merged[-1] = f"{merged[-1]}, {part}"
            else:
                merged.append(part)
        else:
            merged.append(part)
    return merged if len(merged) > 1 else []


def _claim(sentence: str) -> _Claim:
    core = core_claim(sentence)
    words = _words(core)
    stems = list(map(light_stem, words))
    return _Claim(core=core, words=words, stems=stems, content=_content(words, stems),
                  neg=_negated(words, core), clauses=_clauses(core), capitals=capitalised_words(core))


def _candidates(claim: _Claim, ev: _Evidence, k: int = MAX_CANDIDATES) -> list[int]:
    """Indices of the evidence sentences sharing the most content words with the claim (up to k)."""
    n = len(ev.sentences)
    if n <= k:
        return list(range(n))
    hits: dict[int, int] = {}
    for t in set(claim.content):
        for i in ev.postings.get(t, ()):
            hits[i] = hits.get(i, 0) + 1
    ranked = sorted(hits, key=lambda i: (-hits[i], i))[:k]
    if len(ranked) < k:
        ranked += [i for i in range(n) if i not in hits][:k - len(ranked)]
    return sorted(ranked)


# ---- features ---------------------------------------------------------------------------------

FEATURES = (
    "cos_max", "cos_top2", "cos_doc", "cos_best_lex",
    "recall", "recall_soft", "recall_best_sent", "recall_best_pair", "recall_cos_sent",
    "bigram_recall", "trigram_recall", "novel_log",
    "facts_n", "facts_share", "missing_number", "missing_date", "missing_entity", "missing_code",
    "neg_mismatch", "antonym", "hedged", "claim_len_log", "evidence_len_log",
    "clause_min_cos", "clause_min_recall", "negation_conflicts",
    "aligned_neg_mismatch", "aligned_replaced", "aligned_replaced_names", "aligned_added", "quantifier_change",
    "flip_negation", "flip_opposite", "flip_quantifier", "flip_names", "flip_clause", "flip_swap",
    "readable",
)
_feature_row = operator.itemgetter(*FEATURES)  # one pair's features, by name, as a row in FEATURES' order
# The features that are the embedder's cosines: they say nothing where it cannot read the text
# ("readable": the share of the claim's and the evidence's words, the lesser, in the scripts it reads).
COSINE_FEATURES = ("cos_max", "cos_top2", "cos_doc", "cos_best_lex", "clause_min_cos")
# Features no model weighs: "readable" gates the cosines (support_model.standardised) and the swap cue.
GATE_FEATURES = ("readable",)
# The cues of a contradiction: SupportModel.contradiction weighs these, fitted on generated claims.
FLIP_FEATURES = ("flip_negation", "flip_opposite", "flip_quantifier", "flip_names", "flip_clause",
                 "flip_swap")


def _lexical(claim: _Claim, ev: _Evidence, best_cos_sent: int, per_sent: list[int]) -> dict[str, float]:
    """Word overlap; ``per_sent``: the claim's content words each evidence sentence shares."""
    content = claim.content
    n = len(content)
    f: dict[str, float] = {}
    if n == 0:
        f.update(recall=1.0, recall_soft=1.0, recall_best_sent=1.0, recall_best_pair=1.0, recall_cos_sent=1.0,
                 bigram_recall=1.0, novel_log=0.0, antonym=0.0)
    else:
        found = list(map(ev.tokens.__contains__, content))
        hit = sum(found)
        soft = hit if hit == n else hit + sum(
            0.5 for t, ok in zip(content, found) if not ok and len(t) >= 4 and t[:4] in ev.prefixes)
        f["recall"] = hit / n
        f["recall_soft"] = soft / n
        cset = set(content)
        best = max(per_sent)
        pair = max((per_sent[i] + len((cset - ev.sent_tokens[i]) & ev.sent_tokens[i + 1])
                    for i in range(len(per_sent) - 1)), default=best)
        f["recall_best_sent"] = best / len(cset)
        f["recall_best_pair"] = max(best, pair) / len(cset)
        f["recall_cos_sent"] = per_sent[best_cos_sent] / len(cset)
        bigrams = list(zip(content, content[1:]))
        f["bigram_recall"] = (sum(map(ev.bigrams.__contains__, bigrams)) / len(bigrams)
                              if bigrams else f["recall"])
        f["novel_log"] = math.log1p(n - hit)
        ant = 0
        for t, ok in zip(content, found) if hit < n else ():
            if not ok:
                for a in _ANTONYMS.get(t, ()):
                    if a in ev.tokens:
                        ant += 1
                        break
        f["antonym"] = float(ant)
    tri = list(zip(claim.stems, claim.stems[1:], claim.stems[2:]))
    f["trigram_recall"] = (sum(map(ev.trigrams.__contains__, tri)) / len(tri)) if tri else f["bigram_recall"]
    f["hedged"] = float(not _HEDGE_WORDS.isdisjoint(claim.words))
    f["claim_len_log"] = math.log1p(len(claim.words))
    f["evidence_len_log"] = math.log1p(ev.n_words)
    return f


NEGATION_SCOPE = 4  # words after a negation that it covers
# Words that open a clause: a negation's reach ends there ("a door that does not lock while the alarm is off")
_CLAUSE_OPENERS = frozenset("while because when whenever which that who whom whose if unless although "
                            "though since so but or whereas after before until".split())


def _negated_stems(words: list[str]) -> set[str]:
    """Content stems within NEGATION_SCOPE words after a negation ("not able to benefit" → able, benefit)."""
    return set().union(*_negation_scopes(words))


def _negation_scopes(words: list[str]) -> list[set[str]]:
    """Per negation of ``words``, the content stems within NEGATION_SCOPE words after it, up to where a
    clause opens ("drivers do not carry change so passengers must …": not "passengers")."""
    out = []
    for i in range(len(words)):
        if _negating(words, i):
            scope = set()
            for v in words[i + 1:i + 1 + NEGATION_SCOPE]:
                if v in _CLAUSE_OPENERS:
                    break
                if v not in CLAIM_STOP_WORDS:
                    scope.add(light_stem(v))
            out.append(scope)
    return out


def _negation_conflicts(claim: _Claim, sentence: str) -> int:
    """Shared content words negated on one side only: "X will not benefit" against "X could benefit". In
    words, a word a negation stands over on one side conflicts unless a negation of the other side's clause
    comes before it ("not on the Airport Express X1" restates "Discounts do not apply to the Airport
    Express route X1", though the two negations stand before other words), and every shared word
    conflicts where a clause negates once more or once less than the clause it restates."""
    words = _words(sentence)
    shared = set(claim.content) & {light_stem(w) for w in words}
    if not shared:
        return 0
    if CJK_CHAR.search(claim.core) or CJK_CHAR.search(sentence):
        return len((_negated_stems(claim.words) ^ _negated_stems(words)) & shared)
    if _negations_differ(claim.core, sentence):
        return len(shared)
    (mine, mine_to_end), (theirs, theirs_to_end) = _clause_negations(claim.core), _clause_negations(sentence)
    if not _COST_STEMS.isdisjoint(mine) and not _COST_STEMS.isdisjoint(theirs):
        # a word of cost negated on both sides says one thing: "without paying extra", "at no extra cost"
        mine, theirs = _as_cost(mine), _as_cost(theirs)
        mine_to_end, theirs_to_end, shared = _as_cost(mine_to_end), _as_cost(theirs_to_end), _as_cost(shared)
    return len(((mine - theirs_to_end) | (theirs - mine_to_end)) & shared)


def _as_cost(stems: set[str]) -> set[str]:
    """``stems`` with every word of cost (_COST_STEMS) as one, "cost"."""
    return {"cost" if s in _COST_STEMS else s for s in stems}


# Where a clause ends, for what a negation may stand over: punctuation and the words that open a clause
_CLAUSE_BOUNDARY = re.compile(r"[;:,()]|\b(?:" + "|".join(sorted(_CLAUSE_OPENERS)) + r")\b", re.IGNORECASE)


@lru_cache(maxsize=4096)
def _clause_words(text: str) -> tuple[tuple[tuple[str, ...], tuple[bool, ...]], ...]:
    """Each clause of ``text`` (split at _CLAUSE_BOUNDARY) as its words and which of them negate; kept,
    since the sentences of a unit are read for every claim that cites it."""
    out = []
    for piece in _CLAUSE_BOUNDARY.split(text):
        words = _words(piece)
        out.append((tuple(words), tuple(_negating(words, i) for i in range(len(words)))))
    return tuple(out)


def _clause_negations(text: str) -> tuple[set[str], set[str]]:
    """What the negations of ``text`` stand over, each clause alone: the stems within NEGATION_SCOPE words
    after each (:func:`_negated_stems`), and the stems after each to its clause's end."""
    covered: set[str] = set()
    to_end: set[str] = set()
    for words, negating in _clause_words(text):
        if any(negating):
            covered.update(*_negation_scopes(list(words)))
            to_end.update(light_stem(w) for w in words[negating.index(True) + 1:])
    return covered, to_end


def _negations_differ(claim: str, sentence: str) -> bool:
    """Whether a clause of the claim negates once more or once less than the clause of the sentence it
    restates (that shares most of its other words, each holding half the other's at least): "who should
    be" for "who shouldn't be", "is not held" beside "after the failed attempt" for "is held"."""
    def clauses(text: str) -> list[tuple[set[str], int]]:
        return [({light_stem(w) for w, n in zip(words, negating) if not n}, sum(negating))
                for words, negating in _clause_words(text)]

    theirs = clauses(sentence)
    for stems, count in clauses(claim):
        shared, their_stems, their_count = max(((len(stems & s), s, c) for s, c in theirs),
                                               key=lambda x: x[0])
        if 2 * shared >= max(len(stems), len(their_stems), 1) and (count - their_count) % 2:
            return True
    return False


_NEGATIVE_QUANTIFIERS = frozenset(("no", "none", "never", "nobody", "nothing"))
_QUANTIFIERS = frozenset("all every each no none never always only few many most some any nobody nothing everyone "
                         "everything".split())
_CJK_QUANTIFIERS = ("所有", "每", "没有", "从不", "总是", "只", "全部", "部分", "大多数", "少数", "任何")


# The words that say "all of them" are one quantifier: "each room" and "every member of staff" restate
# "all rooms" and "all staff", where "some" or "no" would flip them.
_QUANTIFIER_OF = dict.fromkeys(("every", "each", "everyone", "everything", "所有", "全部", "每"), "all")


def _counted(words: list[str]) -> bool:
    """Whether "only" counts rather than restricts: "only one person at a time", "only 3 tickets"."""
    return any(w == "only" and i + 1 < len(words) and (words[i + 1][0].isdigit() or number_word(words[i + 1]))
               for i, w in enumerate(words))


_EVERY = re.compile(r"\b(?:every|each)\b", re.IGNORECASE)
_LETTERS = re.compile(r"[a-z]+")


@lru_cache(maxsize=4096)
def _frequency_units(text: str) -> frozenset[str] | None:
    """The units of time of a text's "every" and "each" where each of them says how often (a frequency
    of ``text.facts.key_facts``: "every month", "each 8 hours", "every night"); None where one of them
    quantifies a group."""
    units = [f.text.split()[-1].lower() for f in key_facts(text)
             if f.norm.startswith("every ") and f.text[:5].lower() in ("every", "each ")]
    if len(units) != len(_EVERY.findall(text)):
        return None
    return frozenset(u[:-1] if u.endswith("s") else u for u in units)


@lru_cache(maxsize=4096)
def _letter_words(text: str) -> frozenset[str]:
    """A text's runs of letters, in lower case, plurals also as their one ("months" as "month")."""
    words = _LETTERS.findall(text.lower())
    return frozenset(words).union(w[:-1] for w in words if w.endswith("s"))


def _quantifiers(words, text: str, other: str = "") -> set[str]:
    """The quantifiers a text uses, those that say "all" as one. "every" and "each" do not count where
    each says how often in a unit of time that the ``other`` text also names: "every month" restates
    "per calendar month"."""
    out = set(_QUANTIFIERS.intersection(words))
    if other and not out.isdisjoint(("every", "each")):
        units = _frequency_units(text)
        if units is not None and units <= _letter_words(other):
            out -= {"every", "each"}
    if not text.isascii():
        out.update(q for q in _CJK_QUANTIFIERS if q in text)
    return {_QUANTIFIER_OF.get(q, q) for q in out}


FLIP_SHARE = 0.6  # share of the claim's words its sentence must state before a flipped cue counts
_NEGATING_PREFIXES = ("un", "in", "im", "il", "ir", "dis", "non", "non-", "不", "非", "无")
# Prefixes of opposite direction: one word's stem under the other prefix is its opposite
# ("internal"/"external", "upload"/"download", "overestimate"/"underestimate", "maximum"/"minimum").
_OPPOSING_PREFIXES = (("in", "ex"), ("im", "ex"), ("in", "out"), ("up", "down"), ("over", "under"),
                      ("pre", "post"), ("max", "min"), ("en", "de"))
MIN_PREFIXED_STEM = 4  # what is left after the prefix: "export" → "port", not "ex" + "it"


@lru_cache(maxsize=65536)
def _opposites_of(a: str) -> tuple[tuple[str, ...], frozenset[str]]:
    """What is opposite to ``a``: the beginnings of its antonyms (the table holds stems, "increas"),
    ``a`` with a negating prefix added or removed, and ``a`` with a prefix of opposite direction."""
    stems = tuple(o for i in range(min(len(a), 9), 1, -1) for o in _ANTONYMS.get(a[:i], ()))
    forms = {p + a for p in _NEGATING_PREFIXES}
    forms.update(a[len(p):] for p in _NEGATING_PREFIXES if a.startswith(p) and len(a) > len(p) + 2)
    for pair in _OPPOSING_PREFIXES:
        for p, q in (pair, pair[::-1]):
            if a.startswith(p) and len(a) - len(p) >= MIN_PREFIXED_STEM:
                forms.add(q + a[len(p):])
    return stems, frozenset(forms)


# No time at all, put for an amount of time ("immediately" for "within 48 hours"), either way: the key-fact
# check sees a duration on one side only, and the words around it may be restated.
_AT_ONCE = frozenset("immediately instantly immediate instant".split())


TIME_REACH = 6  # the words of a run an amount of time is read in: "within 48 hours of"


def _at_once_for_a_time(ours: list[str], other: list[str], reach: int | None = TIME_REACH) -> bool:
    """Whether one run says "immediately" (or "at once") where the other states an amount of time in
    its first ``reach`` words ("within 48 hours of"; "kept for 14 days in the log directory", where the
    claim ends and the sentence goes on; None: anywhere in it)."""
    ours, other = ours[:reach], other[:reach]

    def timed(words: list[str]) -> bool:
        return any(map(time_word, words)) and any(
            number_word(w) or w in ("a", "an") for w in words)

    def at_once(words: list[str]) -> bool:
        return not _AT_ONCE.isdisjoint(words) or ("at", "once") in zip(words, words[1:])

    return (at_once(ours) and timed(other)) or (at_once(other) and timed(ours))


# Verbs of a change in one direction, which WordNet keeps in separate synsets ("rise" moves up, "increase"
# becomes bigger): "prices rose by 30 percent" restates "prices increased by 30 percent".
_TREND = dict.fromkeys("""rise rises rose risen rising increase increases increased increasing grow grows grew grown
growing climb climbs climbed climbing jump jumps jumped jumping surge surges surged surging soar soars soared
soaring""".split(), 1) | dict.fromkeys("""fall falls fell fallen falling decrease decreases decreased decreasing
decline declines declined declining drop drops dropped dropping shrink shrinks shrank shrunk shrinking dip dips
dipped dipping sink sinks sank sunk sinking slump slumps slumped slumping plunge plunges plunged plunging""".split(), -1)


def _same_trend(a: str, b: str) -> bool:
    """Whether two words are verbs of a change in the same direction ("rose", "increased")."""
    return _TREND.get(a, 0) * _TREND.get(b, 0) > 0


# Verbs that change an amount, of themselves (_TREND) or done to it: after one, "to 30 percent" is where
# the amount ends and "by 30 percent" how much it moved.
_CHANGED = frozenset(_TREND) | frozenset("""raise raises raised raising reduce reduces reduced reducing lower lowers
lowered lowering cut cuts cutting boost boosts boosted boosting""".split())


def _level_for_change(mine: list[str], a0: int, a1: int, theirs: list[str], b0: int, b1: int) -> bool:
    """Whether the claim puts "to" for "by" (or the reverse) between a verb of change and an amount, the
    verb itself restated or said another way: "rose to 30 percent" for "rose by 30 percent", "dropped to a
    third" for "fell by a third"."""
    if not (0 < a1 - a0 <= 2 and 0 < b1 - b0 <= 2) or {mine[a1 - 1], theirs[b1 - 1]} != {"to", "by"}:
        return False
    return all(i >= 2 and words[i - 2] in _CHANGED and i < len(words)
               and (number_word(words[i]) or words[i] in ("a", "an", "half"))
               for words, i in ((mine, a1), (theirs, b1)))


# A state the sentence says has ended ("was the coordinator until March", "was formerly the head of IT")
# put in the present ("is the coordinator"), or the other way round: what a reader asks of a memory whose
# facts change.
_PRESENT_BE, _PAST_BE = frozenset({"is", "are"}), frozenset({"was", "were"})
_ENDED = frozenset({"until", "till", "formerly", "previously"})


def _ended_as_present(mine: list[str], a0: int, a1: int, theirs: list[str], b0: int, b1: int) -> bool:
    """Whether one side says "is" / "are" where the other says "was" / "were" of a state that, after
    that verb, it says has ended."""
    if not (0 < a1 - a0 <= 2 and 0 < b1 - b0 <= 2):
        return False
    if mine[a0] in _PRESENT_BE and theirs[b0] in _PAST_BE:
        past, verb = theirs, b0
    elif mine[a0] in _PAST_BE and theirs[b0] in _PRESENT_BE:
        past, verb = mine, a0
    else:
        return False
    return not _ENDED.isdisjoint(past[verb + 1:])


# What will or must be, and what may be, before a verb, either way: "Visitors may sign in" for "must sign
# in", "will be discharged" for "may be discharged", "are required to drink" for "may drink" (exact words,
# not stems: the stem table would pair every word beginning "can" with "must"); "will" and "can" say one
# thing often enough ("a lower rate can deliver" what "will deliver"). The words of an obligation that
# need "to" ("have to", "required to") count only with it ("have completed" is no obligation).
_MODAL_KIND = {"will": "will", "must": "must", "shall": "must", "may": "may", "might": "may", "can": "can",
               "could": "can"}
_MUST_BEFORE_TO = frozenset({"have", "has", "need", "needs", "required", "obliged"})
_MODALS_TURNED = frozenset({("will", "may"), ("must", "may"), ("must", "can")})
_BEFORE_VERB = frozenset({"be", "to", "also", "still", "then", "just", "only"})
_MODAL_WORDS = frozenset(_MODAL_KIND).union(_MUST_BEFORE_TO)


def _modal_of(words: list[str], i: int) -> str | None:
    """The kind of modal the verb ``words[i]`` stands under within three words before it (will, must, may,
    can); None under none, or under a negation (that "may not" and "must not" both forbid is the
    negation's to read)."""
    for k in range(i - 1, max(-1, i - 4), -1):
        w = words[k]
        if w in _MODAL_KIND:
            return _MODAL_KIND[w]
        if w in _MUST_BEFORE_TO and words[k + 1] == "to":
            return "must"
        if w not in _BEFORE_VERB:
            return None
    return None


def _modal_turned(mine: list[str], theirs: list[str]) -> bool:
    """Whether a verb both say stands under "will" or "must" on one side and "may" (or "can", against
    "must") on the other, or under "may" in the sentence and no modal in a claim that keeps no word of
    chance or leave (_CHANCE_OR_LEAVE): "is blocking the ports" for "may be blocking the ports"."""
    plain = _CHANCE_OR_LEAVE.isdisjoint(mine)
    # "only one person may enter" is what "everyone must enter one at a time" says
    turned = not (_MODAL_WORDS.isdisjoint(mine) or "only" in mine or "only" in theirs)
    if _MODAL_WORDS.isdisjoint(theirs) or not (turned or plain):
        return False
    at = {light_stem(w): j for j, w in enumerate(theirs) if w not in CLAIM_STOP_WORDS}
    for i, w in enumerate(mine):
        j = at.get(light_stem(w)) if w not in CLAIM_STOP_WORDS else None
        if j is not None and not _negating(mine, i):  # "may not" and "must not" both forbid
            pair = (_modal_of(mine, i), _modal_of(theirs, j))
            if (turned and (pair in _MODALS_TURNED or pair[::-1] in _MODALS_TURNED)
                    or plain and pair == (None, "may")):
                return True
    return False


def _certain_for_hedged(mine: list[str], theirs: list[str]) -> bool:
    """Whether the claim says with a word of certainty what the sentence hedges, keeping no word of chance
    or leave: "are guaranteed a place" for "may progress"."""
    return not _CERTAIN.isdisjoint(mine) and _CHANCE_OR_LEAVE.isdisjoint(mine) and not _HEDGES.isdisjoint(theirs)


# A sentence that may join two statements ("open on weekdays and closed on Sundays", "Gate A opens at
# 6 am and Gate B at 7 am"): what _statements needs, found before any word is compared
_CONJUNCT_GATE = re.compile(r"[;,]|\s(?:and|but|while|whereas)\s")
_STATEMENT_SPLIT = re.compile(r"\s*(?:;|,\s*(?:and|but|while|whereas)?\s|\s(?:and|but|while|whereas)\s)\s*")
_DAY_WORDS = (*WEEKDAYS, "weekday", "weekend")


def _labelled(a: str, b: str) -> bool:
    """Two words the check joined to a letter that labels them ("rooma", "roomb"): one thing's two
    instances."""
    return len(a) == len(b) > 2 and a[:-1] == b[:-1] and a[-1] != b[-1] and a[:-1].isalpha()


_PREFIXES = tuple({*_NEGATING_PREFIXES, *(p for pair in _OPPOSING_PREFIXES for p in pair)})


@lru_cache(maxsize=65536)
def _may_oppose(word: str) -> bool:
    """Whether ``word`` may be one of a pair that :func:`_opposite` reads as opposites (which holds only
    where one of the two is): it has an antonym, in the stem table or WordNet, or opens with a prefix."""
    return (bool(_opposites_of(word)[0] or _opposites_of(_comparative(word))[0]) or has_antonym(word)
            or word.startswith(_PREFIXES))


def _value_word(word: str, stem: str, names: set[str] | frozenset[str]) -> bool:
    """Whether a word (``stem`` its stem) states a value of a statement: a number, in digits or words, a
    name (``names``: the text's capitalised words, as stems) or a day."""
    return stem[0].isdigit() or stem in names or stem.startswith(_DAY_WORDS) or number_word(word)


def _numeric(*stems: str) -> bool:
    return any(t[0].isdigit() for t in stems)


def _parallel(stems: tuple[str, ...], a: int, b: int, starts: set[int]) -> tuple[int, int] | None:
    """Where two statements that open alike (from ``a`` and ``b``) first differ, if the word after is the
    same in both: "full-time staff get" / "part-time staff get", "the server in Frankfurt handles" /
    "the server in Ohio handles"."""
    n = len(stems)
    while b < n and stems[a] == stems[b] and a + 1 not in starts and b + 1 not in starts:
        a, b = a + 1, b + 1
    if (b + 1 >= n or a + 1 in starts or b + 1 in starts or stems[a] == stems[b]
            or stems[a + 1] != stems[b + 1]):
        return None
    return None if _numeric(stems[a], stems[b], stems[a + 1]) else (a, b)


def _gapped(a: list[str], b: list[str]) -> tuple[int, int] | None:
    """Where a statement that leaves out the verb and words of the one before it names its own thing after
    the same small word, or first: "for scooters 25 euros" after "hire for bikes costs 15 euros a day", "8
    euros for seniors" after "entry is 14 euros for adults", "students 7 euros" after "adults pay 12 euros
    per lesson". ``b`` states a value, and every content word of it but one is ``a``'s; that one follows a
    word that ``a`` has too, before a content word of its own, or opens ``b`` as ``a``'s first content
    word opens ``a``: the two statements' things (``a``'s and ``b``'s positions of "bikes" and "scooters")."""
    if not any(w[0].isdigit() or number_word(w) for w in b):
        return None
    theirs = {light_stem(w) for w in a}
    own = [i for i, w in enumerate(b) if w not in CLAIM_STOP_WORDS and not number_word(w)
           and light_stem(w) not in theirs]
    if len(own) != 1 or own[0] > 0 and b[own[0] - 1] not in CLAIM_STOP_WORDS:
        return None
    y = own[0]
    ours = {light_stem(w) for w in b}

    def thing(x: str) -> bool:
        return (x not in CLAIM_STOP_WORDS and not number_word(x) and x[0].isalpha()
                and light_stem(x) not in ours)

    if y == 0:  # the subject: "students 7 euros" after "adults pay 12 euros per lesson"
        first = next((i for i, w in enumerate(a) if w not in CLAIM_STOP_WORDS), None)
        return (first, 0) if first is not None and thing(a[first]) else None
    return next(((i + 1, y) for i in range(len(a) - 1) if a[i] == b[y - 1] and thing(a[i + 1])), None)


@lru_cache(maxsize=4096)
def _pivots(sentence: str) -> tuple[tuple[str, ...], tuple[tuple[int, int, int, int], ...], frozenset[str]]:
    """What :func:`_statements` reads of a sentence, whatever the claim: the stems of its words (content
    words and numbers); each pair of pivots, with where the first's statement begins and where the
    second's does; and the stems that are values (numbers, in digits or words, names and days)."""
    if not _CONJUNCT_GATE.search(sentence):
        return (), (), frozenset()
    # a number is a value, though no content word ("at 7 am")
    # and so is a small word whose opposite the sentence also says ("switched on in October and switched
    # off in April", "before ... after")
    # labels joined in the whole sentence first: "room B" is a label after "Room A"
    parts = [_words(part) for part in _STATEMENT_SPLIT.split(_join_labels(sentence))]
    small = {w for part in parts for w in part if w in CLAIM_STOP_WORDS and _may_oppose(w)}
    opposed = {w for w in small if any(_opposite(w, v) for v in small if v != w)}
    words: list[str] = []
    starts: list[int] = []  # where each statement's words begin
    at: list[dict[int, int]] = []  # each statement's word positions → their places in ``words``
    for part in parts:
        starts.append(len(words))
        at.append({})
        for i, w in enumerate(part):
            if (w[0].isdigit() or w in opposed or number_word(w)
                    or (w not in CLAIM_STOP_WORDS and (len(w) > 1 or not w.isascii()))):
                at[-1][i] = len(words)
                words.append(w)
    stems = tuple(light_stem(w) for w in words)
    begins = {s for s in starts if s < len(words)}
    labels = _LETTER_GATE.search(sentence) is not None
    may = [labels or _may_oppose(w) for w in words]
    n = len(words)
    names = {light_stem(w) for w in capitalised_words(sentence)[0]}  # not the opening word: "Sales rose"
    # an opposite in a name is none ("north of the river, next to the South Gate")
    found = {(p, q) for p in range(n) for q in range(p + 1, n) if stems[p] != stems[q] and (may[p] or may[q])
             and (_labelled(words[p], words[q]) or stems[p] not in names and stems[q] not in names
                  and (_opposite(words[p], words[q]) or _opposite(words[q], words[p])))}
    ordered = sorted(begins)
    found.update(pair for i, a in enumerate(ordered) for b in ordered[i + 1:]
                 if (pair := _parallel(stems, a, b, begins)) is not None)
    gaps = [(i, k, _gapped(parts[i], parts[k])) for k in range(1, len(parts)) for i in range(k)]
    found.update((at[i][gap[0]], at[k][gap[1]]) for i, k, gap in gaps
                 if gap is not None and gap[0] in at[i] and gap[1] in at[k])
    # one thing with two numbers, each statement's subject ("bus 12 stops at the station, whereas bus 40
    # stops at the airport"), not a verb's two values ("costs 10 euros ... costs 20 euros"); "version 2.3"
    # reads as "2", "3": the pivot is where the two numbers first differ
    numbered = [i for i in range(1, n)
                if stems[i][0].isdigit() and i - 1 in begins and not stems[i - 1][0].isdigit()]
    for k, first in enumerate(numbered):
        for second in numbered[k + 1:]:
            a, b = first, second
            if stems[a - 1] == stems[b - 1]:
                while (b + 1 < n and stems[a] == stems[b] and stems[a + 1][0].isdigit()
                       and stems[b + 1][0].isdigit()):
                    a, b = a + 1, b + 1
                if stems[a] != stems[b]:
                    found.add((a, b))
    statement = [max((s for s in ordered if s <= i), default=0) for i in range(n)]
    values = frozenset(t for w, t in zip(words, stems) if _value_word(w, t, names))
    # a small word pivots only between statements that each state a value ("on at 10 pm ... off at 6
    # am"): "log in before the shift and log out after it" leaves its subject to the first statement,
    # and a claim of the second would hold the first's words
    valued = {statement[i] for i in range(n) if stems[i] in values}
    pairs = tuple((p, q, statement[p], statement[q]) for p, q in sorted(found)
                  if statement[p] != statement[q] and (
                      words[p] not in opposed and words[q] not in opposed
                      or statement[p] in valued and statement[q] in valued))
    if not pairs:
        return (), (), frozenset()
    return stems, pairs, values


def _statements(claim_stems: set[str], sentence: str) -> tuple[bool, frozenset[str]]:
    """Whether the claim takes one statement of a sentence that makes two and puts the other's words
    with it: against "open from 9 am to 8 pm on weekdays and closed on Sundays", "closed on weekdays";
    against "Gate A opens at 6 am and Gate B at 7 am", "Gate B opens at 6 am". Every word of such a
    claim is the sentence's, so none reads as put for another. The statements are told apart by a
    pivot (``_pivots``): a word and its opposite ("open", "closed"), one thing with two letters or
    numbers ("Gate A", "Gate B"; "bus 12", "bus 40"), or the words where two statements that open
    alike differ ("full-time staff get ..., while part-time staff get ..."). The first pivot's
    statement runs from its start to where the second's begins, the second's to the sentence's end (so
    a statement may go on past a comma: "Plan A costs 10 euros and includes 5 GB; Plan B ..."); what
    each says is its words the other lacks. The claim crosses where it holds one pivot and a word of
    the other's statement, and none of its own statement's values (numbers, names, days): a subject or
    a verb may serve both statements, said once ("Gate B [opens] at 7 am", "the pool opens at 6 am on
    weekdays and [opens] at 8 am on weekends").

    Also returns the pivots the claim holds with one of their own statement's values and none of the
    other's (which has some), and those values: it restates that statement ("In winter the museum opens
    at 10 am" for "In summer the museum opens at 9 am, and in winter it opens at 10 am"), its pivot is no
    opposite put for the other's, and its values are no amounts put for the other's."""
    stems, pairs, values = _pivots(sentence)
    alone: set[str] = set()
    for p, q, first_at, second_at in pairs:
        if (stems[p] in claim_stems) == (stems[q] in claim_stems):
            continue
        first, second = set(stems[first_at:second_at]) - {stems[p]}, set(stems[second_at:]) - {stems[q]}
        said_a, said_b = first - second, second - first
        own, other = (said_a, said_b) if stems[p] in claim_stems else (said_b, said_a)
        if not own.isdisjoint(claim_stems & values):
            if other & values and other.isdisjoint(claim_stems & values):  # the other's values, all left out
                alone.add(stems[p] if stems[p] in claim_stems else stems[q])
                alone.update(own & claim_stems & values)
        elif not other.isdisjoint(claim_stems):
            return True, frozenset()
    return False, frozenset(alone)


# A time of day said in words is the number a clock shows ("noon" for "12 pm"), so that the values of
# two sentences compare (``_value_put``); the key-fact check reads only the digits.
_CLOCK_WORDS = re.compile(r"\b(?:12\s+)?(noon|midday|midnight)\b", re.IGNORECASE)
# a month by its name as written: "may" in lower case is a modal
_MONTH_NAME = re.compile(rf"\b(?:{'|'.join(MONTH_NAMES)})\b")
_RANGE_ENDS = frozenset(("to", "until", "till", "through"))
VALUE_PUT_UNSTATED = 1  # the claim's words besides its values that its sentence may lack


# A kind of day between an amount and its unit ("two working days"): the key-fact check reads no amount
# there, and for comparing two sentences' values it is the same unit.
_DAY_KIND_STEMS = frozenset(map(light_stem, ("working", "business", "calendar", "school", "clear", "full")))
_DAY_KINDS = re.compile(r"\b(?:working|business|calendar|school|clear|full)\s+(?=(?:day|week)s?\b)",
                        re.IGNORECASE)


def _comparable(text: str) -> str:
    """``text`` with its times of day in words as a clock's ("noon": "12 pm") and the kind of day
    between an amount and its unit left out ("two working days": "two days")."""
    if "ing " in text or "ess " in text or "ar " in text or "l " in text:  # what _DAY_KINDS needs, cheaply
        text = _DAY_KINDS.sub("", text)
    return _CLOCK_WORDS.sub(lambda m: "12 am" if m.group(1).lower() == "midnight" else "12 pm", text)


def _days(text: str, words: list[str]) -> frozenset[str]:
    """The days and months a text names ("saturday", "weekday", "july"; plurals as their one; a month
    only by its capitalised name)."""
    days = {w[:-1] if w.endswith("s") else w for w in words if w.startswith(_DAY_WORDS)}
    days.update(m.lower() for m in _MONTH_NAME.findall(text))
    return frozenset(days)


# The days "weekday" and "weekend" name: "on weekdays" says "Monday to Friday", no other day
_DAYS_OF = {"weekday": frozenset(WEEKDAYS[:5]), "weekend": frozenset(WEEKDAYS[5:])}


def _spanned_days(days: frozenset[str]) -> frozenset[str]:
    """``days`` with the days each of "weekday" and "weekend" names."""
    return days.union(*(_DAYS_OF[d] for d in days if d in _DAYS_OF))


_DURATIONS = frozenset(("s", "min", "h", "day", "week", "month", "year"))  # one kind: "one hour", "two days"


@lru_cache(maxsize=4096)
def _numbers(text: str) -> dict[str, list[Fact]]:
    """A text's numbers by their unit: "9" and "8" of a time of day, "14 day" and "20 min" (amounts of
    time are one kind, "duration")."""
    out: dict[str, list[Fact]] = {}
    for f in key_facts(_comparable(text)):
        if f.kind == "number":
            unit = f.norm.partition(" ")[2]
            out.setdefault("duration" if unit in _DURATIONS else unit, []).append(f)
    return out


def _amount_like(stem: str) -> bool:
    """Whether a stem may be part of an amount: a number, a unit, a kind of day ("working")."""
    return stem[0].isdigit() or number_word(stem) or measure_of(stem) is not None or stem in _DAY_KIND_STEMS


def _value_like(stem: str) -> bool:
    """Whether a stem may be part of a value: an amount, a day, a time of day in words."""
    return _amount_like(stem) or stem.startswith(_DAY_WORDS) or _CLOCK_WORDS.fullmatch(stem) is not None


def _value_put(claim: _Claim, content_stems: frozenset[str], unstated: list[str], sentence: str,
               words: list[str], stated: frozenset[str]) -> bool:
    """Whether the claim restates a sentence but puts another value in the place of the sentence's own:
    "opens at 9 am on weekdays" against "open on weekdays from 8:00 am to 6:30 pm" (beside "on Saturday
    from 9 am"), "released at noon" against "released at 8:00 am", "closes at 10 pm on Saturdays"
    against "open from 6 am to 10 pm on weekdays". The claim's other words are the sentence's (all but
    VALUE_PUT_UNSTATED), it states a value of a kind the sentence states too (a number in one unit, a
    time of day among them; a day or month), and none of the sentence's values of that kind. Where the
    value is stated elsewhere in the unit the key-fact check passes it; where the claim says it in
    words ("noon") that check reads none."""
    if sum(not _value_like(t) for t in unstated) > VALUE_PUT_UNSTATED:
        return False  # the claim says more than the sentence besides its values: no restatement of it
    numbers, days = _numbers(claim.core), _days(claim.core, claim.words)
    if not numbers and not days:
        return False
    valued = {t for fs in numbers.values() for f in fs for t in _stems(_words(f.text))}
    valued.update(light_stem(w) for w in claim.words if w in days or w.rstrip("s") in days
                  or _CLOCK_WORDS.fullmatch(w))
    rest = content_stems - valued
    if not rest or len(rest - stated) > VALUE_PUT_UNSTATED or len(rest & stated) < min(2, len(rest)):
        return False
    their_days = _days(sentence, words)
    if days and their_days and _spanned_days(days).isdisjoint(_spanned_days(their_days)):
        return True
    if not numbers:
        return False
    theirs, mine, sentences = _numbers(sentence), _comparable(claim.core), _comparable(sentence)
    # the minutes of a time on the hour ("8:00") are no value of their own: "12 pm" states them too
    theirs = {unit: [f for f in facts if f.text != "00"] for unit, facts in theirs.items()}
    return any(theirs.get(unit) and missing_from(facts, sentences)
               and len(missing_from(theirs[unit], mine)) == len(theirs[unit])
               for unit, facts in numbers.items())


# A comparison of two amounts a unit states: "costs less than", "takes longer than"
_MORE = frozenset("more greater higher longer larger bigger heavier taller wider costlier pricier dearer"
                  .split())
_LESS = frozenset("less fewer lower shorter smaller lighter cheaper".split())
# "a longer period of fully paid parental leave than": the comparative may stand this far before "than"
AMOUNT_REACH = 7


def _amounts(clause: str) -> dict[str, float]:
    """The amounts a clause states, one per kind ("usd", "%", a span of time in its family's base unit,
    ``text.facts.time_span``), where it states one of that kind; bare numbers are not read (a day of the
    month, a count of anything)."""
    out: dict[str, float] = {}
    for unit, facts in _numbers(clause).items():
        if unit and len(facts) == 1:
            value, _, per = facts[0].norm.partition(" ")
            try:
                amount = float(value)
            except ValueError:
                continue
            if unit != "duration":
                out[unit] = amount
            elif span := time_span(amount, per):
                out[f"duration {span[0]}"] = span[1]
    return out


def _amounts_contradict(claim_words: list[str], sentences: Sequence[str]) -> bool:
    """Whether the claim compares two amounts that the unit states the other way round: "early-bird
    tickets cost less than student tickets" where the unit gives $299 and $99, "non-birthing parents get a
    longer leave than birthing parents" where it gives 8 weeks and 16.

    The unit's statements (clauses) that state one amount of a kind are paired; each pair's words that
    only one of the two holds tell them apart. The claim's side after "than" (its first three content
    words) must hold none of the other statement's words, and some of its own where it names something the
    first side does not; the side before the comparison, read by the words that set it apart from the
    second ("non" of "non-resident members" against "resident members"), must hold some of its own
    statement's and, where the second names nothing of its own, none of the other's. Exactly one such
    pairing is read; none where it is unclear."""
    for t, w in enumerate(claim_words):
        if w != "than" or any(number_word(v) or time_word(v) for v in claim_words[t + 1:t + 3]):
            continue  # "more than 50 people", "more than an hour": a bound on an amount, no comparison
        at = next((i for i in range(t - 1, max(-1, t - 1 - AMOUNT_REACH), -1)
                   if claim_words[i] in _MORE or claim_words[i] in _LESS), None)
        if at is None:
            continue
        theirs = set(list(dict.fromkeys(light_stem(v) for v in claim_words[t + 1:]
                                        if v not in CLAIM_STOP_WORDS))[:3])
        left = [light_stem(v) for v in claim_words[:at] if v not in CLAIM_STOP_WORDS]
        # mine: the first side's words before those it shares with the second ("non" of "non-resident members"
        # against "resident members", "Business" of "Business plans"): what tells the two apart, not the
        # verb and object the statements leave to their sentence's head; all of it where it shares none
        mine = {s for s, after in zip(left, left[1:]) if s not in theirs and after in theirs}
        mine = mine or set(left) - theirs
        if not mine or not theirs:
            continue
        own = theirs - set(left)  # what the side after "than" names that the first does not
        stated = [(frozenset(map(light_stem, _words(c))), _amounts(c)) for s in sentences
                  for c in _STATEMENT_SPLIT.split(s)]
        verdicts = []
        for i, (si, ai) in enumerate(stated):
            for j, (sj, aj) in enumerate(stated):
                if i == j:
                    continue
                for unit in ai.keys() & aj.keys():
                    if ai[unit] == aj[unit]:
                        continue
                    di, dj = si - sj, sj - si
                    if not mine & di or theirs & di:
                        continue
                    if (own and not theirs & dj) or (not own and mine & dj):
                        continue
                    verdicts.append((ai[unit] > aj[unit]) != (claim_words[at] in _MORE))
        if len(verdicts) == 1 and verdicts[0]:
            return True
    return False


def _value_of_another_statement(word: str, claim_words: list[str], sequence: list[str]) -> bool:
    """Whether the claim's opposite word says what happens at a value the sentence gives another statement:
    "closes at 6:30 pm" for "is open from 8:00 am to 6:30 pm", "closes at 9 pm" for "opens at 6 am and is
    locked at 9 pm", "opens at 8 am" for "closed until 8 am". The number after the word in the claim is in
    the sentence, but it is not the first number after the word's opposite there (that one is the
    opposite's own: "closes at 8:00 am" for "open from 8:00 am" stays an opposite), or it follows "to"
    or "until"."""
    i = claim_words.index(word)
    value = next((w for w in claim_words[i + 1:i + 4] if w[0].isdigit()), None)
    if value is None or value not in sequence:
        return False
    if any(w == value and k > 0 and sequence[k - 1] in _RANGE_ENDS for k, w in enumerate(sequence)):
        return True
    own = {next((w for w in sequence[k + 1:] if w[0].isdigit()), None) for k, w in enumerate(sequence)
           if _opposite(word, w) or _opposite(w, word)}
    return bool(own) and value not in own


_IRREGULAR_DEGREE = {"most": "more", "least": "less", "fewest": "fewer"}


def _comparative(word: str) -> str:
    """A superlative as its comparative ("largest" → "larger", "most" → "more"), the form the antonym
    table holds comparisons in; any other word as it is."""
    if word in _IRREGULAR_DEGREE:
        return _IRREGULAR_DEGREE[word]
    return word[:-3] + "er" if len(word) > 5 and word.endswith("est") else word


def _opposite(a: str, b: str) -> bool:
    """Two words of opposite sense: an antonym pair of the stem table (superlatives as their
    comparatives: "smallest" for "largest") or of WordNet's (``text.wordnet.opposite``), or one the
    other with a negating prefix."""
    stems, forms = _opposites_of(a)
    if b in forms or any(b.startswith(o) and len(b) - len(o) <= 3 for o in stems) or wordnet_opposite(a, b):
        return True
    a2, b2 = _comparative(a), _comparative(b)
    if (a2, b2) == (a, b):
        return False
    stems = _opposites_of(a2)[0]
    return any(b2.startswith(o) and len(b2) - len(o) <= 3 for o in stems)


def _stated_frequency_words(claim: str, sentences: list[str]) -> frozenset[str]:
    """The words of the claim's frequencies that the sentences state, in any form: "nightly" and "every
    night", "every day" and "daily" say one period, so neither word is an opposite of the other's
    ("nightly" read against the "days" of "kept for 30 days", "day" against "night")."""
    facts = [f for f in key_facts(claim) if f.kind == "number" and f.norm.startswith("every ")]
    if not facts:
        return frozenset()
    stated = set(facts) - set(missing_from(facts, " ".join(sentences)))
    return frozenset(w for f in stated for w in _words(f.text))


def _sequence_of(ev: _Evidence, lo: int, hi: int) -> list[str]:
    """The words of the evidence's sentences lo..hi, in order."""
    return ev.sent_seq[lo] if hi - lo == 1 else [w for seq in ev.sent_seq[lo:hi] for w in seq]


MAX_COMPARED = 4  # content words on each side of a comparison read as what it compares
COMPARATIVE_REACH = 3  # "more *residents* than": the comparative may stand a word or two before "than"


_DEGREES = frozenset(("more", "less", "fewer"))  # stop words, and comparatives all the same


def _comparisons(words: list[str]) -> list[tuple[int, int]]:
    """(the comparative's place, the place of its "than") of each comparison in ``words``."""
    return [(i, t) for t, w in enumerate(words) if w == "than"
            for i in range(max(0, t - COMPARATIVE_REACH), t)]


def _sides(words: list[str], at: int, after: int, reach: int) -> tuple[frozenset[str], frozenset[str]] | None:
    """The content stems just before ``words[at]`` and just after ``words[after]``, ``reach`` of each;
    None where either side has none."""
    left = [w for w in words[:at] if w not in CLAIM_STOP_WORDS][-reach:]
    right = [w for w in words[after + 1:] if w not in CLAIM_STOP_WORDS][:reach]
    if not left or not right:
        return None
    return frozenset(map(light_stem, left)), frozenset(map(light_stem, right))


def _compared(words: list[str], at: int, than: int) -> tuple[frozenset[str], frozenset[str]] | None:
    """What the comparison whose comparative stands at ``at`` compares: the content stems before it, and
    those after its "than" (at ``than``); None where either side is empty."""
    return _sides(words, at, than, MAX_COMPARED)


def _swapped(ours: tuple[frozenset[str], frozenset[str]] | None,
             other: tuple[frozenset[str], frozenset[str]] | None) -> bool:
    """Whether two comparisons compare the same two sides, each put on the other's side."""
    return bool(ours and other and ours[0] & other[1] and ours[1] & other[0]
                and not ours[0] & other[0] - ours[1] and not ours[1] & other[1] - ours[0])


def _converse(claim_words: list[str], comparative: str, sentence_words: list[str]) -> bool:
    """Whether the claim says the sentence's comparison the other way round: "B is smaller than A" for
    "A is larger than B", "Lyon has fewer residents than Paris" for "Paris has more residents than
    Lyon". The opposite comparative is then no opposite."""
    theirs = [(j, t) for j, t in _comparisons(sentence_words) if _opposite(comparative, sentence_words[j])]
    return any(claim_words[i] == comparative and
               any(_swapped(_compared(claim_words, i, u), _compared(sentence_words, j, t)) for j, t in theirs)
               for i, u in _comparisons(claim_words))


def _inverted(claim_words: list[str], sentence_words: list[str]) -> bool:
    """Whether the claim makes the sentence's comparison with its two sides swapped: "Bob is older than
    Alice" for "Alice is older than Bob". Every word is the sentence's, so none reads as put for another."""
    theirs = _comparisons(sentence_words)
    return any(_comparative_word(claim_words[i])
               and light_stem(claim_words[i]) == light_stem(sentence_words[j])
               and _swapped(_compared(claim_words, i, u), _compared(sentence_words, j, t))
               for i, u in _comparisons(claim_words) for j, t in theirs)


_ORDER_WORDS = frozenset(("before", "after"))
EVENT_WORDS = 2  # content words on each side of "before" or "after" read as its two events


def _events(words: list[str], at: int) -> tuple[frozenset[str], frozenset[str]] | None:
    """The two events that "before" or "after" at ``at`` orders (EVENT_WORDS content stems each side)."""
    return _sides(words, at, at, EVENT_WORDS)


def _order_turned(claim_words: list[str], sentence_words: list[str], same: bool) -> bool:
    """Whether the claim orders the sentence's two events the other way round: with the same word
    (``same``), "Drivers may unload before reporting to the gatehouse" for "Drivers must report to the
    gatehouse before unloading", a lie; with the opposite word, "unload after reporting" for it, the
    same order said from the other side."""
    theirs = [j for j, w in enumerate(sentence_words) if w in _ORDER_WORDS]
    return any(_swapped(_events(claim_words, i), _events(sentence_words, j))
               for i, w in enumerate(claim_words) if w in _ORDER_WORDS
               for j in theirs if (sentence_words[j] == w) == same)


def _comparative_word(word: str) -> bool:
    return word in _DEGREES or word not in CLAIM_STOP_WORDS


def _told(claim: _Claim) -> set[str]:
    """The claim's content words a sentence must state for the claim to restate it: a negation is the cue
    itself, not a word the sentence should state; nor is the word that makes it one of time ("no longer",
    "not ... anymore")."""
    told = set(claim.content) - _NEGATIONS
    if claim.neg:
        told -= _negated_stems(claim.words) & _NEGATION_TAILS
    return told


def _roles_swapped(claim_words: list[str], sequence: list[str], names: list[str]) -> int:
    """Whether two names of the claim that the sentence also names each do what the sentence says the other
    does: "Ana will chair the meeting, while Ben takes the minutes" for "Ben will chair the meeting; Ana
    will take the minutes". Each name's first word after it but an auxiliary in the claim is the other's
    in the sentence, and not its own. "A beat B" for "B lost to A" moves no word, and is no swap."""
    once = [n for n in dict.fromkeys(names) if claim_words.count(n) == 1 and sequence.count(n) == 1]

    def after(seq: list[str], name: str) -> str | None:
        i = seq.index(name)
        word = next((w for w in seq[i + 1:i + 1 + ROLE_WORDS] if w not in _AUXILIARIES), None)
        return None if word is None or word in names else light_stem(word)  # a list of names says no roles

    for a, b in combinations(once, 2):
        mine_a, mine_b = after(claim_words, a), after(claim_words, b)
        theirs_a, theirs_b = after(sequence, a), after(sequence, b)
        if (None not in (mine_a, mine_b, theirs_a, theirs_b) and mine_a == theirs_b and mine_b == theirs_a
                and mine_a != theirs_a):
            return 1
    return 0


ROLE_WORDS = 3  # words after a name within which the first word but an auxiliary says what it does
_AUXILIARIES = frozenset("will would shall should can could may might must to be is are was were has have "
                         "had do does did also then the a an".split())


def _negated_elsewhere(claim: _Claim, told: set[str], stated: frozenset[str], ev: _Evidence, lo: int,
                       hi: int) -> float:
    """flip_negation of a claim that restates the sentences ``lo:hi`` and says of their subject what another
    sentence of the unit negates: "The ticket includes the audio guide" where one sentence names the
    ticket and the next says "It does not include the audio guide". Two of the claim's words the
    restated sentences lack must stand together after the other sentence's negation, as they stand in
    the claim (what it negates, not its subject), and the two sentences together must state nearly all
    of the claim (NEGATED_ELSEWHERE_SHARE)."""
    if not told:
        return 0.0
    content = claim.content
    moved = {(x, y) for x, y in zip(content, content[1:]) if x not in stated and y not in stated}
    if not moved:
        return 0.0
    for k, neg in enumerate(ev.sent_neg):
        if not neg or lo <= k < hi:
            continue
        seq = ev.sent_seq[k]
        at = next((i for i, w in enumerate(seq) if _negating(seq, i) and _negates_verb(w)), None)
        scope = _content(_negated_scope(seq, at)) if at is not None else []
        share = len(told & (stated | ev.sent_tokens[k])) / len(told)
        if share >= NEGATED_ELSEWHERE_SHARE and not moved.isdisjoint(zip(scope, scope[1:])):
            return _closeness(share)
    return 0.0


NEGATED_ELSEWHERE_SHARE = 0.7


def _negates_verb(word: str) -> bool:
    """Whether a negating word negates a verb, whose object is what it negates ("does not include X");
    "no" and "none" negate the noun they stand before ("may owe no tax on the sale" says nothing against
    reporting the sale)."""
    return word in ("not", "never", "cannot") or word.endswith("n't")


# Words after a verb's negation that it may negate, up to the next clause: more than NEGATION_SCOPE, since
# the clause's end bounds it and the object's head may stand after its modifiers ("not include the new
# audio guide")
NEGATED_OBJECT_WORDS = 6


def _negated_scope(seq: list[str], at: int) -> list[str]:
    """The words the negation at ``seq[at]`` negates: up to NEGATED_OBJECT_WORDS after it, ending where a
    clause opens ("a door that does not lock while the alarm is off is a risk": not "risk")."""
    out = []
    for w in seq[at + 1:at + 1 + NEGATED_OBJECT_WORDS]:
        if w in _CLAUSE_OPENERS:
            break
        out.append(w)
    return out


def _closeness(share: float) -> float:
    """How close a claim is to restating a sentence, from the share of its words the sentence states:
    nothing below FLIP_SHARE, all at 1."""
    return min(max((share - FLIP_SHARE) / (1 - FLIP_SHARE), 0.0), 1.0)


def _aligned(claim: _Claim, ev: _Evidence, per_sent: list[int]
             ) -> tuple[dict[str, float], list[tuple[str, str]]]:
    """The claim against the evidence sentence that shares most of its content words (``per_sent``).

    A claim made from one sentence of its source keeps that sentence's other words, so a claim word
    the sentence lacks stands in the place of one of the sentence's own unmatched words
    (``replaced``: a name, number or term swapped, an opposite, or a paraphrase) or has no
    counterpart (``added``). A ``flip_*`` feature is a cue of opposite sense (a negation on one
    side only, an opposite word, another quantifier, another name) weighted by how much of the
    claim the sentence states (none below FLIP_SHARE of its words): a claim that restates its
    source but for one flipped piece contradicts it, while the same cue in a loose paraphrase
    says little.

    Also returns the words put for others (:func:`_swaps`), each with the sentence's in its place.
    """
    if CJK_CHAR.search(claim.core):
        return _aligned_cjk(claim, ev), []
    cset = set(claim.content)
    j = _best_sentence(claim, ev, per_sent)
    told = _told(claim)
    lo, hi = _restated_run(told, ev, j)
    one = hi - lo == 1  # nearly always: the run's fields are the sentence's own, not copies
    stated = ev.sent_tokens[j] if one else frozenset().union(*ev.sent_tokens[lo:hi])
    share = len(told & stated) / len(told) if told else 0.0
    claim_only = [t for t in claim.content if t not in stated]
    sentence_only = stated - cset
    replaced = min(len(claim_only), len(sentence_only))
    added = len(claim_only) - replaced
    names = opposites = cue_words = 0
    new_names: set[str] = set()
    opening_names: set[str] = set()
    capitals: set[str] = set()
    if claim_only:
        # names and codes; numbers, dates and durations are the key-fact check's
        capitals = {light_stem(w) for f in key_facts(claim.core) if f.kind in ("entity", "code")
                    for w in _words(f.text)}
        inner, opening = claim.capitals
        # a name put for another needs no other word of the sentence left over: the sentence may state
        # the claim's other words ("Best Books ... a Top 10 Book" with "Books" replaced); and a
        # capitalised word the whole unit lacks is a name even where the extractor reads none (quoted,
        # inside a longer span)
        new_names = (capitals | (_stems(inner) - ev.tokens)).intersection(claim_only)
        opening_names = (_stems(opening) - ev.tokens - new_names).intersection(claim_only)
        if sentence_only:
            names = sum(t in capitals for t in claim_only)
    words = ev.sent_words[j] if one else frozenset().union(*ev.sent_words[lo:hi])
    mine_only = set(claim.words) - words
    sequence = _sequence_of(ev, lo, hi)
    flipped: list[str] = []
    conversed: frozenset[str] = frozenset()
    reworded = 0
    doubled = False  # a negation on one side, and an opposite in its scope
    restated_opposites = 0  # opposites that restate the sentence: one negated, one ending a range
    if mine_only:  # opposites among all words: "before"/"after" and "more"/"less" are stop words
        # a word of the sentence the claim restates in another form ("open" as "opens") is no opposite's
        # counterpart: "opens at 8 am and closes at 6 pm" says what "is open from 8 am to 6 pm" says
        stems = set(claim.stems)
        theirs = {b for b in words.difference(claim.words) if light_stem(b) not in stems}
        flipped = [a for a in mine_only if any(_opposite(a, b) for b in theirs)]
        if flipped and _CONDITIONALS.intersection(flipped) and claim.neg != any(ev.sent_neg[lo:hi]) and (
                _negation_absorbed(*((claim.words, sequence) if claim.neg else (sequence, claim.words)))):
            conversed |= _CONDITIONALS.intersection(flipped)  # "if no one has" says "unless someone has"
            flipped = [a for a in flipped if a not in _CONDITIONALS]
        if flipped and claim.neg == any(ev.sent_neg[lo:hi]):
            # "closes at 6:30 pm" for "open from 8:00 am to 6:30 pm": another statement's time (a negated
            # claim's opposite is read with its negation, below)
            ends = [a for a in flipped if _value_of_another_statement(a, claim.words, sequence)]
            flipped = [a for a in flipped if a not in ends]
            restated_opposites = len(ends)
        if len(flipped) == 1 and claim.neg != any(ev.sent_neg[lo:hi]) and _negated_opposite(
                flipped[0], claim.words, theirs, sequence):
            # "does not open on Sundays" for "is closed on Sundays": the negation and the opposite say it
            # twice over
            doubled = True
            restated_opposites += 1
            cue_words += light_stem(flipped[0]) in told
            conversed = frozenset(flipped)
            flipped = []
        if flipped:  # a word of a frequency the sentence states ("nightly" for "every night") says it too
            conversed |= _stated_frequency_words(claim.core, ev.sentences[lo:hi])
            flipped = [a for a in flipped if a not in conversed]
        if flipped and not _ORDER_WORDS.isdisjoint(flipped) and _order_turned(
                claim.words, sequence, same=False):
            # "unload after reporting" for "report before unloading": the same order, said the other way
            conversed |= _ORDER_WORDS.intersection(flipped)
            flipped = [a for a in flipped if a not in _ORDER_WORDS]
        if flipped and "than" in words and "than" in claim.words:  # "B is smaller than A": "A is larger"
            conversed |= frozenset(a for a in flipped if _converse(claim.words, a, sequence))
            flipped = [a for a in flipped if a not in conversed]
        opposites = len(flipped)
        cue_words = sum(light_stem(a) in told for a in flipped)
        if claim_only and sentence_only:
            # a synonym of one of the sentence's own words says what the sentence says ("retained" for "kept")
            # by stem, every word of it ("released" and "releases" both): any one reworded will do
            unstated: dict[str, list[str]] = {}
            for a in mine_only:
                if a.isascii():
                    unstated.setdefault(light_stem(a), []).append(a)
            senses = (frozenset().union(*(wordnet_senses(b) for b in theirs if b.isascii())) if unstated
                      else frozenset())
            reworded = sum(1 for t in set(claim_only) if t in unstated and t not in capitals
                           and any(not wordnet_senses(a).isdisjoint(senses) for a in unstated[t]))
            replaced = max(replaced - reworded, 0)
    sentence = ev.sentences[j] if one else " ".join(ev.sentences[lo:hi])
    their_names = _stems(capitalised_words(sentence)[0]) if opening_names else frozenset()
    crossed = False
    if not mine_only:  # every word the sentence's: does the claim cross or restate one of its statements?
        crossed, alone = _statements(set(claim.stems), sentence)
        conversed |= {w for w in claim.words if light_stem(w) in alone}
        crossed = crossed or "than" in words and "than" in claim.words and _inverted(claim.words, sequence)
    if not crossed and not _ORDER_WORDS.isdisjoint(claim.words) and not _ORDER_WORDS.isdisjoint(words):
        crossed = _order_turned(claim.words, sequence, same=True)  # "unload before reporting" for the reverse
    if not crossed and one and claim.neg == any(ev.sent_neg[lo:hi]):  # "not at 9" for "at 8" says no lie
        # another sentence's value, or one the unit never states, in this one's place; read against the
        # sentence that shares most of the claim's other words where that is another one than j (the
        # claim's amount may have drawn j to the sentence it was taken from)
        k = _best_without_values(claim, ev, j, claim_only)
        told_set = frozenset(told)
        crossed = bool(mine_only) and _value_put(claim, told_set, claim_only, sentence, ev.sent_seq[j],
                                                 stated)
        if not crossed and k != j:
            theirs_k = ev.sent_tokens[k]
            crossed = _value_put(claim, told_set, [t for t in claim.content if t not in theirs_k],
                                 ev.sentences[k], ev.sent_seq[k], theirs_k)
    if not crossed and ev.rows:  # a claim of a table's header and rows
        crossed = _rows_crossed(_cjk_plain(claim.core).lower(), set(claim.stems), ev.rows)
        if crossed and told:  # its words are the table's, one row's key with another's value: no one line's
            share = max(share, len(told & ev.tokens) / len(told))
    referent = (_referent(ev.sentences, lo) if new_names and lo and not PRONOUNS.isdisjoint(sequence)
                else frozenset())
    swaps, restated, measures, measured, placed, flips = _swaps(
        claim.words, sequence, new_names, set(flipped), opening_names, their_names, conversed, ev.columns,
        referent)
    opposites += flips + int(crossed)  # a statement's value put with the other's, a comparison turned round
    placed += _roles_swapped(claim.words, sequence,
                             [w for part in claim.capitals for w in part if w not in CLAIM_STOP_WORDS])
    cue_words += sum(t in told for t in measured) + flips + int(crossed)
    ours_q = _quantifiers(claim.words, claim.core, sentence)
    theirs_q = _quantifiers(words, sentence, claim.core)
    if (not claim.neg and not _NEGATIVE_QUANTIFIERS.isdisjoint(theirs_q)
            and _NEGATIVE_QUANTIFIERS.isdisjoint(ours_q) and not any(
                not scope or not scope.isdisjoint(claim.content) for scope in _negation_scopes(sequence))):
        # "…; no P1s" says nothing of the P2 incidents a claim restates from the same sentence
        theirs_q = theirs_q - _NEGATIVE_QUANTIFIERS
    quantified = ours_q, theirs_q
    if ours_q and theirs_q and ours_q != theirs_q:
        # as a negation is, a quantifier put for another is the cue, not a word the sentence should state
        cue_words += sum(_QUANTIFIER_OF.get(w, w) in ours_q - theirs_q and light_stem(w) in told
                         for w in set(claim.words))
        if ("only" in ours_q - theirs_q and "all" in theirs_q - ours_q and claim_only
                and not _counted(claim.words)):
            cue_words += 1  # "Only students get it" for "Everyone gets it": the group is put for everyone
    if "only" in theirs_q and not ours_q and _alternative_added(claim.words, sequence):
        opposites += 1  # "through either live chat or phone" for "only by phone"
        cue_words += 1
    universal = "all" in ours_q or "any" in ours_q and _universal_any(claim.words)
    if universal and not theirs_q and _restriction_dropped(claim.words, sequence, sentence):
        opposites += 1  # "available to all patients" for "for patients who are housebound"
        cue_words += 1
    elif (not ours_q.isdisjoint(("all", "always")) and not theirs_q and not _NOT_ALWAYS.isdisjoint(words)
          and _NOT_ALWAYS.isdisjoint(claim.words) and _MODALS_OF_CHANCE.isdisjoint(claim.words)):
        # "late patients are always turned away" for "may be asked to rebook"; "always late" for "often late"
        opposites += 1
        cue_words += 1
    elif _modal_turned(claim.words, sequence) or _certain_for_hedged(claim.words, sequence):
        # "will be discharged" for "may be discharged", "required to drink" for "may drink"; "is blocking"
        # for "may be blocking", "are guaranteed" for "may progress"
        opposites += 1
        cue_words += 1
    if " than " in claim.core and _amounts_contradict(claim_words(claim.core), ev.sentences):
        opposites += 1  # "costs less than student tickets" where the unit gives $299 and $99
        cue_words += 1
    # the flipped words themselves are not stated, by definition: they count as restated
    # and so do the names put for other words
    placed_words = sum(t in new_names for t in claim_only)
    share = min(1.0, share + (cue_words + placed_words) / len(told)) if told else share
    # another unit of one scale ("hourly" for "weekly") is an opposite: neither can be reworded as the other
    negation = 0.0 if doubled else _negation_flipped(claim, any(ev.sent_neg[lo:hi]), sentence, sequence)
    out = _alignment(negation, claim.words, claim.core, words, sentence, share, replaced, added, names,
                     opposites + measures, len(swaps), restated, placed, quantified)
    if not claim.neg and not out["flip_negation"]:
        out["flip_negation"] = _negated_elsewhere(claim, told, stated, ev, lo, hi)
    if doubled:
        out[DOUBLED] = 1.0
    if restated_opposites:
        out[OPPOSITES_RESTATED] = float(restated_opposites)
    return out, swaps


def _referent(sentences: list[str], j: int) -> frozenset[str]:
    """The stems of the name a pronoun opening into sentence ``j`` refers to: the first run of capitalised
    words of the nearest sentence before it that holds one, less its stop words ("Venus" of "Venus rotates
    once every 243 Earth days" for the "it" of "it spins the other way")."""
    for k in range(j - 1, -1, -1):
        for span in capitalised_spans(sentences[k]):
            stems = frozenset(light_stem(w) for w in _words(span) if w not in CLAIM_STOP_WORDS)
            if stems:
                return stems
    return frozenset()


def _best_without_values(claim: _Claim, ev: _Evidence, j: int, unstated: list[str]) -> int:
    """The one sentence that shares most of the claim's words other than its amounts ("Urgent tickets are
    answered within two working days": the urgent tickets' sentence, not the one of two working days);
    ``j`` where the claim states no amount or no sentence is alone in that. ``unstated``: the claim's
    content words that j lacks."""
    # only where j lacks one of them can another sentence share more
    if len(ev.sentences) < 2 or all(map(_amount_like, unstated)) or not any(
            w[0].isdigit() or number_word(w) for w in claim.words):
        return j
    plain = {t for t in claim.content if not _amount_like(t)}  # days stay: "on Saturdays" tells a sentence
    counts = [len(plain & tokens) for tokens in ev.sent_tokens]
    best = max(counts)
    return counts.index(best) if best and counts.count(best) == 1 else j


def _best_sentence(claim: _Claim, ev: _Evidence, per_sent: list[int]) -> int:
    """The evidence sentence sharing most of the claim's content words; of several, the one sharing most
    of its values (numbers, days, names): "does not open on Sundays" is read against "closed on
    Sundays", not against "open on weekdays"; then the first."""
    best = max(per_sent)
    if per_sent.count(best) == 1:
        return per_sent.index(best)
    tied = [i for i, n in enumerate(per_sent) if n == best]
    names = _stems(claim.capitals[0])
    values = {t for w, t in zip(claim.words, claim.stems) if _value_word(w, t, names)}
    return max(tied, key=lambda i: (len(values & ev.sent_tokens[i]), -i)) if values else tied[0]


_ALL_WORDS = frozenset(("all", "every", "each", "any"))
_MAYBE = frozenset(("may", "might"))  # what the sentence says can happen, which "always" makes certain
_MODALS_OF_CHANCE = frozenset(("can", "could", "sometimes", "often", "usually"))
# What happens now and then, which "always" or "all" makes certain
_NOT_ALWAYS = _MAYBE | frozenset(("often", "usually", "sometimes", "generally", "typically", "frequently",
                                  "occasionally", "rarely", "seldom", "mostly", "normally", "commonly"))
# Words that say a thing is certain, and words that say it may be or is expected (a claim that keeps one of
# the latter, says how often, or says it is allowed, keeps the sentence's chance: _modal_turned)
_CERTAIN = frozenset("definitely certainly guaranteed guarantee guarantees surely undoubtedly".split())
_HEDGES = _MAYBE | frozenset("could likely expect expects expected possible possibly perhaps maybe potential "
                             "potentially".split())
_CHANCE_OR_LEAVE = _HEDGES | _MODALS_OF_CHANCE | frozenset("allowed permitted able entitled".split())
_RELATIVES = frozenset(("who", "whose", "that", "which"))
_EXCEPTIONS = frozenset(("unless", "except", "excluding"))  # what a rule's own exception opens with
_NARROWING = _RELATIVES | {LOWER_BOUND, UPPER_BOUND}  # "invoices over 5,000 euros", "children under 12"


def _universal_any(words: list[str]) -> bool:
    """Whether "any" says "every" here: no negation before it ("any withdrawal is a fail", not "does not
    apply to any route")."""
    i = words.index("any") if "any" in words else -1
    return i >= 0 and not any(_negating(words, k) for k in range(i))


def _restriction_dropped(claim_words: list[str], sequence: list[str], sentence: str) -> bool:
    """Whether the claim says "all" of a group the sentence narrows by a relative clause: "available to
    all patients" for "for patients who are housebound". The claim's noun (a word or two after its
    quantifier) stands in the sentence before "who", "that" or "which", or a bound on an amount ("invoices
    over 5,000 euros"), or after a word naming a kind of it (:func:`_narrows`: "full-time employees"), or in
    a sentence that makes an exception ("unless", "except") the claim leaves out, and the claim narrows it
    by none."""
    for i, w in enumerate(claim_words):
        if w not in _ALL_WORDS:
            continue
        for k in range(i + 1, min(i + 3, len(claim_words))):
            if time_word(claim_words[k]):
                break  # "every month" says how often: of no group
            noun = light_stem(claim_words[k])
            if k + 1 < len(claim_words) and claim_words[k + 1] in _RELATIVES:
                break  # the claim narrows the group itself ("every patient who asks")
            if any(light_stem(v) == noun and (n + 1 < len(sequence) and sequence[n + 1] in _NARROWING
                                              or n and _narrows(sequence[n - 1], v, claim_words, sentence))
                   for n, v in enumerate(sequence)):
                return True
            if (not _EXCEPTIONS.isdisjoint(sequence) and _EXCEPTIONS.isdisjoint(claim_words)
                    and any(light_stem(v) == noun for v in sequence)):
                return True  # "any withdrawal is a fail" for "a withdrawal is a fail unless …"
    return False


ONLY_REACH = 6  # words after "only" that it stands over


def _alternative_added(claim_words: list[str], sequence: list[str]) -> bool:
    """Whether the claim puts what the sentence allows "only" beside something else, joined by "or" or
    "and": "either live chat or phone" for "handled only by phone". The other side must be none of the
    words "only" stands over ("only by phone or email" restated without "only" adds nothing)."""
    for i, w in enumerate(sequence):
        if w != "only":
            continue
        scope = sequence[i + 1:i + 1 + ONLY_REACH]
        held = [v for v in scope if v not in CLAIM_STOP_WORDS][:1]
        if not held:
            continue
        scoped = {light_stem(v) for v in scope}
        for p, c in enumerate(claim_words):
            if light_stem(c) != light_stem(held[0]):
                continue
            for q in (p - 1, p + 1):
                if 0 <= q < len(claim_words) and claim_words[q] in ("or", "and"):
                    other = q - 1 if q < p else q + 1
                    if (0 <= other < len(claim_words) and claim_words[other] not in CLAIM_STOP_WORDS
                            and light_stem(claim_words[other]) not in scoped):
                        return True
    return False


def _narrows(word: str, noun: str, claim_words: list[str], sentence: str) -> bool:
    """Whether ``word``, before the sentence's ``noun``, names a kind of it the claim does not: a word of a
    pair of opposites ("standard users", "registered members") or a compound of a hyphen ("full-time
    employees")."""
    if word in claim_words or word in CLAIM_STOP_WORDS or noun in CLAIM_STOP_WORDS or not word.isalpha():
        return False
    compound = rf"\w-{re.escape(word)}\s+{re.escape(noun)}\b"
    return has_antonym(word) or re.search(compound, sentence, re.I) is not None


def _negated_opposite(word: str, claim_words: list[str], theirs: set[str], sequence: list[str]) -> bool:
    """Whether a negation on one side covers the opposite word of a pair: the claim's ``word`` after its
    own negation ("not open"), or the sentence's opposite of it after the sentence's ("not closed")."""
    if light_stem(word) in _negated_stems(claim_words) or word in ("if", "unless"):
        return True  # "cannot be renewed if reserved" for "can be renewed unless reserved"
    partners = {light_stem(b) for b in theirs if _opposite(word, b) or _opposite(b, word)}
    return not partners.isdisjoint(_negated_stems(sequence))


# Set in an alignment's features where a negation on one side covers an opposite ("does not open" for
# "is closed"), and the number of opposites that restate the sentence (that one, and "closes at 6:30 pm"
# for "open ... to 6:30 pm"): pair_features then clears the support part's negation cues and takes
# those opposites from its antonym count.
DOUBLED, OPPOSITES_RESTATED = "doubled", "opposites_restated"
MAX_RUN = 4  # sentences a claim may restate together (the items of a list it quotes whole)
_RUN_ON = frozenset(":;：；")  # a sentence ending so goes on in the next (a list's heading, its items)


def _restated_run(told: set[str], ev: _Evidence, j: int) -> tuple[int, int]:
    """The sentences ``lo:hi`` that the claim restates: sentence ``j``, the one sharing most of its
    words, or where that one states less than FLIP_SHARE of them, the shortest run around it of
    sentences that go on into each other (``_run_end``) that states every one (a claim that quotes a
    list whole, "make sure that: - A; - B", against its items). A run that leaves even one word
    unstated is a summary of several sentences, not a quote: read so, it moved AttributionBench
    decisions the wrong way."""
    if not told or len(told & ev.sent_tokens[j]) >= FLIP_SHARE * len(told):
        return j, j + 1
    runs = [(lo, hi) for lo in range(max(0, j - MAX_RUN + 1), j + 1)
            for hi in range(max(j + 1, lo + 2), _run_end(ev, lo) + 1)
            if told <= frozenset().union(*ev.sent_tokens[lo:hi])]
    return min(runs, key=lambda r: (r[1] - r[0], r[0]), default=(j, j + 1))


_ARTICLES = frozenset(("a", "an", "the"))
MAX_SWAP_WORDS = 3  # a longer run of other words is a rewording, not one thing put for another
# A word put for another counts as far as it moves the claim's meaning: by the fall of the claim's
# cosine to its sentence (in full at SWAP_SHIFT), or, where that says more, by how far the two sides
# differ embedded alone (in full at a cosine of WORD_OTHER or below, not at all at WORD_SAME or above).
# One word moves a long sentence's cosine little: "wooden" for "locked" in a sentence of 33 words left
# it at 0.974 (a quarter of a swap), while the two words alone have a cosine of 0.27 (the generator's
# swapped HotpotQA entities: 0.13-0.27 between quartiles). A near-synonym WordNet does not list stays
# near: "town" for "city" 0.74, "created" for "made" 0.65.
SWAP_SHIFT = 0.1
WORD_OTHER, WORD_SAME = 0.3, 0.6


def _stems(words: list[str]) -> set[str]:
    """The stems of the content words of ``words`` (each may hold several: "f.i.r")."""
    return {t for w in words for t in _content(claim_words(w))}


def _swaps(mine: list[str], theirs: list[str], names: set[str], opposites: set[str],
           opening: set[str] = frozenset(), their_names: set[str] = frozenset(),
           conversed: frozenset[str] = frozenset(), columns: frozenset[str] = frozenset(),
           referent: frozenset[str] = frozenset()
           ) -> tuple[list[tuple[str, str]], float, int, list[str], int, int]:
    """Places where the claim puts one thing for another in a sentence it otherwise restates.

    The claim's words and the sentence's are aligned (longest matching blocks, by stem); a run of at
    most MAX_SWAP_WORDS content words of the claim standing where the sentence has other content words
    is a swap ("the client listens" for "the server listens", "external" for "internal"), unless the
    two are forms of one word ("cycle"/"cycling"), numbers on both sides, a name or an opposite (counted
    apart), a negation or quantifier (their own cues), or words the sentence has elsewhere (a list in
    another order); a word in the place of a number ("fire-daily" for "twice-daily") is a swap. A swap
    whose two sides both name a unit of time or measure that differs ("hourly" for
    "weekly", "minutes" for "hours"), or another amount ("five servers" for "three servers"), is a
    ``measure`` instead; an opposite in the place of a word is a ``flip`` even where the sentence
    holds that word elsewhere. A name of ``referent`` (:func:`_referent`) in the place of a pronoun is
    what the pronoun refers to, not a name put for another ("Venus spins" for "it spins").

    ``names``: the claim's names the sentence lacks; ``opening``: its capitalised opening words the unit
    lacks, names only where they stand for one of ``their_names`` (the sentence's capitalised words
    inside it); ``conversed``: the claim's words that are no opposites put in a word's place: the
    comparative of a comparison it turns round (``_converse``), the pivot and values of the one
    statement of two it restates (``_statements``: no amounts put for the other's either), the words of
    a frequency the sentence states (``_stated_frequency_words``); ``columns``: the stems of the names of
    the unit's table columns (``_Evidence.columns``): a word put for a column's name says what the column
    holds in a verb ("takes 10 days" for "Turnaround 10 days"), unless it names another column ("seats 2"
    for "Floor 2").

    Returns (swaps, each as the claim's words and the sentence's in its place, the share of the
    claim's other words that the alignment matches in order,
    measures, the claim's stems in a measure, names put in the place of other words: a name the
    sentence lacks but the claim adds beside what it restates is another sentence's, not a swap;
    flips).
    """
    if mine == theirs:  # the sentence word for word (an extractive answer): nothing put for anything
        return [], 1.0 if mine else 0.0, 0, [], 0, 0
    a = [light_stem(w) for w in mine]
    b = [light_stem(w) for w in theirs]
    elsewhere = set(b)
    measures = matched = swapped = placed = flips = 0
    measured: list[str] = []
    swaps: list[tuple[str, str]] = []
    for op, a0, a1, b0, b1 in SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
        if op == "equal":
            matched += a1 - a0
        if op == "delete" and _at_once_for_a_time(mine[a0:a1], theirs, None):
            measures += 1  # "destroyed immediately" added where the sentence keeps them for seven years first
            measured.extend(a[a0:a1])
            continue
        if op != "replace":
            continue
        # a name where the sentence has other words, however long either side ("Copenhagen" for
        # "North Eugene High School"); a capitalised word opening the claim is a name where it stands
        # alone for one inside the sentence ("Turkey has" for "West Bengal has", not "Despite this, he"
        # for "For many, Che")
        # the name a pronoun refers to, standing where the pronoun stands (both end their runs)
        referred = bool(referent) and theirs[b1 - 1] in PRONOUNS and a[a1 - 1] in referent
        named = any(t in names and not (referred and t in referent) for t in a[a0:a1]) or (
            any(t in opening for t in a[a0:a1])
            and all(t in opening or w in _ARTICLES for w, t in zip(mine[a0:a1], a[a0:a1]))
            and any(u in their_names for u in b[b0:b1]))
        placed += named and any(w not in CLAIM_STOP_WORDS for w in theirs[b0:b1])
        if _at_once_for_a_time(mine[a0:a1], theirs[b0:b1]):
            measures += 1  # "due immediately after" for "due within 48 hours of": no time for some
            measured.extend(a[a0:a1])
            continue
        if (a1 == len(a) and a1 - a0 == 1 < b1 - b0 and a0 > 0 and mine[a0 - 1] in _PREPOSITIONS
                and theirs[b0 - 1] == mine[a0 - 1] and theirs[b0] not in CLAIM_STOP_WORDS
                and not number_word(theirs[b0])):
            # the claim ends where the sentence goes on, after the same preposition: its last word stands
            # for the sentence's next ("by post" for "by email within three weeks"), the rest left out
            b1 = b0 + 1
        if a1 - a0 > MAX_SWAP_WORDS or b1 - b0 > MAX_SWAP_WORDS:
            continue
        ours = [(w, t) for w, t in zip(mine[a0:a1], a[a0:a1]) if w not in CLAIM_STOP_WORDS]
        other = [(w, t) for w, t in zip(theirs[b0:b1], b[b0:b1]) if w not in CLAIM_STOP_WORDS]
        if any(w in conversed for w in mine[a0:a1] if number_word(w)):
            continue  # the value of the statement the claim restates, aligned against the other's
        units = ({measure_of(w) for w, _ in ours} - {None}, {measure_of(w) for w, _ in other} - {None})
        counted = (any(map(number_word, mine[a0:a1])), any(map(number_word, theirs[b0:b1])))
        if units[0] and units[1]:
            # another unit: "hourly" for "weekly", "3 minutes" for "3 hours"; with a number on both
            # sides, another amount ("one hour" for "2 minutes", where the key-fact check reads a "1"
            # anywhere in the unit as stating it), not the same one in other words ("two weeks", "14 days")
            if units[0] != units[1] and not _same_amount(mine[a0:a1], theirs[b0:b1]) and (
                    not all(counted) or _other_amount(mine[a0:a1], theirs[b0:b1])):
                measures += 1
                measured.extend(t for _, t in ours)
            continue
        if all(counted) and not units[0] and not units[1]:
            # another amount of the same thing: "one hour" for "3 hours", "five servers" for "three
            # servers" (the key-fact check reads a number in words only with a unit, and a number the
            # unit holds anywhere, a "1" for "one hour", passes it)
            amounts = (_amount([w for w in mine[a0:a1] if number_word(w)]),
                       _amount([w for w in theirs[b0:b1] if number_word(w)]))
            if None not in amounts and amounts[0] != amounts[1]:
                measures += 1
                measured.extend(t for w, t in zip(mine[a0:a1], a[a0:a1]) if number_word(w))
            continue
        if (_level_for_change(mine, a0, a1, theirs, b0, b1)
                or _ended_as_present(mine, a0, a1, theirs, b0, b1)) or any(
                w not in opposites and w not in conversed and _opposite(w, u)
                for w in mine[a0:a1] for u in theirs[b0:b1]):
            # an opposite in the place of a word, which the sentence may also hold elsewhere ("south of
            # the river, by the South Gate" for "north of ..."), where the comparison of word sets sees none
            flips += 1
            continue
        if not ours or not other or any(w in _NEGATIONS or w in _QUANTIFIERS for w, _ in ours + other):
            continue
        if all(any(number_word(w) for w, _ in side) for side in (ours, other)):
            continue  # a number said in other words is the key-fact check's; a word put for a number
            # ("fire-daily" for "twice-daily") is a swap
        if any(t in names or w in opposites or w in conversed for w, t in ours) or all(
                t in elsewhere for _, t in ours) or any(
                t.startswith(u) or u.startswith(t) for _, t in ours for _, u in other):
            continue
        if all(t in columns for _, t in other) and not any(t in columns for _, t in ours):
            continue  # a column's name said as a verb: "takes 10 days" for a row's "Turnaround 10 days"
        if all(any(synonym(w, u) or _same_trend(w, u) for u, _ in other) for w, _ in ours):
            continue  # the same thing in other words: "retained" for "kept", "rose" for "increased"
        if _received(mine[a0:a1], theirs[max(b0 - 1, 0):b1]):
            continue  # "patients can get a double appointment" for "patients can be given one"
        swaps.append((" ".join(w for w, _ in ours), " ".join(w for w, _ in other)))
        swapped += a1 - a0
    rest = len(mine) - swapped
    return swaps, matched / rest if rest > 0 else 0.0, measures, measured, placed, flips


_PREPOSITIONS = frozenset("by via through in on at with from to for".split())
_RECEIVING = frozenset("get gets got receive receives received obtain obtains obtained".split())
_GIVEN = frozenset("given offered granted issued sent awarded provided allocated assigned allowed".split())
_BE = frozenset("be is are was were been being".split())


def _received(mine: list[str], theirs: list[str]) -> bool:
    """Whether the claim says that its subject gets what the sentence says it is given: "get" for "be
    given", "receive" for "are sent" (the one who receives is the subject of both)."""
    return (not _RECEIVING.isdisjoint(mine) and not _GIVEN.isdisjoint(theirs) and not _BE.isdisjoint(theirs)
            and _GIVEN.isdisjoint(mine))


def _other_amount(mine: list[str], theirs: list[str]) -> bool:
    """Whether two runs of words state different amounts, as the key-fact check reads them."""
    a, b = " ".join(mine), " ".join(theirs)
    return bool(missing_facts(a, b) or missing_facts(b, a))


def _same_amount(mine: list[str], theirs: list[str]) -> bool:
    """Whether two runs of words both state an amount, and the same one ("12 months" and "a year")."""
    a, b = " ".join(mine), " ".join(theirs)
    return bool(key_facts(a)) and bool(key_facts(b)) and not _other_amount(mine, theirs)


def _amount(words: list[str]) -> float | None:
    """The number a run of number words spells ("twenty four" 24, "two hundred" 200), else None."""
    total = 0.0
    for w in words:
        v = number_value(w)
        if v is None:
            return None
        total = total * v if w in ("hundred", "thousand", "million", "billion", "dozen") else total + v
    return total


def _negation_flipped(claim: _Claim, negated: bool, sentence: str, words: list[str] | None = None) -> float:
    """A negation on one side only, or over different words ("not fine" against "no more than"). In
    words, the sentence's negation of a claim without one counts where it stands over words of the
    claim, or over none of its own ("… but paper tickets are not"): "no P1s" in a sentence that a claim
    restates for what it says of the P2 incidents negates nothing the claim says. A negation that a word of
    the other side says alone ("at no cost" for "free", :func:`_negation_absorbed`) is none. ``words``: the
    sentence's words where the caller has them."""
    if claim.neg != negated:
        if CJK_CHAR.search(claim.core) or CJK_CHAR.search(sentence):
            if claim.neg:
                return float(not _cjk_negation_absorbed(claim.core, sentence))
            return float(_cjk_negation_reaches(sentence, claim.core))
        words = _words(sentence) if words is None else words
        if claim.neg:
            return float(not _negation_absorbed(claim.words, words))
        return float(not _negation_absorbed(words, claim.words) and any(
            not scope or not scope.isdisjoint(claim.content) for scope in _negation_scopes(words)))
    return float(claim.neg and _negation_conflicts(claim, sentence) > 0)


# Words that say a negation of their own: "free" is at no cost, "unless" is if not
_CONDITIONALS = frozenset(("if", "unless"))
_COST_STEMS = frozenset(map(light_stem, "cost charge fee pay paying payment price charged paid extra"
                                          .split()))
_CONDITION_REACH = 6  # words before a negation within which "if" or "as long as" makes it a condition's


def _negation_absorbed(negated: list[str], other: list[str]) -> bool:
    """Whether every negation of ``negated`` says what a word of ``other`` says alone: "no cost" or "without
    paying" for "free" (the negation stands over a word of cost), "as long as no one" or "if it is not"
    for "unless" (a condition opens within _CONDITION_REACH words before it)."""
    free, unless = "free" in other, "unless" in other
    if not (free or unless):
        return False
    found = False
    for i in range(len(negated)):
        if not _negating(negated, i):
            continue
        found = True
        after = negated[i + 1:i + 1 + NEGATION_SCOPE]
        before = negated[max(0, i - _CONDITION_REACH):i]
        if free and "free" not in after and not _COST_STEMS.isdisjoint(map(light_stem, after)):
            continue  # "no charge" for "free"; not "not free of charge"
        if unless and "unless" not in negated and ("if" in before or "provided" in before
                       or any(a == "long" and b == "as" for a, b in zip(before, before[1:]))):
            continue
        return False
    return found


# a colon or point between digits stays: "9:00" and "1.5" are not the numbers 900 and 15
_CJK_PUNCT = re.compile(r"(?:[\s，。！？、；“”‘’（）《》【】「」『』,!?;()\[\]\"']|(?<![0-9])[：:.]|[：:.](?![0-9]))+")


def _cjk_plain(text: str) -> str:
    """CJK text as the alignment reads it: no punctuation, spaces, 的 or copula 是 (``_CJK_JOINERS``)."""
    return _CJK_JOINERS.sub("", _CJK_PUNCT.sub("", text))


_CJK_STATEMENT_SPLIT = re.compile(r"[，；,;]")
# a number in digits, or two numerals or more (一百, 三十; 一 alone opens many words: 一楼, 一般)
_CJK_NUMERALS = "".join(sorted(c for c in NUMERAL_CHARS if not c.isascii()))
_CJK_VALUE = re.compile(rf"[0-9０-９][0-9０-９:：.．]*|[{_CJK_NUMERALS}]{{2,}}")
MAX_CJK_PIVOT = 4  # characters of a statement's opening that differ from the other's ("普通读者证" / "少儿证")
MIN_CROSSED_PAIRS = 2  # character pairs of the other statement a claim must hold ("21天": "21", "1天"), not one by chance


def _cjk_opening(a: str, b: str) -> tuple[int, int] | None:
    """Where two CJK statements that open alike after different words go on the same: "早班8:30" /
    "晚班13:00" (after 早 / 晚, 班), "普通读者证借期30天" / "少儿证借期21天" (after 普通读者 / 少儿,
    证借期). The two openings are CJK characters that share none; what follows is the same for two
    characters at least, or one where each opening is one character (东门 / 西门); and the statements
    are of like length (parallel, not any two clauses that happen to share a character)."""
    if max(len(a), len(b)) > 2 * min(len(a), len(b)):
        return None
    for total in range(2, 2 * MAX_CJK_PIVOT + 1):
        for i in range(max(1, total - MAX_CJK_PIVOT), min(total, MAX_CJK_PIVOT + 1)):
            k = total - i
            if i >= len(a) or k >= len(b) or a[i] != b[k]:
                continue
            same = 1 if (i, k) == (1, 1) else 2
            if (a[i:i + same] == b[k:k + same] and all(CJK_CHAR.match(c) for c in a[:i] + b[:k] + a[i:i + same])
                    and set(a[:i]).isdisjoint(b[:k])):
                return i, k
    return None


_COPULA = "为"  # a copula a second statement adds, standing for the first's verb ("晚场为90分钟")


def _value_shape(text: str) -> str:
    """``text`` with each value (:data:`_CJK_VALUE`) as "#": what two statements of other values share."""
    return _CJK_VALUE.sub("#", text)


def _shared_end(first: str, rest: str) -> str | None:
    """The shape (:func:`_value_shape`) of ``rest``, what a second statement says after its opening, where
    it is the end of ``first``'s with each value in the place of another, a copula of its own left out
    ("为#至#" after "游泳馆工作日开放时间为#至#", "#分钟" of "为90分钟" after "早场演出时长#分钟"): a value
    and at least two characters in all; else None."""
    shape, tail = _value_shape(first), _value_shape(rest)
    if tail.startswith(_COPULA) and not shape.endswith(tail):
        tail = tail[1:]
    return tail if "#" in tail and 2 <= len(tail) < len(shape) and shape.endswith(tail) else None


def _cjk_elided(a: str, b: str) -> tuple[int, int] | None:
    """Where a CJK statement that opens with its own word and leaves out what the one before it says
    next goes on as that one ends, with other values: "节假日为8:00至20:00" after
    "游泳馆工作日开放时间为6:30至22:00" (after 节假日 / 游泳馆工作日开放时间, both go on 为…至…). The
    opening of ``b`` is CJK characters of which ``a`` has no pair (节假日 after 工作日), or one it lacks;
    the rest of ``b`` is the end of ``a`` (:func:`_shared_end`)."""
    shape = _value_shape(a)
    for k in range(1, min(MAX_CJK_PIVOT, len(b) - 2) + 1):
        if not CJK_CHAR.match(b[k - 1]) or k > 1 and b[k - 2:k] in a:
            return None  # and so for every longer opening
        if k == 1 and b[0] in a:
            continue
        tail = _shared_end(a, b[k:])
        if tail is None:
            continue
        for i in range(1, len(a)):
            if _value_shape(a[i:]) == tail and _value_shape(a[:i]) + tail == shape:
                if set(_CJK_VALUE.findall(a[i:])) != set(_CJK_VALUE.findall(b[k:])):
                    return i, k
                break
    return None


class _Pivot(NamedTuple):
    """Two statements of a CJK sentence that open alike (:func:`_cjk_opening`, :func:`_cjk_labelled`,
    :func:`_cjk_elided`)."""
    first: str  # the first statement's opening
    second: str  # the second's
    said_first: str  # what the first says after its opening, on to where the second begins
    said_second: str  # what the second says after its opening, on to the sentence's end
    first_read: str  # the first statement alone
    second_read: str  # the second alone, with the words it leaves out of the first


def _in_order(said: str, text: str) -> bool:
    """Whether ``text`` holds the characters of ``said`` in order, but for a copula (:data:`_COPULA`)."""
    rest = iter(text)
    return all(c in rest for c in said if c != _COPULA)


def _read_with(first_said: str, second_said: str) -> str:
    """What a second statement says after its opening, read with the words it leaves out of the first's:
    the first's, with the second's values in place of its own, where the second says the first's words in
    order with some left out and as many values ("班为120元" after "班每小时课时费200元": "班每小时课时费120元");
    else the second's own."""
    values = _CJK_VALUE.findall(second_said)
    if len(_CJK_VALUE.findall(first_said)) != len(values) or not _in_order(
            _value_shape(second_said), _value_shape(first_said)):
        return second_said
    given = iter(values)
    return _CJK_VALUE.sub(lambda _: next(given), first_said)


_LATIN_LABEL = re.compile(r"[A-Za-z]{1,2}(?![A-Za-z])")


def _cjk_labelled(a: str, b: str) -> tuple[int, int] | None:
    """Where two CJK statements that open alike up to a label in Latin letters go on alike: "E栋自习室开放到
    22:00" / "F栋为23:00" (after E / F, 栋, the second leaving out 自习室开放到). The labels differ; what
    follows them opens with the same character, or the second's is the end of the first's
    (:func:`_shared_end`)."""
    c = next((n for n, (x, y) in enumerate(zip(a, b)) if x != y), min(len(a), len(b)))
    if c and not CJK_CHAR.match(a[c - 1]):
        return None
    la, lb = _LATIN_LABEL.match(a, c), _LATIN_LABEL.match(b, c)
    if not la or not lb or la.group().lower() == lb.group().lower():
        return None
    ra, rb = a[la.end():], b[lb.end():]
    if not ra or not rb or not CJK_CHAR.match(ra[0]):
        return None
    return (la.end(), lb.end()) if ra[0] == rb[0] or _shared_end(ra, rb) is not None else None


@lru_cache(maxsize=4096)
def _cjk_pivots(sentence: str) -> tuple[_Pivot, ...]:
    """The pivots of a CJK sentence that makes several statements: each two statements that open alike."""
    parts = [p for p in (_cjk_plain(x) for x in _CJK_STATEMENT_SPLIT.split(sentence)) if p]
    out = []
    for i in range(len(parts) - 1):
        for k in range(i + 1, len(parts)):
            a, b = parts[i], parts[k]
            at = _cjk_opening(a, b) or _cjk_labelled(a, b)
            if at is not None:
                second_read = b[:at[1]] + _read_with(a[at[0]:], b[at[1]:])
            elif (at := _cjk_elided(a, b)) is not None:
                second_read = a[:at[0]] + b[at[1]:]  # the first's opening holds what the second leaves out
            else:
                continue
            out.append(_Pivot(a[:at[0]], b[:at[1]], "".join(parts[i:k])[at[0]:], "".join(parts[k:])[at[1]:],
                              a, second_read))
    return tuple(out)


def _cjk_readings(mine: str, sentence: str) -> list[tuple[str, str, str]]:
    """The statements of the sentence that the claim (``mine``, without punctuation) may restate: for each
    pivot (:func:`_cjk_pivots`) of which it holds one opening only, that opening, the other's, and the
    statement of the opening read alone ("初赛报名费为120元" for 复赛 in "初赛报名费为50元，复赛为120元",
    where the first statement's opening holds what the second leaves out)."""
    out = []
    for p in _cjk_pivots(sentence):
        first, second = _holds(mine, p.first, p.said_first), _holds(mine, p.second, p.said_second)
        if first != second:
            out.append((p.first, p.second, p.first_read) if first else (p.second, p.first, p.second_read))
    return out


def _holds(mine: str, opening: str, said: str) -> bool:
    """Whether the claim (``mine``) holds a statement's opening; one of a character with the character
    after it (小班 of "小班每小时课时费200元", where 小 alone is also in 每小时)."""
    return (opening + said[:1] if len(opening) == 1 else opening) in mine


def _cjk_crossed(mine: str, sentence: str) -> bool:
    """:func:`_statements`' crossing in CJK text: the claim (``mine``, without punctuation) holds one
    statement's opening and none of its own statement's values (numbers, times) that the other lacks, and
    either a value of the other's or, where it does not restate its own statement whole, two pairs of
    characters the other statement says and its own does not: "少儿证借期30天" against "普通读者证借期
    30天，少儿证借期21天"; "东门因维修关闭" against "东门对访客开放，西门因维修关闭"."""
    claim_values = set(_CJK_VALUE.findall(mine))
    for first, second, said_first, said_second, _, _ in _cjk_pivots(sentence):
        held = _holds(mine, first, said_first)
        if held == _holds(mine, second, said_second):
            continue
        own, other = (said_first, said_second) if held else (said_second, said_first)
        own_values, other_values = set(_CJK_VALUE.findall(own)), set(_CJK_VALUE.findall(other))
        if claim_values & (own_values - other_values):
            continue
        if claim_values & (other_values - own_values) and not claim_values & own_values:
            return True  # the other's value in its own's place: "决赛报名费为120元" for "…复赛为120元，决赛为1200元"
        if len(own) >= MIN_PLACED_CHARS and _in_order(own, mine):
            continue  # its own statement whole, with words it leaves out ("F栋自习室开放到23:00")
        own_pairs = {own[i:i + 2] for i in range(len(own) - 1)}
        other_pairs = {other[i:i + 2] for i in range(len(other) - 1)} - own_pairs
        if sum(g in mine for g in other_pairs) >= MIN_CROSSED_PAIRS:
            return True
    return False


class _Cell(NamedTuple):
    """A table cell as a claim may state it: its text without punctuation or spaces (what a CJK claim
    holds), its content stems and its numbers (what a Latin one holds)."""
    text: str
    stems: frozenset[str]
    values: frozenset[str]


def _cell(value: str, key: bool) -> _Cell | None:
    """A cell that says which row it is in: a number, CJK text or two words or more; in the first
    column, a row's key (``text.tables.row_key``). None for one a claim may say of any row ("yes",
    "free", "closed")."""
    flat = _cjk_plain(value).lower()
    stems, values = frozenset(_content(_words(value))), frozenset(_CJK_VALUE.findall(flat))
    if not (values or CJK_CHAR.search(flat) or len(stems) >= 2 or key and row_key(value)):
        return None
    return _Cell(flat, stems, values)


def _table_cells(text: str) -> tuple[tuple[_Cell | None, ...], ...]:
    """The body rows of ``text``'s tables, each as its cells (:func:`_cell`): what :func:`_rows_crossed`
    reads."""
    return tuple(tuple(_cell(v, k == 0) for k, v in enumerate(row)) for row in body_rows(text))


def _rows_crossed(claim: str, claim_stems: set[str], rows: tuple[tuple[_Cell | None, ...], ...]) -> bool:
    """A claim that takes one cell of a table's row and another column's cell of another row: "The
    Oak room seats 30" against Oak room | 12 and Pine room | 30, "The fire drill is on 17 March"
    against 3 March | Fire drill and 17 March | First-aid course, 普通读者证借期21天 against 普通读者证 |
    30天 and 少儿证 | 21天. It crosses where it holds cell (i, c) and cell (j, d), i ≠ j and c ≠ d, each
    unlike the other row's in its column, and neither row j's cell in column c nor row i's in column d;
    a cell whose words the claim holds of the other row's cells already is not counted ("1" of one row
    in "The Team plan includes 1 TB", where the other row says 1 TB). A CJK cell is held as a substring
    of ``claim`` (its text without punctuation), any other where the claim has its stems
    (``claim_stems``) and numbers."""
    values = set(_CJK_VALUE.findall(claim))

    def held(cell: _Cell | None) -> bool:
        if cell is None:
            return False
        if CJK_CHAR.search(cell.text):
            return cell.text in claim
        return cell.stems <= claim_stems and cell.values <= values

    def covered(cell: _Cell, others: list[_Cell]) -> bool:
        """Whether what the claim holds of ``cell`` it holds of ``others`` already (a bare "1" in "1 TB")."""
        if CJK_CHAR.search(cell.text):
            return any(cell.text in o.text for o in others)
        return cell.stems | cell.values <= frozenset().union(*(o.stems | o.values for o in others))

    marks = [[held(cell) for cell in row] for row in rows]
    for i, j in permutations([i for i, m in enumerate(marks) if any(m)], 2):  # rows the claim holds a cell of
        width = min(len(rows[i]), len(rows[j]))
        ours = [c for c in range(width) if marks[i][c] and not marks[j][c] and rows[i][c] != rows[j][c]]
        other = [d for d in range(width) if marks[j][d] and not marks[i][d] and rows[i][d] != rows[j][d]]
        if not ours or not other:
            continue
        held_i = [cell for cell, m in zip(rows[i], marks[i]) if m]
        held_j = [cell for cell, m in zip(rows[j], marks[j]) if m]
        ours = [c for c in ours if not covered(rows[i][c], held_j)]
        other = [d for d in other if not covered(rows[j][d], held_i)]
        if any(c != d for c in ours for d in other):
            return True
    return False


def _aligned_cjk(claim: _Claim, ev: _Evidence) -> dict[str, float]:
    """:func:`_aligned` for text without spaces: words are the units of alignment (:func:`_cjk_opcodes`),
    the sentence is the one sharing most character bigrams, and a replaced span inside a name of the claim
    (:func:`key_facts`) counts as a name swapped."""
    # read without 的 and the copula 是, as the check's words are: "节假日的开放时间是" restates "节假日开放时间为"
    mine = _cjk_plain(claim.core)
    grams = {mine[i:i + 2] for i in range(len(mine) - 1)}
    plain = [_cjk_plain(t) for t in ev.sentences]
    # the sentence holding most of the claim's distinct character pairs: counted with repeats, a longer
    # sentence of the same dates and titles outweighed the one the claim restates
    j = max(range(len(plain)), key=lambda i: (len(grams.intersection(plain[i][k:k + 2]
                                                                   for k in range(len(plain[i]) - 1))), -i))
    theirs = plain[j]
    statements = bool(mine) and _CJK_STATEMENT_SPLIT.search(ev.sentences[j]) is not None
    # one statement's opening with the other's words
    crossed = statements and _cjk_crossed(mine, ev.sentences[j])
    # a claim that restates one of the sentence's statements is read against the one it matches best, where
    # its own opening in the place of the other's is no swap; the whole sentence where that matches more
    readings = [("", "", theirs)]
    if statements and not crossed:
        readings += _cjk_readings(mine, ev.sentences[j])
    alignments = [_cjk_opcodes(mine, r[2]) for r in readings]
    at = max(range(len(readings)), key=lambda r: (alignments[r][0], r))
    theirs, (matched, opcodes) = readings[at][2], alignments[at]
    # the openings of the claim's statement and of the other (every pivot's where the whole sentence is read)
    openings = [r[:2] for r in readings[1:]] if at == 0 else [readings[at][:2]]
    share = matched / len(mine) if mine else 0.0
    name_spans = [(m.start(), m.end()) for f in key_facts(claim.core) if f.kind == "entity"
                  for m in re.finditer(re.escape(_cjk_plain(f.text)), mine) if f.text]
    replaced = added = names = opposites = swaps = measures = cue_chars = swapped = negated = 0
    unit_plain = "".join(plain)  # where a run put for another may stand elsewhere (_put_for_another)
    # the claim's negations said by words of the sentence without one ("不得进入" for "禁止进入")
    absorbed = claim.neg and not ev.sent_neg[j] and _cjk_negation_absorbed(claim.core, ev.sentences[j])
    for op, a0, a1, b0, b1 in opcodes:
        if op == "equal":
            continue
        if op == "replace" and any(mine[a0:a1] in own and theirs[b0:b1] in other for own, other in openings):
            continue
        if (max(a1 - a0, b1 - b0) <= MAX_SWAP_CHARS and not absorbed
                and _cjk_negates(mine, a0, a1) != _cjk_negates(theirs, b0, b1)):
            # a negation added, dropped or put for another word ("不能" for "可以"), where the rest is restated;
            # the negation characters of both sentences as a whole say nothing when another word holds one
            negated = 1
        if op == "replace":
            replaced += 1
            ours, other = mine[a0:a1], theirs[b0:b1]
            name = any(s0 < a1 and a0 < s1 for s0, s1 in name_spans)
            opposite = (_opposite(ours, other) or _opposite(mine[max(0, a0 - 1):a1], theirs[max(0, b0 - 1):b1])
                        or _cjk_opposite_chars(ours, other) or _cjk_turned(ours, other))
            names += name
            opposites += opposite
            if NUMERAL_CHARS.issuperset(ours) and NUMERAL_CHARS.issuperset(other):
                # a digit or numeral put for another ("2019年" for "2018年"): compare the whole numbers,
                # which the key-fact check passes when the unit holds the new one elsewhere
                values = (_numeral_around(mine, a0, a1), _numeral_around(theirs, b0, b1))
                if None not in values and values[0] != values[1]:
                    measures += 1
                    cue_chars += a1 - a0
            elif (_CJK_NUMERAL.search(ours) and _CJK_NUMERAL.search(other)
                  and max(a1 - a0, b1 - b0) <= MAX_SWAPPED_CHARS):
                # another amount of time or measure in its place ("三天" for "一周内"), which the
                # key-fact check lets through where the unit has a "一" or a "1" elsewhere; the same
                # amount in other words ("12个月" for "一年") puts nothing for anything; a number
                # ending both runs before the same character ("在四|层" for "还在六|层") is another floor,
                # room or count of the same thing. Runs longer than a name are a rewording of several words
                # ("早上9点到晚上9点半" for "9:00–21:30"), whose amounts the key-fact check reads whole
                if _other_amount([ours], [other]) or _other_count(mine, a1, theirs, b1):
                    measures += 1
                    cue_chars += a1 - a0
            elif (_put_for_another(ours, other, mine, unit_plain)
                  and not _cjk_reworded(mine, a0, a1, theirs, b0, b1)):
                # a name or term the unit states elsewhere put in the place of one the claim drops
                # ("由张伟负责采购" for "由刘洋负责采购，张伟负责报销"): the roles swapped
                names += 1
                cue_chars += a1 - a0
            elif not (name or opposite) and min(a1 - a0, b1 - b0) >= MIN_PLACED_CHARS and set(ours).isdisjoint(other):
                # a longer thing put for another, no character in common: a name or term in the place of
                # a name the extractor does not read as one ("李德明" for "王建国", a name in Latin letters)
                names += 1
                cue_chars += a1 - a0
            elif name or opposite or not CJK_CHAR.match(ours) or not CJK_CHAR.match(other):
                cue_chars += (a1 - a0) * (name or opposite)
            elif measure_of(ours) and measure_of(other):
                if measure_of(ours) != measure_of(other):
                    measures += 1
                    cue_chars += a1 - a0
            elif (max(a1 - a0, b1 - b0) <= MAX_SWAP_CHARS and not _CJK_NEG.search(ours + other)
                  and not _grammar_only(ours, other) and not _cjk_reworded(mine, a0, a1, theirs, b0, b1)):
                swaps += 1
                swapped += a1 - a0
        elif op == "delete":
            added += 1
    if crossed:
        opposites += 1
    elif mine and ev.rows and _rows_crossed(mine.lower(), set(claim.stems), ev.rows):
        opposites += 1  # one table row's cell with another's: the claim's characters are the table's
        table = set().union(*plain)
        share = max(share, sum(ch in table for ch in mine) / len(mine))
    restated = matched / (len(mine) - swapped) if len(mine) > swapped else 0.0
    share = min(1.0, share + cue_chars / len(mine)) if mine else share
    # a statement read alone is negated as it is, not as the sentence is ("周日不营业" beside "周六为…")
    their_neg = _cjk_negates(theirs, 0, len(theirs)) if at else ev.sent_neg[j]
    return _alignment(max(_negation_flipped(claim, their_neg, ev.sentences[j]), negated), claim.words,
                      claim.core, ev.sent_words[j], ev.sentences[j], share, replaced, added, names,
                      opposites + measures, swaps, restated, names)


@lru_cache(maxsize=1 << 12)
def _cjk_words(text: str) -> tuple[str, ...]:
    """jieba's words of ``text``, by its dictionary alone: its model of unknown words joins the characters
    of a rewording into words of its own, which then match nothing (the fit rounds' wrong decisions rose
    from 98 to 103 of 300 with it, bench/README.md)."""
    return tuple(jieba_tokenizer().lcut(text, HMM=False))


def _ended_runs(opcodes, at_a: list[int], at_b: list[int]) -> list[tuple[str, int, int, int, int]]:
    """The word ``opcodes``, a replaced run that ends one side split in two where the other side's run is
    longer than a name (``at_a``, ``at_b``: each word's start, in characters): where the claim stops before
    the sentence does, its last words are put for as many of the sentence's next words and the rest of the
    sentence is left out ("…2点以前" against "…2点以后，退房时间为中午12点前": 以前 for 以后), not put for
    all of it, whose last character would then be given back as restated; the same the other way round.
    Shorter runs are one ending said in other words ("保留12个月" for "保存一年") and stay whole."""
    n_a, n_b = len(at_a) - 1, len(at_b) - 1
    out = []
    for op, i0, i1, j0, j1 in opcodes:
        if (op == "replace" and i1 == n_a and j1 - j0 > i1 - i0
                and at_b[j1] - at_b[j0] > MAX_SWAPPED_CHARS):
            k = j0 + i1 - i0
            out += [("replace", i0, i1, j0, k), ("insert", i1, i1, k, j1)]
        elif (op == "replace" and j1 == n_b and i1 - i0 > j1 - j0
              and at_a[i1] - at_a[i0] > MAX_SWAPPED_CHARS):
            k = i0 + j1 - j0
            out += [("replace", i0, k, j0, j1), ("delete", k, i1, j1, j1)]
        else:
            out.append((op, i0, i1, j0, j1))
    return out


def _cjk_opcodes(a: str, b: str) -> tuple[int, list[tuple[str, int, int, int, int]]]:
    """How ``a`` becomes ``b``: the characters of ``a`` that ``b`` restates and the opcodes, in character
    offsets. Aligned word by word, so that a word put for another is replaced whole ("批准" for "审批"),
    not matched at the character the two share with the rest left as a word added and one dropped; each
    replaced run then gives back the characters both sides begin or end with, where jieba cut the same
    characters into words on one side only."""
    words_a, words_b = _cjk_words(a), _cjk_words(b)
    at_a, at_b = [0, *accumulate(map(len, words_a))], [0, *accumulate(map(len, words_b))]
    matcher = SequenceMatcher(None, words_a, words_b, autojunk=False)
    matched = sum(at_a[m.a + m.size] - at_a[m.a] for m in matcher.get_matching_blocks())
    opcodes = []
    for op, i0, i1, j0, j1 in _ended_runs(matcher.get_opcodes(), at_a, at_b):
        a0, a1, b0, b1 = at_a[i0], at_a[i1], at_b[j0], at_b[j1]
        if op == "replace":
            while a0 < a1 and b0 < b1 and a[a0] == b[b0]:
                a0, b0, matched = a0 + 1, b0 + 1, matched + 1
            while a0 < a1 and b0 < b1 and a[a1 - 1] == b[b1 - 1]:
                a1, b1, matched = a1 - 1, b1 - 1, matched + 1
            if a0 == a1 and b0 == b1:
                continue  # the same characters, cut into words otherwise
            op = "replace" if a0 < a1 and b0 < b1 else "delete" if a0 < a1 else "insert"
        opcodes.append((op, a0, a1, b0, b1))
    return matched, opcodes


MAX_SWAP_CHARS = 2  # CJK: one word put for another; a longer run is a rewording
MIN_PLACED_CHARS = 3  # CJK: a run put for another this long on both sides, sharing no character, is a name
# CJK: a run of the unit put for another is a name put for a name from this length to that
MIN_SWAPPED_CHARS, MAX_SWAPPED_CHARS = 2, 8


# Chinese words of what must or will be, and of what may be or is advised; and the two ends of an amount
# (a bound said with 不, 不超过 or 不少于, is read by the negation cues)
_CJK_MUST = CJK_MUST | CJK_WILL | frozenset("务必 一律 一定 必定 肯定".split())
_CJK_MAY = CJK_CAN | frozenset("可能 或许 也许 建议 最好 允许 有权".split())
_CJK_AT_LEAST = frozenset("至少 最少 最低".split())
_CJK_AT_MOST = frozenset("至多 最多 最高 封顶".split())
_CJK_TURNS = ((_CJK_MUST, _CJK_MAY), (_CJK_AT_LEAST, _CJK_AT_MOST))


def _cjk_turned(ours: str, other: str) -> bool:
    """Whether a run put for another turns what is asked or how much, by words of the opposite side of
    one of _CJK_TURNS ("建议有成人陪同" for "须有成人陪同", "至少收取" for "最高"): the Chinese of "may" put
    for "must" and of "at least" put for "at most". Runs longer than a name are a rewording, and a negation
    is read by the negation cues."""
    if max(len(ours), len(other)) > MAX_SWAPPED_CHARS or _CJK_NEG.search(ours + other):
        return False
    mine, theirs = set(_cjk_words(ours)), set(_cjk_words(other))
    for first, second in _CJK_TURNS:
        # each run's side: 1 by words of the first only, -1 of the second only, 0 by both or neither
        side_a = (not mine.isdisjoint(first)) - (not mine.isdisjoint(second))
        side_b = (not theirs.isdisjoint(first)) - (not theirs.isdisjoint(second))
        if side_a * side_b == -1:
            return True
    return False


def _grammar_only(ours: str, other: str) -> bool:
    """Whether either side of a replaced run is a particle or preposition alone ("在" for "通过", "由" for
    "须"): what the alignment leaves of a rewording, which says nothing put for anything."""
    return CJK_FUNCTION_CHARACTERS.issuperset(ours) or CJK_FUNCTION_CHARACTERS.issuperset(other)


def _other_count(mine: str, a1: int, theirs: str, b1: int) -> bool:
    """Whether the runs ending at ``mine[a1]`` and ``theirs[b1]`` end in different numbers before the same
    character: "四层" for "六层" inside longer replaced runs, which no measure word tells apart."""
    if a1 >= len(mine) or b1 >= len(theirs) or mine[a1] != theirs[b1] or not CJK_CHAR.match(mine[a1]):
        return False
    values = (_numeral_around(mine, a1 - 1, a1) if mine[a1 - 1] in NUMERAL_CHARS else None,
              _numeral_around(theirs, b1 - 1, b1) if theirs[b1 - 1] in NUMERAL_CHARS else None)
    return None not in values and values[0] != values[1]


def _put_for_another(ours: str, other: str, mine: str, unit: str) -> bool:
    """Whether the claim's run ``ours``, standing in the place of the sentence's ``other``, is a run the
    unit states elsewhere while the claim never states ``other``: one of the unit's names or terms moved
    into another's place. A reordering keeps both in the claim; a name for the word that refers to it
    ("北京大学" for "该校") names what the sentence means."""
    short, long_ = sorted((len(ours), len(other)))
    if not MIN_SWAPPED_CHARS <= short <= long_ <= MAX_SWAPPED_CHARS:
        return False
    return (set(ours).isdisjoint(other) and _CJK_REFERRING.isdisjoint(other) and other not in mine
            and ours in unit)


# Characters of words that refer to something named elsewhere (该校, 其, 他们, 本公司, 此处, 这里)
_CJK_REFERRING = frozenset("该其他她它此本这那")


_CJK_NEGATION = re.compile(r"[不没无未非否]")
# A short run holding any of these is no swap: one word put for another around a negation-like
# character ("非常" for "十分") is left to the negation reading, which knows the words that negate nothing.
_CJK_NEG = re.compile(r"[不没无未非否别]")
# Words that hold a negation character and negate nothing ("非常" very, "未来" future, "无论" whatever).
_CJK_NOT_NEGATIONS = frozenset("非常 非洲 无论 不仅 不过 不断 不久 未来 否则 除非 无数 不少".split())


# Characters of opposite sense, the morphemes most Chinese antonyms are made of: a word put for another
# that differs only in such a character says the opposite ("最高" for "最低", "进口" for "出口").
_CJK_OPPOSITE_CHARS = {}
for _a, _b in ("高低 大小 多少 长短 早晚 南北 内外 里外 进出 出入 上下 前后 左右 开关 新旧 古今 始终 增减 升降 胜败 "
               "胜负 输赢 真假 对错 是非 正反 加减 买卖 来去 生死 男女 冷热 黑白 明暗 快慢 轻重 远近 先后 首末 "
               "公私 收支 得失 盈亏 宽窄 厚薄 深浅 粗细 强弱 难易 贵贱 贫富 松紧 干湿 软硬 动静 有无 存亡 "
               "利弊 优劣 主次 昼夜 起止 攻守 推拉 聚散 兴衰 善恶 美丑 爱恨 悲喜 甜苦 饥饱 忙闲 胖瘦 高矮 "
               "正负 单双 奇偶 曲直 凹凸 顺逆 进退 浮沉 涨落 起落 借还 收发 迎送 老少 老幼 阴阳 雌雄").split():
    _CJK_OPPOSITE_CHARS.setdefault(_a, set()).add(_b)
    _CJK_OPPOSITE_CHARS.setdefault(_b, set()).add(_a)


def _cjk_opposite_chars(ours: str, other: str) -> bool:
    """Two runs of one or two characters that differ only in characters of opposite sense."""
    if len(ours) != len(other) or len(ours) > MAX_SWAP_CHARS:
        return False
    pairs = [(x, y) for x, y in zip(ours, other) if x != y]
    return bool(pairs) and all(y in _CJK_OPPOSITE_CHARS.get(x, ()) for x, y in pairs)


MAX_CJK_WORD = 4  # characters of a word around a replaced run, looked up as a synonym


def _words_around(text: str, i: int, j: int) -> set[str]:
    """The runs of up to MAX_CJK_WORD characters of ``text`` that hold ``text[i:j]``: the words it may be
    part of ("坐落" and "坐落于" around "坐落")."""
    return {text[lo:hi] for lo in range(max(0, j - MAX_CJK_WORD), i + 1)
            for hi in range(j, min(len(text), lo + MAX_CJK_WORD) + 1) if hi > lo}


def _cjk_reworded(mine: str, a0: int, a1: int, theirs: str, b0: int, b1: int) -> bool:
    """Whether the claim's ``mine[a0:a1]`` in the place of the sentence's ``theirs[b0:b1]`` makes a word of
    the same sense (Cilin's synonyms: "采用" for "使用", "坐落于" for "位于")."""
    ours = _words_around(mine, a0, a1)
    other = _words_around(theirs, b0, b1)
    return any(cjk_synonyms(x, y) for x in ours for y in other)


def _cjk_negations(text: str, i: int = 0, j: int | None = None) -> Iterator[int]:
    """Where ``text[i:j]`` holds a negation character that is not part of a word that negates nothing
    (_CJK_NOT_NEGATIONS: 非常, 无论, 未来 …)."""
    for m in _CJK_NEGATION.finditer(text, i, len(text) if j is None else j):
        k = m.start()
        if text[k:k + 2] not in _CJK_NOT_NEGATIONS and text[max(0, k - 1):k + 1] not in _CJK_NOT_NEGATIONS:
            yield k


def _cjk_negates(text: str, i: int, j: int) -> bool:
    """Whether ``text[i:j]`` holds a negation character that is not part of a word that negates nothing."""
    return next(_cjk_negations(text, i, j), None) is not None


CJK_NEGATION_SCOPE = 8  # characters after a Chinese negation that it stands over, within its clause
_CJK_CLAUSE_END = re.compile(r"[，。；：！？、,.;:!?()（）\s]")


def _cjk_negation_reaches(sentence: str, claim: str) -> bool:
    """Whether a negation of ``sentence`` stands over what ``claim`` says: the characters after it (up to
    CJK_NEGATION_SCOPE, within its clause) share a character pair with the claim, or are none ("…，但不共享
    短信" says nothing of a claim about the fee). A sentence negated in words only (no Chinese negation) is
    read as negated whole."""
    found = False
    pairs = _cjk_pairs(_cjk_plain(claim))
    for k in _cjk_negations(sentence):
        found = True
        end = _CJK_CLAUSE_END.search(sentence, k + 1)
        stop = min(end.start() if end else len(sentence), k + 1 + CJK_NEGATION_SCOPE)
        scope = _cjk_plain(sentence[k + 1:stop])
        if len(scope) < 2 or not pairs.isdisjoint(_cjk_pairs(scope)):
            return True
    return not found


def _cjk_pairs(text: str) -> set[str]:
    return {text[i:i + 2] for i in range(len(text) - 1)}


# A Chinese negation that a word without one says, where the sentence's word stands over what the claim's
# negation does: "不用买票", "不收钱" for "免票", "免费"; "不得进入" for "禁止外来车辆进入"; "不到1.2米" for
# "1.2米以下". Each: the claim's words, and what the sentence must hold, built from the claim's match.
_CJK_ABSORBED = (
    (re.compile(r"(?:不用|不需要?|不必|无需|不收|不要)[^，。；]{0,3}?[票费钱]"), lambda m: r"免[收付交缴]?[^，。；]{0,3}?[票费钱]"),
    (re.compile(r"不(?:得|准|许|允许|能|可以?)([^，。；\s]{2})"), lambda m: rf"禁止?[^，。；]{{0,6}}{re.escape(m.group(1))}"),
    (re.compile(rf"不(?:到|足|满)\s*([0-9.]+|[{_CJK_NUMERALS}]+)"),
     lambda m: rf"{re.escape(m.group(1))}[^，。；]{{0,3}}(?:以下|以内|之内)|(?:低于|少于){re.escape(m.group(1))}"),
)


def _cjk_negation_absorbed(claim: str, sentence: str) -> bool:
    """Whether every Chinese negation of ``claim`` says what a word of ``sentence`` says without one, over
    the same words (``_CJK_ABSORBED``)."""
    found = False
    for k in _cjk_negations(claim):
        found = True
        if not any((said := pattern.match(claim, k)) and re.search(word(said), sentence)
                   for pattern, word in _CJK_ABSORBED):
            return False
    return found


def _numeral_around(text: str, i: int, j: int) -> float | None:
    """The value of the whole run of numerals around ``text[i:j]``."""
    while i > 0 and text[i - 1] in NUMERAL_CHARS:
        i -= 1
    while j < len(text) and text[j] in NUMERAL_CHARS:
        j += 1
    return numeral_value(text[i:j])


def _alignment(neg: float, claim_words_: list[str], claim_text: str, words: frozenset[str], sentence: str, share: float,
               replaced: int, added: int, names: int, opposites: int, swaps: int, restated: float,
               placed_names: int, quantified: tuple[set[str], set[str]] | None = None) -> dict[str, float]:
    mine, other = quantified or (_quantifiers(claim_words_, claim_text), _quantifiers(words, sentence))
    quantifier = float(bool(mine ^ other) and bool(mine) and bool(other))
    close = _closeness(share)
    # a swap by the words in order: the claim's other words restated as they stand in the sentence
    close_swap = _closeness(restated)
    return {"aligned_neg_mismatch": neg, "aligned_replaced": math.log1p(replaced),
            "aligned_replaced_names": float(names), "aligned_added": math.log1p(added),
            "quantifier_change": quantifier, "flip_negation": neg * close,
            "flip_opposite": min(opposites, 1) * close, "flip_quantifier": quantifier * close,
            "flip_names": min(placed_names, 2) * close, "flip_swap": min(swaps, 2) * close_swap}


CLAUSE_HELD = 0.75  # share of a clause's words its closest sentence must state for the clause to be stated
CLAUSE_UNHELD = 2  # and words it may lack: one word put for another is a synonym's, not a new clause's
CJK_CLAUSE_UNHELD = 4  # CJK words are read as character pairs: one word put for another changes ~3
_CJK_NUMERAL = re.compile(r"[0-9零〇一二两三四五六七八九十百千万亿]")


def _held(words: list[str], ev: _Evidence) -> float:
    """The share of a clause's content words (numbers aside: the key-fact check's) that the one
    evidence sentence stating most of them states; 1 when it lacks fewer than CLAUSE_UNHELD, or when
    a run of sentences (``_run_end``) states every one (a list's heading and its first item, quoted as
    one)."""
    if all(map(str.isascii, words)):
        content = {t for w, t in zip(words, map(light_stem, words))
                   if w not in CLAIM_STOP_WORDS and len(w) > 1 and not number_word(w)}
        least = CLAUSE_UNHELD
    else:
        content = {t for t in _content(words) if not _CJK_NUMERAL.search(t)}
        least = CJK_CLAUSE_UNHELD
    if not content:
        return 1.0
    hits: dict[int, int] = {}
    for t in content:
        for i in ev.postings.get(t, ()):
            hits[i] = hits.get(i, 0) + 1
    best = max(hits.values(), default=0)
    if len(content) - best < least:
        return 1.0
    for lo in hits:
        hi = _run_end(ev, lo)
        if hi - lo > 1 and all(any(lo <= i < hi for i in ev.postings.get(t, ())) for t in content):
            return 1.0
    return best / len(content)


def _run_end(ev: _Evidence, lo: int) -> int:
    """The end of the run of at most MAX_RUN sentences from ``lo`` that one sentence ending in a colon
    or semicolon carries on into the next: a list's heading and its items read as one sentence."""
    hi = lo + 1
    while hi < len(ev.sentences) and hi - lo < MAX_RUN and ev.sentences[hi - 1].rstrip()[-1:] in _RUN_ON:
        hi += 1
    return hi


MIN_COPIED_WORDS = 4  # content words of the clause copied word for word: a fragment copied is a quote


def _copied(words: list[str], ev: _Evidence) -> float:
    """The share of a clause's word triples that the evidence has in the same order: 1 for a clause
    copied word for word, less for one reworded (a synthesis of the source, not a restatement)."""
    stems = [light_stem(w) for w in words]
    tri = list(zip(stems, stems[1:], stems[2:]))
    return sum(map(ev.trigrams.__contains__, tri)) / len(tri) if tri else 0.0


def _recall(content: list[str], tokens: frozenset[str]) -> float:
    return sum(t in tokens for t in content) / len(content) if content else 1.0


def _fact_features(claim: _Claim, evidence: str) -> dict[str, float]:
    facts = key_facts(claim.core)
    missing = missing_facts(claim.core, evidence)
    kinds = [m.kind for m in missing]
    return {
        "facts_n": math.log1p(len(facts)),
        "facts_share": 1.0 - len(missing) / len(facts) if facts else 1.0,
        "missing_number": float(kinds.count("number")),
        "missing_date": float(kinds.count("date")),
        "missing_entity": float(kinds.count("entity")),
        "missing_code": float(kinds.count("code") + kinds.count("version")),
    }


PARALLEL_PAIRS = 50_000  # fewer pairs than this run on one thread


def _cosines(a: np.ndarray, b: np.ndarray, ai: np.ndarray, bi: np.ndarray) -> np.ndarray:
    """``cos(a[ai[k]], b[bi[k]])`` by the native kernel (a NumPy fallback only if it is not built)."""
    try:
        from asmr_kernels import pair_cosine
    except ImportError:  # pragma: no cover - the kernels are part of every build
        na = a / np.maximum(np.linalg.norm(a, axis=1, keepdims=True), 1e-12)
        nb = b / np.maximum(np.linalg.norm(b, axis=1, keepdims=True), 1e-12)
        return np.einsum("ij,ij->i", na[ai], nb[bi]).astype(np.float32)
    # A verifier batch is small: waking an OpenMP team costs more than the dot products.
    return pair_cosine(a, b, ai, bi, num_threads=1 if len(ai) < PARALLEL_PAIRS else 0)


# The cues a compound claim's parts are read for one by one (a swap's weight needs the words' vectors,
# and an added part is flip_clause's).
CLAUSE_FLIPS = ("flip_negation", "flip_opposite", "flip_quantifier", "flip_names")
SPAN_WORDS = 2  # a claim's words that another sentence than its best holds, for it to restate both


def _spans_sentences(claim: _Claim, ev: _Evidence, per_sent: list[int]) -> bool:
    """Whether the claim restates more than one sentence: of its content words that the sentence sharing
    most of them (``per_sent``) lacks, another sentence holds at least SPAN_WORDS. One word put for
    another (a synonym, a number in words) leaves one word over."""
    told = set(claim.content)
    if not told or len(per_sent) < 2:
        return False
    j = max(range(len(per_sent)), key=per_sent.__getitem__)
    rest = told - ev.sent_tokens[j]
    return len(rest) >= SPAN_WORDS and any(
        len(rest & t) >= SPAN_WORDS for k, t in enumerate(ev.sent_tokens) if k != j)


def _plain_words(text: str) -> str:
    """``text`` as a string to find word runs in: CJK as the alignment reads it, other text as its words."""
    return _cjk_plain(text) if CJK_CHAR.search(text) else " ".join(_words(text))


@lru_cache(maxsize=512)
def _said(sentences: tuple[str, ...]) -> str:
    """The sentences as one string of :func:`_plain_words`, to find a claim's part in as written."""
    return "\n".join(_plain_words(s) for s in sentences)


@lru_cache(maxsize=512)
def _clause_evidence(sentences: tuple[str, ...]) -> _Evidence:
    """The evidence of ``sentences`` read clause by clause (:func:`_clauses` of each, a line each): a part
    of a claim is read against the clause it restates, so that "B costs 5 euros" is not read against the
    "not" of another clause of its sentence."""
    return _evidence("\n".join(p for sentence in sentences for p in (_clauses(sentence) or [sentence])))


def _clause_flips(claim: _Claim, ev: _Evidence, per_sent: list[int]) -> dict[str, float]:
    """The strongest cue of each of CLAUSE_FLIPS among the parts of a compound claim that restates more
    than one sentence, each part read against its own best clause of the evidence: "A is not allowed.
    B costs 5 euros." is what a unit says, and "A is allowed, and B costs 5 euros" restates both
    sentences, one of them flipped. Read whole, the claim restates too little of either sentence for
    a cue to count (FLIP_SHARE). {} for a claim of one part, one that restates one sentence, and against
    a table (one with column names: a unit of a table's rows may have no body rule), whose rows are read
    as :func:`_rows_crossed` reads them ("岗位: 保安主管; 姓名: 孙海涛" restates a row of several
    statements)."""
    if not claim.clauses or ev.rows or ev.columns or not _spans_sentences(claim, ev, per_sent):
        return {}
    # the sentences it may restate: those that share words with it (the rest cannot be a part's best)
    restated = tuple(t for t, k in zip(ev.sentences, per_sent) if k >= SPAN_WORDS)
    clause_ev, said = _clause_evidence(restated), _said(restated)
    out = dict.fromkeys(CLAUSE_FLIPS, 0.0)
    for text in claim.clauses:
        part = _claim(text)
        if not part.content or _plain_words(part.core) in said:
            continue  # a part the unit says word for word flips nothing
        per_clause = [len(set(part.content) & t) for t in clause_ev.sent_tokens]
        if CJK_CHAR.search(part.core):  # characters aligned span by span: each cue is where the words differ
            cues, _ = _aligned(part, clause_ev, per_clause)
            for k in CLAUSE_FLIPS:
                out[k] = max(out[k], cues[k])
        else:
            out["flip_negation"] = max(out["flip_negation"], _part_negated(part, clause_ev, per_clause))
    return out


def _part_negated(part: _Claim, ev: _Evidence, per_sent: list[int]) -> float:
    """flip_negation of one part of a claim in words, against its best clause of the evidence: an
    English clause may hold another clause's "not" ("they had no idea" after "as explorers discovered
    new places"), so only a negation over the part's own words counts."""
    j = _best_sentence(part, ev, per_sent)
    if not (_negated_stems(part.words) ^ _negated_stems(ev.sent_seq[j])) & set(part.content):
        return 0.0
    told = _told(part)
    share = len(told & ev.sent_tokens[j]) / len(told) if told else 0.0
    return _negation_flipped(part, ev.sent_neg[j], ev.sentences[j], ev.sent_seq[j]) * _closeness(share)


def _clause_best(cl: list[_Claim], counts: list[int], offsets: list[int], clause_vecs: np.ndarray,
                 sent_vecs: np.ndarray) -> list[float]:
    """Per clause (all claims' clauses in order), its best cosine to its pair's candidate sentences."""
    counts_a = np.asarray(counts, np.int64)
    n_clauses = np.array([len(c.clauses) for c in cl], np.int64)
    clause_pair = np.repeat(np.arange(len(cl), dtype=np.int64), n_clauses)
    per_clause = counts_a[clause_pair]
    cq = np.repeat(np.arange(len(clause_vecs), dtype=np.int64), per_clause)
    starts = np.repeat(np.asarray(offsets[:-1], np.int64)[clause_pair], per_clause)
    within = np.arange(cq.size, dtype=np.int64) - np.repeat(np.cumsum(per_clause) - per_clause, per_clause)
    best = np.full(len(clause_vecs), -1.0, np.float32)
    if cq.size:
        np.maximum.at(best, cq, _cosines(clause_vecs, sent_vecs, cq, starts + within))
    return best.tolist()


# Characters of a unit embedded whole and read for its scripts: the embedder reads ~256 word pieces anyway.
EVIDENCE_CHARS = 2000


def pair_readable(core: str, evidence: str, scripts) -> float:
    """The share of a pair the embedder reading ``scripts`` reads: the less read of the core claim and
    the evidence's first ``EVIDENCE_CHARS`` (the ``readable`` feature)."""
    return min(readable_share(core, scripts), _evidence_readable(evidence[:EVIDENCE_CHARS], scripts))


@lru_cache(maxsize=1 << 12)
def _evidence_readable(head: str, scripts) -> float:
    """``readable_share`` of an evidence's head, kept: a support model with an ``unread`` part reads it to
    choose the part, then its features read it again, and the units an answer cites recur (a Chinese head
    takes about half a millisecond to count)."""
    return readable_share(head, scripts)


def pair_features(claims: Sequence[str], evidences: Sequence[str], *, embedder=None,
                  claim_vecs: np.ndarray | None = None, evidence_vecs: np.ndarray | None = None,
                  cache: VectorCache | None = None) -> np.ndarray:
    """The feature matrix ``(len(claims), len(FEATURES))`` of (claim, evidence) pairs.

    ``claim_vecs`` are the vectors of the claims' core text (:func:`core_claim`) and
    ``evidence_vecs`` those of the whole evidence texts, when the caller already has
    them; everything else is embedded here in one batch by ``embedder`` (default MiniLM), through
    ``cache`` (default the embedder's shared one, ``embed.cache.shared_cache``).
    """
    claims, evidences = list(claims), list(evidences)
    if len(claims) != len(evidences):
        raise ValueError(f"pair_features: {len(claims)} claims but {len(evidences)} evidences")
    for name, seq in (("claims", claims), ("evidences", evidences)):
        bad = next((i for i, s in enumerate(seq) if not isinstance(s, str)), None)
        if bad is not None:
            raise ValueError(f"pair_features: {name}[{bad}] must be a string, got {type(seq[bad]).__name__}")
    n = len(claims)
    if n == 0:
        return np.zeros((0, len(FEATURES)), np.float64)
    # An answer may be written in the other Han script than the units it cites: both are read folded
    # to Simplified (text.cjk.fold_han), the script of the word lists and of Cilin.
    claims, evidences = [fold_han(c) for c in claims], [fold_han(e) for e in evidences]
    for name, vecs in (("claim_vecs", claim_vecs), ("evidence_vecs", evidence_vecs)):
        if vecs is not None and (np.ndim(vecs) != 2 or len(vecs) != n):
            raise ValueError(f"pair_features: {name} must have one row per pair ({n}), got shape {np.shape(vecs)}")
    cl = [_claim(c) for c in claims]
    evs = [_evidence(e) for e in evidences]
    cands = [_candidates(c, e) for c, e in zip(cl, evs)]
    # content words each evidence sentence shares with its claim, and the claim read against the sentence
    # sharing most (lexical): its swapped words are embedded in the one batch below
    per_sents = [[len(set(c.content) & s) for s in ev.sent_tokens] for c, ev in zip(cl, evs)]
    aligned = [_aligned(c, ev, per_sent) for c, ev, per_sent in zip(cl, evs, per_sents)]
    clause_flips = [_clause_flips(c, ev, per_sent) for c, ev, per_sent in zip(cl, evs, per_sents)]
    swap_words = list(dict.fromkeys(w for _, pairs in aligned for pair in pairs if _read_alone(pair)
                                    for w in pair))

    texts: list[str] = []
    if claim_vecs is None or evidence_vecs is None or any(cands) or swap_words:
        if embedder is None:
            from asmr.embed.models import get_embedder
            embedder = get_embedder()
    sent_texts = [ev.sentences[j] for ev, cs in zip(evs, cands) for j in cs]
    clause_texts = [q for c in cl for q in c.clauses]
    texts = sent_texts + clause_texts
    if claim_vecs is None:
        texts += [c.core for c in cl]
    if evidence_vecs is None:
        texts += [e[:EVIDENCE_CHARS] for e in evidences]
    vecs = (cache if cache is not None else shared_cache(embedder)).embed(embedder, texts + swap_words)
    word_vecs, word_at = vecs[len(texts):], {w: k for k, w in enumerate(swap_words)}
    m, q = len(sent_texts), len(clause_texts)
    sent_vecs = vecs[:m]
    clause_vecs = vecs[m:m + q]
    pos = m + q
    if claim_vecs is None:
        claim_vecs = vecs[pos:pos + n]
        pos += n
    if evidence_vecs is None:
        evidence_vecs = vecs[pos:pos + n]
    claim_vecs = np.asarray(claim_vecs, np.float32)
    evidence_vecs = np.asarray(evidence_vecs, np.float32)
    scripts = getattr(embedder, "scripts", ALL_SCRIPTS) if embedder is not None else ALL_SCRIPTS

    # Per pair a handful of floats: Python lists beat NumPy calls on arrays this small.
    counts = [len(c) for c in cands]
    offsets = [0, *accumulate(counts)]
    pair_claim = np.repeat(np.arange(n, dtype=np.int64), counts)
    cos = _cosines(claim_vecs, sent_vecs, pair_claim, np.arange(m, dtype=np.int64))
    every = np.arange(n, dtype=np.int64)
    cos_doc = _cosines(claim_vecs, evidence_vecs, every, every).tolist()
    clause_best = _clause_best(cl, counts, offsets, clause_vecs, sent_vecs) if q else []
    clause_offsets = [0, *accumulate(len(c.clauses) for c in cl)]
    cos_list = cos.tolist()

    features: list[dict[str, float]] = []
    for i in range(n):
        c, ev, cs = cl[i], evs[i], cands[i]
        lo, hi = offsets[i], offsets[i + 1]
        f: dict[str, float] = {}
        per_sent = per_sents[i]
        if hi > lo:
            seg = cos_list[lo:hi]
            top = max(range(len(seg)), key=seg.__getitem__)  # the first of equal maxima, as argsort
            best = cs[top]
            f["cos_max"] = seg[top]
            if len(seg) > 1:
                second = max((k for k in range(len(seg)) if k != top), key=seg.__getitem__)
                f["cos_top2"] = float((cos[lo + top] + cos[lo + second]) / 2)  # float32, as NumPy's mean
            else:
                f["cos_top2"] = seg[top]
            # the cosine of the sentence sharing most words with the claim
            lex = [per_sent[j] for j in cs]
            f["cos_best_lex"] = seg[max(range(len(lex)), key=lex.__getitem__)]
        else:
            best = 0
            f["cos_max"] = f["cos_top2"] = f["cos_best_lex"] = cos_doc[i]
        f["cos_doc"] = cos_doc[i]
        f["readable"] = pair_readable(c.core, evidences[i], scripts)
        f.update(_lexical(c, ev, best, per_sent))
        f.update(_fact_features(c, evidences[i]))
        f.update(aligned[i][0])
        for k, v in clause_flips[i].items():
            f[k] = max(f[k], v)
        # a negation on one side that stands over nothing the other says, or that a word of the other
        # side says alone ("不收钱" for "免费"), is no mismatch
        f["neg_mismatch"] = float(c.neg != ev.sent_neg[best]
                                  and _negation_flipped(c, ev.sent_neg[best], ev.sentences[best]) > 0)
        f["negation_conflicts"] = (float(_negation_conflicts(c, ev.sentences[best]))
                                   if c.neg or ev.sent_neg[best] else 0.0)
        if f.pop(DOUBLED, 0.0):  # the negation and the opposite cancel: neither is a cue against support
            f["neg_mismatch"] = f["negation_conflicts"] = 0.0
        f["antonym"] = max(f["antonym"] - f.pop(OPPOSITES_RESTATED, 0.0), 0.0)
        if c.clauses and hi > lo:
            f["clause_min_cos"] = min(clause_best[clause_offsets[i]:clause_offsets[i + 1]])
            words = [_words(t) for t in c.clauses]
            f["clause_min_recall"] = min(_recall(_content(w), ev.tokens) for w in words)
            # one part stated word for word by a sentence, another by none: an addition to what the
            # source says, even when its words stand in the unit apart ("B depends on C" beside "A
            # depends on B")
            held = [_held(w, ev) for w in words]
            copied = max((_copied(w, ev) for w in words if len(_content(w)) >= MIN_COPIED_WORDS), default=0.0)
            f["flip_clause"] = float(copied >= 0.9 and min(held) < CLAUSE_HELD)
        else:
            f["clause_min_cos"] = f["cos_max"]
            f["clause_min_recall"] = f["recall"]
            f["flip_clause"] = 0.0
        features.append(f)
    for f, (_, pairs) in zip(features, aligned):
        if f["flip_swap"]:
            f["flip_swap"] *= _swap_weight(f, pairs, word_vecs, word_at)
    return np.array([_feature_row(f) for f in features], np.float64)


# Places where a claim puts its words for a sentence's at which it says the sentence in its own words, not
# one thing for another: a swap that contradicts is one word or name in an otherwise restated sentence
# (two were tried: lies of two places kept, bench/README.md)
REWORDED_SWAPS = 3


def _read_alone(pair: tuple[str, str]) -> bool:
    """Whether a swap's two sides are compared embedded alone: a word put for a word, or a phrase for
    one of as many words; a phrase put for a word ("the people who own it" for "the owners") may say
    the same thing, which its words alone do not show (it counts by the sentence's cosine only)."""
    return pair[0].count(" ") == pair[1].count(" ")


def _swap_weight(f: dict[str, float], pairs: list[tuple[str, str]], word_vecs: np.ndarray,
                 word_at: dict[str, int]) -> float:
    """How much a claim's swaps count: each as far as it moves the claim's meaning (SWAP_SHIFT,
    WORD_OTHER, WORD_SAME), and in full as far as the embedder cannot read the pair (Chinese for MiniLM:
    synonyms are Cilin's there; a Chinese claim's swaps are runs of characters, read by the sentence's
    cosine only); not at all in REWORDED_SWAPS places or more, a rewording."""
    if len(pairs) >= REWORDED_SWAPS:
        return 0.0
    counted = min(max((1.0 - f["cos_max"]) / SWAP_SHIFT, 0.0), 1.0)
    if pairs:
        alone = np.array([_read_alone(pair) for pair in pairs])
        cos = np.ones(len(pairs))  # a pair not read alone counts by the sentence's cosine only
        if alone.any():
            cos[alone] = _cosines(word_vecs, word_vecs,
                                  np.array([word_at[a] for (a, _), k in zip(pairs, alone) if k], np.int64),
                                  np.array([word_at[b] for (_, b), k in zip(pairs, alone) if k], np.int64))
        apart = np.maximum(np.clip((WORD_SAME - cos) / (WORD_SAME - WORD_OTHER), 0.0, 1.0), counted)
        counted = min(float(apart.sum()), 2.0) / min(len(pairs), 2)  # flip_swap counts min(swaps, 2)
    return f["readable"] * counted + (1.0 - f["readable"])
