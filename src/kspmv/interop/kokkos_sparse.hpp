// KokkosSparse interop: a kspmv::Operator from a KokkosSparse::CrsMatrix of Kokkos Kernels, in host
// or device memory. Include it where Kokkos Kernels is available (kspmv itself does not need it;
// the tests use it when CMake finds a Kokkos Kernels of the Kokkos version found).
#pragma once

#include <KokkosSparse_CrsMatrix.hpp>
#include <limits>
#include <string>
#include <type_traits>
#include <utility>

#include "kspmv/core/error.hpp"
#include "kspmv/operator.hpp"

namespace kspmv {

// An Operator on `a`: its row map, entries and values Views go to the View constructor of
// Operator, which says what is shared and what is copied for host and for device memory (row maps
// of any integer width, signed or not, as KokkosSparse's size_type). The Operator keeps the Views
// (reference counted): `a` itself may go. Throws InvalidArgument for more columns than kspmv's
// 32-bit indices reach.
template <class Value, class Index, class Device, class Traits, class Size>
Operator<std::remove_const_t<Value>> make_operator(
    const KokkosSparse::CrsMatrix<Value, Index, Device, Traits, Size>& a, Options options = {}) {
  const auto ncols = static_cast<long long>(a.numCols());
  if (ncols < 0 || ncols > std::numeric_limits<Ordinal>::max())
    throw InvalidArgument("make_operator: a KokkosSparse::CrsMatrix of " + std::to_string(ncols) +
                          " columns (kspmv indexes columns in [0, 2^31))");
  return Operator<std::remove_const_t<Value>>(static_cast<Ordinal>(ncols), a.graph.row_map,
                                              a.graph.entries, a.values, std::move(options));
}

}  // namespace kspmv
