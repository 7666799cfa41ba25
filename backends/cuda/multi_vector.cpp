#include "backends/cuda/multi_vector.hpp"

namespace kspmv::cuda {

template <class S>
MultiVector<S>::MultiVector(const std::vector<int>& devices, const std::vector<std::size_t>& sizes)
    : devices_(devices) {
  if (sizes.size() != devices.size())
    throw InvalidArgument("MultiVector: one size per device is needed");
  for (std::size_t d = 0; d < devices.size(); ++d) {
    DeviceGuard guard(devices[d]);
    bufs_.emplace_back(sizes[d]);
  }
}

template <class S>
MultiVector<S>::~MultiVector() {
  for (std::size_t d = 0; d < bufs_.size(); ++d)
    on_device_noexcept(devices_[d], [&] { bufs_[d] = DeviceBuffer<S>(); });
}

template class MultiVector<float>;
template class MultiVector<double>;

}  // namespace kspmv::cuda
