#include "asmr/bm25.h"

#include <algorithm>
#include <utility>
#include <vector>

namespace asmr {

namespace {

template <typename I>
void accumulate(const int64_t* indptr, const I* indices, const float* data, const int64_t* tokens,
                int64_t num_tokens, float* scores, uint8_t* seen, std::vector<int64_t>& touched) {
  for (int64_t q = 0; q < num_tokens; ++q) {
    const int64_t t = tokens[q];
    if (seen == nullptr) {  // dense: every unit will be scanned anyway
      for (int64_t j = indptr[t]; j < indptr[t + 1]; ++j) scores[indices[j]] += data[j];
      continue;
    }
    for (int64_t j = indptr[t]; j < indptr[t + 1]; ++j) {
      const int64_t u = indices[j];
      if (!seen[u]) {
        seen[u] = 1;
        touched.push_back(u);
      }
      scores[u] += data[j];
    }
  }
}

}  // namespace

template <typename I>
int64_t bm25_top_k(int64_t num_units, const int64_t* indptr, const I* indices, const float* data,
                   const int64_t* tokens, int64_t num_tokens, const int64_t* rows,
                   const uint8_t* active, int64_t k, int64_t* out_units, float* out_scores) {
  thread_local std::vector<float> scores;
  thread_local std::vector<uint8_t> seen;
  thread_local std::vector<int64_t> touched;
  if (static_cast<int64_t>(scores.size()) < num_units) {
    scores.assign(num_units, 0.0f);
    seen.assign(num_units, 0);
  }
  touched.clear();
  // Long lists touch most units: then a scan of all scores beats keeping a list of the touched
  int64_t postings = 0;
  for (int64_t q = 0; q < num_tokens; ++q) postings += indptr[tokens[q] + 1] - indptr[tokens[q]];
  const bool dense = postings * 8 >= num_units;
  try {
    accumulate(indptr, indices, data, tokens, num_tokens, scores.data(), dense ? nullptr : seen.data(),
               touched);
  } catch (...) {  // out of memory mid-query: never leave a dirty scratch behind
    scores.assign(scores.size(), 0.0f);
    seen.assign(seen.size(), 0);
    throw;
  }
  // the k best in a heap whose top is the worst kept: most units fail one comparison with it
  const auto better = [](const std::pair<float, int64_t>& a, const std::pair<float, int64_t>& b) {
    return a.first > b.first || (a.first == b.first && a.second < b.second);
  };
  std::vector<std::pair<float, int64_t>> best;
  best.reserve(static_cast<size_t>(std::min<int64_t>(k, dense ? num_units : static_cast<int64_t>(touched.size()))));
  const auto offer = [&](int64_t u) {
    const std::pair<float, int64_t> entry(scores[u], u);
    scores[u] = 0.0f;  // leave the scratch clean for the next query
    if (!(entry.first > 0.0f) || (active != nullptr && !active[rows[u]])) return;
    if (static_cast<int64_t>(best.size()) < k) {
      best.push_back(entry);
      std::push_heap(best.begin(), best.end(), better);
    } else if (k > 0 && better(entry, best.front())) {
      std::pop_heap(best.begin(), best.end(), better);
      best.back() = entry;
      std::push_heap(best.begin(), best.end(), better);
    }
  };
  if (dense) {
    for (int64_t u = 0; u < num_units; ++u) {
      if (scores[u] != 0.0f) offer(u);
    }
  } else {
    for (const int64_t u : touched) {
      seen[u] = 0;
      offer(u);
    }
  }
  std::sort_heap(best.begin(), best.end(), better);
  const int64_t m = static_cast<int64_t>(best.size());
  for (int64_t i = 0; i < m; ++i) {
    out_scores[i] = best[i].first;
    out_units[i] = best[i].second;
  }
  return m;
}

template int64_t bm25_top_k<int32_t>(int64_t, const int64_t*, const int32_t*, const float*, const int64_t*,
                                     int64_t, const int64_t*, const uint8_t*, int64_t, int64_t*, float*);
template int64_t bm25_top_k<int64_t>(int64_t, const int64_t*, const int64_t*, const float*, const int64_t*,
                                     int64_t, const int64_t*, const uint8_t*, int64_t, int64_t*, float*);

}  // namespace asmr
