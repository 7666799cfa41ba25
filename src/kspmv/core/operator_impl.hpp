// The interface a backend implements behind kspmv::Operator. Kokkos-free: the CUDA backend
// implements it in code that never sees Kokkos headers (docs/DESIGN.md "Data model").
#pragma once

#include <algorithm>
#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "kspmv/core/cg_vectors.hpp"
#include "kspmv/core/complex.hpp"
#include "kspmv/core/csr_pointers.hpp"
#include "kspmv/core/distributed_vector.hpp"
#include "kspmv/core/error.hpp"
#include "kspmv/core/options.hpp"
#include "kspmv/core/tuner.hpp"
#include "kspmv/core/types.hpp"

// The CUDA runtime's stream type (cudaStream_t is CUstream_st*), declared so that no CUDA header
// is needed here.
struct CUstream_st;

namespace kspmv {

// A CUDA stream; nullptr is the legacy default stream.
using DeviceStream = CUstream_st*;

// Milliseconds of the last apply on one device of a multi-device operator, from events on that
// device: kernels (from the start of its first kernel to the end of its last), exchange (the
// rest: halo and y sends and merges not hidden under the kernels), total (its whole apply).
struct DeviceTimings {
  double kernel_ms = 0, exchange_ms = 0, total_ms = 0;
};

// Multi-device operators: where the preprocessing went, in the order it runs (host clock, ms).
// A phase ends when the host next waits for the devices' work; the device time of the work
// the profile phase waits for is given apart. The copies run on a thread of their own while the
// set-up's phases run: Timings::setup_ms is streams + profile + halo_links + kernels + finish
// - overlap, the construction's time beyond the partition's and the upload's.
struct SetupPhases {
  double longest_row = 0;     // partition: LRA's longest row of the matrix, found on the device
  double plan = 0;            // partition: the plan, on the host
  double source = 0;          // upload: the matrix's row pointer to the first device
  double streams = 0;         // setup: the streams and events (idle ones reused), made once
                              // the upload has started
  double allocate = 0;        // upload: each device's one allocation
  double columns = 0;         // upload: row pointers of other devices, then column indices,
                              // these copied on the upload's own thread
  double profile = 0;         // setup: the Halo search's scratch, the narrowing with its
                              // statistics, the Halo marks and lists queued, counts read back
                              // (one wait per device), less the waits for the columns
  double profile_device = 0;  // the narrowing and statistics on the slowest device (events)
  double halo_device = 0;     // the Halo lists' selection there, after the last marks (events)
  double halo_links = 0;      // setup: the Halo lists' allocation and copies, enqueued
  double values = 0;          // upload: values, on the upload's thread (where the Halo search
                              // had no memory of its own, after its lists left their room)
  double kernels = 0;         // setup: each piece's kernel planned (cuSPARSE handle, descriptors,
                              // buffer and analysis; long-row plans, which wait)
  double finish = 0;          // setup: set-up scratch freed once its work is done (under the
                              // upload, most likely), and the last wait for the devices
  double overlap = 0;         // the copies' time less the set-up's waits for them: the set-up's
                              // work done while the matrix crossed, which setup leaves out
                              // (negative where the upload's thread cost more than it hid)
};

// Milliseconds of the last apply (and of the one-time preprocessing).
struct Timings {
  double preprocess_ms = 0;  // once, at construction; of it (CUDA; 0 where not measured):
  double partition_ms = 0;   //   the multi-device plan, row statistics on the device included
  double upload_ms = 0;      //   the matrix into device memory (its allocation and copies)
  double setup_ms = 0;       //   the rest: kernels' plans, the exchange's set-up, buffers
  double tune_ms = 0;        //   timing the candidates of the Auto exchange
  // Options::reorder, not in preprocess_ms: the ordering (Auto: the candidate and the model) and
  // P A P^T, on the host, or on the GPU for Reorder::Bfs there (A's upload, which the operator
  // keeps, counted in upload_ms instead); the model's bytes of the permuted apply with its gather
  // and scatter (without them under Options::permuted_applies; stripes: the striped apply's bytes)
  // over those of the apply on A (analysis/locality.hpp; 0 without a model's estimate).
  double reorder_ms = 0;
  double reorder_model = 0;
  SetupPhases setup_phases;  // the first three, phase by phase (multi-device operators)
  double h2d_ms = 0;         // matrix or vector transfers to the device in the last apply
  double kernel_ms = 0;      // SpMV kernels of the last apply
  double exchange_ms = 0;    // multi-device exchange of the last apply
  double total_ms = 0;       // the whole last apply
  // Multi-device operators: per entry of Options::devices (kernel_ms and exchange_ms above are
  // then the slowest device's); empty on one device.
  std::vector<DeviceTimings> devices;
  // Every choice made by timing so far (kernel autotune, the LRA pair, the Auto exchange), each
  // candidate with its median (core/tuner.hpp), and whether a choice is still being timed on the
  // coming applies.
  std::vector<TuneTrial> trials;
  bool tuning = false;
  // Multi-device operators: bytes one apply moves between devices; whether the last apply was
  // replayed as a CUDA graph (Options::graphs), whether its devices ordered the exchange
  // themselves (Options::signals), and why applies are not where they were asked to be.
  std::size_t exchange_bytes = 0;
  bool replayed = false;
  bool signalled = false;
  std::string replay_note;
};

// One part of a multi-device partition (Operator::parts).
struct PartInfo {
  int device = 0;  // index into Options::devices
  int slot = 0;    // its stream slot on that device (kernels run in slot order)
  Ordinal row_begin = 0, row_end = 0;
  Offset nnz_begin = 0, nnz_end = 0;
  bool redundant = false;  // computed by every device, never sent (LRA+RC's A_c)
  Kernel kernel = Kernel::Auto;
  double kernel_ms = 0;  // its kernel alone on its device, when timed (median, events)
};

// The cost model's apply on distinct devices (partitioners/cost_model.hpp).
struct Prediction {
  double ms = 0;           // the slowest device, from the start of the apply to its end
  double kernel_ms = 0;    // the slowest device's kernels, back to back
  double exchange_ms = 0;  // ms - kernel_ms
};

template <class Scalar>
class OperatorImpl {
 public:
  virtual ~OperatorImpl() = default;
  // y = alpha*A*x + beta*y with x (ncols) and y (nrows) in host memory; returns when y is written.
  virtual void apply_host(Scalar alpha, const Scalar* x, Scalar beta, Scalar* y) = 0;
  // The same with x and y in the memory of the operator's (first) device, enqueued on `stream`
  // after the work already there; returns without waiting for y where the backend can.
  virtual void apply_device(Scalar alpha, const Scalar* x, Scalar beta, Scalar* y,
                            DeviceStream stream) {
    (void)alpha, (void)x, (void)beta, (void)y, (void)stream;
    throw UnsupportedError("this backend has no device vectors; use host vectors");
  }
  // k vectors, column c of x at x + c*ldx and of y at y + c*ldy: one apply per column unless
  // the backend has a kernel for several.
  virtual void apply_host_block(Scalar alpha, const Scalar* x, std::size_t ldx, Scalar beta,
                                Scalar* y, std::size_t ldy, int k) {
    for (int c = 0; c < k; ++c) apply_host(alpha, x + c * ldx, beta, y + c * ldy);
  }
  virtual void apply_device_block(Scalar alpha, const Scalar* x, std::size_t ldx, Scalar beta,
                                  Scalar* y, std::size_t ldy, int k, DeviceStream stream) {
    for (int c = 0; c < k; ++c) apply_device(alpha, x + c * ldx, beta, y + c * ldy, stream);
  }
  // New values for the same pattern, in the CSR order of the matrix the operator was built from
  // (device memory of the first device when `device` is true): every plan is kept.
  virtual void update_values(const Scalar* values, bool device) {
    (void)values, (void)device;
    throw UnsupportedError("update_values: this operator cannot refresh its values");
  }
  // The same enqueued on `stream` where the backend can (applies on any stream come after it);
  // by default done at once, as update_values.
  virtual void update_values_on(const Scalar* values, bool device, DeviceStream stream) {
    (void)stream;
    update_values(values, device);
  }
  // Waits until the device work this operator queued has finished (host backends: nothing).
  virtual void synchronize() {}

  // Vectors in the operator's layout (kspmv::Operator::make_vector says what is where). The
  // defaults are those of a host operator: one host array of max(m, n) entries, applied by
  // apply_host. upload: `len` host entries into the parts that read them; download: `len`
  // entries of y from the parts that hold them.
  virtual DistributedVector<Scalar> make_vector(Ordinal m, Ordinal n) const {
    if constexpr (is_complex_v<Scalar>) {
      (void)m, (void)n;
      throw UnsupportedError("make_vector: distributed vectors hold real values");
    } else {
      return make_host_vector<Scalar>(static_cast<std::size_t>(std::max(m, n)), this);
    }
  }
  virtual void upload(const Scalar* host, std::size_t len, const DistributedVector<Scalar>& v) {
    std::copy(host, host + len, v.data(0));
  }
  virtual void download(const DistributedVector<Scalar>& v, std::size_t len, Scalar* host) {
    std::copy(v.data(0), v.data(0) + len, host);
  }
  // y = alpha*A*x + beta*y on vectors of make_vector: enqueued on the operator's streams after
  // the work it queued there (CgVectors' included) where the backend can, else run at once.
  virtual void apply_distributed(Scalar alpha, const DistributedVector<Scalar>& x, Scalar beta,
                                 const DistributedVector<Scalar>& y) {
    apply_host(alpha, x.data(0), beta, y.data(0));
  }
  // CG's vectors and fused operations in this layout (n: the square system's size).
  virtual std::unique_ptr<CgVectors<Scalar>> make_cg_vectors(Ordinal n) {
    if constexpr (is_complex_v<Scalar>) {
      (void)n;
      throw UnsupportedError("cg: CG runs on real values (symmetric positive definite matrices)");
    } else {
      return make_host_cg_vectors<Scalar>(n, this);
    }
  }
  // Multi-device operators: the parts of the partition, their kernels timed alone over `runs`
  // runs when runs > 0; and the cost model of one apply on distinct devices from each part's
  // time alone, the peer bandwidth (GB/s each way) and the device's copy bandwidth (GB/s read
  // plus written). One device: no parts, no prediction (UnsupportedError).
  virtual std::vector<PartInfo> parts(int runs) {
    (void)runs;
    return {};
  }
  virtual Prediction predict(const std::vector<double>& part_ms, double peer_gbps,
                             double device_gbps) const {
    (void)part_ms, (void)peer_gbps, (void)device_gbps;
    throw UnsupportedError("predict: the cost model is for operators on several devices");
  }
  // An operator of the transpose on the same devices with the same options, built from the
  // operator's own current values; nullptr where it keeps no CSR to build it from
  // (kspmv::Operator then transposes its host matrix, whose values it keeps current).
  virtual std::unique_ptr<OperatorImpl> make_transpose() const { return nullptr; }
  // Whether make_transpose builds the transpose (and so kspmv::Operator need not keep the
  // values of a refresh on the host).
  virtual bool transposes_itself() const { return false; }
  // The kernel that runs (Kernel::Auto resolved).
  virtual Kernel kernel() const = 0;
  // Where the matrix lives (Residency::Auto resolved; the host backend's is Resident).
  virtual Residency residency() const { return Residency::Resident; }
  // The last apply's times; waits for that apply where it is still running.
  virtual Timings timings() const = 0;
};

// Reorder::Bfs of a square matrix found on a device (analysis::bfs_order's permutation, read
// back), with the matrix uploaded there, and the operator of P A P^T built there from it.
template <class Scalar>
class DeviceOrdering {
 public:
  virtual ~DeviceOrdering() = default;
  std::vector<Ordinal> perm;  // perm[new] = old
  double upload_ms = 0;       // of A, which the operator keeps (of P A P^T: moved on the device)
  double permute_ms = 0;      // of P A P^T on the device, once permuted() has run
  // The operator of P A P^T (once; the ordering's device memory goes to it or back). `x_sectors`:
  // x's sectors on P A P^T by the locality model (analysis::x_sectors), for Kernel::Auto's plan.
  virtual std::unique_ptr<OperatorImpl<Scalar>> permuted(const Options& options, double x_sectors,
                                                         DeviceStream stream) = 0;
  // Or the operator of A itself, from the same upload (the host's matrix `a` is the one ordered;
  // `keep` owns its arrays): where the ordering is not kept.
  virtual std::unique_ptr<OperatorImpl<Scalar>> unpermuted(const CsrPointers<Scalar>& a,
                                                           std::shared_ptr<const void> keep,
                                                           const Options& options,
                                                           DeviceStream stream) = 0;
};

}  // namespace kspmv
