// Shared helpers for the CPU kernels: thread counts and half-precision loads.
#pragma once
#include <cstdint>

namespace asmr {

// Threads a kernel will use: 0 means all cores OpenMP sees.
int resolve_threads(int num_threads);

// True when the CPU kernels were compiled with OpenMP.
bool openmp_enabled();

}  // namespace asmr
