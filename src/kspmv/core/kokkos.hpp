// The Kokkos types the host side of kspmv uses. Only API common to Kokkos 3.4 .. 5.x.
#pragma once

#include <Kokkos_Core.hpp>
#include <algorithm>
#include <cstddef>
#include <exception>
#include <limits>
#include <string>

#include "kspmv/core/error.hpp"

namespace kspmv {

using HostMemorySpace = Kokkos::HostSpace;
using HostExecSpace = Kokkos::DefaultHostExecutionSpace;

template <class T>
using HostView = Kokkos::View<T*, HostMemorySpace>;

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
