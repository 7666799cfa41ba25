// A CSR in the memory of Kokkos' default execution space adopted by the kokkos-default backend
// (space_adopt.hpp): widened or narrowed where needed and checked there, never read back whole.
#include "backends/kokkos/space_adopt.hpp"

#include <cstdint>
#include <limits>
#include <string>
#include <type_traits>

#include "kspmv/core/error.hpp"

namespace kspmv::host {

namespace {

using Exec = Kokkos::DefaultExecutionSpace;
template <class T>
using Borrowed = Kokkos::View<const T*, SpaceMemory, Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
constexpr Offset kNone = std::numeric_limits<Offset>::max();

// Entry i of a View in SpaceMemory, read back.
template <class V>
auto read_at(const V& v, std::size_t i) {
  Kokkos::View<std::remove_const_t<typename V::value_type>, Kokkos::HostSpace> h("h");
  Kokkos::deep_copy(h, Kokkos::subview(v, i));
  return h();
}

// to(i) = from(i); the smallest i whose value is outside [0, hi] is reduced into `bad`.
template <class From, class To>
struct Convert {
  Borrowed<From> from;
  Kokkos::View<To*, SpaceMemory> to;
  unsigned long long hi;

  KOKKOS_INLINE_FUNCTION void operator()(Offset i, Offset& bad) const {
    const From v = from(i);
    bool ok = static_cast<unsigned long long>(v) <= hi;
    if constexpr (std::is_signed_v<From>) ok = ok && v >= 0;
    if (!ok && i < bad) bad = i;
    to(i) = static_cast<To>(v);
  }
};

// The View of `count` entries of type From at p as To: in place when the types agree, otherwise
// converted into a copy; returns kNone in `bad`, or the first entry outside [0, hi].
template <class To, class From>
Kokkos::View<const To*, SpaceMemory> convert(const void* p, std::size_t count,
                                             unsigned long long hi, Offset& bad) {
  bad = kNone;
  const Borrowed<From> from(static_cast<const From*>(p), count);
  if constexpr (std::is_same_v<From, To>) {
    return from;  // borrowed; the range is checked by validation where asked
  } else {
    Kokkos::View<To*, SpaceMemory> to(Kokkos::view_alloc(Kokkos::WithoutInitializing, "kspmv"),
                                      count);
    Kokkos::parallel_reduce("kspmv::convert",
                            Kokkos::RangePolicy<Exec, Kokkos::IndexType<Offset>>(0, Offset(count)),
                            Convert<From, To>{from, to, hi}, Kokkos::Min<Offset>(bad));
    return to;
  }
}

// The first row i (i < m) after which the row map decreases, or m when it does not run from 0 to
// nnz; kNone when it is a row map.
struct CheckRows {
  Kokkos::View<const Offset*, SpaceMemory> row_ptr;
  Offset m, nnz;

  KOKKOS_INLINE_FUNCTION void operator()(Offset i, Offset& bad) const {
    Offset found = kNone;
    if ((i == 0 && row_ptr(0) != 0) || (i == m && row_ptr(m) != nnz)) found = m;
    if (i < m && row_ptr(i + 1) < row_ptr(i)) found = i;
    if (found < bad) bad = found;
  }
};

// The first entry whose column index is outside [0, n).
struct CheckCols {
  Kokkos::View<const Ordinal*, SpaceMemory> col;
  Ordinal n;

  KOKKOS_INLINE_FUNCTION void operator()(Offset k, Offset& bad) const {
    if ((col(k) < 0 || col(k) >= n) && k < bad) bad = k;
  }
};

template <class S>
void check(const SpaceCsrArrays<S>& a) {
  Offset rows = kNone, cols = kNone;
  Kokkos::parallel_reduce("kspmv::check_rows",
                          Kokkos::RangePolicy<Exec, Kokkos::IndexType<Offset>>(0, Offset(a.m) + 1),
                          CheckRows{a.row_ptr, a.m, a.nnz}, Kokkos::Min<Offset>(rows));
  Kokkos::parallel_reduce("kspmv::check_cols",
                          Kokkos::RangePolicy<Exec, Kokkos::IndexType<Offset>>(0, a.nnz),
                          CheckCols{a.col, a.n}, Kokkos::Min<Offset>(cols));
  if (rows == a.m)
    throw InvalidArgument("Operator: the row map does not run from 0 to the " +
                          std::to_string(a.nnz) + " entries");
  if (rows != kNone)
    throw InvalidArgument("Operator: the row map decreases after row " + std::to_string(rows));
  if (cols != kNone)
    throw InvalidArgument("Operator: column index " + std::to_string(read_at(a.col, cols)) +
                          " of entry " + std::to_string(cols) + " is outside [0, " +
                          std::to_string(a.n) + ")");
}

}  // namespace

template <class S>
SpaceCsrArrays<S> adopt_in_space(const DeviceCsrArrays<S>& a, bool validate) {
  if (a.m > 0 && a.row_ptr == nullptr) throw InvalidArgument("Operator: the row map is empty");
  SpaceCsrArrays<S> d;
  d.m = a.m, d.n = a.n, d.nnz = static_cast<Offset>(a.nnz);
  const std::size_t offsets = a.m + std::size_t(1);
  constexpr auto kMaxOffset = static_cast<unsigned long long>(std::numeric_limits<Offset>::max());
  Offset bad = kNone;
  if (a.row_ptr == nullptr) {
    d.row_ptr = Kokkos::View<Offset*, SpaceMemory>("kspmv::row_ptr", 1);  // zero
  } else if (a.offset_bytes == 4) {
    d.row_ptr = a.offset_signed
                    ? convert<Offset, std::int32_t>(a.row_ptr, offsets, kMaxOffset, bad)
                    : convert<Offset, std::uint32_t>(a.row_ptr, offsets, kMaxOffset, bad);
  } else {
    d.row_ptr = a.offset_signed
                    ? convert<Offset, std::int64_t>(a.row_ptr, offsets, kMaxOffset, bad)
                    : convert<Offset, std::uint64_t>(a.row_ptr, offsets, kMaxOffset, bad);
  }
  if (bad != kNone)
    throw InvalidArgument("Operator: row map entry " + std::to_string(bad) + " is past 2^63 - 1");
  const auto last_col = static_cast<unsigned long long>(a.n > 0 ? a.n - 1 : 0);
  d.col = a.index_bytes == 4 ? convert<Ordinal, std::int32_t>(a.col, a.nnz, last_col, bad)
                             : convert<Ordinal, std::int64_t>(a.col, a.nnz, last_col, bad);
  if (bad != kNone && a.index_bytes != 4)
    throw InvalidArgument(
        "Operator: column index " +
        std::to_string(
            read_at(Borrowed<std::int64_t>(static_cast<const std::int64_t*>(a.col), a.nnz), bad)) +
        " of entry " + std::to_string(bad) + " is outside [0, " + std::to_string(a.n) + ")");
  d.val = Kokkos::View<S*, SpaceMemory>(Kokkos::view_alloc(Kokkos::WithoutInitializing, "values"),
                                        a.nnz);
  Kokkos::deep_copy(d.val, Borrowed<S>(a.val, a.nnz));
  if (validate) check(d);
  return d;
}

template <class S>
CsrMatrix<S> to_host(const SpaceCsrArrays<S>& a) {
  CsrMatrix<S> h(a.m, a.n, a.nnz);
  Kokkos::deep_copy(h.row_ptr, a.row_ptr);
  Kokkos::deep_copy(h.col_idx, a.col);
  Kokkos::deep_copy(h.values, a.val);
  return h;
}

template SpaceCsrArrays<float> adopt_in_space(const DeviceCsrArrays<float>&, bool);
template SpaceCsrArrays<double> adopt_in_space(const DeviceCsrArrays<double>&, bool);
template CsrMatrix<float> to_host(const SpaceCsrArrays<float>&);
template CsrMatrix<double> to_host(const SpaceCsrArrays<double>&);

}  // namespace kspmv::host
