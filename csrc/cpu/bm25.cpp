#include "asmr/bm25.h"

#include <algorithm>
#include <functional>
#include <utility>
#include <vector>

namespace asmr {

namespace {

using Entry = std::pair<float, int64_t>;  // score, unit

// One binary search in a posting list costs about as much as adding this many postings.
constexpr int64_t kLookupCost = 32;

inline bool better(const Entry& a, const Entry& b) {
  return a.first > b.first || (a.first == b.first && a.second < b.second);
}

// The k best entries offered, in a heap whose top is the worst kept: most offers fail one comparison.
class TopK {
 public:
  explicit TopK(int64_t k) : k_(k) {}
  void offer(const Entry& e) {
    if (static_cast<int64_t>(heap_.size()) < k_) {
      heap_.push_back(e);
      std::push_heap(heap_.begin(), heap_.end(), better);
    } else if (k_ > 0 && better(e, heap_.front())) {
      std::pop_heap(heap_.begin(), heap_.end(), better);
      heap_.back() = e;
      std::push_heap(heap_.begin(), heap_.end(), better);
    }
  }
  int64_t write(int64_t* out_units, float* out_scores) {
    std::sort_heap(heap_.begin(), heap_.end(), better);
    for (size_t i = 0; i < heap_.size(); ++i) {
      out_scores[i] = heap_[i].first;
      out_units[i] = heap_[i].second;
    }
    return static_cast<int64_t>(heap_.size());
  }

 private:
  int64_t k_;
  std::vector<Entry> heap_;
};

// Per-thread scores of every unit, kept all zero between queries.
struct Scratch {
  std::vector<float> scores;
  std::vector<uint8_t> seen;
  std::vector<int64_t> touched;

  void fit(int64_t n) {
    if (static_cast<int64_t>(scores.size()) < n) {
      scores.assign(n, 0.0f);
      seen.assign(n, 0);
    }
    touched.clear();
  }
  template <typename I>
  void add_listed(const int64_t* indptr, const I* indices, const float* data, int64_t t) {
    for (int64_t j = indptr[t]; j < indptr[t + 1]; ++j) {
      const int64_t u = indices[j];
      if (!seen[u]) {
        seen[u] = 1;
        touched.push_back(u);
      }
      scores[u] += data[j];
    }
  }
  void clear_touched() {
    for (const int64_t u : touched) {
      scores[u] = 0.0f;
      seen[u] = 0;
    }
    touched.clear();
  }
  void clear_all() {
    std::fill(scores.begin(), scores.end(), 0.0f);
    std::fill(seen.begin(), seen.end(), 0);
    touched.clear();
  }
};

thread_local Scratch scratch;

// The weight of unit u in token t's list (sorted by unit), 0 when u is not listed.
template <typename I>
inline float weight_of(const int64_t* indptr, const I* indices, const float* data, int64_t t, int64_t u) {
  const I* first = indices + indptr[t];
  const I* last = indices + indptr[t + 1];
  const I* at = std::lower_bound(first, last, static_cast<I>(u));
  return (at != last && *at == static_cast<I>(u)) ? data[at - indices] : 0.0f;
}

// MaxScore: score the short lists, then bound what the long lists can add. When the k-th best
// partial score beats that bound, only units within the bound of it can make the top k; they
// are rescored exactly, token by token in query order (the sums bm25s makes). While the bound
// is too high, the long list of the largest weight joins the scored ones, up to num_units
// postings in all. Returns false, with the scratch clean and nothing written, when that fails.
template <typename I>
bool top_k_pruned(int64_t num_units, const int64_t* indptr, const I* indices, const float* data,
                  const float* upper, const int64_t* tokens, int64_t num_tokens, const int64_t* rows,
                  const uint8_t* active, int64_t k, int64_t long_list, TopK& best) {
  std::vector<int64_t> long_tokens;  // one entry per query position: a repeated token counts again
  double bound = 0.0;
  int64_t scored = 0;
  for (int64_t q = 0; q < num_tokens; ++q) {
    const int64_t t = tokens[q], len = indptr[t + 1] - indptr[t];
    if (len >= long_list) {
      long_tokens.push_back(t);
      bound += upper[t];
    } else {
      scratch.add_listed(indptr, indices, data, t);
      scored += len;
    }
  }
  if (long_tokens.empty()) {
    scratch.clear_touched();
    return false;
  }
  std::sort(long_tokens.begin(), long_tokens.end(), [&](int64_t a, int64_t b) { return upper[a] < upper[b]; });
  std::vector<float> partial;
  double cutoff = 0.0;
  while (true) {
    float top = 0.0f;  // the best partial score bounds the k-th: no cutoff can exist below it
    for (const int64_t u : scratch.touched) top = std::max(top, scratch.scores[u]);
    if (top > bound) {
      partial.clear();
      for (const int64_t u : scratch.touched) {
        if (active == nullptr || active[rows[u]]) partial.push_back(scratch.scores[u]);
      }
    }
    if (top > bound && static_cast<int64_t>(partial.size()) >= k) {
      std::nth_element(partial.begin(), partial.begin() + (k - 1), partial.end(), std::greater<float>());
      const double kth = partial[k - 1];
      cutoff = kth - bound - 1e-4 * (kth + bound);  // slack for float rounding: a few more candidates
      if (cutoff > 0.0) {
        // rescoring costs a binary search per candidate and token: take it when it is cheaper
        // than adding the long lists left
        int64_t candidates = 0, left = 0;
        for (const float p : partial) candidates += p >= cutoff;
        for (const int64_t t : long_tokens) left += indptr[t + 1] - indptr[t];
        if (long_tokens.empty() || candidates * num_tokens * kLookupCost <= left) break;
      }
    }
    const int64_t t = long_tokens.empty() ? -1 : long_tokens.back();
    if (t < 0 || scored + (indptr[t + 1] - indptr[t]) > num_units) {
      scratch.clear_touched();
      return false;
    }
    long_tokens.pop_back();
    bound -= upper[t];
    scratch.add_listed(indptr, indices, data, t);
    scored += indptr[t + 1] - indptr[t];
  }
  std::vector<int64_t> candidates;
  for (const int64_t u : scratch.touched) {
    if (scratch.scores[u] >= cutoff && (active == nullptr || active[rows[u]])) candidates.push_back(u);
  }
  scratch.clear_touched();
  for (const int64_t u : candidates) {
    float s = 0.0f;
    for (int64_t q = 0; q < num_tokens; ++q) s += weight_of(indptr, indices, data, tokens[q], u);
    if (s > 0.0f) best.offer(Entry(s, u));
  }
  return true;
}

}  // namespace

template <typename I>
int64_t bm25_top_k(int64_t num_units, const int64_t* indptr, const I* indices, const float* data,
                   const float* upper, const int64_t* tokens, int64_t num_tokens, const int64_t* rows,
                   const uint8_t* active, int64_t k, int64_t* out_units, float* out_scores, bool* pruned) {
  *pruned = false;
  TopK best(k);
  if (k <= 0 || num_tokens <= 0) return 0;
  const int64_t long_list = std::max<int64_t>(1, num_units / 8);
  try {
    scratch.fit(num_units);
    if (upper != nullptr &&
        top_k_pruned(num_units, indptr, indices, data, upper, tokens, num_tokens, rows, active, k, long_list, best)) {
      *pruned = true;
      return best.write(out_units, out_scores);
    }
    int64_t postings = 0;
    for (int64_t q = 0; q < num_tokens; ++q) postings += indptr[tokens[q] + 1] - indptr[tokens[q]];
    const auto offer = [&](int64_t u) {
      const Entry e(scratch.scores[u], u);
      scratch.scores[u] = 0.0f;  // leave the scratch clean for the next query
      if (e.first > 0.0f && (active == nullptr || active[rows[u]])) best.offer(e);
    };
    if (postings >= long_list) {  // long lists touch most units: scan them all, no touched list
      float* scores = scratch.scores.data();
      for (int64_t q = 0; q < num_tokens; ++q) {
        const int64_t t = tokens[q];
        for (int64_t j = indptr[t]; j < indptr[t + 1]; ++j) scores[indices[j]] += data[j];
      }
      for (int64_t u = 0; u < num_units; ++u) {
        if (scores[u] != 0.0f) offer(u);
      }
    } else {
      for (int64_t q = 0; q < num_tokens; ++q) scratch.add_listed(indptr, indices, data, tokens[q]);
      for (const int64_t u : scratch.touched) {
        scratch.seen[u] = 0;
        offer(u);
      }
      scratch.touched.clear();
    }
  } catch (...) {  // out of memory mid-query: never leave a dirty scratch behind
    scratch.clear_all();
    throw;
  }
  return best.write(out_units, out_scores);
}

template int64_t bm25_top_k<int32_t>(int64_t, const int64_t*, const int32_t*, const float*, const float*,
                                     const int64_t*, int64_t, const int64_t*, const uint8_t*, int64_t, int64_t*,
                                     float*, bool*);
template int64_t bm25_top_k<int64_t>(int64_t, const int64_t*, const int64_t*, const float*, const float*,
                                     const int64_t*, int64_t, const int64_t*, const uint8_t*, int64_t, int64_t*,
                                     float*, bool*);

}  // namespace asmr
