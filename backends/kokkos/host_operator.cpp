// The host backend behind kspmv::Operator: one format built at construction, one kernel per apply.
#include "backends/kokkos/host_operator.hpp"

#include <string>
#include <utility>

#include "backends/kokkos/batched_csr_spmv.hpp"
#include "backends/kokkos/hbp_spmv.hpp"
#include "backends/kokkos/segmented_csr_spmv.hpp"
#include "backends/kokkos/spmv.hpp"
#include "kspmv/core/complex.hpp"
#include "kspmv/core/error.hpp"
#include "kspmv/formats/convert.hpp"
#include "kspmv/formats/value_refresh.hpp"

namespace kspmv::host {

namespace {

// Runs host::spmv on the format it holds, built from `source`.
template <class Scalar, class Format>
class FormatOperator final : public OperatorImpl<Scalar> {
 public:
  FormatOperator(Format format, Kernel kernel, double preprocess_ms,
                 const CsrMatrix<Scalar>& source)
      : format_(std::move(format)), kernel_(kernel), refresh_(source) {
    timings_.preprocess_ms = preprocess_ms;
  }

  // New values in the CSR order of the source in place of the format's, every plan kept
  // (ValueRefresh: what each format holds for it). The CSR kernel then has values of its own.
  void update_values(const Scalar* csr_order_values, bool) override {
    refresh_(format_, csr_order_values);
  }

  void apply_host(Scalar alpha, const Scalar* x, Scalar beta, Scalar* y) override {
    Kokkos::Timer timer;
    spmv(alpha, format_, x, beta, y);
    HostExecSpace().fence();
    timings_.kernel_ms = timings_.total_ms = timer.seconds() * 1e3;
  }
  Kernel kernel() const override { return kernel_; }
  Timings timings() const override { return timings_; }

 private:
  Format format_;
  Kernel kernel_;
  ValueRefresh<Scalar, Format> refresh_;
  Timings timings_;
};

// The factory of kernel K: times `Build` (the format conversion) and wraps its result.
template <class Scalar, Kernel K, auto Build>
std::unique_ptr<OperatorImpl<Scalar>> make(const CsrMatrix<Scalar>& a) {
  Kokkos::Timer timer;
  auto format = Build(a);
  const double ms = timer.seconds() * 1e3;
  return std::make_unique<FormatOperator<Scalar, decltype(format)>>(std::move(format), K, ms, a);
}

template <class S>
CsrMatrix<S> as_csr(const CsrMatrix<S>& a) {
  return a;
}
template <class S>
BatchedCsr<S> as_batched(const CsrMatrix<S>& a) {  // the format of CSR-Partial-Overlap
  return make_batched_csr(a);
}
template <class S>
SegmentedCsr<S> as_segmented(const CsrMatrix<S>& a) {
  return to_segmented(a);
}
template <class S>
HbpMatrix<S> as_hbp(const CsrMatrix<S>& a) {  // preprocessed on the host (paper 3)
  const CsrPointers<S> p{a.row_ptr.data(), a.col_idx.data(), a.values.data(), a.nrows, a.ncols};
  const HbpParams params;
  return build_hbp(p, params, hbp_sample_hash(p.row_ptr, p.col, p.m, p.n, params));
}

constexpr KernelInfo info(Kernel k, bool multi_device, const char* summary,
                          bool complex_values = false) {
  return {k,       Backend::Host, Residency::Resident, false, false, multi_device,
          summary, complex_values};
}

// The CSR row, the one that takes complex values as well.
template <class S>
KernelRow<S> csr_row() {
  return {info(Kernel::Csr, true, "CSR, a loop per row, rows in blocks over the threads", true),
          &make<S, Kernel::Csr, &as_csr<S>>};
}

// The full table of real values.
template <class S>
std::vector<KernelRow<S>> real_rows() {
  return {
      csr_row<S>(),
      {info(Kernel::Coo, false, "COO, scattered by rows"), &make<S, Kernel::Coo, &to_coo<S>>},
      {info(Kernel::Csc, false, "CSC, scattered by columns"), &make<S, Kernel::Csc, &to_csc<S>>},
      {info(Kernel::PartialOverlap, false, "CSR-Partial-Overlap's batched CSR (paper 4)"),
       &make<S, Kernel::PartialOverlap, &as_batched<S>>},
      {info(Kernel::Seg, false, "segmented CSR (segSpMV, paper 5)"),
       &make<S, Kernel::Seg, &as_segmented<S>>},
      {info(Kernel::SegR, false, "segmented CSR; differs from seg only on the GPU"),
       &make<S, Kernel::SegR, &as_segmented<S>>},
      {info(Kernel::Hbp, false, "hash-based 2D partition (HBP, paper 3)"),
       &make<S, Kernel::Hbp, &as_hbp<S>>},
  };
}

}  // namespace

// Complex values: the rows that take them (the CSR kernel) alone.
template <class S>
const std::vector<KernelRow<S>>& kernel_table() {
  static const std::vector<KernelRow<S>> rows = [] {
    if constexpr (is_complex_v<S>)
      return std::vector<KernelRow<S>>{csr_row<S>()};
    else
      return real_rows<S>();
  }();
  return rows;
}

template <class Scalar>
std::unique_ptr<OperatorImpl<Scalar>> make_from_table(const std::vector<KernelRow<Scalar>>& table,
                                                      const CsrMatrix<Scalar>& a, Kernel kernel,
                                                      Backend backend) {
  if (kernel == Kernel::Auto) kernel = Kernel::Csr;
  for (const auto& row : table)
    if (row.info.kernel == kernel) return row.make(a);
  throw UnsupportedError(std::string("the ") + to_string(backend) +
                         " backend does not run kernel '" + to_string(kernel) + "'");
}

template <class Scalar>
std::unique_ptr<OperatorImpl<Scalar>> make_operator(const CsrMatrix<Scalar>& a,
                                                    const Options& options) {
  return make_from_table(kernel_table<Scalar>(), a, options.kernel, Backend::Host);
}

template const std::vector<KernelRow<float>>& kernel_table();
template const std::vector<KernelRow<double>>& kernel_table();
template std::unique_ptr<OperatorImpl<float>> make_from_table(const std::vector<KernelRow<float>>&,
                                                              const CsrMatrix<float>&, Kernel,
                                                              Backend);
template std::unique_ptr<OperatorImpl<double>> make_from_table(
    const std::vector<KernelRow<double>>&, const CsrMatrix<double>&, Kernel, Backend);
template std::unique_ptr<OperatorImpl<float>> make_operator(const CsrMatrix<float>&,
                                                            const Options&);
template std::unique_ptr<OperatorImpl<Kokkos::complex<float>>> make_operator(
    const CsrMatrix<Kokkos::complex<float>>&, const Options&);
template std::unique_ptr<OperatorImpl<Kokkos::complex<double>>> make_operator(
    const CsrMatrix<Kokkos::complex<double>>&, const Options&);
template std::unique_ptr<OperatorImpl<double>> make_operator(const CsrMatrix<double>&,
                                                             const Options&);

}  // namespace kspmv::host
