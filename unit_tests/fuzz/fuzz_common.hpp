// What the fuzz targets share: Kokkos set up once, a scratch file per process, the peak memory
// of one call, and a check that aborts (a finding for libFuzzer, a failure for the replay).
#pragma once

#include <Kokkos_Core.hpp>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <string>

namespace kspmv::fuzz {

// Aborts with `what` unless ok: libFuzzer keeps the input as a crash file.
inline void require(bool ok, const std::string& what) {
  if (ok) return;
  std::fprintf(stderr, "fuzz property violated: %s\n", what.c_str());
  std::abort();
}

// Aborts unless `message` is one line of printable ASCII of at most 4096 characters (an error
// message must not echo control characters or a huge token from its input).
void require_printable(const std::string& message);

// Kokkos for the life of the process; the reader's memory budget (KSPMV_MEMORY_LIMIT); two
// host threads (KSPMV_THREADS) whatever the machine has.
void initialize(std::size_t memory_budget);

// A path for scratch files of this process ("<dir>/kspmv_fuzz_<pid><suffix>").
std::string scratch_path(const std::string& suffix);
// Writes `size` bytes to `path`, gzip-compressed when `gzip`.
void write_file(const std::string& path, const char* data, std::size_t size, bool gzip);

// The peak memory of the code between start() and peak_bytes(), beyond what was in use at
// start(): under AddressSanitizer the live heap bytes (its allocator hooks count every
// allocation, touched or not), elsewhere the resident set (VmHWM after a reset through
// /proc/self/clear_refs).
class PeakMemory {
 public:
  void start();
  std::size_t peak_bytes() const;
};

}  // namespace kspmv::fuzz
