#include "backends/cuda/transpose.hpp"

#include <cstddef>
#include <string>

#include "backends/cuda/check.hpp"
#include "backends/cuda/cusparse_util.hpp"

namespace kspmv::cuda {

template <class S>
DeviceCsr<S> transpose(const DeviceCsr<S>& a) {
  if (a.wide())
    throw UnsupportedError(
        "transpose on the device: cuSPARSE's csr2csc takes 32-bit offsets, the "
        "matrix has " +
        std::to_string(a.nnz) + " non-zeros");
  DeviceCsr<S> t;
  t.m = a.n;
  t.n = a.m;
  t.nnz = a.nnz;
  t.row_ptr = DeviceBuffer<DeviceOffset>(static_cast<std::size_t>(a.n) + 1);
  t.col = DeviceBuffer<Ordinal>(static_cast<std::size_t>(a.nnz));
  t.val = DeviceBuffer<S>(static_cast<std::size_t>(a.nnz));
  Stream stream;
  if (a.nnz == 0) {  // cuSPARSE is not asked: some versions mishandle an empty matrix
    KSPMV_CUDA_CHECK(cudaMemsetAsync(t.row_ptr.data(), 0, t.row_ptr.bytes(), stream.get()));
    stream.synchronize();
    return t;
  }
  CusparseHandle handle;
  KSPMV_CUDA_CHECK(cusparseSetStream(handle.get(), stream.get()));
  std::size_t bytes = 0;
  KSPMV_CUDA_CHECK(cusparseCsr2cscEx2_bufferSize(
      handle.get(), a.m, a.n, a.nnz, a.val.data(), a.row_ptr.data(), a.col.data(), t.val.data(),
      t.row_ptr.data(), t.col.data(), cuda_data_type<S>(), CUSPARSE_ACTION_NUMERIC,
      CUSPARSE_INDEX_BASE_ZERO, CUSPARSE_CSR2CSC_ALG1, &bytes));
  DeviceBuffer<unsigned char> work(bytes);
  KSPMV_CUDA_CHECK(cusparseCsr2cscEx2(
      handle.get(), a.m, a.n, a.nnz, a.val.data(), a.row_ptr.data(), a.col.data(), t.val.data(),
      t.row_ptr.data(), t.col.data(), cuda_data_type<S>(), CUSPARSE_ACTION_NUMERIC,
      CUSPARSE_INDEX_BASE_ZERO, CUSPARSE_CSR2CSC_ALG1, work.data()));
  stream.synchronize();  // the result is complete and the work buffer idle before it is freed
  return t;
}

template DeviceCsr<float> transpose(const DeviceCsr<float>&);
template DeviceCsr<double> transpose(const DeviceCsr<double>&);

}  // namespace kspmv::cuda
