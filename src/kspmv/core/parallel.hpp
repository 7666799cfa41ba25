// Host threads for the library's loops over 10^8 to 10^9 items (the generators, the Matrix
// Market reader): std::threads, because a Kokkos built without OpenMP or Threads (Debian's) runs
// a host parallel_for on one core. Kokkos-free.
#pragma once

#include <cstdint>
#include <functional>

namespace kspmv {

// The threads such loops use: the hardware's, or KSPMV_THREADS when that is set to a positive
// integer (at most 1024).
int host_threads();

// Calls body(begin, end) on consecutive blocks of at most `grain` items that cover [0, n) once,
// on host_threads() threads taking blocks in order from a shared counter (the calling thread
// among them; the others made once and kept for later calls), and returns when every block is
// done. Calls may come from several threads at once and from inside a body. A loop of one block
// runs on the calling thread alone. The first exception a body throws is rethrown once every thread
// has stopped (the blocks not started by then are skipped). `progress`, when given, is called on
// the calling thread after each block it finishes, with the fraction of the blocks finished, and
// with 1 at the end.
void parallel_blocks(std::int64_t n, std::int64_t grain,
                     const std::function<void(std::int64_t, std::int64_t)>& body,
                     const std::function<void(double)>& progress = {});

// Inclusive prefix sum of v[0, n) in place, on the host threads.
void inclusive_scan(std::int64_t* v, std::int64_t n);

// Atomic increment of plain memory that such loops share; returns the value before.
inline std::int64_t fetch_add(std::int64_t* p, std::int64_t v) {
  return __atomic_fetch_add(p, v, __ATOMIC_RELAXED);
}

}  // namespace kspmv
