// The host backend behind kspmv::Operator: one format built at construction, one kernel per apply.
#include "backends/host/host_operator.hpp"

#include <string>
#include <utility>

#include "backends/host/batched_csr_spmv.hpp"
#include "backends/host/hbp_spmv.hpp"
#include "backends/host/segmented_csr_spmv.hpp"
#include "backends/host/spmv.hpp"
#include "kspmv/formats/convert.hpp"

namespace kspmv::host {

namespace {

// Runs host::spmv on the format it holds. A new host kernel is a new spmv overload for its
// format plus one case in make_operator.
template <class Scalar, class Format>
class FormatOperator final : public OperatorImpl<Scalar> {
 public:
  FormatOperator(Format format, Kernel kernel, double preprocess_ms)
      : format_(std::move(format)), kernel_(kernel) {
    timings_.preprocess_ms = preprocess_ms;
  }

  void apply_host(Scalar alpha, const Scalar* x, Scalar beta, Scalar* y) override {
    Kokkos::Timer timer;
    spmv(alpha, format_, x, beta, y);
    Kokkos::fence();
    timings_.kernel_ms = timings_.total_ms = timer.seconds() * 1e3;
  }
  Kernel kernel() const override { return kernel_; }
  Timings timings() const override { return timings_; }

 private:
  Format format_;
  Kernel kernel_;
  Timings timings_;
};

// Times `build` (the format conversion) and wraps its result.
template <class Scalar, class Build>
std::unique_ptr<OperatorImpl<Scalar>> make(Kernel kernel, Build build) {
  Kokkos::Timer timer;
  auto format = build();
  const double ms = timer.seconds() * 1e3;
  using Format = decltype(format);
  return std::make_unique<FormatOperator<Scalar, Format>>(std::move(format), kernel, ms);
}

}  // namespace

template <class Scalar>
std::unique_ptr<OperatorImpl<Scalar>> make_operator(const CsrMatrix<Scalar>& a,
                                                    const Options& options) {
  const Kernel kernel = options.kernel == Kernel::Auto ? Kernel::Csr : options.kernel;
  switch (kernel) {
    case Kernel::Csr:
      return make<Scalar>(kernel, [&] { return a; });
    case Kernel::Coo:
      return make<Scalar>(kernel, [&] { return to_coo(a); });
    case Kernel::Csc:
      return make<Scalar>(kernel, [&] { return to_csc(a); });
    case Kernel::PartialOverlap:  // host twin of CSR-Partial-Overlap's batched format
      return make<Scalar>(kernel, [&] { return make_batched_csr(a); });
    case Kernel::Seg:  // host twin of segSpMV; segSpMV-r differs only on the GPU
    case Kernel::SegR:
      return make<Scalar>(kernel, [&] { return to_segmented(a); });
    case Kernel::Hbp:  // host twin of the HBP kernel (paper 3), preprocessed on the host
      return make<Scalar>(kernel, [&] {
        const CsrPointers<Scalar> p{a.row_ptr.data(), a.col_idx.data(), a.values.data(), a.nrows,
                                    a.ncols};
        const HbpParams params;
        return build_hbp(p, params, hbp_sample_hash(p.row_ptr, p.col, p.m, p.n, params));
      });
    default:
      throw UnsupportedError(
          std::string("the host backend does not run kernel '") + to_string(kernel) +
          "'; host kernels: auto, csr, coo, csc, partial-overlap, seg, seg-r, hbp "
          "(use backend cuda for the others)");
  }
}

template std::unique_ptr<OperatorImpl<float>> make_operator(const CsrMatrix<float>&,
                                                            const Options&);
template std::unique_ptr<OperatorImpl<double>> make_operator(const CsrMatrix<double>&,
                                                             const Options&);

}  // namespace kspmv::host
