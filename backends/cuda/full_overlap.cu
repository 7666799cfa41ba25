#include "backends/cuda/full_overlap.hpp"

#include <algorithm>
#include <limits>
#include <string>
#include <vector>

#include "backends/cuda/long_rows.hpp"
#include "backends/cuda/overlap_kernels.hpp"
#include "backends/cuda/vector_ops.hpp"

namespace kspmv::cuda {

namespace {

template <class S>
class FullOverlap final : public DeviceSpmv<S> {
 public:
  FullOverlap(const CsrPointers<S>& host, BatchPlan plan, const BatchParams& params)
      : m_(host.m),
        nnz_(static_cast<DeviceOffset>(host.nnz())),
        big_(std::move(plan.big_batches)),
        kernels_(params.max_batch_size),
        row_ptr_h_(std::size_t(host.m) + 1),
        col_h_(nnz_),
        val_h_(nnz_),
        // Big batch i keeps its slice row_ptr[row_begin..row_end] at offset i + row_begin, so
        // that slices never overlap and its kernels index it as (row_ptr_d_ + i)[row].
        row_ptr_d_(std::size_t(host.m) + 1 + big_.size()),
        col_d_(nnz_),
        val_d_(nnz_) {
    for (Ordinal i = 0; i <= host.m; ++i)
      row_ptr_h_[i] = static_cast<DeviceOffset>(host.row_ptr[i]);
    std::copy(host.col, host.col + nnz_, col_h_.data());
    std::copy(host.val, host.val + nnz_, val_h_.data());
    // The batch kernel's 16-byte-widened stage copies may read a few entries beyond the ranges
    // a run has copied so far (never used); zeroing once keeps them initialized.
    if (nnz_ > 0) {
      KSPMV_CUDA_CHECK(cudaMemset(col_d_.data(), 0, col_d_.bytes()));
      KSPMV_CUDA_CHECK(cudaMemset(val_d_.data(), 0, val_d_.bytes()));
    }
    const auto batches = overlap::device_batches(plan.batches);
    batches_d_ = DeviceBuffer<overlap::DeviceBatch>(batches.size());
    batches_d_.upload(batches.data());
    for (std::size_t i = 0; i < big_.size(); ++i) {
      const auto first = plan.long_rows.begin();
      long_rows_.emplace_back(
          host.row_ptr, host.m,
          std::vector<Ordinal>(first + big_[i].long_begin, first + big_[i].long_end));
      streams_.emplace_back();
      copied_.emplace_back(false);
      done_.emplace_back(false);
    }
  }

  // Alg. 8, with the long rows of each big batch on its stream after its batches. (Chaining the
  // copies in big-batch order measured slower on an H100: 0.2-1.1 ms more per run.)
  void run(S alpha, const S* x, S beta, S* y, cudaStream_t stream) override {
    if (alpha == S(0)) return scale_vector(y, m_, beta, stream);  // A unread, nothing sent
    // Nothing of this run starts before the caller's work and the previous run are done (the
    // previous run's kernels may still read the buffers these copies overwrite).
    start_.record(stream);
    for (std::size_t i = 0; i < big_.size(); ++i) {
      const BigBatchInfo& g = big_[i];
      const cudaStream_t s = streams_[i].get();
      KSPMV_CUDA_CHECK(cudaStreamWaitEvent(s, start_.get(), 0));
      if (ran_) KSPMV_CUDA_CHECK(cudaStreamWaitEvent(s, finished_.get(), 0));
      copy(col_d_.data(), col_h_.data(), g.nnz_begin, g.nnz_end, s);
      copy(val_d_.data(), val_h_.data(), g.nnz_begin, g.nnz_end, s);
      if (g.row_begin < g.row_end)
        copy(row_ptr_d_.data() + i, row_ptr_h_.data(), g.row_begin, Offset(g.row_end) + 1, s);
      copied_[i].record(s);
      // A batch or long row straddling big batches reads the copies of earlier streams too.
      for (int k = g.wait_begin; k < int(i); ++k)
        KSPMV_CUDA_CHECK(cudaStreamWaitEvent(s, copied_[k].get(), 0));
      const overlap::MatrixRefs<S> refs{row_ptr_d_.data() + i, col_d_.data(), val_d_.data(), nnz_};
      kernels_.run_batches(batches_d_.data() + g.batch_begin, g.batch_end - g.batch_begin, refs,
                           alpha, x, beta, y, s);
      long_rows_[i].run({row_ptr_d_.data(), col_d_.data(), val_d_.data(), m_, 0}, alpha, x, beta, y,
                        s);
      done_[i].record(s);
      KSPMV_CUDA_CHECK(cudaStreamWaitEvent(stream, done_[i].get(), 0));
    }
    finished_.record(stream);
    ran_ = true;
  }
  Kernel kernel() const override { return Kernel::FullOverlap; }
  std::size_t extra_device_bytes() const override {
    std::size_t bytes = row_ptr_d_.bytes() + col_d_.bytes() + val_d_.bytes() + batches_d_.bytes();
    for (const auto& l : long_rows_) bytes += l.device_bytes();
    return bytes;
  }

 private:
  // Enqueues the H2D copy of host[begin, end) to device[begin, end).
  template <class T>
  static void copy(T* device, const T* host, Offset begin, Offset end, cudaStream_t s) {
    if (end > begin)
      KSPMV_CUDA_CHECK(cudaMemcpyAsync(device + begin, host + begin, (end - begin) * sizeof(T),
                                       cudaMemcpyHostToDevice, s));
  }

  Ordinal m_;
  DeviceOffset nnz_;
  std::vector<BigBatchInfo> big_;
  overlap::Kernels<S> kernels_;
  PinnedBuffer<DeviceOffset> row_ptr_h_;
  PinnedBuffer<Ordinal> col_h_;
  PinnedBuffer<S> val_h_;
  DeviceBuffer<DeviceOffset> row_ptr_d_;
  DeviceBuffer<Ordinal> col_d_;
  DeviceBuffer<S> val_d_;
  DeviceBuffer<overlap::DeviceBatch> batches_d_;
  std::vector<LongRowPath<S>> long_rows_;  // per big batch
  std::vector<Stream> streams_;            // one per big batch
  std::vector<Event> copied_, done_;
  Event start_{false}, finished_{false};
  bool ran_ = false;
};

}  // namespace

template <class S>
std::unique_ptr<DeviceSpmv<S>> make_full_overlap(const CsrPointers<S>& host,
                                                 const BatchParams& params) {
  const Offset nnz = host.nnz();
  if (nnz > std::numeric_limits<DeviceOffset>::max()) {
    throw UnsupportedError("matrix has " + std::to_string(nnz) +
                           " non-zeros; device offsets are 32-bit (at most 2^31 - 1)");
  }
  return std::make_unique<FullOverlap<S>>(host, make_batch_plan(host.row_ptr, host.m, params),
                                          params);
}

template std::unique_ptr<DeviceSpmv<float>> make_full_overlap(const CsrPointers<float>&,
                                                              const BatchParams&);
template std::unique_ptr<DeviceSpmv<double>> make_full_overlap(const CsrPointers<double>&,
                                                               const BatchParams&);

}  // namespace kspmv::cuda
