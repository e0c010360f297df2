#include "asmr/common.h"

#ifdef _OPENMP
#include <omp.h>
#endif

namespace asmr {

int resolve_threads(int num_threads) {
#ifdef _OPENMP
  return num_threads > 0 ? num_threads : omp_get_max_threads();
#else
  (void)num_threads;
  return 1;
#endif
}

bool openmp_enabled() {
#ifdef _OPENMP
  return true;
#else
  return false;
#endif
}

}  // namespace asmr
