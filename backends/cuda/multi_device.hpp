// Multi-GPU SpMV executor: runs a part::PartitionPlan on several CUDA devices from one host
// thread, asynchronously (Gao et al. 2024 §3, Fig. 2; MSREP Alg. 2/3), carrying out the steps
// of a part::ExchangeStrategy, as the host emulation (backends/kokkos/multi_device.hpp) does.
//
// Set-up: each device makes one allocation for what it keeps (its pieces, Merge's partials) and
// the pieces' column indices and values are copied from the host into it (upload_ms), on a
// thread of the upload's own (upload_thread.hpp); the rest runs on the devices while they cross
// (setup_ms: the construction's time beyond the upload's): the streams and events are made, each
// piece's 32-bit row pointer is
// narrowed from the matrix's 64-bit one and its row statistics are gathered in the same pass
// (row_profile.hpp), the Halo search marks each chunk of columns as it lands and then lists what
// each device needs (halo_lists.hpp), and each piece's kernel is chosen and planned from the
// statistics, its analysis queued once every column has landed. The Halo search's scratch, its
// links (sized by what was found), cuSPARSE's work space and the set-up's other scratch come from
// the devices' memory pools (memory.hpp). No pass over the rows or the non-zeros runs on the host;
// the host waits for the devices twice (for the statistics and the halo counts, and at the end)
// besides the upload. Streams, events and cuSPARSE handles are idle ones reused (memory.hpp)
// where there are.
//
// Per plan device: one stream per stream slot (2NZ: first/second half; LRA: short, long; LRA+RC:
// a third for the redundant block) and a `main` stream for the exchange's steps before and after
// the kernels. The kernels run one after another (the next waits on an event after the previous
// one), in the strategy's order (part::ExchangeStrategy::kernel_order): the blocks that read no x
// entry their device receives (found by the Halo search) start at once, under the copies before
// the kernels, and the others after them. Each block's copies follow its kernel on its own
// stream, so a block's transfer overlaps the next block's kernel (Gao et al. 2024 §3.2). Transfers
// are device-to-device copies: direct where peer access is enabled (done at construction), staged
// through host memory by the driver where not. Every apply starts after the previous one has ended
// on every device, and ends on each device's main stream after the devices that pulled its x
// entries have them: the caller may overwrite x there next (CG's p).
//
// Signals (Halo, distinct devices with peer access both ways): the devices order the exchange
// themselves (peer_flags.hpp). At the start of an apply each device raises a flag in the memory
// of every device that reads its x (its earlier work is done), each receiver waits for the flags
// of its owners, pulls the entries and raises a flag in the owners' memory, and each owner ends
// its apply once its readers have pulled (so that later work may overwrite its x). No event
// crosses devices: each device's apply is enqueued, captured and replayed on its own.
//
// Replay: an apply's steps on every device are captured once as one CUDA graph (graph.hpp) per
// exchange and set of vectors and scalars, kept (the last kReplays: the tuner's candidates keep
// theirs while it alternates them), and each later apply with the same ones is
// one launch on the first device's main stream, joined with the other main streams by one event
// each way: the host's dozens of calls per device (events across every pair of devices, copies,
// launches) leave the per-apply path. An apply enqueued while the main streams are captured by
// the caller (kspmv::cg's iteration) becomes part of the caller's graph.
//
// The same CUDA device may be listed several times: each entry is then its own "virtual device"
// with its own buffers and streams, and the exchanges run as device-local copies (this is how a
// one-GPU machine tests the exchange logic).
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "backends/cuda/cg_vectors.hpp"
#include "backends/cuda/device_spmv.hpp"
#include "backends/cuda/graph.hpp"
#include "backends/cuda/memory.hpp"
#include "backends/cuda/multi_vector.hpp"
#include "kspmv/core/operator_impl.hpp"
#include "partitioners/exchange.hpp"
#include "partitioners/partition_plan.hpp"

namespace kspmv::cuda {

class HaloFinder;
struct ProfileSums;

// The matrix as executors read it: the host CSR, and its 64-bit row pointer copied once to one
// CUDA device, where the longest row that LRA needs is found (once) and from which the pieces on
// that device narrow their own row pointers. The executors the LRA tuner builds share it. The
// host arrays must outlive it.
template <class S>
class MatrixSource {
 public:
  MatrixSource(const CsrPointers<S>& host, int device);
  ~MatrixSource();
  MatrixSource(const MatrixSource&) = delete;
  MatrixSource& operator=(const MatrixSource&) = delete;
  const CsrPointers<S>& host() const { return host_; }
  // New host values (the same pattern): what executors built later upload.
  void set_values(const S* values) { host_.val = values; }
  int device() const { return device_; }
  const Offset* device_row_ptr() const { return row_ptr_.data(); }
  // The first longest row of the matrix (m > 0), found on the device by the first call (which
  // waits).
  Ordinal longest_row();
  double upload_ms() const { return upload_ms_; }  // the row pointer's copy
  double longest_row_ms() const { return longest_ms_; }

 private:
  CsrPointers<S> host_;
  int device_;
  DeviceBuffer<Offset> row_ptr_;  // m + 1 entries, then the longest row's search key
  Ordinal longest_ = -1;
  double upload_ms_ = 0, longest_ms_ = 0;
};

struct MultiDeviceOptions {
  part::Exchange exchange = part::Exchange::AllGather;
  // devices[d] is the CUDA device of plan device d (plan.ndevices entries; repeats allowed).
  std::vector<int> devices = {0};
  // Single-GPU kernel of every block. Auto picks per block from its row statistics
  // (analysis::auto_kernel) among the kernels planned from the device's profile (the registry's
  // make_on_device: CSR-Vector for the others). An explicit kernel without that factory reads a
  // host copy of its piece. FullOverlap (streamed matrix) is not supported.
  Kernel kernel = Kernel::Auto;
  // Applies replayed as CUDA graphs (see above); false: every apply enqueued step by step.
  bool graphs = true;
  // Halo ordered by the devices' flags where it can be (see above); false: by events.
  bool signals = true;
};

// Milliseconds of the last apply on one plan device (kspmv/core/operator_impl.hpp).
using kspmv::DeviceTimings;

template <class S>
class MultiDeviceSpmv {
 public:
  // Builds one piece per block (local row_ptr = row_ptr - nnz_begin, MSREP Alg. 2; pCOO runs as
  // the same non-zero ranges in CSR; columns stay global) and its kernel; for Halo finds which x
  // entries each device receives. Exchange::Auto builds the pieces once and times each exchange
  // that applies (part::exchange_candidates) on them by the tuner's rule (core/tuner.hpp), then
  // keeps the fastest. Throws InvalidArgument for a plan made for another matrix or a devices
  // list of the wrong length / unknown ids, and UnsupportedError for an exchange that does not
  // apply to the scheme, for pCSC and for Kernel::FullOverlap.
  MultiDeviceSpmv(std::shared_ptr<MatrixSource<S>> source, const part::PartitionPlan& plan,
                  const MultiDeviceOptions& options);
  MultiDeviceSpmv(const CsrPointers<S>& host, const part::PartitionPlan& plan,
                  const MultiDeviceOptions& options);
  ~MultiDeviceSpmv();
  MultiDeviceSpmv(const MultiDeviceSpmv&) = delete;
  MultiDeviceSpmv& operator=(const MultiDeviceSpmv&) = delete;

  // Vectors in the exchange's layout (partitioners/exchange.hpp: max(m, n) entries per device at
  // global positions), tagged `layout`; contents unspecified.
  DistributedVector<S> make_vector(const void* layout) const;
  // `len` host entries (ncols: x, or nrows when it differs: y) into the entries each device
  // holds (ExchangeStrategy::x_needed / y_needed), and y (nrows) back from the devices that hold
  // it (y_home). Both return when done.
  void upload(const S* host, Ordinal len, const DistributedVector<S>& v);
  void download(const DistributedVector<S>& v, Ordinal len, S* host);
  // y = alpha*A*x + beta*y on vectors of make_vector, enqueued on each device's main stream after
  // the work there; returns at once.
  void apply(S alpha, const DistributedVector<S>& x, S beta, const DistributedVector<S>& y);
  // The same with host vectors (x: ncols, y: nrows); returns when y is written.
  void apply(S alpha, const S* x, S beta, S* y);
  // The same with whole vectors in the memory of devices[0], ordered after `stream` and `stream`
  // after it: x copied out to the devices, y gathered back; no host synchronization.
  void apply_gathered(S alpha, const S* x, S beta, S* y, cudaStream_t stream);

  // New values of the same pattern: nnz host values in the CSR order of the matrix. Each piece
  // takes its non-zero range and its kernel refreshes from there; the plan, the exchange and the
  // kernels' plans are kept. Returns when every device holds them.
  void update_values(const S* values);
  void synchronize();

  int ndevices() const { return static_cast<int>(devs_.size()); }
  int device(int d) const;           // the CUDA device of plan device d
  cudaStream_t stream(int d) const;  // its main stream
  const part::ExchangeStrategy& strategy() const { return *strategy_; }
  part::Exchange exchange() const { return strategy_->mode(); }
  const part::PartitionPlan& plan() const { return plan_; }
  // The kernel of each block, in plan order (Auto resolved).
  std::vector<Kernel> block_kernels() const;
  // Bytes one apply sends between devices, summed over devices.
  std::size_t exchange_bytes() const { return strategy_->bytes(sizeof(S)); }
  // The last apply's times per plan device (waits for it). A replayed apply's total is the
  // launch's on the first device (every device's the same), from before the launch to its end;
  // a signalled apply's, each device's from its start (its launch) to its end.
  const std::vector<DeviceTimings>& timings();
  // Whether the last apply was a replay, and why applies are not where they were asked to be.
  bool replayed() const { return replayed_; }
  // Whether the last apply's devices ordered its exchange by flags (Signals above).
  bool signalled() const { return signalled_; }
  const std::string& replay_note() const { return replay_note_; }
  // Each block's kernel alone on its device (plan order): median of `runs` event-timed runs
  // after one warm-up, one block at a time.
  std::vector<double> time_blocks(int runs);
  // Construction: host -> device copies of the matrix (its allocation included), the rest of
  // the set-up, each phase by phase (the partition's and the source's phases left at 0), and the
  // Auto exchange's timing with what it tried and kept.
  double upload_ms() const { return upload_ms_; }
  double setup_ms() const { return setup_ms_; }
  const SetupPhases& setup_phases() const { return phases_; }
  double tune_ms() const { return tune_ms_; }
  const std::vector<TuneTrial>& trials() const { return trials_; }
  // CG's vectors in this layout (valid while the executor lives): each device's part of x, r,
  // p, q with the rows its operations cover (every row where y is replicated, else y_home),
  // tagged `layout`. The strategy must iterate in place (ExchangeStrategy::iterates_in_place).
  CgLayout<S> cg_layout(const void* layout);

 private:
  struct Dev;
  struct Piece;
  struct Replay;
  // How an apply's steps are enqueued: on the streams, timed by plain events; captured into a
  // graph of the executor's (no barrier at the start: the graph's fork is one; its kernels
  // timed by events the replays record); or into the caller's graph (untimed).
  enum class Enqueue { Streams, Graph, CallersGraph };
  void build(const MultiDeviceOptions& o);
  struct Layout;  // where each device's one allocation keeps what (build's first phase)
  Layout lay_out(const std::vector<int>& devices, const std::vector<std::vector<int>>& dev_pieces,
                 bool merge) const;
  // build's phases that stand alone: the Halo links (and Signals' flags) of every pair of
  // devices from the finders' counts and lists; each piece's kernel planned on its device from
  // its row statistics (Auto resolved); the explicit kernels that plan on the host.
  void link_halo(const std::vector<std::unique_ptr<HaloFinder>>& finders);
  void plan_on_devices(Kernel kernel, const std::vector<ProfileSums>& sums);
  void plan_on_host(const CsrPointers<S>& host);
  void use(part::Exchange mode);
  void tune(const std::vector<part::Exchange>& candidates);
  // What owns x's and y's memory where the caller does (a DistributedVector's storage); empty
  // for the executor's own staging, which lives as long as it.
  struct Owners {
    std::weak_ptr<void> x, y;
  };
  // One apply on per-device vector pointers: replayed, enqueued into the caller's graph, or
  // enqueued step by step.
  void run(S alpha, const std::vector<S*>& x, S beta, const std::vector<S*>& y,
           const Owners& owners = {});
  // Returns whether the apply was signalled.
  bool enqueue(S alpha, const std::vector<S*>& x, S beta, const std::vector<S*>& y, Enqueue how);
  // Whether an apply on x is signalled: the strategy allows it and every receiver may read its
  // owners' x.
  bool signalled(const std::vector<S*>& x) const;
  // A signalled apply's steps on device d alone.
  void enqueue_device(int d, S alpha, const std::vector<S*>& x, S beta, const std::vector<S*>& y,
                      Enqueue how);
  // Device d's kernels, each followed by its copies, after dev.kernels_start (and dev.x_in for
  // the pieces that wait for x).
  void enqueue_kernels(int d, S alpha, const std::vector<S*>& x, S beta, const std::vector<S*>& y,
                       bool graph);
  // The graph of this apply, captured on first use; nullptr when applies are not replayed.
  const Replay* replay(S alpha, const std::vector<S*>& x, S beta, const std::vector<S*>& y,
                       const Owners& owners);
  void stop_replays(const std::string& why);  // every later apply enqueued step by step
  S* buffer(part::Buffer b, int device, int block, const std::vector<S*>& x,
            const std::vector<S*>& y) const;
  // Enqueues one of the strategy's copies between devices on `stream`.
  void peer_copy(const part::Copy& c, const std::vector<S*>& x, const std::vector<S*>& y,
                 cudaStream_t stream) const;
  // Host entries into spans[d] of each device's vector, after its work.
  void put(const S* host, const std::vector<S*>& v,
           const std::vector<std::vector<part::Span>>& spans) const;
  void take(const std::vector<S*>& v, S* host) const;  // y_home of each device, after its work
  void staging();                                      // hx_, hy_ on first use
  std::vector<S*> pointers(const DistributedVector<S>& v) const;
  std::vector<S*> pointers(const MultiVector<S>& v) const;

  std::shared_ptr<MatrixSource<S>> source_;
  part::PartitionPlan plan_;
  Ordinal m_ = 0, n_ = 0;
  std::unique_ptr<part::ExchangeStrategy> strategy_;
  // Its layout and steps, listed once by use(): an apply allocates nothing.
  struct Steps {
    bool halo = false, partials = false;
    bool signalled = false;  // the devices may order the exchange by flags
    std::vector<std::vector<part::Span>> x_needed, y_needed, y_home, scale_first;  // per device
    std::vector<part::Copy> before;
    std::vector<std::vector<part::Copy>> after;  // per block
    std::vector<part::Add> adds;
  } steps_;
  std::vector<std::vector<Ordinal>> halo_counts_;  // [dst][src]
  std::vector<bool> x_readers_;  // Halo search: per piece, reads x entries of another device
  std::vector<std::unique_ptr<Dev>> devs_;
  std::vector<std::unique_ptr<Piece>> pieces_;  // plan order
  std::unique_ptr<MultiVector<S>> hx_, hy_;     // staging of host and gathered applies
  std::vector<DeviceTimings> timings_;
  bool pending_ = false;   // the last apply's times are not collected yet
  bool replayed_ = false;  // the last apply was a replay
  bool graphs_ = true;
  bool signals_ = true;     // MultiDeviceOptions::signals, and every pair of devices peers
  bool signalled_ = false;  // the last apply was signalled
  std::string replay_note_;
  std::vector<Replay> replays_;  // most recently used last
  int captures_ = 0, hits_ = 0;
  double upload_ms_ = 0, setup_ms_ = 0, tune_ms_ = 0;
  SetupPhases phases_;
  std::vector<TuneTrial> trials_;
};

extern template class MatrixSource<float>;
extern template class MatrixSource<double>;
extern template class MultiDeviceSpmv<float>;
extern template class MultiDeviceSpmv<double>;

}  // namespace kspmv::cuda
