# cython: language_level=3, boundscheck=False, wraparound=False
# distutils: language = c++
"""Typed entry points of the CUDA kernels (csrc/include/asmr/cuda.h).

Nothing here validates: the faces gathered by asmr_kernels.cuda check their
inputs on the device and hand over raw device pointers (Python ints), sizes and
a stream handle. Each function releases the GIL around the C++ call and raises
RuntimeError when the CUDA side reports an error. Index and real types travel
as the tags of cuda.h (asmr_kernels.cuda_runtime).
"""

from libc.stdint cimport int32_t, int64_t, uintptr_t
from libcpp cimport bool as cbool

cdef extern from "asmr/cuda.h" nogil:
    const char* c_device_count "asmr::cuda::device_count"(int* count)
    const char* c_device_attributes "asmr::cuda::device_attributes"(
        int device, int* sm_count, int* cc_major, int* cc_minor)
    const char* c_versions "asmr::cuda::versions"(int* runtime_version, int* driver_version)
    const char* c_synchronize "asmr::cuda::synchronize"(int device, uintptr_t stream)
    const char* c_check_index "asmr::cuda::check_index"(
        int device, int index_type, const void* a, int64_t length, int64_t lo, int64_t hi,
        int64_t* status, uintptr_t stream)
    const char* c_check_real "asmr::cuda::check_real"(
        int device, const float* a, int64_t length, int64_t* status, uintptr_t stream)
    const char* c_transpose_workspace "asmr::cuda::transpose_workspace"(
        int device, int index_type, int64_t n, int64_t nnz, size_t* nbytes)
    const char* c_transpose_csr "asmr::cuda::transpose_csr"(
        int device, int index_type, int64_t n, int64_t nnz, const void* indptr,
        const void* indices, const float* weights, void* t_indptr, void* t_indices,
        float* t_weights, void* workspace, size_t workspace_bytes, uintptr_t stream)
    const char* c_diffuse "asmr::cuda::diffuse"(
        int device, int index_type, int64_t n, int64_t nnz, const void* t_indptr,
        const void* t_indices, const float* t_weights, int64_t b, const float* x0,
        const float* p, int steps, float decay, float restart, float edge_threshold,
        float node_threshold, float* out, float* work, uintptr_t stream)
    size_t c_spread_workspace_bytes "asmr::cuda::spread_workspace_bytes"(
        int64_t num_blocks, int64_t capacity)
    const char* c_spread "asmr::cuda::spread"(
        int device, int index_type, int64_t n, const void* indptr, const void* indices,
        const float* weights, int64_t num_queries, const int64_t* query_ids,
        const int64_t* seed_ptr, const void* seed_nodes, const float* seed_scores, int depth,
        float decay, float restart, float edge_threshold, float node_threshold,
        int64_t capacity, int64_t num_blocks, void* workspace, size_t workspace_bytes,
        int64_t* count, int64_t* edges, int64_t* st_node, float* st_activation,
        int32_t* st_hop, float* st_strength, int64_t* st_predecessor, uintptr_t stream)
    const char* c_spread_gather "asmr::cuda::spread_gather"(
        int device, int64_t num_queries, const int64_t* count, const int64_t* src,
        const int64_t* dst, const int64_t* st_node, const float* st_activation,
        const int32_t* st_hop, const float* st_strength, const int64_t* st_predecessor,
        int64_t* node, float* activation, int32_t* hop, float* strength, int64_t* predecessor,
        uintptr_t stream)
    const char* c_pair_cosine "asmr::cuda::pair_cosine"(
        int device, int claims_type, int units_type, int index_type, int64_t num_pairs,
        int64_t d, const void* claims, int64_t claims_ld, const void* units, int64_t units_ld,
        const void* claim_idx, const void* unit_idx, cbool prenormalized, float* out,
        uintptr_t stream)
    const char* c_apply_token_bitmask "asmr::cuda::apply_token_bitmask"(
        int device, int real_type, int64_t batch, int64_t vocab, void* logits, int64_t logits_ld,
        const int32_t* mask, int64_t words, const int32_t* rows, uintptr_t stream)

cdef inline int _check(const char* err) except -1:
    if err != NULL:
        raise RuntimeError("asmr CUDA: " + err.decode("utf-8", "replace"))
    return 0


def device_count():
    """(count, reason): reason is None when at least one device is usable."""
    cdef int count = 0
    cdef const char* err
    with nogil:
        err = c_device_count(&count)
    if err != NULL:
        return 0, err.decode("utf-8", "replace")
    return count, None


def device_attributes(int device):
    """(multiprocessor count, compute capability major, minor)."""
    cdef int sm = 0, major = 0, minor = 0
    cdef const char* err
    with nogil:
        err = c_device_attributes(device, &sm, &major, &minor)
    _check(err)
    return sm, major, minor


def versions():
    """(runtime version linked in, driver version), e.g. (13000, 13000)."""
    cdef int rt = 0, drv = 0
    cdef const char* err
    with nogil:
        err = c_versions(&rt, &drv)
    _check(err)
    return rt, drv


def synchronize(int device, uintptr_t stream):
    cdef const char* err
    with nogil:
        err = c_synchronize(device, stream)
    _check(err)


def check_index(int device, int index_type, uintptr_t a, int64_t length, int64_t lo, int64_t hi,
                uintptr_t status, uintptr_t stream):
    cdef const char* err
    with nogil:
        err = c_check_index(device, index_type, <const void*>a, length, lo, hi,
                            <int64_t*>status, stream)
    _check(err)


def check_real(int device, uintptr_t a, int64_t length, uintptr_t status, uintptr_t stream):
    cdef const char* err
    with nogil:
        err = c_check_real(device, <const float*>a, length, <int64_t*>status, stream)
    _check(err)


def transpose_workspace(int device, int index_type, int64_t n, int64_t nnz):
    cdef size_t nbytes = 0
    cdef const char* err
    with nogil:
        err = c_transpose_workspace(device, index_type, n, nnz, &nbytes)
    _check(err)
    return nbytes


def transpose_csr(int device, int index_type, int64_t n, int64_t nnz, uintptr_t indptr,
                  uintptr_t indices, uintptr_t weights, uintptr_t t_indptr, uintptr_t t_indices,
                  uintptr_t t_weights, uintptr_t workspace, size_t workspace_bytes,
                  uintptr_t stream):
    cdef const char* err
    with nogil:
        err = c_transpose_csr(device, index_type, n, nnz, <const void*>indptr,
                              <const void*>indices, <const float*>weights, <void*>t_indptr,
                              <void*>t_indices, <float*>t_weights, <void*>workspace,
                              workspace_bytes, stream)
    _check(err)


def diffuse(int device, int index_type, int64_t n, int64_t nnz, uintptr_t t_indptr,
            uintptr_t t_indices, uintptr_t t_weights, int64_t b, uintptr_t x0, uintptr_t p,
            int steps, float decay, float restart, float edge_threshold, float node_threshold,
            uintptr_t out, uintptr_t work, uintptr_t stream):
    cdef const char* err
    with nogil:
        err = c_diffuse(device, index_type, n, nnz, <const void*>t_indptr, <const void*>t_indices,
                        <const float*>t_weights, b, <const float*>x0, <const float*>p, steps,
                        decay, restart, edge_threshold, node_threshold, <float*>out,
                        <float*>work, stream)
    _check(err)


def spread_workspace_bytes(int64_t num_blocks, int64_t capacity):
    return c_spread_workspace_bytes(num_blocks, capacity)


def spread(int device, int index_type, int64_t n, uintptr_t indptr, uintptr_t indices,
           uintptr_t weights, int64_t num_queries, uintptr_t query_ids, uintptr_t seed_ptr,
           uintptr_t seed_nodes, uintptr_t seed_scores, int depth, float decay, float restart,
           float edge_threshold, float node_threshold, int64_t capacity, int64_t num_blocks,
           uintptr_t workspace, size_t workspace_bytes, uintptr_t count, uintptr_t edges,
           uintptr_t st_node, uintptr_t st_activation, uintptr_t st_hop, uintptr_t st_strength,
           uintptr_t st_predecessor, uintptr_t stream):
    cdef const char* err
    with nogil:
        err = c_spread(device, index_type, n, <const void*>indptr, <const void*>indices,
                       <const float*>weights, num_queries, <const int64_t*>query_ids,
                       <const int64_t*>seed_ptr, <const void*>seed_nodes,
                       <const float*>seed_scores, depth, decay, restart, edge_threshold,
                       node_threshold, capacity, num_blocks, <void*>workspace, workspace_bytes,
                       <int64_t*>count, <int64_t*>edges, <int64_t*>st_node,
                       <float*>st_activation, <int32_t*>st_hop, <float*>st_strength,
                       <int64_t*>st_predecessor, stream)
    _check(err)


def spread_gather(int device, int64_t num_queries, uintptr_t count, uintptr_t src, uintptr_t dst,
                  uintptr_t st_node, uintptr_t st_activation, uintptr_t st_hop,
                  uintptr_t st_strength, uintptr_t st_predecessor, uintptr_t node,
                  uintptr_t activation, uintptr_t hop, uintptr_t strength,
                  uintptr_t predecessor, uintptr_t stream):
    cdef const char* err
    with nogil:
        err = c_spread_gather(device, num_queries, <const int64_t*>count, <const int64_t*>src,
                              <const int64_t*>dst, <const int64_t*>st_node,
                              <const float*>st_activation, <const int32_t*>st_hop,
                              <const float*>st_strength, <const int64_t*>st_predecessor,
                              <int64_t*>node, <float*>activation, <int32_t*>hop,
                              <float*>strength, <int64_t*>predecessor, stream)
    _check(err)


def pair_cosine(int device, int claims_type, int units_type, int index_type, int64_t num_pairs,
                int64_t d, uintptr_t claims, int64_t claims_ld, uintptr_t units, int64_t units_ld,
                uintptr_t claim_idx, uintptr_t unit_idx, cbool prenormalized, uintptr_t out,
                uintptr_t stream):
    cdef const char* err
    with nogil:
        err = c_pair_cosine(device, claims_type, units_type, index_type, num_pairs, d,
                            <const void*>claims, claims_ld, <const void*>units, units_ld,
                            <const void*>claim_idx, <const void*>unit_idx, prenormalized,
                            <float*>out, stream)
    _check(err)


def apply_token_bitmask(int device, int real_type, int64_t batch, int64_t vocab, uintptr_t logits,
                        int64_t logits_ld, uintptr_t mask, int64_t words, uintptr_t rows, uintptr_t stream):
    cdef const char* err
    with nogil:
        err = c_apply_token_bitmask(device, real_type, batch, vocab, <void*>logits, logits_ld,
                                    <const int32_t*>mask, words, <const int32_t*>rows, stream)
    _check(err)
