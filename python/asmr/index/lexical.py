"""Lexical search: BM25 (Lucene variant) over unit texts, built and saved with ``bm25s`` and read back
without it (``_StoredScores``); the native ``Postings`` kernel ranks.

Words are ``asmr.text.words.tokenize``: lower-cased letter/digit runs; Chinese, Japanese and Korean runs have
no spaces between words, so they become overlapping character bigrams (a lone
character stays a unigram), which is how Lucene's CJK analyzer treats them, with
Traditional Han characters folded to Simplified (``asmr.text.cjk.fold_han``) in the
units and in the query, so that either script finds the other. The characters of those
runs are stored too, apart from the words (``_CHARACTER``): a query reads one only where the
index holds none of its bigrams in the query (``text.words.lone_characters``: "一袋面粉最重"
finds "单袋重量" by 袋 and 重), and they never count in a unit's length, so a query of words
alone scores every unit as it did before characters were stored. ``analysis.json`` says how
an index's words were made; one written before a step of it is searched as it was built
(before folding, unfolded: words a caller folded may then miss its Traditional text; before
characters, by words alone) until the next ingest rebuilds it.
The index is built with NumPy in a few array passes instead of bm25s's per-document
loop (about 6x faster at a million units); the scores it stores are the ones
``bm25s.BM25(method="lucene").index`` computes, which a test checks, except that in a memory of
Chinese and other text a unit's length is compared with the average of its own writing system
(``_reference_lengths``).
"""
from __future__ import annotations

import json
import os
from array import array
from collections import defaultdict
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Iterable

import numpy as np

from asmr_kernels import Postings

from ..text.cjk import CJK_CHAR, fold_han
from ..text.words import ASCII_TOKEN_TABLE, lone_characters, run_characters, token_bytes, tokenize

if TYPE_CHECKING:
    import bm25s

_ROWS_FILE = "rows.npy"
# How the index's words were made, beside bm25s's files: {"fold_han": true} since Han folding,
# "cjk_characters": true since the characters of CJK runs are stored too.
_ANALYSIS_FILE = "analysis.json"
# Prefix of a stored character of a CJK run: a token apart from the word of the same character (a
# lone character between punctuation), and one that no unit's length counts.
_CHARACTER = "\x02"


def bm25_scores(query: list[str], texts: list[list[str]], k1: float = 1.2, b: float = 0.75) -> np.ndarray:
    """BM25 of each of ``texts`` (as words) for the ``query`` words, with document frequencies counted
    over ``texts`` alone: words that all of them share weigh little. For ranking a few texts that are
    in no index (the units of a document that recall bridges to); ``LexicalIndex`` searches the memory."""
    scores = np.zeros(len(texts))
    query = set(query)
    if not query or not texts:
        return scores
    df: dict[str, int] = {}
    for words in texts:
        for w in query.intersection(words):
            df[w] = df.get(w, 0) + 1
    if not df:
        return scores
    n = len(texts)
    avg = sum(map(len, texts)) / n or 1.0
    idf = {w: np.log1p((n - d + 0.5) / (d + 0.5)) for w, d in df.items()}
    for i, words in enumerate(texts):
        norm = k1 * (1 - b + b * len(words) / avg)
        for w in query.intersection(words):
            tf = words.count(w)
            scores[i] += idf[w] * tf * (k1 + 1) / (tf + norm)
    return scores


# Texts tokenized together are joined by this byte, which the table keeps as a token of its
# own: the break between two units (id 0 in every Tokens vocabulary, never a word).
_UNIT_BREAK = b"\x01"
_BATCH_TABLE = ASCII_TOKEN_TABLE[:1] + _UNIT_BREAK + ASCII_TOKEN_TABLE[2:]


class Tokens:
    """Token ids of unit texts, unit by unit, with the vocabulary that numbers them.

    What ``LexicalIndex.from_tokens`` indexes. Texts can be tokenized as they arrive
    (an ingest does it while it chunks) and stretches joined later in another order
    with ``join``, as long as they share one vocabulary: BM25 scores do not depend on
    how tokens are numbered.
    """

    __slots__ = ("vocab", "rows", "lengths", "flat", "_token_id")

    def __init__(self, vocab: "defaultdict[bytes, int] | None" = None):
        if vocab is None:
            vocab = defaultdict()
            vocab.default_factory = vocab.__len__  # a new token gets the next id
            vocab[_UNIT_BREAK]  # id 0
        self.vocab = vocab
        self._token_id = vocab.__getitem__
        # Token ids and lengths in 32 bits: a million units hold some 20 million tokens.
        self.rows, self.lengths, self.flat = array("q"), array("i"), array("i")

    def __len__(self) -> int:
        return len(self.rows)

    def __reduce__(self):  # the vocabulary's default factory is one of its own methods: rebuilt on load
        return _tokens, (dict(self.vocab), self.rows, self.lengths, self.flat)

    def add(self, row: int, text: str) -> None:
        toks = token_bytes(text)
        if not text.isascii() and (chars := run_characters(text)):
            # each character with its prefix, encoded in one pass (no CJK character is a line break)
            toks += (_CHARACTER + ("\n" + _CHARACTER).join(chars)).encode().split(b"\n")
        self.rows.append(row)
        self.lengths.append(len(toks))
        self.flat.extend(map(self._token_id, toks))

    def add_many(self, rows: list[int], texts: list[str]) -> None:
        """``add`` for each pair, ASCII texts in a few passes over all of them at once."""
        joined = " \x01 ".join(texts)
        if not texts or not joined.isascii() or joined.count("\x01") != len(texts) - 1:
            for row, text in zip(rows, texts):
                self.add(row, text)
            return
        toks = joined.encode().translate(_BATCH_TABLE).split()
        ids = np.fromiter(map(self._token_id, toks), np.int32, len(toks))
        breaks = np.flatnonzero(ids == 0)  # one between each two units
        ends = np.append(breaks, len(ids))
        starts = np.concatenate(([0], breaks + 1))
        self.rows.extend(rows)
        self.lengths.frombytes((ends - starts).astype(np.int32).tobytes())
        self.flat.frombytes(ids[ids != 0].tobytes())

    def join(self, *others: "Tokens") -> "Tokens":
        """A Tokens holding this one's units, then each of ``others``' (all on this vocabulary)."""
        out = Tokens(self.vocab)
        for part in (self, *others):
            if part.vocab is not self.vocab:
                raise ValueError("Tokens.join: the parts must share one vocabulary")
            out.rows.extend(part.rows)
            out.lengths.extend(part.lengths)
            out.flat.extend(part.flat)
        return out


def _tokens(vocab: dict[bytes, int], rows: array, lengths: array, flat: array) -> Tokens:
    out = Tokens()
    out.vocab.clear()
    out.vocab.update(vocab)
    out.rows, out.lengths, out.flat = rows, lengths, flat
    return out


def _index_flat(bm25: bm25s.BM25, doc_ptr: np.ndarray, token_ids: np.ndarray, vocab: dict[str, int]) -> None:
    """Fill the empty bm25s index ``bm25`` from a flat token-id array, in NumPy."""
    n_docs, n_vocab = len(doc_ptr) - 1, len(vocab) + 1  # +1: bm25s's empty token
    # a unit's length counts its words, not the characters stored beside them (_CHARACTER)
    is_character = np.zeros(n_vocab, bool)
    is_character[[i for token, i in vocab.items() if token.startswith(_CHARACTER)]] = True
    doc_len = (np.diff(doc_ptr) - _per_document(is_character, token_ids, doc_ptr)).astype(np.float64)
    ref_len = _reference_lengths(doc_ptr, token_ids, vocab, doc_len)
    # Tokens grouped by id, documents ascending inside a group (a stable sort of the ids, a radix
    # sort on 16-bit keys): runs of one (token, document) are its term frequency, and the pairs
    # come out in CSC order. Temporaries go as soon as they are used, and the scores are computed
    # in slices: a million units hold some 20 million tokens.
    order = _stable_argsort(token_ids, n_vocab)
    tok = token_ids[order]
    doc_of = np.arange(n_docs, dtype=np.int32 if n_docs < 2**31 else np.int64)
    doc = np.repeat(doc_of, np.diff(doc_ptr))[order]
    del order
    first = np.empty(len(tok), dtype=bool)
    first[:1] = True
    np.not_equal(tok[1:], tok[:-1], out=first[1:])
    first[1:] |= doc[1:] != doc[:-1]
    starts = np.flatnonzero(first)
    del first
    pair_tok, pair_doc = tok[starts], doc[starts]
    tf = np.diff(starts, append=len(tok))
    del tok, doc, starts
    df = np.bincount(pair_tok, minlength=n_vocab)
    idf = np.log1p((n_docs - df + 0.5) / (df + 0.5))
    data = np.empty(len(tf), dtype=bm25.dtype)
    for i in range(0, len(tf), 1 << 22):
        part = slice(i, i + (1 << 22))
        f = tf[part].astype(np.float64)
        docs = pair_doc[part]
        norm = bm25.k1 * ((1 - bm25.b) + bm25.b * doc_len[docs] / ref_len[docs])
        data[part] = idf[pair_tok[part]] * (f / (norm + f))
    indptr = np.zeros(n_vocab + 1, dtype=np.int64)
    np.cumsum(df, out=indptr[1:])
    bm25.scores = {"data": data, "indices": pair_doc.astype(bm25.int_dtype, copy=False),
                   "indptr": indptr, "num_docs": n_docs}
    bm25.vocab_dict = dict(vocab)
    bm25.vocab_dict[""] = len(vocab)
    bm25.unique_token_ids_set = set(bm25.vocab_dict.values())
    bm25.nonoccurrence_array = None


def _reference_lengths(doc_ptr: np.ndarray, token_ids: np.ndarray, vocab: dict[str, int],
                       doc_len: np.ndarray) -> np.ndarray:
    """Per document, the length BM25 compares its own with: the average length of the memory's
    documents in the same writing system.

    A Chinese paragraph is several hundred character bigrams where an English one of the same
    content is a hundred words, so one average over a mixed memory would judge every English
    unit short and every Chinese one long. Documents that are mostly CJK tokens average apart
    from the others; a document of both scripts gets the two averages in its own proportion.
    A memory of one writing system gets its plain average, as Lucene computes it.
    """
    n_docs = len(doc_len)
    overall = float(doc_len.mean()) if n_docs and doc_len.sum() > 0 else 1.0
    is_cjk = np.zeros(len(vocab) + 1, bool)  # +1: bm25s's empty token
    is_cjk[[i for token, i in vocab.items() if not token.isascii() and CJK_CHAR.match(token)]] = True
    if n_docs == 0 or not is_cjk.any():
        return np.full(n_docs, overall)
    cjk_tokens = _per_document(is_cjk, token_ids, doc_ptr)
    share = np.divide(cjk_tokens, doc_len, out=np.zeros(n_docs), where=doc_len > 0)
    mostly = share > 0.5
    if not mostly.any() or not (~mostly & (doc_len > 0)).any():
        return np.full(n_docs, overall)  # one writing system (empty documents count in its average)
    return share * float(doc_len[mostly].mean()) + (1 - share) * float(doc_len[~mostly].mean())


def _per_document(mask: np.ndarray, token_ids: np.ndarray, doc_ptr: np.ndarray) -> np.ndarray:
    """Per document, how many of its tokens ``mask`` (by token id) selects."""
    running = np.zeros(len(token_ids) + 1, np.int64)
    np.cumsum(mask[token_ids], out=running[1:])
    return running[doc_ptr[1:]] - running[doc_ptr[:-1]]


def _stable_argsort(keys: np.ndarray, bound: int) -> np.ndarray:
    """``np.argsort(keys, kind="stable")`` for integers in [0, bound): NumPy radix-sorts 16-bit keys,
    so wider keys go in two 16-bit passes (least significant first)."""
    if bound <= 1 << 16:
        return np.argsort(keys.astype(np.uint16), kind="stable")
    if bound > 1 << 32:
        return np.argsort(keys, kind="stable")
    low = np.argsort((keys & 0xFFFF).astype(np.uint16), kind="stable")
    return low[np.argsort((keys[low] >> 16).astype(np.uint16), kind="stable")]


class _StoredScores:
    """An index that bm25s saved, read as ``bm25s.BM25.load`` reads what search needs of it (the
    vocabulary, the score matrix's three arrays; a test compares the two) without importing bm25s:
    its import brings SciPy (and numba where installed), 0.1 s of every command that searches on a
    2-core Xeon, 0.3 s with numba (bench/start.py)."""

    def __init__(self, directory: Path, *, mmap: bool):
        self.vocab_dict: dict[str, int] = json.loads((directory / "vocab.index.json").read_text(encoding="utf-8"))
        self.scores = {part: np.load(directory / f"{part}.csc.index.npy", mmap_mode="r" if mmap else None)
                       for part in ("data", "indices", "indptr")}

    def get_tokens_ids(self, tokens: list[str]) -> list[int]:
        """The ids of ``tokens``, leaving out those not in the vocabulary (as bm25s does)."""
        return [self.vocab_dict[t] for t in tokens if t in self.vocab_dict]


class LexicalIndex:
    """BM25 over a set of unit rows; ``search`` answers in unit rows."""

    def __init__(self, bm25: bm25s.BM25 | _StoredScores, rows: np.ndarray, *, folds_han: bool = True,
                 cjk_characters: bool = True):
        self._bm25 = bm25
        self.rows = rows
        # Tokens fold and store characters; only an index loaded from before either step does not
        self.folds_han = folds_han
        self.cjk_characters = cjk_characters

    @classmethod
    def build(cls, rows_and_texts: Iterable[tuple[int, str]]) -> "LexicalIndex":
        """Index (unit row, text) pairs, streamed: only token ids are kept."""
        tokens = Tokens()
        for row, text in rows_and_texts:
            tokens.add(row, text)
        return cls.from_tokens(tokens)

    @classmethod
    def from_tokens(cls, tokens: "Tokens") -> "LexicalIndex":
        """Index what ``tokens`` holds, in the order it was added."""
        doc_ptr = np.zeros(len(tokens.lengths) + 1, dtype=np.int64)
        np.cumsum(np.frombuffer(tokens.lengths, np.int32), out=doc_ptr[1:])
        import bm25s  # for building and saving only (see _StoredScores)

        bm25 = bm25s.BM25(method="lucene")
        # Id 0 is the unit break, in the vocabulary but never among the tokens: words are numbered from 1.
        _index_flat(bm25, doc_ptr, np.frombuffer(tokens.flat, np.int32) - 1,
                    {t.decode(): i - 1 for t, i in tokens.vocab.items() if i})
        return cls(bm25, np.frombuffer(tokens.rows, np.int64).copy())

    @property
    def size(self) -> int:
        return len(self.rows)

    def save(self, directory: str | os.PathLike) -> None:
        directory = Path(directory)
        directory.mkdir(parents=True, exist_ok=True)
        self._bm25.save(str(directory), show_progress=False)
        np.save(directory / _ROWS_FILE, self.rows)
        (directory / _ANALYSIS_FILE).write_text(
            json.dumps({"fold_han": self.folds_han, "cjk_characters": self.cjk_characters}), encoding="utf-8")
        _fsync_tree(directory)

    @classmethod
    def load(cls, directory: str | os.PathLike, *, mmap: bool = True) -> "LexicalIndex":
        directory = Path(directory)
        bm25 = _StoredScores(directory, mmap=mmap)
        rows = np.load(directory / _ROWS_FILE, mmap_mode="r" if mmap else None)
        analysis = directory / _ANALYSIS_FILE
        made = json.loads(analysis.read_text(encoding="utf-8")) if analysis.is_file() else {}
        return cls(bm25, rows, folds_han=bool(made.get("fold_han")),
                   cjk_characters=bool(made.get("cjk_characters")))

    def _fold(self, words: list[str]) -> list[str]:
        """Words as the index's units were tokenized (``tokenize`` folds; a caller's words may not)."""
        return [fold_han(w) for w in words] if self.folds_han else words

    def search(self, query: str, k: int, *, active: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
        """Top-k unit rows for ``query`` with their BM25 scores, best first; rows with a zero score are left out.

        ``active`` (bool per unit row) excludes rows that stopped being active after the index was built.
        """
        if self.size == 0:
            return np.zeros(0, np.int64), np.zeros(0, np.float32)
        ids = self._bm25.get_tokens_ids(self._query_words(query))
        # the native kernel adds the query tokens' postings (bm25s's numpy scorer walks every
        # posting with np.add.at, most of a search's time when common words have long lists)
        units, scores = self._postings.top_k(ids, k, active=active)
        return np.asarray(self.rows[units], np.int64), scores

    def _query_words(self, query: str) -> list[str]:
        """The query's words, and the characters it reads alone (``lone_characters``: the index holds
        neither of their bigrams) in their stored form; an index from before characters has none."""
        words = tokenize(query, fold=self.folds_han)
        if self.cjk_characters and not query.isascii():
            held = self._bm25.vocab_dict.__contains__
            words += [_CHARACTER + c for c in lone_characters(query, held, fold=self.folds_han)]
        return words

    def inverse_document_frequencies(self, words: list[str]) -> np.ndarray:
        """BM25's idf of each of ``words`` (tokens as ``tokenize`` gives) over the indexed units; a word
        in no unit gets the largest idf there is (that of a word in none)."""
        vocab, indptr = self._bm25.vocab_dict, self._bm25.scores["indptr"]
        words = self._fold(words)
        df = np.array([indptr[vocab[w] + 1] - indptr[vocab[w]] if w in vocab else 0 for w in words], np.float64)
        return np.log1p((self.size - df + 0.5) / (df + 0.5))

    def rows_with_all(self, words: list[str]) -> np.ndarray:
        """Unit rows (ascending) whose text holds every one of ``words`` (tokens as ``tokenize`` gives);
        none when a word is in no unit, all of them when ``words`` is empty."""
        vocab = self._bm25.vocab_dict
        words = self._fold(words)
        if any(w not in vocab for w in words):
            return np.zeros(0, np.int64)
        m = self._bm25.scores
        indptr, indices = m["indptr"], m["indices"]
        lists = sorted((np.asarray(indices[indptr[t]:indptr[t + 1]]) for t in {vocab[w] for w in words}),
                       key=len)
        if not lists:
            return np.sort(np.asarray(self.rows, np.int64))
        units = lists[0]
        for other in lists[1:]:  # shortest first: each step can only shrink the set
            # a posting list is sorted (index_flat writes them in CSC order): a binary search per unit
            # left, where np.isin would sort the long list of a common word on every call
            at = np.searchsorted(other, units)
            found = at < len(other)
            found[found] = other[at[found]] == units[found]
            units = units[found]
        return np.sort(np.asarray(self.rows[units], np.int64))

    @cached_property
    def _postings(self) -> Postings:
        m = self._bm25.scores
        return Postings(m["indptr"], m["indices"], m["data"], self.size, rows=self.rows)


def _fsync_tree(directory: Path) -> None:
    for p in directory.iterdir():
        with open(p, "rb") as f:
            os.fsync(f.fileno())
    fd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


