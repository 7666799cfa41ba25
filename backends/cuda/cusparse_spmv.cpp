#include "backends/cuda/cusparse_spmv.hpp"

#include <cusparse.h>

#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>

#include "backends/cuda/check.hpp"
#include "backends/cuda/cusparse_util.hpp"
#include "backends/cuda/device_arrays.hpp"
#include "backends/cuda/vector_ops.hpp"
#include "kspmv/core/error.hpp"

namespace kspmv::cuda {

namespace {

// Vectors of Scalar; the matrix of M: Scalar itself, or float with double vectors (mixed
// precision: cuSPARSE computes in the vectors' type, its mixed-precision table for SpMV).
template <class Scalar, class M = Scalar>
class CusparseSpmv final : public DeviceSpmv<Scalar> {
 public:
  CusparseSpmv(std::shared_ptr<const DeviceCsr<M>> a, Kernel kernel,
               const std::function<void*(std::size_t)>& scratch, cudaStream_t stream)
      : a_(std::move(a)),
        kernel_(kernel),
        alg_(kernel == Kernel::CusparseAlg2 ? CUSPARSE_SPMV_CSR_ALG2 : CUSPARSE_SPMV_CSR_ALG1) {
    if (a_->m == 0 || a_->nnz == 0) return;  // run() only scales y: nothing to set up
    try {
      if (!a_->wide()) {
        setup(const_cast<DeviceOffset*>(a_->row_ptr.data()), CUSPARSE_INDEX_32I,
              const_cast<Ordinal*>(a_->col.data()), CUSPARSE_INDEX_32I, scratch, stream);
        return;
      }
      // 64-bit row offsets (CUSPARSE_INDEX_64I) need 64-bit columns too: cuSPARSE (13.0) refuses
      // mixed index types, and asked for them anyway its preprocessing faulted on the device
      // (an illegal address that poisons the context). 8 more bytes per non-zero.
      wide_col_ = widen(a_->col.data(), static_cast<std::size_t>(a_->nnz));
      if (stream) KSPMV_CUDA_CHECK(cudaStreamSynchronize(cudaStreamLegacy));  // widen's kernel
      setup(const_cast<Offset*>(a_->row_ptr_wide.data()), CUSPARSE_INDEX_64I, wide_col_.data(),
            CUSPARSE_INDEX_64I, scratch, stream);
    } catch (...) {
      release();
      throw;
    }
  }
  ~CusparseSpmv() override { release(); }

  void run(Scalar alpha, const Scalar* x, Scalar beta, Scalar* y, cudaStream_t stream) override {
    if (a_->m == 0) return;
    if (alpha == Scalar(0) || a_->nnz == 0) {  // cuSPARSE would read A
      scale_vector(y, a_->m, beta, stream);
      return;
    }
    KSPMV_CUDA_CHECK(cusparseSetStream(handle_->get(), stream));
    KSPMV_CUDA_CHECK(cusparseDnVecSetValues(x_, const_cast<Scalar*>(x)));
    KSPMV_CUDA_CHECK(cusparseDnVecSetValues(y_, y));
    KSPMV_CUDA_CHECK(cusparseSpMV(handle_->get(), CUSPARSE_OPERATION_NON_TRANSPOSE, &alpha, mat_,
                                  x_, &beta, y_, cuda_data_type<Scalar>(), alg_, buffer_.data()));
  }
  // The matrix descriptor points at the shared DeviceCsr's values, which the caller refreshes
  // in place. The buffer's size and cusparseSpMV_preprocess serve repeated SpMVs on the same
  // sparsity pattern, and are kept (cuSPARSE documents, for cusparseSpMM_preprocess, that the
  // values may change arbitrarily); the GPU refresh test checks this on the cuSPARSE in use.
  void update_values(const Scalar*, cudaStream_t) override {}
  Kernel kernel() const override { return kernel_; }
  std::size_t extra_device_bytes() const override { return buffer_.bytes() + wide_col_.bytes(); }

 private:
  void setup(void* offsets, cusparseIndexType_t offset_type, void* col,
             cusparseIndexType_t col_type, const std::function<void*(std::size_t)>& scratch,
             cudaStream_t stream) {
    const auto type = cuda_data_type<Scalar>();
    handle_.emplace(kReuse);
    KSPMV_CUDA_CHECK(cusparseSetStream(handle_->get(), stream));
    KSPMV_CUDA_CHECK(cusparseCreateCsr(&mat_, a_->m, a_->n, a_->nnz, offsets, col,
                                       const_cast<M*>(a_->val.data()), offset_type, col_type,
                                       CUSPARSE_INDEX_BASE_ZERO, cuda_data_type<M>()));
    // The buffer query and preprocessing want vector descriptors; they point at stand-in
    // vectors that serve only the set-up, run() re-points them at the caller's x and y.
    const std::size_t nx = a_->n > 0 ? a_->n : 1, x_bytes = (nx * sizeof(Scalar) + 255) / 256 * 256;
    DeviceBuffer<unsigned char> own;
    auto* stand_in =
        static_cast<unsigned char*>(scratch ? scratch(x_bytes + a_->m * sizeof(Scalar)) : nullptr);
    if (!stand_in) {
      own = DeviceBuffer<unsigned char>(x_bytes + a_->m * sizeof(Scalar), kPooled, stream);
      stand_in = own.data();
    }
    KSPMV_CUDA_CHECK(cusparseCreateDnVec(&x_, a_->n, stand_in, type));
    KSPMV_CUDA_CHECK(cusparseCreateDnVec(&y_, a_->m, stand_in + x_bytes, type));
    const Scalar one = 1;  // representative alpha and beta: the size does not depend on them
    std::size_t bytes = 0;
    const cusparseStatus_t sized =
        cusparseSpMV_bufferSize(handle_->get(), CUSPARSE_OPERATION_NON_TRANSPOSE, &one, mat_, x_,
                                &one, y_, type, alg_, &bytes);
    if (sized == CUSPARSE_STATUS_NOT_SUPPORTED)  // a pair of types this cuSPARSE lacks
      throw UnsupportedError(std::string("cusparse: this cuSPARSE has no SpMV of a ") +
                             (std::is_same_v<M, float> ? "float" : "double or complex") +
                             " matrix on these vectors (" + cusparseGetErrorString(sized) + ")");
    KSPMV_CUDA_CHECK(sized);
    buffer_ = DeviceBuffer<unsigned char>(bytes, kPooled, stream);
    const cusparseStatus_t pre =  // queued on `stream`, which run() replaces
        cusparseSpMV_preprocess(handle_->get(), CUSPARSE_OPERATION_NON_TRANSPOSE, &one, mat_, x_,
                                &one, y_, type, alg_, buffer_.data());
    if (pre == CUSPARSE_STATUS_INTERNAL_ERROR && offset_type == CUSPARSE_INDEX_64I) {
      // cuSPARSE 13.0 fails to preprocess a CSR of 2.1e9 non-zeros with 64-bit indices (H100,
      // float and double). The preprocessing is optional: one SpMV on the stand-ins (x zero)
      // tells whether the matrix runs without it; UnsupportedError when it does not either.
      KSPMV_CUDA_CHECK(cudaMemsetAsync(stand_in, 0, x_bytes, stream));
      const cusparseStatus_t trial =
          cusparseSpMV(handle_->get(), CUSPARSE_OPERATION_NON_TRANSPOSE, &one, mat_, x_, &one, y_,
                       type, alg_, buffer_.data());
      KSPMV_CUDA_CHECK(cudaDeviceSynchronize());
      if (trial != CUSPARSE_STATUS_SUCCESS)
        throw UnsupportedError("cusparse: cuSPARSE cannot run this matrix of " +
                               std::to_string(a_->nnz) + " non-zeros with 64-bit indices (" +
                               cusparseGetErrorString(trial) + ")");
    } else {
      KSPMV_CUDA_CHECK(pre);
    }
    // On a stream of the caller's, the stand-ins go back to the pool after the preprocessing,
    // without waiting (on the legacy default stream, `own` waits for the device as it goes:
    // the kernel is ready on return).
    if (stream) own.free_after(stream);
  }
  void release() noexcept {
    if (x_) cusparseDestroyDnVec(x_);
    if (y_) cusparseDestroyDnVec(y_);
    if (mat_) cusparseDestroySpMat(mat_);
    x_ = y_ = nullptr;
    mat_ = nullptr;
  }

  std::shared_ptr<const DeviceCsr<M>> a_;
  Kernel kernel_;
  cusparseSpMVAlg_t alg_;
  std::optional<CusparseHandle> handle_;  // once set up
  cusparseSpMatDescr_t mat_ = nullptr;
  cusparseDnVecDescr_t x_ = nullptr, y_ = nullptr;
  DeviceBuffer<unsigned char> buffer_;
  DeviceBuffer<Offset> wide_col_;  // the columns as 64-bit, where cuSPARSE wants them so
};

void check_cusparse_kernel(Kernel kernel) {
  if (kernel != Kernel::Cusparse && kernel != Kernel::CusparseAlg2)
    throw InvalidArgument(
        std::string("make_cusparse: kernel must be cusparse or cusparse-alg2, got ") +
        to_string(kernel));
}

}  // namespace

template <class Scalar>
std::unique_ptr<DeviceSpmv<Scalar>> make_cusparse(std::shared_ptr<const DeviceCsr<Scalar>> a,
                                                  Kernel kernel,
                                                  const std::function<void*(std::size_t)>& scratch,
                                                  cudaStream_t stream) {
  check_cusparse_kernel(kernel);
  return std::make_unique<CusparseSpmv<Scalar>>(std::move(a), kernel, scratch, stream);
}

std::unique_ptr<DeviceSpmv<double>> make_cusparse_mixed(std::shared_ptr<const DeviceCsr<float>> a,
                                                        Kernel kernel) {
  check_cusparse_kernel(kernel);
  return std::make_unique<CusparseSpmv<double, float>>(std::move(a), kernel, nullptr, nullptr);
}

template std::unique_ptr<DeviceSpmv<float>> make_cusparse(std::shared_ptr<const DeviceCsr<float>>,
                                                          Kernel,
                                                          const std::function<void*(std::size_t)>&,
                                                          cudaStream_t);
template std::unique_ptr<DeviceSpmv<double>> make_cusparse(std::shared_ptr<const DeviceCsr<double>>,
                                                           Kernel,
                                                           const std::function<void*(std::size_t)>&,
                                                           cudaStream_t);
#define KSPMV_INSTANTIATE(S)                                                                 \
  template std::unique_ptr<DeviceSpmv<S>> make_cusparse(                                     \
      std::shared_ptr<const DeviceCsr<S>>, Kernel, const std::function<void*(std::size_t)>&, \
      cudaStream_t);
KSPMV_INSTANTIATE(Complex<float>)
KSPMV_INSTANTIATE(Complex<double>)
#undef KSPMV_INSTANTIATE

}  // namespace kspmv::cuda
