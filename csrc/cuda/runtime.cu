// Device discovery, error messages and the device-side input checks.
#include <cuda_runtime.h>

#include <cstdint>
#include <cstring>
#include <string>

#include "common.cuh"

namespace asmr {
namespace cuda {
namespace detail {

namespace {
thread_local std::string message;
}

const char* fail(const char* what, cudaError_t err) {
  message = what;
  message += ": ";
  message += cudaGetErrorString(err);
  return message.c_str();
}

const char* fail(const char* msg) {
  message = msg;
  return message.c_str();
}

}  // namespace detail

using detail::fail;
using detail::kBlock;

const char* device_count(int* count) {
  *count = 0;
  int driver = 0;
  if (cudaDriverGetVersion(&driver) == cudaSuccess && driver == 0)
    return fail("no CUDA device: no CUDA driver is installed");
  int c = 0;
  const cudaError_t err = cudaGetDeviceCount(&c);
  if (err != cudaSuccess) {
    cudaGetLastError();  // not sticky: clear it so later calls start clean
    return fail("no CUDA device", err);
  }
  *count = c;
  return c > 0 ? nullptr : fail("no CUDA device: the runtime sees 0 devices");
}

const char* device_attributes(int device, int* sm_count, int* cc_major, int* cc_minor) {
  ASMR_CUDA_TRY("cudaDeviceGetAttribute",
                cudaDeviceGetAttribute(sm_count, cudaDevAttrMultiProcessorCount, device));
  ASMR_CUDA_TRY("cudaDeviceGetAttribute",
                cudaDeviceGetAttribute(cc_major, cudaDevAttrComputeCapabilityMajor, device));
  ASMR_CUDA_TRY("cudaDeviceGetAttribute",
                cudaDeviceGetAttribute(cc_minor, cudaDevAttrComputeCapabilityMinor, device));
  return nullptr;
}

const char* versions(int* runtime_version, int* driver_version) {
  *runtime_version = 0;
  *driver_version = 0;
  ASMR_CUDA_TRY("cudaRuntimeGetVersion", cudaRuntimeGetVersion(runtime_version));
  ASMR_CUDA_TRY("cudaDriverGetVersion", cudaDriverGetVersion(driver_version));
  return nullptr;
}

const char* synchronize(int device, uintptr_t stream) {
  ASMR_DEVICE_GUARD(device);
  ASMR_CUDA_TRY("cudaStreamSynchronize", cudaStreamSynchronize(detail::as_stream(stream)));
  return nullptr;
}

namespace {

// Positions are kept with an unsigned atomicMin: "none yet" is -1, i.e.
// UINT64_MAX, larger than any position.
__device__ __forceinline__ void record_first(int64_t* slot, bool bad, int64_t i) {
  // One atomic per warp: the lowest bad lane of this iteration.
  const unsigned m = __ballot_sync(0xffffffffu, bad);
  if (m != 0 && (threadIdx.x & 31u) == static_cast<unsigned>(__ffs(m) - 1))
    atomicMin(reinterpret_cast<unsigned long long*>(slot), static_cast<unsigned long long>(i));
}

template <typename I>
__global__ void check_index_init(const I* a, int64_t len, int64_t* status) {
  status[0] = -1;
  status[1] = -1;
  status[2] = 0;
  status[3] = len > 0 ? static_cast<int64_t>(a[0]) : 0;
  status[4] = len > 0 ? static_cast<int64_t>(a[len - 1]) : 0;
}

template <typename I>
__global__ void check_index_kernel(const I* __restrict__ a, int64_t len, int64_t lo, int64_t hi,
                                   int64_t* status) {
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  // Every lane runs the same number of iterations, so the ballots are full-warp.
  const int64_t rounds = (len + stride - 1) / stride;
  long long max_step = 0;
  for (int64_t r = 0; r < rounds; ++r) {
    const int64_t i = r * stride + static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    bool out_of_range = false, decreasing = false;
    if (i < len) {
      const int64_t v = static_cast<int64_t>(a[i]);
      out_of_range = v < lo || v >= hi;
      if (i + 1 < len) {
        const int64_t next = static_cast<int64_t>(a[i + 1]);
        decreasing = next < v;
        // Unsigned difference: defined for any pair, exact when next >= v.
        const unsigned long long step = static_cast<unsigned long long>(next) -
                                        static_cast<unsigned long long>(v);
        if (!decreasing && step > static_cast<unsigned long long>(max_step))
          max_step = step > 0x7fffffffffffffffull ? 0x7fffffffffffffffll
                                                  : static_cast<long long>(step);
      }
    }
    record_first(&status[0], out_of_range, i);
    record_first(&status[1], decreasing, i);
  }
  if (max_step > 0) atomicMax(reinterpret_cast<long long*>(&status[2]), max_step);
}

__global__ void check_real_init(int64_t* status) {
  status[0] = -1;
  status[1] = -1;
}

__global__ void check_real_kernel(const float* __restrict__ a, int64_t len, int64_t* status) {
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  const int64_t rounds = (len + stride - 1) / stride;
  for (int64_t r = 0; r < rounds; ++r) {
    const int64_t i = r * stride + static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    bool non_finite = false, negative = false;
    if (i < len) {
      // Bit tests: immune to fast-math assumptions and to flush-to-zero.
      const unsigned bits = __float_as_uint(a[i]);
      non_finite = (bits & 0x7f800000u) == 0x7f800000u;
      negative = !non_finite && (bits & 0x80000000u) && (bits & 0x7fffffffu);
    }
    record_first(&status[0], non_finite, i);
    record_first(&status[1], negative, i);
  }
}

}  // namespace

const char* check_index(int device, int index_type, const void* a, int64_t len, int64_t lo,
                        int64_t hi, int64_t* status, uintptr_t stream) {
  ASMR_DEVICE_GUARD(device);
  const cudaStream_t s = detail::as_stream(stream);
  const unsigned grid = detail::grid_for(len);
  if (index_type == kInt32) {
    const auto* p = static_cast<const int32_t*>(a);
    check_index_init<<<1, 1, 0, s>>>(p, len, status);
    if (len > 0) check_index_kernel<<<grid, kBlock, 0, s>>>(p, len, lo, hi, status);
  } else if (index_type == kInt64) {
    const auto* p = static_cast<const int64_t*>(a);
    check_index_init<<<1, 1, 0, s>>>(p, len, status);
    if (len > 0) check_index_kernel<<<grid, kBlock, 0, s>>>(p, len, lo, hi, status);
  } else {
    return fail("check_index: index_type must be int32 or int64");
  }
  return detail::launched("check_index");
}

const char* check_real(int device, const float* a, int64_t len, int64_t* status,
                       uintptr_t stream) {
  ASMR_DEVICE_GUARD(device);
  const cudaStream_t s = detail::as_stream(stream);
  check_real_init<<<1, 1, 0, s>>>(status);
  if (len > 0) check_real_kernel<<<detail::grid_for(len), kBlock, 0, s>>>(a, len, status);
  return detail::launched("check_real");
}

}  // namespace cuda
}  // namespace asmr
