# cython: language_level=3, boundscheck=False, wraparound=False, initializedcheck=False
# distutils: language = c++
"""Typed entry points of the CPU kernels.

Nothing here validates: asmr_kernels.cpu checks shapes, dtypes and ranges and
hands over contiguous arrays. These functions only take pointers and release
the GIL around the C++ call.
"""

from libc.stdint cimport int32_t, int64_t, uint16_t
from libc.string cimport memcpy
from libcpp cimport bool as cbool
from libcpp.vector cimport vector

import numpy as np

cdef extern from "asmr/common.h" namespace "asmr" nogil:
    int resolve_threads(int num_threads)
    cbool openmp_enabled()

cdef extern from "asmr/diffuse.h" namespace "asmr" nogil:
    void diffuse_pull[I](int64_t n, const I* indptr, const I* indices, const float* weights,
                         int64_t b, const float* x0, const float* p, int steps, float decay,
                         float restart, float edge_threshold, float node_threshold, float* out,
                         float* work, int num_threads)
    void transpose_csr[I](int64_t n_rows, int64_t n_cols, const I* indptr, const I* indices,
                          const float* weights, I* t_indptr, I* t_indices, float* t_weights)

cdef extern from "asmr/spread.h" namespace "asmr" nogil:
    cdef cppclass SpreadResult:
        vector[int64_t] ptr
        vector[int64_t] elapsed_ns
        int64_t edges_touched
        int64_t total()
        void copy_out(int64_t* node, float* activation, int32_t* hop, float* strength,
                      int64_t* predecessor)
    void spread_push[I](int64_t n, const I* indptr, const I* indices, const float* weights,
                        int64_t num_queries, const int64_t* seed_ptr, const I* seed_nodes,
                        const float* seed_scores, int depth, float decay, float restart,
                        float edge_threshold, float node_threshold, int num_threads,
                        SpreadResult* out)

cdef extern from "asmr/pair_cosine.h" namespace "asmr" nogil:
    void pair_cosine[TC, TU, I](int64_t num_pairs, int64_t d, const TC* claims, const TU* units,
                                const I* claim_idx, const I* unit_idx, cbool prenormalized,
                                float* out, int num_threads)

ctypedef fused index_t:
    int32_t
    int64_t

ctypedef fused claim_t:
    float
    uint16_t

ctypedef fused unit_t:
    float
    uint16_t


def max_threads():
    """Threads a kernel uses when asked for 0 (all cores)."""
    return resolve_threads(0)


def has_openmp():
    return bool(openmp_enabled())


def _diffuse(const index_t[::1] indptr, const index_t[::1] indices, const float[::1] weights,
             const float[:, ::1] x0, const float[:, ::1] p, int steps, float decay, float restart,
             float edge_threshold, float node_threshold, float[:, ::1] out, float[:, ::1] work,
             int num_threads):
    cdef int64_t n = x0.shape[0], b = x0.shape[1]
    cdef const index_t* ip = &indptr[0]
    cdef const index_t* ix = NULL
    cdef const float* w = NULL
    cdef const float* pp = NULL
    cdef float* wk = NULL
    if indices.shape[0] > 0:
        ix = &indices[0]
        w = &weights[0]
    if p is not None and p.shape[0] > 0:
        pp = &p[0, 0]
    if work is not None and work.shape[0] > 0:
        wk = &work[0, 0]
    if n == 0 or b == 0:
        return
    with nogil:
        diffuse_pull(n, ip, ix, w, b, &x0[0, 0], pp, steps, decay, restart, edge_threshold,
                     node_threshold, &out[0, 0], wk, num_threads)


def _transpose(const index_t[::1] indptr, const index_t[::1] indices, const float[::1] weights,
               int64_t n_cols, index_t[::1] t_indptr, index_t[::1] t_indices, float[::1] t_weights):
    cdef int64_t n_rows = indptr.shape[0] - 1
    cdef const index_t* ix = NULL
    cdef const float* w = NULL
    cdef index_t* tix = NULL
    cdef float* tw = NULL
    if indices.shape[0] > 0:
        ix = &indices[0]
        w = &weights[0]
        tix = &t_indices[0]
        tw = &t_weights[0]
    with nogil:
        transpose_csr(n_rows, n_cols, &indptr[0], ix, w, &t_indptr[0], tix, tw)


cdef object _vec_i64(vector[int64_t]& v):
    a = np.empty(v.size(), dtype=np.int64)
    cdef int64_t[::1] view = a
    if v.size():
        with nogil:
            memcpy(&view[0], v.data(), v.size() * sizeof(int64_t))
    return a


def _spread(const index_t[::1] indptr, const index_t[::1] indices, const float[::1] weights,
            const int64_t[::1] seed_ptr, const index_t[::1] seed_nodes, const float[::1] seed_scores,
            int depth, float decay, float restart, float edge_threshold, float node_threshold,
            int num_threads):
    """Returns (ptr, node, activation, hop, strength, predecessor, elapsed_ns, edges_touched)."""
    cdef SpreadResult res
    cdef int64_t n = indptr.shape[0] - 1
    cdef int64_t q = seed_ptr.shape[0] - 1
    cdef const index_t* ix = NULL
    cdef const float* w = NULL
    cdef const index_t* sn = NULL
    cdef const float* ss = NULL
    if indices.shape[0] > 0:
        ix = &indices[0]
        w = &weights[0]
    if seed_nodes.shape[0] > 0:
        sn = &seed_nodes[0]
        ss = &seed_scores[0]
    with nogil:
        spread_push(n, &indptr[0], ix, w, q, &seed_ptr[0], sn, ss, depth, decay, restart,
                    edge_threshold, node_threshold, num_threads, &res)
    cdef int64_t total = res.total()
    node = np.empty(total, dtype=np.int64)
    activation = np.empty(total, dtype=np.float32)
    hop = np.empty(total, dtype=np.int32)
    strength = np.empty(total, dtype=np.float32)
    predecessor = np.empty(total, dtype=np.int64)
    cdef int64_t[::1] node_v = node, pred_v = predecessor
    cdef float[::1] act_v = activation, str_v = strength
    cdef int32_t[::1] hop_v = hop
    if total:
        with nogil:
            res.copy_out(&node_v[0], &act_v[0], &hop_v[0], &str_v[0], &pred_v[0])
    return (_vec_i64(res.ptr), node, activation, hop, strength, predecessor,
            _vec_i64(res.elapsed_ns), int(res.edges_touched))


def _pair_cosine(const claim_t[:, ::1] claims, const unit_t[:, ::1] units,
                 const index_t[::1] claim_idx, const index_t[::1] unit_idx, cbool prenormalized,
                 float[::1] out, int num_threads):
    cdef int64_t m = out.shape[0], d = claims.shape[1]
    if m == 0:
        return
    with nogil:
        pair_cosine(m, d, &claims[0, 0], &units[0, 0], &claim_idx[0], &unit_idx[0],
                    prenormalized, &out[0], num_threads)
