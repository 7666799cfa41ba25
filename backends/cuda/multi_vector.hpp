// A vector with one device buffer per device: the storage behind the DistributedVectors of the
// multi-device executor (multi_device.hpp) and of the single-device operator's CG.
#pragma once

#include <cstddef>
#include <vector>

#include "backends/cuda/memory.hpp"

namespace kspmv::cuda {

// One device buffer per device (a device may be listed more than once).
template <class S>
class MultiVector {
 public:
  MultiVector() = default;
  // sizes[d] entries on CUDA device devices[d].
  MultiVector(const std::vector<int>& devices, const std::vector<std::size_t>& sizes);
  ~MultiVector();  // frees each buffer with its device current
  MultiVector(const MultiVector&) = delete;
  MultiVector& operator=(const MultiVector&) = delete;
  int ndevices() const { return static_cast<int>(bufs_.size()); }
  int device(int d) const { return devices_[d]; }
  S* data(int d) const { return bufs_[d].data(); }
  std::size_t size(int d) const { return bufs_[d].size(); }

 private:
  std::vector<int> devices_;
  std::vector<DeviceBuffer<S>> bufs_;
};

extern template class MultiVector<float>;
extern template class MultiVector<double>;

}  // namespace kspmv::cuda
