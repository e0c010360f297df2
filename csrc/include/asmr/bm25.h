// Top-k BM25 over token posting lists.
//
// The lists are CSC: token t's units are indices[indptr[t] .. indptr[t+1]) with
// their BM25 weights in data (bm25s's score matrix). A unit's score is the sum of
// its weights over the query's tokens (a repeated token counts again), added in
// token order as bm25s adds them. Units scoring 0 or less are left out, and so
// is unit u when active is given and active[rows[u]] == 0 (rows maps a unit of
// the index to the store's row; both are given or neither). Writes at most k
// units, best first (equal scores: lower unit first), and returns how many.
//
// With upper (each token's largest weight; lists sorted by unit), MaxScore
// pruning: the long lists (at least num_units/8 units) are added from the largest
// weight down until the k-th best partial score beats what the lists left can add;
// only the units within that bound of the k-th are completed, by galloping lookups
// in the lists left, and rescored; *pruned says it happened. Same units, same scores.
// Where the bounds show that no list can be skipped before half the postings are
// added (common words only, their weights alike), the plain scan runs from the start.
//
// One query on one thread, in per-thread scratch of num_units floats (and a
// byte each) left cleared after use. Few postings: only the touched units are
// visited; postings of at least an eighth of the units (and the pruned path):
// all scores are scanned.
#pragma once
#include <cstdint>

namespace asmr {

template <typename I>
int64_t bm25_top_k(int64_t num_units, const int64_t* indptr, const I* indices, const float* data,
                   const float* upper, const int64_t* tokens, int64_t num_tokens, const int64_t* rows,
                   const uint8_t* active, int64_t k, int64_t* out_units, float* out_scores, bool* pruned);

}  // namespace asmr
