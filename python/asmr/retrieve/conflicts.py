"""Conflicts: recalled units of different documents that say different things about the same thing.

A pair is found two ways:

- **one slot, two values**: a sentence of each unit says the same thing in the same words except
  for one span, and that span holds a value on both sides (a number, a date, a version, a code, a
  name): "The search service is owned by the Vega team." against "... by the Lyra team."
  (``differing_value``: difflib over word tokens, each CJK character a token, so that Chinese
  needs no word segmenter; a CJK name has no capital, so a short CJK span opposite a value counts
  as one). Not a conflict: other words in the same place (another statement), two spans with
  different values (a template filled in for another subject), words one side adds (it says
  more, not otherwise), different names where both sentences begin ("Brelova pages the on-call
  engineer ..." / "Brisade pages ..."), values that are part of each document's title ("Marrow
  MX 40" / "MX 39"), and sentences opening with a pronoun in documents of different titles ("It
  aired on ...": each is about its own document's subject);
- **a revised rule reworded**: cosine >= ``conflict_similarity`` and different effective dates, each
  stated by its document (or given to its ingest): a document without one takes the day it was
  ingested, which says nothing about when what it says held. Only where the embedding model reads
  at least half of each unit (``text.scripts.READ_FOR_COSINE``): a model that cannot read a script
  gives any two short texts of it a high cosine, and two unrelated rules of a Chinese handbook read
  by an English model would each outdate the other. Never between two chat turns: a speaker who
  talks of one thing on two days says it in like words, and turns correct one another by a slot's
  value only, in one conversation's document or each in its own.

Who wins: a statement of history (a changelog document, a unit under a revision-history heading,
a sentence that states a change "from A to B") loses to a current statement; otherwise the newer
effective date wins, and the older unit becomes an alternative (``Hit.alternative_to``) ranked
right after the newer. Where neither dates nor history tell (the same date, or a side whose
document stated none: an undated page ingested today does not outdate a dated one), neither wins:
both stay where they rank, each marked ``Hit.disagrees_with`` the other, and the answer states both.

A statement of history that shares most of its content words with a current unit ranked below it
is moved right after that unit, with that unit's score, conflict or not: "moved from the Orion team to the Vega team" is
not the answer to who owns it now.

Two active units of one document never conflict: a revision that changed a statement superseded
its old unit, so both belong to the document as it stands. A conversation is the exception: its
units are chat turns (``text.turns.parse_turn``: the stamp and speaker that chat ingest writes at
the head of each), a log of what was said when, so a later turn that gives one slot of the same
speaker's statement another value corrects the earlier one ("my flight is on Thursday" ... "sorry,
my flight is on Friday"): the later turn (by its stamp, then by its place in the document) wins,
and the earlier becomes its alternative, as an older unit of another document does. Within one
document only one slot, two values counts (two turns alike in meaning both stand), and a turn
that states a change is news there, not history.

A terse correction restates nothing ("Correction: Bologna, not Tartu!", "Sorry, I meant Friday":
``text.corrections.read_correction``): it outdates the latest earlier turn of the same speaker in
the same conversation whose value it replaces (``text.corrections.replaced_span``): the value it
names as replaced, else one of the same kind (a weekday, a date, a name, ...) within
``_TERSE_REACH`` units before it.

Turns are compared by what was said, without their heads (the stamps differ in every pair), and
two turns of different speakers never conflict, in one document or two: Bob's statement never
corrects Alice's.

Cost: it runs on the top-k hits only. Each unit is split into sentences and words once; a
sentence is paired only with sentences whose words mostly agree with its own and whose text
differs, and only those pairs are aligned (bench/conflicts.py: about 1 ms a question on the
HotpotQA sample, 3 ms on the longer Chinese units of CMRC, k = 10).
"""
from __future__ import annotations

import re
from dataclasses import replace

import numpy as np
from cydifflib import SequenceMatcher

from ..text.cjk import CJK_CHAR, CJK_CLASS
from ..text.corrections import adds_value, marks_correction, read_correction, replaced_span
from ..text.entities import COMMON_WORDS, normalize, title_key, unit_entities
from ..text.facts import key_facts
from ..text.scripts import READ_FOR_COSINE
from ..text.sentences import sentence_ends, split_sentences
from ..text.turns import parse_turn, said_turns
from ..text.words import PRONOUNS, content_words, tokenize
from .bridge import DocumentSubjects
from .types import Hit

# One CJK character, a number with its decimal or thousands marks ("3.5", "1,900"), or a run of
# letters and digits.
_TOKEN = re.compile(rf"[{CJK_CLASS}]|\d+(?:[.,]\d+)*(?![^\W_{CJK_CLASS}])|[^\W_{CJK_CLASS}]+")
_MIN_OVERLAP = 0.5  # shared words over the longer side's: the same statement, mostly in the same words
_MIN_ALIGNED = 0.6  # tokens matched in order, over the longer sentence's
_MIN_SHARED = 3  # words two units must share before their sentences are compared
_HISTORY_OVERLAP = 0.5  # a history statement's content words that a current unit states too
_DATE_GAP = 3  # tokens between two differences that are joined when they hold a digit
_CJK_NUMERAL = re.compile("[零〇一二三四五六七八九十百千万亿两]")
_CJK_WINDOW = 3  # characters around a CJK span searched for the key fact that holds it
_CJK_NAME_MAX = 8  # characters of a CJK span taken for a name opposite a value
_RESTATED_SLOT = 3  # tokens of a slot a speaker's restated sentence may fill with other words
# Units back that a terse correction naming no replaced value reaches ("I meant Friday" is said right
# after what it corrects; the speaker's turns in between are few).
_TERSE_REACH = 8
# Pronouns that open a sentence whose subject is named elsewhere (closed word classes, English and Chinese).
_PRONOUNS = PRONOUNS | frozenset("this these those 它 他 她 其 该 此".split())

# What marks a statement of history, in the words any handbook uses (English and Chinese):
# a heading of a revision history or changelog, and a sentence that states a change.
_HISTORY_HEADING = re.compile(
    r"\b(?:revision|change|version|edit|release)s?\s*(?:history|log|notes)\b|\bchangelog\b"
    r"|修订|变更|更新日志|更新记录|版本历史|历史记录", re.IGNORECASE)
_CHANGE = re.compile(
    r"\b(?:mov|chang|switch|transferr?|renam|migrat|hand|pass|reassign|updat|rais|lower|increas|decreas|reduc|shift)"
    r"(?:e|es|ed|ing|s)?\b.{0,40}?\bfrom\s+\S.{0,60}?\bto\s+\S"
    r"|\b(?:was|were)\s+\S.{0,60}?\buntil\b|\b(?:previously|formerly|no longer)\b|\breplaced\s+by\b"
    r"|[从由自].{1,20}?(?:改为|改成|变为|变更为|调整为|更换为|换成|迁移到|移交给?)|原为|此前|不再", re.IGNORECASE)
# Words a change is stated with: the full pattern runs only where one of them occurs.
_CHANGE_HINT = re.compile(r"\b(?:from|until|previously|formerly|longer|replaced)\b|[改变调换迁移原此不]", re.IGNORECASE)
_WORD = re.compile(r"[^\W_]+")


def _tokens(sentence: str) -> list[tuple[str, int, int]]:
    low = sentence.lower()
    if len(low) != len(sentence):  # a few letters change length when lowered: keep the offsets right
        return [(m.group(0).lower(), m.start(), m.end()) for m in _TOKEN.finditer(sentence)]
    return [(m.group(0), *m.span()) for m in _TOKEN.finditer(low)]


def _words(sentence: str, cjk: bool) -> set[str]:
    """The words a sentence is compared by: its tokens, or in CJK text the lexical index's words
    (character bigrams: single characters are too common to tell sentences apart)."""
    return set(tokenize(sentence) if cjk else _TOKEN.findall(sentence.lower()))


class _Read:
    """A unit read once: its sentences as character ranges with their word sets (``_words``), and
    all its words as a set. Tokens with offsets are found only for the sentences that get aligned,
    once each."""
    __slots__ = ("text", "sentences", "token_set", "said", "_aligned")

    def __init__(self, text: str):
        self.text = text
        self.sentences: list[tuple[int, int, set[str]]] = []
        start = 0
        cjk = CJK_CHAR.search(text) is not None
        for end in [*sentence_ends(text), len(text)]:
            words = _words(text[start:end], cjk)
            if words:
                self.sentences.append((start, end, words))
            start = end
        self.token_set = set().union(*(s[2] for s in self.sentences))
        self.said = {text[a:b].strip() for a, b, _ in self.sentences}
        self._aligned: dict[int, tuple[str, list]] = {}

    def aligned(self, at: tuple[int, int, set]) -> tuple[str, list]:
        """A sentence's text and its tokens with offsets."""
        if at[0] not in self._aligned:
            text = self.text[at[0]:at[1]]
            self._aligned[at[0]] = (text, _tokens(text))
        return self._aligned[at[0]]

    def sentence(self, at: tuple[int, int, set]) -> str:
        """The sentence as a reader quotes it (a table row as ``split_sentences`` writes it)."""
        quoted = split_sentences(self.text)
        if not quoted:
            return " ".join(self.text[at[0]:at[1]].split())
        cjk = CJK_CHAR.search(self.text) is not None
        return max(quoted, key=lambda q: len(at[2] & _words(q, cjk)))


def _overlap(a: set, b: set, restated: bool = False) -> float:
    """Shared words over the longer side's (``restated``: over the shorter side's)."""
    return len(a & b) / max(min(len(a), len(b)) if restated else max(len(a), len(b)), 1)


def _holds_value(text: str, start: int, end: int) -> bool:
    """Whether ``text[start:end]`` holds a value: a digit, a capitalised word that is not a common
    word opening the sentence, or (for CJK, where names have no capitals) a numeral or a key fact
    over the span."""
    span = text[start:end]
    if any(c.isdigit() for c in span):
        return True
    if CJK_CHAR.search(span):
        if _CJK_NUMERAL.search(span):
            return True
        lo, hi = max(0, start - _CJK_WINDOW), min(len(text), end + _CJK_WINDOW)
        window = text[lo:hi]
        for f in key_facts(window):
            at = window.find(f.text)
            if at >= 0 and lo + at < end and lo + at + len(f.text) > start:
                return True
        return False
    for m in _WORD.finditer(span):
        w = m.group(0)
        if w[0].isupper() and not (not text[:start + m.start()].strip() and w.lower() in COMMON_WORDS):
            return True
    return False


def differing_value(a: str, b: str) -> tuple[str, str] | None:
    """The values in which sentence ``a`` and sentence ``b`` differ, when they say the same thing
    in the same words except for one span that holds a value on both sides; else None."""
    return _differing_value(a, _tokens(a), b, _tokens(b))


def _differing_value(a: str, ta: list, b: str, tb: list, restated: bool = False,
                     marked: bool = False) -> tuple[str, str] | None:
    """``differing_value`` of the sentences whose tokens (with offsets into ``a`` and ``b``) are given.
    ``restated``: the tokens matched are counted over the shorter sentence, not the longer (a speaker
    restating their own words may add some: "Sorry, I was wrong: my train leaves on Saturday"), and
    where the rest is the same word for word (but for a lead-in), a slot of up to ``_RESTATED_SLOT``
    tokens needs no mark of a value where one of their turns says it corrects (``marked``: "I play the
    cello" / "Sorry, I play the piano"; ``text.corrections.marks_correction``). A sentence that says it
    adds ("too", "also") gives a second value, not another."""
    if not ta or not tb:
        return None
    sm = SequenceMatcher(None, [t for t, _, _ in ta], [t for t, _, _ in tb], autojunk=False)
    over = min(len(ta), len(tb)) if restated else max(len(ta), len(tb))
    if sum(bl.size for bl in sm.get_matching_blocks()) < _MIN_ALIGNED * over:
        return None
    found = None
    said_more = False  # one side says more somewhere but at the start (a lead-in: "Sorry, I meant ...")
    loose = False  # a slot taken for one only because the sentence is restated
    for i1, i2, j1, j2 in _regions(sm.get_opcodes(), ta):
        if i1 == i2 or j1 == j2:
            said_more = said_more or i1 > 0 or j1 > 0
            continue  # one side says more: not another value
        sa, ea, sb, eb = ta[i1][1], ta[i2 - 1][2], tb[j1][1], tb[j2 - 1][2]
        values = (a[sa:ea], b[sb:eb])
        if found is not None and found != values:
            return None  # two slots differ: a template filled in for another subject
        value_a, value_b = _holds_value(a, sa, ea), _holds_value(b, sb, eb)
        # a CJK name has no mark of its own: a short CJK span opposite a value is taken for one
        if not (value_a and value_b or value_a and _short_cjk(b[sb:eb]) or value_b and _short_cjk(a[sa:ea])):
            # a speaker restating their own sentence word for word but a few words gives those as the value
            if not (restated and max(i2 - i1, j2 - j1) <= _RESTATED_SLOT):
                return None  # other words in the same place: another statement, not another value
            loose = True
        if found == values:
            continue  # the same value swapped again ("in 2008 ... the 2008 games")
        if i1 == 0 and j1 == 0 and not any(c.isdigit() for c in a[sa:ea] + b[sb:eb]):
            return None  # the sentences open with different names: two subjects (a date may open one)
        found = values
    if found is not None and restated and adds_value(a) != adds_value(b):
        return None  # "I visited Rome" ... "I visited Paris too": a second value, not another
    if loose and not marked:
        return None  # "I bring the salad" ... "I bring the wine": a slot of plain words needs a correction's mark
    return None if loose and said_more else found


def _implicit_subject(sentence: str) -> bool:
    """A sentence whose subject is a pronoun: what it is about is said elsewhere (the title)."""
    first = _TOKEN.match(sentence.lstrip().lower())
    return first is not None and first.group(0) in _PRONOUNS


def _short_cjk(span: str) -> bool:
    """A few CJK characters, perhaps joined by punctuation ("卡兰-加松")."""
    chars = [c for c in span if c.isalnum()]
    return 0 < len(chars) <= _CJK_NAME_MAX and all(CJK_CHAR.match(c) for c in chars)


def _regions(opcodes, tokens: list):
    """The differing spans of an alignment, with differences one CJK character apart joined
    (character tokens align "十五" with "三十" as insert 三, keep 十, delete 五), and differences a
    few tokens apart joined where those tokens hold a digit (one date: "1940年6月22日" / "2013年6月21日").
    Yielded one by one, each once the next difference is known not to join it: a reader that stops at
    the second slot never reads the rest."""
    last = None  # the region being built, yielded when a difference that does not join it follows
    gap = None  # the equal stretch since the last difference, read only when a difference follows it
    for op, i1, i2, j1, j2 in opcodes:
        if op == "equal":
            gap = (i1, i2)
            continue
        if last is not None and gap is not None and _joins(tokens, *gap):
            last = (last[0], i2, last[2], j2)
        else:
            if last is not None:
                yield last
            last = (i1, i2, j1, j2)
        gap = None
    if last is not None:
        yield last


def _joins(tokens: list, i1: int, i2: int) -> bool:
    """Whether the equal tokens ``i1:i2`` between two differences join them into one (``_regions``)."""
    if i2 - i1 == 1 and CJK_CHAR.match(tokens[i1][0]):  # one character of a CJK word
        return True
    return i2 - i1 <= _DATE_GAP and any(c.isdigit() for t, _, _ in tokens[i1:i2] for c in t)


def _disagreement(x: _Read, y: _Read, restated: bool = False) -> tuple[tuple, tuple, tuple[str, str]] | None:
    """The sentences of ``x`` and ``y`` that give one slot two values (each as its range and its
    text), and the values, if any. Only sentences whose
    tokens the other unit holds for the most part are paired, and only pairs that overlap as much
    are aligned (``restated``: see ``_differing_value``)."""
    if len(x.token_set & y.token_set) < _MIN_SHARED:
        return None
    marked = restated and (marks_correction(x.text) or marks_correction(y.text))
    # a sentence both units state word for word gives no slot two values
    xs = [s for s in x.sentences if len(s[2] & y.token_set) >= _MIN_OVERLAP * len(s[2])
          and x.text[s[0]:s[1]].strip() not in y.said]
    ys = [s for s in y.sentences if len(s[2] & x.token_set) >= _MIN_OVERLAP * len(s[2])
          and y.text[s[0]:s[1]].strip() not in x.said] if xs else []
    for s in xs:
        for t in ys:
            if _overlap(s[2], t[2], restated) >= _MIN_OVERLAP:
                (a, ta), (b, tb) = x.aligned(s), y.aligned(t)
                values = _differing_value(a, ta, b, tb, restated, marked)
                if values:
                    return (s, a), (t, b), values
    return None


def _said(text: str) -> str:
    """What a unit says: a chat turn's words without its stamp and speaker, else its text."""
    turn = parse_turn(text)
    return text if turn is None else turn.body


def disagreeing_sentences(text_a: str, text_b: str) -> tuple[str, str] | None:
    """The sentence of each unit that gives the slot its value, for two units that disagree."""
    x, y = _Read(_said(text_a)), _Read(_said(text_b))
    at = _disagreement(x, y) or _disagreement(x, y, restated=True)
    if at:
        return x.sentence(at[0][0]), y.sentence(at[1][0])
    correction = read_correction(y.text)  # a terse correction: the sentence of the value it replaces
    span = replaced_span(correction, x.text) if correction is not None else None
    if span is None:
        return None
    said = next((x.sentence(t) for t in x.sentences if t[0] <= span[0] < t[1]), x.text)
    return " ".join(said.split()), " ".join(y.text.split())


def states_history(unit, doc_type: str = "", *, sentences: bool = True) -> bool:
    """Whether a unit is a statement of history: in a changelog, under a revision-history heading,
    or (``sentences``) a sentence that states a change ("moved from A to B", "was A until", "改为")."""
    if doc_type == "changelog":
        return True
    if any(_HISTORY_HEADING.search(h) for h in unit.section_path[1:]):
        return True  # the first heading is the document's title
    return sentences and bool(_CHANGE_HINT.search(unit.content) and _CHANGE.search(unit.content))


def resolve_conflicts(hits: list[Hit], units: list, vectors, subjects: DocumentSubjects,
                      conflict_similarity: float, documents: dict | None = None,
                      undated: frozenset = frozenset(), readable: list[float] | None = None) -> list[Hit]:
    """Mark and order the conflicts among ``hits`` (``units``: their units, in the same order;
    ``documents``: (title, type) by (kb, doc_id), as ``Memory.document_titles_and_types`` gives them;
    ``undated``: the (kb, doc_id) of documents that stated no date, ``Memory.undated_documents``;
    ``readable``: the share of each unit's text the embedding model reads, None where it reads all)."""
    if len(hits) < 2:
        return hits
    documents = documents or {}
    titles = [title_key(documents.get((u.kb, u.doc_id), ("", ""))[0]) for u in units]
    # the day a document was ingested is no date of what it says: an undated side tells nothing
    stated_date = [(u.kb, u.doc_id) not in undated for u in units]
    vecs = np.asarray(vectors[[h.row for h in hits]])
    cos = vecs @ vecs.T
    if readable is not None:  # a cosine the model cannot read is no evidence of a reworded rule
        blind = np.asarray(readable) < READ_FOR_COSINE
        cos[blind, :] = -np.inf
        cos[:, blind] = -np.inf
    subjects, cjk = subjects
    names: dict[int, set[str]] = {}
    reads: dict[int, _Read] = {}
    # Where a unit stands is cheap to tell from its document and section; what a sentence states is
    # read only for a pair in conflict.
    placed = [states_history(u, documents.get((u.kb, u.doc_id), ("", ""))[1], sentences=False) for u in units]
    stated: dict[int, bool] = {}

    def history(i: int) -> bool:
        if i not in stated:
            stated[i] = placed[i] or states_history(units[i], sentences=True)
        return stated[i]

    def named(i: int) -> set[str]:
        if i not in names:
            names[i] = unit_entities(units[i].content, subjects, cjk) & subjects.keys()
        return names[i]

    def own_subject(i: int, value: str) -> bool:
        """The value names the unit's document, or is part of its title ("MX 40" of "Marrow MX 40")."""
        key = normalize(value)
        return ((units[i].kb, units[i].doc_id) in subjects.get(key, ())
                or bool(key) and f" {key} " in f" {titles[i]} ")

    def read(i: int) -> _Read:
        if i not in reads:
            reads[i] = _Read(turns[i].body if turns[i] is not None else units[i].content)
        return reads[i]

    turns = [parse_turn(u.content) for u in units]
    speakers = [normalize(t.speaker) if t is not None else None for t in turns]
    statements: dict[int, list[tuple[str, tuple, _Read]]] = {}

    def turns_said(i: int) -> list[tuple[str, tuple, _Read]]:
        """(speaker, when, words read) of each turn unit ``i`` states (``text.turns.said_turns``); when:
        the stamp, then 0 for a quote and 1 for a turn said (a quote repeats what was said by its
        stamp: it never outdates a turn of the same minute), then the unit's place in the document."""
        if i not in statements:
            statements[i] = [(normalize(t.speaker), (t.stamp, int(not quoted), units[i].ord), _Read(t.body))
                             for t, quoted in said_turns(units[i].content)]
        return statements[i]

    def corrected(i: int, j: int) -> tuple[int, int] | None:
        """(older, newer) of two turn units of one conversation where a turn of one gives a slot of the
        same speaker's turn in the other another value: the older is the one said first."""
        for speaker, when_i, x in turns_said(i):
            for other, when_j, y in turns_said(j):
                if speaker == other and _disagreement(x, y, restated=True) is not None:
                    return (i, j) if when_i < when_j else (j, i)
        return None

    def tersely_corrected(j: int) -> int | None:
        """The unit whose turn a terse correction in unit ``j`` corrects (``text.corrections``): of the
        units of its conversation, the latest turn of the same speaker said before it that holds the
        value replaced; one that names no replaced value reaches back ``_TERSE_REACH`` units at most."""
        best = None
        for speaker, when_j, y in turns_said(j):
            correction = read_correction(y.text) if when_j[1] else None  # a quote corrects nothing
            if correction is None:
                continue
            for i in range(len(hits)):
                same = (units[i].kb, units[i].doc_id) == (units[j].kb, units[j].doc_id)
                if i == j or not same or i in newer_of:
                    continue
                if correction.replaced is None and not 0 < units[j].ord - units[i].ord <= _TERSE_REACH:
                    continue
                for other, when_i, x in turns_said(i):
                    if other == speaker and when_i < when_j and (best is None or when_i > best[0]) \
                            and replaced_span(correction, x.text) is not None:
                        best = (when_i, i)
        return None if best is None else best[1]

    newer_of: dict[int, int] = {}  # older -> newer (or history -> current)
    disagree: dict[int, int] = {}
    taken: set[int] = set()  # each unit in at most one conflict
    for j in range(len(hits)):
        if turns[j] is not None and j not in newer_of:
            i = tersely_corrected(j)
            if i is not None:
                newer_of[i] = j
                taken.add(i)
    for i in range(len(hits)):
        for j in range(i + 1, len(hits)):
            said = turns[i] is not None and turns[j] is not None  # two chat turns
            if (units[i].kb, units[i].doc_id) == (units[j].kb, units[j].doc_id):
                # a conversation: a later turn corrects an earlier one (which may lose to several)
                if said and i not in newer_of and j not in newer_of and units[i].content != units[j].content:
                    pair = corrected(i, j)
                    if pair is not None:
                        newer_of[pair[0]] = pair[1]
                        taken.add(pair[0])
                continue  # else both active in one document: its current version states both
            if i in taken or j in taken:
                continue
            if said and speakers[i] != speakers[j]:
                continue  # one speaker's statement never corrects another's
            if units[i].content == units[j].content:
                continue  # the same text is no conflict
            dated = stated_date[i] and stated_date[j] and hits[i].effective_at != hits[j].effective_at
            aligned = _disagreement(read(i), read(j))
            if aligned is not None:
                if own_subject(i, aligned[2][0]) and own_subject(j, aligned[2][1]):
                    continue  # each names its own document's subject: two subjects, not two values
                if titles[i] != titles[j] and titles[i] and titles[j] and _implicit_subject(aligned[0][1]) \
                        and _implicit_subject(aligned[1][1]):
                    continue  # "It aired on ...": each about its own document's subject

            elif said or not (dated and conflict_similarity <= cos[i, j] < 0.9999):
                # two turns are no rule reworded: like-worded turns of one speaker on two days are talk
                # of one thing, and a later turn outdates an earlier only by a slot's value, as in one
                # conversation
                continue
            elif named(i) - named(j) and named(j) - named(i):  # about different things
                continue
            if history(i) != history(j):
                old, new = (i, j) if history(i) else (j, i)
            elif dated:
                old, new = (i, j) if hits[i].effective_at < hits[j].effective_at else (j, i)
            else:
                disagree[i], disagree[j] = j, i
                taken.update((i, j))
                continue
            newer_of[old] = new
            taken.update((old, new))
    order = list(range(len(hits)))
    demoted: dict[int, int] = {}  # history unit -> the current unit it now follows
    # History below the current unit that states most of what it does (a conflict or not).
    for h in [i for i in order if placed[i] and i not in newer_of]:
        words = content_words(units[h].content)
        if not words:
            continue
        below = [c for c in order[order.index(h) + 1:] if not placed[c]
                 and len(words & content_words(units[c].content)) >= _HISTORY_OVERLAP * len(words)]
        if below:
            order.remove(h)
            order.insert(order.index(below[0]) + 1, h)
            demoted[h] = below[0]
    for old in sorted(newer_of, key=lambda o: -order.index(o)):
        order.remove(old)
        order.insert(order.index(newer_of[old]) + 1, old)
    out = []
    for i in order:
        h = hits[i]
        if i in newer_of:
            h = replace(h, alternative_to=hits[newer_of[i]].unit_id)
        elif i in disagree:
            h = replace(h, disagrees_with=hits[disagree[i]].unit_id)
        if i in demoted:  # its score as its rank: no higher than the unit it follows
            h = replace(h, score=min(h.score, hits[demoted[i]].score))
        out.append(h)
    return out
