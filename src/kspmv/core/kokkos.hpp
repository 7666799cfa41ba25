// The Kokkos types the host side of kspmv uses. Only API common to Kokkos 3.4 .. 5.x.
#pragma once

#include <Kokkos_Core.hpp>
#include <algorithm>
#include <cstddef>
#include <exception>
#include <limits>
#include <mutex>
#include <string>

#include "kspmv/core/error.hpp"

namespace kspmv {

using HostMemorySpace = Kokkos::HostSpace;
using HostExecSpace = Kokkos::DefaultHostExecutionSpace;

template <class T>
using HostView = Kokkos::View<T*, HostMemorySpace>;

// Kokkos before 4 keeps the scratch of the host execution space's team, reduce and scan launches
// in one object for the process (Kokkos::Serial's g_serial_thread_team_data, OpenMP's pool),
// resized by a launch that needs more: launches from several threads at once race on it
// ("HostThreadTeamData::organize_pool ERROR pool already exists", with two partial-overlap
// Operators on two threads). kspmv holds this lock around its host-backend work with such a
// Kokkos (recursive: CG holds it across its applies); Kokkos 4 serializes the launches on an
// instance itself, and the lock is empty there.
inline std::unique_lock<std::recursive_mutex> host_kokkos_lock() {
#if KOKKOS_VERSION < 40000
  static std::recursive_mutex mutex;
  return std::unique_lock<std::recursive_mutex>(mutex);
#else
  return {};
#endif
}

// The lock where `host_backend` (work on the host's Kokkos), none where the work is CUDA's.
inline std::unique_lock<std::recursive_mutex> host_kokkos_lock(bool host_backend) {
  return host_backend ? host_kokkos_lock() : std::unique_lock<std::recursive_mutex>();
}

// Allocate a host view without zero-filling it (large matrices: the caller writes every entry).
// A failed allocation throws MemoryError naming the label and the bytes asked.
template <class T>
HostView<T> make_host_view(const std::string& label, std::size_t n) {
  constexpr std::size_t kMax = std::numeric_limits<std::ptrdiff_t>::max() / sizeof(T);
  if (n <= kMax) {
    try {
      return HostView<T>(Kokkos::view_alloc(Kokkos::WithoutInitializing, label), n);
    } catch (const std::exception&) {  // Kokkos throws std::runtime_error or std::bad_alloc
    }
  }
  throw MemoryError("cannot allocate " + label, std::min(n, kMax + 1) * sizeof(T),
                    available_memory());
}

}  // namespace kspmv
