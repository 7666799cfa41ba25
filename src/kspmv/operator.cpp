#include "kspmv/operator.hpp"

#include <string>

#include "backends/host/host_operator.hpp"
#include "backends/host/multi_device.hpp"
#include "kspmv/core/error.hpp"
#ifdef KSPMV_HAVE_CUDA
#include "backends/cuda/cuda_operator.hpp"
#include "backends/cuda/multi_operator.hpp"
#endif

namespace kspmv {

int cuda_device_count() {
#ifdef KSPMV_HAVE_CUDA
  return cuda::device_count();
#else
  return 0;
#endif
}

template <class Scalar>
Operator<Scalar>::Operator(const CsrMatrix<Scalar>& a, Options options)
    : options_(std::move(options)), nrows_(a.nrows), ncols_(a.ncols) {
  if (options_.devices == std::vector<int>{kAllDevices}) {
    const int count = options_.backend == Backend::Host ? 1 : cuda_device_count();
    if (count == 0) throw InvalidArgument("Operator: devices 'all' but no CUDA device is present");
    options_.devices.clear();
    for (int d = 0; d < count; ++d) options_.devices.push_back(d);
  }
  const bool multi = options_.devices.size() > 1;
  if (options_.backend == Backend::Host) {
    impl_ = multi ? host::make_multi_operator(a, options_) : host::make_operator(a, options_);
    return;
  }
#ifdef KSPMV_HAVE_CUDA
  CsrPointers<Scalar> p;
  p.row_ptr = a.row_ptr.data();
  p.col = a.col_idx.data();
  p.val = a.values.data();
  p.m = a.nrows;
  p.n = a.ncols;
  if (multi)  // the Views are shared: they keep the matrix alive while the partition is tuned
    impl_ = cuda::make_multi_operator(p, std::make_shared<const CsrMatrix<Scalar>>(a), options_);
  else
    impl_ = cuda::make_operator(p, options_);
#else
  throw UnsupportedError("kspmv was built without the CUDA backend (KSPMV_ENABLE_CUDA)");
#endif
}

template <class Scalar>
Operator<Scalar>::~Operator() = default;
template <class Scalar>
Operator<Scalar>::Operator(Operator&&) noexcept = default;
template <class Scalar>
Operator<Scalar>& Operator<Scalar>::operator=(Operator&&) noexcept = default;

template <class Scalar>
void Operator<Scalar>::apply(Scalar alpha, const HostView<const Scalar>& x, Scalar beta,
                             const HostView<Scalar>& y) {
  if (x.extent(0) != static_cast<std::size_t>(ncols_) ||
      y.extent(0) != static_cast<std::size_t>(nrows_)) {
    throw InvalidArgument("apply: x has " + std::to_string(x.extent(0)) + " entries and y " +
                          std::to_string(y.extent(0)) + ", the matrix is " +
                          std::to_string(nrows_) + " x " + std::to_string(ncols_));
  }
  impl_->apply_host(alpha, x.data(), beta, y.data());
}

template <class Scalar>
void Operator<Scalar>::apply(Scalar alpha, const HostView<Scalar>& x, Scalar beta,
                             const HostView<Scalar>& y) {
  apply(alpha, HostView<const Scalar>(x), beta, y);
}

template <class Scalar>
void Operator<Scalar>::apply(Scalar alpha, const Scalar* x, Scalar beta, Scalar* y,
                             bool device_pointers) {
  if ((ncols_ > 0 && x == nullptr) || (nrows_ > 0 && y == nullptr))
    throw InvalidArgument("apply: null vector pointer");
  if (device_pointers)
    impl_->apply_device(alpha, x, beta, y);
  else
    impl_->apply_host(alpha, x, beta, y);
}

template <class Scalar>
Kernel Operator<Scalar>::kernel() const {
  return impl_->kernel();
}

template <class Scalar>
Timings Operator<Scalar>::timings() const {
  return impl_->timings();
}

template class Operator<float>;
template class Operator<double>;

}  // namespace kspmv
