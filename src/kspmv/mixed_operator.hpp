// Mixed precision on the CUDA backend: a float matrix applied to double vectors, y = alpha*A*x +
// beta*y with the products and sums in double while the matrix's values cost half the bytes of
// a double operator's. cuSPARSE runs it: cusparseSpMV with A in CUDA_R_32F and x, y and the
// compute type CUDA_R_64F, the mixed-precision pair of its SpMV table (kspmv's own kernels read
// one scalar type). Operator<float> keeps float vectors; this is the float matrix with double
// ones.
#pragma once

#include <memory>

#include "kspmv/core/operator_impl.hpp"
#include "kspmv/core/options.hpp"
#include "kspmv/formats/csr.hpp"

namespace kspmv {

class MixedOperator {
 public:
  // `a` on options.devices[0]: options.backend must be Backend::Cuda, one device, and
  // options.kernel Auto (cusparse), Cusparse or CusparseAlg2; UnsupportedError otherwise and in
  // a build without CUDA, InvalidArgument for a device that does not exist. The matrix is
  // checked (unless Options::validate is false) and uploaded; the operator is ready on return.
  explicit MixedOperator(const CsrMatrix<float>& a, const Options& options);
  ~MixedOperator();
  MixedOperator(MixedOperator&&) noexcept;
  MixedOperator& operator=(MixedOperator&&) noexcept;

  // x (ncols entries) and y (nrows) in the memory of the operator's device, enqueued on `stream`
  // (a cudaStream_t; null: the legacy default stream) without waiting. beta == 0 overwrites y
  // (NaN included); alpha == 0 leaves A unread. InvalidArgument for a null x or y with entries.
  void apply(DeviceStream stream, double alpha, const double* x, double beta, double* y);

  Ordinal nrows() const { return nrows_; }
  Ordinal ncols() const { return ncols_; }
  Kernel kernel() const { return kernel_; }

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
  Ordinal nrows_ = 0, ncols_ = 0;
  Kernel kernel_ = Kernel::Cusparse;
};

}  // namespace kspmv
