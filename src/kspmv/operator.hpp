// kspmv::Operator: bind a matrix and options once, then apply y = alpha*A*x + beta*y many times.
#pragma once

#include <memory>

#include "kspmv/core/kokkos.hpp"
#include "kspmv/core/operator_impl.hpp"
#include "kspmv/core/options.hpp"
#include "kspmv/formats/csr.hpp"
#include "kspmv/registry.hpp"

namespace kspmv {

template <class Scalar>
class Operator {
 public:
  // Does all preprocessing (format conversion, device upload, partitioning) now, after checking
  // the matrix (Options::validate). The matrix is shared, not copied, by the host backend: do
  // not modify it while the Operator lives. A moved-from Operator throws InvalidArgument.
  explicit Operator(const CsrMatrix<Scalar>& a, Options options = {});
  ~Operator();
  Operator(Operator&&) noexcept;
  Operator& operator=(Operator&&) noexcept;

  // y = alpha*A*x + beta*y with host vectors. beta == 0 overwrites y (NaN included);
  // alpha == 0 leaves A unread. Throws InvalidArgument when the extents do not match or x and
  // y overlap.
  void apply(Scalar alpha, const HostView<const Scalar>& x, Scalar beta, const HostView<Scalar>& y);
  void apply(Scalar alpha, const HostView<Scalar>& x, Scalar beta, const HostView<Scalar>& y);
  // The same with raw pointers: host memory, or device memory of options().devices[0]
  // (CUDA backend only) when `device_pointers` is true.
  void apply(Scalar alpha, const Scalar* x, Scalar beta, Scalar* y, bool device_pointers = false);

  Kernel kernel() const;
  const Options& options() const { return options_; }
  Timings timings() const;
  Ordinal nrows() const { return nrows_; }
  Ordinal ncols() const { return ncols_; }

 private:
  OperatorImpl<Scalar>& impl() const;  // InvalidArgument after a move

  Options options_;
  Ordinal nrows_ = 0, ncols_ = 0;
  std::unique_ptr<OperatorImpl<Scalar>> impl_;
};

extern template class Operator<float>;
extern template class Operator<double>;

}  // namespace kspmv
