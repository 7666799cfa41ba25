// KokkosSparse interop: a kspmv::Operator from a KokkosSparse::CrsMatrix of Kokkos Kernels, in host
// or device memory, and kspmv::spmv on one (KokkosSparse::spmv's call shape, kspmv/spmv.hpp).
// Include it where Kokkos Kernels is available (kspmv itself does not need it; the tests use it
// when CMake finds a Kokkos Kernels of the Kokkos version found).
#pragma once

#include <KokkosSparse_CrsMatrix.hpp>
#include <limits>
#include <string>
#include <type_traits>
#include <utility>

#include "kspmv/core/error.hpp"
#include "kspmv/operator.hpp"
#include "kspmv/spmv.hpp"

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

// y = alpha*op(A)*x + beta*y (kspmv/spmv.hpp): the handle's plan is made by make_operator on the
// first call and again when `a` holds other Views.
template <class Exec, class Scalar, class Alpha, class Value, class Index, class Device,
          class Traits, class Size, class X, class Beta, class Y,
          class = std::enable_if_t<Kokkos::is_execution_space<Exec>::value>>
void spmv(const Exec& exec, SpmvHandle<Scalar>& handle, const char* mode, const Alpha& alpha,
          const KokkosSparse::CrsMatrix<Value, Index, Device, Traits, Size>& a, const X& x,
          const Beta& beta, const Y& y) {
  static_assert(std::is_same_v<std::remove_const_t<Value>, Scalar>,
                "kspmv::spmv: the handle's scalar type must be the matrix's");
  const SpmvKey key{a.graph.row_map.data(),
                    a.graph.entries.data(),
                    a.values.data(),
                    static_cast<long long>(a.numRows()),
                    static_cast<long long>(a.numCols()),
                    static_cast<long long>(a.values.extent(0))};
  Operator<Scalar>& op = handle.plan_for(key, detail::spmv_options<typename Y::memory_space>(exec),
                                         [&](const Options& o) { return make_operator(a, o); });
  spmv(exec, handle, mode, alpha, op, x, beta, y);
}

}  // namespace kspmv
