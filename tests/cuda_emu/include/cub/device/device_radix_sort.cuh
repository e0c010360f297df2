#pragma once
#include "../../cuda_runtime.h"
namespace cub {
struct DeviceRadixSort {
  template <class K, class V, class N>
  static cudaError_t SortPairs(void* tmp, size_t& bytes, const K* kin, K* kout, const V* vin, V* vout,
                               N n, int begin_bit = 0, int end_bit = sizeof(K) * 8, cudaStream_t = nullptr) {
    if (tmp == nullptr) { bytes = 4096; return cudaSuccess; }
    std::vector<std::pair<K, V>> p(static_cast<size_t>(n));
    for (N i = 0; i < n; ++i) p[i] = {kin[i], vin[i]};
    const int bits = end_bit - begin_bit;
    auto key = [&](K k) { return bits >= int(sizeof(K) * 8) ? k : K((k >> begin_bit) & ((K(1) << bits) - 1)); };
    std::stable_sort(p.begin(), p.end(), [&](auto& a, auto& b) { return key(a.first) < key(b.first); });
    for (N i = 0; i < n; ++i) { kout[i] = p[i].first; vout[i] = p[i].second; }
    return cudaSuccess;
  }
};
}  // namespace cub
