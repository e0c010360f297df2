// Dense diffusion over a CSR graph.
//
// The graph is a weighted adjacency A with A[i, j] = weight of edge i -> j.
// One step is
//     X <- decay * (A_masked^T X) + restart * P,  then X[X < node_threshold] = 0
// where A_masked keeps the edges with weight >= edge_threshold. X and P are
// n x b row-major (node-major: the b values of one node are contiguous).
//
// Two kernels compute the same thing (up to the order of float additions):
//
// * diffuse_pull reads the graph as the CSR of A^T (row j lists the edges
//   i -> j that end in j; transpose_csr builds it) and gathers one row of X per
//   edge. Good while X fits in cache; for large b it prefetches the rows ahead.
//
// * diffuse_tiled reads a 2-D tiled layout of the same edges (build_tiles):
//   nodes are cut into destination tiles of 2^dst_shift ids and source tiles
//   of 2^src_shift ids, and the edges are grouped by (destination tile,
//   source tile), destination-tile-major. Within a group an edge is a packed
//   32-bit word (dst_local << src_shift | src_local) plus its weight, sorted by
//   (dst_local, src_local). A thread owns one destination tile at a time and
//   accumulates into its slice of the output while it walks that tile's
//   groups, so the X slice of a source tile and the output slice stay in L2
//   instead of every edge missing it (propagation blocking). 8 bytes per edge
//   plus 8 bytes per group.
#pragma once
#include <cstdint>

namespace asmr {

// Rows of (indptr, indices, weights) are receivers: row j holds edges i -> j.
// x0, p: n x b; p may be null when restart == 0. out: n x b result.
// work: n x b scratch (may be null when steps <= 1). Neither may alias p; x0
// may be the buffer that the first step does not write (out when steps is
// even, work when it is odd, steps > 0): step s reads only what step s-1 wrote.
template <typename I>
void diffuse_pull(int64_t n, const I* indptr, const I* indices, const float* weights,
                  int64_t b, const float* x0, const float* p, int steps, float decay,
                  float restart, float edge_threshold, float node_threshold, float* out,
                  float* work, int num_threads);

// CSR (n_rows x n_cols) -> CSR of its transpose (n_cols x n_rows). Stable: the
// entries of each output row keep the order of their source rows.
// t_indptr has n_cols + 1 entries; t_indices and t_weights have nnz entries.
// Two cache-friendly passes (bucket by column block, then a counting sort per
// block) instead of one scatter that misses the cache on every edge.
template <typename I>
void transpose_csr(int64_t n_rows, int64_t n_cols, const I* indptr, const I* indices,
                   const float* weights, I* t_indptr, I* t_indices, float* t_weights,
                   int num_threads);

// Number of tiles of 2^shift ids that cover n nodes.
inline int64_t tile_count(int64_t n, int shift) {
  return (n + (int64_t(1) << shift) - 1) >> shift;
}

// Tiled layout of the in-edges, from the graph's own out-edge CSR (row i lists
// the edges i -> j). 1 <= src_shift <= 31, dst_shift + src_shift <= 32.
// group_ptr: tile_count(n, dst_shift) * tile_count(n, src_shift) + 1 entries;
// group g = dst_tile * num_src_tiles + src_tile owns [group_ptr[g], group_ptr[g+1]).
// packed, t_weights: nnz entries. Within a group, edges are sorted by
// dst_local and then by source (duplicates in CSR order). Two passes: a
// parallel stable bucket sort into groups, then a counting sort per group.
template <typename I>
void build_tiles(int64_t n, const I* indptr, const I* indices, const float* weights,
                 int dst_shift, int src_shift, int64_t* group_ptr, uint32_t* packed,
                 float* t_weights, int num_threads);

// diffuse_pull's contract over the tiled layout of build_tiles.
void diffuse_tiled(int64_t n, int dst_shift, int src_shift, const int64_t* group_ptr,
                   const uint32_t* packed, const float* weights, int64_t b, const float* x0,
                   const float* p, int steps, float decay, float restart, float edge_threshold,
                   float node_threshold, float* out, float* work, int num_threads);

}  // namespace asmr
