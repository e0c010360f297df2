// Dense diffusion over a CSR graph.
//
// The graph is a weighted adjacency A with A[i, j] = weight of edge i -> j.
// One step is
//     X <- decay * (A_masked^T X) + restart * P,  then X[X < node_threshold] = 0
// where A_masked keeps the edges with weight >= edge_threshold. X and P are
// n x b row-major (node-major: the b values of one node are contiguous).
//
// The kernel pulls: it reads the graph as the CSR of A^T, i.e. row j lists the
// edges i -> j that end in j. transpose_csr turns the out-edge CSR of A into
// that form once per graph.
#pragma once
#include <cstdint>

namespace asmr {

// Rows of (indptr, indices, weights) are receivers: row j holds edges i -> j.
// x0, p: n x b; p may be null when restart == 0. out: n x b result.
// work: n x b scratch (may be null when steps <= 1). Neither may alias x0/p.
template <typename I>
void diffuse_pull(int64_t n, const I* indptr, const I* indices, const float* weights,
                  int64_t b, const float* x0, const float* p, int steps, float decay,
                  float restart, float edge_threshold, float node_threshold, float* out,
                  float* work, int num_threads);

// CSR (n_rows x n_cols) -> CSR of its transpose (n_cols x n_rows). Stable: the
// entries of each output row keep the order of their source rows.
// t_indptr has n_cols + 1 entries; t_indices and t_weights have nnz entries.
template <typename I>
void transpose_csr(int64_t n_rows, int64_t n_cols, const I* indptr, const I* indices,
                   const float* weights, I* t_indptr, I* t_indices, float* t_weights);

}  // namespace asmr
