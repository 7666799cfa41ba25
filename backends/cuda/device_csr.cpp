#include <string>
#include <vector>

#include "backends/cuda/device_spmv.hpp"

namespace kspmv::cuda {

template <class Scalar>
DeviceCsr<Scalar> DeviceCsr<Scalar>::upload(const CsrPointers<Scalar>& a, bool wide) {
  const Offset nnz = a.nnz();
  if (!wide && !narrow_offsets(nnz)) {
    throw InvalidArgument("DeviceCsr::upload: " + std::to_string(nnz) +
                          " non-zeros need 64-bit offsets");
  }
  DeviceCsr d;
  d.m = a.m;
  d.n = a.n;
  d.nnz = nnz;
  const std::size_t offsets = std::size_t(a.m) + 1;
  if (wide) {
    d.row_ptr_wide = DeviceBuffer<Offset>(offsets);
    d.row_ptr_wide.upload(a.row_ptr);
  } else {
    const std::vector<DeviceOffset> narrow(a.row_ptr, a.row_ptr + offsets);
    d.row_ptr = DeviceBuffer<DeviceOffset>(offsets);
    d.row_ptr.upload(narrow.data());
  }
  d.col = DeviceBuffer<Ordinal>(nnz);
  d.col.upload(a.col);
  d.val = DeviceBuffer<Scalar>(nnz);
  d.val.upload(a.val);
  return d;
}

template struct DeviceCsr<float>;
template struct DeviceCsr<double>;

}  // namespace kspmv::cuda
