#include "asmr/spread.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <new>
#include <cstring>
#include <memory>
#include <mutex>
#include <vector>

#include "asmr/common.h"

#ifdef _OPENMP
#include <omp.h>
#endif

namespace asmr {
namespace {

// A growable array of trivially copyable values that, unlike std::vector,
// does not zero what it is about to overwrite.
template <typename T>
class PodBuffer {
 public:
  PodBuffer() = default;
  PodBuffer(const PodBuffer&) = delete;
  PodBuffer& operator=(const PodBuffer&) = delete;
  ~PodBuffer() { std::free(data_); }

  T* data() { return data_; }
  const T* data() const { return data_; }
  size_t size() const { return size_; }
  T& operator[](size_t i) { return data_[i]; }
  const T& operator[](size_t i) const { return data_[i]; }
  bool empty() const { return size_ == 0; }
  T* begin() { return data_; }
  T* end() { return data_ + size_; }
  void clear() { size_ = 0; }

  // Appends `count` uninitialised entries and returns the first.
  T* extend(size_t count) {
    if (size_ + count > capacity_) reserve(std::max(2 * capacity_, size_ + count));
    T* p = data_ + size_;
    size_ += count;
    return p;
  }
  // Room for `total` entries, after which push_unchecked may run that far.
  void ensure(size_t total) {
    if (total > capacity_) reserve(std::max(2 * capacity_, total));
  }
  void push_unchecked(const T& v) { data_[size_++] = v; }

 private:
  void reserve(size_t capacity) {
    T* p = static_cast<T*>(std::realloc(data_, capacity * sizeof(T)));
    if (p == nullptr) throw std::bad_alloc();
    data_ = p;
    capacity_ = capacity;
  }
  T* data_ = nullptr;
  size_t size_ = 0, capacity_ = 0;
};

// One reached node of the query being run. Predecessors are kept as slots and
// turned into node ids on output.
struct Slot {
  int64_t node;
  float cur, nxt, seed, strength, cand_strength;
  int32_t hop;        // first active step, -1 while not yet active
  int32_t pred;       // slot of the predecessor, -1 at a seed
  int32_t cand_pred;  // best predecessor offered so far, -1 if none
  uint32_t pos;       // its entry in the table, for the reset
};

struct Entry {
  int64_t key;  // node, -1 when empty
  int32_t slot;
};

// Per-thread state for one query at a time: an open-addressing table maps
// node -> slot. Room is made once per step for every node that step can
// reach (its edge count), so inserting checks no capacity; reset walks only
// the slots in use. A query costs what it touches, not the size of the graph.
struct Frontier {
  std::vector<Entry> table;
  uint64_t mask = 0;
  int shift = 0;
  PodBuffer<Slot> slots;
  PodBuffer<int32_t> active, order;
  PodBuffer<int64_t> rows;  // begin, end of each active node's row, this step

  Frontier() { resize_table(4096); }

  void resize_table(uint64_t capacity) {
    table.assign(capacity, Entry{-1, 0});
    mask = capacity - 1;
    shift = 64 - __builtin_ctzll(capacity);
    for (size_t s = 0; s < slots.size(); ++s) {
      uint64_t h = home(slots[s].node);
      while (table[h].key != -1) h = (h + 1) & mask;
      table[h] = Entry{slots[s].node, static_cast<int32_t>(s)};
      slots[s].pos = static_cast<uint32_t>(h);
    }
  }

  // Makes room for `extra` more nodes (table at most half full).
  void reserve(size_t extra) {
    const size_t need = slots.size() + extra;
    slots.ensure(need);
    order.ensure(need);
    active.ensure(need);
    if (2 * need > table.size()) {
      uint64_t capacity = table.size();
      while (2 * need > capacity) capacity *= 2;
      resize_table(capacity);
    }
  }

  uint64_t home(int64_t key) const {  // Fibonacci hashing: the top bits of key * 2^64/phi
    return (static_cast<uint64_t>(key) * 0x9E3779B97F4A7C15ull) >> shift;
  }

  int32_t slot_of(int64_t key) {
    uint64_t h = home(key);
    for (;;) {
      const Entry& e = table[h];
      if (e.key == key) return e.slot;
      if (e.key == -1) break;
      h = (h + 1) & mask;
    }
    const int32_t s = static_cast<int32_t>(slots.size());
    slots.push_unchecked(Slot{key, 0.f, 0.f, 0.f, 0.f, -1.f, -1, -1, -1, static_cast<uint32_t>(h)});
    table[h] = Entry{key, s};
    return s;
  }

  void reset() {
    for (const Slot& r : slots) table[r.pos].key = -1;
    slots.clear();
    active.clear();
    order.clear();
  }
};

// Output of the queries one thread ran, in query order.
struct Part {
  PodBuffer<int64_t> node, predecessor;
  PodBuffer<float> activation, strength;
  PodBuffer<int32_t> hop;
  int64_t edges = 0;

  void clear() {
    node.clear(); predecessor.clear(); activation.clear(); strength.clear(); hop.clear();
    edges = 0;
  }
};

// Frontiers and parts are pooled across calls: their memory is then already
// faulted in, which on a virtual machine costs more than the kernel itself.
}  // namespace

struct SpreadWorkspace {
  Frontier frontier;
  Part part;
};

namespace {
using Workspace = SpreadWorkspace;

std::mutex pool_mutex;
std::vector<std::unique_ptr<Workspace>> pool;

std::unique_ptr<Workspace> acquire() {
  {
    std::lock_guard<std::mutex> lock(pool_mutex);
    if (!pool.empty()) {
      auto w = std::move(pool.back());
      pool.pop_back();
      return w;
    }
  }
  return std::make_unique<Workspace>();
}

void release(std::unique_ptr<Workspace> w) {
  w->part.clear();
  std::lock_guard<std::mutex> lock(pool_mutex);
  pool.push_back(std::move(w));
}

template <typename I>
int64_t run_query(const I* indptr, const I* indices, const float* weights, const I* seeds,
                  const float* scores, int64_t num_seeds, int depth, float decay, float restart,
                  float edge_threshold, float node_threshold, Frontier& f, Part& out) {
  f.reset();
  f.reserve(static_cast<size_t>(num_seeds));
  for (int64_t k = 0; k < num_seeds; ++k) {
    const int32_t s = f.slot_of(static_cast<int64_t>(seeds[k]));
    if (f.slots[s].hop < 0) {
      f.slots[s].hop = 0;
      f.order.push_unchecked(s);
    }
    f.slots[s].seed += scores[k];
  }
  const size_t num_seed_slots = f.order.size();
  for (int32_t s : f.order) {
    Slot& r = f.slots[s];
    r.cur = r.strength = r.seed;
    if (r.cur > 0.f) f.active.push_unchecked(s);
  }
  int64_t edges = 0;
  constexpr size_t kAhead = 8;  // rows of frontier nodes are random: fetch them early
  for (int step = 1; step <= depth && !f.active.empty(); ++step) {
    // nxt is all zero here: new slots start at zero and the pass below resets it.
    for (size_t k = 0; k < num_seed_slots; ++k) {
      Slot& r = f.slots[f.order[k]];
      r.nxt = restart * r.seed;
    }
    // Rows of the active nodes first: their edge count bounds the nodes this
    // step can add, and reading indptr here starts the rows' cache misses.
    const size_t num_active = f.active.size();
    f.rows.clear();
    f.rows.ensure(2 * num_active);
    int64_t bound = 0;
    for (size_t k = 0; k < num_active; ++k) {
      const int64_t un = f.slots[f.active[k]].node;
      const int64_t b = indptr[un], e = indptr[un + 1];
      f.rows.push_unchecked(b);
      f.rows.push_unchecked(e);
      bound += e - b;
    }
    f.reserve(static_cast<size_t>(bound));
    edges += bound;
    for (size_t k = 0; k < num_active; ++k) {
      if (k + kAhead < num_active) {
        const int64_t b = f.rows[2 * (k + kAhead)];
        __builtin_prefetch(indices + b);
        __builtin_prefetch(weights + b);
      }
      const int32_t u = f.active[k];
      const int64_t un = f.slots[u].node;
      const float xu = decay * f.slots[u].cur;
      const float su = f.slots[u].strength;
      const int64_t begin = f.rows[2 * k], end = f.rows[2 * k + 1];
      for (int64_t e = begin; e < end; ++e) {
        const float w = weights[e];
        if (!(w >= edge_threshold) || w == 0.f) continue;
        const int32_t v = f.slot_of(static_cast<int64_t>(indices[e]));
        Slot& r = f.slots[v];
        r.nxt += w * xu;
        if (r.hop < 0) {
          const float c = su * w;
          if (c > r.cand_strength ||
              (c == r.cand_strength && r.cand_pred >= 0 && un < f.slots[r.cand_pred].node)) {
            r.cand_strength = c;
            r.cand_pred = u;
          }
        }
      }
    }
    f.active.clear();
    const int32_t m = static_cast<int32_t>(f.slots.size());
    for (int32_t s = 0; s < m; ++s) {
      Slot& r = f.slots[s];
      const float v = r.nxt < node_threshold ? 0.f : r.nxt;
      r.nxt = 0.f;
      r.cur = v;
      if (v > 0.f) {
        f.active.push_unchecked(s);
        if (r.hop < 0) {
          r.hop = step;
          r.strength = r.cand_strength;
          r.pred = r.cand_pred;
          f.order.push_unchecked(s);
        }
      }
    }
  }
  const size_t count = f.order.size();
  int64_t* node = out.node.extend(count);
  float* activation = out.activation.extend(count);
  int32_t* hop = out.hop.extend(count);
  float* strength = out.strength.extend(count);
  int64_t* predecessor = out.predecessor.extend(count);
  for (size_t k = 0; k < count; ++k) {
    const Slot& r = f.slots[f.order[k]];
    node[k] = r.node;
    activation[k] = r.cur;
    hop[k] = r.hop;
    strength[k] = r.strength;
    predecessor[k] = r.pred >= 0 ? f.slots[r.pred].node : -1;
  }
  out.edges += edges;
  return static_cast<int64_t>(count);
}

}  // namespace

template <typename I>
void spread_push(int64_t /*n*/, const I* indptr, const I* indices, const float* weights,
                 int64_t num_queries, const int64_t* seed_ptr, const I* seed_nodes,
                 const float* seed_scores, int depth, float decay, float restart,
                 float edge_threshold, float node_threshold, int num_threads,
                 SpreadResult* result) {
  int threads = resolve_threads(num_threads);
  if (threads > num_queries) threads = static_cast<int>(num_queries > 0 ? num_queries : 1);
  std::vector<int64_t> sizes(static_cast<size_t>(num_queries), 0);
  result->elapsed_ns.assign(static_cast<size_t>(num_queries), 0);
  // Queries are split in contiguous blocks, so each thread's part is in query
  // order and the result is the parts laid end to end.
  std::vector<std::unique_ptr<Workspace>> spaces(static_cast<size_t>(threads));
  for (auto& w : spaces) w = acquire();
#pragma omp parallel num_threads(threads)
  {
#ifdef _OPENMP
    Workspace& w = *spaces[static_cast<size_t>(omp_get_thread_num())];
#else
    Workspace& w = *spaces[0];
#endif
#pragma omp for schedule(static)
    for (int64_t q = 0; q < num_queries; ++q) {
      const auto t0 = std::chrono::steady_clock::now();
      sizes[q] = run_query(indptr, indices, weights, seed_nodes + seed_ptr[q],
                           seed_scores + seed_ptr[q], seed_ptr[q + 1] - seed_ptr[q], depth, decay,
                           restart, edge_threshold, node_threshold, w.frontier, w.part);
      result->elapsed_ns[q] = std::chrono::duration_cast<std::chrono::nanoseconds>(
                                  std::chrono::steady_clock::now() - t0)
                                  .count();
    }
  }
  result->ptr.assign(static_cast<size_t>(num_queries) + 1, 0);
  for (int64_t q = 0; q < num_queries; ++q) result->ptr[q + 1] = result->ptr[q] + sizes[q];
  result->parts_ = std::move(spaces);
  result->edges_touched = 0;
  for (auto& w : result->parts_) result->edges_touched += w->part.edges;
}

int64_t SpreadResult::total() const { return ptr.empty() ? 0 : ptr.back(); }

void SpreadResult::copy_out(int64_t* node, float* activation, int32_t* hop, float* strength,
                            int64_t* predecessor) {
  std::vector<size_t> offset(parts_.size() + 1, 0);
  for (size_t t = 0; t < parts_.size(); ++t) offset[t + 1] = offset[t] + parts_[t]->part.node.size();
  // One thread per part: the copy is as large as the output, so it is worth sharing.
#pragma omp parallel for num_threads(static_cast<int>(parts_.size())) schedule(static, 1)
  for (int64_t t = 0; t < static_cast<int64_t>(parts_.size()); ++t) {
    const Part& p = parts_[t]->part;
    const size_t m = p.node.size(), o = offset[t];
    if (m == 0) continue;
    std::memcpy(node + o, p.node.data(), m * sizeof(int64_t));
    std::memcpy(activation + o, p.activation.data(), m * sizeof(float));
    std::memcpy(hop + o, p.hop.data(), m * sizeof(int32_t));
    std::memcpy(strength + o, p.strength.data(), m * sizeof(float));
    std::memcpy(predecessor + o, p.predecessor.data(), m * sizeof(int64_t));
  }
}

SpreadResult::SpreadResult() = default;

SpreadResult::~SpreadResult() {
  for (auto& w : parts_) release(std::move(w));
}

#define ASMR_INSTANTIATE(I)                                                                     \
  template void spread_push<I>(int64_t, const I*, const I*, const float*, int64_t,            \
                               const int64_t*, const I*, const float*, int, float, float, float, \
                               float, int, SpreadResult*);
ASMR_INSTANTIATE(int32_t)
ASMR_INSTANTIATE(int64_t)
#undef ASMR_INSTANTIATE

}  // namespace asmr
