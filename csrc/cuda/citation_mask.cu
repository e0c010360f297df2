// Applying citation token masks to logits on the GPU (see cuda.h).
#include <cuda_fp16.h>

#include <cmath>

#include "common.cuh"

namespace asmr {
namespace cuda {
namespace {

using detail::fail;
using detail::kBlock;

template <typename T> __device__ __forceinline__ T neg_inf();
template <> __device__ __forceinline__ float neg_inf<float>() { return -INFINITY; }
template <> __device__ __forceinline__ __half neg_inf<__half>() { return __ushort_as_half(0xFC00u); }

// One thread a logit: the 32 threads of a warp read the same mask word (one
// broadcast load), so the pass costs one read of the mask and one of the
// logits; only masked logits are written.
template <typename T>
__global__ void apply_mask_kernel(int64_t batch, int64_t vocab, T* logits, int64_t ld,
                                  const int32_t* mask, int64_t words, const int32_t* rows) {
  const int64_t covered = vocab < words * 32 ? vocab : words * 32;
  const int64_t total = batch * vocab;
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < total;
       i += int64_t(gridDim.x) * blockDim.x) {
    const int64_t r = i / vocab, t = i - r * vocab;
    const int64_t mr = rows ? rows[r] : r;
    bool allowed = false;
    if (t < covered) allowed = (static_cast<uint32_t>(mask[mr * words + (t >> 5)]) >> (t & 31)) & 1u;
    if (!allowed) logits[r * ld + t] = neg_inf<T>();
  }
}

}  // namespace

const char* apply_token_bitmask(int device, int real_type, int64_t batch, int64_t vocab, void* logits,
                                int64_t logits_ld, const int32_t* mask, int64_t words,
                                const int32_t* rows, uintptr_t stream) {
  if (batch <= 0 || vocab <= 0) return nullptr;
  if (logits_ld < vocab || words < 0) return fail("apply_token_bitmask: need vocab <= logits_ld and words >= 0");
  ASMR_DEVICE_GUARD(device);
  const cudaStream_t s = detail::as_stream(stream);
  const unsigned grid = detail::grid_for(batch * vocab);
  if (real_type == kFloat32)
    apply_mask_kernel<float><<<grid, kBlock, 0, s>>>(batch, vocab, static_cast<float*>(logits), logits_ld,
                                                     mask, words, rows);
  else if (real_type == kFloat16)
    apply_mask_kernel<__half><<<grid, kBlock, 0, s>>>(batch, vocab, static_cast<__half*>(logits), logits_ld,
                                                      mask, words, rows);
  else
    return fail("apply_token_bitmask: logits must be float32 or float16");
  return detail::launched("apply_token_bitmask");
}

}  // namespace cuda
}  // namespace asmr
