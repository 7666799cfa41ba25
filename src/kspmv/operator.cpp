#include "kspmv/operator.hpp"

#include <string>

#include "kspmv/core/error.hpp"
#include "kspmv/registry.hpp"

namespace kspmv {

template <class Scalar>
Operator<Scalar>::Operator(const CsrMatrix<Scalar>& a, Options options)
    : options_(std::move(options)), nrows_(a.nrows), ncols_(a.ncols) {
  if (options_.devices == std::vector<int>{kAllDevices}) {
    const int count = options_.backend == Backend::Host ? 1 : cuda_device_count();
    if (count == 0) throw InvalidArgument("Operator: devices 'all' but no CUDA device is present");
    options_.devices.clear();
    for (int d = 0; d < count; ++d) options_.devices.push_back(d);
  }
  impl_ = detail::make_operator_impl(a, options_);
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
