// Multi-device Operator of the CUDA backend and its online LRA / LRA+RC tuner.
#include "backends/cuda/multi_operator.hpp"

#include <algorithm>
#include <chrono>
#include <limits>
#include <utility>
#include <vector>

#include "backends/cuda/multi_device.hpp"
#include "kspmv/core/timer.hpp"

namespace kspmv::cuda {

namespace {

template <class S>
class MultiDeviceOperator final : public OperatorImpl<S> {
 public:
  MultiDeviceOperator(const CsrPointers<S>& host, std::shared_ptr<const void> keep,
                      const Options& o)
      : host_(host), nnz_(host.nnz()), keep_(std::move(keep)) {
    const auto t0 = Clock::now();
    if (o.residency == Residency::Streamed)
      throw UnsupportedError("multi-device operator: the matrix is resident on the devices");
    popt_ = {part::parse_scheme(o.partition), static_cast<int>(o.devices.size()), o.d_l, o.d_c};
    mopt_ = {part::parse_exchange(o.exchange), o.devices, o.kernel, part::ExchangeUse::Apply};
    const bool lra = popt_.scheme == part::Scheme::LRA || popt_.scheme == part::Scheme::LRARC;
    if (lra && o.tune_partition && o.d_l < 0 && o.d_c < 0 && host.m > 0)
      candidates_ = part::tuning_candidates(popt_.scheme, double(host.nnz()) / host.m);
    current_ = build(0);
    mopt_.exchange = current_->exchange();  // Auto resolved once, for every candidate
    if (candidates_.empty()) keep_.reset();
    timings_.preprocess_ms = ms_since(t0);
  }

  void apply_host(S alpha, const S* x, S beta, S* y) override {
    const auto t0 = Clock::now();
    current_->apply(alpha, x, beta, y);
    timings_.total_ms = ms_since(t0);
    timings_.devices = current_->timings();
    double slowest = 0;
    timings_.kernel_ms = timings_.exchange_ms = 0;
    for (const auto& t : timings_.devices) {
      timings_.kernel_ms = std::max(timings_.kernel_ms, t.kernel_ms);
      timings_.exchange_ms = std::max(timings_.exchange_ms, t.exchange_ms);
      slowest = std::max(slowest, t.total_ms);
    }
    timings_.h2d_ms = std::max(0.0, timings_.total_ms - slowest);
    if (!candidates_.empty()) tune(slowest);
  }

  // Device vectors (on the first device) pass through host memory: the executor's exchange
  // starts from host vectors. Ordered after `stream`; returns when y is written.
  void apply_device(S alpha, const S* x, S beta, S* y, DeviceStream stream) override {
    KSPMV_CUDA_CHECK(cudaStreamSynchronize(stream));
    hx_.resize(host_.n);
    hy_.resize(host_.m);
    const auto get = [](S* dst, const S* src, std::size_t n) {
      if (n) KSPMV_CUDA_CHECK(cudaMemcpy(dst, src, n * sizeof(S), cudaMemcpyDefault));
    };
    if (alpha != S(0)) get(hx_.data(), x, hx_.size());
    if (beta != S(0)) get(hy_.data(), y, hy_.size());
    apply_host(alpha, hx_.data(), beta, hy_.data());
    get(y, hy_.data(), hy_.size());
  }

  // New values (host, CSR order of the matrix) in the executors alive, the plan and exchange
  // kept. While the partition is tuned, the candidates still to be built take them too, from a
  // copy of them (nnz scalars, freed when tuning ends): the caller's matrix keeps its values.
  void update_values(const S* values, bool device) override {
    const S* csr_order_values = values;
    if (device) {  // the executors take host values
      hv_.resize(static_cast<std::size_t>(nnz_));
      if (!hv_.empty())
        KSPMV_CUDA_CHECK(
            cudaMemcpy(hv_.data(), values, hv_.size() * sizeof(S), cudaMemcpyDeviceToHost));
      csr_order_values = hv_.data();
    }
    current_->update_values(csr_order_values);
    if (best_) best_->update_values(csr_order_values);
    if (candidates_.empty()) return;
    values_.assign(csr_order_values, csr_order_values + host_.nnz());
    host_.val = values_.data();
  }

  Kernel kernel() const override { return current_->block_kernels().front(); }
  Timings timings() const override { return timings_; }

 private:
  // The executor of candidate k (the plain options when not tuning).
  std::unique_ptr<MultiDeviceSpmv<S>> build(std::size_t k) const {
    part::PartitionOptions p = popt_;
    if (k < candidates_.size()) p.d_l = candidates_[k].d_l, p.d_c = candidates_[k].d_c;
    const auto plan = part::partition(host_.row_ptr, host_.m, host_.n, p);
    return std::make_unique<MultiDeviceSpmv<S>>(host_, plan, mopt_);
  }

  // After the trials of the current candidate: keep it if it beats the best so far, then move
  // to the next one; after the last, the best stays and the matrix is let go.
  void tune(double ms) {
    if (++trials_ < kPartitionTuneTrials) return;
    trials_ = 0;
    if (ms < best_ms_) {
      best_ms_ = ms;
      best_ = std::move(current_);
    }
    current_.reset();
    if (++next_ < candidates_.size()) {
      current_ = build(next_);
    } else {
      current_ = std::move(best_);
      candidates_.clear();
      keep_.reset();
      values_ = std::vector<S>();
    }
  }

  CsrPointers<S> host_;  // valid while keep_ holds the matrix (until tuning ends)
  Offset nnz_;
  std::shared_ptr<const void> keep_;
  std::vector<S> values_;  // refreshed values while tuning (host_.val then points here)
  part::PartitionOptions popt_;
  MultiDeviceOptions mopt_;
  std::vector<part::LraParams> candidates_;  // empty: not tuning
  std::size_t next_ = 0;
  int trials_ = 0;
  double best_ms_ = std::numeric_limits<double>::infinity();
  std::unique_ptr<MultiDeviceSpmv<S>> current_, best_;
  std::vector<S> hx_, hy_, hv_;  // apply_device's and update_values' host copies
  Timings timings_;
};

}  // namespace

template <class S>
std::unique_ptr<OperatorImpl<S>> make_multi_operator(const CsrPointers<S>& host,
                                                     std::shared_ptr<const void> keep_alive,
                                                     const Options& options) {
  return std::make_unique<MultiDeviceOperator<S>>(host, std::move(keep_alive), options);
}

template std::unique_ptr<OperatorImpl<float>> make_multi_operator(const CsrPointers<float>&,
                                                                  std::shared_ptr<const void>,
                                                                  const Options&);
template std::unique_ptr<OperatorImpl<double>> make_multi_operator(const CsrPointers<double>&,
                                                                   std::shared_ptr<const void>,
                                                                   const Options&);

}  // namespace kspmv::cuda
