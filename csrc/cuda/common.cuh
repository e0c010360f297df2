// Helpers shared by the CUDA launchers (not part of the public API).
#pragma once
#include <cuda_runtime.h>

#include <cstdint>

#include "asmr/cuda.h"

namespace asmr {
namespace cuda {
namespace detail {

constexpr int kBlock = 256;
// Grid-stride loops cover any size; this only bounds the launch.
constexpr int64_t kMaxBlocks = int64_t(1) << 20;

// Formats "<what>: <CUDA error string>" into a thread-local buffer.
const char* fail(const char* what, cudaError_t err);
// Copies msg into the thread-local buffer.
const char* fail(const char* msg);

// Makes `device` current when it is not. It is not switched back afterwards:
// callers run inside their framework's scope for that device, and switching
// the thread to another device would move the framework's work with it.
class DeviceGuard {
 public:
  explicit DeviceGuard(int device) {
    int current = -1;
    err_ = cudaGetDevice(&current);
    if (err_ == cudaSuccess && current != device) err_ = cudaSetDevice(device);
  }
  DeviceGuard(const DeviceGuard&) = delete;
  DeviceGuard& operator=(const DeviceGuard&) = delete;
  cudaError_t error() const { return err_; }

 private:
  cudaError_t err_;
};

inline cudaStream_t as_stream(uintptr_t s) { return reinterpret_cast<cudaStream_t>(s); }

inline unsigned grid_for(int64_t threads, int block = kBlock) {
  int64_t blocks = (threads + block - 1) / block;
  if (blocks < 1) blocks = 1;
  if (blocks > kMaxBlocks) blocks = kMaxBlocks;
  return static_cast<unsigned>(blocks);
}

// Smallest power of two >= v, for 1 <= v <= 2^30.
inline int pow2_at_least(int64_t v) {
  int p = 1;
  while (p < v && p < (1 << 30)) p <<= 1;
  return p;
}

// Lanes [base, base + G) of the warp, where G is a power of two <= 32.
template <int G>
__device__ __forceinline__ unsigned group_mask() {
  static_assert(G >= 1 && G <= 32 && (G & (G - 1)) == 0, "G must be a power of two <= 32");
  const unsigned base = threadIdx.x & 31u & ~unsigned(G - 1);
  return (0xffffffffu >> (32 - G)) << base;
}

// Checked launch: the launch error (bad configuration, no kernel image for
// this device...) or nullptr.
inline const char* launched(const char* what) {
  const cudaError_t err = cudaGetLastError();
  return err == cudaSuccess ? nullptr : fail(what, err);
}

}  // namespace detail
}  // namespace cuda
}  // namespace asmr

// Returns from the enclosing launcher when the device cannot be made current.
#define ASMR_DEVICE_GUARD(device)                                             \
  ::asmr::cuda::detail::DeviceGuard asmr_guard_(device);                      \
  if (asmr_guard_.error() != cudaSuccess)                                     \
    return ::asmr::cuda::detail::fail("cannot select the CUDA device", asmr_guard_.error())

#define ASMR_CUDA_TRY(what, expr)                                             \
  do {                                                                        \
    const cudaError_t asmr_err_ = (expr);                                     \
    if (asmr_err_ != cudaSuccess) return ::asmr::cuda::detail::fail(what, asmr_err_); \
  } while (0)
