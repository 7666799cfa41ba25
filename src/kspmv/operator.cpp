#include "kspmv/operator.hpp"

#include <cstdint>
#include <string>

#include "kspmv/core/error.hpp"
#include "kspmv/registry.hpp"
#include "partitioners/exchange.hpp"
#include "partitioners/partition_plan.hpp"

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
  // Every option is checked, whatever the others are (the partition and exchange names too,
  // although one device uses neither).
  part::parse_scheme(options_.partition);
  part::parse_exchange(options_.exchange);
  if (options_.validate) a.validate();
  impl_ = detail::make_operator_impl(a, options_);
}

template <class Scalar>
OperatorImpl<Scalar>& Operator<Scalar>::impl() const {
  if (!impl_) throw InvalidArgument("Operator: used after it was moved from");
  return *impl_;
}

namespace {
// Throws InvalidArgument when x[0, nx) and y[0, ny) share memory: the kernels read x while they
// write y.
template <class Scalar>
void check_no_alias(const Scalar* x, std::size_t nx, const Scalar* y, std::size_t ny) {
  if (nx == 0 || ny == 0) return;
  const auto xa = reinterpret_cast<std::uintptr_t>(x), ya = reinterpret_cast<std::uintptr_t>(y);
  if (xa < ya + ny * sizeof(Scalar) && ya < xa + nx * sizeof(Scalar))
    throw InvalidArgument(
        "apply: x and y overlap in memory; y = alpha*A*x + beta*y needs them "
        "apart");
}
}  // namespace

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
  check_no_alias(x.data(), x.extent(0), y.data(), y.extent(0));
  impl().apply_host(alpha, x.data(), beta, y.data());
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
  check_no_alias(x, static_cast<std::size_t>(ncols_), y, static_cast<std::size_t>(nrows_));
  if (device_pointers)
    impl().apply_device(alpha, x, beta, y);
  else
    impl().apply_host(alpha, x, beta, y);
}

template <class Scalar>
Kernel Operator<Scalar>::kernel() const {
  return impl().kernel();
}

template <class Scalar>
Timings Operator<Scalar>::timings() const {
  return impl().timings();
}

template class Operator<float>;
template class Operator<double>;

}  // namespace kspmv
