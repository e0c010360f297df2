// Large output blocks for results handed to Python.
//
// Fresh anonymous memory is paid for in page faults at first touch, which on
// a virtual machine costs more than the kernels that fill it (about 1.7 ms per
// MB here). Blocks come 2 MB-aligned and advised for transparent huge pages,
// and a freed block is kept for the next request of a similar size instead of
// going back to the system, up to a bounded total.
#pragma once
#include <cstddef>

namespace asmr {

// A block of at least `bytes` bytes (never null; throws std::bad_alloc).
// *capacity receives its real size, which must be passed back on release.
void* acquire_block(size_t bytes, size_t* capacity);
void release_block(void* block, size_t capacity);

}  // namespace asmr
