#include "asmr/diffuse.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <new>
#include <utility>
#include <vector>

#include <sys/mman.h>

#include "asmr/common.h"

#define ASMR_INLINE inline __attribute__((always_inline))
#if defined(__x86_64__) || defined(__i386__)
#define ASMR_X86 1
#define ASMR_AVX2 __attribute__((target("avx2,fma")))
#else
#define ASMR_X86 0
#define ASMR_AVX2
#endif

namespace asmr {
namespace {

// Edges prefetched ahead in the batched pull (each one a row of x): enough
// misses in flight to keep a core's line fill buffers busy.
constexpr int64_t kAhead = 24;

bool cpu_has_avx2() {
#if ASMR_X86
  static const bool yes = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  return yes;
#else
  return false;
#endif
}

// What one step needs besides the graph.
struct Step {
  int64_t n, b;
  const float* x;
  const float* p;  // null when restart == 0
  float decay, restart, edge_threshold, node_threshold;
  float* out;
};

// w if w >= threshold else 0, without a branch (the outcome is data-dependent).
ASMR_INLINE float select_weight(float w, float threshold) {
  uint32_t bits;
  std::memcpy(&bits, &w, sizeof bits);
  bits &= 0u - static_cast<uint32_t>(w >= threshold);
  std::memcpy(&w, &bits, sizeof bits);
  return w;
}

// o = decay * acc + restart * p, thresholded (acc may be o).
ASMR_INLINE void finish_rows(const float* acc, const float* pr, int64_t len, const Step& s,
                             float* o) {
  const float decay = s.decay, restart = s.restart, nt = s.node_threshold;
  if (pr) {
#pragma omp simd
    for (int64_t c = 0; c < len; ++c) {
      const float v = decay * acc[c] + restart * pr[c];
      o[c] = v < nt ? 0.f : v;
    }
  } else {
#pragma omp simd
    for (int64_t c = 0; c < len; ++c) {
      const float v = decay * acc[c];
      o[c] = v < nt ? 0.f : v;
    }
  }
}

// ---- pull over the receiver CSR -------------------------------------------------

// Rows [j0, j1) for a single column. One accumulator, as in SciPy: the loop is
// bound by memory bandwidth, and splitting the sum invites the vectorizer to
// emulate gathers with shuffles, which is slower. kMask: edge_threshold > 0
// (weights are >= 0, so otherwise no edge is masked).
template <typename I, bool kMask>
void pull_b1(const Step& s, const I* indptr, const I* indices, const float* weights, int64_t j0,
             int64_t j1) {
  const float* __restrict__ x = s.x;
  const float et = s.edge_threshold;
  const float decay = s.decay, restart = s.restart, nt = s.node_threshold;
  const float* __restrict__ p = s.p;
  float* __restrict__ out = s.out;
  for (int64_t j = j0; j < j1; ++j) {
    float acc = 0.f;
    for (int64_t e = indptr[j], end = indptr[j + 1]; e < end; ++e) {
      const float w = weights[e];
      acc += (kMask ? select_weight(w, et) : w) * x[indices[e]];
    }
    float v = decay * acc;
    if (p) v += restart * p[j];
    out[j] = v < nt ? 0.f : v;
  }
}

// Rows [j0, j1) for b columns (W > 0: b == W known at compile time). Each edge
// reads one contiguous row of x; with kPrefetch the row kAhead edges ahead is
// prefetched, so that several misses are in flight instead of one.
template <typename I, int W, bool kPrefetch>
ASMR_INLINE void pull_rows_body(const Step& s, const I* indptr, const I* indices,
                                const float* weights, int64_t j0, int64_t j1, float* scratch) {
  const int64_t b = W > 0 ? W : s.b;
  float local[W > 0 ? W : 1];
  float* __restrict__ acc = W > 0 ? local : scratch;
  const float* __restrict__ x = s.x;
  const float et = s.edge_threshold;
  const int64_t last = indptr[s.n] - 1;
  for (int64_t j = j0; j < j1; ++j) {
#pragma omp simd
    for (int64_t c = 0; c < b; ++c) acc[c] = 0.f;
    const int64_t end = indptr[j + 1];
    for (int64_t e = indptr[j]; e < end; ++e) {
      if (kPrefetch) {
        const int64_t f = e + kAhead < last ? e + kAhead : last;
        const float* r = x + static_cast<int64_t>(indices[f]) * b;
        for (int64_t c = 0; c < b; c += 16) __builtin_prefetch(r + c);
        __builtin_prefetch(r + b - 1);
      }
      // A branch, not a select: a masked edge then costs no miss on its row.
      const float w = weights[e];
      if (!(w >= et) || w == 0.f) continue;
      const float* __restrict__ xr = x + static_cast<int64_t>(indices[e]) * b;
#pragma omp simd
      for (int64_t c = 0; c < b; ++c) acc[c] += w * xr[c];
    }
    finish_rows(acc, s.p ? s.p + j * b : nullptr, b, s, s.out + j * b);
  }
}

template <typename I, int W, bool kPrefetch>
void pull_rows(const Step& s, const I* indptr, const I* indices, const float* weights,
               int64_t j0, int64_t j1, float* scratch) {
  pull_rows_body<I, W, kPrefetch>(s, indptr, indices, weights, j0, j1, scratch);
}

template <typename I, int W, bool kPrefetch>
ASMR_AVX2 void pull_rows_avx2(const Step& s, const I* indptr, const I* indices,
                              const float* weights, int64_t j0, int64_t j1, float* scratch) {
  pull_rows_body<I, W, kPrefetch>(s, indptr, indices, weights, j0, j1, scratch);
}

template <typename I>
using PullFn = void (*)(const Step&, const I*, const I*, const float*, int64_t, int64_t, float*);

template <typename I, int W>
PullFn<I> pick_pull_w(bool prefetch, bool avx2) {
  if (avx2) return prefetch ? pull_rows_avx2<I, W, true> : pull_rows_avx2<I, W, false>;
  return prefetch ? pull_rows<I, W, true> : pull_rows<I, W, false>;
}

template <typename I>
PullFn<I> pick_pull(int64_t b, bool prefetch) {
  const bool avx2 = cpu_has_avx2();
  switch (b) {
    case 2: return pick_pull_w<I, 2>(prefetch, avx2);
    case 4: return pick_pull_w<I, 4>(prefetch, avx2);
    case 8: return pick_pull_w<I, 8>(prefetch, avx2);
    case 16: return pick_pull_w<I, 16>(prefetch, avx2);
    case 32: return pick_pull_w<I, 32>(prefetch, avx2);
    case 64: return pick_pull_w<I, 64>(prefetch, avx2);
    default: return pick_pull_w<I, 0>(prefetch, avx2);
  }
}

template <typename I>
void pull_step(const Step& s, const I* indptr, const I* indices, const float* weights,
               int threads) {
  const int64_t n = s.n, b = s.b;
  if (b == 1) {
    constexpr int64_t kChunk = 2048;
    const bool mask = s.edge_threshold > 0.f;
#pragma omp parallel for num_threads(threads) schedule(dynamic, 1)
    for (int64_t j0 = 0; j0 < n; j0 += kChunk) {
      if (mask)
        pull_b1<I, true>(s, indptr, indices, weights, j0, std::min(n, j0 + kChunk));
      else
        pull_b1<I, false>(s, indptr, indices, weights, j0, std::min(n, j0 + kChunk));
    }
    return;
  }
  // Prefetching pays once x no longer fits in L2.
  const bool prefetch = n * b * int64_t(sizeof(float)) > (int64_t(1) << 20);
  const PullFn<I> fn = pick_pull<I>(b, prefetch);
  const int64_t chunk = std::max<int64_t>(16, 8192 / b);
#pragma omp parallel num_threads(threads)
  {
    std::vector<float> scratch(static_cast<size_t>(b));
#pragma omp for schedule(dynamic, 1)
    for (int64_t j0 = 0; j0 < n; j0 += chunk)
      fn(s, indptr, indices, weights, j0, std::min(n, j0 + chunk), scratch.data());
  }
}

// ---- tiled --------------------------------------------------------------------

struct Tiles {
  int dst_shift, src_shift;
  int64_t num_dst_tiles, num_src_tiles;
  const int64_t* group_ptr;
  const uint32_t* packed;
  const float* weights;
};

// One destination tile: zero its output slice, accumulate every source tile's
// group into it (the slice and the source tile's x stay in L2), then finish
// the slice in place.
template <int W, bool kMask>
ASMR_INLINE void tile_body(const Tiles& t, const Step& s, int64_t dt) {
  const int64_t b = W > 0 ? W : s.b;
  const int64_t j0 = dt << t.dst_shift;
  const int64_t rows = std::min(int64_t(1) << t.dst_shift, s.n - j0);
  float* __restrict__ o = s.out + j0 * b;
  std::memset(o, 0, sizeof(float) * static_cast<size_t>(rows * b));
  const int ss = t.src_shift;
  const uint32_t smask = ss >= 32 ? ~0u : (uint32_t(1) << ss) - 1;
  const float et = s.edge_threshold;
  const int64_t* gp = t.group_ptr + dt * t.num_src_tiles;
  const uint32_t* __restrict__ packed = t.packed;
  const float* __restrict__ weights = t.weights;
  const int64_t slice = (int64_t(1) << ss) * b;  // floats of x per source tile
  for (int64_t st = 0; st < t.num_src_tiles; ++st) {
    const int64_t e0 = gp[st], e1 = gp[st + 1];
    if (e0 == e1) continue;
    const float* __restrict__ xs = s.x + st * slice;
    if (W == 1) {
      // While this group runs, stream the x slice of the next non-empty group
      // into L2: its first touches would otherwise be random misses.
      int64_t nx = st + 1;
      while (nx < t.num_src_tiles && gp[nx] == gp[nx + 1]) ++nx;
      const int64_t total = s.n * b;
      const char* pf = reinterpret_cast<const char*>(s.x + std::min(nx * slice, total));
      const char* pf_end = reinterpret_cast<const char*>(s.x + std::min((nx + 1) * slice, total));
      const int64_t lines = (pf_end - pf) / 64;
      constexpr int64_t kBlock = 16;
      const int64_t per_block = lines > 0 ? (lines * kBlock + (e1 - e0) - 1) / (e1 - e0) : 0;
      int64_t e = e0;
      for (; e + kBlock <= e1; e += kBlock) {
        for (int64_t q = 0; q < kBlock; ++q) {
          const uint32_t k = packed[e + q];
          const float w = weights[e + q];
          o[k >> ss] += (kMask ? select_weight(w, et) : w) * xs[k & smask];
        }
        for (int64_t q = 0; q < per_block && pf < pf_end; ++q, pf += 64)
          __builtin_prefetch(pf, 0, 2);
      }
      for (; e < e1; ++e) {
        const uint32_t k = packed[e];
        const float w = weights[e];
        o[k >> ss] += (kMask ? select_weight(w, et) : w) * xs[k & smask];
      }
    } else {
      for (int64_t e = e0; e < e1; ++e) {
        const float w = weights[e];
        if (!(w >= et) || w == 0.f) continue;
        const uint32_t k = packed[e];
        float* __restrict__ orow = o + static_cast<int64_t>(k >> ss) * b;
        const float* __restrict__ xr = xs + static_cast<int64_t>(k & smask) * b;
#pragma omp simd
        for (int64_t c = 0; c < b; ++c) orow[c] += w * xr[c];
      }
    }
  }
  finish_rows(o, s.p ? s.p + j0 * b : nullptr, rows * b, s, o);
}

template <int W, bool kMask>
void tile_default(const Tiles& t, const Step& s, int64_t dt) {
  tile_body<W, kMask>(t, s, dt);
}

template <int W, bool kMask>
ASMR_AVX2 void tile_avx2(const Tiles& t, const Step& s, int64_t dt) {
  tile_body<W, kMask>(t, s, dt);
}

using TileFn = void (*)(const Tiles&, const Step&, int64_t);

TileFn pick_tile(int64_t b, bool mask) {
  const bool avx2 = cpu_has_avx2();
  switch (b) {
    case 1:
      if (mask) return avx2 ? tile_avx2<1, true> : tile_default<1, true>;
      return avx2 ? tile_avx2<1, false> : tile_default<1, false>;
    case 2: return avx2 ? tile_avx2<2, true> : tile_default<2, true>;
    case 4: return avx2 ? tile_avx2<4, true> : tile_default<4, true>;
    case 8: return avx2 ? tile_avx2<8, true> : tile_default<8, true>;
    case 16: return avx2 ? tile_avx2<16, true> : tile_default<16, true>;
    default: return avx2 ? tile_avx2<0, true> : tile_default<0, true>;
  }
}

// Runs `steps` steps of `one(src, dst)`, ping-ponging so that the last lands in out.
template <typename F>
void run_steps(int64_t n, int64_t b, const float* x0, int steps, float* out, float* work, F one) {
  if (steps <= 0) {
    std::memcpy(out, x0, sizeof(float) * static_cast<size_t>(n * b));
    return;
  }
  const float* src = x0;
  for (int s = 0; s < steps; ++s) {
    float* dst = ((steps - 1 - s) % 2 == 0) ? out : work;
    one(src, dst);
    src = dst;
  }
}

// ---- building the layouts -----------------------------------------------------

// Edges per bucket that the second pass of a build sorts in cache.
constexpr int64_t kBucketEdges = int64_t(1) << 15;

// Scratch memory on transparent huge pages where the kernel allows it: a 4 KB
// page fault costs microseconds, and the builds touch tens of megabytes.
template <typename T>
class HugeBuffer {
 public:
  explicit HugeBuffer(size_t n) {
    constexpr size_t kHuge = size_t(2) << 20;
    const size_t bytes = std::max<size_t>(n * sizeof(T), 1);
    const size_t rounded = (bytes + kHuge - 1) / kHuge * kHuge;
    ptr_ = static_cast<T*>(std::aligned_alloc(kHuge, rounded));
    if (!ptr_) throw std::bad_alloc();
#ifdef MADV_HUGEPAGE
    madvise(ptr_, rounded, MADV_HUGEPAGE);
#endif
  }
  ~HugeBuffer() { std::free(ptr_); }
  HugeBuffer(const HugeBuffer&) = delete;
  HugeBuffer& operator=(const HugeBuffer&) = delete;
  T* data() { return ptr_; }

 private:
  T* ptr_;
};

// Stable bucket sort of the edges of an out-CSR (rows i, entries i -> indices[e]):
// bucket(i, j) in [0, num_buckets) picks the bucket, emit(at, i, e) stores edge e
// at position `at` of the bucket order. bucket_ptr gets num_buckets + 1 offsets.
// Rows are cut into one chunk per thread; each chunk counts and then scatters
// with its own cursors, chunk order being row order, so the sort is stable.
template <typename I, typename BucketFn, typename EmitFn>
void bucket_edges(int64_t n_rows, const I* indptr, const I* indices, int64_t num_buckets,
                  BucketFn bucket, EmitFn emit, int64_t* bucket_ptr, int threads) {
  const int64_t nnz = indptr[n_rows];
  const int64_t chunks = std::max<int64_t>(1, std::min<int64_t>(threads, nnz / 65536));
  std::vector<int64_t> row_lo(static_cast<size_t>(chunks + 1));
  for (int64_t c = 0; c < chunks; ++c)
    row_lo[c] = std::lower_bound(indptr, indptr + n_rows + 1, I(nnz / chunks * c)) - indptr;
  row_lo[0] = 0;
  row_lo[chunks] = n_rows;
  std::vector<int64_t> cursor(static_cast<size_t>(chunks * num_buckets), 0);
#pragma omp parallel for num_threads(threads) schedule(static, 1)
  for (int64_t c = 0; c < chunks; ++c) {
    int64_t* cnt = cursor.data() + c * num_buckets;
    for (int64_t i = row_lo[c]; i < row_lo[c + 1]; ++i)
      for (int64_t e = indptr[i], end = indptr[i + 1]; e < end; ++e)
        ++cnt[bucket(i, static_cast<int64_t>(indices[e]))];
  }
  int64_t run = 0;
  for (int64_t g = 0; g < num_buckets; ++g) {
    bucket_ptr[g] = run;
    for (int64_t c = 0; c < chunks; ++c) {
      const int64_t k = cursor[c * num_buckets + g];
      cursor[c * num_buckets + g] = run;
      run += k;
    }
  }
  bucket_ptr[num_buckets] = run;
#pragma omp parallel for num_threads(threads) schedule(static, 1)
  for (int64_t c = 0; c < chunks; ++c) {
    int64_t* cur = cursor.data() + c * num_buckets;
    for (int64_t i = row_lo[c]; i < row_lo[c + 1]; ++i)
      for (int64_t e = indptr[i], end = indptr[i + 1]; e < end; ++e)
        emit(cur[bucket(i, static_cast<int64_t>(indices[e]))]++, i, e);
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
  run_steps(n, b, x0, steps, out, work, [&](const float* src, float* dst) {
    const Step s{n, b, src, p, decay, restart, edge_threshold, node_threshold, dst};
    pull_step(s, indptr, indices, weights, threads);
  });
}

void diffuse_tiled(int64_t n, int dst_shift, int src_shift, const int64_t* group_ptr,
                   const uint32_t* packed, const float* weights, int64_t b, const float* x0,
                   const float* p, int steps, float decay, float restart, float edge_threshold,
                   float node_threshold, float* out, float* work, int num_threads) {
  const int threads = resolve_threads(num_threads);
  if (restart == 0.f) p = nullptr;
  const Tiles t{dst_shift, src_shift, tile_count(n, dst_shift), tile_count(n, src_shift),
                group_ptr, packed, weights};
  const TileFn fn = pick_tile(b, edge_threshold > 0.f);
  run_steps(n, b, x0, steps, out, work, [&](const float* src, float* dst) {
    const Step s{n, b, src, p, decay, restart, edge_threshold, node_threshold, dst};
#pragma omp parallel for num_threads(threads) schedule(dynamic, 1)
    for (int64_t dt = 0; dt < t.num_dst_tiles; ++dt) fn(t, s, dt);
  });
}

template <typename I>
void transpose_csr(int64_t n_rows, int64_t n_cols, const I* indptr, const I* indices,
                   const float* weights, I* t_indptr, I* t_indices, float* t_weights,
                   int num_threads) {
  const int threads = resolve_threads(num_threads);
  const int64_t nnz = indptr[n_rows];
  if (nnz == 0) {
    std::fill(t_indptr, t_indptr + n_cols + 1, I(0));
    return;
  }
  // Column blocks of about kBucketEdges edges (at most 2^16 columns, so that the
  // column offset fits 16 bits).
  int shift = 0;
  while (shift < 16 && (int64_t(2) << shift) * nnz <= kBucketEdges * std::max<int64_t>(n_cols, 1))
    ++shift;
  const int64_t nb = std::max<int64_t>(tile_count(n_cols, shift), 1);
  // Pass 1: sources and weights into t_indices / t_weights, grouped by column block.
  HugeBuffer<uint16_t> low(static_cast<size_t>(nnz));
  std::vector<int64_t> block_ptr(static_cast<size_t>(nb + 1));
  const uint32_t lmask = (uint32_t(1) << shift) - 1;
  bucket_edges(
      n_rows, indptr, indices, nb, [&](int64_t, int64_t j) { return j >> shift; },
      [&](int64_t at, int64_t i, int64_t e) {
        t_indices[at] = static_cast<I>(i);
        t_weights[at] = weights[e];
        low.data()[at] = static_cast<uint16_t>(static_cast<uint32_t>(indices[e]) & lmask);
      },
      block_ptr.data(), threads);
  // Pass 2: within each block, a stable counting sort by column (in cache).
  t_indptr[0] = 0;
#pragma omp parallel num_threads(threads)
  {
    std::vector<int64_t> cnt(static_cast<size_t>(lmask) + 2);
    std::vector<I> src;
    std::vector<float> w;
    std::vector<uint16_t> col;
#pragma omp for schedule(dynamic, 1)
    for (int64_t c = 0; c < nb; ++c) {
      const int64_t e0 = block_ptr[c], e1 = block_ptr[c + 1];
      const int64_t j0 = c << shift, cols = std::min(int64_t(1) << shift, n_cols - j0);
      std::fill(cnt.begin(), cnt.begin() + cols + 1, int64_t(0));
      for (int64_t e = e0; e < e1; ++e) ++cnt[low.data()[e] + 1];
      for (int64_t k = 0; k < cols; ++k) {
        cnt[k + 1] += cnt[k];
        t_indptr[j0 + k + 1] = static_cast<I>(e0 + cnt[k + 1]);
      }
      const size_t m = static_cast<size_t>(e1 - e0);
      src.assign(t_indices + e0, t_indices + e1);
      w.assign(t_weights + e0, t_weights + e1);
      col.assign(low.data() + e0, low.data() + e1);
      for (size_t q = 0; q < m; ++q) {
        const int64_t at = e0 + cnt[col[q]]++;
        t_indices[at] = src[q];
        t_weights[at] = w[q];
      }
    }
  }
}

template <typename I>
void build_tiles(int64_t n, const I* indptr, const I* indices, const float* weights,
                 int dst_shift, int src_shift, int64_t* group_ptr, uint32_t* packed,
                 float* t_weights, int num_threads) {
  const int threads = resolve_threads(num_threads);
  const int64_t ndt = tile_count(n, dst_shift), nst = tile_count(n, src_shift);
  const int ss = src_shift, ds = dst_shift;
  const uint32_t smask = (uint32_t(1) << ss) - 1;
  const uint32_t dmask = ds >= 32 ? ~0u : (uint32_t(1) << ds) - 1;
  // Pass 1: edges into their (destination tile, source tile) group, sources in
  // order; few groups, so each one's output is a sequential stream.
  bucket_edges(
      n, indptr, indices, ndt * nst,
      [&](int64_t i, int64_t j) { return (j >> ds) * nst + (i >> ss); },
      [&](int64_t at, int64_t i, int64_t e) {
        const uint32_t j = static_cast<uint32_t>(indices[e]);
        packed[at] = ((j & dmask) << ss) | (static_cast<uint32_t>(i) & smask);
        t_weights[at] = weights[e];
      },
      group_ptr, threads);
  // Pass 2: sort each group by destination, stably (so sources stay in order
  // within a destination), in cache: an LSD radix sort on the destination
  // offset, 8 bits a pass, so that the cost does not depend on the tile size.
  const int passes = std::max(1, (ds + 7) / 8);
#pragma omp parallel num_threads(threads)
  {
    std::vector<uint32_t> tk;
    std::vector<float> tw;
    int64_t cnt[257];
#pragma omp for schedule(dynamic, 1)
    for (int64_t g = 0; g < ndt * nst; ++g) {
      const int64_t e0 = group_ptr[g], e1 = group_ptr[g + 1];
      const int64_t m = e1 - e0;
      if (m < 2) continue;
      tk.resize(static_cast<size_t>(m));
      tw.resize(static_cast<size_t>(m));
      uint32_t* ka = packed + e0;
      float* wa = t_weights + e0;
      uint32_t* kb = tk.data();
      float* wb = tw.data();
      for (int pass = 0; pass < passes; ++pass) {
        const int shift = ss + 8 * pass;
        if (shift >= 32) break;
        std::fill(cnt, cnt + 257, int64_t(0));
        for (int64_t q = 0; q < m; ++q) ++cnt[((ka[q] >> shift) & 255u) + 1];
        if (cnt[((ka[0] >> shift) & 255u) + 1] == m) continue;  // one digit: already in order
        for (int k = 0; k < 256; ++k) cnt[k + 1] += cnt[k];
        for (int64_t q = 0; q < m; ++q) {
          const int64_t at = cnt[(ka[q] >> shift) & 255u]++;
          kb[at] = ka[q];
          wb[at] = wa[q];
        }
        std::swap(ka, kb);
        std::swap(wa, wb);
      }
      if (ka != packed + e0) {
        std::copy(ka, ka + m, packed + e0);
        std::copy(wa, wa + m, t_weights + e0);
      }
    }
  }
}

#define ASMR_INSTANTIATE(I)                                                                  \
  template void diffuse_pull<I>(int64_t, const I*, const I*, const float*, int64_t,          \
                                const float*, const float*, int, float, float, float, float, \
                                float*, float*, int);                                        \
  template void transpose_csr<I>(int64_t, int64_t, const I*, const I*, const float*, I*, I*, \
                                 float*, int);                                               \
  template void build_tiles<I>(int64_t, const I*, const I*, const float*, int, int, int64_t*, \
                               uint32_t*, float*, int);
ASMR_INSTANTIATE(int32_t)
ASMR_INSTANTIATE(int64_t)
#undef ASMR_INSTANTIATE

}  // namespace asmr
