#include "asmr/spread.h"

#include <algorithm>
#include <atomic>
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

#define ASMR_INLINE inline __attribute__((always_inline))

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
  // The first `size` entries, written through data() after ensure(size).
  void set_size(size_t size) { size_ = size; }

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

// One node the query has touched, indexed by slot (the order of first touch).
// An edge updates one 32-byte entry. Predecessors are kept as node ids, so
// that neither the tie-break nor the output looks them up.
struct Entry {
  int64_t key;        // node
  int64_t cand_pred;  // best predecessor offered so far, -1 if none
  float nxt;          // activation gathered this step
  float cand;         // strength through that predecessor, -1 if none
  float cur;          // activation after the last step
  int32_t hop;        // first active step, -1 while not yet active
};
static_assert(sizeof(Entry) == 32, "two entries per cache line");

ASMR_INLINE Entry fresh(int64_t key) { return Entry{key, -1, 0.f, -1.f, 0.f, -1}; }

// Graphs of up to this many nodes map node -> slot through a dense array (4
// bytes a node per workspace, 512 KB at most); larger ones through a hash
// table, whose memory follows what a query touches. The array saves the
// hashing but each lookup is a random read of it: on a 2-core Xeon VM (10
// edges a node, 20 seeds, 2 steps) the array was faster at 30,000 nodes (11.5
// against 12.8 us), about even at 100,000 and slower from 200,000 (15 against 12).
std::atomic<int64_t> dense_limit{int64_t(1) << 17};

// node -> slot as one load from an array of -1; a query resets only the
// entries it set.
struct DenseLookup {
  int32_t* __restrict__ where;
  Entry* __restrict__ entries;

  ASMR_INLINE Entry* get(int64_t key, int32_t& used) const {
    int32_t s = where[key];
    if (s < 0) {
      s = used++;
      where[key] = s;
      entries[s] = fresh(key);
    }
    return entries + s;
  }
};

// The key is the slot's entry's: a cell is 8 bytes, so that the table of a
// query stays small in cache.
struct Cell {
  int32_t slot;
  uint32_t generation;  // the cell is empty unless this is the table's current one
};

// node -> slot through open addressing (Fibonacci hashing, linear probing).
// A query empties the table by moving to the next generation, so that its
// reset costs nothing per touched node.
struct HashLookup {
  Cell* __restrict__ cells;
  Entry* __restrict__ entries;
  uint64_t mask;
  int shift;
  uint32_t generation;

  ASMR_INLINE Entry* get(int64_t key, int32_t& used) const {
    uint64_t h = (static_cast<uint64_t>(key) * 0x9E3779B97F4A7C15ull) >> shift;
    for (;;) {
      Cell& c = cells[h];
      if (c.generation != generation) {
        c = Cell{used, generation};
        entries[used] = fresh(key);
        return entries + used++;
      }
      if (entries[c.slot].key == key) return entries + c.slot;
      h = (h + 1) & mask;
    }
  }
};

// Per-thread state for one query at a time. Room is made once per step for
// every node that step can reach (its edge count), so inserting checks no
// capacity; reset walks only the slots in use, so a query costs what it
// touches, not the size of the graph.
struct Frontier {
  PodBuffer<Entry> entries;  // by slot
  PodBuffer<float> seed;     // by seed slot (seeds are slots 0 .. seeds - 1)
  // By slot, written once a slot is active: room is made by reserve(), the
  // size stays 0.
  PodBuffer<float> strength;
  PodBuffer<int64_t> pred;  // node of the predecessor, -1 at a seed
  PodBuffer<int32_t> active, order;
  PodBuffer<int64_t> rows;  // begin, end of each active node's row, this step
  int64_t edges = 0;        // edges read by the last query
  // The last query's output is written by write_output: when it ran all its
  // steps, the pass that ends the last one (emit_last) is still to be made.
  int last_step = 0;  // 0: the output is f.order as it stands
  float last_threshold = 0.f;
  size_t last_first_slot = 0;  // the first slot that the last step added
  bool dense = true;
  PodBuffer<int32_t> where;  // dense lookup: -1, or the node's slot
  PodBuffer<Cell> cells;     // hash lookup
  uint64_t mask = 0;
  int shift = 0;
  uint32_t generation = 1;

  // Picks the lookup for a graph of n nodes; the frontier is empty.
  void begin(int64_t n) {
    dense = n <= dense_limit.load(std::memory_order_relaxed);
    if (dense && where.size() < static_cast<size_t>(n)) {
      const size_t old = where.size();
      int32_t* w = where.extend(static_cast<size_t>(n) - old) - old;
      std::fill(w + old, w + n, -1);
    }
    if (!dense && cells.size() == 0) rehash(4096);
  }

  template <typename L>
  L lookup();

  void rehash(uint64_t capacity) {
    cells.clear();
    Cell* c = cells.extend(capacity);
    for (uint64_t h = 0; h < capacity; ++h) c[h].generation = 0;
    generation = 1;
    mask = capacity - 1;
    shift = 64 - __builtin_ctzll(capacity);
    for (size_t s = 0; s < entries.size(); ++s) {
      uint64_t h = (static_cast<uint64_t>(entries[s].key) * 0x9E3779B97F4A7C15ull) >> shift;
      while (c[h].generation == generation) h = (h + 1) & mask;
      c[h] = Cell{static_cast<int32_t>(s), generation};
    }
  }

  // Makes room for `extra` more nodes (a hash table at most a quarter full:
  // half full, linear probing cost 1.5 us more a query).
  void reserve(size_t extra) {
    const size_t need = entries.size() + extra;
    entries.ensure(need);
    strength.ensure(need);
    pred.ensure(need);
    order.ensure(need);
    active.ensure(need);
    if (!dense) {
      if (4 * need > cells.size()) {
        uint64_t capacity = cells.size();
        while (4 * need > capacity) capacity *= 2;
        rehash(capacity);
      }
    }
  }

  void reset() {
    if (dense) {
      for (const Entry& e : entries) where[e.key] = -1;
    } else if (++generation == 0) {  // wrapped: no cell may look current
      for (Cell& c : cells) c.generation = 0;
      generation = 1;
    }
    entries.clear();
    seed.clear();
    active.clear();
    order.clear();
  }
};

template <>
DenseLookup Frontier::lookup<DenseLookup>() {
  return DenseLookup{where.data(), entries.data()};
}

template <>
HashLookup Frontier::lookup<HashLookup>() {
  return HashLookup{cells.data(), entries.data(), mask, shift, generation};
}

// Where one query's reached nodes go: output_bound(f) rows at most.
struct Output {
  int64_t* __restrict__ node;
  float* __restrict__ activation;
  int32_t* __restrict__ hop;
  float* __restrict__ strength;
  int64_t* __restrict__ predecessor;
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
  // Room for `count` more rows, written through the data() pointers, then grow(count).
  void ensure_more(size_t count) {
    const size_t total = node.size() + count;
    node.ensure(total); predecessor.ensure(total); activation.ensure(total);
    strength.ensure(total); hop.ensure(total);
  }
  void grow(size_t count) {
    const size_t total = node.size() + count;
    node.set_size(total); predecessor.set_size(total); activation.set_size(total);
    strength.set_size(total); hop.set_size(total);
  }
  Output tail() {
    const size_t base = node.size();
    return Output{node.data() + base, activation.data() + base, hop.data() + base,
                  strength.data() + base, predecessor.data() + base};
  }
};

// Writes the reached nodes of the query in f, in the order they first became
// active; returns their count.
size_t emit(const Frontier& f, const Output& o) {
  const size_t count = f.order.size();
  const Entry* entries = f.entries.data();
  for (size_t k = 0; k < count; ++k) {
    const int32_t s = f.order[k];
    o.node[k] = entries[s].key;
    o.activation[k] = entries[s].cur;
    o.hop[k] = entries[s].hop;
    o.strength[k] = f.strength[s];
    o.predecessor[k] = f.pred[s];
  }
  return count;
}

// The pass that ends the last step, writing the output as it goes: the nodes
// already in f.order keep their places, those first active now follow.
size_t emit_last(Frontier& f, int step, float node_threshold, size_t first_new,
                 const Output& o) {
  const size_t used = f.entries.size(), num_old = f.order.size();
  int64_t* __restrict__ node = o.node;
  float* __restrict__ activation = o.activation;
  int32_t* __restrict__ hop = o.hop;
  float* __restrict__ strength = o.strength;
  int64_t* __restrict__ predecessor = o.predecessor;
  Entry* __restrict__ entries = f.entries.data();
  size_t k = num_old;
  for (size_t s = 0; s < first_new; ++s) {
    Entry& r = entries[s];
    const float v = r.nxt < node_threshold ? 0.f : r.nxt;
    r.cur = v;
    if (v > 0.f && r.hop < 0) {
      node[k] = r.key;
      activation[k] = v;
      hop[k] = step;
      strength[k] = r.cand;
      predecessor[k] = r.cand_pred;
      ++k;
    }
  }
  // Slots this step added were never active, and nothing reads them after:
  // each is written at k and kept if active. Row k < s < used, so the writes
  // stay within the bound.
  for (size_t s = first_new; s < used; ++s) {
    const Entry& r = entries[s];
    const float v = r.nxt < node_threshold ? 0.f : r.nxt;
    node[k] = r.key;
    activation[k] = v;
    hop[k] = step;
    strength[k] = r.cand;
    predecessor[k] = r.cand_pred;
    k += v > 0.f;
  }
  for (size_t j = 0; j < num_old; ++j) {
    const int32_t s = f.order[j];
    node[j] = entries[s].key;
    activation[j] = entries[s].cur;
    hop[j] = entries[s].hop;
    strength[j] = f.strength[s];
    predecessor[j] = f.pred[s];
  }
  return k;
}

// At most this many rows are written by write_output.
size_t output_bound(const Frontier& f) {
  return f.last_step > 0 ? f.entries.size() : f.order.size();
}

size_t write_output(Frontier& f, const Output& o) {
  return f.last_step > 0 ? emit_last(f, f.last_step, f.last_threshold, f.last_first_slot, o)
                         : emit(f, o);
}

template <typename I>
ASMR_INLINE void prefetch_row(const I* indices, const float* weights, int64_t b, int64_t e) {
  if (e > b) {
    __builtin_prefetch(indices + b);
    __builtin_prefetch(indices + e - 1);
    __builtin_prefetch(weights + b);
    __builtin_prefetch(weights + e - 1);
  }
}

// kMask: edge_threshold > 0, so that an edge is kept by one comparison (a
// kept edge then has a positive weight); otherwise only zero weights drop.
template <typename L, bool kMask, typename I, typename S>
void run_query_with(const I* indptr, const I* indices, const float* weights, const S* seeds,
                    const float* scores, int64_t num_seeds, int depth, float decay,
                    float restart, float edge_threshold, float node_threshold, Frontier& f) {
  f.reserve(static_cast<size_t>(num_seeds));
  f.seed.ensure(static_cast<size_t>(num_seeds));
  int32_t used = 0;
  {
    const L map = f.lookup<L>();
    for (int64_t k = 0; k < num_seeds; ++k) {
      Entry* t = map.get(static_cast<int64_t>(seeds[k]), used);
      if (t->hop < 0) {  // a new seed
        t->hop = 0;
        f.order.push_unchecked(used - 1);
        f.seed.push_unchecked(0.f + scores[k]);  // as a sum from zero: -0 becomes 0
      } else {  // a duplicate adds up
        f.seed[static_cast<size_t>(t - f.entries.data())] += scores[k];
      }
    }
  }
  f.entries.set_size(static_cast<size_t>(used));
  const int32_t num_seed_slots = used;
  for (int32_t s = 0; s < num_seed_slots; ++s) {
    f.entries[s].cur = f.strength[s] = f.seed[s];
    f.pred[s] = -1;
    if (f.seed[s] > 0.f) f.active.push_unchecked(s);
  }
  int64_t edges = 0;
  // Rows of frontier nodes are random: their edges are fetched kAhead rows
  // early. The lookups are not: a query's table and entries stay in L2, and
  // prefetching them cost more instructions than it saved (Xeon, 1,000,000
  // nodes: 2 us of 21 per query).
  constexpr size_t kAhead = 12;
  for (int step = 1; step <= depth && !f.active.empty(); ++step) {
    // Rows of the active nodes first: their edge count bounds the nodes this
    // step can add, and reading indptr here starts the rows' cache misses.
    const size_t num_active = f.active.size(), first_slot = static_cast<size_t>(used);
    f.rows.clear();
    f.rows.ensure(2 * num_active);
    int64_t bound = 0;
    for (size_t k = 0; k < num_active; ++k) {
      const int64_t un = f.entries[f.active[k]].key;
      const int64_t b = indptr[un], e = indptr[un + 1];
      f.rows.push_unchecked(b);
      f.rows.push_unchecked(e);
      bound += e - b;
    }
    f.reserve(static_cast<size_t>(bound));
    edges += bound;
    const L map = f.lookup<L>();
    Entry* __restrict__ entries = f.entries.data();
    const int64_t* __restrict__ rows = f.rows.data();
    const int32_t* __restrict__ active = f.active.data();
    const float* __restrict__ strength = f.strength.data();
    // nxt is all zero here: new entries start at zero and the pass below resets it.
    for (int32_t s = 0; s < num_seed_slots; ++s) entries[s].nxt = restart * f.seed[s];
    for (size_t k = 0; k < kAhead && k < num_active; ++k)
      prefetch_row(indices, weights, rows[2 * k], rows[2 * k + 1]);
    for (size_t k = 0; k < num_active; ++k) {
      if (k + kAhead < num_active)
        prefetch_row(indices, weights, rows[2 * (k + kAhead)], rows[2 * (k + kAhead) + 1]);
      const int32_t u = active[k];
      const int64_t un = entries[u].key;
      const float xu = decay * entries[u].cur;
      const float su = strength[u];
      for (int64_t e = rows[2 * k], end = rows[2 * k + 1]; e < end; ++e) {
        const float w = weights[e];
        if (kMask ? !(w >= edge_threshold) : w == 0.f) continue;
        Entry* r = map.get(static_cast<int64_t>(indices[e]), used);
        r->nxt += w * xu;
        if (r->hop < 0) {
          const float c = su * w;
          if (c > r->cand || (c == r->cand && r->cand_pred >= 0 && un < r->cand_pred)) {
            r->cand = c;
            r->cand_pred = un;
          }
        }
      }
    }
    f.entries.set_size(static_cast<size_t>(used));
    if (step == depth) {  // the pass that ends it writes the output
      f.edges = edges;
      f.last_step = step;
      f.last_threshold = node_threshold;
      f.last_first_slot = first_slot;
      return;
    }
    int32_t* __restrict__ next = f.active.data();  // rewritten in place: the loop above is done
    int32_t* __restrict__ order = f.order.data();
    size_t num_next = 0, num_order = f.order.size();
    float* __restrict__ strength_w = f.strength.data();
    int64_t* __restrict__ pred = f.pred.data();
    for (int32_t s = 0; s < used; ++s) {
      Entry& r = entries[s];
      const float v = r.nxt < node_threshold ? 0.f : r.nxt;
      r.nxt = 0.f;
      r.cur = v;
      if (v > 0.f) {
        next[num_next++] = s;
        if (r.hop < 0) {
          r.hop = step;
          strength_w[s] = r.cand;
          pred[s] = r.cand_pred;
          order[num_order++] = s;
        }
      }
    }
    f.active.set_size(num_next);
    f.order.set_size(num_order);
  }
  f.edges = edges;
}

// Runs one query over a graph of n nodes in f; its output is then written by
// write_output, output_bound(f) rows at most.
template <typename I, typename S>
void run_query(int64_t n, const I* indptr, const I* indices, const float* weights,
               const S* seeds, const float* scores, int64_t num_seeds, int depth, float decay,
               float restart, float edge_threshold, float node_threshold, Frontier& f) {
  f.reset();
  f.begin(n);
  f.last_step = 0;
  auto run = [&](auto with) {
    with(indptr, indices, weights, seeds, scores, num_seeds, depth, decay, restart,
         edge_threshold, node_threshold, f);
  };
  const bool mask = edge_threshold > 0.f;
  if (f.dense)
    mask ? run(run_query_with<DenseLookup, true, I, S>)
         : run(run_query_with<DenseLookup, false, I, S>);
  else
    mask ? run(run_query_with<HashLookup, true, I, S>)
         : run(run_query_with<HashLookup, false, I, S>);
}

// Runs one query and appends its reached nodes to out; returns their count.
template <typename I, typename S>
size_t run_query_into(int64_t n, const I* indptr, const I* indices, const float* weights,
                      const S* seeds, const float* scores, int64_t num_seeds, int depth,
                      float decay, float restart, float edge_threshold, float node_threshold,
                      Frontier& f, Part& out) {
  run_query(n, indptr, indices, weights, seeds, scores, num_seeds, depth, decay, restart,
            edge_threshold, node_threshold, f);
  out.ensure_more(output_bound(f));
  const size_t count = write_output(f, out.tail());
  out.grow(count);
  out.edges += f.edges;
  return count;
}

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

}  // namespace

template <typename I>
void spread_push(int64_t n, const I* indptr, const I* indices, const float* weights,
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
      sizes[q] = static_cast<int64_t>(
          run_query_into(n, indptr, indices, weights, seed_nodes + seed_ptr[q], seed_scores + seed_ptr[q],
                    seed_ptr[q + 1] - seed_ptr[q], depth, decay, restart, edge_threshold,
                    node_threshold, w.frontier, w.part));
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

int64_t spread_dense_limit(int64_t nodes) {
  return nodes < 0 ? dense_limit.load() : dense_limit.exchange(nodes);
}

SpreadWorkspace* spread_workspace_acquire() { return acquire().release(); }

void spread_workspace_release(SpreadWorkspace* w) {
  if (w != nullptr) release(std::unique_ptr<Workspace>(w));
}

template <typename I, typename S>
int64_t spread_one(int64_t n, const I* indptr, const I* indices, const float* weights,
                   const S* seeds, const float* scores, int64_t num_seeds, int depth,
                   float decay, float restart, float edge_threshold, float node_threshold,
                   SpreadWorkspace* w, int64_t* edges) {
  run_query(n, indptr, indices, weights, seeds, scores, num_seeds, depth, decay, restart,
            edge_threshold, node_threshold, w->frontier);
  *edges = w->frontier.edges;
  return static_cast<int64_t>(output_bound(w->frontier));
}

int64_t spread_one_write(SpreadWorkspace* w, int64_t* node, float* activation, int32_t* hop,
                         float* strength, int64_t* predecessor) {
  return static_cast<int64_t>(
      write_output(w->frontier, Output{node, activation, hop, strength, predecessor}));
}

SpreadResult::~SpreadResult() {
  for (auto& w : parts_) release(std::move(w));
}

#define ASMR_INSTANTIATE(I)                                                                     \
  template void spread_push<I>(int64_t, const I*, const I*, const float*, int64_t,            \
                               const int64_t*, const I*, const float*, int, float, float, float, \
                               float, int, SpreadResult*);                                   \
  template int64_t spread_one<I, int32_t>(int64_t, const I*, const I*, const float*,            \
                                          const int32_t*, const float*, int64_t, int, float,   \
                                          float, float, float, SpreadWorkspace*, int64_t*);    \
  template int64_t spread_one<I, int64_t>(int64_t, const I*, const I*, const float*,            \
                                          const int64_t*, const float*, int64_t, int, float,   \
                                          float, float, float, SpreadWorkspace*, int64_t*);
ASMR_INSTANTIATE(int32_t)
ASMR_INSTANTIATE(int64_t)
#undef ASMR_INSTANTIATE

}  // namespace asmr
