// Cosine similarity for index pairs of two row-major matrices.
//
// out[k] = cos(claims[claim_idx[k]], units[unit_idx[k]]) for k < num_pairs,
// reading the rows in place (nothing is gathered into a copy). Rows are d
// values of float32 or IEEE float16 (passed as uint16_t). A zero row has
// cosine 0. With prenormalized the rows are taken to have unit norm and only
// the dot product is computed.
#pragma once
#include <cstdint>

namespace asmr {

template <typename TC, typename TU, typename I>
void pair_cosine(int64_t num_pairs, int64_t d, const TC* claims, const TU* units,
                 const I* claim_idx, const I* unit_idx, bool prenormalized, float* out,
                 int num_threads);

}  // namespace asmr
