#include "asmr/buffer_pool.h"

#include <cstdlib>
#include <mutex>
#include <new>
#include <vector>

#if defined(__linux__)
#include <sys/mman.h>
#endif

namespace asmr {
namespace {

constexpr size_t kAlign = size_t(2) << 20;          // one huge page
constexpr size_t kMaxPooled = size_t(512) << 20;    // bytes kept for reuse

struct Pooled {
  void* block;
  size_t capacity;
};

std::mutex mutex;
std::vector<Pooled> pool;
size_t pooled_bytes = 0;

}  // namespace

void* acquire_block(size_t bytes, size_t* capacity) {
  const size_t want = ((bytes ? bytes : 1) + kAlign - 1) / kAlign * kAlign;
  {
    std::lock_guard<std::mutex> lock(mutex);
    // Smallest pooled block that fits and wastes at most half of itself.
    size_t best = pool.size();
    for (size_t i = 0; i < pool.size(); ++i) {
      const size_t c = pool[i].capacity;
      if (c >= want && c <= 2 * want && (best == pool.size() || c < pool[best].capacity)) best = i;
    }
    if (best != pool.size()) {
      Pooled p = pool[best];
      pool[best] = pool.back();
      pool.pop_back();
      pooled_bytes -= p.capacity;
      *capacity = p.capacity;
      return p.block;
    }
  }
  void* block = std::aligned_alloc(kAlign, want);
  if (block == nullptr) throw std::bad_alloc();
#if defined(__linux__) && defined(MADV_HUGEPAGE)
  madvise(block, want, MADV_HUGEPAGE);  // advice only: failure is harmless
#endif
  *capacity = want;
  return block;
}

void release_block(void* block, size_t capacity) {
  if (block == nullptr) return;
  {
    std::lock_guard<std::mutex> lock(mutex);
    if (pooled_bytes + capacity <= kMaxPooled) {
      pool.push_back(Pooled{block, capacity});
      pooled_bytes += capacity;
      return;
    }
  }
  std::free(block);
}

}  // namespace asmr
