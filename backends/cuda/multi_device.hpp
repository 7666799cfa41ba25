// Multi-GPU SpMV executor: runs a part::PartitionPlan on several CUDA devices from one host
// thread, asynchronously (Gao et al. 2024 §3, Fig. 2; MSREP Alg. 2/3). It follows the data
// layout and exchange logic of the host emulation (backends/host/multi_device.hpp) step by step.
//
// Per plan device: one stream per stream slot (2NZ: first/second half; LRA: short, long; LRA+RC:
// a third for the redundant block) and a `main` stream for uploads, halo sends and merges. The
// slots' kernels run in slot order (the next slot waits on an event after the previous kernel),
// and each block's sends follow its kernel on its own stream, so a block's transfer overlaps the
// next block's kernel. Transfers are cudaMemcpyPeerAsync: direct where peer access is enabled
// (cudaDeviceCanAccessPeer / cudaDeviceEnablePeerAccess, done at construction), staged through
// host memory by the driver where not. The receivers wait on events recorded after the copies.
//
// The same CUDA device may be listed several times: each entry is then its own "virtual device"
// with its own buffers and streams, and the exchanges run as device-local copies (this is how a
// one-GPU machine tests the exchange logic).
#pragma once

#include <cstddef>
#include <memory>
#include <utility>
#include <vector>

#include "backends/cuda/device_spmv.hpp"
#include "backends/cuda/memory.hpp"
#include "kspmv/core/operator_impl.hpp"
#include "partitioners/exchange.hpp"
#include "partitioners/partition_plan.hpp"

namespace kspmv::cuda {

// One device buffer per plan device. Replicated vectors (AllGather, Merge) hold max(m, n)
// entries everywhere; Halo vectors hold each device's owned entries (increasing global index)
// followed by room for the x entries it receives (MultiDeviceSpmv::local_size).
template <class S>
class MultiVector {
 public:
  MultiVector() = default;
  // sizes[d] entries on CUDA device devices[d].
  MultiVector(const std::vector<int>& devices, const std::vector<std::size_t>& sizes);
  ~MultiVector();  // frees each buffer with its device current
  MultiVector(MultiVector&&) noexcept = default;
  MultiVector& operator=(MultiVector&& o) noexcept {
    std::swap(devices_, o.devices_);
    std::swap(bufs_, o.bufs_);
    return *this;
  }
  int ndevices() const { return static_cast<int>(bufs_.size()); }
  int device(int d) const { return devices_[d]; }
  S* data(int d) const { return bufs_[d].data(); }
  std::size_t size(int d) const { return bufs_[d].size(); }

 private:
  std::vector<int> devices_;
  std::vector<DeviceBuffer<S>> bufs_;
};

struct MultiDeviceOptions {
  part::Exchange exchange = part::Exchange::AllGather;
  // devices[d] is the CUDA device of plan device d (plan.ndevices entries; repeats allowed).
  std::vector<int> devices = {0};
  // Single-GPU kernel of every block; Auto picks per block from its row statistics
  // (analysis::auto_kernel). FullOverlap (streamed matrix) is not supported here.
  Kernel kernel = Kernel::Auto;
  // Exchange::Auto: what the candidates are timed on (see exchange_trials()).
  part::ExchangeUse use = part::ExchangeUse::Iterative;
};

// Exchange::Auto: the median milliseconds (host clock, kAutoExchangeTrials after one warm-up)
// of one candidate's apply on device vectors, plus its broadcast of y for Merge in iterative use.
struct ExchangeTrial {
  part::Exchange exchange;
  double ms;
};
inline constexpr int kAutoExchangeTrials = 5;

// Milliseconds of the last apply on one plan device (kspmv/core/operator_impl.hpp).
using kspmv::DeviceTimings;

template <class S>
class MultiDeviceSpmv {
 public:
  // Uploads one local CSR piece per block to its device (local row_ptr = row_ptr - nnz_begin,
  // MSREP Alg. 2; pCOO runs as the same non-zero ranges in CSR) and builds its kernel; for Halo
  // computes once which x entries each device receives from which owner. Exchange::Auto first
  // builds and times, one at a time, an executor for every exchange that applies to the scheme
  // (part::exchange_candidates) and keeps the fastest. Throws InvalidArgument
  // for a plan made for another matrix or a devices list of the wrong length / unknown ids, and
  // UnsupportedError for an exchange that does not apply to the scheme, for pCSC and for
  // Kernel::FullOverlap.
  MultiDeviceSpmv(const CsrPointers<S>& host, const part::PartitionPlan& plan,
                  const MultiDeviceOptions& options);
  ~MultiDeviceSpmv();
  MultiDeviceSpmv(const MultiDeviceSpmv&) = delete;
  MultiDeviceSpmv& operator=(const MultiDeviceSpmv&) = delete;

  // y = alpha*A*x + beta*y with host vectors (x: ncols, y: nrows); returns when y is written.
  void apply(S alpha, const S* x, S beta, S* y);

  // New values of the same pattern: nnz host values in the CSR order of the matrix. Each piece
  // takes its non-zero range into its device CSR and its kernel refreshes from there; the plan,
  // the exchange, the halo lists and the kernels' plans are kept. Returns when every device
  // holds them; applies already returned have completed, so none reads the old values.
  void update_values(const S* values);

  // The same on device vectors from make_vector(); returns when the exchange is complete. Work
  // previously enqueued on the devices' legacy default streams is ordered before it.
  // AllGather: x replicated, every device ends with the whole y. Merge: x replicated, device 0
  // ends with the whole y (the others' y is left unspecified; broadcast() replicates it). Halo:
  // x and y in the owned layout; each device ends with its owned rows of y.
  void apply(S alpha, const MultiVector<S>& x, S beta, MultiVector<S>& y);
  // AllGather only: the kernels without the y exchange (each device's own rows of y are
  // written), and the exchange alone: every device sends its owned rows of v to the others.
  // CG(comp) sends x this way before each SpMV (Gao et al. 2024 §5.3).
  void apply_local(S alpha, const MultiVector<S>& x, S beta, MultiVector<S>& y);
  void share_owned_rows(MultiVector<S>& v);
  // Copies device 0's first max(m, n) entries of v to every other device (Merge, iterative use).
  void broadcast(MultiVector<S>& v);

  // A vector laid out for this exchange (see MultiVector); contents uninitialized.
  MultiVector<S> make_vector() const;
  // Host <-> device for vectors of make_vector(): a full-length host vector (nrows or ncols
  // entries, `len`) to every replica or to each device's owned entries, and back (from device 0,
  // or gathered from each device's owned rows).
  void upload(const S* host, Ordinal len, MultiVector<S>& v) const;
  void download(const MultiVector<S>& v, Ordinal len, S* host) const;

  int ndevices() const { return static_cast<int>(devs_.size()); }
  int device(int d) const;  // the CUDA device of plan device d
  part::Exchange exchange() const { return exchange_; }
  const part::PartitionPlan& plan() const { return plan_; }
  // Per plan device: the global rows it owns (Halo: in local order; otherwise the rows of its
  // Owned blocks) and, for Halo, the number of x entries it receives per apply.
  const std::vector<Ordinal>& owned_rows(int d) const;
  std::size_t halo_size(int d) const;
  // The kernel of each block, in plan order (Auto resolved).
  std::vector<Kernel> block_kernels() const;
  const std::vector<DeviceTimings>& timings() const { return timings_; }
  // Host milliseconds of the constructor's halo setup (Halo): finding on the devices the x
  // entries each receives, the positions each owner sends, and the pieces' local columns.
  double halo_setup_ms() const { return halo_setup_ms_; }
  // Exchange::Auto: every candidate's time (empty for an explicit exchange).
  const std::vector<ExchangeTrial>& exchange_trials() const { return trials_; }
  // Bytes one apply sends between devices, summed over devices.
  std::size_t exchange_bytes() const;

 private:
  struct Dev;
  struct Piece;
  void run(S alpha, const MultiVector<S>& x, S beta, MultiVector<S>& y, bool exchange_y);
  void check_vector(const MultiVector<S>& v, const char* name) const;
  void collect_timings();
  // Halo: the receive and send lists and the local columns of `uploaded` (plan order), from
  // the plan's part::halo_column_ranges.
  void setup_halo(const std::vector<part::ColumnRange>& ranges,
                  std::vector<DeviceCsr<S>>& uploaded);
  // Median host milliseconds of kAutoExchangeTrials applies for `use` (Exchange::Auto).
  double time_apply(part::ExchangeUse use);

  part::PartitionPlan plan_;
  part::Exchange exchange_;
  Ordinal m_ = 0, n_ = 0;
  std::vector<std::unique_ptr<Dev>> devs_;
  std::vector<std::unique_ptr<Piece>> pieces_;  // plan order
  std::unique_ptr<MultiVector<S>> hx_, hy_;     // staging of the host-vector apply
  std::vector<DeviceTimings> timings_;
  double halo_setup_ms_ = 0;
  std::vector<ExchangeTrial> trials_;
};

extern template class MultiVector<float>;
extern template class MultiVector<double>;
extern template class MultiDeviceSpmv<float>;
extern template class MultiDeviceSpmv<double>;

}  // namespace kspmv::cuda
