// Minimal CPU emulation of the CUDA runtime and device intrinsics used by
// csrc/cuda, for running the kernels' logic without a GPU. Each block runs as
// blockDim.x std::threads; blocks run one after another (so __shared__ can be
// `static`). Warp intrinsics synchronise exactly the lanes named in the mask
// and abort on a lane outside the mask or a deadlock.
#pragma once
#include <algorithm>
#include <atomic>
#include <barrier>
#include <chrono>
#include <condition_variable>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <mutex>
#include <thread>
#include <unordered_map>
#include <utility>
#include <vector>

#define __global__
#define __device__
#define __host__
#define __forceinline__ inline
#define __launch_bounds__(...)
#define __shared__ static

struct dim3 {
  unsigned x, y, z;
  dim3(unsigned x_ = 1, unsigned y_ = 1, unsigned z_ = 1) : x(x_), y(y_), z(z_) {}
};
struct uint3 { unsigned x, y, z; };
struct alignas(8) float2 { float x, y; };
struct alignas(16) float4 { float x, y, z, w; };
struct alignas(8) uint2 { unsigned x, y; };
inline float2 make_float2(float a, float b) { return {a, b}; }
inline float4 make_float4(float a, float b, float c, float d) { return {a, b, c, d}; }

typedef enum cudaError { cudaSuccess = 0, cudaErrorInvalidValue = 1, cudaErrorNoDevice = 100 } cudaError_t;
struct CUstream_st;
typedef CUstream_st* cudaStream_t;
enum cudaMemcpyKind { cudaMemcpyDeviceToDevice = 3 };
enum cudaDeviceAttr { cudaDevAttrMultiProcessorCount = 16, cudaDevAttrComputeCapabilityMajor = 75, cudaDevAttrComputeCapabilityMinor = 76 };

inline const char* cudaGetErrorString(cudaError_t e) { return e == cudaSuccess ? "no error" : "emulated error"; }
inline cudaError_t cudaGetLastError() { return cudaSuccess; }
inline cudaError_t cudaGetDevice(int* d) { *d = 0; return cudaSuccess; }
inline cudaError_t cudaSetDevice(int) { return cudaSuccess; }
inline cudaError_t cudaGetDeviceCount(int* c) { *c = 1; return cudaSuccess; }
inline cudaError_t cudaDriverGetVersion(int* v) { *v = 13000; return cudaSuccess; }
inline cudaError_t cudaRuntimeGetVersion(int* v) { *v = 13000; return cudaSuccess; }
inline cudaError_t cudaStreamSynchronize(cudaStream_t) { return cudaSuccess; }
inline cudaError_t cudaDeviceGetAttribute(int* v, cudaDeviceAttr a, int) {
  *v = a == cudaDevAttrMultiProcessorCount ? 2 : a == cudaDevAttrComputeCapabilityMajor ? 9 : 0;
  return cudaSuccess;
}
inline cudaError_t cudaMemcpyAsync(void* d, const void* s, size_t n, cudaMemcpyKind, cudaStream_t) {
  std::memmove(d, s, n);
  return cudaSuccess;
}

namespace emu {
[[noreturn]] inline void die(const char* what) { std::fprintf(stderr, "EMU FAILURE: %s\n", what); std::fflush(stderr); std::abort(); }

struct Warp {
  std::mutex mu;
  std::condition_variable cv;
  std::unordered_map<unsigned, std::pair<int, uint64_t>> bars;
  uint64_t slots[32];
};
struct Block {
  std::barrier<>* bar;
  std::vector<Warp>* warps;
};
inline thread_local uint3 t_idx, b_idx;
inline thread_local dim3 b_dim, g_dim;
inline thread_local Block* cur = nullptr;
inline unsigned max_grid = 3;  // grid-stride loops make any grid correct; few blocks keep it fast

inline void warp_sync(unsigned mask) {
  const unsigned lane = t_idx.x % 32;
  if (!(mask & (1u << lane))) die("warp intrinsic called by a lane outside its mask");
  Warp& w = (*cur->warps)[t_idx.x / 32];
  std::unique_lock<std::mutex> lk(w.mu);
  auto& st = w.bars[mask];
  const uint64_t gen = st.second;
  if (++st.first == __builtin_popcount(mask)) {
    st.first = 0;
    ++st.second;
    w.cv.notify_all();
  } else if (!w.cv.wait_for(lk, std::chrono::seconds(20), [&] { return st.second != gen; })) {
    die("warp intrinsic deadlock: not every lane of the mask arrived");
  }
}

template <class T>
T exchange(unsigned mask, T v, unsigned src) {
  static_assert(sizeof(T) <= 8, "shuffle of a type wider than 8 bytes");
  Warp& w = (*cur->warps)[t_idx.x / 32];
  warp_sync(mask);
  uint64_t bits = 0;
  std::memcpy(&bits, &v, sizeof(T));
  w.slots[t_idx.x % 32] = bits;
  warp_sync(mask);
  if (!(mask & (1u << src))) die("shuffle reads a lane outside the mask");
  T r;
  bits = w.slots[src];
  std::memcpy(&r, &bits, sizeof(T));
  return r;
}

template <class F, class... A>
void run_grid(const F& f, dim3 grid, dim3 block, A... args) {
  if (block.x == 0 || block.x > 1024) die("block size must be in [1, 1024]");
  if (grid.x == 0) die("empty grid");
  dim3 g(std::min(grid.x, max_grid));
  for (unsigned b = 0; b < g.x; ++b) {
    std::barrier<> bar(block.x);
    std::vector<Warp> warps((block.x + 31) / 32);
    Block blk{&bar, &warps};
    std::vector<std::thread> ts;
    ts.reserve(block.x);
    for (unsigned t = 0; t < block.x; ++t)
      ts.emplace_back([&, t] {
        t_idx = {t, 0, 0};
        b_idx = {b, 0, 0};
        b_dim = block;
        g_dim = g;
        cur = &blk;
        f(args...);
        bar.arrive_and_drop();
      });
    for (auto& th : ts) th.join();
  }
}

// kernel<<<g, b, shm, stream>>>(args) becomes launch([](auto... a) { kernel(a...); }, g, b, shm, stream)(args)
template <class F>
struct Launcher {
  F f;
  dim3 g, b;
  template <class... A>
  void operator()(A... a) const { run_grid(f, g, b, a...); }
};
template <class F>
Launcher<F> launch(F f, dim3 g, dim3 b, size_t = 0, cudaStream_t = nullptr) { return {f, g, b}; }
}  // namespace emu

#define threadIdx (::emu::t_idx)
#define blockIdx (::emu::b_idx)
#define blockDim (::emu::b_dim)
#define gridDim (::emu::g_dim)

inline void __syncthreads() { emu::cur->bar->arrive_and_wait(); }

template <class T> T __shfl_sync(unsigned mask, T v, int src, int width = 32) {
  const unsigned lane = threadIdx.x % 32, base = lane & ~unsigned(width - 1);
  return emu::exchange(mask, v, base + (unsigned(src) & unsigned(width - 1)));
}
template <class T> T __shfl_down_sync(unsigned mask, T v, unsigned delta, int width = 32) {
  const unsigned lane = threadIdx.x % 32;
  const unsigned src = (lane & unsigned(width - 1)) + delta < unsigned(width) ? lane + delta : lane;
  return emu::exchange(mask, v, src);
}
template <class T> T __shfl_xor_sync(unsigned mask, T v, int lane_mask, int width = 32) {
  const unsigned lane = threadIdx.x % 32, base = lane & ~unsigned(width - 1);
  unsigned src = lane ^ unsigned(lane_mask);
  if (src < base || src >= base + unsigned(width)) src = lane;
  return emu::exchange(mask, v, src);
}
inline unsigned __ballot_sync(unsigned mask, int pred) {
  auto& w = (*emu::cur->warps)[threadIdx.x / 32];
  emu::warp_sync(mask);
  w.slots[threadIdx.x % 32] = pred ? 1 : 0;
  emu::warp_sync(mask);
  unsigned r = 0;
  for (unsigned l = 0; l < 32; ++l)
    if ((mask >> l) & 1u) r |= unsigned(w.slots[l] != 0) << l;
  return r;
}
inline int __ffs(unsigned x) { return __builtin_ffs(x); }
inline unsigned __float_as_uint(float f) { unsigned u; std::memcpy(&u, &f, 4); return u; }
inline float __uint_as_float(unsigned u) { float f; std::memcpy(&f, &u, 4); return f; }
inline float __fsqrt_rn(float x) { return std::sqrt(x); }
inline float __fmul_rn(float a, float b) { return a * b; }
inline float __fdiv_rn(float a, float b) { return a / b; }

#define EMU_SEQ __ATOMIC_SEQ_CST
inline int atomicCAS(int* a, int cmp, int val) { __atomic_compare_exchange_n(a, &cmp, val, false, EMU_SEQ, EMU_SEQ); return cmp; }
inline unsigned atomicAdd(unsigned* a, unsigned v) { return __atomic_fetch_add(a, v, EMU_SEQ); }
inline float atomicAdd(float* a, float v) {
  unsigned* p = reinterpret_cast<unsigned*>(a);
  unsigned old = __atomic_load_n(p, EMU_SEQ);
  for (;;) {
    const unsigned want = __float_as_uint(__uint_as_float(old) + v);
    if (__atomic_compare_exchange_n(p, &old, want, false, EMU_SEQ, EMU_SEQ)) return __uint_as_float(old);
  }
}
template <class T> T emu_atomic_max(T* a, T v) {
  T old = __atomic_load_n(a, EMU_SEQ);
  while (old < v && !__atomic_compare_exchange_n(a, &old, v, false, EMU_SEQ, EMU_SEQ)) {}
  return old;
}
template <class T> T emu_atomic_min(T* a, T v) {
  T old = __atomic_load_n(a, EMU_SEQ);
  while (v < old && !__atomic_compare_exchange_n(a, &old, v, false, EMU_SEQ, EMU_SEQ)) {}
  return old;
}
inline unsigned long long atomicMax(unsigned long long* a, unsigned long long v) { return emu_atomic_max(a, v); }
inline long long atomicMax(long long* a, long long v) { return emu_atomic_max(a, v); }
inline unsigned long long atomicMin(unsigned long long* a, unsigned long long v) { return emu_atomic_min(a, v); }
