// Cosine of index pairs of two row matrices, rows read in place.
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstdint>

#include "common.cuh"

namespace asmr {
namespace cuda {

using detail::fail;
using detail::group_mask;
using detail::kBlock;

namespace {

// V consecutive values of a row as floats. V == 4 needs 4 * sizeof(T)
// alignment, which the launcher checks.
template <int V>
__device__ __forceinline__ void load(const float* p, float (&v)[V]) {
  if constexpr (V == 4) {
    const float4 t = *reinterpret_cast<const float4*>(p);
    v[0] = t.x;
    v[1] = t.y;
    v[2] = t.z;
    v[3] = t.w;
  } else {
#pragma unroll
    for (int i = 0; i < V; ++i) v[i] = p[i];
  }
}

template <int V>
__device__ __forceinline__ void load(const __half* p, float (&v)[V]) {
  if constexpr (V == 4) {
    const uint2 t = *reinterpret_cast<const uint2*>(p);
    const float2 a = __half22float2(*reinterpret_cast<const __half2*>(&t.x));
    const float2 b = __half22float2(*reinterpret_cast<const __half2*>(&t.y));
    v[0] = a.x;
    v[1] = a.y;
    v[2] = b.x;
    v[3] = b.y;
  } else {
#pragma unroll
    for (int i = 0; i < V; ++i) v[i] = __half2float(p[i]);
  }
}

// A group of L lanes per pair; lane l reads values [l * V, l * V + V) of
// every L * V-wide stripe of both rows.
template <typename TC, typename TU, typename I, int L, int V>
__global__ void __launch_bounds__(kBlock, 4)
    pair_cosine_kernel(int64_t m, int64_t d, const TC* __restrict__ claims, int64_t ldc,
                       const TU* __restrict__ units, int64_t ldu,
                       const I* __restrict__ claim_idx, const I* __restrict__ unit_idx,
                       bool prenormalized, float* __restrict__ out) {
  const int lane = threadIdx.x & (L - 1);
  const unsigned mask = group_mask<L>();
  const int64_t groups = static_cast<int64_t>(gridDim.x) * (blockDim.x / L);
  for (int64_t k = (static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x) / L; k < m;
       k += groups) {
    const TC* a = claims + static_cast<int64_t>(claim_idx[k]) * ldc;
    const TU* u = units + static_cast<int64_t>(unit_idx[k]) * ldu;
    float s = 0.f, x = 0.f, y = 0.f;
    for (int64_t j = static_cast<int64_t>(lane) * V; j < d; j += static_cast<int64_t>(L) * V) {
      float av[V], uv[V];
      load<V>(a + j, av);
      load<V>(u + j, uv);
#pragma unroll
      for (int i = 0; i < V; ++i) {
        s += av[i] * uv[i];
        x += av[i] * av[i];
        y += uv[i] * uv[i];
      }
    }
#pragma unroll
    for (int off = L / 2; off > 0; off >>= 1) {
      s += __shfl_xor_sync(mask, s, off, L);
      x += __shfl_xor_sync(mask, x, off, L);
      y += __shfl_xor_sync(mask, y, off, L);
    }
    if (lane == 0) {
      if (prenormalized) {
        out[k] = s;
      } else {
        // IEEE sqrt, product and division whatever the fast-math flags, as on the CPU.
        const float den = __fmul_rn(__fsqrt_rn(x), __fsqrt_rn(y));
        out[k] = den > 0.f ? __fdiv_rn(s, den) : 0.f;
      }
    }
  }
}

template <typename TC, typename TU, typename I, int V>
const char* launch(int lanes, int64_t m, int64_t d, const TC* c, int64_t ldc, const TU* u,
                   int64_t ldu, const I* ci, const I* ui, bool pre, float* out, cudaStream_t s) {
  switch (lanes) {
    case 8:
      pair_cosine_kernel<TC, TU, I, 8, V>
          <<<detail::grid_for(m * 8), kBlock, 0, s>>>(m, d, c, ldc, u, ldu, ci, ui, pre, out);
      break;
    case 16:
      pair_cosine_kernel<TC, TU, I, 16, V>
          <<<detail::grid_for(m * 16), kBlock, 0, s>>>(m, d, c, ldc, u, ldu, ci, ui, pre, out);
      break;
    default:
      pair_cosine_kernel<TC, TU, I, 32, V>
          <<<detail::grid_for(m * 32), kBlock, 0, s>>>(m, d, c, ldc, u, ldu, ci, ui, pre, out);
      break;
  }
  return detail::launched("pair_cosine");
}

template <typename T>
bool aligned4(const T* p, int64_t ld) {
  return reinterpret_cast<uintptr_t>(p) % (4 * sizeof(T)) == 0 && ld % 4 == 0;
}

template <typename TC, typename TU, typename I>
const char* run(int64_t m, int64_t d, const void* claims, int64_t ldc, const void* units,
                int64_t ldu, const void* ci, const void* ui, bool pre, float* out,
                cudaStream_t s) {
  const auto* c = static_cast<const TC*>(claims);
  const auto* u = static_cast<const TU*>(units);
  const int v = (d % 4 == 0 && aligned4(c, ldc) && aligned4(u, ldu)) ? 4 : 1;
  const int64_t units_per_row = (d + v - 1) / v;
  const int lanes = units_per_row > 16 ? 32 : units_per_row > 8 ? 16 : 8;
  const I* cidx = static_cast<const I*>(ci);
  const I* uidx = static_cast<const I*>(ui);
  if (v == 4) return launch<TC, TU, I, 4>(lanes, m, d, c, ldc, u, ldu, cidx, uidx, pre, out, s);
  return launch<TC, TU, I, 1>(lanes, m, d, c, ldc, u, ldu, cidx, uidx, pre, out, s);
}

template <typename TC, typename TU>
const char* run_index(int index_type, int64_t m, int64_t d, const void* c, int64_t ldc,
                      const void* u, int64_t ldu, const void* ci, const void* ui, bool pre,
                      float* out, cudaStream_t s) {
  if (index_type == kInt32) return run<TC, TU, int32_t>(m, d, c, ldc, u, ldu, ci, ui, pre, out, s);
  if (index_type == kInt64) return run<TC, TU, int64_t>(m, d, c, ldc, u, ldu, ci, ui, pre, out, s);
  return fail("pair_cosine: index_type must be int32 or int64");
}

template <typename TC>
const char* run_units(int units_type, int index_type, int64_t m, int64_t d, const void* c,
                      int64_t ldc, const void* u, int64_t ldu, const void* ci, const void* ui,
                      bool pre, float* out, cudaStream_t s) {
  if (units_type == kFloat32)
    return run_index<TC, float>(index_type, m, d, c, ldc, u, ldu, ci, ui, pre, out, s);
  if (units_type == kFloat16)
    return run_index<TC, __half>(index_type, m, d, c, ldc, u, ldu, ci, ui, pre, out, s);
  return fail("pair_cosine: units_type must be float32 or float16");
}

__global__ void fill_zero(float* out, int64_t m) {
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < m;
       i += stride)
    out[i] = 0.f;
}

}  // namespace

const char* pair_cosine(int device, int claims_type, int units_type, int index_type,
                        int64_t num_pairs, int64_t d, const void* claims, int64_t claims_ld,
                        const void* units, int64_t units_ld, const void* claim_idx,
                        const void* unit_idx, bool prenormalized, float* out,
                        uintptr_t stream) {
  if (num_pairs <= 0) return nullptr;
  if (d < 0 || claims_ld < d || units_ld < d)
    return fail("pair_cosine: need 0 <= d <= claims_ld and d <= units_ld");
  ASMR_DEVICE_GUARD(device);
  const cudaStream_t s = detail::as_stream(stream);
  if (d == 0) {  // empty rows: cosine 0 (and dot 0)
    fill_zero<<<detail::grid_for(num_pairs), kBlock, 0, s>>>(out, num_pairs);
    return detail::launched("pair_cosine");
  }
  if (claims_type == kFloat32)
    return run_units<float>(units_type, index_type, num_pairs, d, claims, claims_ld, units,
                            units_ld, claim_idx, unit_idx, prenormalized, out, s);
  if (claims_type == kFloat16)
    return run_units<__half>(units_type, index_type, num_pairs, d, claims, claims_ld, units,
                             units_ld, claim_idx, unit_idx, prenormalized, out, s);
  return fail("pair_cosine: claims_type must be float32 or float16");
}

}  // namespace cuda
}  // namespace asmr
