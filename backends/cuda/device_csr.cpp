#include <limits>
#include <string>
#include <vector>

#include "backends/cuda/device_spmv.hpp"

namespace kspmv::cuda {

template <class Scalar>
DeviceCsr<Scalar> DeviceCsr<Scalar>::upload(const CsrPointers<Scalar>& a) {
  const Offset nnz = a.nnz();
  if (nnz > std::numeric_limits<DeviceOffset>::max()) {
    throw UnsupportedError("matrix has " + std::to_string(nnz) +
                           " non-zeros; device offsets are 32-bit (at most 2^31 - 1)");
  }
  DeviceCsr d;
  d.m = a.m;
  d.n = a.n;
  d.nnz = static_cast<DeviceOffset>(nnz);
  std::vector<DeviceOffset> narrow(a.row_ptr, a.row_ptr + a.m + 1);
  d.row_ptr = DeviceBuffer<DeviceOffset>(narrow.size());
  d.row_ptr.upload(narrow.data());
  d.col = DeviceBuffer<Ordinal>(nnz);
  d.col.upload(a.col);
  d.val = DeviceBuffer<Scalar>(nnz);
  d.val.upload(a.val);
  return d;
}

template struct DeviceCsr<float>;
template struct DeviceCsr<double>;

}  // namespace kspmv::cuda
