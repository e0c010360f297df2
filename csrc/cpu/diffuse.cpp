#include "asmr/diffuse.h"

#include <algorithm>
#include <cstring>
#include <vector>

#include "asmr/common.h"

namespace asmr {
namespace {

// One pull step for a single column: out[j] = decay * sum w * x[src] + restart * p[j].
template <typename I>
void step_b1(int64_t n, const I* indptr, const I* indices, const float* weights,
             const float* x, const float* p, float decay, float restart, float edge_threshold,
             float node_threshold, float* out, int threads) {
#pragma omp parallel for num_threads(threads) schedule(dynamic, 2048)
  for (int64_t j = 0; j < n; ++j) {
    float acc0 = 0.f, acc1 = 0.f;
    int64_t e = indptr[j];
    const int64_t end = indptr[j + 1];
    // Two accumulators break the add dependency chain; the mask is a select, not a branch.
    for (; e + 1 < end; e += 2) {
      const float w0 = weights[e], w1 = weights[e + 1];
      acc0 += (w0 >= edge_threshold ? w0 : 0.f) * x[indices[e]];
      acc1 += (w1 >= edge_threshold ? w1 : 0.f) * x[indices[e + 1]];
    }
    if (e < end) {
      const float w = weights[e];
      acc0 += (w >= edge_threshold ? w : 0.f) * x[indices[e]];
    }
    float v = decay * (acc0 + acc1);
    if (p) v += restart * p[j];
    out[j] = v < node_threshold ? 0.f : v;
  }
}

// One pull step for b columns; each edge reads one contiguous row of x.
template <typename I>
void step_batched(int64_t n, const I* indptr, const I* indices, const float* weights,
                  int64_t b, const float* x, const float* p, float decay, float restart,
                  float edge_threshold, float node_threshold, float* out, int threads) {
#pragma omp parallel num_threads(threads)
  {
    std::vector<float> acc(static_cast<size_t>(b));
#pragma omp for schedule(dynamic, 512)
    for (int64_t j = 0; j < n; ++j) {
      std::fill(acc.begin(), acc.end(), 0.f);
      float* a = acc.data();
      for (int64_t e = indptr[j], end = indptr[j + 1]; e < end; ++e) {
        const float w = weights[e];
        if (!(w >= edge_threshold) || w == 0.f) continue;
        const float* xr = x + static_cast<int64_t>(indices[e]) * b;
#pragma omp simd
        for (int64_t c = 0; c < b; ++c) a[c] += w * xr[c];
      }
      float* o = out + j * b;
      const float* pr = p ? p + j * b : nullptr;
#pragma omp simd
      for (int64_t c = 0; c < b; ++c) {
        float v = decay * a[c] + (pr ? restart * pr[c] : 0.f);
        o[c] = v < node_threshold ? 0.f : v;
      }
    }
  }
}

}  // namespace

template <typename I>
void diffuse_pull(int64_t n, const I* indptr, const I* indices, const float* weights,
                  int64_t b, const float* x0, const float* p, int steps, float decay,
                  float restart, float edge_threshold, float node_threshold, float* out,
                  float* work, int num_threads) {
  const int threads = resolve_threads(num_threads);
  if (restart == 0.f) p = nullptr;
  if (steps <= 0) {
    std::memcpy(out, x0, sizeof(float) * static_cast<size_t>(n * b));
    return;
  }
  // Ping-pong so that the last step lands in `out`.
  const float* src = x0;
  for (int s = 0; s < steps; ++s) {
    float* dst = ((steps - 1 - s) % 2 == 0) ? out : work;
    if (b == 1)
      step_b1(n, indptr, indices, weights, src, p, decay, restart, edge_threshold,
              node_threshold, dst, threads);
    else
      step_batched(n, indptr, indices, weights, b, src, p, decay, restart, edge_threshold,
                   node_threshold, dst, threads);
    src = dst;
  }
}

template <typename I>
void transpose_csr(int64_t n_rows, int64_t n_cols, const I* indptr, const I* indices,
                   const float* weights, I* t_indptr, I* t_indices, float* t_weights) {
  const int64_t nnz = indptr[n_rows];
  std::fill(t_indptr, t_indptr + n_cols + 1, I(0));
  for (int64_t e = 0; e < nnz; ++e) ++t_indptr[static_cast<int64_t>(indices[e]) + 1];
  for (int64_t c = 0; c < n_cols; ++c) t_indptr[c + 1] += t_indptr[c];
  std::vector<I> next(t_indptr, t_indptr + n_cols);
  for (int64_t r = 0; r < n_rows; ++r) {
    for (int64_t e = indptr[r]; e < indptr[r + 1]; ++e) {
      const int64_t dst = next[indices[e]]++;
      t_indices[dst] = static_cast<I>(r);
      t_weights[dst] = weights[e];
    }
  }
}

#define ASMR_INSTANTIATE(I)                                                                  \
  template void diffuse_pull<I>(int64_t, const I*, const I*, const float*, int64_t,          \
                                const float*, const float*, int, float, float, float, float, \
                                float*, float*, int);                                        \
  template void transpose_csr<I>(int64_t, int64_t, const I*, const I*, const float*, I*, I*, \
                                 float*);
ASMR_INSTANTIATE(int32_t)
ASMR_INSTANTIATE(int64_t)
#undef ASMR_INSTANTIATE

}  // namespace asmr
