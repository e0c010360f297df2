#include "asmr/pair_cosine.h"

#include <cmath>
#include <cstring>

#include "asmr/common.h"

#if defined(__x86_64__) || defined(_M_X64)
#include <immintrin.h>
#define ASMR_X86 1
#endif

namespace asmr {
namespace {

// IEEE binary16 -> binary32, exact (subnormals, inf and NaN included).
inline float half_to_float(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  uint32_t exp = (h >> 10) & 0x1Fu;
  uint32_t mant = h & 0x3FFu;
  uint32_t bits;
  if (exp == 0x1F) {
    bits = sign | 0x7F800000u | (mant << 13);
  } else if (exp == 0) {
    if (mant == 0) {
      bits = sign;
    } else {  // subnormal: renormalise
      int e = -1;
      do { ++e; mant <<= 1; } while ((mant & 0x400u) == 0);
      bits = sign | (static_cast<uint32_t>(127 - 15 - e) << 23) | ((mant & 0x3FFu) << 13);
    }
  } else {
    bits = sign | ((exp + 112u) << 23) | (mant << 13);
  }
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}

inline float load(const float* p, int64_t i) { return p[i]; }
inline float load(const uint16_t* p, int64_t i) { return half_to_float(p[i]); }

// Portable path: 4 independent accumulators so the loop is not one long chain.
template <typename TC, typename TU>
void dot3_generic(const TC* a, const TU* u, int64_t d, float* dot, float* na, float* nu) {
  float s[4] = {0, 0, 0, 0}, x[4] = {0, 0, 0, 0}, y[4] = {0, 0, 0, 0};
  int64_t i = 0;
  for (; i + 4 <= d; i += 4) {
    for (int k = 0; k < 4; ++k) {
      const float av = load(a, i + k), uv = load(u, i + k);
      s[k] += av * uv;
      x[k] += av * av;
      y[k] += uv * uv;
    }
  }
  for (; i < d; ++i) {
    const float av = load(a, i), uv = load(u, i);
    s[0] += av * uv;
    x[0] += av * av;
    y[0] += uv * uv;
  }
  *dot = (s[0] + s[1]) + (s[2] + s[3]);
  *na = (x[0] + x[1]) + (x[2] + x[3]);
  *nu = (y[0] + y[1]) + (y[2] + y[3]);
}

#ifdef ASMR_X86
// AVX2 + FMA + F16C path, chosen at run time so the installed build stays
// portable (no -march=native).
__attribute__((target("avx2,fma,f16c"))) inline __m256 load8(const float* p) {
  return _mm256_loadu_ps(p);
}
__attribute__((target("avx2,fma,f16c"))) inline __m256 load8(const uint16_t* p) {
  return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
}
__attribute__((target("avx2,fma,f16c"))) inline float hsum(__m256 v) {
  __m128 lo = _mm256_castps256_ps128(v), hi = _mm256_extractf128_ps(v, 1);
  lo = _mm_add_ps(lo, hi);
  lo = _mm_add_ps(lo, _mm_movehl_ps(lo, lo));
  lo = _mm_add_ss(lo, _mm_shuffle_ps(lo, lo, 1));
  return _mm_cvtss_f32(lo);
}

template <typename TC, typename TU>
__attribute__((target("avx2,fma,f16c"))) void dot3_avx2(const TC* a, const TU* u, int64_t d,
                                                      float* dot, float* na, float* nu) {
  __m256 s0 = _mm256_setzero_ps(), s1 = _mm256_setzero_ps();
  __m256 x0 = _mm256_setzero_ps(), x1 = _mm256_setzero_ps();
  __m256 y0 = _mm256_setzero_ps(), y1 = _mm256_setzero_ps();
  int64_t i = 0;
  for (; i + 16 <= d; i += 16) {
    const __m256 a0 = load8(a + i), a1 = load8(a + i + 8);
    const __m256 u0 = load8(u + i), u1 = load8(u + i + 8);
    s0 = _mm256_fmadd_ps(a0, u0, s0);
    s1 = _mm256_fmadd_ps(a1, u1, s1);
    x0 = _mm256_fmadd_ps(a0, a0, x0);
    x1 = _mm256_fmadd_ps(a1, a1, x1);
    y0 = _mm256_fmadd_ps(u0, u0, y0);
    y1 = _mm256_fmadd_ps(u1, u1, y1);
  }
  for (; i + 8 <= d; i += 8) {
    const __m256 a0 = load8(a + i), u0 = load8(u + i);
    s0 = _mm256_fmadd_ps(a0, u0, s0);
    x0 = _mm256_fmadd_ps(a0, a0, x0);
    y0 = _mm256_fmadd_ps(u0, u0, y0);
  }
  float s = hsum(_mm256_add_ps(s0, s1)), x = hsum(_mm256_add_ps(x0, x1)),
        y = hsum(_mm256_add_ps(y0, y1));
  for (; i < d; ++i) {
    const float av = load(a, i), uv = load(u, i);
    s += av * uv;
    x += av * av;
    y += uv * uv;
  }
  *dot = s;
  *na = x;
  *nu = y;
}

bool has_avx2() {
  static const bool ok = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") &&
                         __builtin_cpu_supports("f16c");
  return ok;
}
#endif

inline float finish(float dot, float na, float nu, bool prenormalized) {
  if (prenormalized) return dot;
  const float denom = std::sqrt(na) * std::sqrt(nu);
  return denom > 0.f ? dot / denom : 0.f;
}

template <typename TC, typename TU, typename I, bool kAvx2>
void run(int64_t num_pairs, int64_t d, const TC* claims, const TU* units, const I* claim_idx,
         const I* unit_idx, bool prenormalized, float* out, int threads) {
  constexpr int64_t kAhead = 3;
  const int64_t unit_bytes = d * static_cast<int64_t>(sizeof(TU));
  const int64_t claim_bytes = d * static_cast<int64_t>(sizeof(TC));
#pragma omp parallel for num_threads(threads) schedule(static, 256)
  for (int64_t k = 0; k < num_pairs; ++k) {
    const TC* a = claims + static_cast<int64_t>(claim_idx[k]) * d;
    const TU* u = units + static_cast<int64_t>(unit_idx[k]) * d;
    if (k + kAhead < num_pairs) {  // rows are random: fetch a later pair's rows whole
      const char* nu = reinterpret_cast<const char*>(units + static_cast<int64_t>(unit_idx[k + kAhead]) * d);
      const char* nc = reinterpret_cast<const char*>(claims + static_cast<int64_t>(claim_idx[k + kAhead]) * d);
      for (int64_t off = 0; off < unit_bytes; off += 64) __builtin_prefetch(nu + off);
      for (int64_t off = 0; off < claim_bytes; off += 64) __builtin_prefetch(nc + off);
    }
    float dot, na, nu;
#ifdef ASMR_X86
    if (kAvx2)
      dot3_avx2(a, u, d, &dot, &na, &nu);
    else
#endif
      dot3_generic(a, u, d, &dot, &na, &nu);
    out[k] = finish(dot, na, nu, prenormalized);
  }
}

}  // namespace

template <typename TC, typename TU, typename I>
void pair_cosine(int64_t num_pairs, int64_t d, const TC* claims, const TU* units,
                 const I* claim_idx, const I* unit_idx, bool prenormalized, float* out,
                 int num_threads) {
  const int threads = resolve_threads(num_threads);
#ifdef ASMR_X86
  if (has_avx2()) {
    run<TC, TU, I, true>(num_pairs, d, claims, units, claim_idx, unit_idx, prenormalized, out,
                         threads);
    return;
  }
#endif
  run<TC, TU, I, false>(num_pairs, d, claims, units, claim_idx, unit_idx, prenormalized, out,
                        threads);
}

#define ASMR_INSTANTIATE(TC, TU, I)                                                       \
  template void pair_cosine<TC, TU, I>(int64_t, int64_t, const TC*, const TU*, const I*, \
                                       const I*, bool, float*, int);
ASMR_INSTANTIATE(float, float, int32_t)
ASMR_INSTANTIATE(float, float, int64_t)
ASMR_INSTANTIATE(float, uint16_t, int32_t)
ASMR_INSTANTIATE(float, uint16_t, int64_t)
ASMR_INSTANTIATE(uint16_t, float, int32_t)
ASMR_INSTANTIATE(uint16_t, float, int64_t)
ASMR_INSTANTIATE(uint16_t, uint16_t, int32_t)
ASMR_INSTANTIATE(uint16_t, uint16_t, int64_t)
#undef ASMR_INSTANTIATE

}  // namespace asmr
