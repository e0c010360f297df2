#pragma once
#include "../../cuda_runtime.h"
namespace cub {
template <class T, int BLOCK>
struct BlockScan {
  struct TempStorage { T vals[BLOCK]; };
  TempStorage& s;
  explicit BlockScan(TempStorage& t) : s(t) {}
  void ExclusiveSum(T in, T& out, T& aggregate) {
    s.vals[threadIdx.x] = in;
    __syncthreads();
    T acc = 0, tot = 0;
    for (int i = 0; i < BLOCK; ++i) {
      if (i < int(threadIdx.x)) acc += s.vals[i];
      tot += s.vals[i];
    }
    out = acc;
    aggregate = tot;
    __syncthreads();
  }
};
}  // namespace cub
