"""The native BM25 top-k returns what bm25s's own scorer ranks first, with the same scores."""
import numpy as np
import pytest

from asmr.index.lexical import LexicalIndex
from asmr.text.words import tokenize
from asmr_kernels import Postings


def reference(index: LexicalIndex, query: str, k: int, active=None):
    """bm25s's scores for every unit, then the top k (what LexicalIndex.search did before the kernel)."""
    ids = index._bm25.get_tokens_ids(tokenize(query))
    if not ids:
        return np.zeros(0, np.int64), np.zeros(0, np.float32)
    scores = index._bm25.get_scores_from_ids(ids)
    if active is not None:
        scores = np.where(active[index.rows], scores, 0.0)
    order = np.lexsort((np.arange(len(scores)), -scores))[:k]  # best first, equal scores by unit
    order = order[scores[order] > 0]
    return np.asarray(index.rows[order], np.int64), scores[order].astype(np.float32)


def corpus(rng, n):
    """Units that all share a few boilerplate words (long posting lists), plus Zipf-distributed rarer words."""
    common = ["the", "system", "team", "owns"]
    vocab = [f"w{i}" for i in range(300)]
    p = 1.0 / np.arange(1, len(vocab) + 1)
    p /= p.sum()
    return [" ".join(list(rng.choice(common, size=rng.integers(1, 5)))
                     + list(rng.choice(vocab, size=rng.integers(1, 8), p=p))) for _ in range(n)]


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_top_k_matches_bm25s(seed):
    rng = np.random.default_rng(seed)
    texts = corpus(rng, 3000)
    rows = np.arange(len(texts)) * 2 + 1  # index units sit at other store rows
    index = LexicalIndex.build(zip(rows.tolist(), texts))
    active = np.zeros(2 * len(texts) + 1, bool)
    active[rows] = rng.random(len(texts)) > 0.2
    queries = [" ".join(rng.choice(texts[i].split(), size=3)) for i in rng.integers(0, len(texts), 60)]
    queries += ["the system team owns", "the the w1", "w299 w298 the", "unknownword", "owns w0 w0"]
    for q in queries:
        for k in (1, 5, 20, 10_000):
            for act in (None, active):
                got_rows, got_scores = index.search(q, k, active=act)
                ref_rows, ref_scores = reference(index, q, k, act)
                np.testing.assert_array_equal(got_scores, ref_scores, err_msg=q)
                np.testing.assert_array_equal(got_rows, ref_rows, err_msg=q)


def test_pruning_on_text_with_stop_words_gives_the_same_top_k():
    # Zipf-distributed words, as in text: the most frequent ones post to most units with small
    # weights, so MaxScore can skip their lists; the answer must not change when it does
    rng = np.random.default_rng(7)
    p = 1.0 / np.arange(1, 3001) ** 1.05
    words = np.array([f"w{i}" for i in range(3000)])
    texts = [" ".join(words[rng.choice(3000, size=30, p=p / p.sum())]) for _ in range(4000)]
    index = LexicalIndex.build(enumerate(texts))
    active = rng.random(len(texts)) > 0.1
    postings = index._postings
    assert postings.upper is not None  # bm25s's lists are sorted: pruning is possible
    for i in rng.integers(0, len(texts), 80):
        q = " ".join(rng.choice(texts[i].split(), size=6, replace=False))
        for k, act in ((10, None), (3, active)):
            got_rows, got_scores = index.search(q, k, active=act)
            ref_rows, ref_scores = reference(index, q, k, act)
            np.testing.assert_array_equal(got_scores, ref_scores, err_msg=q)
            np.testing.assert_array_equal(got_rows, ref_rows, err_msg=q)
    assert postings.pruned > 40, postings.pruned  # the pruned path ran, so it is what was checked


def test_rare_words_that_settle_the_top_k_alone_give_the_same_top_k():
    # Every unit holds the boilerplate words; names are shared by a few dozen units each. The short
    # lists of a question's names then settle the top k before any long list is added, the case
    # where the pruned path checks only the units those lists name.
    rng = np.random.default_rng(3)
    names = [f"n{i}" for i in range(200)]
    texts = [" ".join(["person", "met", "officials", "about", "project"] + list(rng.choice(names, size=3))
                      + list(rng.choice(["alpha", "beta", "river", "stone"], size=2))) for _ in range(5000)]
    index = LexicalIndex.build(enumerate(texts))
    active = rng.random(len(texts)) > 0.1
    postings = index._postings
    before = postings.pruned
    for i in rng.integers(0, len(texts), 60):
        words = texts[i].split()
        q = " ".join(words[5:8] + ["person", "met", "project"])
        for k, act in ((3, None), (5, active), (10, None)):
            got_rows, got_scores = index.search(q, k, active=act)
            ref_rows, ref_scores = reference(index, q, k, act)
            np.testing.assert_array_equal(got_scores, ref_scores, err_msg=q)
            np.testing.assert_array_equal(got_rows, ref_rows, err_msg=q)
    assert postings.pruned - before > 100, postings.pruned - before


def test_questions_of_common_words_only_give_the_same_top_k():
    # A small vocabulary: a few words every unit holds, the rest each in about a quarter of the units
    # (the recall benchmark's generated memory). A question of such words alone leaves nothing to
    # prune: every list is long and the weights are alike, so the scan of every unit answers it, and
    # many units tie. Their order must still be bm25s's: equal scores by unit.
    rng = np.random.default_rng(11)
    words = [f"v{i}" for i in range(20)]
    texts = [" ".join(["person", "met", "city"] + list(rng.choice(words, size=6))) for _ in range(6000)]
    index = LexicalIndex.build(enumerate(texts))
    active = rng.random(len(texts)) > 0.1
    postings = index._postings
    alike = ["person met city", "v1 v2 v3 v4 v5"]  # weights alike: no bound can be beaten early
    queries = alike + ["person met city v1", "v3 v3 v7 person"]
    queries += [" ".join(rng.choice(words + ["person", "met"], size=5)) for _ in range(30)]
    for q in queries:
        before = postings.pruned
        for k, act in ((1, None), (10, active), (50, None), (200, active)):
            got_rows, got_scores = index.search(q, k, active=act)
            ref_rows, ref_scores = reference(index, q, k, act)
            np.testing.assert_array_equal(got_scores, ref_scores, err_msg=q)
            np.testing.assert_array_equal(got_rows, ref_rows, err_msg=q)
        if q in alike:
            assert postings.pruned == before, q  # the scan answered it


def test_top_k_small_case_by_hand():
    # token 0: units 0,1,2 with weights 1,2,3; token 1: units 1,2 with .5,.25
    p = Postings(np.array([0, 3, 5]), np.array([0, 1, 2, 1, 2], np.int32),
                 np.array([1.0, 2.0, 3.0, 0.5, 0.25], np.float32), 3, rows=np.array([4, 5, 6]))
    units, scores = p.top_k([0, 1], 3)
    assert units.tolist() == [2, 1, 0]
    np.testing.assert_allclose(scores, [3.25, 2.5, 1.0])
    units, _ = p.top_k([1, 1], 3)  # a repeated token counts twice; unit 0 scores 0 and is left out
    assert units.tolist() == [1, 2]
    active = np.array([False] * 4 + [True, False, True])
    assert p.top_k([0, 1], 2, active=active)[0].tolist() == [2, 0]
    assert p.top_k([], 3)[0].size == 0
    # the scratch is clean between queries: the same query twice gives the same scores
    np.testing.assert_array_equal(p.top_k([0], 3)[1], p.top_k([0], 3)[1])


def test_lists_out_of_unit_order_are_scored_without_pruning():
    # token 0's list is not sorted by unit: binary search would miss, so no pruning, same answer
    p = Postings(np.array([0, 3, 5]), np.array([2, 0, 1, 1, 2], np.int32),
                 np.array([1.0, 2.0, 3.0, 0.5, 0.25], np.float32), 3)
    assert p.upper is None
    units, scores = p.top_k([0, 1], 3)
    assert units.tolist() == [1, 0, 2]
    np.testing.assert_allclose(scores, [3.5, 2.0, 1.25])


def test_bad_postings_and_queries_are_refused_by_name():
    ok = dict(indptr=np.array([0, 2]), indices=np.array([0, 1]), data=np.array([1.0, 2.0], np.float32))
    with pytest.raises(ValueError, match="indices"):
        Postings(ok["indptr"], np.array([0, 5]), ok["data"], 2)
    with pytest.raises(ValueError, match="indptr"):
        Postings(np.array([0, 3]), ok["indices"], ok["data"], 2)
    with pytest.raises(ValueError, match="data"):
        Postings(ok["indptr"], ok["indices"], np.array([1.0, np.nan]), 2)
    with pytest.raises(ValueError, match="rows"):
        Postings(**ok, num_units=2, rows=np.array([0]))
    p = Postings(**ok, num_units=2, rows=np.array([0, 3]))
    with pytest.raises(ValueError, match="tokens"):
        p.top_k([1], 2)
    with pytest.raises(ValueError, match="active"):
        p.top_k([0], 2, active=np.ones(3, bool))  # row 3 is past its end
    with pytest.raises(ValueError, match="active"):
        Postings(**ok, num_units=2).top_k([0], 2, active=np.ones(2, bool))
