// The citation-closure automaton and its token masks.
//
// Language: free text, in which a citation marker may open at any byte; once
// an opener's bytes are complete, the text must go on to spell one
// allowlisted id and the marker's closer, then it is free again. Everything
// is decided on the bytes of tokens, so it holds for any tokenization: an
// opener split over tokens or glued to the text before it, an id split
// anywhere, a closer glued to punctuation ("]." or "】。"), several markers in
// one token.
//
// Three layers, each built once and then only read (safe to share between
// threads):
//   CitationVocab     a tokenizer's byte strings as a trie in preorder CSR,
//                     plus the openers' Aho-Corasick automaton and, per free
//                     state, the tokens that never complete an opener (the
//                     mask of free text) and those that do (checked per
//                     allowlist);
//   CitationAllowlist one turn's ids compiled against a CitationVocab: a trie
//                     of id+closer per marker and the full mask of every
//                     free state;
//   a row's state     one int32 (free states first, then id-trie nodes),
//                     advanced token by token.
//
// Masks are int32 words, bit (t & 31) of word (t >> 5) set when token t is
// allowed (the layout of vLLM and XGrammar).
#pragma once
#include <cstdint>
#include <vector>

namespace asmr {

// What a token id is besides its bytes.
enum TokenKind : uint8_t {
  kTokenText = 0,     // ordinary text: its bytes are checked
  kTokenSpecial = 1,  // a control token (chat tags...): allowed in free text only
  kTokenEos = 2,      // ends the sequence: allowed in free text only, and
                      // only after a citation when one is required
  kTokenNever = 3,    // padding or unused: never allowed
};

class CitationVocab {
 public:
  // vocab_size tokens: token t has bytes[offsets[t]:offsets[t+1]] and kind
  // kinds[t]. A text token with no bytes is treated as kTokenNever. Marker k
  // opens with opener_bytes[opener_offsets[k]:opener_offsets[k+1]] and closes
  // likewise; no opener may lie inside another (the caller checks).
  CitationVocab(int64_t vocab_size, const int64_t* offsets, const uint8_t* bytes,
                const uint8_t* kinds, int num_markers, const int64_t* opener_offsets,
                const uint8_t* opener_bytes, const int64_t* closer_offsets,
                const uint8_t* closer_bytes);

  int64_t vocab_size() const { return vocab_size_; }
  int64_t words() const { return words_; }
  int32_t num_free_states() const { return num_free_; }
  int num_markers() const { return static_cast<int>(closers_.size()); }
  int64_t trie_nodes() const { return static_cast<int64_t>(child_ptr_.size()) - 1; }

 private:
  friend class CitationAllowlist;
  int64_t vocab_size_, words_;
  std::vector<int64_t> offsets_;
  std::vector<uint8_t> bytes_, kinds_;
  // Vocabulary trie, nodes in preorder: node 0 is the empty string; children
  // of a node sorted by byte; tokens ending at a node in tok_ptr/tok_ids.
  std::vector<int64_t> child_ptr_;
  std::vector<uint8_t> child_byte_;
  std::vector<int32_t> child_node_;
  std::vector<int64_t> tok_ptr_;
  std::vector<int32_t> tok_ids_;
  // Aho-Corasick over the openers: goto table [state * 256 + byte]; a state
  // that completes opener k has ac_marker_[state] == k (else -1).
  std::vector<int32_t> ac_next_;
  std::vector<int32_t> ac_marker_;
  int32_t num_free_;  // AC states; those that complete an opener are never occupied
  std::vector<std::vector<uint8_t>> closers_;
  // Per free state s: base_masks_[s * words_ ...] has the tokens that never
  // complete an opener from s (plus control and EOS tokens); the ones that do
  // are (token, byte offset just after the opener, marker) in
  // opening_[opening_ptr_[s] .. opening_ptr_[s+1]).
  std::vector<int32_t> base_masks_;
  struct Opening { int32_t token; int32_t after; int32_t marker; };
  std::vector<int64_t> opening_ptr_;
  std::vector<Opening> opening_;
  std::vector<int32_t> eos_ids_;
};

class CitationAllowlist {
 public:
  // Id i is id_bytes[id_offsets[i]:id_offsets[i+1]]; every marker accepts
  // every id. Ids must not contain a closer (std::invalid_argument if one
  // makes another's marker ambiguous).
  CitationAllowlist(const CitationVocab* vocab, int64_t num_ids, const int64_t* id_offsets,
                    const uint8_t* id_bytes);

  const CitationVocab& vocab() const { return *vocab_; }
  int64_t num_states() const { return vocab_->num_free_ + static_cast<int64_t>(node_ptr_.size()) - 1; }
  bool is_free(int32_t state) const { return state < vocab_->num_free_; }

  // One byte from `state`: the next state, or -1 when the byte breaks a marker.
  // *closed is set when the byte completes a closer.
  int32_t step(int32_t state, uint8_t byte, bool* closed) const;
  // One token: the next state, or -1 when it is not allowed; *closed counts
  // the markers it completes. eos_blocked: EOS is refused in free text.
  int32_t advance(int32_t state, int32_t token, bool eos_blocked, int32_t* closed) const;
  // The mask of the tokens allowed next from `state` (words() int32 words).
  void fill_mask(int32_t state, bool eos_blocked, int32_t* out) const;

 private:
  void collect(int32_t vnode, int32_t state, int32_t* out) const;
  // An opener with no allowlisted id after it: no token may enter it.
  bool dead(int32_t state) const {
    return state >= vocab_->num_free_ &&
           node_ptr_[state - vocab_->num_free_] == node_ptr_[state - vocab_->num_free_ + 1];
  }
  const CitationVocab* vocab_;
  // Id tries of all markers in one node array; node n has children
  // [node_ptr_[n], node_ptr_[n+1]) as (byte, next state). A next state below
  // num_free_ is free text again (the closer's last byte leads to state 0).
  std::vector<int64_t> node_ptr_;
  std::vector<uint8_t> node_byte_;
  std::vector<int32_t> node_next_;
  std::vector<int32_t> roots_;        // per marker: the state just after its opener
  std::vector<int32_t> free_masks_;   // per free state: the complete mask
};

// Rows of a batch: out[r * words ...] = fill_mask of lists[r] at states[r].
// A null list means "no constraint" (all bits set).
void fill_citation_masks(int64_t batch, const CitationAllowlist* const* lists,
                         const int32_t* states, const uint8_t* eos_blocked, int32_t* out,
                         int64_t words, int num_threads);

// logits[r * vocab + t] = -inf where the bit of t in mask row rows[r] (or r
// when rows is null) is clear; tokens at or past 32 * words are masked too.
void apply_token_bitmask(int64_t batch, int64_t vocab, float* logits, const int32_t* mask,
                         int64_t words, const int32_t* rows, int num_threads);

}  // namespace asmr
