// The CUDA backend behind kspmv::Operator: kernel choice, upload, staging of host vectors,
// event timing and the autotuner of Kernel::Auto.
#include "backends/cuda/cuda_operator.hpp"

#include <cuda_runtime_api.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <limits>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "backends/cuda/bfs_order.hpp"
#include "backends/cuda/cg_vectors.hpp"
#include "backends/cuda/complex.hpp"
#include "backends/cuda/csr_vector.hpp"
#include "backends/cuda/cusparse_spmv.hpp"
#include "backends/cuda/device_arrays.hpp"
#include "backends/cuda/full_overlap.hpp"
#include "backends/cuda/hbp_spmv.hpp"
#include "backends/cuda/multi_vector.hpp"
#include "backends/cuda/nvtx.hpp"
#include "backends/cuda/partial_overlap.hpp"
#include "backends/cuda/seg_spmv.hpp"
#include "backends/cuda/spmm.hpp"
#include "backends/cuda/stripes.hpp"
#include "backends/cuda/transpose.hpp"
#include "kspmv/analysis/kernel_choice.hpp"
#include "kspmv/analysis/locality.hpp"
#include "kspmv/core/timer.hpp"
#include "kspmv/core/tuner.hpp"

namespace kspmv::cuda {

int device_count() {
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess) {
    cudaGetLastError();
    return 0;
  }
  return n;
}

double peak_bandwidth_gbps(int device) {
  int khz = 0, bits = 0;
  if (cudaDeviceGetAttribute(&khz, cudaDevAttrMemoryClockRate, device) != cudaSuccess ||
      cudaDeviceGetAttribute(&bits, cudaDevAttrGlobalMemoryBusWidth, device) != cudaSuccess) {
    cudaGetLastError();
    return 0;
  }
  return 2.0 * khz * 1e3 * (bits / 8.0) / 1e9;  // double data rate
}

std::size_t l2_cache_bytes(int device) {
  int bytes = 0;
  if (cudaDeviceGetAttribute(&bytes, cudaDevAttrL2CacheSize, device) != cudaSuccess) {
    cudaGetLastError();
    return 0;
  }
  return static_cast<std::size_t>(std::max(bytes, 0));
}

namespace {

constexpr KernelInfo info(Kernel k, Residency residency, bool reads_host_entries, bool autotune,
                          const char* summary, bool complex_values = false) {
  return {k,         Backend::Cuda,
          residency, reads_host_entries,
          autotune,  residency == Residency::Resident,
          summary,   complex_values};
}
constexpr auto kResident = Residency::Resident;

// The rows of CSR-Vector and the cuSPARSE kernels, in the tables of real and complex values.
template <class S>
KernelRow<S> csr_vector_row() {
  using A = std::shared_ptr<const DeviceCsr<S>>;
  return {info(Kernel::CsrVector, kResident, false, true, "CSR-Vector, 1-32 lanes per row", true),
          true,
          [](A a, const CsrPointers<S>& h) { return make_csr_vector(std::move(a), h); },
          nullptr,
          [](A a, const DevicePlanInput& in) { return make_csr_vector(std::move(a), in); },
          [](A a, const CsrPointers<S>& h, cudaStream_t s) {
            return make_csr_vector(std::move(a), h, {}, s);
          }};
}
template <class S, Kernel K>
KernelRow<S> cusparse_row(const char* summary) {
  using A = std::shared_ptr<const DeviceCsr<S>>;
  return {info(K, kResident, false, true, summary, true),
          true,
          [](A a, const CsrPointers<S>&) { return make_cusparse(std::move(a), K); },
          nullptr,
          [](A a, const DevicePlanInput& in) {
            return make_cusparse(std::move(a), K, in.scratch, in.stream);
          },
          [](A a, const CsrPointers<S>&, cudaStream_t s) {
            return make_cusparse(std::move(a), K, nullptr, s);
          }};
}

// The rows that take complex values as well.
template <class S>
std::vector<KernelRow<S>> complex_rows() {
  return {csr_vector_row<S>(), cusparse_row<S, Kernel::Cusparse>("cusparseSpMV, CSR_ALG1"),
          cusparse_row<S, Kernel::CusparseAlg2>("cusparseSpMV, CSR_ALG2")};
}

// The full table of real values.
template <class S>
std::vector<KernelRow<S>> real_rows() {
  using A = std::shared_ptr<const DeviceCsr<S>>;
  using H = CsrPointers<S>;
  std::vector<KernelRow<S>> rows = complex_rows<S>();
  rows.insert(
      rows.end(),
      {
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
      });
  return rows;
}

// The row of `kernel`, or nullptr where the table of S has none.
template <class S>
const KernelRow<S>* find_row(Kernel kernel) {
  for (const auto& row : kernel_table<S>())
    if (row.info.kernel == kernel) return &row;
  return nullptr;
}

}  // namespace

// Complex values: the rows that take them alone.
template <class S>
const std::vector<KernelRow<S>>& kernel_table() {
  static const std::vector<KernelRow<S>> rows = [] {
    if constexpr (is_complex_v<S>)
      return complex_rows<S>();
    else
      return real_rows<S>();
  }();
  return rows;
}

template <class S>
const KernelRow<S>& kernel_row(Kernel kernel) {
  if (const KernelRow<S>* row = find_row<S>(kernel)) return *row;
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

// x_sectors: DevicePlanInput::x_sectors (negative where not counted).
template <class Scalar>
std::unique_ptr<OperatorImpl<Scalar>> from_device(int device, std::shared_ptr<DeviceCsr<Scalar>> a,
                                                  const Options& options, cudaStream_t stream,
                                                  double x_sectors = -1);

// Everything that lives on the operator's device, created and freed with that device current.
template <class Scalar>
struct Resources {
  Stream stream;  // apply_host and update_values
  Event start, copied, done;
  Event ready{false};    // the end of an untimed apply on a caller's stream (no timestamp)
  Event ordered{false};  // the end of the set-up's, or the last update_values', device work
  std::shared_ptr<DeviceCsr<Scalar>> a;  // the resident CSR (null for kernels of their own layout)
  std::vector<std::unique_ptr<DeviceSpmv<Scalar>>> kernels;  // one, or the autotune candidates
  DeviceBuffer<Scalar> x, y;                                 // apply_host staging, on first use
  DeviceBuffer<Scalar> values;  // update_values staging without a resident CSR, on first use
  std::unique_ptr<CsrSpmm<Scalar>> spmm;  // k-vector applies on the resident CSR, on first use
};

// The matrix a DeviceOperator is built from: host arrays (uploaded for the kernels that run on
// the CSR), or a CSR already on the device with its row pointer read back for planning, or with
// the row profile computed there (`plan`: nothing of the matrix on the host).
template <class Scalar>
struct Source {
  CsrPointers<Scalar> host;  // row_ptr unless planned on the device; col and val unless device-only
  std::shared_ptr<DeviceCsr<Scalar>> a;   // set when the matrix arrived on the device
  const DevicePlanInput* plan = nullptr;  // kernels with a device factory plan from it
  std::shared_ptr<const void> keep;       // owns the host arrays (a streamed matrix reads them)
};

// Where the matrix lives: resident, or streamed through a ring (`stream`); the matrix's sizes and
// what the device gives, for messages.
struct Placement {
  bool streamed = false;
  StreamConfig stream;
  std::string matrix, budget;
};

// Resident: the matrix is uploaded once (DeviceCsr shared by the kernels). Streamed: it stays on
// the host and CSR-Full-Overlap sends it on every apply (no DeviceCsr).
template <class Scalar>
class DeviceOperator final : public OperatorImpl<Scalar> {
 public:
  // The set-up's device work goes on `setup` (see make_operator) and is left running there: every
  // apply and update_values is ordered after it (`ordered`).
  DeviceOperator(int device, const Source<Scalar>& src, const Options& o,
                 const Placement& placement, cudaStream_t setup)
      : device_(device),
        m_(src.host.m),
        n_(src.host.n),
        nnz_(src.plan         ? src.a->nnz
             : src.host.m > 0 ? src.host.row_ptr[src.host.m]
                              : 0),
        device_sourced_(src.a != nullptr),
        streamed_(placement.streamed),
        options_(o),
        keep_(src.keep) {
    const auto t0 = Clock::now();
    DeviceGuard guard(device_);
    r_ = std::make_unique<Resources<Scalar>>();
    r_->a = src.a;
    const CsrPointers<Scalar>& host = src.host;
    const bool device_only = src.a && host.col == nullptr;  // the entries are on the device only
    std::vector<const KernelRow<Scalar>*> chosen;
    std::optional<Phase> phase;
    phase.emplace("kspmv::setup::analysis");
    if (streamed_) {
      if constexpr (!is_complex_v<Scalar>)  // make_operator keeps complex values resident
        r_->kernels.push_back(make_full_overlap(host, {}, placement.stream));
    } else if (o.kernel == Kernel::Auto && o.autotune) {
      for (const auto& row : kernel_table<Scalar>())
        if (row.info.autotune && !(device_only && row.info.reads_host_entries) &&
            (!row.worth_timing || row.worth_timing(host)))
          chosen.push_back(&row);
    } else {
      Kernel k = o.kernel;
      if (k == Kernel::Auto) {
        k = analysis::auto_kernel(
            src.plan ? src.plan->profile.all : analysis::row_stats(host.row_ptr, host.m, host.n),
            sizeof(Scalar));
        // A matrix that arrived on the device stays there: CSR-Vector rather than a kernel that
        // preprocesses the entries on the host (or, planned on the device, one that plans on
        // the host); so do complex values where the rule names a kernel without them.
        const KernelRow<Scalar>* row = find_row<Scalar>(k);
        if (!row || (device_only && row->info.reads_host_entries) ||
            (src.plan && !row->make_on_device))
          k = Kernel::CsrVector;
      }
      chosen.push_back(&kernel_row<Scalar>(k));
    }
    // Reorder::Stripes: each kernel over the stripes (stripes.hpp), Auto's chosen per stripe;
    // the whole matrix is not uploaded.
    const bool stripes = o.reorder == Reorder::Stripes && !streamed_;
    if (stripes && (device_only || is_complex_v<Scalar>))
      throw UnsupportedError("reorder stripes: real values of a matrix given on the host");
    const bool any_csr = !stripes && std::any_of(chosen.begin(), chosen.end(),
                                                 [](auto* row) { return row->uses_device_csr; });
    // A CSR uploaded beforehand from the host matrix (Reorder::Bfs's A, not reordered) that no
    // kernel runs on goes: the host copy serves the transpose.
    if (!any_csr && src.a && src.keep) r_->a.reset();
    const auto t_upload = Clock::now();
    phase.reset();
    phase.emplace("kspmv::setup::upload");
    const auto upload = [&] {
      r_->a = std::make_shared<DeviceCsr<Scalar>>(setup ? DeviceCsr<Scalar>::upload_on(host, setup)
                                                        : DeviceCsr<Scalar>::upload(host));
    };
    if (any_csr && !r_->a) upload();
    timings_.upload_ms = ms_since(t_upload);
    phase.reset();
    phase.emplace("kspmv::setup::kernels");
    std::vector<std::string> names;
    bool landed = !setup;  // the set-up's work on `setup` so far has finished
    const auto make = [&](const KernelRow<Scalar>& row) {
      if constexpr (!is_complex_v<Scalar>) {
        if (stripes) {
          const bool per_stripe = o.kernel == Kernel::Auto && !o.autotune;
          const Ordinal width =
              analysis::stripe_columns(l2_cache_bytes(device_), sizeof(Scalar), o.stripe_columns);
          r_->kernels.push_back(
              make_striped<Scalar>(per_stripe ? Kernel::Auto : row.info.kernel, host, width));
          names.push_back(to_string(row.info.kernel));
          return;
        }
      }
      if (src.plan) {
        r_->kernels.push_back(row.make_on_device(r_->a, *src.plan));
      } else if (setup && row.make_on_stream) {
        r_->kernels.push_back(row.make_on_stream(r_->a, host, setup));
      } else {
        // A factory that plans on the host and uploads synchronously reads the CSR uploaded on
        // `setup`: the host waits for that stream (not the device) first.
        if (!landed) KSPMV_CUDA_CHECK(cudaStreamSynchronize(setup));
        landed = true;
        r_->kernels.push_back(row.make(row.uses_device_csr ? r_->a : nullptr, host));
      }
      names.push_back(to_string(row.info.kernel));
    };
    for (const auto* row : chosen) {
      try {
        make(*row);
      } catch (const UnsupportedError&) {
        // Kernel::Auto passes over a kernel that does not take the matrix (cuSPARSE 13.0 runs
        // no CSR of 2.1e9 non-zeros); an explicit kernel says so.
        if (o.kernel != Kernel::Auto) throw;
      }
    }
    if (r_->kernels.empty()) {  // CSR-Vector takes every CSR
      if (!r_->a && !stripes) upload();
      make(kernel_row<Scalar>(Kernel::CsrVector));
    }
    // Interleaved: every candidate is alive; the first calls follow a long host set-up (seg's
    // and HBP's formats), while the device's clocks may still be low.
    if (names.size() > 1)
      tuner_ = Tuner("kernel", names, kTuneWarmup, kTuneRuns, Tuner::Order::Interleaved);
    kernel_ = r_->kernels.front()->kernel();
    // No wait for the device: the factories' own work is complete or queued on `setup` (see
    // DeviceSpmv), and every later use of the matrix on another stream waits for this event.
    r_->ordered.record(setup);
    ordered_pending_ = true;
    timings_.preprocess_ms = ms_since(t0);
    timings_.setup_ms = timings_.preprocess_ms - timings_.upload_ms;
  }
  ~DeviceOperator() override {
    on_device_noexcept(device_, [&] { r_.reset(); });
  }

  void apply_host(Scalar alpha, const Scalar* x, Scalar beta, Scalar* y) override {
    const auto t0 = Clock::now();
    const NvtxRange range("kspmv::apply");
    DeviceGuard guard(device_);
    Resources<Scalar>& r = *r_;
    const std::size_t m = m_, n = n_;
    if (r.x.size() < n) r.x = DeviceBuffer<Scalar>(n);
    if (r.y.size() < m) r.y = DeviceBuffer<Scalar>(m);
    // The copies move the caller's n and m entries, not the staging buffers' sizes: those grow
    // to k vectors in apply_host_block and stay so.
    const std::size_t x_bytes = n * sizeof(Scalar), y_bytes = m * sizeof(Scalar);
    const cudaStream_t s = r.stream.get();
    after_last_apply(s);
    after_ordered(s);
    r.start.record(s);
    if (n > 0 && alpha != Scalar(0))
      KSPMV_CUDA_CHECK(cudaMemcpyAsync(r.x.data(), x, x_bytes, cudaMemcpyHostToDevice, s));
    if (m > 0 && beta != Scalar(0))
      KSPMV_CUDA_CHECK(cudaMemcpyAsync(r.y.data(), y, y_bytes, cudaMemcpyHostToDevice, s));
    r.copied.record(s);
    const std::size_t k = pick();
    r.kernels[k]->run(alpha, r.x.data(), beta, r.y.data(), s);
    r.done.record(s);
    if (m > 0) KSPMV_CUDA_CHECK(cudaMemcpyAsync(y, r.y.data(), y_bytes, cudaMemcpyDeviceToHost, s));
    r.stream.synchronize();
    pending_ = false;
    timings_.h2d_ms = r.copied.elapsed_since(r.start);
    timings_.kernel_ms = r.done.elapsed_since(r.copied);
    timings_.total_ms = ms_since(t0);
    record(k, static_cast<float>(timings_.kernel_ms));
  }

  // Enqueued on `stream` and left running: timings() and synchronize() wait for it. A stream
  // being captured into a CUDA graph gets the kernels alone (no events to time them).
  void apply_device(Scalar alpha, const Scalar* x, Scalar beta, Scalar* y,
                    DeviceStream stream) override {
    DeviceGuard guard(device_);
    check_vectors(x, y);
    enqueue(stream, [&](std::size_t k) { r_->kernels[k]->run(alpha, x, beta, y, stream); });
  }

  // k vectors: one pass over the resident CSR per 8 vectors (CsrSpmm); kernels of a layout of
  // their own run once per vector.
  void apply_device_block(Scalar alpha, const Scalar* x, std::size_t ldx, Scalar beta, Scalar* y,
                          std::size_t ldy, int k, DeviceStream stream) override {
    run_block(alpha, x, ldx, beta, y, ldy, k, stream, false);
  }

  // Host blocks go through device buffers of k vectors and the device path.
  void apply_host_block(Scalar alpha, const Scalar* x, std::size_t ldx, Scalar beta, Scalar* y,
                        std::size_t ldy, int k) override {
    const auto t0 = Clock::now();
    DeviceGuard guard(device_);
    Resources<Scalar>& r = *r_;
    const std::size_t m = m_, n = n_, cols = static_cast<std::size_t>(k);
    if (r.x.size() < n * cols) r.x = DeviceBuffer<Scalar>(n * cols);
    if (r.y.size() < m * cols) r.y = DeviceBuffer<Scalar>(m * cols);
    const cudaStream_t s = r.stream.get();
    after_last_apply(s);
    after_ordered(s);
    const auto put = [&](Scalar* dst, const Scalar* src, std::size_t rows, std::size_t ld) {
      KSPMV_CUDA_CHECK(cudaMemcpy2DAsync(dst, rows * sizeof(Scalar), src, ld * sizeof(Scalar),
                                         rows * sizeof(Scalar), cols, cudaMemcpyHostToDevice, s));
    };
    if (n > 0 && alpha != Scalar(0)) put(r.x.data(), x, n, ldx);
    if (m > 0 && beta != Scalar(0)) put(r.y.data(), y, m, ldy);
    checked_x_ = r.x.data(), checked_y_ = r.y.data();  // the operator's own buffers
    run_block(alpha, r.x.data(), n, beta, r.y.data(), m, k, s, true);
    if (m > 0)
      KSPMV_CUDA_CHECK(cudaMemcpy2DAsync(y, ldy * sizeof(Scalar), r.y.data(), m * sizeof(Scalar),
                                         m * sizeof(Scalar), cols, cudaMemcpyDeviceToHost, s));
    r.stream.synchronize();
    timings();  // the kernels' time, from the events of the device path
    timings_.total_ms = ms_since(t0);
  }

  // On the operator's own stream, after its last apply; returns when the operator holds them.
  void update_values(const Scalar* values, bool device) override {
    DeviceGuard guard(device_);
    enqueue_values(values, device, r_->stream.get());
    r_->stream.synchronize();
  }
  // Enqueued on `stream` without waiting (the first call of a kernel with a layout of its own
  // may allocate and upload its gather's plan: DeviceSpmv::update_values). Host values are read
  // there: pageable ones are staged before the call returns, page-locked ones must stay until
  // `stream` has passed the refresh.
  void update_values_on(const Scalar* values, bool device, DeviceStream stream) override {
    DeviceGuard guard(device_);
    enqueue_values(values, device, stream);
  }

  void synchronize() override {
    if (ordered_pending_) r_->ordered.synchronize();
    if (pending_) last_event().synchronize();
  }

  // With a resident CSR (which update_values keeps current): its transpose, built on the device
  // (transpose.hpp; a CSR of 64-bit offsets only when it came on the device, which then throws).
  // Otherwise, and for complex values (a host matrix only), nullptr: kspmv::Operator transposes
  // the host matrix.
  bool transposes_itself() const override {
    return !is_complex_v<Scalar> && r_->a != nullptr && (!r_->a->wide() || device_sourced_);
  }
  std::unique_ptr<OperatorImpl<Scalar>> make_transpose() const override {
    if constexpr (is_complex_v<Scalar>) {
      return nullptr;
    } else {
      if (!transposes_itself()) return nullptr;
      DeviceGuard guard(device_);
      if (ordered_pending_) r_->ordered.synchronize();  // the CSR's upload or refresh has landed
      Options o = options_;
      o.validate = false;
      return from_device(device_, std::make_shared<DeviceCsr<Scalar>>(transpose(*r_->a)), o,
                         nullptr);
    }
  }

  // One device: every vector is one array of the device, applied on the operator's stream
  // (real values; complex ones refuse, as OperatorImpl does).
  DistributedVector<Scalar> make_vector(Ordinal m, Ordinal n) const override {
    if constexpr (is_complex_v<Scalar>) {
      return OperatorImpl<Scalar>::make_vector(m, n);
    } else {
      const std::size_t len = static_cast<std::size_t>(std::max(m, n));
      auto b = std::make_shared<MultiVector<Scalar>>(std::vector<int>{device_},
                                                     std::vector<std::size_t>{len});
      return DistributedVector<Scalar>({{device_, b->data(0), len}}, b, this);
    }
  }
  void upload(const Scalar* host, std::size_t len, const DistributedVector<Scalar>& v) override {
    DeviceGuard guard(device_);
    r_->stream.synchronize();
    copy_to_device(v.data(0), host, len * sizeof(Scalar));
  }
  void download(const DistributedVector<Scalar>& v, std::size_t len, Scalar* host) override {
    DeviceGuard guard(device_);
    r_->stream.synchronize();
    copy_to_host(host, v.data(0), len * sizeof(Scalar));
  }
  void apply_distributed(Scalar alpha, const DistributedVector<Scalar>& x, Scalar beta,
                         const DistributedVector<Scalar>& y) override {
    apply_device(alpha, x.data(0), beta, y.data(0), r_->stream.get());
  }
  std::unique_ptr<CgVectors<Scalar>> make_cg_vectors(Ordinal n) override {
    if constexpr (is_complex_v<Scalar>) {
      return OperatorImpl<Scalar>::make_cg_vectors(n);
    } else {
      CgLayout<Scalar> l;
      l.parts = {{device_, r_->stream.get(),
                  n > 0 ? std::vector<part::Span>{{0, n}} : std::vector<part::Span>{}}};
      l.x = make_vector(n, n), l.r = make_vector(n, n), l.p = make_vector(n, n);
      l.q = make_vector(n, n);
      l.vector = [this, n] { return make_vector(n, n); };
      l.graphs = options_.graphs;
      l.upload = [this, n](const Scalar* h, const DistributedVector<Scalar>& v) {
        upload(h, n, v);
      };
      l.download = [this, n](const DistributedVector<Scalar>& v, Scalar* h) { download(v, n, h); };
      return make_device_cg_vectors(std::move(l));
    }
  }

  Kernel kernel() const override { return kernel_; }
  Residency residency() const override {
    return streamed_ ? Residency::Streamed : Residency::Resident;
  }
  Timings timings() const override {
    if (pending_ && timed_) timings_.kernel_ms = timings_.total_ms = finish_timing();
    Timings t = timings_;
    t.trials = tuner_.size() > 0 ? tuner_.trials() : std::vector<TuneTrial>{};
    t.tuning = r_->kernels.size() > 1;
    return t;
  }

 private:
  // Runs launch(k) for the kernel k of this call on `stream`, followed by an event that later
  // work waits for, unless the stream is being captured. The apply is timed (between timing
  // events, whose timestamps cost the device a few microseconds) only while autotuning, which
  // waits for it and records its time, or when Options::time_applies asks.
  template <class Launch>
  void enqueue(cudaStream_t stream, const Launch& launch, bool time = false) {
    const NvtxRange range("kspmv::apply");
    Resources<Scalar>& r = *r_;
    cudaStreamCaptureStatus capture = cudaStreamCaptureStatusNone;
    KSPMV_CUDA_CHECK(cudaStreamIsCapturing(stream, &capture));
    const bool tuning = r.kernels.size() > 1;
    if (capture != cudaStreamCaptureStatusNone && tuning)
      throw UnsupportedError(
          "apply: Kernel::Auto with autotune times its first applies; run them before "
          "capturing a CUDA graph");
    const std::size_t k = pick();
    if (capture != cudaStreamCaptureStatusNone) {
      launch(k);
      return;
    }
    after_ordered(stream);
    timed_ = tuning || time || options_.time_applies;
    if (timed_) r.start.record(stream);
    launch(k);
    last_event().record(stream);
    pending_ = true;
    timings_.h2d_ms = timings_.kernel_ms = timings_.total_ms = 0;  // until timed
    if (tuning) record(k, finish_timing());
  }

  // apply_device_block, timed when `time` (a synchronous apply of host vectors) or asked.
  void run_block(Scalar alpha, const Scalar* x, std::size_t ldx, Scalar beta, Scalar* y,
                 std::size_t ldy, int k, cudaStream_t stream, bool time) {
    DeviceGuard guard(device_);
    check_vectors(x, y);
    Resources<Scalar>& r = *r_;
    if (!r.a || r.kernels.size() > 1 || !kernel_row<Scalar>(kernel_).uses_device_csr) {
      enqueue(
          stream,
          [&](std::size_t j) {
            for (int c = 0; c < k; ++c)
              r.kernels[j]->run(alpha, x + c * ldx, beta, y + c * ldy, stream);
          },
          time);
      return;
    }
    if (!r.spmm) r.spmm = std::make_unique<CsrSpmm<Scalar>>(r.a);
    enqueue(
        stream, [&](std::size_t) { r.spmm->run(alpha, x, ldx, beta, y, ldy, k, stream); }, time);
  }

  // The event that ends the last apply on a caller's stream.
  const Event& last_event() const { return timed_ ? r_->done : r_->ready; }

  // The kernel of this call: the tuner's candidate while autotuning.
  std::size_t pick() const { return r_->kernels.size() > 1 ? tuner_.current() : 0; }

  // Milliseconds of the last (timed) apply on a device stream, once it has finished.
  float finish_timing() const {
    r_->done.synchronize();
    pending_ = false;
    return r_->done.elapsed_since(r_->start);
  }

  // The refresh on `s`, after the last apply and the set-up (or the last refresh).
  void enqueue_values(const Scalar* values, bool device, cudaStream_t s) {
    const Phase phase("kspmv::update_values::copy");  // inside the facade's kspmv::update_values
    Resources<Scalar>& r = *r_;
    after_last_apply(s);
    after_ordered(s);
    const auto nnz = static_cast<std::size_t>(nnz_);
    const cudaMemcpyKind kind = device ? cudaMemcpyDeviceToDevice : cudaMemcpyHostToDevice;
    const Scalar* on_device = values;
    if (r.a) {  // the kernels on the resident CSR read the new values there
      if (nnz > 0)
        KSPMV_CUDA_CHECK(cudaMemcpyAsync(r.a->val.data(), values, nnz * sizeof(Scalar), kind, s));
      on_device = r.a->val.data();
    } else if (!device && !streamed_) {  // a layout of its own gathers from device memory
      if (r.values.size() < nnz) r.values = DeviceBuffer<Scalar>(nnz);
      if (nnz > 0)
        KSPMV_CUDA_CHECK(cudaMemcpyAsync(r.values.data(), values, nnz * sizeof(Scalar), kind, s));
      on_device = r.values.data();
    }  // streamed: full-overlap refills its host copy from wherever the values are
    for (auto& kernel : r.kernels) kernel->update_values(on_device, s);
    r.ordered.record(s);  // applies on other streams come after the refresh
    ordered_pending_ = true;
    refreshed_ = refreshed_ || r.kernels.size() > 1;
  }

  // Orders work on `s` after the set-up's and the last refresh's device work, while the host has
  // not seen it finish; nothing while `s` is being captured into a graph (capture after it).
  void after_ordered(cudaStream_t s) {
    if (!ordered_pending_) return;
    if (r_->ordered.done()) {
      ordered_pending_ = false;
      return;
    }
    cudaStreamCaptureStatus capture = cudaStreamCaptureStatusNone;
    KSPMV_CUDA_CHECK(cudaStreamIsCapturing(s, &capture));
    if (capture == cudaStreamCaptureStatusNone)
      KSPMV_CUDA_CHECK(cudaStreamWaitEvent(s, r_->ordered.get(), 0));
  }

  // Orders work on `s` after the last apply on a caller's stream (its kernels' work buffers).
  void after_last_apply(cudaStream_t s) const {
    if (pending_) KSPMV_CUDA_CHECK(cudaStreamWaitEvent(s, last_event().get(), 0));
  }

  // Vectors are checked when they change (the query costs more than a small SpMV's launch).
  void check_vectors(const Scalar* x, const Scalar* y) {
    if (x == checked_x_ && y == checked_y_) return;
    if (n_ > 0) check_device_pointer(x, device_, "x");
    if (m_ > 0) check_device_pointer(y, device_, "y");
    checked_x_ = x;
    checked_y_ = y;
  }

  // Autotune bookkeeping: the tuner's rule (core/tuner.hpp); once it has decided, the kept
  // kernel stays and the others are freed.
  void record(std::size_t k, float ms) {
    kernel_ = r_->kernels[k]->kernel();
    if (r_->kernels.size() == 1) return;
    tuner_.record(ms);
    if (!tuner_.done()) return;
    auto keep = std::move(r_->kernels[tuner_.best()]);
    r_->kernels.clear();  // the stream is idle: apply synchronized it
    r_->kernels.push_back(std::move(keep));
    kernel_ = r_->kernels.front()->kernel();
    // The kept kernel has a layout of its own: the resident CSR goes, unless new values came
    // while tuning (kspmv::Operator left its host copy of the old ones, since this operator
    // transposed itself from the resident CSR then; it still does).
    if (!kernel_row<Scalar>(kernel_).uses_device_csr && !device_sourced_ && !refreshed_)
      r_->a.reset();
  }

  int device_;
  Ordinal m_, n_;
  Offset nnz_;
  bool device_sourced_;     // built from a CSR on the device: it stays there
  bool streamed_;           // full-overlap: the matrix stays in host memory
  bool refreshed_ = false;  // update_values ran while autotuning
  Options options_;
  std::shared_ptr<const void> keep_;  // the host arrays, outliving r_ (the destructor frees r_)
  std::unique_ptr<Resources<Scalar>> r_;
  Tuner tuner_;  // Kernel::Auto with autotune: its candidates
  Kernel kernel_ = Kernel::Auto;
  mutable Timings timings_;
  mutable bool pending_ = false;  // an apply on a caller's stream has not been waited for
  bool ordered_pending_ = false;  // `ordered` has not been seen finished
  bool timed_ = false;            // ... and it was timed
  const Scalar* checked_x_ = nullptr;
  const Scalar* checked_y_ = nullptr;
};

// Device memory (bytes) an operator may plan on: the free memory of the current device, at most
// options.device_memory_limit.
std::size_t device_budget(const Options& o) {
  std::size_t free_bytes = 0, total_bytes = 0;
  KSPMV_CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
  return o.device_memory_limit > 0 ? std::min(free_bytes, o.device_memory_limit) : free_bytes;
}

std::string gigabytes(double bytes) {
  char text[32];
  std::snprintf(text, sizeof text, "%.3g GB", bytes / 1e9);
  return text;
}

// Resident or streamed (Residency::Auto resolved), and the ring's memory when streamed: what the
// device may give (device_budget) less the vectors.
template <class Scalar>
Placement place(const CsrPointers<Scalar>& a, const Options& o, bool streamed_kernel) {
  const Offset nnz = a.nnz();
  const double vectors = (double(a.m) + a.n) * sizeof(Scalar);
  const double csr =
      double(nnz) * (sizeof(Scalar) + sizeof(Ordinal)) +
      (double(a.m) + 1) * (narrow_offsets(nnz) ? sizeof(DeviceOffset) : sizeof(Offset));
  const std::size_t budget = device_budget(o);
  const bool capped = o.device_memory_limit > 0 && o.device_memory_limit <= budget;
  Placement p;
  p.matrix = "the matrix (" + std::to_string(nnz) + " non-zeros: " + gigabytes(csr) + " as CSR, " +
             gigabytes(vectors) + " of vectors)";
  p.budget = gigabytes(double(budget)) +
             (capped ? " allowed (Options::device_memory_limit)" : " free on the device");
  const bool automatic = o.residency == Residency::Auto;
  // Auto chooses with 5% to spare for the kernels' plans; an explicit choice is held to the sizes.
  p.streamed = streamed_kernel || o.residency == Residency::Streamed ||
               (automatic && o.kernel == Kernel::Auto && 1.05 * csr + vectors > double(budget));
  if (!p.streamed) {
    if (csr + vectors > double(budget) && (automatic || capped))
      throw MemoryError("keeping " + p.matrix + " resident on the device, " + p.budget +
                            (automatic ? "; kernel '" + std::string(to_string(o.kernel)) +
                                             "' keeps it resident, auto or full-overlap can "
                                             "stream it"
                                       : ""),
                        static_cast<std::size_t>(csr + vectors), budget);
    return p;
  }
  if (vectors >= double(budget))
    throw MemoryError("streaming " + p.matrix + ": its vectors alone exceed the " + p.budget,
                      static_cast<std::size_t>(vectors), budget);
  p.stream.device_bytes = budget - static_cast<std::size_t>(vectors);
  return p;
}

}  // namespace

template <class Scalar>
std::unique_ptr<OperatorImpl<Scalar>> make_operator(const CsrPointers<Scalar>& host_matrix,
                                                    const Options& options,
                                                    std::shared_ptr<const void> keep_alive,
                                                    cudaStream_t stream) {
  const Kernel k = options.kernel;
  const bool streamed_kernel =
      k != Kernel::Auto && kernel_row<Scalar>(k).info.residency == Residency::Streamed;
  if (options.residency == Residency::Streamed && k != Kernel::Auto && !streamed_kernel) {
    throw UnsupportedError(
        std::string("cuda backend: streamed residency runs full-overlap, not '") + to_string(k) +
        "'");
  }
  if (options.residency == Residency::Resident && streamed_kernel)
    throw UnsupportedError("cuda backend: full-overlap streams the matrix; it is never resident");
  const int device = checked_device(options);
  DeviceGuard guard(device);
  const Placement placement = place(host_matrix, options, streamed_kernel);
  if (is_complex_v<Scalar> && placement.streamed)
    throw UnsupportedError(
        "cuda backend: complex values run resident only (full-overlap streams real values); " +
        (options.residency == Residency::Streamed
             ? std::string("streamed residency was asked")
             : placement.matrix + " does not fit in " + placement.budget));
  try {
    return std::make_unique<DeviceOperator<Scalar>>(
        device, Source<Scalar>{host_matrix, nullptr, nullptr, std::move(keep_alive)}, options,
        placement, stream);
  } catch (const MemoryError& e) {  // the ring does not fit either
    if (options.residency != Residency::Auto) throw;
    throw MemoryError(placement.matrix + " fits neither resident (" + placement.budget +
                          ") nor streamed through a ring of device buffers",
                      e.requested_bytes(), e.available_bytes());
  }
}

template <class Scalar>
std::unique_ptr<OperatorImpl<Scalar>> make_operator(const DeviceCsrArrays<Scalar>& arrays,
                                                    const Options& options, cudaStream_t stream) {
  const Kernel k = options.kernel;
  if (options.residency == Residency::Streamed ||
      (k != Kernel::Auto && kernel_row<Scalar>(k).info.residency == Residency::Streamed))
    throw UnsupportedError(
        "cuda backend: a matrix in device memory stays resident; streaming takes a host matrix");
  const int device = checked_device(options);
  DeviceGuard guard(device);
  const Phase phase("kspmv::setup::upload");
  auto a = std::make_shared<DeviceCsr<Scalar>>(adopt(arrays, options.validate, stream));
  return from_device(device, std::move(a), options, stream);
}

namespace {

// The operator of a CSR already on `device`. Kernel::Auto (not autotuned) and the kernels with a
// device factory (csr-vector, cuSPARSE) are planned from the row profile computed on the device
// (row_profile.hpp: the long rows found there too); nothing of the matrix is read back. Other
// kernels and autotuning read the row pointer back for their plans, the entries too when
// options.kernel preprocesses them on the host. The work goes on `stream` (see make_operator); the
// host waits for it only to read back the row profile's sums and long-row extents, or the row
// pointer (and entries) the host plans from.
template <class Scalar>
std::unique_ptr<OperatorImpl<Scalar>> from_device(int device, std::shared_ptr<DeviceCsr<Scalar>> a,
                                                  const Options& options, cudaStream_t stream,
                                                  double x_sectors) {
  const Kernel k = options.kernel;
  const bool planned_here =
      k == Kernel::Auto ? !options.autotune : kernel_row<Scalar>(k).make_on_device != nullptr;
  if (planned_here && !a->wide()) {  // the row profile reads a 32-bit row pointer
    const Phase phase("kspmv::setup::analysis");
    DeviceBuffer<ProfileSums> sums(1, kPooled, stream);
    profile_rows(a->row_ptr.data(), a->m, sums.data(), stream);
    ProfileSums h;
    KSPMV_CUDA_CHECK(cudaMemcpyAsync(&h, sums.data(), sizeof h, cudaMemcpyDeviceToHost, stream));
    KSPMV_CUDA_CHECK(cudaStreamSynchronize(stream));
    sums.free_after(stream);
    DevicePlanInput in{to_profile(h, a->n), nullptr, nullptr, stream, x_sectors};
    const DeviceOffset* rows = a->row_ptr.data();
    const Ordinal m = a->m;
    in.long_rows = [&in, rows, m, stream](Offset threshold, Offset chunk) {
      return plan_long_rows_on_device(rows, m, threshold, long_row_bound(in.profile, threshold),
                                      chunk, stream);
    };
    const Source<Scalar> src{{nullptr, nullptr, nullptr, a->m, a->n}, a, &in, nullptr};
    return std::make_unique<DeviceOperator<Scalar>>(device, src, options, Placement{}, stream);
  }
  KSPMV_CUDA_CHECK(cudaStreamSynchronize(stream));  // the host plans from the matrix
  const std::vector<Offset> row_ptr = download_row_ptr(*a);
  Source<Scalar> src{{row_ptr.data(), nullptr, nullptr, a->m, a->n}, a, nullptr, nullptr};
  std::vector<Ordinal> col;
  std::vector<Scalar> val;
  if (k != Kernel::Auto && kernel_row<Scalar>(k).info.reads_host_entries) {
    col.resize(a->nnz);
    val.resize(a->nnz);
    a->col.download(col.data());
    a->val.download(val.data());
    src.host.col = col.data();
    src.host.val = val.data();
  }
  return std::make_unique<DeviceOperator<Scalar>>(device, src, options, Placement{}, stream);
}

// Reorder::Bfs on the device: A uploaded and ordered there (bfs_order.cu); permuted() builds
// P A P^T from that copy and the operator on it, planned as a matrix given in device memory.
template <class Scalar>
class CudaOrdering final : public DeviceOrdering<Scalar> {
 public:
  CudaOrdering(int device, const CsrPointers<Scalar>& a, cudaStream_t stream) : device_(device) {
    const auto t0 = Clock::now();
    a_ = std::make_shared<DeviceCsr<Scalar>>(DeviceCsr<Scalar>::upload_on(a, stream));
    KSPMV_CUDA_CHECK(cudaStreamSynchronize(stream));
    this->upload_ms = ms_since(t0);
    BfsPermutation p = bfs_order(a_->row_ptr.data(), a_->col.data(), a_->m, stream);
    this->perm.resize(a_->m);
    // The sort ran on `stream`, which the legacy stream of the download need not wait for.
    KSPMV_CUDA_CHECK(cudaStreamSynchronize(stream));
    p.perm.download(this->perm.data(), this->perm.size());
    p_ = std::move(p);
  }

  ~CudaOrdering() override {
    on_device_noexcept(device_, [&] {
      a_.reset();
      p_ = BfsPermutation();
    });
  }
  CudaOrdering(const CudaOrdering&) = delete;
  CudaOrdering& operator=(const CudaOrdering&) = delete;

  std::unique_ptr<OperatorImpl<Scalar>> permuted(const Options& options, double x_sectors,
                                                 DeviceStream stream) override {
    DeviceGuard guard(device_);
    const auto t0 = Clock::now();
    auto b = std::make_shared<DeviceCsr<Scalar>>(permute_symmetric(*a_, p_, stream));
    KSPMV_CUDA_CHECK(cudaStreamSynchronize(stream));  // A and the permutation are given back
    this->permute_ms = ms_since(t0);
    a_.reset();
    p_ = BfsPermutation();
    return from_device(device_, std::move(b), options, stream, x_sectors);
  }

  std::unique_ptr<OperatorImpl<Scalar>> unpermuted(const CsrPointers<Scalar>& a,
                                                   std::shared_ptr<const void> keep,
                                                   const Options& options,
                                                   DeviceStream stream) override {
    DeviceGuard guard(device_);
    p_ = BfsPermutation();
    return std::make_unique<DeviceOperator<Scalar>>(
        device_, Source<Scalar>{a, std::move(a_), nullptr, std::move(keep)}, options, Placement{},
        stream);
  }

 private:
  int device_;
  std::shared_ptr<DeviceCsr<Scalar>> a_;
  BfsPermutation p_;
};

}  // namespace

template <class Scalar>
std::unique_ptr<DeviceOrdering<Scalar>> order_on_device(const CsrPointers<Scalar>& a,
                                                        const Options& options,
                                                        cudaStream_t stream) {
  const Offset nnz = a.nnz();
  const Kernel k = options.kernel;
  if (a.m != a.n || !narrow_offsets(nnz) ||
      (k != Kernel::Auto && kernel_row<Scalar>(k).info.residency == Residency::Streamed))
    return nullptr;
  const int device = checked_device(options);
  DeviceGuard guard(device);
  // A and P A P^T (with room for a third copy), the ordering's arrays (at most thirteen words of
  // 4 bytes a row while it sorts, counting CUB's copies) and the vectors.
  const double csr =
      double(nnz) * (sizeof(Scalar) + sizeof(Ordinal)) + (double(a.m) + 1) * sizeof(DeviceOffset);
  if (3 * csr + 40.0 * a.m + 2.0 * a.m * sizeof(Scalar) > double(device_budget(options)))
    return nullptr;
  const Phase phase("kspmv::setup::reorder");
  return std::make_unique<CudaOrdering<Scalar>>(device, a, stream);
}

template std::unique_ptr<OperatorImpl<float>> make_operator(const CsrPointers<float>&,
                                                            const Options&,
                                                            std::shared_ptr<const void>,
                                                            cudaStream_t);
template std::unique_ptr<OperatorImpl<double>> make_operator(const CsrPointers<double>&,
                                                             const Options&,
                                                             std::shared_ptr<const void>,
                                                             cudaStream_t);
template std::unique_ptr<OperatorImpl<float>> make_operator(const DeviceCsrArrays<float>&,
                                                            const Options&, cudaStream_t);
template std::unique_ptr<OperatorImpl<double>> make_operator(const DeviceCsrArrays<double>&,
                                                             const Options&, cudaStream_t);
template std::unique_ptr<DeviceOrdering<float>> order_on_device(const CsrPointers<float>&,
                                                                const Options&, cudaStream_t);
template std::unique_ptr<DeviceOrdering<double>> order_on_device(const CsrPointers<double>&,
                                                                 const Options&, cudaStream_t);
#define KSPMV_INSTANTIATE(S)                                                             \
  template std::unique_ptr<OperatorImpl<S>> make_operator(                               \
      const CsrPointers<S>&, const Options&, std::shared_ptr<const void>, cudaStream_t); \
  template const std::vector<KernelRow<S>>& kernel_table();                              \
  template const KernelRow<S>& kernel_row(Kernel);
KSPMV_INSTANTIATE(Complex<float>)
KSPMV_INSTANTIATE(Complex<double>)
#undef KSPMV_INSTANTIATE
template const std::vector<KernelRow<float>>& kernel_table();
template const std::vector<KernelRow<double>>& kernel_table();
template const KernelRow<float>& kernel_row(Kernel);
template const KernelRow<double>& kernel_row(Kernel);
template std::unique_ptr<DeviceSpmv<float>> make_device_spmv(
    Kernel, std::shared_ptr<const DeviceCsr<float>>, const CsrPointers<float>&);
template std::unique_ptr<DeviceSpmv<double>> make_device_spmv(
    Kernel, std::shared_ptr<const DeviceCsr<double>>, const CsrPointers<double>&);

}  // namespace kspmv::cuda
