// Spreading activation from sparse seeds, frontier only.
//
// For each query the rule of diffuse_pull runs for `depth` steps with
// X0 = P = the query's seed vector, but only over nodes that carry
// activation: the cost grows with the edges leaving active nodes, not with
// the size of the graph. Here the graph is read as out-edges (row i of the CSR
// lists edges i -> j), which is the CSR of A itself.
//
// Per reached node the kernel reports
//   activation   its value after the last step (0 if it faded out),
//   hop          the first step at which it was active (seeds: 0),
//   strength     the strength of its recall path: seed score times the
//                product of edge weights along the path,
//   predecessor  the previous node on that path (-1 for seeds).
// The recall path of a node is chosen when the node first becomes active: of
// the edges that fed it up to that step, the one from an active node u that
// maximises strength(u) * w(u -> v) (ties: the smaller u). Its predecessor is
// therefore always at a smaller hop, so following predecessors ends at a seed
// in at most `hop` steps.
//
// Output per query, in the order the nodes first became active (seeds first,
// in seed order; then by hop).
#pragma once
#include <cstdint>
#include <memory>
#include <vector>

namespace asmr {

struct SpreadWorkspace;

// Results of one spread_push call. The reached nodes stay in per-thread
// buffers (pooled across calls) until copy_out writes them, in query order,
// into arrays of total() entries that the caller allocated.
struct SpreadResult {
  std::vector<int64_t> ptr;         // num_queries + 1 offsets into the output arrays
  std::vector<int64_t> elapsed_ns;  // per query wall time inside the kernel
  int64_t edges_touched = 0;        // edges read over all queries

  SpreadResult();
  ~SpreadResult();
  SpreadResult(const SpreadResult&) = delete;
  SpreadResult& operator=(const SpreadResult&) = delete;

  int64_t total() const;
  void copy_out(int64_t* node, float* activation, int32_t* hop, float* strength,
                int64_t* predecessor);

  std::vector<std::unique_ptr<SpreadWorkspace>> parts_;
};

// Seeds of query q are seed_nodes[seed_ptr[q] : seed_ptr[q + 1]] with scores
// seed_scores[...] (duplicates add up). Inputs must be validated by the caller.
template <typename I>
void spread_push(int64_t n, const I* indptr, const I* indices, const float* weights,
                 int64_t num_queries, const int64_t* seed_ptr, const I* seed_nodes,
                 const float* seed_scores, int depth, float decay, float restart,
                 float edge_threshold, float node_threshold, int num_threads,
                 SpreadResult* out);

// A workspace maps node -> slot through a dense array of 4 bytes a node for
// graphs of up to `spread_dense_limit()` nodes (2^17 unless changed), and
// through a hash table beyond. Sets the limit when nodes >= 0 (for tests) and
// returns the one in force before.
int64_t spread_dense_limit(int64_t nodes);

// One query on the calling thread, for latency: no OpenMP region and no batch
// bookkeeping. The workspace comes from the pool the batched calls share
// (acquire / release, a mutex each); spread_one runs the query in it and
// returns a bound on the number of reached nodes, and spread_one_write writes
// them, in the order of spread_push, straight into the caller's arrays of
// that many entries, and returns their count (call it once per spread_one).
// Seeds (int32 or int64) are validated by the caller.
SpreadWorkspace* spread_workspace_acquire();
void spread_workspace_release(SpreadWorkspace* w);
template <typename I, typename S>
int64_t spread_one(int64_t n, const I* indptr, const I* indices, const float* weights,
                   const S* seeds, const float* scores, int64_t num_seeds, int depth,
                   float decay, float restart, float edge_threshold, float node_threshold,
                   SpreadWorkspace* w, int64_t* edges);
int64_t spread_one_write(SpreadWorkspace* w, int64_t* node, float* activation, int32_t* hop,
                         float* strength, int64_t* predecessor);

}  // namespace asmr
