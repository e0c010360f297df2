// The citation-closure automaton (see citation_mask.h).
#include "asmr/citation_mask.h"

#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <deque>
#include <limits>
#include <stdexcept>
#include <string>

#include "asmr/common.h"

namespace asmr {
namespace {

inline void set_bit(int32_t* mask, int64_t t) {
  mask[t >> 5] |= static_cast<int32_t>(1u << (t & 31));
}
inline void clear_bit(int32_t* mask, int64_t t) {
  mask[t >> 5] &= ~static_cast<int32_t>(1u << (t & 31));
}

// Index of the child of `node` reached by `byte`, or -1 (children sorted by byte).
inline int32_t find_child(const int64_t* ptr, const uint8_t* byte, const int32_t* next, int64_t node,
                          uint8_t b) {
  const uint8_t* lo = byte + ptr[node];
  const uint8_t* hi = byte + ptr[node + 1];
  const uint8_t* it = std::lower_bound(lo, hi, b);
  return (it != hi && *it == b) ? next[it - byte] : -1;
}

}  // namespace

// ---- vocabulary ---------------------------------------------------------------

CitationVocab::CitationVocab(int64_t vocab_size, const int64_t* offsets, const uint8_t* bytes,
                             const uint8_t* kinds, int num_markers,
                             const int64_t* opener_offsets, const uint8_t* opener_bytes,
                             const int64_t* closer_offsets, const uint8_t* closer_bytes)
    : vocab_size_(vocab_size),
      words_((vocab_size + 31) / 32),
      offsets_(offsets, offsets + vocab_size + 1),
      bytes_(bytes, bytes + offsets[vocab_size]),
      kinds_(kinds, kinds + vocab_size) {
  for (int64_t t = 0; t < vocab_size; ++t) {
    if (kinds_[t] == kTokenText && offsets_[t + 1] == offsets_[t]) kinds_[t] = kTokenNever;
    if (kinds_[t] == kTokenEos) eos_ids_.push_back(static_cast<int32_t>(t));
  }
  for (int k = 0; k < num_markers; ++k)
    closers_.emplace_back(closer_bytes + closer_offsets[k], closer_bytes + closer_offsets[k + 1]);

  // Trie of the text tokens, built from their byte strings in sorted order so
  // that nodes come out in preorder and each node's children by byte.
  std::vector<int32_t> order;
  for (int64_t t = 0; t < vocab_size; ++t)
    if (kinds_[t] == kTokenText) order.push_back(static_cast<int32_t>(t));
  auto text = [&](int32_t t) {
    return std::pair<const uint8_t*, int64_t>(bytes_.data() + offsets_[t], offsets_[t + 1] - offsets_[t]);
  };
  std::sort(order.begin(), order.end(), [&](int32_t a, int32_t b) {
    auto [pa, la] = text(a);
    auto [pb, lb] = text(b);
    int c = std::memcmp(pa, pb, static_cast<size_t>(std::min(la, lb)));
    return c != 0 ? c < 0 : (la != lb ? la < lb : a < b);
  });
  std::vector<int32_t> parent{-1}, tok_node(vocab_size, -1), path{0};
  std::vector<uint8_t> in_byte{0};
  std::vector<uint16_t> depth{0};
  const uint8_t* prev = nullptr;
  int64_t prev_len = 0;
  for (int32_t t : order) {
    auto [p, len] = text(t);
    int64_t lcp = 0;
    while (lcp < len && lcp < prev_len && p[lcp] == prev[lcp]) ++lcp;
    path.resize(static_cast<size_t>(lcp) + 1);
    for (int64_t d = lcp; d < len; ++d) {
      parent.push_back(path.back());
      in_byte.push_back(p[d]);
      depth.push_back(static_cast<uint16_t>(std::min<int64_t>(d + 1, 65535)));
      path.push_back(static_cast<int32_t>(parent.size() - 1));
    }
    tok_node[t] = path[static_cast<size_t>(len)];
    prev = p;
    prev_len = len;
  }
  const int64_t n_nodes = static_cast<int64_t>(parent.size());
  child_ptr_.assign(n_nodes + 1, 0);
  for (int64_t v = 1; v < n_nodes; ++v) ++child_ptr_[parent[v] + 1];
  for (int64_t v = 0; v < n_nodes; ++v) child_ptr_[v + 1] += child_ptr_[v];
  child_byte_.resize(n_nodes > 0 ? n_nodes - 1 : 0);
  child_node_.resize(child_byte_.size());
  {
    std::vector<int64_t> fill(child_ptr_.begin(), child_ptr_.end() - 1);
    for (int64_t v = 1; v < n_nodes; ++v) {
      int64_t at = fill[parent[v]]++;
      child_byte_[at] = in_byte[v];
      child_node_[at] = static_cast<int32_t>(v);
    }
  }
  tok_ptr_.assign(n_nodes + 1, 0);
  for (int32_t t : order) ++tok_ptr_[tok_node[t] + 1];
  for (int64_t v = 0; v < n_nodes; ++v) tok_ptr_[v + 1] += tok_ptr_[v];
  tok_ids_.resize(order.size());
  {
    std::vector<int64_t> fill(tok_ptr_.begin(), tok_ptr_.end() - 1);
    for (int32_t t : order) tok_ids_[fill[tok_node[t]]++] = t;
  }
  // Preorder: the subtree of v is the node range [v, subtree_end[v]).
  std::vector<int32_t> subtree_end(n_nodes);
  for (int64_t v = n_nodes - 1; v >= 0; --v) {
    int64_t last = child_ptr_[v + 1] > child_ptr_[v] ? subtree_end[child_node_[child_ptr_[v + 1] - 1]] : v + 1;
    subtree_end[v] = static_cast<int32_t>(last);
  }

  // Aho-Corasick over the openers.
  std::vector<std::vector<int32_t>> go{std::vector<int32_t>(256, -1)};
  ac_marker_.assign(1, -1);
  for (int k = 0; k < num_markers; ++k) {
    int32_t s = 0;
    for (int64_t i = opener_offsets[k]; i < opener_offsets[k + 1]; ++i) {
      uint8_t b = opener_bytes[i];
      if (go[s][b] < 0) {
        go[s][b] = static_cast<int32_t>(go.size());
        go.emplace_back(256, -1);
        ac_marker_.push_back(-1);
      }
      s = go[s][b];
    }
    ac_marker_[s] = k;
  }
  num_free_ = static_cast<int32_t>(go.size());
  std::vector<int32_t> fail(num_free_, 0);
  std::deque<int32_t> queue;
  for (int b = 0; b < 256; ++b) {
    if (go[0][b] < 0) go[0][b] = 0;
    else queue.push_back(go[0][b]);
  }
  while (!queue.empty()) {
    int32_t s = queue.front();
    queue.pop_front();
    for (int b = 0; b < 256; ++b) {
      int32_t c = go[s][b];
      if (c < 0) {
        go[s][b] = go[fail[s]][b];
      } else {
        fail[c] = go[fail[s]][b];
        queue.push_back(c);
      }
    }
  }
  ac_next_.resize(static_cast<size_t>(num_free_) * 256);
  for (int32_t s = 0; s < num_free_; ++s) std::copy(go[s].begin(), go[s].end(), ac_next_.begin() + s * 256);

  // Per free state: tokens that stay free text, and those that open a marker.
  base_masks_.assign(static_cast<size_t>(num_free_ * words_), 0);
  opening_ptr_.assign(num_free_ + 1, 0);
  std::vector<std::pair<int32_t, int32_t>> stack;
  for (int32_t s = 0; s < num_free_; ++s) {
    opening_ptr_[s] = static_cast<int64_t>(opening_.size());
    if (ac_marker_[s] >= 0) continue;  // never occupied: the opener's last byte enters the id
    int32_t* mask = base_masks_.data() + s * words_;
    for (int64_t t = 0; t < vocab_size; ++t)
      if (kinds_[t] == kTokenSpecial || kinds_[t] == kTokenEos) set_bit(mask, t);
    stack.assign(1, {0, s});
    while (!stack.empty()) {
      auto [v, st] = stack.back();
      stack.pop_back();
      for (int64_t e = child_ptr_[v]; e < child_ptr_[v + 1]; ++e) {
        int32_t c = child_node_[e];
        int32_t ns = ac_next_[st * 256 + child_byte_[e]];
        if (ac_marker_[ns] >= 0) {
          for (int64_t i = tok_ptr_[c]; i < tok_ptr_[subtree_end[c]]; ++i)
            opening_.push_back({tok_ids_[i], depth[c], ac_marker_[ns]});
          continue;
        }
        for (int64_t i = tok_ptr_[c]; i < tok_ptr_[c + 1]; ++i) set_bit(mask, tok_ids_[i]);
        if (child_ptr_[c + 1] > child_ptr_[c]) stack.push_back({c, ns});
      }
    }
  }
  opening_ptr_[num_free_] = static_cast<int64_t>(opening_.size());
}

// ---- allowlist ----------------------------------------------------------------

CitationAllowlist::CitationAllowlist(const CitationVocab* vocab, int64_t num_ids,
                                     const int64_t* id_offsets, const uint8_t* id_bytes)
    : vocab_(vocab) {
  const int32_t nf = vocab->num_free_;
  // Edges (from node, byte, next state) of all markers' id tries; strings of
  // a marker in sorted order, so nodes are created parent before child and
  // each node's edges come in byte order.
  std::vector<int32_t> from, next;
  std::vector<uint8_t> byte;
  int32_t nodes = 0;
  for (int k = 0; k < vocab->num_markers(); ++k) {
    const std::vector<uint8_t>& closer = vocab->closers_[k];
    std::vector<std::string> strings;
    strings.reserve(static_cast<size_t>(num_ids));
    for (int64_t i = 0; i < num_ids; ++i) {
      std::string s(reinterpret_cast<const char*>(id_bytes + id_offsets[i]),
                    static_cast<size_t>(id_offsets[i + 1] - id_offsets[i]));
      s.append(closer.begin(), closer.end());
      strings.push_back(std::move(s));
    }
    std::sort(strings.begin(), strings.end());
    strings.erase(std::unique(strings.begin(), strings.end()), strings.end());
    const int32_t root = nodes++;
    roots_.push_back(nf + root);
    std::vector<int32_t> path{root};
    const std::string* prev = nullptr;
    for (const std::string& s : strings) {
      size_t lcp = 0;
      if (prev) while (lcp < s.size() && lcp < prev->size() && s[lcp] == (*prev)[lcp]) ++lcp;
      if (lcp >= s.size() || (prev && lcp == prev->size()))
        throw std::invalid_argument("an allowlisted id followed by its closer is a prefix of another id");
      path.resize(lcp + 1);
      for (size_t d = lcp; d < s.size(); ++d) {
        from.push_back(path.back());
        byte.push_back(static_cast<uint8_t>(s[d]));
        if (d + 1 == s.size()) {
          next.push_back(0);  // the closer's last byte: free text again
        } else {
          next.push_back(nf + nodes);
          path.push_back(nodes++);
        }
      }
      prev = &s;
    }
  }
  node_ptr_.assign(static_cast<size_t>(nodes) + 1, 0);
  for (int32_t f : from) ++node_ptr_[f + 1];
  for (int32_t n = 0; n < nodes; ++n) node_ptr_[n + 1] += node_ptr_[n];
  node_byte_.resize(from.size());
  node_next_.resize(from.size());
  std::vector<int64_t> fill(node_ptr_.begin(), node_ptr_.end() - 1);
  for (size_t e = 0; e < from.size(); ++e) {
    int64_t at = fill[from[e]]++;
    node_byte_[at] = byte[e];
    node_next_[at] = next[e];
  }

  // The complete mask of each free state: free text, plus the tokens that
  // open a marker and go on along an allowed id.
  const int64_t words = vocab->words_;
  free_masks_.assign(vocab->base_masks_.begin(), vocab->base_masks_.end());
  for (int32_t s = 0; s < nf; ++s) {
    int32_t* mask = free_masks_.data() + s * words;
    for (int64_t i = vocab->opening_ptr_[s]; i < vocab->opening_ptr_[s + 1]; ++i) {
      const CitationVocab::Opening& o = vocab->opening_[i];
      int32_t st = roots_[o.marker];
      bool closed = false;
      for (int64_t j = vocab->offsets_[o.token] + o.after; j < vocab->offsets_[o.token + 1] && st >= 0; ++j)
        st = step(st, vocab->bytes_[j], &closed);
      if (st >= 0 && !dead(st)) set_bit(mask, o.token);
    }
  }
}

int32_t CitationAllowlist::step(int32_t state, uint8_t b, bool* closed) const {
  const int32_t nf = vocab_->num_free_;
  if (state < nf) {
    int32_t ns = vocab_->ac_next_[state * 256 + b];
    int32_t m = vocab_->ac_marker_[ns];
    return m >= 0 ? roots_[m] : ns;
  }
  int32_t ns = find_child(node_ptr_.data(), node_byte_.data(), node_next_.data(), state - nf, b);
  if (ns >= 0 && ns < nf) *closed = true;
  return ns;
}

int32_t CitationAllowlist::advance(int32_t state, int32_t token, bool eos_blocked, int32_t* closed) const {
  if (state < 0 || state >= num_states() || token < 0 || token >= vocab_->vocab_size_) return -1;
  const bool free_text = is_free(state);
  switch (vocab_->kinds_[token]) {
    case kTokenNever: return -1;
    case kTokenSpecial: return free_text ? state : -1;
    case kTokenEos: return free_text && !eos_blocked ? state : -1;
    default: break;
  }
  for (int64_t j = vocab_->offsets_[token]; j < vocab_->offsets_[token + 1]; ++j) {
    bool c = false;
    state = step(state, vocab_->bytes_[j], &c);
    if (state < 0) return -1;
    *closed += c;
  }
  return dead(state) ? -1 : state;
}

void CitationAllowlist::collect(int32_t vnode, int32_t state, int32_t* out) const {
  const CitationVocab& V = *vocab_;
  const int32_t nf = V.num_free_;
  thread_local std::vector<std::pair<int32_t, int32_t>> stack;
  stack.assign(1, {vnode, state});
  while (!stack.empty()) {
    auto [v, st] = stack.back();
    stack.pop_back();
    auto reach = [&](int32_t c, int32_t ns) {
      if (dead(ns)) return;
      for (int64_t i = V.tok_ptr_[c]; i < V.tok_ptr_[c + 1]; ++i) set_bit(out, V.tok_ids_[i]);
      if (V.child_ptr_[c + 1] > V.child_ptr_[c]) stack.push_back({c, ns});
    };
    if (st >= nf) {
      // Inside a marker: follow the id trie's few edges into the vocabulary trie.
      const int64_t n = st - nf;
      for (int64_t e = node_ptr_[n]; e < node_ptr_[n + 1]; ++e) {
        int32_t c = find_child(V.child_ptr_.data(), V.child_byte_.data(), V.child_node_.data(), v, node_byte_[e]);
        if (c >= 0) reach(c, node_next_[e]);
      }
    } else {
      // Free again after a closer inside a token: every continuation counts.
      for (int64_t e = V.child_ptr_[v]; e < V.child_ptr_[v + 1]; ++e) {
        bool closed = false;
        reach(V.child_node_[e], step(st, V.child_byte_[e], &closed));
      }
    }
  }
}

void CitationAllowlist::fill_mask(int32_t state, bool eos_blocked, int32_t* out) const {
  const int64_t words = vocab_->words_;
  if (is_free(state)) {
    std::memcpy(out, free_masks_.data() + state * words, static_cast<size_t>(words) * sizeof(int32_t));
    if (eos_blocked)
      for (int32_t t : vocab_->eos_ids_) clear_bit(out, t);
    return;
  }
  std::memset(out, 0, static_cast<size_t>(words) * sizeof(int32_t));
  collect(0, state, out);
}

// ---- batches ------------------------------------------------------------------

void fill_citation_masks(int64_t batch, const CitationAllowlist* const* lists,
                         const int32_t* states, const uint8_t* eos_blocked, int32_t* out,
                         int64_t words, int num_threads) {
  const int nt = resolve_threads(num_threads);
#pragma omp parallel for num_threads(nt) schedule(dynamic, 1) if (batch >= 4 && nt > 1)
  for (int64_t r = 0; r < batch; ++r) {
    int32_t* row = out + r * words;
    if (lists[r] == nullptr) {
      std::memset(row, 0xFF, static_cast<size_t>(words) * sizeof(int32_t));
    } else {
      lists[r]->fill_mask(states[r], eos_blocked[r] != 0, row);
    }
  }
}

namespace {

// One row, two words at a time: pairs with every bit set (free text: nearly
// all of a free row) are skipped with one 64-bit compare; a clear word (inside
// a marker: nearly all of the row) is one run of stores; mixed words go bit by
// bit. Plain loops, so the compiler vectorizes for the target it is given.
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
__attribute__((target_clones("avx2", "default")))
#endif
void apply_row(float* row, const int32_t* m, int64_t full_words) {
  const float neg_inf = -std::numeric_limits<float>::infinity();
  for (int64_t w = 0; w < full_words; w += 2) {
    if (w + 1 < full_words) {
      uint64_t pair;
      std::memcpy(&pair, m + w, sizeof(pair));
      if (pair == ~uint64_t{0}) continue;
    }
    for (int64_t k = w; k < std::min(w + 2, full_words); ++k) {
      const uint32_t bits = static_cast<uint32_t>(m[k]);
      float* x = row + k * 32;
      if (bits == 0xFFFFFFFFu) continue;
      if (bits == 0) {
        for (int j = 0; j < 32; ++j) x[j] = neg_inf;
      } else {
        for (int j = 0; j < 32; ++j)
          if (!((bits >> j) & 1u)) x[j] = neg_inf;
      }
    }
  }
}

}  // namespace

void apply_token_bitmask(int64_t batch, int64_t vocab, float* logits, const int32_t* mask,
                         int64_t words, const int32_t* rows, int num_threads) {
  const float neg_inf = -std::numeric_limits<float>::infinity();
  const int nt = resolve_threads(num_threads);
  const int64_t covered = std::min(vocab, words * 32);
  const int64_t full = covered / 32;
#pragma omp parallel for num_threads(nt) if (batch >= 4 && nt > 1)
  for (int64_t r = 0; r < batch; ++r) {
    float* row = logits + r * vocab;
    const int32_t* m = mask + (rows ? rows[r] : r) * words;
    apply_row(row, m, full);
    for (int64_t t = full * 32; t < covered; ++t)
      if (!((static_cast<uint32_t>(m[t >> 5]) >> (t & 31)) & 1u)) row[t] = neg_inf;
    for (int64_t t = covered; t < vocab; ++t) row[t] = neg_inf;
  }
}

}  // namespace asmr
