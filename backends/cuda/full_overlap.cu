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

constexpr std::size_t kSliceShift = 32;  // row_ptr entries: 128 bytes

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
        // Big batch i keeps its slice row_ptr[row_begin..row_end] at offset
        // kSliceShift * i + row_begin, so that slices never overlap, its kernels index it as
        // (row_ptr_d_ + kSliceShift * i)[row], and source and destination of its copy share
        // their alignment (copies to 4-byte-shifted destinations measured 0.6-0.9% slower).
        row_ptr_d_(std::size_t(host.m) + 1 + kSliceShift * big_.size()),
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
      copied_.emplace_back(false);
    }
  }

  // Alg. 8, with the copies of all big batches in order on one copy stream and the kernels on
  // `stream`: big batch i's batches and long rows wait for its copy only, so they run under the
  // copy of i + 1, and only the last big batch's kernels follow the last copy. On an H100 this
  // measured 1.006-1.027x the bare copy on the large families, where the paper's one stream
  // per big batch (4 of them) measured 1.035-1.075x.
  void run(S alpha, const S* x, S beta, S* y, cudaStream_t stream) override {
    if (alpha == S(0)) return scale_vector(y, m_, beta, stream);  // A unread, nothing sent
    // The copies overwrite what the previous run's kernels read: they start after the caller's
    // work and after the previous run.
    start_.record(stream);
    const cudaStream_t cs = copy_stream_.get();
    KSPMV_CUDA_CHECK(cudaStreamWaitEvent(cs, start_.get(), 0));
    if (ran_) KSPMV_CUDA_CHECK(cudaStreamWaitEvent(cs, finished_.get(), 0));
    if (fetched_) KSPMV_CUDA_CHECK(cudaStreamWaitEvent(cs, fetched_values_.get(), 0));
    for (std::size_t i = 0; i < big_.size(); ++i) {
      const BigBatchInfo& g = big_[i];
      copy(col_d_.data(), col_h_.data(), g.nnz_begin, g.nnz_end, cs);
      copy(val_d_.data(), val_h_.data(), g.nnz_begin, g.nnz_end, cs);
      if (g.row_begin < g.row_end)
        copy(row_ptr_d_.data() + kSliceShift * i, row_ptr_h_.data(), g.row_begin,
             Offset(g.row_end) + 1, cs);
      copied_[i].record(cs);  // also covers the earlier copies a straddling batch reads
    }
    for (std::size_t i = 0; i < big_.size(); ++i) {
      const BigBatchInfo& g = big_[i];
      KSPMV_CUDA_CHECK(cudaStreamWaitEvent(stream, copied_[i].get(), 0));
      const overlap::MatrixRefs<S> refs{row_ptr_d_.data() + kSliceShift * i, col_d_.data(),
                                        val_d_.data(), nnz_};
      kernels_.run_batches(batches_d_.data() + g.batch_begin, g.batch_end - g.batch_begin, refs,
                           alpha, x, beta, y, stream);
      long_rows_[i].run({row_ptr_d_.data(), col_d_.data(), val_d_.data(), m_, 0}, alpha, x, beta, y,
                        stream);
    }
    finished_.record(stream);
    ran_ = true;
  }
  // The matrix streams from the pinned host copy on every run: the new values go there, after
  // the copies of the previous run have read the old ones. From host memory: the host waits for
  // them (and for a refresh from device memory still under way), then copies. From device
  // memory: a copy to the host enqueued on `stream`, which the next run's copies follow.
  void update_values(const S* values, cudaStream_t stream) override {
    if (nnz_ == 0) return;
    cudaPointerAttributes at{};
    KSPMV_CUDA_CHECK(cudaPointerGetAttributes(&at, values));
    if (at.type == cudaMemoryTypeUnregistered || at.type == cudaMemoryTypeHost) {
      if (ran_) finished_.synchronize();
      if (fetched_) fetched_values_.synchronize();
      std::copy(values, values + nnz_, val_h_.data());
      return;
    }
    if (ran_) KSPMV_CUDA_CHECK(cudaStreamWaitEvent(stream, finished_.get(), 0));
    if (fetched_) KSPMV_CUDA_CHECK(cudaStreamWaitEvent(stream, fetched_values_.get(), 0));
    KSPMV_CUDA_CHECK(cudaMemcpyAsync(val_h_.data(), values, std::size_t(nnz_) * sizeof(S),
                                     cudaMemcpyDefault, stream));
    fetched_values_.record(stream);
    fetched_ = true;
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
  Stream copy_stream_;
  std::vector<Event> copied_;  // per big batch: its copies (and the earlier ones) are done
  Event start_{false}, finished_{false};
  bool ran_ = false;
  Event fetched_values_{false};  // after the last refresh from device memory
  bool fetched_ = false;
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
