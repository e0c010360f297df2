#include "asmr/common.h"

#include <algorithm>
#include <cstring>

#ifdef _OPENMP
#include <omp.h>
#endif

namespace asmr {

int resolve_threads(int num_threads) {
#ifdef _OPENMP
  return num_threads > 0 ? num_threads : omp_get_max_threads();
#else
  (void)num_threads;
  return 1;
#endif
}

bool openmp_enabled() {
#ifdef _OPENMP
  return true;
#else
  return false;
#endif
}

namespace {

// NaN or infinite: all exponent bits set.
inline uint32_t not_finite(float v) {
  uint32_t bits;
  std::memcpy(&bits, &v, sizeof bits);
  return static_cast<uint32_t>((bits & 0x7f800000u) == 0x7f800000u);
}

}  // namespace

int64_t first_bad_float(const float* a, int64_t n, bool allow_negative) {
  // Blocks without an early exit vectorise; the first bad block is searched again.
  constexpr int64_t kBlock = 4096;
  for (int64_t i0 = 0; i0 < n; i0 += kBlock) {
    const int64_t i1 = std::min(n, i0 + kBlock);
    uint32_t bad = 0;
    if (allow_negative) {
      for (int64_t i = i0; i < i1; ++i) bad |= not_finite(a[i]);
    } else {
      for (int64_t i = i0; i < i1; ++i) bad |= not_finite(a[i]) | static_cast<uint32_t>(a[i] < 0.f);
    }
    if (bad)
      for (int64_t i = i0; i < i1; ++i)
        if (not_finite(a[i]) || (!allow_negative && a[i] < 0.f)) return i;
  }
  return -1;
}

}  // namespace asmr
