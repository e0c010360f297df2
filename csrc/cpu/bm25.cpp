#include "asmr/bm25.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <utility>
#include <vector>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace asmr {

namespace {

using Entry = std::pair<float, int64_t>;  // score, unit

// One galloping lookup of a candidate in a posting list costs about as much as adding this many postings.
constexpr int64_t kLookupCost = 8;
// Against the next list alone, a candidate costs more: it is first gathered from all units' scores,
// and the lookups land close together in the list. Measured at 1,000,000 units: 33,000 candidates took
// 1.1 ms to gather and 1.1-1.4 ms to complete against a list of 264,000 postings that adds in 0.33 ms.
constexpr int64_t kNextLookupCost = 32;

// Room for float rounding around a sum near x: partial sums are added in another order than bm25s adds them.
inline double slack(double x) { return 1e-4 * (1.0 + x); }

// What a partial score must beat to be sure of beating `bound`, in the scores' own precision.
inline float above_bound(double bound) { return static_cast<float>(bound + slack(bound)); }

// The largest float no greater than x: a cutoff that keeps every unit the exact one keeps.
inline float float_at_most(double x) {
  float f = static_cast<float>(x);
  return static_cast<double>(f) > x ? std::nextafter(f, -std::numeric_limits<float>::infinity()) : f;
}

// The first unit in [u, n) whose score is above bar (n when none). The walks of every unit's score
// look for the few that pass a bar; where SSE2 is there, sixteen scores are compared at a time.
inline int64_t next_above(const float* scores, int64_t u, int64_t n, float bar) {
#if defined(__SSE2__)
  const __m128 b = _mm_set1_ps(bar);
  for (; u + 16 <= n; u += 16) {
    const float* s = scores + u;
    const __m128 m = _mm_or_ps(_mm_or_ps(_mm_cmpgt_ps(_mm_loadu_ps(s), b), _mm_cmpgt_ps(_mm_loadu_ps(s + 4), b)),
                               _mm_or_ps(_mm_cmpgt_ps(_mm_loadu_ps(s + 8), b), _mm_cmpgt_ps(_mm_loadu_ps(s + 12), b)));
    if (_mm_movemask_ps(m) != 0) break;
  }
#endif
  for (; u < n; ++u) {
    if (scores[u] > bar) return u;
  }
  return n;
}

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
  // What a score must beat to be kept, once k are kept: offers of units in ascending order need only
  // beat the worst kept score (an equal score of a later unit loses the tie).
  bool full() const { return k_ > 0 && static_cast<int64_t>(heap_.size()) >= k_; }
  float worst() const { return heap_.front().first; }
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
  // The pruned path's work lists, kept between queries: allocated afresh, a list of tens of
  // thousands of candidates costs a page fault per page on every query
  std::vector<int64_t> candidates;
  std::vector<float> partial;
  std::vector<float> heap;

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

// Adds token t's weights to sum[i] for the ascending units[i], galloping along the list from
// the last unit found: a few hundred candidates cost a few steps each, even in a list of all units.
template <typename I>
void add_weights(const int64_t* indptr, const I* indices, const float* data, int64_t t,
                 const std::vector<int64_t>& units, std::vector<float>& sum) {
  const I* at = indices + indptr[t];
  const I* last = indices + indptr[t + 1];
  for (size_t i = 0; i < units.size() && at != last; ++i) {
    const I u = static_cast<I>(units[i]);
    int64_t step = 1;
    const I* lo = at;
    while (lo + step < last && lo[step] < u) {
      lo += step;
      step *= 2;
    }
    at = std::lower_bound(lo, std::min(lo + step + 1, last), u);
    if (at != last && *at == u) sum[i] += data[at - indices];
  }
}

// Completes sums[i] of the ascending units[i] with the lists `lists` (largest bound last, and
// added from there), dropping after each the units that can no longer reach the top k: a unit's
// score is at most its sum so far plus the bounds of the lists left, and `bar`, raised to the
// k-th best sum so far, is a lower bound on the k-th best score. Returns that bar. The units kept
// have every list added.
template <typename I>
double complete(const int64_t* indptr, const I* indices, const float* data, const float* upper,
                const std::vector<int64_t>& lists, int64_t k, std::vector<int64_t>& units,
                std::vector<float>& sums, double bar, std::vector<float>& heap) {
  for (size_t done = 0; done < lists.size(); ++done) {
    const int64_t t = lists[lists.size() - 1 - done];
    add_weights(indptr, indices, data, t, units, sums);
    double rest = 0.0;
    for (size_t j = 0; j + 1 + done < lists.size(); ++j) rest += upper[lists[j]];
    if (static_cast<int64_t>(sums.size()) >= k) {
      heap.assign(sums.begin(), sums.end());
      std::nth_element(heap.begin(), heap.begin() + (k - 1), heap.end(), std::greater<float>());
      bar = std::max(bar, heap[k - 1] - slack(heap[k - 1]));
    }
    const double need = bar - rest - slack(bar);
    if (need <= 0.0) continue;
    size_t kept = 0;
    for (size_t i = 0; i < units.size(); ++i) {
      if (sums[i] >= need) {
        units[kept] = units[i];
        sums[kept++] = sums[i];
      }
    }
    units.resize(kept);
    sums.resize(kept);
  }
  return bar;
}

// Keeps the k best of the scores offered in a min-heap; returns what the next score must beat.
inline float keep_best(std::vector<float>& heap, int64_t k, float s, float bar) {
  if (static_cast<int64_t>(heap.size()) < k) {
    heap.push_back(s);
    std::push_heap(heap.begin(), heap.end(), std::greater<float>());
    return static_cast<int64_t>(heap.size()) == k ? heap.front() : bar;  // above the floor, as all it holds
  }
  std::pop_heap(heap.begin(), heap.end(), std::greater<float>());
  heap.back() = s;
  std::push_heap(heap.begin(), heap.end(), std::greater<float>());
  return heap.front();
}

// The k-th best of the active units' partial scores above `floor` (0 when fewer than k are),
// in one pass with a heap of the k best; a unit's row is looked up only when its score would
// enter the heap. The units are 0 .. num_units-1, or the `listed` ones when that is not null.
// Nearly every score fails the bar: the walk of every unit skips to the next that passes (next_above).
inline float kth_above(const float* scores, int64_t num_units, const std::vector<int64_t>* listed,
                       const int64_t* rows, const uint8_t* active, int64_t k, float floor,
                       std::vector<float>& heap) {
  heap.clear();
  float bar = floor;  // what a score must beat to enter: the floor, then the heap's worst
  if (listed != nullptr) {
    for (const int64_t u : *listed) {
      const float s = scores[u];
      if (s > bar && (active == nullptr || active[rows[u]])) bar = keep_best(heap, k, s, bar);
    }
  } else {
    for (int64_t u = next_above(scores, 0, num_units, bar); u < num_units; u = next_above(scores, u + 1, num_units, bar)) {
      if (active == nullptr || active[rows[u]]) bar = keep_best(heap, k, scores[u], bar);
    }
  }
  return static_cast<int64_t>(heap.size()) < k ? 0.0f : heap.front();
}

// MaxScore, term at a time on the dense scores: the short lists are added (and the units they
// name completed, when that settles the top k, see below), then the long ones
// from the largest weight down, until the k-th best partial score beats what the lists left can
// add at most (their bound). A unit no added list names scores at most the bound, so only units
// within the bound of the k-th can make the top k. Their partial scores are completed with the
// lists left (galloping lookups), and those near the completed k-th are rescored exactly, token
// by token in query order (the sums bm25s makes). Gives up, with the scores clean and nothing
// written, when no list is long or the lists added would pass half of the query's postings (the
// plain scan of every list in query order costs little more then).
template <typename I>
bool top_k_pruned(int64_t num_units, const int64_t* indptr, const I* indices, const float* data,
                  const float* upper, const int64_t* tokens, int64_t num_tokens, const int64_t* rows,
                  const uint8_t* active, int64_t k, int64_t long_list, TopK& best) {
  float* scores = scratch.scores.data();
  uint8_t* seen = scratch.seen.data();
  // Until a long list is added, the units the short lists name are the only ones scoring, and the
  // checks below walk them instead of every unit (a few thousand against a million, typically).
  std::vector<int64_t>& touched = scratch.touched;
  bool sparse = true;
  std::vector<int64_t> long_tokens;  // one entry per query position: a repeated token counts again
  double bound = 0.0;
  int64_t scored = 0;
  double added = 0.0;  // the largest weights of the lists added: no partial score is above it
  const auto add = [&](int64_t t) {
    if (sparse) {
      scratch.add_listed(indptr, indices, data, t);
    } else {
      for (int64_t j = indptr[t]; j < indptr[t + 1]; ++j) scores[indices[j]] += data[j];
    }
    scored += indptr[t + 1] - indptr[t];
    added += upper[t];
  };
  const auto clear = [&]() {  // leave the scratch all zero for the next query
    if (sparse) {
      scratch.clear_touched();
    } else {
      std::fill(scores, scores + num_units, 0.0f);
    }
  };
  for (int64_t q = 0; q < num_tokens; ++q) {
    const int64_t t = tokens[q];
    if (indptr[t + 1] - indptr[t] >= long_list) {
      long_tokens.push_back(t);
      bound += upper[t];
    }
  }
  if (long_tokens.empty()) return false;
  int64_t postings = 0;  // what the plain scan adds
  for (int64_t q = 0; q < num_tokens; ++q) postings += indptr[tokens[q] + 1] - indptr[tokens[q]];
  for (int64_t q = 0; q < num_tokens; ++q) {
    if (indptr[tokens[q] + 1] - indptr[tokens[q]] < long_list) add(tokens[q]);
  }
  std::sort(long_tokens.begin(), long_tokens.end(), [&](int64_t a, int64_t b) { return upper[a] < upper[b]; });
  std::vector<float>& heap = scratch.heap;
  // The completed sums are exact up to rounding: rescore the units within the slack of the k-th
  // exactly, token by token in query order (the sums bm25s makes), and offer them.
  const auto rescore = [&](const std::vector<int64_t>& units, const std::vector<float>& sums) {
    double final_cutoff = 0.0;
    if (static_cast<int64_t>(sums.size()) >= k) {
      heap.assign(sums.begin(), sums.end());
      std::nth_element(heap.begin(), heap.begin() + (k - 1), heap.end(), std::greater<float>());
      final_cutoff = heap[k - 1] - slack(heap[k - 1]);
    }
    for (size_t i = 0; i < units.size(); ++i) {
      if (sums[i] < final_cutoff) continue;
      const int64_t u = units[i];
      float s = 0.0f;
      for (int64_t q = 0; q < num_tokens; ++q) s += weight_of(indptr, indices, data, tokens[q], u);
      if (s > 0.0f) best.offer(Entry(s, u));
    }
  };
  // Rare words often settle the top k alone: complete the scores of the units the short lists
  // name (a lookup in each long list) when that costs less than adding the long lists. If the
  // k-th of them beats the bound, a unit no short list names (it scores at most the bound)
  // cannot make the top k, and the long lists are never added.
  int64_t long_postings = 0;
  for (const int64_t t : long_tokens) long_postings += indptr[t + 1] - indptr[t];
  double theta = 0.0;  // a lower bound on the k-th best score, once one is known
  std::vector<int64_t>& candidates = scratch.candidates;  // ascending, as the lists are
  std::vector<float>& total = scratch.partial;
  // The active units whose partial score is at least `cutoff` (and above 0), with those scores.
  const auto gather = [&](float cutoff) {
    candidates.clear();
    total.clear();
    // at least the cutoff and above 0, as one bar to pass: the float just below the cutoff, or 0
    const float bar = cutoff > 0.0f ? std::nextafter(cutoff, -std::numeric_limits<float>::infinity()) : 0.0f;
    if (sparse) {
      std::sort(touched.begin(), touched.end());
      for (const int64_t u : touched) {
        const float s = scores[u];
        if (s > bar && (active == nullptr || active[rows[u]])) {
          candidates.push_back(u);
          total.push_back(s);
        }
      }
    } else {
      for (int64_t u = next_above(scores, 0, num_units, bar); u < num_units; u = next_above(scores, u + 1, num_units, bar)) {
        if (active == nullptr || active[rows[u]]) {
          candidates.push_back(u);
          total.push_back(scores[u]);
        }
      }
    }
  };
  if (static_cast<int64_t>(touched.size()) >= k &&
      static_cast<int64_t>(touched.size()) * static_cast<int64_t>(long_tokens.size()) * kLookupCost <= long_postings) {
    gather(0.0);
    if (static_cast<int64_t>(candidates.size()) >= k) {
      theta = complete(indptr, indices, data, upper, long_tokens, k, candidates, total, 0.0, heap);
      // theta: k units score this much, so the top k's k-th is no lower
      if (static_cast<int64_t>(candidates.size()) >= k && theta > bound + slack(bound)) {
        clear();
        rescore(candidates, total);
        return true;
      }
    }
  }
  {
    // The loop below gives up once the lists it added pass half the postings with no bound beaten
    // yet. Where its own arithmetic says that comes before a bound can be beaten (common words
    // only, their weights alike), give up before adding anything.
    double b = bound, a = added;
    int64_t s = scored;
    for (size_t i = long_tokens.size(); i-- > 0;) {
      const float floor = above_bound(b);
      if (theta > floor || a > floor) break;  // a bound may be beaten from here on: run the loop
      const int64_t t = long_tokens[i];
      if (2 * (s + indptr[t + 1] - indptr[t]) > postings) {
        clear();
        return false;
      }
      s += indptr[t + 1] - indptr[t];
      a += upper[t];
      b -= upper[t];
    }
  }
  float cutoff = 0.0f;  // in the scores' own precision: a float compare the count loops vectorise
  double bar = 0.0;
  while (true) {
    const float floor = above_bound(bound);
    double kth = theta > floor ? theta : 0.0;  // above the bound: no unit unnamed so far can reach it
    if (kth == 0.0 && added > floor) {
      int64_t above = 0;  // a count the compiler vectorises: most checks fail on it, before any heap work
      if (sparse) {
        for (const int64_t u : touched) above += scores[u] > floor;
      } else {
        for (int64_t u = 0; u < num_units; ++u) above += scores[u] > floor;
      }
      if (above >= k) kth = kth_above(scores, num_units, sparse ? &touched : nullptr, rows, active, k, floor, heap);
    }
    if (kth > 0.0) {
      // completing the candidates costs a lookup in each list left: take it when that is
      // cheaper than adding those lists (each added list leaves fewer candidates)
      cutoff = float_at_most(kth - bound - slack(bound));
      int64_t candidates = 0, left = 0;  // left: the postings of the lists not added
      if (sparse) {
        for (const int64_t u : touched) candidates += scores[u] >= cutoff;
      } else {
        for (int64_t u = 0; u < num_units; ++u) candidates += scores[u] >= cutoff;
      }
      for (const int64_t t : long_tokens) left += indptr[t + 1] - indptr[t];
      // and the next list alone: completing against it comes first, before later lists thin
      // the candidates, so a list that adds for less than its lookups cost is added instead
      const int64_t next = long_tokens.empty() ? 0 : indptr[long_tokens.back() + 1] - indptr[long_tokens.back()];
      if (candidates * static_cast<int64_t>(long_tokens.size()) * kLookupCost <= left &&
          candidates * kNextLookupCost <= next) {
        bar = kth - slack(bound);  // a partial score, or theta: either way no more than the k-th best score
        break;
      }
    }
    const int64_t t = long_tokens.empty() ? -1 : long_tokens.back();
    if (t < 0 || 2 * (scored + indptr[t + 1] - indptr[t]) > postings) {  // little left to skip
      clear();
      return false;
    }
    long_tokens.pop_back();
    bound -= upper[t];
    if (sparse) {  // a long list names most units: from here on the dense scores are walked
      for (const int64_t u : touched) seen[u] = 0;
      touched.clear();
      sparse = false;
    }
    add(t);
  }
  gather(cutoff);
  clear();
  complete(indptr, indices, data, upper, long_tokens, k, candidates, total, bar, heap);
  rescore(candidates, total);
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
      // Units in ascending order: once k are kept, a unit enters only above the worst kept score,
      // a compare that nearly always fails the same way (the scores are cleared in one fill after)
      float bar = 0.0f;
      for (int64_t u = next_above(scores, 0, num_units, bar); u < num_units; u = next_above(scores, u + 1, num_units, bar)) {
        if (active == nullptr || active[rows[u]]) {
          best.offer(Entry(scores[u], u));
          if (best.full()) bar = best.worst();
        }
      }
      std::fill(scores, scores + num_units, 0.0f);
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
