// The Kokkos types the host side of kspmv uses. Only API common to Kokkos 3.4 .. 5.x.
#pragma once

#include <Kokkos_Core.hpp>
#include <cstddef>
#include <string>

namespace kspmv {

using HostMemorySpace = Kokkos::HostSpace;
using HostExecSpace = Kokkos::DefaultHostExecutionSpace;

template <class T>
using HostView = Kokkos::View<T*, HostMemorySpace>;

// Allocate a host view without zero-filling it (large matrices: the caller writes every entry).
template <class T>
HostView<T> make_host_view(const std::string& label, std::size_t n) {
  return HostView<T>(Kokkos::view_alloc(Kokkos::WithoutInitializing, label), n);
}

}  // namespace kspmv
