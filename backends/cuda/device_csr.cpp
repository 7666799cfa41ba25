#include <string>
#include <vector>

#include "backends/cuda/complex.hpp"
#include "backends/cuda/device_spmv.hpp"

namespace kspmv::cuda {

namespace {

// DeviceCsr::upload (`copy` synchronous) and upload_on (`copy` enqueued on a stream).
template <class Scalar, class Copy>
DeviceCsr<Scalar> upload_with(const CsrPointers<Scalar>& a, bool wide, const Copy& copy) {
  const Offset nnz = a.nnz();
  if (!wide && !narrow_offsets(nnz)) {
    throw InvalidArgument("DeviceCsr::upload: " + std::to_string(nnz) +
                          " non-zeros need 64-bit offsets");
  }
  DeviceCsr<Scalar> d;
  d.m = a.m;
  d.n = a.n;
  d.nnz = nnz;
  const std::size_t offsets = std::size_t(a.m) + 1;
  if (wide) {
    d.row_ptr_wide = DeviceBuffer<Offset>(offsets);
    copy(d.row_ptr_wide, a.row_ptr);
  } else {
    const std::vector<DeviceOffset> narrow(a.row_ptr, a.row_ptr + offsets);
    d.row_ptr = DeviceBuffer<DeviceOffset>(offsets);
    copy(d.row_ptr, narrow.data());  // pageable: staged before the copy returns
  }
  d.col = DeviceBuffer<Ordinal>(nnz);
  copy(d.col, a.col);
  d.val = DeviceBuffer<Scalar>(nnz);
  copy(d.val, a.val);
  return d;
}

}  // namespace

template <class Scalar>
DeviceCsr<Scalar> DeviceCsr<Scalar>::upload(const CsrPointers<Scalar>& a, bool wide) {
  return upload_with(a, wide, [](auto& buffer, const auto* host) { buffer.upload(host); });
}

template <class Scalar>
DeviceCsr<Scalar> DeviceCsr<Scalar>::upload_on(const CsrPointers<Scalar>& a, cudaStream_t stream) {
  return upload_with(a, !narrow_offsets(a.nnz()),
                     [stream](auto& buffer, const auto* host) { buffer.upload(host, stream); });
}

template struct DeviceCsr<float>;
template struct DeviceCsr<double>;
template struct DeviceCsr<Complex<float>>;
template struct DeviceCsr<Complex<double>>;

}  // namespace kspmv::cuda
