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

namespace kspmv::cuda {

int device_count() {
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess) {
    cudaGetLastError();
    return 0;
  }
  return n;
}

bool kernel_available(Kernel kernel) {
  switch (kernel) {
    case Kernel::Auto:
    case Kernel::CsrVector:
    case Kernel::Cusparse:
    case Kernel::CusparseAlg2:
    case Kernel::Seg:
    case Kernel::SegR:
    case Kernel::PartialOverlap:
    case Kernel::FullOverlap:
    case Kernel::Hbp:
      return true;
    default:
      return false;
  }
}

RowShape row_shape(const Offset* row_ptr, Ordinal m, Offset max_len) {
  RowShape s;
  double squares = 0;
  for (Ordinal i = 0; i < m; ++i) {
    const Offset len = row_ptr[i + 1] - row_ptr[i];
    if (len > max_len) continue;
    s.nnz += len, ++s.rows;
    s.max = std::max(s.max, len);
    squares += static_cast<double>(len) * static_cast<double>(len);
  }
  if (s.rows == 0) return s;
  s.mean = static_cast<double>(s.nnz) / s.rows;
  const double var = std::max(0.0, squares / s.rows - s.mean * s.mean);
  s.cv = s.mean > 0 ? std::sqrt(var) / s.mean : 0;
  return s;
}

Kernel auto_kernel(const RowShape& s, std::size_t value_bytes) {
  if (s.nnz == 0) return Kernel::CsrVector;
  const bool skewed = s.max > 8 * s.mean + 32;  // a few rows far longer than the rest
  Kernel k = Kernel::CsrVector;
  if (s.nnz < kAutoLatencyNnz) {
    if (skewed || s.cv > 1) k = Kernel::Seg;
  } else if (skewed || s.cv > 1) {
    k = Kernel::Cusparse;
  } else if (s.mean < 6 && s.cv < 0.5) {
    k = Kernel::CsrVector;
  } else if (value_bytes < 8) {
    k = Kernel::Cusparse;
  } else if (s.cv < 0.2 && s.mean < 12) {
    k = Kernel::Seg;
  }
  return kernel_available(k) ? k : Kernel::Cusparse;
}

bool reads_host_entries(Kernel kernel) {
  return kernel == Kernel::Seg || kernel == Kernel::SegR || kernel == Kernel::FullOverlap ||
         kernel == Kernel::Hbp;
}

template <class Scalar>
std::unique_ptr<DeviceSpmv<Scalar>> make_device_spmv(Kernel kernel,
                                                     std::shared_ptr<const DeviceCsr<Scalar>> a,
                                                     const CsrPointers<Scalar>& host) {
  switch (kernel) {
    case Kernel::CsrVector:
      return make_csr_vector(std::move(a), host);
    case Kernel::Cusparse:
    case Kernel::CusparseAlg2:
      return make_cusparse(std::move(a), kernel);
    case Kernel::PartialOverlap:
      return make_partial_overlap(std::move(a), host);
    case Kernel::FullOverlap:
      return make_full_overlap(host);
    case Kernel::Seg:
    case Kernel::SegR:
      return make_seg(host, kernel == Kernel::SegR);
    case Kernel::Hbp:
      return make_hbp(std::move(a), host);
    default:
      throw UnsupportedError(std::string("the CUDA backend does not run kernel '") +
                             to_string(kernel) + "'" +
                             (kernel_available(kernel) ? "" : " (not built yet)"));
  }
}

namespace {

using Clock = std::chrono::steady_clock;

double ms_since(Clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

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
    if (streamed) {
      r_->kernels.push_back(make_full_overlap(host));
    } else if (o.kernel == Kernel::Auto && o.autotune) {
      r_->a = std::make_shared<const DeviceCsr<Scalar>>(DeviceCsr<Scalar>::upload(host));
      for (Kernel k : {Kernel::CsrVector, Kernel::Cusparse, Kernel::CusparseAlg2,
                       Kernel::PartialOverlap, Kernel::Seg, Kernel::SegR, Kernel::Hbp}) {
        if (kernel_available(k) && (k != Kernel::Hbp || hbp_worth_timing(host)))
          r_->kernels.push_back(make_device_spmv(k, r_->a, host));
      }
    } else {
      const Kernel k = o.kernel == Kernel::Auto
                           ? auto_kernel(row_shape(host.row_ptr, host.m), sizeof(Scalar))
                           : o.kernel;
      if (k != Kernel::Seg && k != Kernel::SegR)  // segSpMV uploads its own padded layout
        r_->a = std::make_shared<const DeviceCsr<Scalar>>(DeviceCsr<Scalar>::upload(host));
      r_->kernels.push_back(make_device_spmv(k, r_->a, host));
    }
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
  const bool cuda_kernel = k == Kernel::Auto || k == Kernel::CsrVector ||
                           k == Kernel::PartialOverlap || k == Kernel::FullOverlap ||
                           k == Kernel::Seg || k == Kernel::SegR || k == Kernel::Cusparse ||
                           k == Kernel::CusparseAlg2 || k == Kernel::Hbp;
  if (!cuda_kernel) {
    throw UnsupportedError(std::string("the CUDA backend does not run kernel '") + to_string(k) +
                           "' (use backend host)");
  }
  if (!kernel_available(k))
    throw UnsupportedError(std::string("cuda backend: kernel '") + to_string(k) +
                           "' is not built yet");
  const bool streamed = options.residency == Residency::Streamed || k == Kernel::FullOverlap;
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
template std::unique_ptr<DeviceSpmv<float>> make_device_spmv(
    Kernel, std::shared_ptr<const DeviceCsr<float>>, const CsrPointers<float>&);
template std::unique_ptr<DeviceSpmv<double>> make_device_spmv(
    Kernel, std::shared_ptr<const DeviceCsr<double>>, const CsrPointers<double>&);

}  // namespace kspmv::cuda
