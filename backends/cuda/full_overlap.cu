#include "backends/cuda/full_overlap.hpp"

#include <algorithm>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "backends/cuda/long_rows.hpp"
#include "backends/cuda/overlap_kernels.hpp"
#include "backends/cuda/vector_ops.hpp"
#include "kspmv/formats/stream_plan.hpp"

namespace kspmv::cuda {

namespace {

// A copy lands at the same address modulo 128 bytes as its source (copies to shifted
// destinations measured 0.6-0.9% slower): a slot keeps 128 bytes of room in front of each array.
constexpr std::uintptr_t kCopyAlign = 128;
constexpr Offset kAlignEntries = 32;  // 128 bytes of the narrowest entry (4 bytes)

// Where in a slot array (a 256-byte-aligned device allocation) a copy from `src` starts.
template <class T>
Offset slot_shift(const T* src) {
  return static_cast<Offset>(reinterpret_cast<std::uintptr_t>(src) % kCopyAlign / sizeof(T));
}

// Device bytes of a slot for a big batch of `nnz` non-zeros and `rows` rows.
template <class S>
std::size_t slot_bytes(Offset nnz, Ordinal rows) {
  return std::size_t(nnz + kAlignEntries) * (sizeof(S) + sizeof(Ordinal)) +
         std::size_t(rows + 1 + kAlignEntries) * sizeof(DeviceOffset);
}

// Device bytes of the plan that stays resident: the batches and the long-row path.
template <class S>
std::size_t plan_bytes(const StreamPlan& sp) {
  return sp.batches.size() * sizeof(overlap::DeviceBatch<DeviceOffset>) +
         LongRowPath<S>::device_bytes(sp.long_rows);
}

template <class S>
std::size_t device_bytes(const StreamPlan& sp, int slots) {
  return plan_bytes<S>(sp) + std::size_t(slots) * slot_bytes<S>(sp.max_nnz, sp.max_rows);
}

// The plan for `host` whose ring and plan fit in config.device_bytes: the big batches of
// `params`, or smaller ones (slots of C non-zeros and at most C rows) until they fit.
template <class S>
StreamPlan fitted_plan(const CsrPointers<S>& host, const BatchParams& params,
                       const StreamConfig& config) {
  BatchPlan plan = make_batch_plan(host.row_ptr, host.m, params);
  StreamPlan sp = make_stream_plan(host.row_ptr, plan, kLongRowChunkNnz);
  const std::size_t limit = config.device_bytes;
  if (limit == 0 || device_bytes<S>(sp, config.slots) <= limit) return sp;
  const std::size_t per_entry = sizeof(S) + sizeof(Ordinal) + sizeof(DeviceOffset);
  std::size_t target = limit;
  const auto cut_at = [&](Offset capacity) {  // slots of `capacity` non-zeros and rows
    BatchParams p = params;
    p.big_batch_nnz = std::min(capacity, kMaxBigBatchNnz);
    p.big_batch_rows = static_cast<Ordinal>(std::min<Offset>(capacity, INT32_MAX));
    cut_big_batches(host.row_ptr, host.m, p, plan);
    return make_stream_plan(host.row_ptr, plan, kLongRowChunkNnz);
  };
  const Offset smallest = smallest_big_batch(plan, params);
  for (int attempt = 0; attempt < 16; ++attempt) {
    const std::size_t fixed = plan_bytes<S>(sp) + config.slots * slot_bytes<S>(0, 0);
    const Offset capacity =
        target > fixed ? static_cast<Offset>((target - fixed) / config.slots / per_entry) : 0;
    if (capacity < smallest) break;
    sp = cut_at(capacity);
    const std::size_t need = device_bytes<S>(sp, config.slots);
    if (need <= limit) return sp;
    target -= std::min(target, need - limit + limit / 64);  // the cuts added chunks: shrink
  }
  // The smallest slots (one batch or one long-row chunk each): what the ring needs at least.
  sp = cut_at(smallest);
  const std::size_t least = device_bytes<S>(sp, config.slots);
  if (least <= limit) return sp;
  throw MemoryError("streaming a matrix of " + std::to_string(host.nnz()) +
                        " non-zeros through a ring of " + std::to_string(config.slots) +
                        " device buffers (its plan, and slots of one batch at least)",
                    least, limit);
}

template <class S>
class FullOverlap final : public DeviceSpmv<S> {
 public:
  FullOverlap(const CsrPointers<S>& host, const BatchParams& params, const StreamConfig& config)
      : m_(host.m),
        nnz_(host.nnz()),
        col_h_(host.col),
        val_h_(host.val),
        kernels_(params.max_batch_size) {
    StreamPlan sp = fitted_plan(host, params, config);
    big_ = std::move(sp.big_batches);
    slice_begin_ = std::move(sp.slice_begin);
    chunk_begin_ = std::move(sp.chunk_begin);
    finish_begin_ = std::move(sp.finish_begin);
    local_row_ptr_ = std::move(sp.local_row_ptr);
    col_pin_ = PinnedRange(col_h_, std::size_t(nnz_) * sizeof(Ordinal));
    val_pin_ = PinnedRange(val_h_, std::size_t(nnz_) * sizeof(S));
    rows_pin_ = PinnedRange(local_row_ptr_.data(), local_row_ptr_.size() * sizeof(DeviceOffset));
    const auto batches = overlap::device_batches<DeviceOffset>(sp.batches);
    batches_d_ = DeviceBuffer<overlap::DeviceBatch<DeviceOffset>>(batches.size());
    batches_d_.upload(batches.data());
    long_rows_ = LongRowPath<S>(sp.long_rows);
    slots_.reserve(config.slots);
    for (int s = 0; s < config.slots; ++s) slots_.emplace_back(sp.max_nnz, sp.max_rows);
  }
  ~FullOverlap() override {
    // The copies read the pinned host arrays until they finish.
    cudaStreamSynchronize(copy_stream_.get());
  }

  // Alg. 8 with a ring: the copies of all big batches in order on one copy stream, big batch g
  // into slot g % slots once the kernels of big batch g - slots have read it, and the kernels on
  // `stream`, each big batch's after its copy: they run under the copies of the next ones, and
  // only the last big batch's kernels follow the last copy. (One copy stream measured
  // 1.006-1.027x the bare copy on an H100 where the paper's stream per big batch measured
  // 1.035-1.075x.)
  void run(S alpha, const S* x, S beta, S* y, cudaStream_t stream) override {
    if (alpha == S(0)) return scale_vector(y, m_, beta, stream);  // A unread, nothing sent
    // The copies start after the caller's work on `stream` (and after a refresh from device
    // memory): an apply is timed from there.
    start_.record(stream);
    const cudaStream_t cs = copy_stream_.get();
    KSPMV_CUDA_CHECK(cudaStreamWaitEvent(cs, start_.get(), 0));
    if (fetched_) KSPMV_CUDA_CHECK(cudaStreamWaitEvent(cs, fetched_values_.get(), 0));
    const S* val = own_values_.size() > 0 ? own_values_.data() : val_h_;
    for (std::size_t g = 0; g < big_.size(); ++g) {
      const BigBatchInfo& big = big_[g];
      Slot& slot = slots_[g % slots_.size()];
      if (slot.used) KSPMV_CUDA_CHECK(cudaStreamWaitEvent(cs, slot.consumed.get(), 0));
      const Offset nz0 = big.nnz_begin, nz1 = big.nnz_end;
      const Offset r0 = slice_begin_[g], r1 = slice_begin_[g + 1];
      Ordinal* col = slot.col.data() + slot_shift(col_h_ + nz0);
      S* v = slot.val.data() + slot_shift(val + nz0);
      DeviceOffset* rows = slot.rows.data() + slot_shift(local_row_ptr_.data() + r0);
      copy(col, col_h_ + nz0, nz1 - nz0, cs);
      copy(v, val + nz0, nz1 - nz0, cs);
      copy(rows, local_row_ptr_.data() + r0, r1 - r0, cs);
      slot.copied.record(cs);

      KSPMV_CUDA_CHECK(cudaStreamWaitEvent(stream, slot.copied.get(), 0));
      const overlap::MatrixRefs<S, DeviceOffset> refs{rows, col, v,
                                                      static_cast<DeviceOffset>(nz1 - nz0)};
      kernels_.run_batches(batches_d_.data() + big.batch_begin, big.batch_end - big.batch_begin,
                           refs, alpha, x, beta, y + big.row_begin, stream);
      long_rows_.sum_chunks(col, v, chunk_begin_[g], chunk_begin_[g + 1], x, stream);
      long_rows_.finish_rows(finish_begin_[g], finish_begin_[g + 1], alpha, beta, y, stream);
      slot.consumed.record(stream);
      slot.used = true;
    }
    copies_done_.record(cs);
    ran_ = true;
  }

  // The matrix streams from host memory on every run: the new values go to a pinned copy of
  // the values (the first refresh allocates it and unpins the caller's array, once the copies
  // of the previous run have read it). From host memory: the host waits for those copies (and
  // for a refresh from device memory still under way), then copies. From device memory: a copy
  // to the host enqueued on `stream`, which the next run's copies follow.
  void update_values(const S* values, cudaStream_t stream) override {
    if (nnz_ == 0) return;
    if (own_values_.size() == 0) {
      if (ran_) copies_done_.synchronize();
      own_values_ = PinnedBuffer<S>(nnz_);
      val_pin_ = PinnedRange();
    }
    cudaPointerAttributes at{};
    KSPMV_CUDA_CHECK(cudaPointerGetAttributes(&at, values));
    if (at.type == cudaMemoryTypeUnregistered || at.type == cudaMemoryTypeHost) {
      if (ran_) copies_done_.synchronize();
      if (fetched_) fetched_values_.synchronize();
      std::copy(values, values + nnz_, own_values_.data());
      return;
    }
    if (ran_) KSPMV_CUDA_CHECK(cudaStreamWaitEvent(stream, copies_done_.get(), 0));
    if (fetched_) KSPMV_CUDA_CHECK(cudaStreamWaitEvent(stream, fetched_values_.get(), 0));
    KSPMV_CUDA_CHECK(cudaMemcpyAsync(own_values_.data(), values, std::size_t(nnz_) * sizeof(S),
                                     cudaMemcpyDefault, stream));
    fetched_values_.record(stream);
    fetched_ = true;
  }
  Kernel kernel() const override { return Kernel::FullOverlap; }
  std::size_t extra_device_bytes() const override {
    std::size_t bytes = batches_d_.bytes() + long_rows_.device_bytes();
    for (const Slot& s : slots_) bytes += s.col.bytes() + s.val.bytes() + s.rows.bytes();
    return bytes;
  }

 private:
  // One buffer of the ring: a big batch's columns, values and rebased row pointers.
  struct Slot {
    Slot(Offset nnz, Ordinal rows)
        : col(nnz + kAlignEntries), val(nnz + kAlignEntries), rows(rows + 1 + kAlignEntries) {}
    DeviceBuffer<Ordinal> col;
    DeviceBuffer<S> val;
    DeviceBuffer<DeviceOffset> rows;
    Event copied{false}, consumed{false};
    bool used = false;  // consumed has been recorded
  };

  // Enqueues the H2D copy of host[0, count) to device[0, count).
  template <class T>
  static void copy(T* device, const T* host, Offset count, cudaStream_t s) {
    if (count > 0)
      KSPMV_CUDA_CHECK(cudaMemcpyAsync(device, host, count * sizeof(T), cudaMemcpyHostToDevice, s));
  }

  Ordinal m_;
  Offset nnz_;
  const Ordinal* col_h_;  // the caller's arrays, pinned in place
  const S* val_h_;
  PinnedBuffer<S> own_values_;  // from the first refresh on, in place of val_h_
  // The big batches and, per big batch (one entry more: the end of the last), its slice of
  // local_row_ptr_, long-row chunks and long rows to finish (stream_plan.hpp).
  std::vector<BigBatchInfo> big_;
  std::vector<Offset> slice_begin_;
  std::vector<Ordinal> chunk_begin_, finish_begin_;
  std::vector<DeviceOffset> local_row_ptr_;
  PinnedRange col_pin_, val_pin_, rows_pin_;  // after the arrays: unpinned before they go
  overlap::Kernels<S, DeviceOffset> kernels_;
  DeviceBuffer<overlap::DeviceBatch<DeviceOffset>> batches_d_;
  LongRowPath<S> long_rows_;
  std::vector<Slot> slots_;
  Stream copy_stream_;
  Event start_{false}, copies_done_{false};
  bool ran_ = false;
  Event fetched_values_{false};  // after the last refresh from device memory
  bool fetched_ = false;
};

}  // namespace

template <class S>
std::unique_ptr<DeviceSpmv<S>> make_full_overlap(const CsrPointers<S>& host,
                                                 const BatchParams& params,
                                                 const StreamConfig& config) {
  if (config.slots < 2)
    throw InvalidArgument("full-overlap: the ring needs at least 2 slots (got " +
                          std::to_string(config.slots) + ")");
  return std::make_unique<FullOverlap<S>>(host, params, config);
}

template std::unique_ptr<DeviceSpmv<float>> make_full_overlap(const CsrPointers<float>&,
                                                              const BatchParams&,
                                                              const StreamConfig&);
template std::unique_ptr<DeviceSpmv<double>> make_full_overlap(const CsrPointers<double>&,
                                                               const BatchParams&,
                                                               const StreamConfig&);

}  // namespace kspmv::cuda
