// MixedOperator (mixed_operator.hpp): the checks of its options, and cuSPARSE's mixed-precision
// SpMV of the CUDA backend (backends/cuda/cusparse_spmv.hpp) behind them.
#include "kspmv/mixed_operator.hpp"

#include <string>
#include <utility>

#include "kspmv/core/error.hpp"
#include "kspmv/core/region.hpp"
#include "kspmv/registry.hpp"
#ifdef KSPMV_HAVE_CUDA
#include "backends/cuda/cusparse_spmv.hpp"
#include "backends/cuda/memory.hpp"
#endif

namespace kspmv {

struct MixedOperator::Impl {
#ifdef KSPMV_HAVE_CUDA
  int device = 0;
  std::unique_ptr<cuda::DeviceSpmv<double>> spmv;
#endif
};

MixedOperator::MixedOperator(const CsrMatrix<float>& a, const Options& options)
    : nrows_(a.nrows), ncols_(a.ncols) {
  const Region region("kspmv::setup");
  if (options.backend != Backend::Cuda)
    throw UnsupportedError(std::string("MixedOperator: a float matrix on double vectors runs on "
                                       "the cuda backend (cuSPARSE), not ") +
                           to_string(options.backend));
  if (options.kernel != Kernel::Auto && options.kernel != Kernel::Cusparse &&
      options.kernel != Kernel::CusparseAlg2)
    throw UnsupportedError(std::string("MixedOperator: kernel '") + to_string(options.kernel) +
                           "' reads one scalar type; mixed precision runs auto (cusparse), "
                           "cusparse and cusparse-alg2");
  if (kernels_of(Backend::Cuda).empty())
    throw UnsupportedError("kspmv was built without the CUDA backend (KSPMV_ENABLE_CUDA)");
  if (options.devices.size() != 1)
    throw UnsupportedError("MixedOperator: mixed precision runs on one device; " +
                           std::to_string(options.devices.size()) + " were given");
  const int device = options.devices[0];
  if (device < 0 || device >= cuda_device_count())
    throw InvalidArgument("MixedOperator: CUDA device " + std::to_string(device) +
                          " does not exist (" + std::to_string(cuda_device_count()) +
                          " CUDA devices)");
  if (options.validate) a.validate();
  kernel_ = options.kernel == Kernel::Auto ? Kernel::Cusparse : options.kernel;
#ifdef KSPMV_HAVE_CUDA
  impl_ = std::make_unique<Impl>();
  impl_->device = device;
  const cuda::DeviceGuard guard(device);
  const CsrPointers<float> p{a.row_ptr.data(), a.col_idx.data(), a.values.data(), a.nrows, a.ncols};
  impl_->spmv = cuda::make_cusparse_mixed(
      std::make_shared<const cuda::DeviceCsr<float>>(cuda::DeviceCsr<float>::upload(p)), kernel_);
#endif
}

MixedOperator::~MixedOperator() = default;
MixedOperator::MixedOperator(MixedOperator&&) noexcept = default;
MixedOperator& MixedOperator::operator=(MixedOperator&&) noexcept = default;

void MixedOperator::apply(DeviceStream stream, double alpha, const double* x, double beta,
                          double* y) {
  const Region region("kspmv::apply");
  if (!impl_) throw InvalidArgument("MixedOperator: apply on a moved-from operator");
  if ((ncols_ > 0 && x == nullptr) || (nrows_ > 0 && y == nullptr))
    throw InvalidArgument("MixedOperator::apply: null vector pointer");
#ifdef KSPMV_HAVE_CUDA
  const cuda::DeviceGuard guard(impl_->device);
  impl_->spmv->run(alpha, x, beta, y, stream);
#else
  (void)stream, (void)alpha, (void)beta;
#endif
}

}  // namespace kspmv
