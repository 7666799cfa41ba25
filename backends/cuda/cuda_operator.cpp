// The CUDA backend behind kspmv::Operator: kernel choice, upload, staging of host vectors,
// event timing and the autotuner of Kernel::Auto.
#include "backends/cuda/cuda_operator.hpp"

#include <cuda_runtime_api.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "backends/cuda/csr_vector.hpp"
#include "backends/cuda/cusparse_spmv.hpp"
#include "backends/cuda/full_overlap.hpp"
#include "backends/cuda/hbp_spmv.hpp"
#include "backends/cuda/partial_overlap.hpp"
#include "backends/cuda/seg_spmv.hpp"
#include "kspmv/analysis/kernel_choice.hpp"
#include "kspmv/core/timer.hpp"

namespace kspmv::cuda {

int device_count() {
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess) {
    cudaGetLastError();
    return 0;
  }
  return n;
}

namespace {

constexpr KernelInfo info(Kernel k, Residency residency, bool reads_host_entries, bool autotune,
                          const char* summary) {
  return {k,         Backend::Cuda,
          residency, reads_host_entries,
          autotune,  residency == Residency::Resident,
          summary};
}
constexpr auto kResident = Residency::Resident;

}  // namespace

template <class S>
const std::vector<KernelRow<S>>& kernel_table() {
  using A = std::shared_ptr<const DeviceCsr<S>>;
  using H = CsrPointers<S>;
  static const std::vector<KernelRow<S>> rows = {
      {info(Kernel::CsrVector, kResident, false, true, "CSR-Vector, 1-32 lanes per row"), true,
       [](A a, const H& h) { return make_csr_vector(std::move(a), h); }},
      {info(Kernel::Cusparse, kResident, false, true, "cusparseSpMV, CSR_ALG1"), true,
       [](A a, const H&) { return make_cusparse(std::move(a), Kernel::Cusparse); }},
      {info(Kernel::CusparseAlg2, kResident, false, true, "cusparseSpMV, CSR_ALG2"), true,
       [](A a, const H&) { return make_cusparse(std::move(a), Kernel::CusparseAlg2); }},
      {info(Kernel::PartialOverlap, kResident, false, true,
            "CSR-Partial-Overlap: memcpy_async batches (paper 4)"),
       true, [](A a, const H& h) { return make_partial_overlap(std::move(a), h); }},
      {info(Kernel::FullOverlap, Residency::Streamed, true, false,
            "CSR-Full-Overlap: the matrix streamed from host memory (paper 4)"),
       false, [](A, const H& h) { return make_full_overlap(h); }},
      {info(Kernel::Seg, kResident, true, true, "segSpMV (paper 5)"), false,
       [](A, const H& h) { return make_seg(h, false); }},
      {info(Kernel::SegR, kResident, true, true, "segSpMV-r, tree-reduced segments (paper 5)"),
       false, [](A, const H& h) { return make_seg(h, true); }},
      {info(Kernel::Hbp, kResident, true, true, "hash-based 2D partition (HBP, paper 3)"), true,
       [](A a, const H& h) { return make_hbp(std::move(a), h); },
       [](const H& h) { return hbp_worth_timing(h); }},
  };
  return rows;
}

template <class S>
const KernelRow<S>& kernel_row(Kernel kernel) {
  for (const auto& row : kernel_table<S>())
    if (row.info.kernel == kernel) return row;
  throw UnsupportedError(std::string("the CUDA backend does not run kernel '") + to_string(kernel) +
                         "'");
}

template <class S>
std::unique_ptr<DeviceSpmv<S>> make_device_spmv(Kernel kernel,
                                                std::shared_ptr<const DeviceCsr<S>> a,
                                                const CsrPointers<S>& host) {
  return kernel_row<S>(kernel).make(std::move(a), host);
}

namespace {

int checked_device(const Options& o) {
  if (o.devices.empty()) throw InvalidArgument("cuda backend: options.devices is empty");
  if (o.devices.size() > 1)
    throw UnsupportedError("cuda backend: this operator drives one device; " +
                           std::to_string(o.devices.size()) + " were given");
  const int d = o.devices[0];
  const int count = device_count();
  if (d < 0 || d >= count) {
    throw InvalidArgument("cuda backend: device " + std::to_string(d) + " does not exist (" +
                          std::to_string(count) + " CUDA devices)");
  }
  return d;
}

// Throws InvalidArgument unless p (when needed) is memory the kernels may read on `device`.
void check_device_pointer(const void* p, int device, const char* name) {
  if (p == nullptr) return;  // empty extent, checked by the caller
  cudaPointerAttributes at{};
  const cudaError_t code = cudaPointerGetAttributes(&at, p);
  if (code != cudaSuccess) cudaGetLastError();
  const bool ok =
      code == cudaSuccess && ((at.type == cudaMemoryTypeDevice && at.device == device) ||
                              at.type == cudaMemoryTypeManaged);
  if (!ok) {
    throw InvalidArgument(std::string("apply on device pointers: ") + name +
                          " is not device memory of CUDA device " + std::to_string(device));
  }
}

// Everything that lives on the operator's device, created and freed with that device current.
template <class Scalar>
struct Resources {
  Stream stream;
  Event start, copied, done, ready{false};
  std::shared_ptr<const DeviceCsr<Scalar>> a;
  std::vector<std::unique_ptr<DeviceSpmv<Scalar>>> kernels;  // one, or the autotune candidates
  DeviceBuffer<Scalar> x, y;                                 // apply_host staging, on first use
};

// Resident: the matrix is uploaded once (DeviceCsr shared by the kernels). Streamed: it stays on
// the host and CSR-Full-Overlap sends it on every apply (no DeviceCsr).
template <class Scalar>
class DeviceOperator final : public OperatorImpl<Scalar> {
 public:
  DeviceOperator(int device, const CsrPointers<Scalar>& host, const Options& o, bool streamed)
      : device_(device), m_(host.m), n_(host.n) {
    const auto t0 = Clock::now();
    DeviceGuard guard(device_);
    r_ = std::make_unique<Resources<Scalar>>();
    std::vector<const KernelRow<Scalar>*> chosen;
    if (streamed) {
      chosen.push_back(&kernel_row<Scalar>(Kernel::FullOverlap));
    } else if (o.kernel == Kernel::Auto && o.autotune) {
      for (const auto& row : kernel_table<Scalar>())
        if (row.info.autotune && (!row.worth_timing || row.worth_timing(host)))
          chosen.push_back(&row);
    } else {
      const Kernel k = o.kernel == Kernel::Auto
                           ? analysis::auto_kernel(
                                 analysis::row_stats(host.row_ptr, host.m, host.n), sizeof(Scalar))
                           : o.kernel;
      chosen.push_back(&kernel_row<Scalar>(k));
    }
    if (std::any_of(chosen.begin(), chosen.end(), [](auto* row) { return row->uses_device_csr; }))
      r_->a = std::make_shared<const DeviceCsr<Scalar>>(DeviceCsr<Scalar>::upload(host));
    for (const auto* row : chosen)
      r_->kernels.push_back(row->make(row->uses_device_csr ? r_->a : nullptr, host));
    best_ms_.assign(r_->kernels.size(), std::numeric_limits<float>::infinity());
    kernel_ = r_->kernels.front()->kernel();
    KSPMV_CUDA_CHECK(cudaDeviceSynchronize());
    timings_.preprocess_ms = ms_since(t0);
  }
  ~DeviceOperator() override {
    int previous = 0;
    const bool switched =
        cudaGetDevice(&previous) == cudaSuccess && cudaSetDevice(device_) == cudaSuccess;
    r_.reset();
    if (switched) cudaSetDevice(previous);
  }

  void apply_host(Scalar alpha, const Scalar* x, Scalar beta, Scalar* y) override {
    const auto t0 = Clock::now();
    DeviceGuard guard(device_);
    Resources<Scalar>& r = *r_;
    if (r.x.size() < static_cast<std::size_t>(n_)) r.x = DeviceBuffer<Scalar>(n_);
    if (r.y.size() < static_cast<std::size_t>(m_)) r.y = DeviceBuffer<Scalar>(m_);
    const cudaStream_t s = r.stream.get();
    r.start.record(s);
    if (n_ > 0 && alpha != Scalar(0))
      KSPMV_CUDA_CHECK(cudaMemcpyAsync(r.x.data(), x, r.x.bytes(), cudaMemcpyHostToDevice, s));
    if (m_ > 0 && beta != Scalar(0))
      KSPMV_CUDA_CHECK(cudaMemcpyAsync(r.y.data(), y, r.y.bytes(), cudaMemcpyHostToDevice, s));
    r.copied.record(s);
    const std::size_t k = pick();
    r.kernels[k]->run(alpha, r.x.data(), beta, r.y.data(), s);
    r.done.record(s);
    if (m_ > 0)
      KSPMV_CUDA_CHECK(cudaMemcpyAsync(y, r.y.data(), r.y.bytes(), cudaMemcpyDeviceToHost, s));
    r.stream.synchronize();
    timings_.h2d_ms = r.copied.elapsed_since(r.start);
    timings_.kernel_ms = r.done.elapsed_since(r.copied);
    timings_.total_ms = ms_since(t0);
    record(k, static_cast<float>(timings_.kernel_ms));
  }

  void apply_device(Scalar alpha, const Scalar* x, Scalar beta, Scalar* y) override {
    const auto t0 = Clock::now();
    DeviceGuard guard(device_);
    if (n_ > 0) check_device_pointer(x, device_, "x");
    if (m_ > 0) check_device_pointer(y, device_, "y");
    Resources<Scalar>& r = *r_;
    const cudaStream_t s = r.stream.get();
    // x and y may come from work on the legacy default stream: order after it.
    r.ready.record(cudaStreamLegacy);
    KSPMV_CUDA_CHECK(cudaStreamWaitEvent(s, r.ready.get(), 0));
    r.start.record(s);
    const std::size_t k = pick();
    r.kernels[k]->run(alpha, x, beta, y, s);
    r.done.record(s);
    r.stream.synchronize();
    timings_.h2d_ms = 0;
    timings_.kernel_ms = r.done.elapsed_since(r.start);
    timings_.total_ms = ms_since(t0);
    record(k, static_cast<float>(timings_.kernel_ms));
  }

  Kernel kernel() const override { return kernel_; }
  Timings timings() const override { return timings_; }

 private:
  // The kernel of this call: round robin over the candidates while autotuning.
  std::size_t pick() const { return r_->kernels.size() > 1 ? calls_ % r_->kernels.size() : 0; }

  // Autotune bookkeeping: after kAutotuneTrials calls of every candidate, keep the fastest.
  void record(std::size_t k, float ms) {
    kernel_ = r_->kernels[k]->kernel();
    if (r_->kernels.size() == 1) return;
    best_ms_[k] = std::min(best_ms_[k], ms);
    if (++calls_ < kAutotuneTrials * r_->kernels.size()) return;
    const auto best = std::min_element(best_ms_.begin(), best_ms_.end()) - best_ms_.begin();
    auto keep = std::move(r_->kernels[best]);
    r_->kernels.clear();  // the stream is idle: apply synchronized it
    r_->a.reset();        // the kept kernel holds the uploaded matrix if it runs on it
    r_->kernels.push_back(std::move(keep));
    kernel_ = r_->kernels.front()->kernel();
  }

  int device_;
  Ordinal m_, n_;
  std::unique_ptr<Resources<Scalar>> r_;
  std::vector<float> best_ms_;
  std::size_t calls_ = 0;
  Kernel kernel_ = Kernel::Auto;
  Timings timings_;
};

}  // namespace

template <class Scalar>
std::unique_ptr<OperatorImpl<Scalar>> make_operator(const CsrPointers<Scalar>& host_matrix,
                                                    const Options& options) {
  const Kernel k = options.kernel;
  const bool streamed =
      options.residency == Residency::Streamed ||
      (k != Kernel::Auto && kernel_row<Scalar>(k).info.residency == Residency::Streamed);
  if (streamed && k != Kernel::Auto && k != Kernel::FullOverlap) {
    throw UnsupportedError(
        std::string("cuda backend: streamed residency runs full-overlap, not '") + to_string(k) +
        "'");
  }
  const int device = checked_device(options);
  return std::make_unique<DeviceOperator<Scalar>>(device, host_matrix, options, streamed);
}

template std::unique_ptr<OperatorImpl<float>> make_operator(const CsrPointers<float>&,
                                                            const Options&);
template std::unique_ptr<OperatorImpl<double>> make_operator(const CsrPointers<double>&,
                                                             const Options&);
template const std::vector<KernelRow<float>>& kernel_table();
template const std::vector<KernelRow<double>>& kernel_table();
template const KernelRow<float>& kernel_row(Kernel);
template const KernelRow<double>& kernel_row(Kernel);
template std::unique_ptr<DeviceSpmv<float>> make_device_spmv(
    Kernel, std::shared_ptr<const DeviceCsr<float>>, const CsrPointers<float>&);
template std::unique_ptr<DeviceSpmv<double>> make_device_spmv(
    Kernel, std::shared_ptr<const DeviceCsr<double>>, const CsrPointers<double>&);

}  // namespace kspmv::cuda
