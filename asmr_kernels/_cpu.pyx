# cython: language_level=3, boundscheck=False, wraparound=False, initializedcheck=False
# distutils: language = c++
"""Typed entry points of the CPU kernels.

Nothing here validates: the faces gathered by asmr_kernels.cpu check shapes,
dtypes and ranges and hand over contiguous arrays. These functions only take
pointers and release the GIL around the C++ call. Index arrays are int32 or
int64 (the fused index_t); the faces pass arrays of one index type per call.
"""

from libc.stdint cimport int32_t, int64_t, uint8_t, uint16_t, uint32_t
from cpython.buffer cimport PyBUF_FORMAT
from cpython.unicode cimport PyUnicode_DecodeASCII
from libc.string cimport memcpy
from libcpp cimport bool as cbool
from libcpp.string cimport string
from libcpp.unordered_set cimport unordered_set
from libcpp.vector cimport vector

import numpy as np
cimport numpy as cnp

cnp.import_array()

cdef extern from "asmr/common.h" namespace "asmr" nogil:
    int resolve_threads(int num_threads)
    cbool openmp_enabled()
    int64_t first_bad_float(const float* a, int64_t n, cbool allow_negative)

cdef extern from "asmr/buffer_pool.h" namespace "asmr" nogil:
    void* acquire_block(size_t bytes, size_t* capacity) except +
    void release_block(void* block, size_t capacity)

cdef extern from "asmr/diffuse.h" namespace "asmr" nogil:
    void diffuse_pull[I](int64_t n, const I* indptr, const I* indices, const float* weights,
                         int64_t b, const float* x0, const float* p, int steps, float decay,
                         float restart, float edge_threshold, float node_threshold, float* out,
                         float* work, int num_threads)
    void transpose_csr[I](int64_t n_rows, int64_t n_cols, const I* indptr, const I* indices,
                          const float* weights, I* t_indptr, I* t_indices, float* t_weights,
                          int num_threads)
    void build_tiles_kernel "asmr::build_tiles"[I](int64_t n, const I* indptr, const I* indices,
                                                   const float* weights, int dst_shift,
                                                   int src_shift, int64_t* group_ptr,
                                                   uint32_t* packed, float* t_weights,
                                                   int num_threads)
    void diffuse_tiled(int64_t n, int dst_shift, int src_shift, const int64_t* group_ptr,
                       const uint32_t* packed, const float* weights, int64_t b, const float* x0,
                       const float* p, int steps, float decay, float restart,
                       float edge_threshold, float node_threshold, float* out, float* work,
                       int num_threads)

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
    cdef cppclass SpreadWorkspace:
        pass
    SpreadWorkspace* spread_workspace_acquire() except +
    void spread_workspace_release(SpreadWorkspace* w)
    int64_t spread_dense_limit(int64_t nodes)
    int64_t spread_one[I, S](int64_t n, const I* indptr, const I* indices, const float* weights,
                             const S* seeds, const float* scores, int64_t num_seeds, int depth,
                             float decay, float restart, float edge_threshold,
                             float node_threshold, SpreadWorkspace* w, int64_t* edges) except +
    int64_t spread_one_write(SpreadWorkspace* w, int64_t* node, float* activation, int32_t* hop,
                             float* strength, int64_t* predecessor)

cdef extern from "asmr/pair_cosine.h" nogil:
    void pair_cosine_kernel "asmr::pair_cosine"[TC, TU, I](int64_t num_pairs, int64_t d, const TC* claims, const TU* units,
                                const I* claim_idx, const I* unit_idx, cbool prenormalized,
                                float* out, int num_threads)

cdef extern from "asmr/bm25.h" nogil:
    int64_t bm25_top_k_kernel "asmr::bm25_top_k"[I](int64_t num_units, const int64_t* indptr,
                                                     const I* indices, const float* data,
                                                     const float* upper, const int64_t* tokens,
                                                     int64_t num_tokens, const int64_t* rows,
                                                     const uint8_t* active, int64_t k,
                                                     int64_t* out_units, float* out_scores,
                                                     cbool* pruned) except +

cdef extern from "asmr/citation_mask.h" namespace "asmr" nogil:
    cdef cppclass CitationVocab:
        CitationVocab(int64_t vocab_size, const int64_t* offsets, const uint8_t* data,
                      const uint8_t* kinds, int num_markers, const int64_t* opener_offsets,
                      const uint8_t* opener_bytes, const int64_t* closer_offsets,
                      const uint8_t* closer_bytes) except +
        int64_t vocab_size()
        int64_t words()
        int32_t num_free_states()
        int64_t trie_nodes()
    cdef cppclass CitationAllowlist:
        CitationAllowlist(const CitationVocab* vocab, int64_t num_ids, const int64_t* id_offsets,
                          const uint8_t* id_bytes) except +
        int64_t num_states()
        cbool is_free(int32_t state)
        int32_t advance(int32_t state, int32_t token, cbool eos_blocked, int32_t* closed)
        void fill_mask(int32_t state, cbool eos_blocked, int32_t* out)
    void fill_citation_masks(int64_t batch, const CitationAllowlist* const* lists,
                             const int32_t* states, const uint8_t* eos_blocked, int32_t* out,
                             int64_t words, int num_threads)
    void apply_token_bitmask(int64_t batch, int64_t vocab, float* logits, const int32_t* mask,
                             int64_t words, const int32_t* rows, int num_threads)

cdef extern from "asmr/key_facts.h" namespace "asmr" nogil:
    cdef cppclass FactWords:
        unordered_set[string] common
    cdef cppclass KeyFact:
        int32_t kind
        string text
        string norm
    cbool key_facts_ascii(const char* text, int64_t n, const FactWords& words, vector[KeyFact]* out) except +

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


# ---- checks: one pass in C over the arrays, reporting the first offender ----------
# Each returns -1 when the array is fine, else the position of the first bad entry;
# asmr_kernels.checks turns that into a ValueError that names the argument.

def first_out_of_range(const index_t[::1] a, int64_t upper):
    """First entry outside [0, upper)."""
    cdef int64_t i, bad = -1
    with nogil:
        for i in range(a.shape[0]):
            if a[i] < 0 or a[i] >= upper:
                bad = i
                break
    return bad


def first_decrease(const index_t[::1] a):
    """First entry smaller than the one before it."""
    cdef int64_t i, bad = -1
    with nogil:
        for i in range(1, a.shape[0]):
            if a[i] < a[i - 1]:
                bad = i
                break
    return bad


def first_bad_value(const float[::1] a, bint allow_negative):
    """First entry that is NaN or infinite (or negative unless allowed)."""
    cdef int64_t bad = -1
    if a.shape[0]:
        with nogil:
            bad = first_bad_float(&a[0], a.shape[0], allow_negative)
    return bad


# ---- kernels: typed, GIL released -------------------------------------------------

def diffuse(const index_t[::1] indptr, const index_t[::1] indices, const float[::1] weights,
            const float[:, ::1] x0, const float[:, ::1] p, int steps, float decay, float restart,
            float edge_threshold, float node_threshold, float[:, ::1] out, float[:, ::1] work,
            int num_threads):
    """Pulls over the in-edges: (indptr, indices, weights) is the transposed graph."""
    cdef int64_t n = x0.shape[0], b = x0.shape[1]
    cdef const index_t* ix = NULL
    cdef const float* w = NULL
    cdef const float* pp = NULL
    cdef float* wk = NULL
    if n == 0 or b == 0:
        return
    if indices.shape[0] > 0:
        ix = &indices[0]
        w = &weights[0]
    if p is not None:
        pp = &p[0, 0]
    if work is not None:
        wk = &work[0, 0]
    with nogil:
        diffuse_pull(n, &indptr[0], ix, w, b, &x0[0, 0], pp, steps, decay, restart,
                     edge_threshold, node_threshold, &out[0, 0], wk, num_threads)


def transpose(const index_t[::1] indptr, const index_t[::1] indices, const float[::1] weights,
              int64_t n_cols, index_t[::1] t_indptr, index_t[::1] t_indices, float[::1] t_weights):
    """The CSR of the reversed graph (n_cols nodes) into the t_ arrays."""
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
        transpose_csr(n_rows, n_cols, &indptr[0], ix, w, &t_indptr[0], tix, tw, 0)


def build_tiles(const index_t[::1] indptr, const index_t[::1] indices, const float[::1] weights,
                int dst_shift, int src_shift, int64_t[::1] group_ptr, uint32_t[::1] packed,
                float[::1] t_weights, int num_threads):
    """Tiled in-edge layout from the out-edge CSR (see asmr/diffuse.h)."""
    cdef int64_t n = indptr.shape[0] - 1
    cdef const index_t* ix = NULL
    cdef const float* w = NULL
    cdef uint32_t* pk = NULL
    cdef float* tw = NULL
    if indices.shape[0] > 0:
        ix = &indices[0]
        w = &weights[0]
        pk = &packed[0]
        tw = &t_weights[0]
    with nogil:
        build_tiles_kernel(n, &indptr[0], ix, w, dst_shift, src_shift, &group_ptr[0], pk, tw,
                           num_threads)


def diffuse_tiles(int dst_shift, int src_shift, const int64_t[::1] group_ptr,
                  const uint32_t[::1] packed, const float[::1] weights, const float[:, ::1] x0,
                  const float[:, ::1] p, int steps, float decay, float restart,
                  float edge_threshold, float node_threshold, float[:, ::1] out,
                  float[:, ::1] work, int num_threads):
    cdef int64_t n = x0.shape[0], b = x0.shape[1]
    cdef const uint32_t* pk = NULL
    cdef const float* w = NULL
    cdef const float* pp = NULL
    cdef float* wk = NULL
    if n == 0 or b == 0:
        return
    if packed.shape[0] > 0:
        pk = &packed[0]
        w = &weights[0]
    if p is not None:
        pp = &p[0, 0]
    if work is not None:
        wk = &work[0, 0]
    with nogil:
        diffuse_tiled(n, dst_shift, src_shift, &group_ptr[0], pk, w, b, &x0[0, 0], pp, steps,
                      decay, restart, edge_threshold, node_threshold, &out[0, 0], wk,
                      num_threads)


cdef object _vec_i64(vector[int64_t]& v):
    a = np.empty(v.size(), dtype=np.int64)
    cdef int64_t[::1] view = a
    if v.size():
        memcpy(&view[0], v.data(), v.size() * sizeof(int64_t))
    return a


cdef inline size_t _round64(size_t n) noexcept:
    return (n + 63) // 64 * 64


cdef class _Block:
    """A pooled block of memory exposed as a writable byte buffer; NumPy arrays
    made with np.frombuffer keep it alive, and it goes back to the pool when
    the last of them is gone."""
    cdef void* data
    cdef size_t capacity
    cdef Py_ssize_t size
    cdef Py_ssize_t shape[1]
    cdef Py_ssize_t strides[1]

    def __cinit__(self, size_t size):
        self.data = acquire_block(size, &self.capacity)
        self.size = <Py_ssize_t>size

    def __dealloc__(self):
        release_block(self.data, self.capacity)

    def __getbuffer__(self, Py_buffer* view, int flags):
        self.shape[0] = self.size
        self.strides[0] = 1
        view.buf = self.data
        view.obj = self
        view.len = self.size
        view.readonly = 0
        view.itemsize = 1
        view.format = NULL
        if flags & PyBUF_FORMAT:
            view.format = b"B"
        view.ndim = 1
        view.shape = self.shape
        view.strides = self.strides
        view.suboffsets = NULL
        view.internal = NULL

    def __releasebuffer__(self, Py_buffer* view):
        pass


def spread(const index_t[::1] indptr, const index_t[::1] indices, const float[::1] weights,
           const int64_t[::1] seed_ptr, const index_t[::1] seed_nodes,
           const float[::1] seed_scores, int depth, float decay, float restart,
           float edge_threshold, float node_threshold, int num_threads):
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
    # One pooled block holds the five output arrays (see buffer_pool.h).
    cdef size_t bytes = <size_t>(total * 28 + 5 * 64)
    block = _Block(bytes)
    node = np.frombuffer(block, dtype=np.int64, count=total, offset=0)
    cdef size_t off = _round64(total * 8)
    predecessor = np.frombuffer(block, dtype=np.int64, count=total, offset=off)
    off += _round64(total * 8)
    activation = np.frombuffer(block, dtype=np.float32, count=total, offset=off)
    off += _round64(total * 4)
    strength = np.frombuffer(block, dtype=np.float32, count=total, offset=off)
    off += _round64(total * 4)
    hop = np.frombuffer(block, dtype=np.int32, count=total, offset=off)
    cdef int64_t[::1] node_v = node, pred_v = predecessor
    cdef float[::1] act_v = activation, str_v = strength
    cdef int32_t[::1] hop_v = hop
    if total:
        with nogil:
            res.copy_out(&node_v[0], &act_v[0], &hop_v[0], &str_v[0], &pred_v[0])
    return (_vec_i64(res.ptr), node, activation, hop, strength, predecessor,
            _vec_i64(res.elapsed_ns), int(res.edges_touched))


_I32 = np.dtype(np.int32)  # looked up once: SpreadSession.run compares a seed array's dtype with it


def dense_spread_limit(int64_t nodes=-1):
    """Graphs of up to this many nodes use spread's dense node -> slot map; sets it when
    nodes >= 0 (tests use it to run the hash table on small graphs). Returns the previous limit."""
    return spread_dense_limit(nodes)


cdef class SpreadSessionBase:
    """One query at a time over one graph with fixed parameters, for latency.

    asmr_kernels.cpu_spread.SpreadSession validates the graph and the parameters
    once and binds them here; run() validates only its seeds, in typed loops,
    since a query's whole budget is microseconds. Nothing is allocated per call
    but the result's five arrays: the workspace comes from the pool that batched
    spread calls share.
    """
    cdef object _graph_arrays  # keeps indptr, indices, weights alive
    cdef const int32_t* _ip32
    cdef const int32_t* _ix32
    cdef const int64_t* _ip64
    cdef const int64_t* _ix64
    cdef const float* _w
    cdef bint _wide, _bound
    cdef readonly int64_t num_nodes
    cdef int _depth
    cdef float _decay, _restart, _edge_threshold, _node_threshold
    cdef object _query_type
    cdef object _ones
    cdef readonly int64_t edges_touched

    def _bind(self, indptr, indices, weights, int depth, float decay, float restart,
              float edge_threshold, float node_threshold, query_type):
        cdef const int32_t[::1] ip32, ix32
        cdef const int64_t[::1] ip64, ix64
        cdef const float[::1] w = weights
        self._wide = indices.dtype == np.int64
        if self._wide:
            ip64 = indptr
            ix64 = indices
            self._ip64 = &ip64[0]
            self._ix64 = &ix64[0] if ix64.shape[0] else NULL
            self.num_nodes = ip64.shape[0] - 1
        else:
            ip32 = indptr
            ix32 = indices
            self._ip32 = &ip32[0]
            self._ix32 = &ix32[0] if ix32.shape[0] else NULL
            self.num_nodes = ip32.shape[0] - 1
        self._w = &w[0] if w.shape[0] else NULL
        self._graph_arrays = (indptr, indices, weights)
        self._depth, self._decay, self._restart = depth, decay, restart
        self._edge_threshold, self._node_threshold = edge_threshold, node_threshold
        self._query_type = query_type
        self._ones = np.ones(0, dtype=np.float32)
        self._bound = True

    def run(self, seed_nodes, seed_scores=None):
        """The reached nodes of one query (a SpreadQuery); seeds as in spread()."""
        if not self._bound:
            raise RuntimeError("SpreadSessionBase is not bound to a graph; use asmr_kernels.SpreadSession")
        cdef const int32_t[::1] nodes32
        cdef const int64_t[::1] nodes64
        if getattr(seed_nodes, "dtype", None) == _I32:
            try:
                nodes32 = seed_nodes
            except (ValueError, TypeError, BufferError):  # not contiguous: the general path
                pass
            else:
                return self._run(nodes32, seed_scores)
        try:
            nodes64 = seed_nodes
        except (ValueError, TypeError, BufferError):  # not 1-D contiguous int64: the general path
            from .checks import index_array
            nodes64 = index_array("seed_nodes", seed_nodes).astype(np.int64, copy=False)
        return self._run(nodes64, seed_scores)

    cdef _run(self, const index_t[::1] nodes, seed_scores):
        cdef const float[::1] scores
        cdef cnp.ndarray node, activation, hop, strength, predecessor
        cdef int64_t k = nodes.shape[0], i
        if seed_scores is None:
            if self._ones.shape[0] < k:
                self._ones = np.ones(max(k, 64), dtype=np.float32)
            scores = self._ones
        else:
            try:
                scores = seed_scores
            except (ValueError, TypeError, BufferError):
                from .checks import float_array
                scores = float_array("seed_scores", seed_scores, ndim=(1,))
            if scores.shape[0] != k:
                raise ValueError(f"seed_scores has {scores.shape[0]} entries but seed_nodes has {k}")
        cdef int64_t bad_node = -1, bad_score = -1, n = self.num_nodes
        cdef float v
        with nogil:
            for i in range(k):
                if nodes[i] < 0 or nodes[i] >= n:
                    bad_node = i
                    break
            for i in range(k):
                v = scores[i]
                if not (v - v == 0.0) or v < 0:
                    bad_score = i
                    break
        if bad_node >= 0:
            raise ValueError(f"seed_nodes holds index {nodes[bad_node]} at position {bad_node}, "
                             f"out of range for {n} nodes")
        if bad_score >= 0:
            v = scores[bad_score]
            what = "negative values" if v - v == 0.0 else "NaN or infinite values"
            raise ValueError(f"seed_scores contains {what} (first at flat position {bad_score}: {v})")
        cdef const index_t* sp = &nodes[0] if k else NULL
        cdef const float* cp = &scores[0] if k else NULL
        cdef int64_t bound, count = 0, edges = 0
        cdef SpreadWorkspace* ws = NULL
        try:
            with nogil:
                ws = spread_workspace_acquire()
                if self._wide:
                    bound = spread_one(n, self._ip64, self._ix64, self._w, sp, cp, k, self._depth,
                                       self._decay, self._restart, self._edge_threshold,
                                       self._node_threshold, ws, &edges)
                else:
                    bound = spread_one(n, self._ip32, self._ix32, self._w, sp, cp, k, self._depth,
                                       self._decay, self._restart, self._edge_threshold,
                                       self._node_threshold, ws, &edges)
            # The kernel writes straight into the result's arrays; it may fill
            # fewer rows than the bound (nodes that faded out at the last step).
            node = _new_array(bound, cnp.NPY_INT64)
            activation = _new_array(bound, cnp.NPY_FLOAT32)
            hop = _new_array(bound, cnp.NPY_INT32)
            strength = _new_array(bound, cnp.NPY_FLOAT32)
            predecessor = _new_array(bound, cnp.NPY_INT64)
            if bound:
                with nogil:
                    count = spread_one_write(ws, <int64_t*>cnp.PyArray_DATA(node),
                                             <float*>cnp.PyArray_DATA(activation),
                                             <int32_t*>cnp.PyArray_DATA(hop),
                                             <float*>cnp.PyArray_DATA(strength),
                                             <int64_t*>cnp.PyArray_DATA(predecessor))
        finally:
            spread_workspace_release(ws)
        if count < bound:
            node, activation, hop = node[:count], activation[:count], hop[:count]
            strength, predecessor = strength[:count], predecessor[:count]
        self.edges_touched = edges
        return self._query_type(node, activation, hop, strength, predecessor)


cdef cnp.ndarray _new_array(int64_t size, int typenum):
    # Through NumPy's C API: np.empty and a memoryview cost a microsecond for
    # the five arrays of a query whose whole budget is twenty.
    cdef cnp.npy_intp dims[1]
    dims[0] = size
    return cnp.PyArray_EMPTY(1, dims, typenum, 0)


def pair_cosine(const claim_t[:, ::1] claims, const unit_t[:, ::1] units,
                const index_t[::1] claim_idx, const index_t[::1] unit_idx, cbool prenormalized,
                float[::1] out, int num_threads):
    """Fused over 8 type combinations; the dispatch costs microseconds, the work milliseconds."""
    cdef int64_t m = out.shape[0], d = claims.shape[1]
    if m == 0:
        return
    with nogil:
        pair_cosine_kernel(m, d, &claims[0, 0], &units[0, 0], &claim_idx[0], &unit_idx[0],
                           prenormalized, &out[0], num_threads)


# ---- citation masks ------------------------------------------------------------------

cdef class CitationVocabHandle:
    """A tokenizer's byte strings and the markers, prepared once (cpu_citation.CitationVocab)."""
    cdef CitationVocab* ptr

    def __cinit__(self, const int64_t[::1] offsets, const uint8_t[::1] data, const uint8_t[::1] kinds,
                  const int64_t[::1] opener_offsets, const uint8_t[::1] opener_bytes,
                  const int64_t[::1] closer_offsets, const uint8_t[::1] closer_bytes):
        cdef int64_t n = kinds.shape[0]
        cdef int m = opener_offsets.shape[0] - 1
        # An empty memoryview has no element 0 to take the address of.
        cdef uint8_t nothing = 0
        cdef const uint8_t* d = &data[0] if data.shape[0] else &nothing
        with nogil:
            self.ptr = new CitationVocab(n, &offsets[0], d, &kinds[0], m, &opener_offsets[0],
                                         &opener_bytes[0], &closer_offsets[0], &closer_bytes[0])

    def __dealloc__(self):
        del self.ptr

    @property
    def words(self):
        return self.ptr.words()

    @property
    def vocab_size(self):
        return self.ptr.vocab_size()

    @property
    def num_free_states(self):
        return self.ptr.num_free_states()

    @property
    def trie_nodes(self):
        return self.ptr.trie_nodes()


cdef class CitationAllowlistHandle:
    """One allowlist compiled against a CitationVocabHandle."""
    cdef CitationAllowlist* ptr
    cdef CitationVocabHandle vocab

    def __cinit__(self, CitationVocabHandle vocab, const int64_t[::1] id_offsets, const uint8_t[::1] id_bytes):
        cdef int64_t n = id_offsets.shape[0] - 1
        cdef uint8_t nothing = 0
        cdef const uint8_t* d = &id_bytes[0] if id_bytes.shape[0] else &nothing
        self.vocab = vocab
        try:
            with nogil:
                self.ptr = new CitationAllowlist(vocab.ptr, n, &id_offsets[0], d)
        except ValueError as exc:  # std::invalid_argument
            raise ValueError(f"allowlist: {exc}") from None

    def __dealloc__(self):
        del self.ptr

    @property
    def num_states(self):
        return self.ptr.num_states()

    def is_free(self, int32_t state):
        return self.ptr.is_free(state)

    def advance(self, int32_t state, int32_t token, bint eos_blocked):
        """(next state or -1, markers closed by the token)."""
        cdef int32_t closed = 0
        cdef int32_t nxt = self.ptr.advance(state, token, eos_blocked, &closed)
        return nxt, closed

    def fill_row(self, int32_t state, bint eos_blocked, int32_t[:, ::1] out, Py_ssize_t row):
        """out[row] = the mask at state; checks the width and the row (the per-token path, kept lean)."""
        if out.shape[1] != self.vocab.ptr.words():
            raise ValueError(f"bitmask rows must have {self.vocab.ptr.words()} int32 words, got {out.shape[1]}")
        if row < 0 or row >= out.shape[0]:
            raise ValueError(f"row {row} outside the bitmask's {out.shape[0]} rows")
        if state < 0 or state >= self.ptr.num_states():
            raise ValueError(f"automaton state {state} out of range")
        with nogil:
            self.ptr.fill_mask(state, eos_blocked, &out[row, 0])


def fill_citation_masks_batch(list handles, const int32_t[::1] states, const uint8_t[::1] eos_blocked,
                              int32_t[:, ::1] out, int num_threads):
    """Row r of out gets handles[r]'s mask at states[r]; a None handle means no constraint."""
    cdef int64_t b = len(handles), r
    cdef vector[const CitationAllowlist*] lists
    lists.resize(b)
    for r in range(b):
        h = handles[r]
        if h is not None:
            lists[r] = (<CitationAllowlistHandle>h).ptr
    with nogil:
        fill_citation_masks(b, lists.data(), &states[0], &eos_blocked[0], &out[0, 0], out.shape[1],
                            num_threads)


def apply_token_bitmask_rows(float[:, ::1] logits, const int32_t[:, ::1] mask, const int32_t[::1] rows,
                             int num_threads):
    """logits[r, t] = -inf where token t's bit is clear in mask[rows[r]] (mask[r] when rows is empty)."""
    cdef const int32_t* rp = &rows[0] if rows.shape[0] else NULL
    with nogil:
        apply_token_bitmask(logits.shape[0], logits.shape[1], &logits[0, 0], &mask[0, 0], mask.shape[1],
                            rp, num_threads)


# ---- BM25 top-k ------------------------------------------------------------------------

def bm25_top_k(int64_t num_units, const int64_t[::1] indptr, const index_t[::1] indices,
               const float[::1] data, const float[::1] upper, const int64_t[::1] tokens,
               const int64_t[::1] rows, const uint8_t[::1] active, int64_t k,
               int64_t[::1] out_units, float[::1] out_scores):
    """Returns (units written, whether MaxScore pruned); ``rows`` and ``active`` are both None or
    both given; ``upper`` None turns pruning off."""
    cdef const int64_t* rows_p = NULL
    cdef const uint8_t* active_p = NULL
    cdef const float* upper_p = NULL
    cdef cbool pruned = False
    if active is not None:
        rows_p = &rows[0]
        active_p = &active[0]
    if upper is not None:
        upper_p = &upper[0]
    cdef int64_t n
    with nogil:
        n = bm25_top_k_kernel(num_units, &indptr[0], &indices[0], &data[0], upper_p, &tokens[0],
                              tokens.shape[0], rows_p, active_p, k, &out_units[0], &out_scores[0],
                              &pruned)
    return n, pruned


# ---- key facts of ASCII text -----------------------------------------------------------

cdef class KeyFactExtractor:
    """Holds the common words; ``extract(text)`` returns the facts as ``fact_type(kind, text, norm)``."""
    cdef FactWords words
    cdef object fact_type
    cdef tuple kinds

    def __init__(self, list common, fact_type, tuple kinds):
        for w in common:
            self.words.common.insert(<bytes>w.encode("ascii"))
        self.fact_type = fact_type
        self.kinds = kinds

    def extract(self, str text):
        """A tuple of facts, or None where the text is left to the Python extractor."""
        cdef bytes data = text.encode("ascii")
        cdef const char* p = data
        cdef int64_t n = len(data)
        cdef vector[KeyFact] out
        cdef cbool ok
        with nogil:
            ok = key_facts_ascii(p, n, self.words, &out)
        if not ok:
            return None
        new = tuple.__new__
        return tuple([new(self.fact_type, (self.kinds[f.kind],
                                           PyUnicode_DecodeASCII(f.text.c_str(), f.text.size(), NULL),
                                           PyUnicode_DecodeASCII(f.norm.c_str(), f.norm.size(), NULL)))
                      for f in out])
