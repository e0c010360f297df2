// The CUDA backend: plain functions on raw device pointers.
//
// No CUDA types appear here, so Cython (and any C++ caller) can include this
// header without the CUDA toolkit. Conventions for every function:
//   - returns nullptr on success, else a message (valid until the next call
//     on the same thread);
//   - `device` is the CUDA device the pointers live on; the call makes it
//     the current device of the calling thread (if it is not already);
//   - `stream` is a cudaStream_t as an integer (0: legacy default stream);
//     launches are asynchronous on it;
//   - `index_type` is IndexType, real types are RealType;
//   - inputs are trusted: the caller validates them (see check_index and
//     check_real, which run on the device). The semantics are those of the
//     CPU kernels in diffuse.h, spread.h and pair_cosine.h.
#pragma once
#include <cstddef>
#include <cstdint>

namespace asmr {
namespace cuda {

enum IndexType : int { kInt32 = 0, kInt64 = 1 };
enum RealType : int { kFloat32 = 0, kFloat16 = 1 };

// ---- runtime -----------------------------------------------------------------

// Devices the CUDA runtime sees. On failure *count = 0 and the message says
// why (no driver, insufficient driver, no device...).
const char* device_count(int* count);
const char* device_attributes(int device, int* sm_count, int* cc_major, int* cc_minor);
// Runtime version this library was linked with and the driver's version.
const char* versions(int* runtime_version, int* driver_version);
// Waits for all work on `stream`.
const char* synchronize(int device, uintptr_t stream);

// ---- validation (device-side, results in a device int64 array) -------------

// status[0]: first i with a[i] outside [lo, hi), or -1
// status[1]: first i with a[i + 1] < a[i], or -1
// status[2]: max over i of a[i + 1] - a[i] (0 when len < 2)
// status[3], status[4]: a[0] and a[len - 1] (0 when len == 0)
const char* check_index(int device, int index_type, const void* a, int64_t len, int64_t lo,
                        int64_t hi, int64_t* status, uintptr_t stream);
// status[0]: first i with a[i] NaN or infinite, or -1
// status[1]: first i with a[i] < 0, or -1
const char* check_real(int device, const float* a, int64_t len, int64_t* status,
                       uintptr_t stream);

// ---- diffuse -----------------------------------------------------------------

// Bytes of scratch transpose_csr needs.
const char* transpose_workspace(int device, int index_type, int64_t n, int64_t nnz,
                                size_t* bytes);
// Square CSR (n x n, nnz entries) -> CSR of its transpose, stable (entries of
// a row keep the order of their source rows), hence deterministic.
const char* transpose_csr(int device, int index_type, int64_t n, int64_t nnz,
                          const void* indptr, const void* indices, const float* weights,
                          void* t_indptr, void* t_indices, float* t_weights, void* workspace,
                          size_t workspace_bytes, uintptr_t stream);
// diffuse_pull of diffuse.h: (t_indptr, t_indices, t_weights) is the CSR of
// A^T with nnz entries; x0, p (nullable), out, work (nullable when
// steps <= 1) are n x b, row-major. out and work must not alias x0 or p.
const char* diffuse(int device, int index_type, int64_t n, int64_t nnz, const void* t_indptr,
                    const void* t_indices, const float* t_weights, int64_t b, const float* x0,
                    const float* p, int steps, float decay, float restart, float edge_threshold,
                    float node_threshold, float* out, float* work, uintptr_t stream);

// ---- spread ------------------------------------------------------------------

// One thread block per query (blocks loop over queries). Each block owns a
// hash table of `capacity` slots (a power of two, 2 <= capacity <= 2^30) in
// `workspace`; a query may reach at most capacity / 2 nodes, otherwise it
// overflows: count[i] = -1 and the caller retries it with a larger capacity.
// Requires n <= 2^31 - 1.
size_t spread_workspace_bytes(int64_t num_blocks, int64_t capacity);

// Runs queries query_ids[i] (or i when query_ids is null) for i < num_queries.
// Query i writes its reached nodes, in no particular order, to entries
// [i * capacity / 2, i * capacity / 2 + count[i]) of the staging arrays
// (st_*, each num_queries * capacity / 2 long), and the edges it read to
// edges[i].
const char* spread(int device, int index_type, int64_t n, const void* indptr,
                   const void* indices, const float* weights, int64_t num_queries,
                   const int64_t* query_ids, const int64_t* seed_ptr, const void* seed_nodes,
                   const float* seed_scores, int depth, float decay, float restart,
                   float edge_threshold, float node_threshold, int64_t capacity,
                   int64_t num_blocks, void* workspace, size_t workspace_bytes, int64_t* count,
                   int64_t* edges, int64_t* st_node, float* st_activation, int32_t* st_hop,
                   float* st_strength, int64_t* st_predecessor, uintptr_t stream);

// For each i < num_queries with count[i] >= 0 (-1 is skipped), copies
// count[i] entries from offset src[i] of the st_* arrays to offset dst[i] of
// the output arrays. Used to compact the staging of spread and to place
// each query's rows at its final offset.
const char* spread_gather(int device, int64_t num_queries, const int64_t* count,
                          const int64_t* src, const int64_t* dst, const int64_t* st_node,
                          const float* st_activation, const int32_t* st_hop,
                          const float* st_strength, const int64_t* st_predecessor,
                          int64_t* node, float* activation, int32_t* hop, float* strength,
                          int64_t* predecessor, uintptr_t stream);

// ---- pair_cosine -------------------------------------------------------------

// out[k] = cos(claims[claim_idx[k]], units[unit_idx[k]]), rows of d values
// (float32 or float16) read in place; row r of claims starts at
// claims + r * claims_ld elements (claims_ld >= d), likewise units.
const char* pair_cosine(int device, int claims_type, int units_type, int index_type,
                        int64_t num_pairs, int64_t d, const void* claims, int64_t claims_ld,
                        const void* units, int64_t units_ld, const void* claim_idx,
                        const void* unit_idx, bool prenormalized, float* out,
                        uintptr_t stream);

// ---- citation masks ------------------------------------------------------------

// logits[r * logits_ld + t] = -inf where bit (t & 31) of word (t >> 5) of mask
// row rows[r] (r when rows is null) is clear, for t < vocab; tokens at or past
// 32 * words are masked too. Logits are real_type (float32 or float16); mask
// rows are `words` int32 words (citation_mask.h).
const char* apply_token_bitmask(int device, int real_type, int64_t batch, int64_t vocab, void* logits,
                                int64_t logits_ld, const int32_t* mask, int64_t words,
                                const int32_t* rows, uintptr_t stream);

}  // namespace cuda
}  // namespace asmr
