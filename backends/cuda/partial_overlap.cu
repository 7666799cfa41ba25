#include "backends/cuda/partial_overlap.hpp"

#include "backends/cuda/long_rows.hpp"
#include "backends/cuda/overlap_kernels.hpp"
#include "backends/cuda/vector_ops.hpp"

namespace kspmv::cuda {

namespace {

// O: the offset type of the matrix's row pointer (DeviceCsr::wide).
template <class S, class O>
class PartialOverlap final : public DeviceSpmv<S> {
 public:
  PartialOverlap(std::shared_ptr<const DeviceCsr<S>> a, const Offset* host_row_ptr, BatchPlan plan,
                 const BatchParams& params)
      : a_(std::move(a)),
        kernels_(params.max_batch_size),
        long_rows_(host_row_ptr, a_->m, std::move(plan.long_rows)) {
    const auto batches = overlap::device_batches<O>(plan.batches);
    batches_ = DeviceBuffer<overlap::DeviceBatch<O>>(batches.size());
    batches_.upload(batches.data());
  }

  void run(S alpha, const S* x, S beta, S* y, cudaStream_t stream) override {
    if (alpha == S(0)) return scale_vector(y, a_->m, beta, stream);  // A unread
    const overlap::MatrixRefs<S, O> refs{a_->template view<O>().row_ptr, a_->col.data(),
                                         a_->val.data(), static_cast<O>(a_->nnz)};
    kernels_.run_batches(batches_.data(), static_cast<int>(batches_.size()), refs, alpha, x, beta,
                         y, stream);
    // Alg. 9's long rows, each spread over many warps (one block per row is a cliff at 1e6 nnz).
    long_rows_.run(a_->col.data(), a_->val.data(), alpha, x, beta, y, stream);
  }
  // The values are read from the shared DeviceCsr; batches and long rows come from row_ptr
  // alone (Alg. 3): nothing to refresh.
  void update_values(const S*, cudaStream_t) override {}
  Kernel kernel() const override { return Kernel::PartialOverlap; }
  std::size_t extra_device_bytes() const override {
    return batches_.bytes() + long_rows_.device_bytes();
  }

 private:
  std::shared_ptr<const DeviceCsr<S>> a_;
  overlap::Kernels<S, O> kernels_;
  DeviceBuffer<overlap::DeviceBatch<O>> batches_;
  LongRowPath<S> long_rows_;
};

}  // namespace

template <class S>
std::unique_ptr<DeviceSpmv<S>> make_partial_overlap(std::shared_ptr<const DeviceCsr<S>> device,
                                                    const CsrPointers<S>& host,
                                                    const BatchParams& params) {
  if (!device || device->m != host.m || device->n != host.n || device->nnz != host.nnz())
    throw InvalidArgument("make_partial_overlap: the device and host matrices differ");
  BatchPlan plan = make_batch_plan(host.row_ptr, host.m, params);
  return with_offset_type(device->wide(), [&](auto o) -> std::unique_ptr<DeviceSpmv<S>> {
    return std::make_unique<PartialOverlap<S, decltype(o)>>(std::move(device), host.row_ptr,
                                                            std::move(plan), params);
  });
}

template std::unique_ptr<DeviceSpmv<float>> make_partial_overlap(
    std::shared_ptr<const DeviceCsr<float>>, const CsrPointers<float>&, const BatchParams&);
template std::unique_ptr<DeviceSpmv<double>> make_partial_overlap(
    std::shared_ptr<const DeviceCsr<double>>, const CsrPointers<double>&, const BatchParams&);

}  // namespace kspmv::cuda
