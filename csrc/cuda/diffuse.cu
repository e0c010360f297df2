// Dense diffusion over CSR (pull over the CSR of A^T) and the device transpose.
#include <cuda_runtime.h>

#include <cub/device/device_radix_sort.cuh>
#include <cub/version.cuh>
#include <cstdint>
#include <type_traits>

#include "common.cuh"

namespace asmr {
namespace cuda {

using detail::fail;
using detail::group_mask;
using detail::kBlock;

namespace {

// ---- transpose ---------------------------------------------------------------

template <typename I>
__global__ void iota_kernel(I* v, int64_t len) {
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < len;
       i += stride)
    v[i] = static_cast<I>(i);
}

// perm lists edge ids sorted (stably) by target; each becomes entry k of the
// transpose, whose column is the edge's source row.
template <typename I>
__global__ void transpose_fill(int64_t n, int64_t nnz, const I* __restrict__ indptr,
                               const float* __restrict__ weights, const I* __restrict__ perm,
                               I* __restrict__ t_indices, float* __restrict__ t_weights) {
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t k = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; k < nnz;
       k += stride) {
    const int64_t e = static_cast<int64_t>(perm[k]);
    // Largest row r with indptr[r] <= e; empty rows before it share its start.
    int64_t lo = 0, hi = n - 1;
    while (lo < hi) {
      const int64_t mid = lo + (hi - lo + 1) / 2;
      if (static_cast<int64_t>(indptr[mid]) <= e)
        lo = mid;
      else
        hi = mid - 1;
    }
    t_indices[k] = static_cast<I>(lo);
    t_weights[k] = weights[e];
  }
}

// t_indptr[j] = first position of a key >= j in the sorted targets.
template <typename I, typename U>
__global__ void transpose_indptr(int64_t n, int64_t nnz, const U* __restrict__ sorted_keys,
                                 I* __restrict__ t_indptr) {
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t j = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; j <= n;
       j += stride) {
    int64_t lo = 0, hi = nnz;
    while (lo < hi) {
      const int64_t mid = lo + (hi - lo) / 2;
      if (static_cast<int64_t>(sorted_keys[mid]) < j)
        lo = mid + 1;
      else
        hi = mid;
    }
    t_indptr[j] = static_cast<I>(lo);
  }
}

constexpr size_t kAlign = 256;
inline size_t align_up(size_t v) { return (v + kAlign - 1) / kAlign * kAlign; }

int key_bits(int64_t n, int max_bits) {
  int bits = 1;
  while (bits < max_bits && (int64_t(1) << bits) < n) ++bits;
  return bits;
}

#if CUB_VERSION >= 200300
using num_items_t = int64_t;
#else
using num_items_t = int;  // older CUB sorts take an int count
#endif

// Workspace layout: sorted keys | edge ids in | edge ids out | CUB scratch.
// With workspace == nullptr only *need is computed.
template <typename I>
const char* transpose_impl(int64_t n, int64_t nnz, const I* indptr, const I* indices,
                           const float* weights, I* t_indptr, I* t_indices, float* t_weights,
                           void* workspace, size_t have, size_t* need, cudaStream_t stream) {
  using U = std::make_unsigned_t<I>;
  const size_t arr = align_up(static_cast<size_t>(nnz) * sizeof(I));
  char* base = static_cast<char*>(workspace);
  U* keys_out = workspace ? reinterpret_cast<U*>(base) : nullptr;
  I* ids_in = workspace ? reinterpret_cast<I*>(base + arr) : nullptr;
  I* ids_out = workspace ? reinterpret_cast<I*>(base + 2 * arr) : nullptr;
  const int end_bit = key_bits(n, static_cast<int>(8 * sizeof(I)));
  size_t cub_bytes = 0;
  // Targets are in [0, n), so reading them as unsigned keeps their order.
  ASMR_CUDA_TRY("transpose: radix sort size",
                cub::DeviceRadixSort::SortPairs(nullptr, cub_bytes,
                                                reinterpret_cast<const U*>(indices), keys_out,
                                                ids_in, ids_out, static_cast<num_items_t>(nnz),
                                                0, end_bit, stream));
  *need = 3 * arr + align_up(cub_bytes);
  if (workspace == nullptr) return nullptr;
  if (have < *need) return fail("transpose_csr: workspace too small (ask transpose_workspace)");
  if (nnz > 0) {
    iota_kernel<<<detail::grid_for(nnz), kBlock, 0, stream>>>(ids_in, nnz);
    if (const char* e = detail::launched("transpose: iota")) return e;
    ASMR_CUDA_TRY("transpose: radix sort",
                  cub::DeviceRadixSort::SortPairs(base + 3 * arr, cub_bytes,
                                                  reinterpret_cast<const U*>(indices), keys_out,
                                                  ids_in, ids_out, static_cast<num_items_t>(nnz),
                                                  0, end_bit, stream));
    transpose_fill<<<detail::grid_for(nnz), kBlock, 0, stream>>>(n, nnz, indptr, weights,
                                                                  ids_out, t_indices, t_weights);
    if (const char* e = detail::launched("transpose: fill")) return e;
  }
  transpose_indptr<<<detail::grid_for(n + 1), kBlock, 0, stream>>>(n, nnz, keys_out, t_indptr);
  return detail::launched("transpose: indptr");
}

// ---- diffusion steps ---------------------------------------------------------

__device__ __forceinline__ float finish(float acc, float pv, float decay, float restart,
                                        float node_threshold) {
  const float v = decay * acc + restart * pv;
  return v < node_threshold ? 0.f : v;
}

// b == 1: a group of G lanes per node splits its in-edges, then reduces.
template <typename I, int G>
__global__ void __launch_bounds__(kBlock, 4)
    pull_b1(int64_t n, const I* __restrict__ indptr, const I* __restrict__ indices,
            const float* __restrict__ weights, const float* __restrict__ x,
            const float* __restrict__ p, float decay, float restart, float edge_threshold,
            float node_threshold, float* __restrict__ out) {
  const int lane = threadIdx.x & (G - 1);
  const unsigned mask = group_mask<G>();
  const int64_t groups = static_cast<int64_t>(gridDim.x) * (blockDim.x / G);
  for (int64_t j = (static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x) / G; j < n;
       j += groups) {
    const int64_t begin = static_cast<int64_t>(indptr[j]);
    const int64_t end = static_cast<int64_t>(indptr[j + 1]);
    float acc = 0.f;
    for (int64_t e = begin + lane; e < end; e += G) {
      const float w = weights[e];
      if (w >= edge_threshold && w != 0.f) acc += w * x[static_cast<int64_t>(indices[e])];
    }
#pragma unroll
    for (int off = G / 2; off > 0; off >>= 1) acc += __shfl_down_sync(mask, acc, off, G);
    if (lane == 0) out[j] = finish(acc, p ? p[j] : 0.f, decay, restart, node_threshold);
  }
}

template <int V>
__device__ __forceinline__ void load_vec(const float* src, float (&v)[V]) {
  if constexpr (V == 4) {
    const float4 t = *reinterpret_cast<const float4*>(src);
    v[0] = t.x;
    v[1] = t.y;
    v[2] = t.z;
    v[3] = t.w;
  } else if constexpr (V == 2) {
    const float2 t = *reinterpret_cast<const float2*>(src);
    v[0] = t.x;
    v[1] = t.y;
  } else {
    v[0] = *src;
  }
}

template <int V>
__device__ __forceinline__ void store_vec(float* dst, const float (&v)[V]) {
  if constexpr (V == 4)
    *reinterpret_cast<float4*>(dst) = make_float4(v[0], v[1], v[2], v[3]);
  else if constexpr (V == 2)
    *reinterpret_cast<float2*>(dst) = make_float2(v[0], v[1]);
  else
    *dst = v[0];
}

// b > 1: a group of L lanes per node, each lane owning V consecutive columns.
// The group fetches L in-edges at a time (coalesced) and broadcasts them, so
// every edge costs one row read of x.
template <typename I, int L, int V>
__global__ void __launch_bounds__(kBlock, 4)
    pull_cols(int64_t n, const I* __restrict__ indptr, const I* __restrict__ indices,
              const float* __restrict__ weights, int64_t b, const float* __restrict__ x,
              const float* __restrict__ p, float decay, float restart, float edge_threshold,
              float node_threshold, float* __restrict__ out) {
  const int lane = threadIdx.x & (L - 1);
  const unsigned mask = group_mask<L>();
  const int64_t units = b / V;
  const int64_t groups = static_cast<int64_t>(gridDim.x) * (blockDim.x / L);
  for (int64_t j = (static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x) / L; j < n;
       j += groups) {
    const int64_t begin = static_cast<int64_t>(indptr[j]);
    const int64_t end = static_cast<int64_t>(indptr[j + 1]);
    for (int64_t u0 = 0; u0 < units; u0 += L) {
      const int64_t col = (u0 + lane) * V;
      const bool mine = u0 + lane < units;
      float acc[V];
#pragma unroll
      for (int i = 0; i < V; ++i) acc[i] = 0.f;
      for (int64_t e0 = begin; e0 < end; e0 += L) {
        float w = 0.f;
        long long src = 0;
        if (e0 + lane < end) {
          w = weights[e0 + lane];
          src = static_cast<long long>(indices[e0 + lane]);
          if (!(w >= edge_threshold)) w = 0.f;
        }
        const int cnt = static_cast<int>(end - e0 < L ? end - e0 : L);
        for (int k = 0; k < cnt; ++k) {
          const float wk = __shfl_sync(mask, w, k, L);
          const long long sk = __shfl_sync(mask, src, k, L);
          if (wk != 0.f && mine) {
            float xv[V];
            load_vec<V>(x + sk * b + col, xv);
#pragma unroll
            for (int i = 0; i < V; ++i) acc[i] += wk * xv[i];
          }
        }
      }
      if (mine) {
        float pv[V];
        if (p) {
          load_vec<V>(p + j * b + col, pv);
        } else {
#pragma unroll
          for (int i = 0; i < V; ++i) pv[i] = 0.f;
        }
        float r[V];
#pragma unroll
        for (int i = 0; i < V; ++i) r[i] = finish(acc[i], pv[i], decay, restart, node_threshold);
        store_vec<V>(out + j * b + col, r);
      }
    }
  }
}

template <typename I, int G>
void launch_b1(int64_t n, const I* ip, const I* ix, const float* w, const float* x,
               const float* p, float decay, float restart, float et, float nt, float* out,
               cudaStream_t s) {
  pull_b1<I, G><<<detail::grid_for(n * G), kBlock, 0, s>>>(n, ip, ix, w, x, p, decay, restart,
                                                           et, nt, out);
}

template <typename I, int L, int V>
void launch_cols(int64_t n, const I* ip, const I* ix, const float* w, int64_t b, const float* x,
                 const float* p, float decay, float restart, float et, float nt, float* out,
                 cudaStream_t s) {
  pull_cols<I, L, V><<<detail::grid_for(n * L), kBlock, 0, s>>>(n, ip, ix, w, b, x, p, decay,
                                                                restart, et, nt, out);
}

template <typename I, int V>
void dispatch_cols(int lanes, int64_t n, const I* ip, const I* ix, const float* w, int64_t b,
                   const float* x, const float* p, float decay, float restart, float et,
                   float nt, float* out, cudaStream_t s) {
  switch (lanes) {
    case 1: launch_cols<I, 1, V>(n, ip, ix, w, b, x, p, decay, restart, et, nt, out, s); break;
    case 2: launch_cols<I, 2, V>(n, ip, ix, w, b, x, p, decay, restart, et, nt, out, s); break;
    case 4: launch_cols<I, 4, V>(n, ip, ix, w, b, x, p, decay, restart, et, nt, out, s); break;
    case 8: launch_cols<I, 8, V>(n, ip, ix, w, b, x, p, decay, restart, et, nt, out, s); break;
    case 16: launch_cols<I, 16, V>(n, ip, ix, w, b, x, p, decay, restart, et, nt, out, s); break;
    default: launch_cols<I, 32, V>(n, ip, ix, w, b, x, p, decay, restart, et, nt, out, s); break;
  }
}

template <typename I>
void dispatch_b1(int lanes, int64_t n, const I* ip, const I* ix, const float* w, const float* x,
                 const float* p, float decay, float restart, float et, float nt, float* out,
                 cudaStream_t s) {
  switch (lanes) {
    case 1: launch_b1<I, 1>(n, ip, ix, w, x, p, decay, restart, et, nt, out, s); break;
    case 2: launch_b1<I, 2>(n, ip, ix, w, x, p, decay, restart, et, nt, out, s); break;
    case 4: launch_b1<I, 4>(n, ip, ix, w, x, p, decay, restart, et, nt, out, s); break;
    case 8: launch_b1<I, 8>(n, ip, ix, w, x, p, decay, restart, et, nt, out, s); break;
    case 16: launch_b1<I, 16>(n, ip, ix, w, x, p, decay, restart, et, nt, out, s); break;
    default: launch_b1<I, 32>(n, ip, ix, w, x, p, decay, restart, et, nt, out, s); break;
  }
}

template <typename I>
const char* diffuse_impl(int64_t n, int64_t nnz, const I* ip, const I* ix, const float* w,
                         int64_t b, const float* x0, const float* p, int steps, float decay,
                         float restart, float et, float nt, float* out, float* work,
                         cudaStream_t s) {
  if (n <= 0 || b <= 0) return nullptr;
  if (restart == 0.f) p = nullptr;
  if (steps <= 0) {
    ASMR_CUDA_TRY("diffuse: copy",
                  cudaMemcpyAsync(out, x0, sizeof(float) * static_cast<size_t>(n * b),
                                  cudaMemcpyDeviceToDevice, s));
    return nullptr;
  }
  if (steps > 1 && work == nullptr) return fail("diffuse: work is required when steps > 1");
  int vec = 1, lanes;
  if (b == 1) {
    // Lanes per node ~ the average in-degree.
    const int64_t avg = (nnz + n - 1) / n;
    lanes = avg >= 32 ? 32 : detail::pow2_at_least(avg < 1 ? 1 : avg);
  } else {
    const uintptr_t bits = reinterpret_cast<uintptr_t>(x0) | reinterpret_cast<uintptr_t>(p) |
                           reinterpret_cast<uintptr_t>(out) | reinterpret_cast<uintptr_t>(work);
    if (b % 4 == 0 && bits % 16 == 0)
      vec = 4;
    else if (b % 2 == 0 && bits % 8 == 0)
      vec = 2;
    const int64_t units = b / vec;
    lanes = units >= 32 ? 32 : detail::pow2_at_least(units);
  }
  const float* src = x0;
  for (int step = 0; step < steps; ++step) {
    // Ping-pong so that the last step lands in out.
    float* dst = ((steps - 1 - step) % 2 == 0) ? out : work;
    if (b == 1)
      dispatch_b1<I>(lanes, n, ip, ix, w, src, p, decay, restart, et, nt, dst, s);
    else if (vec == 4)
      dispatch_cols<I, 4>(lanes, n, ip, ix, w, b, src, p, decay, restart, et, nt, dst, s);
    else if (vec == 2)
      dispatch_cols<I, 2>(lanes, n, ip, ix, w, b, src, p, decay, restart, et, nt, dst, s);
    else
      dispatch_cols<I, 1>(lanes, n, ip, ix, w, b, src, p, decay, restart, et, nt, dst, s);
    if (const char* e = detail::launched("diffuse")) return e;
    src = dst;
  }
  return nullptr;
}

}  // namespace

const char* transpose_workspace(int device, int index_type, int64_t n, int64_t nnz,
                                size_t* bytes) {
  *bytes = 0;
  if (n < 0 || nnz < 0) return fail("transpose_workspace: negative size");
#if CUB_VERSION < 200300
  if (nnz > INT32_MAX) return fail("transpose: this CUB version sorts at most 2^31 - 1 edges");
#endif
  ASMR_DEVICE_GUARD(device);
  if (index_type == kInt32)
    return transpose_impl<int32_t>(n, nnz, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr,
                                   nullptr, 0, bytes, 0);
  if (index_type == kInt64)
    return transpose_impl<int64_t>(n, nnz, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr,
                                   nullptr, 0, bytes, 0);
  return fail("transpose_workspace: index_type must be int32 or int64");
}

const char* transpose_csr(int device, int index_type, int64_t n, int64_t nnz,
                          const void* indptr, const void* indices, const float* weights,
                          void* t_indptr, void* t_indices, float* t_weights, void* workspace,
                          size_t workspace_bytes, uintptr_t stream) {
  if (n < 0 || nnz < 0) return fail("transpose_csr: negative size");
  if (workspace == nullptr) return fail("transpose_csr: workspace is required");
#if CUB_VERSION < 200300
  if (nnz > INT32_MAX) return fail("transpose: this CUB version sorts at most 2^31 - 1 edges");
#endif
  ASMR_DEVICE_GUARD(device);
  const cudaStream_t s = detail::as_stream(stream);
  size_t need = 0;
  if (index_type == kInt32)
    return transpose_impl<int32_t>(n, nnz, static_cast<const int32_t*>(indptr),
                                   static_cast<const int32_t*>(indices), weights,
                                   static_cast<int32_t*>(t_indptr),
                                   static_cast<int32_t*>(t_indices), t_weights, workspace,
                                   workspace_bytes, &need, s);
  if (index_type == kInt64)
    return transpose_impl<int64_t>(n, nnz, static_cast<const int64_t*>(indptr),
                                   static_cast<const int64_t*>(indices), weights,
                                   static_cast<int64_t*>(t_indptr),
                                   static_cast<int64_t*>(t_indices), t_weights, workspace,
                                   workspace_bytes, &need, s);
  return fail("transpose_csr: index_type must be int32 or int64");
}

const char* diffuse(int device, int index_type, int64_t n, int64_t nnz, const void* t_indptr,
                    const void* t_indices, const float* t_weights, int64_t b, const float* x0,
                    const float* p, int steps, float decay, float restart, float edge_threshold,
                    float node_threshold, float* out, float* work, uintptr_t stream) {
  ASMR_DEVICE_GUARD(device);
  const cudaStream_t s = detail::as_stream(stream);
  if (index_type == kInt32)
    return diffuse_impl<int32_t>(n, nnz, static_cast<const int32_t*>(t_indptr),
                                 static_cast<const int32_t*>(t_indices), t_weights, b, x0, p,
                                 steps, decay, restart, edge_threshold, node_threshold, out, work,
                                 s);
  if (index_type == kInt64)
    return diffuse_impl<int64_t>(n, nnz, static_cast<const int64_t*>(t_indptr),
                                 static_cast<const int64_t*>(t_indices), t_weights, b, x0, p,
                                 steps, decay, restart, edge_threshold, node_threshold, out, work,
                                 s);
  return fail("diffuse: index_type must be int32 or int64");
}

}  // namespace cuda
}  // namespace asmr
