// Value refresh of the host formats on a fixed pattern (value_refresh.hpp).
#include "kspmv/formats/value_refresh.hpp"

#include <algorithm>
#include <type_traits>

#include "kspmv/core/error.hpp"
#include "kspmv/formats/batched_csr.hpp"
#include "kspmv/formats/convert.hpp"
#include "kspmv/formats/hbp.hpp"
#include "kspmv/formats/segmented_csr.hpp"

namespace kspmv {

namespace {

// Copies csr.nnz() values into csr's values, first giving it values of its own when it shares
// the source's (the caller's array is never written).
template <class Scalar>
void copy_into(CsrMatrix<Scalar>& csr, const Scalar* csr_values, bool& own_values) {
  const Offset nnz = csr.nnz();
  if (!own_values) {
    csr.values = make_host_view<Scalar>("kspmv::refresh::values", nnz);
    own_values = true;
  }
  std::copy(csr_values, csr_values + nnz, csr.values.data());
}

}  // namespace

template <class Scalar, class Format>
ValueRefresh<Scalar, Format>::ValueRefresh(const CsrMatrix<Scalar>& source) {
  if constexpr (std::is_same_v<Format, SegmentedCsr<Scalar>>) {  // row_ptr alone is read
    source_.nrows = source.nrows;
    source_.ncols = source.ncols;
    source_.row_ptr = source.row_ptr;
  } else if constexpr (std::is_same_v<Format, CscMatrix<Scalar>> ||
                       std::is_same_v<Format, HbpMatrix<Scalar>>) {
    source_ = source;
  }
}

template <class Scalar, class Format>
void ValueRefresh<Scalar, Format>::operator()(Format& format, const Scalar* csr_values) {
  if constexpr (std::is_same_v<Format, CsrMatrix<Scalar>>) {
    copy_into(format, csr_values, own_values_);
  } else if constexpr (std::is_same_v<Format, BatchedCsr<Scalar>>) {
    copy_into(format.csr, csr_values, own_values_);
  } else if constexpr (std::is_same_v<Format, CooMatrix<Scalar>>) {
    std::copy(csr_values, csr_values + format.nnz(), format.values.data());
  } else if constexpr (std::is_same_v<Format, SegmentedCsr<Scalar>>) {
    refill_values(format, source_, csr_values);
  } else {
    Scalar* out = nullptr;
    if constexpr (std::is_same_v<Format, CscMatrix<Scalar>>) {
      if (sources_.empty() && format.nnz() > 0) {
        const HostView<Offset> order = csc_order(source_);
        sources_.assign(order.data(), order.data() + order.extent(0));
      }
      out = format.values.data();
    } else {
      static_assert(std::is_same_v<Format, HbpMatrix<Scalar>>, "a host format");
      if (sources_.empty() && format.nnz() > 0) {
        // Paper 3's conversion again on the source, its placement kept (Sec. III-B): the same
        // pattern, hash and blocks give the same table, which the check below confirms.
        const CsrPointers<Scalar> a{source_.row_ptr.data(), source_.col_idx.data(),
                                    source_.values.data(), source_.nrows, source_.ncols};
        const HbpMatrix<Scalar> again =
            build_hbp(a, format.params, format.hash, HbpReorder::Hash, &sources_);
        if (again.output_hash != format.output_hash || again.begin_nnz != format.begin_nnz)
          throw InvalidArgument(
              "value refresh: the HBP format was not built from this pattern by the hash "
              "reordering");
      }
      out = format.data.data();
    }
    source_ = CsrMatrix<Scalar>();  // the map replaces the pattern
    gather_values(sources_.data(), static_cast<Offset>(sources_.size()), csr_values, out);
  }
}

template <class Scalar>
void gather_values(const Offset* sources, Offset count, const Scalar* csr_values, Scalar* out) {
  // A plain lambda: host code on the host execution space only.
  Kokkos::parallel_for("kspmv::refresh::gather",
                       Kokkos::RangePolicy<HostExecSpace, Kokkos::IndexType<Offset>>(0, count),
                       [=](Offset p) { out[p] = csr_values[sources[p]]; });
}

#define KSPMV_INSTANTIATE(S)                       \
  template class ValueRefresh<S, CsrMatrix<S>>;    \
  template class ValueRefresh<S, CooMatrix<S>>;    \
  template class ValueRefresh<S, CscMatrix<S>>;    \
  template class ValueRefresh<S, BatchedCsr<S>>;   \
  template class ValueRefresh<S, SegmentedCsr<S>>; \
  template class ValueRefresh<S, HbpMatrix<S>>;    \
  template void gather_values(const Offset*, Offset, const S*, S*);
KSPMV_INSTANTIATE(float)
KSPMV_INSTANTIATE(double)
#undef KSPMV_INSTANTIATE
template class ValueRefresh<Kokkos::complex<float>, CsrMatrix<Kokkos::complex<float>>>;
template class ValueRefresh<Kokkos::complex<double>, CsrMatrix<Kokkos::complex<double>>>;

}  // namespace kspmv
