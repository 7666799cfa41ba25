// Multi-device Operator of the CUDA backend, its vectors, and its online LRA / LRA+RC tuner.
#include "backends/cuda/multi_operator.hpp"

#include <algorithm>
#include <cstdio>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "backends/cuda/cuda_operator.hpp"
#include "backends/cuda/multi_device.hpp"
#include "kspmv/core/timer.hpp"
#include "partitioners/cost_model.hpp"

namespace kspmv::cuda {

namespace {

std::string candidate_name(const part::LraParams& p) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "d_l=%g,d_c=%g", p.d_l, p.d_c);
  return buf;
}

template <class S>
class MultiDeviceOperator final : public OperatorImpl<S> {
 public:
  MultiDeviceOperator(const CsrPointers<S>& host, std::shared_ptr<const void> keep,
                      const Options& o)
      : nnz_(host.nnz()), keep_(std::move(keep)) {
    const auto t0 = Clock::now();
    if (o.residency == Residency::Streamed)
      throw UnsupportedError("multi-device operator: the matrix is resident on the devices");
    const int count = device_count();
    for (int d : o.devices)
      if (d < 0 || d >= count)
        throw InvalidArgument("cuda backend: device " + std::to_string(d) + " does not exist (" +
                              std::to_string(count) + " CUDA devices)");
    popt_ = {o.partition, static_cast<int>(o.devices.size()), o.d_l, o.d_c, o.chunks};
    mopt_ = {o.exchange, o.devices, o.kernel, o.graphs, o.signals};
    source_ = std::make_shared<MatrixSource<S>>(host, o.devices.front());
    const bool lra = popt_.scheme == part::Scheme::LRA || popt_.scheme == part::Scheme::LRARC;
    if (lra && host.m > 0) popt_.longest_row = source_->longest_row();
    if (lra && o.tune_partition && o.d_l < 0 && o.d_c < 0 && host.m > 0)
      candidates_ = part::tuning_candidates(popt_.scheme, double(host.nnz()) / host.m);
    double plan_ms = 0;
    current_ = build(0, &plan_ms);
    mopt_.exchange = current_->exchange();  // Auto resolved once, for every candidate
    SetupPhases& phases = timings_.setup_phases;
    phases = current_->setup_phases();
    phases.longest_row = source_->longest_row_ms(), phases.plan = plan_ms;
    phases.source = source_->upload_ms();
    timings_.partition_ms = phases.longest_row + phases.plan;
    timings_.upload_ms = phases.source + current_->upload_ms();
    timings_.setup_ms = current_->setup_ms();
    timings_.tune_ms = current_->tune_ms();
    exchange_trials_ = current_->trials();
    if (candidates_.size() > 1) {
      std::vector<std::string> names;
      for (const auto& c : candidates_) names.push_back(candidate_name(c));
      tuner_ = Tuner("partition", names);
    } else {
      end_tuning();
    }
    timings_.preprocess_ms = ms_since(t0);
  }

  void apply_host(S alpha, const S* x, S beta, S* y) override {
    const auto t0 = Clock::now();
    current_->apply(alpha, x, beta, y);
    timings_.total_ms = ms_since(t0);
    const double slowest = collect();
    timings_.h2d_ms = std::max(0.0, timings_.total_ms - slowest);
    tune(slowest);
  }

  // Whole vectors in the memory of devices[0]: out to the devices and back on their streams.
  void apply_device(S alpha, const S* x, S beta, S* y, DeviceStream stream) override {
    current_->apply_gathered(alpha, x, beta, y, stream);
    after_async_apply();
  }

  DistributedVector<S> make_vector(Ordinal, Ordinal) const override {
    end_tuning();
    return current_->make_vector(this);
  }
  void upload(const S* host, std::size_t len, const DistributedVector<S>& v) override {
    if (v.parts() == 1) {  // a vector of the first device alone (CG on Merge)
      DeviceGuard guard(v.part(0).device);
      current_->synchronize();
      copy_to_device(v.data(0), host, len * sizeof(S));
      return;
    }
    current_->upload(host, static_cast<Ordinal>(len), v);
  }
  void download(const DistributedVector<S>& v, std::size_t len, S* host) override {
    if (v.parts() == 1) {
      current_->synchronize();
      copy_to_host(host, v.data(0), len * sizeof(S));
      return;
    }
    current_->download(v, static_cast<Ordinal>(len), host);
  }
  void apply_distributed(S alpha, const DistributedVector<S>& x, S beta,
                         const DistributedVector<S>& y) override {
    if (x.parts() == 1)
      current_->apply_gathered(alpha, x.data(0), beta, y.data(0), current_->stream(0));
    else
      current_->apply(alpha, x, beta, y);
    after_async_apply();
  }

  // Where the exchange leaves y where the next x is needed, CG's vectors stay on every device
  // (AllGather: whole, updated redundantly; Halo, allgather-x: each device its rows); otherwise
  // (Merge) they live on the first device and each SpMV copies x out and y back.
  std::unique_ptr<CgVectors<S>> make_cg_vectors(Ordinal n) override {
    end_tuning();
    if (current_->strategy().iterates_in_place())
      return make_device_cg_vectors(current_->cg_layout(this));
    CgLayout<S> l;
    l.parts = {{current_->device(0), current_->stream(0),
                n > 0 ? std::vector<part::Span>{{0, n}} : std::vector<part::Span>{}}};
    const int home = current_->device(0);
    const auto vector = [this, home, n] {
      DeviceGuard guard(home);
      auto b = std::make_shared<MultiVector<S>>(std::vector<int>{home},
                                                std::vector<std::size_t>{std::size_t(n)});
      return DistributedVector<S>({{home, b->data(0), std::size_t(n)}}, b, this);
    };
    l.x = vector(), l.r = vector(), l.p = vector(), l.q = vector();
    l.vector = vector;
    l.graphs = mopt_.graphs;
    l.upload = [this, n](const S* h, const DistributedVector<S>& v) { upload(h, n, v); };
    l.download = [this, n](const DistributedVector<S>& v, S* h) { download(v, n, h); };
    return make_device_cg_vectors(std::move(l));
  }

  // New values (host, CSR order of the matrix) in the executors alive, the plan and exchange
  // kept. While the partition is tuned, the candidates still to be built take them too, from a
  // copy of them (nnz scalars, freed when tuning ends): the caller's matrix keeps its values.
  void update_values(const S* values, bool device) override {
    const S* csr_order_values = values;
    if (device) {  // the executors take host values
      hv_.resize(static_cast<std::size_t>(nnz_));
      if (!hv_.empty()) copy_to_host(hv_.data(), values, hv_.size() * sizeof(S));
      csr_order_values = hv_.data();
    }
    current_->update_values(csr_order_values);
    if (best_) best_->update_values(csr_order_values);
    if (!source_) return;
    values_.assign(csr_order_values, csr_order_values + nnz_);
    source_->set_values(values_.data());
  }

  void synchronize() override { current_->synchronize(); }

  std::vector<PartInfo> parts(int runs) override {
    std::vector<double> ms = runs > 0 ? current_->time_blocks(runs)
                                      : std::vector<double>(current_->plan().blocks.size(), 0.0);
    const auto kernels = current_->block_kernels();
    std::vector<PartInfo> out;
    for (std::size_t p = 0; p < kernels.size(); ++p) {
      const part::Block& b = current_->plan().blocks[p];
      out.push_back({b.device, b.stream_slot, b.row_begin, b.row_end, b.nnz_begin, b.nnz_end,
                     b.role == part::Role::Redundant, kernels[p], ms[p]});
    }
    return out;
  }
  Prediction predict(const std::vector<double>& part_ms, double peer_gbps,
                     double device_gbps) const override {
    return part::predict(current_->strategy(), part_ms, sizeof(S), peer_gbps, device_gbps);
  }

  Kernel kernel() const override { return current_->block_kernels().front(); }
  Timings timings() const override {
    if (pending_) {
      collect();
      pending_ = false;
    }
    Timings t = timings_;
    t.trials = exchange_trials_;
    const auto partition = tuner_.size() > 0 ? partition_trials() : std::vector<TuneTrial>{};
    t.trials.insert(t.trials.end(), partition.begin(), partition.end());
    t.tuning = source_ != nullptr;
    t.exchange_bytes = current_->exchange_bytes();
    t.replayed = current_->replayed();
    t.signalled = current_->signalled();
    t.replay_note = current_->replay_note();
    return t;
  }

 private:
  // The executor of candidate k (the plain options when not tuning); adds its plan's time.
  std::unique_ptr<MultiDeviceSpmv<S>> build(std::size_t k, double* plan_ms) const {
    part::PartitionOptions p = popt_;
    if (k < candidates_.size()) p.d_l = candidates_[k].d_l, p.d_c = candidates_[k].d_c;
    const auto t0 = Clock::now();
    const CsrPointers<S>& host = source_->host();
    const auto plan = part::partition(host.row_ptr, host.m, host.n, p);
    if (plan_ms) *plan_ms += ms_since(t0);
    return std::make_unique<MultiDeviceSpmv<S>>(source_, plan, mopt_);
  }

  // The last apply's times per device; returns the slowest device's total.
  double collect() const {
    timings_.devices = current_->timings();
    double slowest = 0;
    timings_.kernel_ms = timings_.exchange_ms = 0;
    for (const auto& t : timings_.devices) {
      timings_.kernel_ms = std::max(timings_.kernel_ms, t.kernel_ms);
      timings_.exchange_ms = std::max(timings_.exchange_ms, t.exchange_ms);
      slowest = std::max(slowest, t.total_ms);
    }
    return slowest;
  }

  void after_async_apply() {
    timings_.h2d_ms = 0;
    if (!source_) {
      pending_ = true;
      return;
    }
    const double slowest = collect();  // while tuning, every apply is timed
    timings_.total_ms = slowest;
    tune(slowest);
  }

  std::vector<TuneTrial> partition_trials() const {
    auto t = tuner_.trials();
    if (!tuner_.done())
      for (std::size_t k = 0; k < t.size(); ++k) t[k].kept = !source_ && k == kept_;
    return t;
  }

  // The partition tuner's bookkeeping after an apply of the current candidate.
  void tune(double ms) {
    if (!source_ || tuner_.done()) return;
    const std::size_t k = tuner_.current();
    tuner_.record(ms);
    if (tuner_.current() == k && !tuner_.done()) return;
    const double median = tuner_.trials()[k].median_ms;  // candidate k has run
    if (!best_ || median < best_ms_) {
      best_ms_ = median, kept_ = k;
      best_ = std::move(current_);
    }
    current_.reset();
    if (!tuner_.done()) {
      current_ = build(tuner_.current(), nullptr);
      return;
    }
    current_ = std::move(best_);
    end_tuning();
  }

  // Tuning stops: the best candidate that ran (else the current one) stays; the matrix is let go.
  void end_tuning() const {
    if (!source_) return;
    if (best_) {
      current_ = std::move(best_);
    } else if (tuner_.size() > 0) {
      kept_ = tuner_.current();
    }
    source_.reset();
    keep_.reset();
    values_ = std::vector<S>();
  }

  Offset nnz_;
  // What tuning needs until it ends (then released): the caller's matrix, its refreshed values
  // and its row pointer on the first device.
  mutable std::shared_ptr<const void> keep_;
  mutable std::vector<S> values_;
  mutable std::shared_ptr<MatrixSource<S>> source_;
  part::PartitionOptions popt_;
  MultiDeviceOptions mopt_;
  std::vector<part::LraParams> candidates_;  // empty: not tuning
  Tuner tuner_;
  mutable std::size_t kept_ = 0;
  double best_ms_ = std::numeric_limits<double>::infinity();
  mutable std::unique_ptr<MultiDeviceSpmv<S>> current_, best_;
  std::vector<TuneTrial> exchange_trials_;
  std::vector<S> hv_;  // update_values' host copy of device values
  mutable Timings timings_;
  mutable bool pending_ = false;  // an apply on the devices' streams has not been timed yet
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
