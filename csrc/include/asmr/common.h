// Shared helpers for the CPU kernels: thread counts and half-precision loads.
#pragma once
#include <cstdint>

namespace asmr {

// Threads a kernel will use: 0 means all cores OpenMP sees.
int resolve_threads(int num_threads);

// True when the CPU kernels were compiled with OpenMP.
bool openmp_enabled();

// Position of the first NaN or infinite entry (or negative one, unless
// allow_negative) of a[0, n), or -1.
int64_t first_bad_float(const float* a, int64_t n, bool allow_negative);

}  // namespace asmr
