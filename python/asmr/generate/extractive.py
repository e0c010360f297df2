"""The extractive generator: answers with the allowed units' own sentences, each cited.

No model writes anything, so nothing can be invented: every sentence of the
answer is a sentence of a source, followed by that source's marker. Sentences
are ranked by cosine to the question (the memory's embedder; where the model
does not read the script of the question or of the sentence, the share of the
question's words the sentence holds stands in for the cosine) plus the share
of the question's content words they contain (a chat turn's sentence without
the turn's head, against the question without its speakers' names; a source's
``context`` read before its sentences); the best one is always taken, then what
the question needs beyond it (below), then the next ones while they score near
the best and room is left. A sentence that opens with a pronoun ("It
is owned by …") is quoted with the sentence before it, which names what it is
about. A question in two parts ("Which team owns X, and who
leads that team?") gets the best sentence for each part, and for a later part
a sentence that shares a name with the earlier parts' answer (one the
question does not give) is preferred: that name is the bridge between them.
A question in one part reads on from what was quoted (``follow_links``), into sources not yet
quoted: a name the question gives that no quoted sentence or its source's opening names gets the
best sentence of a source that does (both sides of "Which came first, A or B?"); then a name the
quoted sentences bring in, which the question does not give, leads to a source whose opening names
it, and to its best sentence for what the quoted ones leave unsaid (the second hop of "the
publisher of her first novel is based where?": the publisher's own unit says where). A bridge that
is no name but a thing named by two words ("call the *safety officer*"), where the quoted sentences
bring in no name, leads to the best sentence of another source that names it too and states a word of
the question still unsaid (the row that gives the safety officer's extension). A table row of another
source whose first cell a quoted sentence names ("经副馆长批准": the contacts table's 副馆长 row, with
the name and the extension) is quoted after it, while room is left (``text.tables``).
A sentence already quoted, or one within a quoted sentence (a list item and its list), is not
quoted again. Questions (an FAQ's headings) and whole tables (their rows are units of their
own) are never quoted. To a question that asks when, a quoted sentence with relative time states
the date it means in words (``text.when.with_dates``): from the absolute form ingest wrote after it
("yesterday (2023-05-07, 7 May 2023)"), or, in a chat turn, resolved against the turn's own stamp
("Today (8 May 2023) I moved"), which the unit holds, so the verifier finds the date in it.
Deterministic.
"""
from __future__ import annotations

import re
import time
from datetime import date
from functools import lru_cache
from typing import Sequence

import numpy as np

from asmr.decoding.markers import CITE, Marker, cite, join_sentences
from asmr.embed.cache import shared_cache
from asmr.embed.models import embedder_scripts, question_vectors
from asmr.text.entities import mentions, normalize
from asmr.text import bilingual
from asmr.text.scripts import readable_share, written_in
from asmr.text.sentences import split_sentences
from asmr.text.tables import keys_named, longest_keys, names_key, table_row_key
from asmr.text.turns import named_speakers, parse_turn, speaker_key, without_heads, without_names
from asmr.text.when import asks_when, with_dates
from asmr.text.words import (CLAIM_STOP_WORDS, PRONOUNS, content_pairs, content_words, dictionary_word,
                             light_stem, term_key)

from .base import Generation, Source, check_sources

# a sentence opening with one of these is about what the sentence before it names
_ANAPHORA = PRONOUNS | {"this", "these"}
# ", and who leads that team?": a second question joined to the first
_PARTS = re.compile(r",\s+and\s+(?=(?:who|whom|whose|what|which|when|where|why|how)\b)", re.IGNORECASE)


def quotable_sentences(text: str) -> list[str]:
    """``split_sentences``, with a sentence that opens with a pronoun joined to the one before it."""
    out: list[str] = []
    for s in split_sentences(text):
        first = s.split(maxsplit=1)[0].lower() if s.strip() else ""
        if out and first in _ANAPHORA:
            out[-1] = f"{out[-1]} {s}"
        else:
            out.append(s)
    return out


def question_parts(question: str) -> list[str]:
    """The parts of a question that asks two things ("Which team owns X, and who leads it?")."""
    parts = [p.strip(" ,?") for p in _PARTS.split(question)]
    parts = [p for p in parts if p]
    return parts if len(parts) > 1 else [question]


def _said(sentence: str) -> str:
    """What a sentence says, for comparing: lower case, spacing, list bullets and end punctuation gone."""
    return " ".join(re.sub(r"(^|\s)[-*+•]\s", " ", sentence.lower()).split()).strip(" .;:!?。；")


def _repeats(sentence: str, chosen: list[tuple[int, str]]) -> bool:
    """Whether ``sentence`` says again what a chosen one says: the same text, or text within it (a
    list item is also a sentence of the list it belongs to, and both units may be recalled)."""
    said = _said(sentence)
    return any(said in other or other in said for other in (_said(s) for _, s in chosen))


def _normal(text: str) -> str:
    return f" {normalize(text)} "


def _same_name(a: str, b: str) -> bool:
    """Whether two name keys name one thing: equal, or one the other's whole words ("humperdinck" in
    "engelbert humperdinck"), the shorter at least four letters."""
    short, long_ = sorted((a, b), key=len)
    return short == long_ or (len(short) >= 4 and f" {short} " in f" {long_} ")


def _particular(name: str) -> bool:
    """Whether a name key names some particular thing: not one dictionary word, capitalised as a
    table's column ("Value") or a question's first word ("Within ...")."""
    return " " in name or not dictionary_word(name)


def _names_in(question: str) -> set[str]:
    """The particular names a question gives, a name within a longer one left out."""
    found = {n for n in mentions(question) if _particular(n)}
    return {n for n in found if not any(n != m and f" {n} " in f" {m} " for m in found)}


_SUBJECT_WORDS = 6  # what a text is about stands at its start: "P is a publisher ...", "[date] Ana: ..."


def _lead_names(source: Source) -> set[str]:
    """The names a source is about: those its first words and its section give (not a name further on,
    "... open a SEV-2 incident", nor a table's column, "...; Value: 90 minutes")."""
    opening = " ".join(source.text.split()[:_SUBJECT_WORDS])
    return mentions(opening) | (mentions(source.section) if source.section else set())


@lru_cache(maxsize=1 << 12)
def _english_keys(text: str) -> frozenset[str]:
    """The keys (``text.words.term_key``) of ``text``'s English words (a question's, once for all its
    candidate sentences)."""
    return frozenset(term_key(w) for w in content_words(text) if w.isascii() and w.isalpha())


def _across(question: str, sentence: str, written: str | None) -> float:
    """The share of ``question``'s words that ``sentence``, written in the other language (``written``),
    says (``text.bilingual``): an English question's keys among what a Chinese sentence's words gloss
    as, a Chinese question's words whose glosses an English sentence holds; 0 for a sentence of the
    question's own language, whose words it shares or not."""
    asked = written_in(question)
    if asked == "latin" and written == "cjk":
        english = _english_keys(question)
        return len(english & bilingual.english_keys(sentence)) / len(english) if english else 0.0
    if asked == "cjk" and written == "latin":
        words = bilingual.word_keys(question)
        said = _english_keys(sentence)
        return sum(not keys.isdisjoint(said) for keys in words) / len(words) if words else 0.0
    return 0.0


def _stems(text: str) -> set[str]:
    """The content words of ``text`` as light stems: "requested" states what "request" does."""
    return {light_stem(w) for w in content_words(text) - CLAIM_STOP_WORDS}


def _unsaid(question: str, chosen: list[tuple[int, str]]) -> set[str]:
    """The question's words (``_stems``) that no quoted sentence states: what it still asks."""
    return _stems(question) - set().union(*(_stems(s) for _, s in chosen))


def _dated(sentence: str, unit_text: str) -> str:
    """``sentence`` (of ``unit_text``) with the dates its relative time means in words; a chat turn's
    unresolved ones ("today") against its stamp."""
    turn = parse_turn(unit_text)
    reference = date.fromisoformat(turn.stamp[:10]) if turn is not None else None
    return with_dates(sentence, reference)


class ExtractiveGenerator:
    name = "extractive"

    def __init__(self, embedder=None, *, max_sentences: int = 3, min_score: float = 0.25,
                 relative_score: float = 0.8, lexical_weight: float = 0.5, bridge_weight: float = 0.5,
                 follow_links: bool = True) -> None:
        if max_sentences < 1:
            raise ValueError(f"max_sentences must be at least 1, got {max_sentences}")
        if embedder is None:
            from asmr.embed.models import get_embedder
            embedder = get_embedder()
        self.embedder = embedder
        self.max_sentences = max_sentences
        self.min_score = min_score
        self.relative_score = relative_score
        self.lexical_weight = lexical_weight
        self.bridge_weight = bridge_weight
        self.follow_links = follow_links

    def _ranked(self, question: str, sources: Sequence[Source], parts: Sequence[str] = ()
                ) -> list[list[tuple[float, int, str]]]:
        """Candidates ranked for the question and then for each of ``parts``."""
        cands = [(i, s) for i, src in enumerate(sources) for s in quotable_sentences(src.text)]
        queries = [question, *parts]
        if not cands:
            return [[] for _ in queries]
        # A sentence is ranked by what it says, with what it stands for (Source.context) before it. A
        # chat turn's head ("[date] Speaker:") is no content, and among turns the speakers' names in
        # the question match every turn of theirs alike: turns are ranked for the question without them.
        speakers = {speaker_key(src.text) for src in sources} - {None}
        turn = [speaker_key(sources[i].text) is not None for i, _ in cands]
        read = [(without_heads if t else str)(f"{sources[i].context} {s}".strip())
                for (i, s), t in zip(cands, turn)]
        names = named_speakers(question, speakers) if speakers else []
        plain = [without_names(q, names) for q in queries] if names else queries
        query_vecs = question_vectors(self.embedder, [*queries, *plain] if names else queries)
        sentence_vecs = shared_cache(self.embedder).embed(self.embedder, read)  # units' sentences recur
        scripts = embedder_scripts(self.embedder)
        shares = [readable_share(r, scripts) for r in read]
        written = [written_in(r) for r in read]
        out = []
        for qi, query in enumerate(queries):
            cos = np.asarray(sentence_vecs @ query_vecs[qi], dtype=np.float64)
            cos_plain = np.asarray(sentence_vecs @ query_vecs[len(queries) + qi], dtype=np.float64) \
                if names else cos
            q_words = content_words(query)
            q_plain = q_words - {w for n in names for w in content_words(n)}
            read_query = readable_share(query, scripts)
            ranked = []
            for (i, s), r, t, c, cp, share, w in zip(cands, read, turn, cos, cos_plain, shares, written):
                words = q_plain if t else q_words
                c = cp if t else c
                overlap = len(words & content_words(r)) / len(words) if words else 0.0
                overlap = max(overlap, _across(query, r, w))  # the question's words in the other language
                # The cosine counts as far as the model reads both texts; for the rest the words they
                # share stand in for it (an English model's cosine of two Chinese texts is noise).
                share = min(read_query, share)
                c = share * c + (1.0 - share) * overlap
                ranked.append((float(c) + self.lexical_weight * overlap, i, s))
            # ties go to the better-ranked source, then to the earlier sentence: deterministic
            out.append(sorted(ranked, key=lambda r: -r[0]))
        return out

    def generate(self, question: str, sources: Sequence[Source], *, redundancy: str = "",
                 marker: Marker = CITE, require_citation: bool = True) -> Generation:
        t0 = time.perf_counter()
        sources = check_sources(sources)
        parts = question_parts(question)
        ranked, *by_part = self._ranked(question, sources, parts if len(parts) > 1 else ())
        chosen: list[tuple[int, str]] = []
        if by_part:
            given = mentions(question)
            for part_ranked in by_part:
                if len(chosen) == self.max_sentences:
                    break
                # names the answer so far brings in (not the question's): the bridge to this part
                bridge = set().union(*(mentions(s) for _, s in chosen)) - given
                best = max(((score + (self.bridge_weight if bridge & mentions(s) else 0.0), -k, i, s)
                            for k, (score, i, s) in enumerate(part_ranked) if not _repeats(s, chosen)),
                           default=None)
                if best is not None and (not chosen or best[0] >= self.min_score):
                    chosen.append((best[2], best[3]))
        else:
            # After the best sentence, only near-equals join it: a second fact, not filler. What the
            # question needs beyond the best sentence (another thing it names, the next hop) goes first.
            near = [(i, s) for score, i, s in ranked[1:]
                    if score >= self.min_score and score >= self.relative_score * ranked[0][0]]
            chosen = [(ranked[0][1], ranked[0][2])] if ranked else []
            if chosen and self.follow_links:
                self._follow(question, sources, ranked, chosen)
                self._follow_rows(question, sources, ranked, chosen)
            for i, s in near:
                if len(chosen) == self.max_sentences:
                    break
                if not _repeats(s, chosen):
                    chosen.append((i, s))
        if asks_when(question):
            chosen = [(i, _dated(s, sources[i].text)) for i, s in chosen]
        text = join_sentences(cite(s, sources[i].id, marker) for i, s in chosen)
        return Generation(text, self.name, time.perf_counter() - t0,
                          info={"candidates": len(ranked), "sentences": len(chosen), "parts": len(parts)})

    def _follow(self, question: str, sources: Sequence[Source], ranked: list[tuple[float, int, str]],
                chosen: list[tuple[int, str]]) -> None:
        """Adds to ``chosen`` what the question needs beyond it, from sources not yet quoted: for each
        name the question gives that no quoted sentence (or its source's opening) names, the best
        sentence of a source that does ("Who is older, A or B?" quotes A's and B's); then the best
        sentence of a source about a name the quoted sentences bring in and the question does not
        give (the bridge of a two-hop question: "her novel was published by P" leads to P's own
        unit). Each must reach ``min_score``."""
        leads = [_lead_names(src) for src in sources]
        given = _names_in(question)
        said = lambda: set().union(*(mentions(s) | leads[i] for i, s in chosen))  # noqa: E731
        for name in sorted(given, key=len, reverse=True):
            if len(chosen) == self.max_sentences:
                return
            if any(_same_name(name, n) for n in said()):
                continue
            self._add_best(ranked, chosen, lambda i, s: any(_same_name(name, n) for n in leads[i] | mentions(s)))
        if len(chosen) < self.max_sentences:
            bridge = {n for _, s in chosen for n in mentions(s) if _particular(n)
                      and not any(_same_name(n, g) for g in given) and _normal(n) not in _normal(question)}
            # ranked for what the quoted sentences leave unsaid: "in what year was X born", once "X"
            # is quoted, asks for a birth year, not for X again
            asked = content_words(question)
            unsaid = asked - set().union(*(content_words(s) for _, s in chosen))
            linked = {i for i, lead in enumerate(leads) if any(_same_name(b, n) for b in bridge for n in lead)}
            if linked - {i for i, _ in chosen}:
                def rescored(score: float, s: str) -> float:
                    words = content_words(s)
                    share = lambda q: len(q & words) / len(q) if q else 0.0  # noqa: E731
                    return score + self.lexical_weight * (share(unsaid) - share(asked))
                reranked = sorted(((rescored(score, s), i, s) for score, i, s in ranked if i in linked),
                                  key=lambda r: -r[0])
                self._add_best(reranked, chosen, lambda i, s: True)
            if not bridge and len(chosen) < self.max_sentences:
                self._follow_compounds(question, ranked, chosen)

    def _follow_compounds(self, question: str, ranked: list[tuple[float, int, str]],
                          chosen: list[tuple[int, str]]) -> None:
        """The second hop of a question whose bridge is no name but a thing named by a compound ("call the
        *safety officer*" leads to the row that gives the safety officer's extension): the best sentence
        of a source not yet quoted that names a compound the quoted sentences bring in (one the question
        does not give) and states a word of the question they leave unsaid. Only where the quoted
        sentences bring in no name: a name is the bridge then, and a passage about a named thing shares
        compounds ("film festival") with many that are not about it."""
        unsaid = _unsaid(question, chosen)
        bridge = set().union(*(content_pairs(s) for _, s in chosen)) - content_pairs(question)
        if not unsaid or not bridge:
            return
        quoted = {i for i, _ in chosen}
        linked = []
        for score, i, s in ranked:
            words = _stems(s)
            if i not in quoted and words & unsaid and content_pairs(s) & bridge:
                linked.append((score + self.lexical_weight * len(unsaid & words) / len(unsaid), i, s))
        self._add_best(sorted(linked, key=lambda r: -r[0]), chosen, lambda i, s: True)

    def _follow_rows(self, question: str, sources: Sequence[Source], ranked: list[tuple[float, int, str]],
                     chosen: list[tuple[int, str]]) -> None:
        """The table rows of other sources that the quoted sentences name by their first cell ("hand the
        form to the events officer", 交活动专员审核: the contacts table's row of that role gives the name
        and extension the question asks for), while room is left; not a row whose key the question
        names (it was ranked as the question's own words found it).

        Where the quoted sentences name no row, another sentence of a quoted source may ("A request for
        a copy of a record is a subject access request. Pass it to the data protection officer."): that
        sentence and the row it names join, if the row states a word of the question that the quoted
        sentences leave unsaid (the extension asked for) and both fit."""
        rows: dict[str, list[int]] = {}
        for i, src in enumerate(sources):
            if key := table_row_key(src.text):
                rows.setdefault(key, []).append(i)
        if not rows or len(chosen) >= self.max_sentences:
            return
        most_words, most_chars = longest_keys(rows)
        asked = f" {normalize(question)} "
        best = {}
        for _, i, s in ranked:
            best.setdefault(i, s)
        quoted = {i for i, _ in chosen}

        def named(s: str) -> list[str]:
            return [k for k in sorted(keys_named(s, rows, most_words, most_chars)) if not names_key(asked, k)]
        followed = False
        for _, s in list(chosen):
            for key in named(s):
                for i in rows[key]:
                    if len(chosen) < self.max_sentences and i not in quoted and i in best:
                        chosen.append((i, best[i]))
                        quoted.add(i)
                        followed = True
        if followed or len(chosen) + 2 > self.max_sentences:
            return
        unsaid = _unsaid(question, chosen)
        for _, i, s in ranked:
            if i not in quoted or (i, s) in chosen or _repeats(s, chosen):
                continue
            for key in named(s):
                for r in rows[key]:
                    if r not in quoted and r in best and unsaid & _stems(sources[r].text):
                        chosen += [(i, s), (r, best[r])]
                        return

    def _add_best(self, ranked, chosen: list[tuple[int, str]], linked) -> None:
        """Appends the best-ranked sentence of a source not yet quoted for which ``linked(i, s)``."""
        quoted = {i for i, _ in chosen}
        for score, i, s in ranked:
            if score < self.min_score:
                return
            if i not in quoted and linked(i, s) and not _repeats(s, chosen):
                chosen.append((i, s))
                return

    def rewrite(self, sentence: str, unit_text: str) -> str:
        """The unit's own sentence closest to ``sentence`` (the verifier puts the marker back)."""
        ranked = self._ranked(sentence, [Source("unit", unit_text)])[0]
        return ranked[0][2] if ranked else ""

    def paraphrase(self, text: str) -> None:
        """None: this generator writes nothing of its own."""
        return None
