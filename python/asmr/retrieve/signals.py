"""What recall reads off a question and the units it recalled, for the confidence.

Each signal asks whether the memory *states* the answer, by reading the best units against the
question, never how a corpus was put together (no signal reads whether titles or file names are
there):

- ``term_alignment``: how much of the question one unit says, each content term weighed by its
  idf in the memory (a name the memory never mentions weighs most, a word every unit has least),
  or one chain of units, each naming what the next one's document is about (:func:`chain_masks`;
  ``pipeline.Retriever.chain_links``: a question of several hops is stated by no one unit);
- ``kind_alignment``: the same with the term that names the kind of answer asked for ("which
  *river*", "的*首都*是哪里") and the noun a relative clause describes ("the *committee* that approves ...":
  :func:`answer_kinds`) at half its weight, since a unit that states the answer names the thing, not
  its kind (the fit weighs the two together: a kind word held counts about a third of another word);
- ``subject_phrases``: whether a unit that holds the question's rarest term also states the
  question's word pairs;
- ``speaker_gap`` (``pipeline``, from the vectors): for a question that names people who speak in
  the memory's conversations (``text.turns``), how much closer the best unit of all comes to the
  question without their names than the best of their own turns does: a question that gives one
  person's experience to another finds it said by someone else; times the share of the question the
  model reads (``Retriever.readable``). 0 for a question that names no speaker, or whose best unit is
  about them (their turn, or one naming them).

Others were tried and measured out of source (bench/README.md, "Refusal out of source"), and
left out: the share of the question's other terms that the named people's own turns hold (a
lexical speaker_gap: AUC 0.72 on adversarial chat questions, where the cosine gap gives 0.89;
"Where is her home?" is not held by "I live in Tallinn"); the kind of span the question asks for
(number, date, name) held by an aligned unit, or by a sentence that states as much of the question as
the best one does (bench/README.md, "The kind of value asked for"), and the agreement of the dense and
BM25 rankings; each helped one family of sources and hurt others. So did term alignment with idf
weighed down for words common in their language (a name the memory lacks counts, a kind-of-answer word
less): Chinese questions whose subject was swapped lost; and the kind
of answer weighed down in term alignment itself rather than beside it: HotpotQA lost out of source
(docs/recall.md). Two recalled units that share a name the question does not give, read as one,
raised more unanswerable questions than answerable ones on the generated KB's family B: a chain
needs a unit that names what the next one is about. The alignment of the best two units together
and the share of the question's three-word phrases one unit states weighed 0 once every weight
was held to its sign (``confidence.SIGNS``), and were dropped.

English terms are lemmatised (simplemma) and stemmed (Snowball, PyStemmer), so "founded" meets
"founding" and "went" meets "go"; in term and kind alignment an English term is also held by a unit
that says it another way, by a WordNet synonym of few senses (``term_senses``: "doctor" for
"physician") or as a hyphenated pair written as one word ("Wi-Fi" for "wifi", and "WiFi" for
"Wi-Fi": two neighbouring terms a unit writes as one word). Chinese questions are
cut into words by jieba, and a word is held by a unit that contains it, or that contains the
dictionary words it is made of (a compound the question keeps whole, the unit may state in parts).
Across the two languages, a term of the language the question is asked in is held by a unit
written in the other that says it, by CC-CEDICT's glosses (``text.bilingual``: "borrow" by 借,
日志 by "logs"). The question words that ask rather than say (``QUESTION_STOP_WORDS`` and their Chinese
counterparts) are no terms, nor the verbs that open a request ("Tell me", "Look up":
``text.words.without_request``).
"""
from __future__ import annotations

import re
from functools import lru_cache

import numpy as np

from ..text.bilingual import english_keys
from ..text.cjk import (CJK_CHAR, CJK_COUNTED, CJK_FIRST_COUNTED, CJK_FUNCTION_CHARACTERS, CJK_PRESENT_WORDS,
                        jieba_tokenizer)
from ..text.scripts import written_in
from ..text.sentences import sentence_ends
from ..text.wordnet import senses
from ..text.words import QUESTION_STOP_WORDS, cjk_bigrams, term_key, tokenize, without_request

# Chinese words that ask, or that say nothing on their own: no terms of a question. The fifth line and
# CJK_PRESENT_WORDS: 还 + a verb (还要 still must, 还是 still / or) and the time of asking (现在 now,
# 目前 currently), which QUESTION_STOP_WORDS holds in English too. The last two lines are what
# QUESTION_STOP_WORDS holds in English: modal verbs (应该 should, 需要 / 必须 must),
# negation (没有), quantifiers (每个 each, 一些 some, 至少 at least), before / after / within
# (以前, 以后, 以内), conjunctions and pronouns. A unit that answers "员工应该在几点以前提交？" says "员工
# 在五点前提交", seldom 应该 or 以前.
CJK_QUESTION_WORDS = frozenset("""
什么 哪 哪个 哪些 哪里 哪儿 哪位 哪一 哪年 哪一年 哪种 哪家 哪所 哪部 哪座 谁 多少 几 是 的 了 吗 呢 如何 怎么 怎样 为什么
为何 何时 何地 何 什么时候 什么样 有 在 和 与 及 被 于 为 对 从 以 之 其 该 这 那 这个 那个 一个 哪一个 所 也 都 又 还 会 能
可以 曾 曾经 主要 分别 叫 叫做 称为 名为 是否 有没有 多 之一 一 个 位 中 上 下 时 后 前 年 月 日
多久 多长 多大 多高 多远 多深 时候
还要 还是
应该 应当 必须 需要 须要 能够 可能 将要 没有 不是 不能 不会 每个 每一 一些 许多 很多 更多 最多 至少 其他 其它 只有
仅仅 非常 以前 之前 以后 之后 期间 之间 以内 之内 然后 如果 所以 任何 所有 全部 他们 她们 它们 我们 你们 自己
""".split()) | CJK_PRESENT_WORDS
# The words that ask by their form: 几 + a measure word ("几年", "几分钟": how many), 多 or 有多 + a
# dimension ("多长时间", "有多深": how long, how deep), 哪 + a measure word ("哪天"); and 这 / 那 + a
# measure word ("这座": this one), which point at the subject without naming it; and 一 / 每 + the
# measure word of a counted thing ("一张", "每间": a sheet, each room), which counts what the question
# names beside it, as 一个 and 每个 do (a span of time, "一年", is a value and stays a term).
# The measure words: those of counted things (text.cjk.CJK_COUNTED) and those of time, order and the rest.
_CJK_MEASURES = CJK_COUNTED | frozenset("年天月日号点次分秒小周岁届场章句所国里儿些样")
_CJK_DIMENSIONS = frozenset("久长大高远深宽厚快")


def asks(word: str) -> bool:
    """Whether a Chinese word (as jieba cuts it) only asks, or only points, and names nothing."""
    if word in CJK_QUESTION_WORDS:
        return True
    if word.startswith("有多"):
        word = word[1:]
    if len(word) < 2:
        return False
    head, second = word[0], word[1]
    return ((head in "几哪这那" and second in _CJK_MEASURES) or (head == "多" and second in _CJK_DIMENSIONS)
            or (len(word) == 2 and head in "一每" and second in CJK_COUNTED and word not in CJK_FIRST_COUNTED))

# The words that make "how" ask for a measure ("how long", "how often", "how many"): what is asked,
# which the unit that answers states as a value ("30 days", "weekly"), not as the word.
HOW_DEGREES = frozenset("""long often far old many much big large tall high soon late early frequently fast quickly
deep wide heavy small short""".split())

_HYPHENATED = re.compile(r"\b([A-Za-z]+)-([A-Za-z]+)\b")


@lru_cache(maxsize=1 << 12)
def _unit_keys(text: str) -> frozenset[str]:
    """The keys of a unit's English words, and of each hyphenated pair written as one word ("Wi-Fi" as
    "wifi", "e-mail" as "email"): a question may write it either way."""
    latin = CJK_CHAR.sub(" ", text)
    joined = [a.lower() + b.lower() for a, b in _HYPHENATED.findall(latin)]
    return frozenset(term_key(w) for w in tokenize(latin) + joined)


# A word of more WordNet senses than this ("get", "open", "shift") shares one with too many others to
# say that a unit holding one of them says the question's word another way
SYNONYM_MAX_SENSES = 6


@lru_cache(maxsize=1 << 16)
def _few_senses(word: str) -> frozenset[int]:
    """``word``'s WordNet senses, none for a word of more than SYNONYM_MAX_SENSES."""
    found = senses(word)
    return found if len(found) <= SYNONYM_MAX_SENSES else frozenset()


def term_senses(question: str, terms: list[str]) -> list[frozenset[int]]:
    """For each of ``terms`` (``question_terms``), the WordNet senses of the question's words that
    make it (words of at most SYNONYM_MAX_SENSES senses; none for a CJK term)."""
    found: dict[str, frozenset[int]] = {}
    for w in tokenize(CJK_CHAR.sub(" ", without_request(question))):
        if w not in QUESTION_STOP_WORDS:
            key = term_key(w)
            found[key] = found.get(key, frozenset()) | _few_senses(w)
    return [found.get(t, frozenset()) for t in terms]


@lru_cache(maxsize=1 << 12)
def _unit_senses(text: str) -> frozenset[int]:
    """The WordNet senses of a unit's English words (``_few_senses``)."""
    return frozenset().union(*(_few_senses(w) for w in tokenize(CJK_CHAR.sub(" ", text))
                               if w not in QUESTION_STOP_WORDS))


@lru_cache(maxsize=1 << 12)
def _jieba_cut(question: str) -> tuple[str, ...]:
    """jieba's words of ``question``, cut once for the terms and the kind of answer."""
    return tuple(jieba_tokenizer().lcut(question))


def _cjk_words(question: str) -> tuple[list[str], list[str]]:
    """The content words of a question's CJK text (jieba's cut, question words and single characters
    out), and the runs of two or more single characters that jieba left side by side.

    A word jieba guessed (not in its dictionary) that ends in a one-character question word ("划艇" +
    "队有" for "划艇队 / 有多少") loses that character: "有" is no part of what is asked about. A word
    jieba's dictionary lacks may come out as single characters instead ("年假" as 年 + 假, a name as
    its characters): such a run is a word if the memory says so (:func:`_memory_words`). A function
    character (``CJK_FUNCTION_CHARACTERS``) ends a run: "由 + 谁" is grammar side by side."""
    known = jieba_tokenizer().FREQ  # jieba's dictionary
    words, runs, run = [], [], []
    for w in _jieba_cut(question):
        if len(w) == 1 and CJK_CHAR.match(w) and w not in CJK_FUNCTION_CHARACTERS:
            run.append(w)
            continue
        if len(run) >= 2:
            runs.append("".join(run))
        run = []
        if len(w) >= 2 and w[-1] in CJK_QUESTION_WORDS and not known.get(w):
            w = w[:-1]
        if len(w) >= 2 and CJK_CHAR.match(w) and all(CJK_CHAR.match(c) for c in w) and not asks(w):
            words.append(w)
    if len(run) >= 2:
        runs.append("".join(run))
    return words, runs


_NO_TOKEN = "\x00"  # a token no unit has: its idf is the largest the index gives
# Characters that ask or qualify what follows them (所 before a verb, the modal 要, adverbs): jieba's
# guess can glue one to the verb after it ("多久要换一次" cut as 要换), a word no unit writes.
_CJK_LEADING_GRAMMAR = frozenset("所要就才都也还又会能该须")


def _memory_words(words: list[str], runs: list[str], idf_of) -> list[str]:
    """jieba's words, each cut back by a character where the memory says jieba overran a word, and the
    runs of single characters (:func:`_cjk_words`) that the memory writes together.

    jieba's dictionary lacks most names, and its guess for unknown text can glue a name to a
    neighbouring character ("郑舒" + "史称" cut as "郑舒史" + "称"), or to words on both sides (a
    speaker's name and what they did: "江浩学琴用了" as 江浩学琴); such a word holds a character pair
    that no unit has, while the name does not. A guessed word (not in jieba's dictionary) of three or
    more characters is cut wherever two of its characters stand together in no unit, and its pieces of
    two characters or more are the terms (``_split_where_absent``). One of two characters whose first
    asks or qualifies (``_CJK_LEADING_GRAMMAR``: "多久要换一次" cut as 要换, the modal glued to the
    verb) loses it, and the one character left is no term (the memory says "更换"). A dictionary word,
    and a guessed word with no piece of two characters, stay as they are: a word the memory lacks is
    still asked.

    The other way round, jieba can cut a word it does not know into characters ("年假可以顺延吗" as 年 +
    假 + 可以 + 顺延 + 吗), and the single characters are no terms: the question would lose the very word
    that sets it apart. A run of single characters whose every pair occurs in the memory is a term; a run with
    a pair no unit has is cut there, as a guessed word is, and its pieces of two characters or more are terms:
    the memory never writes the run as one word, but a word in it may be what is asked ("年假有几天" cut as
    年 + 假 + 有 + 几天 asks about 年假, which the memory writes, and not about 假有)."""
    known = jieba_tokenizer().FREQ  # jieba's dictionary
    long = [w for w in words if not known.get(w) and (len(w) >= 3 or w[0] in _CJK_LEADING_GRAMMAR)]
    if not long and not runs:
        return words
    grams = sorted({g for w in long + runs for g in cjk_bigrams([w])})
    idf = idf_of(grams + [_NO_TOKEN])
    absent = {g for g, v in zip(grams, idf[:-1]) if v >= idf[-1]}
    out = []
    for w in words:
        if w in long and absent.intersection(cjk_bigrams([w])):
            if len(w) >= 3:
                out.extend(_split_where_absent(w, absent) or [w])
                continue
            w = w[1:]  # the modal or adverb glued before a verb; one character left is no term
        if len(w) >= 2:
            out.append(w)
    return out + [piece for r in runs for piece in _split_where_absent(r, absent)]


def _split_where_absent(word: str, absent: set[str]) -> list[str]:
    """``word`` cut between each two neighbouring characters that form a pair of ``absent`` (pairs no
    unit has), its pieces of two characters or more in order: "江浩学琴" with 浩学 absent gives 江浩
    and 学琴."""
    pieces, start = [], 0
    for i in range(len(word) - 1):
        if word[i:i + 2] in absent:
            pieces.append(word[start:i + 1])
            start = i + 1
    pieces.append(word[start:])
    return [p for p in pieces if len(p) >= 2]


# English words that ask for a thing by its kind ("which river", "what is the height of"), and the
# Chinese ones after which ("什么 N") or before which ("的 N 是 什么") the kind stands
_WH_DETERMINERS = frozenset(("what", "which", "whose"))
_BE = frozenset(("is", "was", "are", "were", "s"))  # "s": "what's"
_ARTICLES = frozenset(("the", "a", "an"))
_AUXILIARIES = frozenset("do does did is are was were be been has have had can could should would will shall "
                         "may might must".split())
_CJK_ASKING_BEFORE = frozenset("什么 哪 哪个 哪些 哪种 哪一 哪一个 哪家 哪所 哪部 哪座 哪位 多少".split())
_CJK_ASKING_AFTER = frozenset("是 为 叫 叫做 称为 名为 有".split())
ANSWER_KIND_WEIGHT = 0.5  # in kind_alignment, a kind-of-answer term weighs this share of its idf


# A relative clause and the noun phrase it describes: "the N that ...", "the N in which ..."
_RELATIVIZERS = frozenset(("that", "which", "who", "whom", "whose", "where"))
_RELATIVE_PREPOSITIONS = frozenset("in on at to for from by with into under over through".split())
_DETERMINERS = frozenset("the a an this these those its their his her our your my".split())


def _relative_clauses(words: list[str]) -> dict[int, int]:
    """Where relative clauses of ``words`` open, and the noun each describes: the index of the
    relativizer ("which" of "the museum in which", "that" of "the committee that approves") → the
    index of that noun (a determiner within three words before it). A question of several hops names
    each thing it passes through by its kind and a clause, and the unit about that thing names it by
    its name."""
    out = {}
    for i, w in enumerate(words):
        if w in ("which", "whom") and i >= 2 and words[i - 1] in _RELATIVE_PREPOSITIONS:
            h = i - 2
        elif w in _RELATIVIZERS and i > 0 and words[i - 1] not in _RELATIVE_PREPOSITIONS:
            h = i - 1
        else:
            continue
        if h >= 1 and words[h] not in QUESTION_STOP_WORDS and not words[h].isdigit() \
                and any(d in _DETERMINERS for d in words[max(0, h - 3):h]):
            out[i] = h
    return out


def answer_kinds(question: str) -> set[str]:
    """The terms of ``question`` that name the kind of thing it asks for rather than what it is about: the
    noun a question word governs ("which *river*", "what is the *height* of", "哪个*省*", "的*首都*是哪里"),
    and the noun a relative clause describes ("the *committee* that approves ...": ``_relative_clauses``).
    A unit that states the answer names the thing (a river's name, "8,848 m"), seldom its kind. Keys as
    :func:`question_terms` gives them (English terms by :func:`term_key`)."""
    kinds: set[str] = set()
    latin = CJK_CHAR.sub(" ", question)
    bounds = [0, *sentence_ends(latin)]
    for start, end in zip(bounds, bounds[1:] + [len(latin)]):  # "... a broken box. Which extension"
        words = tokenize(latin[start:end])
        relative = _relative_clauses(words)
        kinds.update(term_key(words[h]) for h in relative.values())
        for i, w in enumerate(words):
            if w not in _WH_DETERMINERS or i in relative:
                continue  # the "which" of "the museum in which the mosaic is kept" asks nothing
            j = i + 1
            if j < len(words) and words[j] in _BE:  # "what is the N of"
                j += 1
                while j < len(words) and words[j] in _ARTICLES:
                    j += 1
            run = []  # the words after the question word, up to the next function word
            while j < len(words) and words[j] not in QUESTION_STOP_WORDS and not words[j].isdigit():
                run.append(words[j])
                j += 1
            if run:
                # before an auxiliary the run is the noun phrase, its last word the head ("which
                # kernel *version* does"); otherwise a verb may follow the noun ("which *river* flows
                # past"): the first
                head = run[-1] if j < len(words) and words[j] in _AUXILIARIES else run[0]
                kinds.add(term_key(head))
    if CJK_CHAR.search(question):
        cut = [w for w in _jieba_cut(question) if w.strip()]
        for i, w in enumerate(cut):
            if w in _CJK_ASKING_BEFORE and i + 1 < len(cut) and CJK_CHAR.match(cut[i + 1]):  # "什么 N"
                kinds.add(cut[i + 1])
            # "的 N 是 什么": the N of something; without the 的, the word before may be the subject itself
            if (w in _CJK_ASKING_AFTER and i >= 2 and cut[i - 2] == "的" and i + 1 < len(cut)
                    and cut[i + 1] in CJK_QUESTION_WORDS):
                kinds.add(cut[i - 1])
    return kinds


def kind_weights(question: str, terms: list[str], weights: np.ndarray) -> np.ndarray:
    """``weights`` (of :func:`question_terms`) with each kind-of-answer term at ANSWER_KIND_WEIGHT of its own."""
    kinds = answer_kinds(question)
    return np.array([w * (ANSWER_KIND_WEIGHT if t in kinds else 1.0) for t, w in zip(terms, weights)], np.float64)


def question_terms(question: str, idf_of) -> tuple[list[str], np.ndarray]:
    """The question's content terms and their idf weights. ``idf_of(tokens)`` gives the memory's idf of
    index tokens (``Memory.inverse_document_frequencies``); a CJK word weighs as its rarest bigram."""
    keys: dict[str, list[str]] = {}  # term -> the index tokens it weighs as
    latin = CJK_CHAR.sub(" ", without_request(question))
    before = ""
    for w in tokenize(latin):
        if w not in QUESTION_STOP_WORDS and not (before == "how" and w in HOW_DEGREES):
            keys.setdefault(term_key(w), []).append(w)
        before = w
    if CJK_CHAR.search(question):
        for w in _memory_words(*_cjk_words(question), idf_of):
            keys.setdefault(w, cjk_bigrams([w]))
    if not keys:
        return [], np.zeros(0)
    tokens = sorted({t for ts in keys.values() for t in ts})
    idf = dict(zip(tokens, idf_of(tokens)))
    terms = list(keys)
    return terms, np.array([max(idf[t] for t in keys[k]) for k in terms], np.float64)


@lru_cache(maxsize=1 << 14)
def _cjk_parts(word: str) -> tuple[tuple[int, int, str], ...]:
    """The dictionary words of two or more characters inside a CJK ``word`` (not the word itself), as
    (start, end, part): the pieces a compound is said in ("工资福利" as 工资 and 福利)."""
    known, n = jieba_tokenizer().FREQ, len(word)
    return tuple((i, j, word[i:j]) for i in range(n) for j in range(i + 2, n + 1)
                 if (i, j) != (0, n) and known.get(word[i:j]))


def _cjk_held(word: str, text: str) -> bool:
    """A CJK word is held by a text that contains it, or that contains each part of one cut of it into
    dictionary words: jieba keeps a compound whole in a question ("工资福利") that a unit states in
    its parts ("工资上调5%，福利不变"), and one substring test would call it missing."""
    if word in text:
        return True
    reached = [True] + [False] * len(word)
    for i, j, part in _cjk_parts(word):  # ordered by start: every way into i is known before i is left
        if reached[i] and not reached[j] and part in text:
            reached[j] = True
    return reached[-1]


def held(terms: list[str], text: str, word_senses: list[frozenset[int]] | None = None) -> np.ndarray:
    """Which of ``terms`` (``question_terms``) ``text`` holds: an English term by its key, or by a word
    that shares a WordNet sense with it (``word_senses``, each term's :func:`term_senses`, where given:
    "doctor" holds "physician"), two neighbouring English terms by the one word they make ("Wi-Fi"
    asked, "WiFi" written), a CJK word as a substring or in its parts (``_cjk_held``); and across the
    two languages (:func:`_held_across`)."""
    keys, asked = _unit_keys(text), tuple(terms)
    out = np.array([_cjk_held(t, text) if CJK_CHAR.match(t) else (t in keys) for t in terms], bool)
    for i, joined in _joined_keys(asked):  # "Wi-Fi" asked, "WiFi" written: two terms said as one word
        if joined in keys:
            out[i] = out[i + 1] = True
    if word_senses is not None and not out.all():
        theirs = _unit_senses(text)
        for i, mine in enumerate(word_senses):
            out[i] = out[i] or not mine.isdisjoint(theirs)
    if (across := _held_across(asked, text, keys)) is not None:
        out |= across
    return out


def _held_across(terms: tuple[str, ...], text: str, keys: frozenset[str]) -> np.ndarray | None:
    """Which of ``terms`` ``text`` says in the other language, by CC-CEDICT (``text.bilingual``): an
    English term where a Chinese word of a text written mostly in Chinese glosses as it ("borrow" in
    "可借10册"), a CJK term where the English words (``keys``) of a text written mostly in English gloss
    it ("日志" in "Logs are kept ..."); None where no term can be (a text of the question's language).
    A question in one language over units in the other holds nothing otherwise, and is refused though
    its unit answers it. Only the terms of the question's own language (the script most of its terms
    are in) are carried across, and only to a text of the other: a few words of the other language (a
    name, a title: "卡拉OK" in a Chinese question, an English name in parentheses in a Chinese unit) are
    names, and read as words they hold what no unit states."""
    chinese, english = _by_language(terms)
    language = written_in(text)
    if language == "latin" and len(chinese) >= len(english) and chinese:
        out = np.zeros(len(terms), bool)
        for i in chinese:
            out[i] = not english_keys(terms[i]).isdisjoint(keys)
        return out
    if language == "cjk" and len(english) >= len(chinese) and english:
        said = english_keys(text)
        out = np.zeros(len(terms), bool)
        for i in english:
            out[i] = terms[i] in said
        return out
    return None


@lru_cache(maxsize=1 << 10)
def _joined_keys(terms: tuple[str, ...]) -> tuple[tuple[int, str], ...]:
    """For each two neighbouring English terms, the first's place and the key of the two written as one
    word ("wi", "fi": "wifi"; "e", "mail": "email")."""
    return tuple((i, term_key(a + b)) for i, (a, b) in enumerate(zip(terms, terms[1:]))
                 if not CJK_CHAR.match(a) and not CJK_CHAR.match(b))


@lru_cache(maxsize=1 << 10)
def _by_language(terms: tuple[str, ...]) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """The places of ``terms``' CJK terms and of their English ones."""
    return (tuple(i for i, t in enumerate(terms) if CJK_CHAR.match(t)),
            tuple(i for i, t in enumerate(terms) if not CJK_CHAR.match(t)))


def alignment(terms: list[str], weights: np.ndarray, texts: list[str],
              masks: list[np.ndarray] | None = None) -> float:
    """The term alignment of the question's ``terms`` (``weights``) over ``texts``: the best share of their
    weight that one text holds (``masks``: each text's :func:`held`, where already at hand).

    A question without content terms is neither aligned nor not: 0.5."""
    if not terms or not texts or weights.sum() <= 0:
        return 0.5
    masks = [held(terms, t) for t in texts] if masks is None else masks
    return float(max(weights[m].sum() for m in masks) / weights.sum())


# Terms of the question a unit must hold to take part in a chain (chain_masks)
CHAIN_LEAST_HELD = 2


def chain_masks(masks: list[np.ndarray], links: dict[int, list[int]], longest: int,
                least: int = CHAIN_LEAST_HELD) -> list[np.ndarray]:
    """What each chain of linked texts holds together: for every path of two to ``longest`` texts along
    ``links`` (text index -> the texts it leads to), each holding at least ``least`` of the question's
    terms, the union of its texts' ``masks``.

    A question of two or more hops is stated by no one unit: its subject's unit names the bridge, and
    the unit about the bridge says the rest. Read along such a chain, its words are held as one unit
    would hold them; two units that merely share words are not a chain. A unit that holds one term is
    no hop: one that holds only the subject's name and names another thing does not say that what the
    other has is the subject's, and one that holds a single common word says nothing asked."""
    out: list[np.ndarray] = []
    usable = {i for i, m in enumerate(masks) if int(m.sum()) >= least}

    def walk(path: list[int], mask: np.ndarray) -> None:
        for j in links.get(path[-1], ()):
            if j in usable and j not in path:
                joined = mask | masks[j]
                out.append(joined)
                if len(path) + 1 < longest:
                    walk(path + [j], joined)
    for i in links:
        if i in usable:
            walk([i], masks[i])
    return out


def _content_word(word: str) -> str:
    return word if CJK_CHAR.match(word) else term_key(word)


def _content_sequence(text: str) -> list[str]:
    """``text``'s words as ``term_key`` gives them (CJK as bigrams), question words left out."""
    return [k for w in tokenize(text) if (k := _content_word(w)) not in QUESTION_STOP_WORDS
            and w not in QUESTION_STOP_WORDS and k not in CJK_QUESTION_WORDS]


def subject_phrases(terms: list[str], weights: np.ndarray, question: str, texts: list[str]) -> float:
    """Whether a unit that names the question's subject also says what the question asks about it.

    The subject is the question's rarest term (the largest idf); the asked-about phrases are the pairs
    of neighbouring content words of the question. Among ``texts`` that hold the subject, the best
    share of those pairs that the text states as neighbours too; 0 when no text holds the subject,
    0.5 when the question has no pair."""
    words = _content_sequence(without_request(question))
    asked = set(zip(words, words[1:]))
    if not asked or not terms or not texts:
        return 0.5
    subject = terms[int(np.argmax(weights))]
    best = 0.0
    for text in texts:
        if not held([subject], text)[0]:
            continue
        seq = _content_sequence(text)
        best = max(best, len(asked & set(zip(seq, seq[1:]))) / len(asked))
    return best

