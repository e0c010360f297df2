// Spreading activation from sparse seeds, one thread block per query.
//
// The rule is spread_push's (see spread.h and csrc/cpu/spread.cpp): per step,
// every active node u pushes w * (decay * x[u]) along its out-edges with
// w >= edge_threshold and w != 0; every target v not yet active keeps the best
// candidate (strength(u) * w, ties: smaller u); then all touched nodes get
// x = pushed + restart * seed, zeroed under node_threshold, and a node whose
// x > 0 for the first time takes hop = step and its best candidate as
// (strength, predecessor).
//
// Each block owns a slice of the workspace: an open-addressing hash table of
// C slots (C a power of two) keyed by node, with per-slot state, a list of the
// touched slots and two lists of active slots. Slot state is clean whenever
// the key is empty (the block clears its slice once, then resets the slots it
// touched after each query), so inserting needs no initialisation and cannot
// race with concurrent updates of the same slot. A query that inserts more
// than C / 2 nodes overflows and is reported (count = -1) for a retry.
#include <cuda_runtime.h>

#include <cub/block/block_scan.cuh>
#include <cstdint>

#include "common.cuh"

namespace asmr {
namespace cuda {

using detail::fail;

namespace {

constexpr int kSpreadBlock = 256;
constexpr int32_t kEmpty = -1;

struct Slice {
  int32_t* key;
  float* nxt;       // value being accumulated for the next step
  float* cur;       // value after the last finished step
  float* seed;      // summed seed score (0 for non-seeds)
  float* strength;  // recall-path strength, fixed when the node first becomes active
  int32_t* hop;     // -1 until the node first becomes active
  int32_t* pred;    // predecessor node, -1 for seeds
  unsigned long long* cand;  // best candidate so far: strength bits << 32 | ~u
  int32_t* touched;          // slots in insertion order (C entries: every insert fits)
  int32_t* active0;          // active slots, ping-pong (C / 2 entries each)
  int32_t* active1;
};

constexpr size_t kAlign = 256;
__host__ __device__ inline size_t align_up(size_t v) { return (v + kAlign - 1) / kAlign * kAlign; }

// Bytes of one block's slice for capacity C.
__host__ __device__ inline size_t slice_bytes(int64_t C) {
  const size_t c = static_cast<size_t>(C);
  return align_up(c * 8) /* cand */ + 8 * align_up(c * 4) /* key..pred, touched */ +
         2 * align_up(c / 2 * 4) /* active */;
}

__device__ inline Slice slice_at(void* workspace, int64_t C, int64_t block) {
  const size_t c = static_cast<size_t>(C);
  char* p = static_cast<char*>(workspace) + static_cast<size_t>(block) * slice_bytes(C);
  Slice s;
  s.cand = reinterpret_cast<unsigned long long*>(p);
  p += align_up(c * 8);
  s.key = reinterpret_cast<int32_t*>(p);
  p += align_up(c * 4);
  s.nxt = reinterpret_cast<float*>(p);
  p += align_up(c * 4);
  s.cur = reinterpret_cast<float*>(p);
  p += align_up(c * 4);
  s.seed = reinterpret_cast<float*>(p);
  p += align_up(c * 4);
  s.strength = reinterpret_cast<float*>(p);
  p += align_up(c * 4);
  s.hop = reinterpret_cast<int32_t*>(p);
  p += align_up(c * 4);
  s.pred = reinterpret_cast<int32_t*>(p);
  p += align_up(c * 4);
  s.touched = reinterpret_cast<int32_t*>(p);
  p += align_up(c * 4);
  s.active0 = reinterpret_cast<int32_t*>(p);
  p += align_up(c / 2 * 4);
  s.active1 = reinterpret_cast<int32_t*>(p);
  return s;
}

__device__ __forceinline__ void clear_slot(const Slice& s, int32_t h) {
  s.key[h] = kEmpty;
  s.nxt[h] = 0.f;
  s.cur[h] = 0.f;
  s.seed[h] = 0.f;
  s.strength[h] = 0.f;
  s.hop[h] = -1;
  s.pred[h] = -1;
  s.cand[h] = 0ull;  // below every real candidate: those have ~u != 0 for u < 2^32 - 1
}

__device__ __forceinline__ uint32_t mix(uint32_t x) {
  x ^= x >> 16;
  x *= 0x85ebca6bu;
  x ^= x >> 13;
  x *= 0xc2b2ae35u;
  x ^= x >> 16;
  return x;
}

// Slot of `node`, inserting it if absent; -1 (and *overflow set) when the
// query has outgrown the table. Keys only go from empty to a node during a
// query, so a stale read is either resolved by the CAS or already final.
__device__ int32_t find_or_insert(const Slice& s, uint32_t mask, int32_t node,
                                  unsigned int* touched_count, volatile int* overflow) {
  uint32_t h = mix(static_cast<uint32_t>(node)) & mask;
  for (uint32_t probe = 0; probe <= mask; ++probe) {
    int32_t k = s.key[h];
    if (k == node) return static_cast<int32_t>(h);
    if (k == kEmpty) {
      k = atomicCAS(&s.key[h], kEmpty, node);
      if (k == kEmpty) {
        const unsigned int t = atomicAdd(touched_count, 1u);
        s.touched[t] = static_cast<int32_t>(h);  // t <= mask: each slot is inserted once
        if (t >= (mask + 1) / 2) *overflow = 1;
        return static_cast<int32_t>(h);
      }
      if (k == node) return static_cast<int32_t>(h);
    }
    h = (h + 1) & mask;
  }
  *overflow = 1;
  return -1;
}

template <typename I>
struct Params {
  const I* indptr;
  const I* indices;
  const float* weights;
  int64_t num_queries;
  const int64_t* query_ids;
  const int64_t* seed_ptr;
  const I* seed_nodes;
  const float* seed_scores;
  int depth;
  float decay, restart, edge_threshold, node_threshold;
  int64_t capacity;
  void* workspace;
  int64_t* count;
  int64_t* edges;
  int64_t* st_node;
  float* st_activation;
  int32_t* st_hop;
  float* st_strength;
  int64_t* st_predecessor;
};

template <typename I>
__global__ void __launch_bounds__(kSpreadBlock, 4) spread_kernel(const Params<I> P) {
  using Scan = cub::BlockScan<long long, kSpreadBlock>;
  __shared__ typename Scan::TempStorage scan_tmp;
  // One chunk of active nodes: edge offsets (exclusive scan of degrees) and
  // what their edges need.
  __shared__ long long s_off[kSpreadBlock];
  __shared__ long long s_begin[kSpreadBlock];
  __shared__ float s_x[kSpreadBlock];
  __shared__ float s_str[kSpreadBlock];
  __shared__ int32_t s_node[kSpreadBlock];
  __shared__ unsigned int s_touched;
  __shared__ unsigned int s_nactive;
  __shared__ unsigned int s_nnext;
  __shared__ unsigned int s_nout;
  __shared__ int s_overflow;

  const int tid = threadIdx.x;
  const int64_t C = P.capacity;
  const uint32_t mask = static_cast<uint32_t>(C - 1);
  const int64_t H = C / 2;
  const Slice S = slice_at(P.workspace, C, blockIdx.x);
  volatile int* overflow = &s_overflow;

  for (int64_t h = tid; h < C; h += kSpreadBlock) clear_slot(S, static_cast<int32_t>(h));
  __syncthreads();

  for (int64_t qi = blockIdx.x; qi < P.num_queries; qi += gridDim.x) {
    const int64_t q = P.query_ids ? P.query_ids[qi] : qi;
    if (tid == 0) {
      s_touched = 0;
      s_nactive = 0;
      s_nnext = 0;
      s_nout = 0;
      s_overflow = 0;
    }
    long long edges = 0;  // kept by thread 0
    __syncthreads();

    // Seeds: duplicates add up; all of them have hop 0.
    const int64_t sb = P.seed_ptr[q], se = P.seed_ptr[q + 1];
    for (int64_t k = sb + tid; k < se; k += kSpreadBlock) {
      const int32_t h = find_or_insert(S, mask, static_cast<int32_t>(P.seed_nodes[k]),
                                       &s_touched, overflow);
      if (h < 0) break;
      atomicAdd(&S.seed[h], P.seed_scores[k]);
      S.hop[h] = 0;
    }
    __syncthreads();
    if (!s_overflow) {
      const unsigned int nt = s_touched;  // the seed slots, each once
      for (unsigned int i = tid; i < nt; i += kSpreadBlock) {
        const int32_t h = S.touched[i];
        const float v = S.seed[h];
        S.cur[h] = v;
        S.strength[h] = v;
        S.nxt[h] = P.restart * v;
        if (v > 0.f) S.active0[atomicAdd(&s_nactive, 1u)] = h;
      }
    }
    __syncthreads();

    int in = 0;
    for (int step = 1; step <= P.depth; ++step) {
      const unsigned int nactive = s_nactive;
      const bool stop = nactive == 0 || s_overflow != 0;
      __syncthreads();  // everyone has read the counters before they change
      if (stop) break;  // nothing active: later steps would change nothing
      const int32_t* act = in ? S.active1 : S.active0;

      // Push along the out-edges of the active nodes, one chunk of nodes at a
      // time, one thread per edge (balanced whatever the degrees).
      for (unsigned int base = 0; base < nactive; base += kSpreadBlock) {
        const unsigned int cnt = nactive - base < kSpreadBlock ? nactive - base : kSpreadBlock;
        long long deg = 0;
        if (static_cast<unsigned int>(tid) < cnt) {
          const int32_t h = act[base + tid];
          const int32_t u = S.key[h];
          const long long b = static_cast<long long>(P.indptr[u]);
          deg = static_cast<long long>(P.indptr[static_cast<int64_t>(u) + 1]) - b;
          s_begin[tid] = b;
          s_x[tid] = P.decay * S.cur[h];  // pushed along each edge times w, as on the CPU
          s_str[tid] = S.strength[h];
          s_node[tid] = u;
        }
        long long off, total;
        Scan(scan_tmp).ExclusiveSum(deg, off, total);
        s_off[tid] = off;
        __syncthreads();
        if (tid == 0) edges += total;
        for (long long i = tid; i < total; i += kSpreadBlock) {
          if (*overflow) break;
          // The node whose edge range holds i: the last j with s_off[j] <= i.
          int lo = 0, hi = static_cast<int>(cnt) - 1;
          while (lo < hi) {
            const int mid = (lo + hi + 1) >> 1;
            if (s_off[mid] <= i)
              lo = mid;
            else
              hi = mid - 1;
          }
          const int64_t e = s_begin[lo] + (i - s_off[lo]);
          const float w = P.weights[e];
          if (!(w >= P.edge_threshold) || w == 0.f) continue;
          const int32_t h = find_or_insert(S, mask, static_cast<int32_t>(P.indices[e]),
                                           &s_touched, overflow);
          if (h < 0) break;
          atomicAdd(&S.nxt[h], w * s_x[lo]);
          // hop only changes between steps, so this read is stable.
          if (S.hop[h] < 0) {
            const float c = s_str[lo] * w;
            const unsigned long long key =
                (static_cast<unsigned long long>(__float_as_uint(c)) << 32) |
                static_cast<unsigned long long>(~static_cast<uint32_t>(s_node[lo]));
            atomicMax(&S.cand[h], key);
          }
        }
        __syncthreads();  // the chunk's shared arrays and scan storage are reused
      }
      if (s_overflow) break;  // uniform: stable since the barrier above

      // Finish the step over every touched slot.
      const unsigned int nt = s_touched;
      int32_t* next = in ? S.active0 : S.active1;
      for (unsigned int i = tid; i < nt; i += kSpreadBlock) {
        const int32_t h = S.touched[i];
        float v = S.nxt[h];
        if (v < P.node_threshold) v = 0.f;
        S.cur[h] = v;
        S.nxt[h] = P.restart * S.seed[h];
        if (v > 0.f) {
          next[atomicAdd(&s_nnext, 1u)] = h;
          if (S.hop[h] < 0) {
            const unsigned long long c = S.cand[h];
            S.hop[h] = step;
            S.strength[h] = __uint_as_float(static_cast<uint32_t>(c >> 32));
            S.pred[h] = static_cast<int32_t>(~static_cast<uint32_t>(c));
          }
        }
      }
      __syncthreads();
      if (tid == 0) {
        s_nactive = s_nnext;
        s_nnext = 0;
      }
      in ^= 1;
      __syncthreads();
    }

    // Write the reached nodes (hop >= 0) to this query's staging range.
    const bool ovf = s_overflow != 0;  // stable: last change was before a barrier
    const unsigned int nt = s_touched < C ? s_touched : static_cast<unsigned int>(C);
    if (!ovf) {
      const int64_t o0 = qi * H;
      for (unsigned int i = tid; i < nt; i += kSpreadBlock) {
        const int32_t h = S.touched[i];
        const int32_t hop = S.hop[h];
        if (hop < 0) continue;
        const int64_t o = o0 + atomicAdd(&s_nout, 1u);
        P.st_node[o] = S.key[h];
        P.st_activation[o] = S.cur[h];
        P.st_hop[o] = hop;
        P.st_strength[o] = S.strength[h];
        P.st_predecessor[o] = S.pred[h];
      }
    }
    __syncthreads();
    if (tid == 0) {
      P.count[qi] = ovf ? -1 : static_cast<int64_t>(s_nout);
      P.edges[qi] = edges;
    }
    for (unsigned int i = tid; i < nt; i += kSpreadBlock) clear_slot(S, S.touched[i]);
    __syncthreads();
  }
}

__global__ void gather_kernel(int64_t num_queries, const int64_t* __restrict__ count,
                              const int64_t* __restrict__ src_offset,
                              const int64_t* __restrict__ dst_offset,
                              const int64_t* __restrict__ st_node,
                              const float* __restrict__ st_activation,
                              const int32_t* __restrict__ st_hop,
                              const float* __restrict__ st_strength,
                              const int64_t* __restrict__ st_predecessor, int64_t* node,
                              float* activation, int32_t* hop, float* strength,
                              int64_t* predecessor) {
  for (int64_t qi = blockIdx.x; qi < num_queries; qi += gridDim.x) {
    const int64_t c = count[qi];
    if (c <= 0) continue;
    const int64_t src = src_offset[qi], d = dst_offset[qi];
    for (int64_t k = threadIdx.x; k < c; k += blockDim.x) {
      node[d + k] = st_node[src + k];
      activation[d + k] = st_activation[src + k];
      hop[d + k] = st_hop[src + k];
      strength[d + k] = st_strength[src + k];
      predecessor[d + k] = st_predecessor[src + k];
    }
  }
}

template <typename I>
const char* spread_impl(const Params<I>& P, int64_t num_blocks, cudaStream_t s) {
  spread_kernel<I><<<static_cast<unsigned>(num_blocks), kSpreadBlock, 0, s>>>(P);
  return detail::launched("spread");
}

}  // namespace

size_t spread_workspace_bytes(int64_t num_blocks, int64_t capacity) {
  if (num_blocks <= 0 || capacity <= 0) return 0;
  return static_cast<size_t>(num_blocks) * slice_bytes(capacity);
}

const char* spread(int device, int index_type, int64_t n, const void* indptr,
                   const void* indices, const float* weights, int64_t num_queries,
                   const int64_t* query_ids, const int64_t* seed_ptr, const void* seed_nodes,
                   const float* seed_scores, int depth, float decay, float restart,
                   float edge_threshold, float node_threshold, int64_t capacity,
                   int64_t num_blocks, void* workspace, size_t workspace_bytes, int64_t* count,
                   int64_t* edges, int64_t* st_node, float* st_activation, int32_t* st_hop,
                   float* st_strength, int64_t* st_predecessor, uintptr_t stream) {
  if (n < 0 || n > INT32_MAX) return fail("spread: the CUDA kernel needs 0 <= n < 2^31 nodes");
  if (capacity < 2 || capacity > (int64_t(1) << 30) || (capacity & (capacity - 1)) != 0)
    return fail("spread: capacity must be a power of two in [2, 2^30]");
  if (depth < 0) return fail("spread: depth must be >= 0");
  if (num_queries <= 0) return nullptr;
  if (num_blocks <= 0 || num_blocks > INT32_MAX)
    return fail("spread: num_blocks must be in [1, 2^31)");
  if (workspace == nullptr || workspace_bytes < spread_workspace_bytes(num_blocks, capacity))
    return fail("spread: workspace too small (ask spread_workspace_bytes)");
  ASMR_DEVICE_GUARD(device);
  const cudaStream_t s = detail::as_stream(stream);
  const auto launch = [&](auto index_tag) {
    using I = decltype(index_tag);
    const Params<I> P{static_cast<const I*>(indptr), static_cast<const I*>(indices), weights,
                      num_queries, query_ids, seed_ptr, static_cast<const I*>(seed_nodes),
                      seed_scores, depth, decay, restart, edge_threshold, node_threshold,
                      capacity, workspace, count, edges, st_node, st_activation, st_hop,
                      st_strength, st_predecessor};
    return spread_impl(P, num_blocks, s);
  };
  if (index_type == kInt32) return launch(int32_t{});
  if (index_type == kInt64) return launch(int64_t{});
  return fail("spread: index_type must be int32 or int64");
}

const char* spread_gather(int device, int64_t num_queries, const int64_t* count,
                          const int64_t* src, const int64_t* dst, const int64_t* st_node,
                          const float* st_activation, const int32_t* st_hop,
                          const float* st_strength, const int64_t* st_predecessor,
                          int64_t* node, float* activation, int32_t* hop, float* strength,
                          int64_t* predecessor, uintptr_t stream) {
  if (num_queries <= 0) return nullptr;
  ASMR_DEVICE_GUARD(device);
  const unsigned grid =
      static_cast<unsigned>(num_queries < detail::kMaxBlocks ? num_queries : detail::kMaxBlocks);
  gather_kernel<<<grid, 128, 0, detail::as_stream(stream)>>>(
      num_queries, count, src, dst, st_node, st_activation, st_hop, st_strength,
      st_predecessor, node, activation, hop, strength, predecessor);
  return detail::launched("spread_gather");
}

}  // namespace cuda
}  // namespace asmr
