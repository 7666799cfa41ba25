// The multi-GPU executor: pieces built on their devices, the exchange strategy's steps carried
// out with streams and events from one host thread (the emulation: backends/kokkos/multi_device).
#include "backends/cuda/multi_device.hpp"

#include <algorithm>
#include <cstring>
#include <mutex>
#include <set>
#include <string>
#include <utility>

#include "backends/cuda/cuda_operator.hpp"
#include "backends/cuda/halo_lists.hpp"
#include "backends/cuda/peer_flags.hpp"
#include "backends/cuda/row_profile.hpp"
#include "backends/cuda/upload_thread.hpp"
#include "backends/cuda/vector_ops.hpp"
#include "kspmv/analysis/kernel_choice.hpp"
#include "kspmv/core/timer.hpp"
#include "kspmv/core/tuner.hpp"

namespace kspmv::cuda {

using part::Buffer;
using part::Exchange;
using part::Scheme;
using part::Span;

namespace {

void wait(cudaStream_t s, const Event& e) {
  KSPMV_CUDA_CHECK(cudaStreamWaitEvent(s, e.get(), 0));
}

// The longest-row search's kernel loaded on `device` once a process (row_profile.hpp), so that
// the first LRA partition after a multi-device set-up does not load it.
void load_longest_row_kernel_once(int device) {
  static std::mutex mutex;
  static std::set<int> loaded;
  const std::lock_guard<std::mutex> lock(mutex);
  if (!loaded.insert(device).second) return;
  DeviceGuard guard(device);
  load_longest_row_kernel();
}

// Throws InvalidArgument unless every id is a CUDA device; returns the first.
int checked_devices(const std::vector<int>& devices) {
  const int count = device_count();
  if (devices.empty()) throw InvalidArgument("MultiDeviceSpmv: no devices");
  for (int dev : devices)
    if (dev < 0 || dev >= count)
      throw InvalidArgument("MultiDeviceSpmv: CUDA device " + std::to_string(dev) +
                            " does not exist (" + std::to_string(count) + " devices)");
  return devices.front();
}

// Graphs kept per executor: the applies of a solver use a few sets of vectors (CG: two).
constexpr std::size_t kReplays = 8;

// Columns copied a chunk at a time, so that the Halo search marks each chunk while the next
// is copied (16 MB; a multiple of 4 entries keeps the chunks 16-byte aligned for its loads).
constexpr Offset kColumnChunk = Offset{1} << 22;

// Byte offsets of arrays carved out of one allocation (256-byte aligned).
class Carve {
 public:
  template <class T>
  std::size_t take(std::size_t count) {
    at_ = (at_ + 255) / 256 * 256;
    const std::size_t where = at_;
    at_ += count * sizeof(T);
    return where;
  }
  std::size_t size() const { return at_; }

 private:
  std::size_t at_ = 0;
};

template <class T>
T* at(const DeviceBuffer<unsigned char>& b, std::size_t offset) {
  return reinterpret_cast<T*>(b.data() + offset);
}

}  // namespace

template <class S>
MatrixSource<S>::MatrixSource(const CsrPointers<S>& host, int device)
    : host_(host), device_(device) {
  const auto t0 = Clock::now();
  DeviceGuard guard(device);
  row_ptr_ = DeviceBuffer<Offset>(static_cast<std::size_t>(host.m) + 2);  // + longest_row's key
  row_ptr_.upload(host.row_ptr, static_cast<std::size_t>(host.m) + 1);
  upload_ms_ = ms_since(t0);
}

template <class S>
MatrixSource<S>::~MatrixSource() {
  on_device_noexcept(device_, [&] { row_ptr_ = DeviceBuffer<Offset>(); });
}

template <class S>
Ordinal MatrixSource<S>::longest_row() {
  if (longest_ >= 0) return longest_;
  const auto t0 = Clock::now();
  DeviceGuard guard(device_);
  auto* key = reinterpret_cast<unsigned long long*>(row_ptr_.data() + host_.m + 1);
  longest_ = longest_row_on_device(row_ptr_.data(), host_.m, key, cudaStreamLegacy);
  longest_ms_ = ms_since(t0);
  return longest_;
}

template <class S>
struct MultiDeviceSpmv<S>::Piece {
  part::Block block;
  std::shared_ptr<DeviceCsr<S>> a;      // arrays carved from its device's storage
  std::unique_ptr<DeviceSpmv<S>> spmv;  // null for a block without rows
  Kernel kernel = Kernel::Auto;
  const Offset* row_ptr64 = nullptr;  // the matrix's row pointer at row_begin, on its device
  S* partial = nullptr;               // Merge: alpha * A_piece * x, on its device
  S* inbox = nullptr;                 // Merge, not on device 0: its partial, on device 0
  bool waits = true;                  // for the x entries copied before the kernels
  Event done{true, kReuse}, sent{false, kReuse};  // after its kernel / after its copies
};

template <class S>
struct MultiDeviceSpmv<S>::Dev {
  struct Link {  // Halo: the x entries received from (recvs) or sent to (sends) a peer
    int peer = 0;
    Ordinal count = 0;
    Ordinal* list = nullptr;  // global columns, in this device's memory
    S* buf = nullptr;         // in this device's memory
    bool pull = false;  // this apply: the receiver reads the entries where the owner holds them
  };
  explicit Dev(int d) : device(d) {}
  int device = 0;
  Stream main{kReuse};
  std::vector<Stream> slots;
  Event start{true, kReuse}, kernels_start{true, kReuse}, end{true, kReuse};
  Event first_kernel{true, kReuse};  // an apply: before its first kernel
  Event last_kernel{true, kReuse};   // a replayed apply: after its last kernel
  Event columns{true, kReuse};  // set-up: every column landed, before the Halo lists' selection
  Event arrived{false, kReuse}, x_sent{false, kReuse}, x_in{false, kReuse};
  Event gathered{false, kReuse};
  std::vector<int> pieces;               // plan indices, in stream-slot order
  std::vector<int> order;                // the same, in the order their kernels run
  DeviceBuffer<unsigned char> storage;   // its pieces' CSR arrays and row statistics
  DeviceBuffer<unsigned char> exchange;  // halo lists and buffers, Merge partials and inboxes
  std::vector<Link> sends, recvs;
  // Signals: [0] its epoch (applies so far), [1 + e] raised by owner e, [1 + nd + e] by reader e;
  // null for a device without halo links.
  Flag* flags = nullptr;
  std::vector<int> x_from;    // devices whose copies before the kernels reach this one
  std::vector<int> wait_for;  // pieces whose copies after their kernel reach this one
  // Set-up only: the Halo search's room where the values' is too small, the kernels' scratch.
  std::vector<DeviceBuffer<unsigned char>> scratch;
};

template <class S>
struct MultiDeviceSpmv<S>::Replay {
  Exchange mode;
  std::vector<S*> x, y;
  Owners owners;  // a graph replayed on freed vectors crashes the driver: never launched then
  S alpha, beta;
  MultiGraph graph;                 // every device's steps
  std::vector<MultiGraph> devices;  // or, signalled, each device's alone
};

template <class S>
MultiDeviceSpmv<S>::MultiDeviceSpmv(const CsrPointers<S>& host, const part::PartitionPlan& plan,
                                    const MultiDeviceOptions& o)
    : MultiDeviceSpmv(std::make_shared<MatrixSource<S>>(host, checked_devices(o.devices)), plan,
                      o) {}

template <class S>
MultiDeviceSpmv<S>::MultiDeviceSpmv(std::shared_ptr<MatrixSource<S>> source,
                                    const part::PartitionPlan& plan, const MultiDeviceOptions& o)
    : source_(std::move(source)), plan_(plan) {
  const CsrPointers<S>& host = source_->host();
  m_ = host.m, n_ = host.n;
  if (!part::exchange_applies(plan.scheme, o.exchange))
    throw UnsupportedError(std::string("MultiDeviceSpmv: exchange '") + to_string(o.exchange) +
                           "' does not apply to scheme '" + part::to_string(plan.scheme) + "'");
  if (plan.scheme == Scheme::PCSC)
    throw UnsupportedError("MultiDeviceSpmv: pCSC is not supported (use pcsr or pcoo)");
  if (o.kernel == Kernel::FullOverlap)
    throw UnsupportedError(
        "MultiDeviceSpmv: full-overlap streams the matrix; use a resident kernel");
  part::check_plan(plan, host.row_ptr, host.m, host.n, host.nnz(), "MultiDeviceSpmv");
  if (static_cast<int>(o.devices.size()) != plan.ndevices)
    throw InvalidArgument("MultiDeviceSpmv: " + std::to_string(plan.ndevices) +
                          " devices in the plan but " + std::to_string(o.devices.size()) +
                          " CUDA device ids given");
  checked_devices(o.devices);
  build(o);
}

// Upload: one allocation per device for what it keeps (its pieces' 32-bit row pointers,
// columns and values, Merge's partials and, on device 0, the other devices' partials) and for
// the set-up's own needs (the sums of the pieces' row statistics, together; a copy of their
// rows of the 64-bit row pointer where the source's is on another CUDA device).
template <class S>
struct MultiDeviceSpmv<S>::Layout {
  struct Where {
    std::size_t rp, col, val, rp64, partial, inbox;
  };
  std::vector<Where> where;                                 // per piece: its arrays' byte offsets
  std::vector<std::size_t> sums_at, values_at, values_end;  // per device
  std::vector<DeviceBuffer<unsigned char>> storage;         // per device
};

template <class S>
auto MultiDeviceSpmv<S>::lay_out(const std::vector<int>& devices,
                                 const std::vector<std::vector<int>>& dev_pieces, bool merge) const
    -> Layout {
  const int nd = static_cast<int>(devices.size());
  Layout l;
  l.where.resize(plan_.blocks.size());
  l.sums_at.resize(nd), l.values_at.resize(nd), l.values_end.resize(nd), l.storage.resize(nd);
  for (int d = 0; d < nd; ++d) {
    Carve c;
    const bool staged = devices[d] != source_->device();
    l.sums_at[d] = c.take<ProfileSums>(dev_pieces[d].size());
    for (int p : dev_pieces[d]) {
      const part::Block& b = plan_.blocks[p];
      l.where[p].rp = c.take<DeviceOffset>(b.rows() + 1);
      l.where[p].col = c.take<Ordinal>(b.nnz());
      l.where[p].rp64 = staged ? c.take<Offset>(b.rows() + 1) : 0;
      l.where[p].partial = merge ? c.take<S>(b.rows()) : 0;
    }
    if (d == 0 && merge)
      for (std::size_t p = 0; p < plan_.blocks.size(); ++p)
        l.where[p].inbox = plan_.blocks[p].device != 0 ? c.take<S>(plan_.blocks[p].rows()) : 0;
    l.values_at[d] = c.take<unsigned char>(0);
    for (int p : dev_pieces[d]) l.where[p].val = c.take<S>(plan_.blocks[p].nnz());
    l.values_end[d] = c.size();
    DeviceGuard guard(devices[d]);
    l.storage[d] = DeviceBuffer<unsigned char>(c.size());
  }
  return l;
}

// Set-up (see the header), phase by phase (SetupPhases): one allocation per device; the upload
// started on its own thread (the columns, a chunk at a time, then the values once the Halo
// search's scratch is placed); meanwhile the streams and events, the Halo search's scratch, and
// per device on its main stream the narrowing with the row statistics, each chunk's Halo marks
// once it has landed, the Halo lists, read back with the statistics with one wait per device,
// the Halo links and the kernels planned on the device; the upload's end; the kernels planned on
// the host; one wait per device; the strategy (Auto: timed).
template <class S>
void MultiDeviceSpmv<S>::build(const MultiDeviceOptions& o) {
  const CsrPointers<S>& host = source_->host();
  graphs_ = o.graphs;
  UploadThread::expect();  // it wakes while the allocations are made
  const bool peers = enable_peer_access(o.devices);
  const std::set<int> distinct(o.devices.begin(), o.devices.end());
  signals_ = o.signals && peers && distinct.size() == o.devices.size() &&
             o.devices.size() <= static_cast<std::size_t>(kMaxFlags);
  int nslots = 1;
  for (const auto& b : plan_.blocks) nslots = std::max(nslots, b.stream_slot + 1);
  auto lap = Clock::now();
  const auto phase = [&lap] {  // milliseconds since the previous phase ended
    const double ms = ms_since(lap);
    lap = Clock::now();
    return ms;
  };
  // Each device's pieces (plan indices, in stream-slot order).
  const int nd = static_cast<int>(o.devices.size());
  std::vector<std::vector<int>> dev_pieces(nd);
  for (std::size_t p = 0; p < plan_.blocks.size(); ++p)
    dev_pieces[plan_.blocks[p].device].push_back(static_cast<int>(p));
  for (auto& list : dev_pieces)
    std::stable_sort(list.begin(), list.end(), [&](int p, int q) {
      return plan_.blocks[p].stream_slot < plan_.blocks[q].stream_slot;
    });
  const auto candidates = o.exchange == Exchange::Auto ? part::exchange_candidates(plan_.scheme)
                                                       : std::vector<Exchange>{o.exchange};
  const auto wants = [&](Exchange e) {
    return std::find(candidates.begin(), candidates.end(), e) != candidates.end();
  };

  Layout lay = lay_out(o.devices, dev_pieces, wants(Exchange::Merge));  // outlives the upload
  phases_.allocate = phase();
  std::vector<const Offset*> row_ptr64(plan_.blocks.size());  // each piece's rows of the 64-bit
  for (int d = 0; d < nd; ++d) {                              // row pointer, on its device
    DeviceGuard guard(o.devices[d]);
    for (int p : dev_pieces[d]) {
      const part::Block& b = plan_.blocks[p];
      if (o.devices[d] == source_->device()) {
        row_ptr64[p] = source_->device_row_ptr() + b.row_begin;
        continue;
      }
      row_ptr64[p] = at<Offset>(lay.storage[d], lay.where[p].rp64);
      copy_to_device(at<Offset>(lay.storage[d], lay.where[p].rp64), host.row_ptr + b.row_begin,
                     (b.rows() + 1) * sizeof(Offset));
    }
  }
  const double staged = phase();  // upload, with the columns

  // The upload on a thread of its own: the columns, a chunk at a time, then the values once the
  // Halo search's scratch is placed. Meanwhile this thread makes the streams and events, and
  // queues the set-up's work on the devices: the narrowing with the row statistics at once, the
  // Halo marks of each chunk once it has landed, then the lists and the kernels' plans, so that
  // all of it runs while the matrix crosses.
  struct Chunk {
    int dev;
    int group;  // the piece's index among its device's
    const Ordinal* col;
    Offset count;
  };
  std::vector<Chunk> chunks;
  std::vector<UploadThread::Copy> copies;
  std::vector<std::ptrdiff_t> last_columns(nd, -1);  // each device's last copy of columns
  for (int d = 0; d < nd; ++d)
    for (std::size_t k = 0; k < dev_pieces[d].size(); ++k) {
      const int p = dev_pieces[d][k];
      const part::Block& b = plan_.blocks[p];
      Ordinal* col = at<Ordinal>(lay.storage[d], lay.where[p].col);
      for (Offset e = 0; e < b.nnz(); e += kColumnChunk) {
        const Offset count = std::min(kColumnChunk, b.nnz() - e);
        chunks.push_back({d, static_cast<int>(k), col + e, count});
        copies.push_back(
            {o.devices[d], col + e, host.col + b.nnz_begin + e, count * sizeof(Ordinal)});
        last_columns[d] = static_cast<std::ptrdiff_t>(copies.size()) - 1;
      }
    }
  const std::size_t ncolumns = copies.size();
  for (int d = 0; d < nd; ++d)
    for (int p : dev_pieces[d]) {
      const part::Block& b = plan_.blocks[p];
      copies.push_back({o.devices[d], at<S>(lay.storage[d], lay.where[p].val),
                        host.val + b.nnz_begin, b.nnz() * sizeof(S)});
    }
  UploadThread upload(std::move(copies), ncolumns);
  double waited = 0;  // for the upload's copies

  for (int d = 0; d < nd; ++d) {  // streams and events (new ones take a while)
    DeviceGuard guard(o.devices[d]);
    devs_.push_back(std::make_unique<Dev>(o.devices[d]));
    Dev& dev = *devs_.back();
    dev.storage = std::move(lay.storage[d]);
    dev.pieces = dev_pieces[d];
    for (int s = 0; s < nslots; ++s) dev.slots.emplace_back(kReuse);
  }
  pieces_.resize(plan_.blocks.size());
  for (std::size_t p = 0; p < plan_.blocks.size(); ++p) {
    const part::Block& b = plan_.blocks[p];
    DeviceGuard guard(o.devices[b.device]);
    pieces_[p] = std::make_unique<Piece>();
    pieces_[p]->block = b;
    pieces_[p]->row_ptr64 = row_ptr64[p];
  }
  phases_.streams = phase();

  // The Halo search's scratch, from the pool; where the device has no memory left for it, the
  // values' room, and the values then wait for the lists to leave it.
  const std::size_t spans = part::halo_column_ranges(plan_).size();
  const std::size_t halo_bytes =
      wants(Exchange::Halo) && m_ > 0 && n_ > 0 ? HaloFinder::scratch_bytes(n_, spans) : 0;
  std::vector<unsigned char*> halo_room(nd, nullptr);
  bool values_wait = false;
  for (int d = 0; halo_bytes > 0 && d < nd; ++d) {
    Dev& dev = *devs_[d];
    DeviceGuard guard(dev.device);
    try {
      dev.scratch.emplace_back(halo_bytes, kPooled, dev.main.get());
      halo_room[d] = dev.scratch.back().data();
    } catch (const DeviceOutOfMemory&) {
      if (lay.values_end[d] - lay.values_at[d] < halo_bytes) throw;
      halo_room[d] = dev.storage.data() + lay.values_at[d];
      values_wait = true;
    }
  }
  if (!values_wait) upload.open();

  std::vector<std::unique_ptr<HaloFinder>> finders(nd);
  for (int d = 0; d < nd; ++d) {
    Dev& dev = *devs_[d];
    DeviceGuard guard(dev.device);
    dev.start.record(dev.main.get());
    Offset entries = 0;
    for (std::size_t k = 0; k < dev.pieces.size(); ++k) {
      const int p = dev.pieces[k];
      const part::Block& b = plan_.blocks[p];
      Piece& pc = *pieces_[p];
      if (wants(Exchange::Merge)) pc.partial = at<S>(dev.storage, lay.where[p].partial);
      auto a = std::make_shared<DeviceCsr<S>>();
      a->m = b.rows(), a->n = n_, a->nnz = static_cast<DeviceOffset>(b.nnz());
      a->row_ptr = DeviceBuffer<DeviceOffset>::borrow(
          at<DeviceOffset>(dev.storage, lay.where[p].rp), b.rows() + 1);
      a->col = DeviceBuffer<Ordinal>::borrow(at<Ordinal>(dev.storage, lay.where[p].col), b.nnz());
      a->val = DeviceBuffer<S>::borrow(at<S>(dev.storage, lay.where[p].val), b.nnz());
      pc.a = std::move(a);
      narrow_and_profile(pc.row_ptr64, b.rows(), b.nnz_begin, b.nnz_end, pc.a->row_ptr.data(),
                         at<ProfileSums>(dev.storage, lay.sums_at[d]) + k, dev.main.get());
      entries += b.nnz();
    }
    dev.kernels_start.record(dev.main.get());
    if (halo_room[d])
      finders[d] = std::make_unique<HaloFinder>(n_, part::owned_columns(plan_, d), spans, entries,
                                                halo_room[d], dev.main.get());
  }
  if (wants(Exchange::Merge))
    for (std::size_t p = 0; p < pieces_.size(); ++p)
      if (plan_.blocks[p].device != 0)
        pieces_[p]->inbox = at<S>(devs_[0]->storage, lay.where[p].inbox);
  load_longest_row_kernel_once(source_->device());  // for a later LRA partition, while it crosses
  for (std::size_t k = 0; k < chunks.size(); ++k) {
    const Chunk& c = chunks[k];
    if (!finders[c.dev]) continue;
    DeviceGuard guard(devs_[c.dev]->device);
    waited += upload.then(k, devs_[c.dev]->main.get());
    finders[c.dev]->mark(c.col, c.count, c.group);
  }
  for (int d = 0; d < nd; ++d) {  // the lists and the kernels' plans read every column
    Dev& dev = *devs_[d];
    DeviceGuard guard(dev.device);
    if (last_columns[d] >= 0) waited += upload.landed(last_columns[d]);
  }

  for (int d = 0; d < nd; ++d) {
    Dev& dev = *devs_[d];
    DeviceGuard guard(dev.device);
    dev.columns.record(dev.main.get());
    if (finders[d])
      for (int src = 0, k = 0; src < nd; ++src)
        if (src != d) finders[d]->select(k++, part::owned_columns(plan_, src));
    dev.end.record(dev.main.get());
  }
  std::vector<ProfileSums> sums(pieces_.size());
  halo_counts_.assign(nd, std::vector<Ordinal>(nd, 0));
  if (wants(Exchange::Halo) && halo_bytes == 0)  // no rows or no columns: nothing to read
    x_readers_.assign(pieces_.size(), false);
  for (int d = 0; d < nd; ++d) {
    Dev& dev = *devs_[d];
    DeviceGuard guard(dev.device);
    std::vector<ProfileSums> got(dev.pieces.size());
    KSPMV_CUDA_CHECK(cudaMemcpyAsync(got.data(), at<ProfileSums>(dev.storage, lay.sums_at[d]),
                                     got.size() * sizeof(ProfileSums), cudaMemcpyDeviceToHost,
                                     dev.main.get()));
    if (finders[d]) {
      const auto counts = finders[d]->counts();  // waits for the main stream
      for (int src = 0, k = 0; src < nd; ++src)
        if (src != d) halo_counts_[d][src] = counts[k++];
      x_readers_.resize(pieces_.size());
      for (std::size_t k = 0; k < dev.pieces.size(); ++k)
        x_readers_[dev.pieces[k]] = finders[d]->reads_other(static_cast<int>(k));
    }
    dev.main.synchronize();
    for (std::size_t k = 0; k < got.size(); ++k) sums[dev.pieces[k]] = got[k];
    phases_.profile_device =
        std::max<double>(phases_.profile_device, dev.kernels_start.elapsed_since(dev.start));
    phases_.halo_device = std::max<double>(phases_.halo_device, dev.end.elapsed_since(dev.columns));
  }
  phases_.profile = phase() - waited;

  link_halo(finders);
  if (values_wait) {  // the values, into the Halo search's room once the lists have left it
    for (auto& dev : devs_) {
      DeviceGuard guard(dev->device);
      dev->main.synchronize();
    }
    upload.open();
  }

  finders.clear();
  phases_.halo_links = phase();

  plan_on_devices(o.kernel, sums);
  phases_.kernels = phase();

  for (auto& dev : devs_) {  // the kernels' set-up work is complete, most likely under the upload
    DeviceGuard guard(dev->device);
    dev->main.synchronize();
    dev->scratch.clear();
  }
  phases_.finish = phase();
  upload.finish();
  waited += phase();
  phases_.columns = staged + upload.queued_ms(ncolumns);
  phases_.values = upload.total_ms() - upload.queued_ms(ncolumns);
  phases_.overlap = upload.total_ms() - waited;

  plan_on_host(host);
  phases_.kernels += phase();

  for (auto& dev : devs_) {  // and the host-planned kernels' work
    DeviceGuard guard(dev->device);
    KSPMV_CUDA_CHECK(cudaDeviceSynchronize());
  }
  timings_.assign(nd, DeviceTimings{});
  phases_.finish += phase();
  upload_ms_ = phases_.allocate + phases_.columns + phases_.values;
  setup_ms_ = phases_.streams + phases_.profile + phases_.halo_links + phases_.kernels +
              phases_.finish - phases_.overlap;  // the construction's time beyond the upload's
  if (candidates.size() == 1)
    use(candidates.front());
  else
    tune(candidates);
  source_.reset();  // the pieces are built: the host matrix is not read again
}

// Halo: one allocation per device for the links of each pair (lists and buffers, and the
// flags of Signals); the receiver's list from its finder, the sender's a copy of it.
template <class S>
void MultiDeviceSpmv<S>::link_halo(const std::vector<std::unique_ptr<HaloFinder>>& finders) {
  const int nd = ndevices();
  for (int d = 0; d < nd; ++d) {
    Dev& dev = *devs_[d];
    Carve c;
    std::vector<std::size_t> link_at;
    for (int e = 0; e < nd; ++e) {
      if (halo_counts_[d][e] > 0) dev.recvs.push_back({e, halo_counts_[d][e]});
      if (halo_counts_[e][d] > 0) dev.sends.push_back({e, halo_counts_[e][d]});
    }
    for (auto* links : {&dev.recvs, &dev.sends})
      for (auto& l : *links) {
        link_at.push_back(c.take<Ordinal>(l.count));
        link_at.push_back(c.take<S>(l.count));
      }
    if (c.size() == 0) continue;
    const std::size_t nflags = signals_ ? 1 + 2 * static_cast<std::size_t>(nd) : 0;
    const std::size_t flags_at = c.take<Flag>(nflags);
    DeviceGuard guard(dev.device);
    dev.exchange = DeviceBuffer<unsigned char>(c.size(), kPooled, dev.main.get());
    std::size_t k = 0;
    for (auto* links : {&dev.recvs, &dev.sends})
      for (auto& l : *links) {
        l.list = at<Ordinal>(dev.exchange, link_at[k++]);
        l.buf = at<S>(dev.exchange, link_at[k++]);
      }
    if (nflags > 0) {
      dev.flags = at<Flag>(dev.exchange, flags_at);
      KSPMV_CUDA_CHECK(cudaMemsetAsync(dev.flags, 0, nflags * sizeof(Flag), dev.main.get()));
    }
  }
  for (int d = 0; d < nd; ++d) {
    Dev& dev = *devs_[d];
    DeviceGuard guard(dev.device);
    if (finders[d])
      for (const auto& r : dev.recvs) {
        const int k = r.peer < d ? r.peer : r.peer - 1;  // its list among the other devices'
        finders[d]->copy_list(k, r.list);
        for (const auto& snd : devs_[r.peer]->sends)
          if (snd.peer == d)
            KSPMV_CUDA_CHECK(cudaMemcpyPeerAsync(snd.list, devs_[r.peer]->device, r.list,
                                                 dev.device, r.count * sizeof(Ordinal),
                                                 dev.main.get()));
      }
  }
}

// Kernels, from the row statistics. Those planned on the device come before the values: what
// they queue (cuSPARSE's analysis, which reads the pattern alone) runs on each main stream
// while the values are copied on the legacy one. A kernel that plans on the host reads its
// piece's values, after they are copied. Set-up scratch (cuSPARSE's stand-in vectors) comes
// from one buffer per device, freed once the devices have finished.
template <class S>
void MultiDeviceSpmv<S>::plan_on_devices(Kernel kernel, const std::vector<ProfileSums>& sums) {
  for (std::size_t p = 0; p < pieces_.size(); ++p) {
    Piece& pc = *pieces_[p];
    const part::Block& b = pc.block;
    if (b.rows() == 0) continue;
    const RowProfile profile = to_profile(sums[p], n_);
    pc.kernel = kernel;
    if (pc.kernel == Kernel::Auto) {
      pc.kernel = analysis::auto_kernel(profile.all, sizeof(S));
      if (!kernel_row<S>(pc.kernel).make_on_device) pc.kernel = Kernel::CsrVector;
    }
    const KernelRow<S>& row = kernel_row<S>(pc.kernel);
    if (!row.make_on_device) continue;
    Dev& dev = *devs_[b.device];
    DeviceGuard guard(dev.device);
    const cudaStream_t s = dev.main.get();
    DevicePlanInput in{profile, nullptr, nullptr, s};
    const DeviceOffset* local = pc.a->row_ptr.data();
    in.long_rows = [&in, local, rows = b.rows(), s](Offset threshold, Offset chunk) {
      return plan_long_rows_on_device(local, rows, threshold, long_row_bound(in.profile, threshold),
                                      chunk, s);
    };
    in.scratch = [&dev, s](std::size_t bytes) {
      auto& kept = dev.scratch;
      if (kept.empty() || kept.back().size() < bytes) kept.emplace_back(bytes, kPooled, s);
      return static_cast<void*>(kept.back().data());
    };
    pc.spmv = row.make_on_device(pc.a, in);
  }
}

// An explicit kernel that plans on the host, from a host copy of its piece.
template <class S>
void MultiDeviceSpmv<S>::plan_on_host(const CsrPointers<S>& host) {
  for (auto& pc : pieces_) {
    const part::Block& b = pc->block;
    if (b.rows() == 0 || pc->spmv) continue;
    DeviceGuard guard(devs_[b.device]->device);
    const KernelRow<S>& row = kernel_row<S>(pc->kernel);
    std::vector<Offset> ptr(b.rows() + 1);
    for (Ordinal r = b.row_begin; r <= b.row_end; ++r)
      ptr[r - b.row_begin] = std::clamp(host.row_ptr[r], b.nnz_begin, b.nnz_end) - b.nnz_begin;
    const CsrPointers<S> piece{ptr.data(), host.col + b.nnz_begin, host.val + b.nnz_begin, b.rows(),
                               n_};
    pc->spmv = row.make(row.uses_device_csr ? pc->a : nullptr, piece);
  }
}

// The strategy of `mode`, and who waits for whom in it.
template <class S>
void MultiDeviceSpmv<S>::use(Exchange mode) {
  strategy_ = part::make_strategy(plan_, mode);
  strategy_->set_halo_counts(halo_counts_);
  strategy_->set_x_readers(x_readers_);
  const part::ExchangeStrategy& s = *strategy_;
  const int nd = ndevices();
  steps_ = Steps();
  steps_.halo = s.halo(), steps_.partials = s.partials();
  for (int d = 0; d < nd; ++d) {
    steps_.x_needed.push_back(s.x_needed(d));
    steps_.y_needed.push_back(s.y_needed(d));
    steps_.y_home.push_back(s.y_home(d));
    steps_.scale_first.push_back(s.scale_first(d));
  }
  steps_.before = s.before_kernels();
  for (std::size_t p = 0; p < pieces_.size(); ++p)
    steps_.after.push_back(s.after_block(static_cast<int>(p)));
  steps_.adds = s.at_end();
  steps_.signalled = signals_ && steps_.halo && steps_.before.empty() && steps_.adds.empty() &&
                     std::all_of(steps_.after.begin(), steps_.after.end(),
                                 [](const auto& copies) { return copies.empty(); });
  for (int d = 0; d < nd; ++d) {
    Dev& dev = *devs_[d];
    dev.x_from.clear();
    dev.wait_for.clear();
    for (int e = 0; e < nd; ++e) {
      bool sends = steps_.halo && halo_counts_[d][e] > 0;
      for (const auto& c : steps_.before) sends |= c.src == e && c.dst == d;
      if (sends && e != d) dev.x_from.push_back(e);
    }
    for (std::size_t p = 0; p < pieces_.size(); ++p)
      for (const auto& c : steps_.after[p])
        if (c.dst == d) {
          dev.wait_for.push_back(static_cast<int>(p));
          break;
        }
    dev.order = s.kernel_order(d);
    for (int p : dev.order) pieces_[p]->waits = s.waits_for_x(p);
  }
}

// Exchange::Auto: the tuner's rule over the candidates, each timed by its slowest device's
// events on the executor's own vectors.
template <class S>
void MultiDeviceSpmv<S>::tune(const std::vector<Exchange>& candidates) {
  const auto t0 = Clock::now();
  std::vector<std::string> names;
  for (Exchange e : candidates) names.push_back(to_string(e));
  Tuner tuner("exchange", names);
  staging();
  const std::vector<S> ones(std::max(m_, n_), S(1));
  for (int d = 0; d < ndevices(); ++d) {
    DeviceGuard guard(devs_[d]->device);
    copy_to_device(hx_->data(d), ones.data(), ones.size() * sizeof(S));
  }
  while (!tuner.done()) {
    use(candidates[tuner.current()]);
    run(S(1), pointers(*hx_), S(0), pointers(*hy_));
    double slowest = 0;
    for (const auto& t : timings()) slowest = std::max(slowest, t.total_ms);
    tuner.record(slowest);
  }
  use(candidates[tuner.best()]);
  trials_ = tuner.trials();
  tune_ms_ = ms_since(t0);
}

template <class S>
MultiDeviceSpmv<S>::~MultiDeviceSpmv() {
  for (auto& dev : devs_) on_device_noexcept(dev->device, [&] { dev->main.synchronize(); });
  replays_.clear();
  hx_.reset();
  hy_.reset();
  for (auto& pc : pieces_) on_device_noexcept(devs_[pc->block.device]->device, [&] { pc.reset(); });
  for (auto& dev : devs_) on_device_noexcept(dev->device, [&] { dev.reset(); });
}

template <class S>
int MultiDeviceSpmv<S>::device(int d) const {
  return devs_.at(d)->device;
}

template <class S>
cudaStream_t MultiDeviceSpmv<S>::stream(int d) const {
  return devs_.at(d)->main.get();
}

template <class S>
std::vector<Kernel> MultiDeviceSpmv<S>::block_kernels() const {
  std::vector<Kernel> k;
  for (const auto& pc : pieces_) k.push_back(pc->kernel);
  return k;
}

template <class S>
DistributedVector<S> MultiDeviceSpmv<S>::make_vector(const void* layout) const {
  std::vector<int> ids;
  const std::size_t len = static_cast<std::size_t>(std::max(m_, n_));
  for (const auto& dev : devs_) ids.push_back(dev->device);
  auto storage = std::make_shared<MultiVector<S>>(ids, std::vector<std::size_t>(ids.size(), len));
  std::vector<typename DistributedVector<S>::Part> parts;
  for (int d = 0; d < ndevices(); ++d) parts.push_back({ids[d], storage->data(d), len});
  return DistributedVector<S>(std::move(parts), storage, layout);
}

template <class S>
std::vector<S*> MultiDeviceSpmv<S>::pointers(const DistributedVector<S>& v) const {
  const std::size_t len = static_cast<std::size_t>(std::max(m_, n_));
  bool ok = v.parts() == ndevices();
  for (int d = 0; ok && d < ndevices(); ++d)
    ok = v.part(d).device == devs_[d]->device && v.part(d).size >= len;
  if (!ok) throw InvalidArgument("MultiDeviceSpmv: a vector not laid out for this executor");
  std::vector<S*> p;
  for (int d = 0; d < ndevices(); ++d) p.push_back(v.data(d));
  return p;
}

template <class S>
std::vector<S*> MultiDeviceSpmv<S>::pointers(const MultiVector<S>& v) const {
  std::vector<S*> p;
  for (int d = 0; d < v.ndevices(); ++d) p.push_back(v.data(d));
  return p;
}

template <class S>
void MultiDeviceSpmv<S>::staging() {
  if (hx_) return;
  std::vector<int> ids;
  for (const auto& dev : devs_) ids.push_back(dev->device);
  const std::vector<std::size_t> sizes(ids.size(), static_cast<std::size_t>(std::max(m_, n_)));
  hx_ = std::make_unique<MultiVector<S>>(ids, sizes);
  hy_ = std::make_unique<MultiVector<S>>(ids, sizes);
}

template <class S>
void MultiDeviceSpmv<S>::put(const S* host, const std::vector<S*>& v,
                             const std::vector<std::vector<Span>>& spans) const {
  for (int d = 0; d < ndevices(); ++d) {
    DeviceGuard guard(devs_[d]->device);
    devs_[d]->main.synchronize();  // the vector may be in use there
    for (const Span& s : spans[d])
      copy_to_device(v[d] + s.begin, host + s.begin, s.count * sizeof(S));
  }
}

template <class S>
void MultiDeviceSpmv<S>::upload(const S* host, Ordinal len, const DistributedVector<S>& v) {
  const auto p = pointers(v);
  if (len != n_ && len != m_) throw InvalidArgument("MultiDeviceSpmv::upload: wrong length");
  if (len == n_)
    put(host, p, steps_.x_needed);
  else
    put(host, p, steps_.y_needed);
}

template <class S>
void MultiDeviceSpmv<S>::take(const std::vector<S*>& v, S* host) const {
  for (int d = 0; d < ndevices(); ++d) {
    DeviceGuard guard(devs_[d]->device);
    devs_[d]->main.synchronize();
    for (const Span& s : steps_.y_home[d])
      KSPMV_CUDA_CHECK(
          cudaMemcpy(host + s.begin, v[d] + s.begin, s.count * sizeof(S), cudaMemcpyDeviceToHost));
  }
}

template <class S>
void MultiDeviceSpmv<S>::download(const DistributedVector<S>& v, Ordinal len, S* host) {
  const auto p = pointers(v);
  if (len != m_) throw InvalidArgument("MultiDeviceSpmv::download: y has nrows entries");
  take(p, host);
}

template <class S>
void MultiDeviceSpmv<S>::apply(S alpha, const DistributedVector<S>& x, S beta,
                               const DistributedVector<S>& y) {
  run(alpha, pointers(x), beta, pointers(y), {x.storage(), y.storage()});
}

template <class S>
void MultiDeviceSpmv<S>::apply(S alpha, const S* x, S beta, S* y) {
  staging();
  const auto hx = pointers(*hx_), hy = pointers(*hy_);
  if (alpha != S(0)) put(x, hx, steps_.x_needed);
  if (beta != S(0)) put(y, hy, steps_.y_needed);
  run(alpha, hx, beta, hy);
  take(hy, y);
}

template <class S>
void MultiDeviceSpmv<S>::apply_gathered(S alpha, const S* x, S beta, S* y, cudaStream_t stream) {
  staging();
  const auto hx = pointers(*hx_), hy = pointers(*hy_);
  const int home = devs_[0]->device;
  {
    DeviceGuard guard(home);
    devs_[0]->arrived.record(stream);
  }
  const auto copy_spans = [&](const std::vector<Span>& spans, S* to, const S* from,
                              cudaStream_t s) {
    for (const Span& sp : spans)
      copy_between_devices(to + sp.begin, from + sp.begin, sp.count * sizeof(S), s);
  };
  for (int d = 0; d < ndevices(); ++d) {
    Dev& dev = *devs_[d];
    DeviceGuard guard(dev.device);
    wait(dev.main.get(), devs_[0]->arrived);
    if (alpha != S(0)) copy_spans(steps_.x_needed[d], hx[d], x, dev.main.get());
    if (beta != S(0)) copy_spans(steps_.y_needed[d], hy[d], y, dev.main.get());
  }
  run(alpha, hx, beta, hy);
  for (int d = 0; d < ndevices(); ++d) {
    Dev& dev = *devs_[d];
    DeviceGuard guard(dev.device);
    copy_spans(steps_.y_home[d], y, hy[d], dev.main.get());
    dev.gathered.record(dev.main.get());
  }
  DeviceGuard guard(home);
  for (const auto& dev : devs_) wait(stream, dev->gathered);
}

template <class S>
void MultiDeviceSpmv<S>::peer_copy(const part::Copy& c, const std::vector<S*>& x,
                                   const std::vector<S*>& y, cudaStream_t stream) const {
  copy_between_devices(buffer(c.to, c.dst, c.block, x, y) + c.to_offset,
                       buffer(c.from, c.src, c.block, x, y) + c.from_offset, c.count * sizeof(S),
                       stream);
}

template <class S>
S* MultiDeviceSpmv<S>::buffer(Buffer b, int device, int block, const std::vector<S*>& x,
                              const std::vector<S*>& y) const {
  switch (b) {
    case Buffer::X:
      return x[device];
    case Buffer::Y:
      return y[device];
    case Buffer::Partial:
      return pieces_[block]->partial;
    case Buffer::Inbox:
      return pieces_[block]->inbox;
  }
  return nullptr;
}

template <class S>
void MultiDeviceSpmv<S>::run(S alpha, const std::vector<S*>& x, S beta, const std::vector<S*>& y,
                             const Owners& owners) {
  if (capturing(devs_[0]->main.get())) {  // a step of the caller's graph: timed by the caller
    signalled_ = enqueue(alpha, x, beta, y, Enqueue::CallersGraph);
    pending_ = false;
    return;
  }
  if (const Replay* r = replay(alpha, x, beta, y, owners)) {
    const bool each = !r->devices.empty();
    int launched = 0;  // signalled: the devices whose graph is launched
    try {
      if (!each) r->graph.launch(&devs_[0]->start, &devs_[0]->end);
      for (; each && launched < ndevices(); ++launched)
        r->devices[launched].launch(&devs_[launched]->start, &devs_[launched]->end);
      replayed_ = pending_ = true, signalled_ = each;
      return;
    } catch (const CudaError& e) {
      stop_replays(std::string("replaying the apply failed: ") + e.what());
    }
    if (launched > 0) {  // the other devices step by step: every device's epoch counts the apply
      for (int d = launched; d < ndevices(); ++d)
        enqueue_device(d, alpha, x, beta, y, Enqueue::Streams);
      replayed_ = false, pending_ = signalled_ = true;
      return;
    }
  }
  signalled_ = enqueue(alpha, x, beta, y, Enqueue::Streams);
  replayed_ = false, pending_ = true;
}

// The graph of the apply with these vectors and scalars: a kept one, else a new capture (the
// least recently used dropped beyond kReplays). A kept graph whose vectors were freed is
// dropped, and one is kept only for the same vectors, not for later ones at the same
// addresses. A caller whose applies rarely repeat (more captures than replays after kReplays
// captures) gets its applies enqueued step by step from then on, and so does one whose capture
// fails (replay_note says why).
template <class S>
auto MultiDeviceSpmv<S>::replay(S alpha, const std::vector<S*>& x, S beta, const std::vector<S*>& y,
                                const Owners& owners) -> const Replay* {
  if (!graphs_) return nullptr;
  const auto same = [](S a, S b) { return std::memcmp(&a, &b, sizeof(S)) == 0; };
  const auto same_owner = [](const std::weak_ptr<void>& a, const std::weak_ptr<void>& b) {
    return !a.owner_before(b) && !b.owner_before(a);
  };
  const auto freed = [&](const std::weak_ptr<void>& w) {  // no owner: the executor's staging
    return !same_owner(w, {}) && w.expired();
  };
  for (std::size_t k = 0; k < replays_.size(); ++k) {
    const Replay& r = replays_[k];
    if (r.mode != exchange() || r.x != x || r.y != y || !same_owner(r.owners.x, owners.x) ||
        !same_owner(r.owners.y, owners.y) || !same(r.alpha, alpha) || !same(r.beta, beta))
      continue;
    ++hits_;
    std::rotate(replays_.begin() + k, replays_.begin() + k + 1, replays_.end());
    return &replays_.back();
  }
  if (captures_ >= static_cast<int>(kReplays) && captures_ > hits_) {
    stop_replays("applies replayed " + std::to_string(hits_) + " times for " +
                 std::to_string(captures_) + " captures");
    return nullptr;
  }
  ++captures_;
  // A freed vector's graph never matches (its owner stays distinct), so dropping those waits
  // for a capture: a replayed apply does no more than its lookup.
  replays_.erase(
      std::remove_if(replays_.begin(), replays_.end(),
                     [&](const Replay& r) { return freed(r.owners.x) || freed(r.owners.y); }),
      replays_.end());
  if (replays_.size() == kReplays) replays_.erase(replays_.begin());
  try {
    Replay r{exchange(), x, y, owners, alpha, beta, {}, {}};
    if (signalled(x)) {
      for (int d = 0; d < ndevices(); ++d)
        r.devices.emplace_back(StreamSet{{devs_[d]->device}, {devs_[d]->main.get()}},
                               [&] { enqueue_device(d, alpha, x, beta, y, Enqueue::Graph); });
    } else {
      StreamSet set;
      for (const auto& dev : devs_) set.devices.push_back(dev->device);
      for (const auto& dev : devs_) set.streams.push_back(dev->main.get());
      r.graph = MultiGraph(std::move(set), [&] { enqueue(alpha, x, beta, y, Enqueue::Graph); });
    }
    replays_.push_back(std::move(r));
  } catch (const CudaError& e) {
    stop_replays(std::string("capturing the apply failed: ") + e.what());
    return nullptr;
  }
  return &replays_.back();
}

template <class S>
void MultiDeviceSpmv<S>::stop_replays(const std::string& why) {
  graphs_ = false;
  replay_note_ = why + ": enqueued step by step from now on";
  replays_.clear();
}

// One apply (the steps of the strategy): after every device's earlier work, the rows scaled
// first, the x copies before the kernels on the main streams while the kernels that read none of
// those entries run; the kernels that do once they have arrived; each kernel followed by its
// copies on its stream; the sums at the end. Halo: a device that may read its peer's x
// (device_can_read; always so for virtual devices of one GPU, and over NVLink with peer access)
// loads the entries it receives there with one kernel; else the owner gathers them, copies them
// over and the receiver scatters them (three steps and a wait across devices). A signalled apply
// (see the header) goes device by device. Returns whether it was signalled.
template <class S>
bool MultiDeviceSpmv<S>::enqueue(S alpha, const std::vector<S*>& x, S beta,
                                 const std::vector<S*>& y, Enqueue how) {
  const Steps& s = steps_;
  const int nd = ndevices();
  if (signalled(x)) {
    for (int d = 0; d < nd; ++d) enqueue_device(d, alpha, x, beta, y, how);
    return true;
  }
  const bool graph = how == Enqueue::Graph;
  for (auto& dev : devs_) {
    DeviceGuard guard(dev->device);
    if (!graph) dev->arrived.record(dev->main.get());
    if (s.halo)
      for (auto& r : dev->recvs) r.pull = device_can_read(x[r.peer], dev->device);
  }
  for (int d = 0; d < nd; ++d) {
    Dev& dev = *devs_[d];
    DeviceGuard guard(dev.device);
    for (int e = 0; e < nd && !graph; ++e)  // a graph's fork orders it after the earlier work
      if (e != d) wait(dev.main.get(), devs_[e]->arrived);
    dev.start.record(dev.main.get());
    for (const Span& sp : s.scale_first[d])
      scale_vector(y[d] + sp.begin, sp.count, beta, dev.main.get());
    dev.kernels_start.record(dev.main.get());
  }
  for (int d = 0; d < nd; ++d) {
    Dev& dev = *devs_[d];
    DeviceGuard guard(dev.device);
    for (const auto& c : s.before)
      if (c.src == d) peer_copy(c, x, y, dev.main.get());
    if (s.halo)
      for (const auto& l : dev.sends)
        for (const auto& r : devs_[l.peer]->recvs)
          if (r.peer == d && !r.pull) {
            gather_entries(l.buf, x[d], l.list, l.count, dev.main.get());
            copy_between_devices(r.buf, l.buf, l.count * sizeof(S), dev.main.get());
          }
    dev.x_sent.record(dev.main.get());
  }
  for (int d = 0; d < nd; ++d) {
    Dev& dev = *devs_[d];
    DeviceGuard guard(dev.device);
    const cudaStream_t main = dev.main.get();
    if (s.halo)  // the owners' earlier work is behind `arrived` (or the graph's fork)
      for (const auto& r : dev.recvs)
        if (r.pull) pull_entries(x[d], x[r.peer], r.list, r.count, main);
    for (int e : dev.x_from) {
      bool pulled = s.before.empty();
      for (const auto& r : dev.recvs) pulled &= r.peer != e || r.pull;
      if (!pulled) wait(main, devs_[e]->x_sent);
    }
    if (s.halo)
      for (const auto& r : dev.recvs)
        if (!r.pull) scatter_entries(x[d], r.buf, r.list, r.count, main);
    dev.x_in.record(main);
    enqueue_kernels(d, alpha, x, beta, y, graph);
  }
  for (int d = 0; d < nd; ++d) {
    Dev& dev = *devs_[d];
    DeviceGuard guard(dev.device);
    const cudaStream_t main = dev.main.get();
    for (int p : dev.pieces) wait(main, pieces_[p]->sent);
    for (int p : dev.wait_for) wait(main, pieces_[p]->sent);
    for (const auto& a : s.adds)  // MSREP Alg. 3: split rows get several partials
      if (a.device == d)
        add_vector(y[d] + a.offset, buffer(a.from, a.device, a.block, x, y), a.count, main);
    if (s.halo)  // the caller's next write of x[d] on `main` after its readers' pulls
      for (const auto& l : dev.sends)
        for (const auto& r : devs_[l.peer]->recvs)
          if (r.peer == d && r.pull) wait(main, devs_[l.peer]->x_in);
    dev.end.record(main);
  }
  return false;
}

template <class S>
void MultiDeviceSpmv<S>::enqueue_kernels(int d, S alpha, const std::vector<S*>& x, S beta,
                                         const std::vector<S*>& y, bool graph) {
  Dev& dev = *devs_[d];
  const Event* previous = &dev.kernels_start;
  for (int p : dev.order) {
    Piece& pc = *pieces_[p];
    const cudaStream_t slot = dev.slots[pc.block.stream_slot].get();
    wait(slot, *previous);
    if (pc.waits) wait(slot, dev.x_in);
    if (p == dev.order.front()) {
      if (graph)
        record_in_graph(dev.first_kernel, slot);
      else
        dev.first_kernel.record(slot);
    }
    if (pc.spmv) {
      if (steps_.partials)
        pc.spmv->run(alpha, x[d], S(0), pc.partial, slot);
      else
        pc.spmv->run(alpha, x[d], beta, y[d] + pc.block.row_begin, slot);
    }
    if (graph && p == dev.order.back()) record_in_graph(dev.last_kernel, slot);
    pc.done.record(slot);
    for (const auto& c : steps_.after[p]) peer_copy(c, x, y, slot);
    pc.sent.record(slot);
    previous = &pc.done;
  }
}

template <class S>
bool MultiDeviceSpmv<S>::signalled(const std::vector<S*>& x) const {
  if (!steps_.signalled) return false;
  for (const auto& dev : devs_)
    for (const auto& r : dev->recvs)
      if (!device_can_read(x[r.peer], dev->device)) return false;
  return true;
}

// Gao et al. 2024 §3.2 with the devices ordering themselves (issue 31's put-with-signal), two
// single-thread kernels on the main stream: once the kernels that read no received entry have
// started, the device says its x is ready to its readers (its epoch counts the apply) and waits
// for its owners to say theirs is; it pulls the entries it receives; then, while its other
// kernels run, it tells its owners they have been read and waits until its own readers have
// read, so that the apply ends with x free to be overwritten.
template <class S>
void MultiDeviceSpmv<S>::enqueue_device(int d, S alpha, const std::vector<S*>& x, S beta,
                                        const std::vector<S*>& y, Enqueue how) {
  Dev& dev = *devs_[d];
  DeviceGuard guard(dev.device);
  const cudaStream_t main = dev.main.get();
  const int nd = ndevices();
  FlagSet readers, owners, to_owners, from_readers;
  for (const auto& l : dev.sends) {
    readers.at[readers.count++] = devs_[l.peer]->flags + 1 + d;
    from_readers.at[from_readers.count++] = dev.flags + 1 + nd + l.peer;
  }
  for (const auto& r : dev.recvs) {
    owners.at[owners.count++] = dev.flags + 1 + r.peer;
    to_owners.at[to_owners.count++] = devs_[r.peer]->flags + 1 + nd + d;
  }
  dev.start.record(main);
  for (const Span& sp : steps_.scale_first[d]) scale_vector(y[d] + sp.begin, sp.count, beta, main);
  dev.kernels_start.record(main);
  if (dev.flags) signal_and_wait(dev.flags, true, readers, owners, main);
  for (const auto& r : dev.recvs) pull_entries(x[d], x[r.peer], r.list, r.count, main);
  dev.x_in.record(main);
  enqueue_kernels(d, alpha, x, beta, y, how == Enqueue::Graph);
  if (dev.flags) signal_and_wait(dev.flags, false, to_owners, from_readers, main);
  for (int p : dev.pieces) wait(main, pieces_[p]->sent);
  dev.end.record(main);
}

template <class S>
const std::vector<DeviceTimings>& MultiDeviceSpmv<S>::timings() {
  if (!pending_) return timings_;
  const Dev& first = *devs_[0];
  const bool one_launch = replayed_ && !signalled_;  // first.start and first.end around it
  if (one_launch) first.end.synchronize();
  for (std::size_t d = 0; d < devs_.size(); ++d) {
    const Dev& dev = *devs_[d];
    DeviceTimings& t = timings_[d];
    if (replayed_) {
      if (!one_launch) dev.end.synchronize();
      const Dev& clock = one_launch ? first : dev;
      t.total_ms = clock.end.elapsed_since(clock.start);
      t.kernel_ms = dev.order.empty() ? 0 : dev.last_kernel.elapsed_since(dev.first_kernel);
    } else {
      dev.end.synchronize();
      t.total_ms = dev.end.elapsed_since(dev.start);
      t.kernel_ms =
          dev.order.empty() ? 0 : pieces_[dev.order.back()]->done.elapsed_since(dev.first_kernel);
    }
    t.exchange_ms = std::max(0.0, t.total_ms - t.kernel_ms);
  }
  pending_ = false;
  return timings_;
}

template <class S>
void MultiDeviceSpmv<S>::synchronize() {
  for (auto& dev : devs_) {
    DeviceGuard guard(dev->device);
    dev->main.synchronize();
  }
}

template <class S>
void MultiDeviceSpmv<S>::update_values(const S* values) {
  replays_.clear();  // a kernel may re-plan what its runs read
  for (auto& pc : pieces_) {
    if (!pc->spmv) continue;
    Dev& dev = *devs_[pc->block.device];
    DeviceGuard guard(dev.device);
    dev.main.synchronize();  // no apply still reads the old values
    // After the copy has landed, the kernel refreshes what it derives (or gathers) on `main`.
    copy_to_device(pc->a->val.data(), values + pc->block.nnz_begin, pc->block.nnz() * sizeof(S));
    pc->spmv->update_values(pc->a->val.data(), dev.main.get());
  }
  synchronize();
}

template <class S>
std::vector<double> MultiDeviceSpmv<S>::time_blocks(int runs) {
  staging();
  synchronize();
  const std::vector<S> ones(std::max(m_, n_), S(1));
  for (int d = 0; d < ndevices(); ++d) {
    DeviceGuard guard(devs_[d]->device);
    copy_to_device(hx_->data(d), ones.data(), ones.size() * sizeof(S));
  }
  std::vector<double> ms(pieces_.size(), 0.0);
  for (std::size_t p = 0; p < pieces_.size(); ++p) {
    Piece& pc = *pieces_[p];
    if (!pc.spmv) continue;
    const int d = pc.block.device;
    DeviceGuard guard(devs_[d]->device);
    const cudaStream_t slot = devs_[d]->slots[pc.block.stream_slot].get();
    S* y = pc.partial ? pc.partial : hy_->data(d) + pc.block.row_begin;
    Event start, stop;
    std::vector<double> t;
    for (int r = 0; r <= runs; ++r) {  // the first is a warm-up
      start.record(slot);
      pc.spmv->run(S(1), hx_->data(d), S(0), y, slot);
      stop.record(slot);
      stop.synchronize();
      if (r > 0) t.push_back(stop.elapsed_since(start));
    }
    std::nth_element(t.begin(), t.begin() + t.size() / 2, t.end());
    ms[p] = t.empty() ? 0 : t[t.size() / 2];
  }
  return ms;
}

template <class S>
CgLayout<S> MultiDeviceSpmv<S>::cg_layout(const void* layout) {
  if (!strategy_->iterates_in_place())
    throw UnsupportedError(std::string("cg: the ") + to_string(exchange()) +
                           " exchange does not leave y where the next x is needed");
  CgLayout<S> l;
  l.reduce = !strategy_->replicated();
  l.graphs = graphs_;
  const std::vector<Span> every = m_ > 0 ? std::vector<Span>{{0, m_}} : std::vector<Span>{};
  for (int d = 0; d < ndevices(); ++d)
    l.parts.push_back(
        {devs_[d]->device, devs_[d]->main.get(), l.reduce ? strategy_->y_home(d) : every});
  l.x = make_vector(layout), l.r = make_vector(layout), l.p = make_vector(layout);
  l.q = make_vector(layout);
  l.vector = [this, layout] { return make_vector(layout); };
  l.upload = [this](const S* host, const DistributedVector<S>& v) { upload(host, n_, v); };
  l.download = [this](const DistributedVector<S>& v, S* host) { download(v, m_, host); };
  return l;
}

template class MatrixSource<float>;
template class MatrixSource<double>;
template class MultiDeviceSpmv<float>;
template class MultiDeviceSpmv<double>;

}  // namespace kspmv::cuda
