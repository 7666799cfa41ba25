// kspmv::spmv(exec, handle, mode, alpha, A, x, beta, y): the call shape of KokkosSparse::spmv on
// kspmv. The handle holds the plan (an Operator) built on the first call and reused while A is
// the same matrix (the same Views, extents, backend and device); A is kspmv's CsrMatrix, an
// Operator (then the plan itself), or a KokkosSparse::CrsMatrix (kspmv/interop/kokkos_sparse.hpp).
//
// Modes as KokkosSparse's: "N" y = alpha*A*x + beta*y, "T" with A^T, "C" with conj(A), "H" with
// A^H (upper or lower case); on real values "C" is "N" and "H" is "T". On complex values C and H
// apply A (A^T) to the conjugated vectors, conj(A) x = conj(A conj(x)): x and y pass through the
// handle's scratch (two passes over each more than N and T), and the matrix is never copied.
//
// x and y are rank-1 or rank-2 Views of any layout. A View whose columns are not contiguous (a
// LayoutRight multi-vector of k > 1 columns, a strided rank-1 View) is copied into a LayoutLeft
// scratch View of the handle on `exec` (y back after the apply; y in only when beta != 0): every
// kernel reads unit-stride columns, and on a GPU a kernel reading a column of a LayoutRight block
// would load k times the bytes of that column; the copy costs one pass over the vector instead.
//
// Unless the handle names its Options, they are taken from the call: vectors in memory that the
// host cannot read, or in CUDA managed memory applied on a Kokkos::Cuda instance, go to the CUDA
// backend where it is built in (kokkos-default otherwise), on the instance's device; host memory
// to the host backend. Where apply runs and when it returns: kspmv/operator.hpp.
//
// The plan holds the values as the Operator constructor says (on the GPU a copy of them): after
// changing A's values in place, call handle.update_values(values) or handle.reset().
#pragma once

#include <any>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>

#include "kspmv/core/complex.hpp"
#include "kspmv/core/error.hpp"
#include "kspmv/core/kokkos.hpp"
#include "kspmv/operator.hpp"
#include "kspmv/registry.hpp"

namespace kspmv {

// What the plan was built for: the matrix's arrays and extents and where it runs.
struct SpmvKey {
  const void* row_map = nullptr;
  const void* entries = nullptr;
  const void* values = nullptr;
  long long nrows = 0, ncols = 0, nnz = 0;
  Backend backend = Backend::Host;
  std::vector<int> devices;
  bool operator==(const SpmvKey& o) const {
    return row_map == o.row_map && entries == o.entries && values == o.values && nrows == o.nrows &&
           ncols == o.ncols && nnz == o.nnz && backend == o.backend && devices == o.devices;
  }
};

template <class Scalar>
class SpmvHandle {
 public:
  // Options taken from each call (the header's rule).
  SpmvHandle() = default;
  // These Options, as given, for every matrix.
  explicit SpmvHandle(Options options) : options_(std::move(options)) {}

  // The plan of the last call (nullptr before the first).
  Operator<Scalar>* plan() { return plan_ ? &*plan_ : nullptr; }
  // How many plans this handle has built (one while the calls give the same matrix).
  int plans_built() const { return plans_built_; }
  // New values of the matrix of the plan (Operator::update_values); InvalidArgument before the
  // first call.
  template <class V>
  void update_values(const V& values) {
    if (!plan_) throw InvalidArgument("SpmvHandle::update_values: no plan yet (call spmv first)");
    plan_->update_values(values);
  }
  // Drops the plan and the scratch: the next call builds them again.
  void reset() {
    plan_.reset();
    scratch_x_.reset();
    scratch_y_.reset();
  }

  // The plan for the matrix `key`, made by make(options) when the handle holds none for it.
  template <class Make>
  Operator<Scalar>& plan_for(SpmvKey key, const Options& derived, Make make) {
    const Options& o = options_ ? *options_ : derived;
    key.backend = o.backend;
    key.devices = o.devices;
    if (!plan_ || !(key == key_)) {
      plan_.reset();
      plan_.emplace(make(o));
      key_ = std::move(key);
      ++plans_built_;
    }
    return *plan_;
  }

  // The scratch of x (which == 0) or y (1): a LayoutLeft View like V, of V's extents.
  template <class V>
  auto scratch(int which, const V& v) {
    using S =
        Kokkos::View<typename V::non_const_data_type, Kokkos::LayoutLeft, typename V::memory_space>;
    std::any& slot = which == 0 ? scratch_x_ : scratch_y_;
    S* held = std::any_cast<S>(&slot);
    const std::size_t k = V::rank == 2 ? v.extent(1) : 1;
    if (!held || held->extent(0) != v.extent(0) || (V::rank == 2 && held->extent(1) != k)) {
      slot.reset();  // the old scratch goes first
      if constexpr (V::rank == 2)
        slot = S(Kokkos::view_alloc(Kokkos::WithoutInitializing, "kspmv::spmv scratch"),
                 v.extent(0), k);
      else
        slot =
            S(Kokkos::view_alloc(Kokkos::WithoutInitializing, "kspmv::spmv scratch"), v.extent(0));
      held = std::any_cast<S>(&slot);
    }
    return *held;
  }

 private:
  std::optional<Options> options_;
  std::optional<Operator<Scalar>> plan_;
  SpmvKey key_;
  int plans_built_ = 0;
  std::any scratch_x_, scratch_y_;
};

namespace detail {

// The Mode of a KokkosSparse mode character and whether it conjugates; InvalidArgument for
// anything but N, T, C, H (either case).
inline std::pair<Mode, bool> parse_spmv_mode(const char* mode) {
  const char m = mode ? mode[0] : '\0';
  if (m == 'N' || m == 'n') return {Mode::NoTranspose, false};
  if (m == 'T' || m == 't') return {Mode::Transpose, false};
  if (m == 'C' || m == 'c') return {Mode::NoTranspose, true};
  if (m == 'H' || m == 'h') return {Mode::Transpose, true};
  throw InvalidArgument(std::string("spmv: mode '") + (mode ? mode : "(null)") +
                        "'; the modes are N, T, C and H");
}

// The Options spmv takes from the call (the rule at the top of this file) for vectors in memory
// space M applied on `exec`.
template <class M, class Exec>
Options spmv_options(const Exec& exec) {
  Options o;
  constexpr bool host = Kokkos::SpaceAccessibility<Kokkos::HostSpace, M>::accessible;
  bool cuda_memory = false;
#ifdef KOKKOS_ENABLE_CUDA
  constexpr bool managed = std::is_same_v<M, Kokkos::CudaUVMSpace>;
  constexpr bool cuda_exec = std::is_same_v<Exec, Kokkos::Cuda>;
  cuda_memory = std::is_same_v<M, Kokkos::CudaSpace> || (managed && cuda_exec);
  if constexpr (cuda_exec) o.devices = {exec.cuda_device()};
#endif
  (void)exec;
  if (cuda_memory && supports(Backend::Cuda, Kernel::Auto))
    o.backend = Backend::Cuda;
  else if (!host || cuda_memory)
    o.backend = Backend::KokkosDefault;
  return o;
}

// Whether v's columns are contiguous (what Operator::apply reads in place).
template <class V>
bool unit_columns(const V& v) {
  return v.extent(0) <= 1 || v.stride(0) == 1;
}

// f(v) where v's columns are contiguous, else f(scratch) on the handle's scratch `which` holding
// v's entries (when copy_in), copied back into v afterwards (when copy_out); copies on `exec`.
template <class Scalar, class Exec, class V, class F>
void with_columns(SpmvHandle<Scalar>& h, int which, const Exec& exec, const V& v, bool copy_in,
                  bool copy_out, F f) {
  if (unit_columns(v)) return f(v);
  const auto s = h.scratch(which, v);
  if (copy_in) Kokkos::deep_copy(exec, s, v);
  f(s);
  if (copy_out) Kokkos::deep_copy(exec, v, s);
}

// dst = conj(src) entry by entry, two Views of the same extents, on `exec`.
template <class Dst, class Src>
struct ConjugateCopy {
  Dst dst;
  Src src;
  KOKKOS_INLINE_FUNCTION void operator()(std::size_t i) const {
    if constexpr (Dst::rank == 2) {
      for (std::size_t c = 0; c < dst.extent(1); ++c) dst(i, c) = Kokkos::conj(src(i, c));
    } else {
      dst(i) = Kokkos::conj(src(i));
    }
  }
};
template <class Exec, class Dst, class Src>
void conjugate_copy(const Exec& exec, const Dst& dst, const Src& src) {
  Kokkos::parallel_for(
      "kspmv::spmv::conjugate",
      Kokkos::RangePolicy<Exec, Kokkos::IndexType<std::size_t>>(exec, 0, dst.extent(0)),
      ConjugateCopy<Dst, Src>{dst, src});
}

}  // namespace detail

// y = alpha*op(A)*x + beta*y with the plan `op` (the handle keeps only the scratch then).
template <class Exec, class Scalar, class Alpha, class X, class Beta, class Y,
          class = std::enable_if_t<Kokkos::is_execution_space<Exec>::value>>
void spmv(const Exec& exec, SpmvHandle<Scalar>& handle, const char* mode, const Alpha& alpha,
          Operator<Scalar>& op, const X& x, const Beta& beta, const Y& y) {
  static_assert(Kokkos::is_view<X>::value && Kokkos::is_view<Y>::value,
                "kspmv::spmv: x and y must be Views");
  const auto parsed = detail::parse_spmv_mode(mode);  // no structured binding: lambdas take m
  const auto m = parsed.first;
  const bool conjugate = parsed.second;
  const Scalar a = static_cast<Scalar>(alpha), b = static_cast<Scalar>(beta);
  if constexpr (is_complex_v<Scalar>) {
    if (conjugate) {  // conj(A) x = conj(A conj(x)): the vectors conjugated, never the matrix
      const auto xs = handle.scratch(0, x), ys = handle.scratch(1, y);
      detail::conjugate_copy(exec, xs, x);
      if (b != Scalar(0)) detail::conjugate_copy(exec, ys, y);
      op.apply(exec, Kokkos::conj(a), xs, Kokkos::conj(b), ys, m);
      detail::conjugate_copy(exec, y, ys);
      return;
    }
  }
  detail::with_columns(handle, 0, exec, x, true, false, [&](const auto& xs) {
    detail::with_columns(handle, 1, exec, y, b != Scalar(0), true,
                         [&](const auto& ys) { op.apply(exec, a, xs, b, ys, m); });
  });
}

// The same with kspmv's host matrix `a`: the handle's plan is built for it on the first call
// (and again when a is another matrix).
template <class Exec, class Scalar, class Alpha, class X, class Beta, class Y,
          class = std::enable_if_t<Kokkos::is_execution_space<Exec>::value>>
void spmv(const Exec& exec, SpmvHandle<Scalar>& handle, const char* mode, const Alpha& alpha,
          const CsrMatrix<Scalar>& a, const X& x, const Beta& beta, const Y& y) {
  const SpmvKey key{a.row_ptr.data(), a.col_idx.data(), a.values.data(),
                    a.nrows,          a.ncols,          static_cast<long long>(a.values.extent(0))};
  Operator<Scalar>& op = handle.plan_for(key, detail::spmv_options<typename Y::memory_space>(exec),
                                         [&](const Options& o) { return Operator<Scalar>(a, o); });
  spmv(exec, handle, mode, alpha, op, x, beta, y);
}

}  // namespace kspmv
