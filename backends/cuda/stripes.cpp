#include "backends/cuda/stripes.hpp"

#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "backends/cuda/csr_vector.hpp"
#include "backends/cuda/cuda_operator.hpp"
#include "backends/cuda/vector_ops.hpp"
#include "kspmv/formats/column_stripes.hpp"

namespace kspmv::cuda {

namespace {

template <class S>
class StripedSpmv final : public DeviceSpmv<S> {
 public:
  // `host` stays valid as long as the kernel (the CUDA operator keeps its arrays): the first
  // refresh reads its pattern again.
  StripedSpmv(Kernel kernel, const CsrPointers<S>& host, Ordinal width)
      : pattern_{host.row_ptr, host.col, nullptr, host.m, host.n}, width_(width) {
    std::vector<CsrArrays<S>> stripes = column_stripes(host, width);
    for (CsrArrays<S>& s : stripes) {
      const CsrPointers<S> p = s.pointers();
      Stripe stripe;
      stripe.nnz = p.nnz();
      const Kernel k = kernel == Kernel::Auto ? stripe_kernel(p) : kernel;
      const KernelRow<S>& row = kernel_row<S>(k);
      if (row.uses_device_csr) stripe.csr = std::make_shared<DeviceCsr<S>>(DeviceCsr<S>::upload(p));
      // Auto's CSR-Vector runs a thread a row (the stripe's rows are short whatever their spread).
      stripe.kernel = kernel == Kernel::Auto && k == Kernel::CsrVector
                          ? make_csr_vector<S>(stripe.csr, p, CsrVectorConfig{1, 0})
                          : row.make(stripe.csr, p);
      stripes_.push_back(std::move(stripe));
      s = CsrArrays<S>();  // the host copy goes once its kernel is built
    }
  }

  // Paper 3 Sec. III-A's order of the column blocks: y = beta*y + alpha*A_0 x, then
  // y += alpha*A_s x stripe after stripe.
  void run(S alpha, const S* x, S beta, S* y, cudaStream_t stream) override {
    if (alpha == S(0)) return stripes_.front().kernel->run(alpha, x, beta, y, stream);
    for (std::size_t s = 0; s < stripes_.size(); ++s)
      stripes_[s].kernel->run(alpha, x, s == 0 ? beta : S(1), y, stream);
  }

  // Each stripe's values gathered from `values` (the CSR order of the whole matrix) into its
  // resident CSR, or into scratch for a kernel of a layout of its own, which gathers from there.
  void update_values(const S* values, cudaStream_t stream) override {
    if (!sources_.data() && pattern_.nnz() > 0) {  // each entry's position, on the first refresh
      if (pattern_.nnz() > std::numeric_limits<Ordinal>::max())
        throw UnsupportedError(
            "update_values: stripes refresh matrices of fewer than 2^31 entries");
      std::vector<Ordinal> sources;
      column_stripes<S, Ordinal>(pattern_, width_, &sources);
      sources_ = upload_vector(sources);
    }
    Offset first = 0;
    for (Stripe& s : stripes_) {
      S* into = s.csr ? s.csr->val.data() : scratch(s.nnz);
      if (s.nnz > 0) gather_entries(into, values, sources_.data() + first, Ordinal(s.nnz), stream);
      s.kernel->update_values(into, stream);
      first += s.nnz;
    }
  }

  Kernel kernel() const override { return stripes_.front().kernel->kernel(); }
  std::size_t extra_device_bytes() const override {
    std::size_t bytes = sources_.bytes() + scratch_.bytes();
    for (const Stripe& s : stripes_)
      bytes += (s.csr ? s.csr->bytes() : 0) + s.kernel->extra_device_bytes();
    return bytes;
  }

 private:
  struct Stripe {
    std::shared_ptr<DeviceCsr<S>> csr;  // null for a kernel of a layout of its own
    std::unique_ptr<DeviceSpmv<S>> kernel;
    Offset nnz = 0;
  };

  // Kernel::Auto on a stripe: a thread a row where its rows hold 1.5 entries or fewer on
  // average, else cuSPARSE. Measured (H200, 2026-12-01, uniform random patterns, stripes of a third
  // of the L2, over cuSPARSE on the whole matrix): 1 entry a row, a thread a row 1.62x and
  // cuSPARSE 1.34x (CSR-Vector's 4 lanes a row 0.60x); 2 entries, 1.78x and 1.87x; 4 entries,
  // 1.55x and 1.92x.
  static Kernel stripe_kernel(const CsrPointers<S>& p) {
    const double mean = p.m > 0 ? double(p.nnz()) / p.m : 0;
    return mean <= 1.5 ? Kernel::CsrVector : Kernel::Cusparse;
  }
  // Scratch of at least `count` entries; the stripes' refreshes share it in stream order.
  S* scratch(Offset count) {
    if (scratch_.size() < std::size_t(count)) scratch_ = DeviceBuffer<S>(std::size_t(count));
    return scratch_.data();
  }

  std::vector<Stripe> stripes_;
  CsrPointers<S> pattern_;  // the host matrix's row pointer and columns
  Ordinal width_;
  DeviceBuffer<Ordinal> sources_;  // each stripe entry's position there, from the first refresh
  DeviceBuffer<S> scratch_;
};

}  // namespace

template <class Scalar>
std::unique_ptr<DeviceSpmv<Scalar>> make_striped(Kernel kernel, const CsrPointers<Scalar>& host,
                                                 Ordinal width) {
  return std::make_unique<StripedSpmv<Scalar>>(kernel, host, width);
}

template std::unique_ptr<DeviceSpmv<float>> make_striped(Kernel, const CsrPointers<float>&,
                                                         Ordinal);
template std::unique_ptr<DeviceSpmv<double>> make_striped(Kernel, const CsrPointers<double>&,
                                                          Ordinal);

}  // namespace kspmv::cuda
