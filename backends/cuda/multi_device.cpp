// The multi-GPU executor: local pieces, halo setup, and the asynchronous apply (one host thread,
// streams and events per device). The bookkeeping mirrors backends/host/multi_device.cpp.
#include "backends/cuda/multi_device.hpp"

#include <algorithm>
#include <chrono>
#include <numeric>
#include <string>
#include <utility>

#include "backends/cuda/cuda_operator.hpp"
#include "backends/cuda/halo_setup.hpp"
#include "backends/cuda/vector_ops.hpp"
#include "kspmv/analysis/kernel_choice.hpp"
#include "kspmv/core/timer.hpp"

namespace kspmv::cuda {

using part::Exchange;
using part::Role;
using part::Scheme;

namespace {

// Runs f with `device` current, for destructors: errors are ignored, never thrown.
template <class F>
void on_device_noexcept(int device, F&& f) noexcept {
  int previous = 0;
  const bool switched =
      cudaGetDevice(&previous) == cudaSuccess && cudaSetDevice(device) == cudaSuccess;
  f();
  if (switched) cudaSetDevice(previous);
}

void wait(cudaStream_t s, const Event& e) {
  KSPMV_CUDA_CHECK(cudaStreamWaitEvent(s, e.get(), 0));
}

// Enables peer access between every pair of distinct devices that supports it.
void enable_peer_access(const std::vector<int>& devices) {
  for (int a : devices)
    for (int b : devices) {
      if (a == b) continue;
      int can = 0;
      KSPMV_CUDA_CHECK(cudaDeviceCanAccessPeer(&can, a, b));
      if (!can) continue;  // cudaMemcpyPeerAsync stages through host memory
      DeviceGuard guard(a);
      const cudaError_t code = cudaDeviceEnablePeerAccess(b, 0);
      if (code == cudaErrorPeerAccessAlreadyEnabled)
        cudaGetLastError();
      else
        check(code, "cudaDeviceEnablePeerAccess");
    }
}

}  // namespace

template <class S>
MultiVector<S>::MultiVector(const std::vector<int>& devices, const std::vector<std::size_t>& sizes)
    : devices_(devices) {
  if (sizes.size() != devices.size())
    throw InvalidArgument("MultiVector: one size per device is needed");
  for (std::size_t d = 0; d < devices.size(); ++d) {
    DeviceGuard guard(devices[d]);
    bufs_.emplace_back(sizes[d]);
  }
}

template <class S>
MultiVector<S>::~MultiVector() {
  for (std::size_t d = 0; d < bufs_.size(); ++d)
    on_device_noexcept(devices_[d], [&] { bufs_[d] = DeviceBuffer<S>(); });
}

template <class S>
struct MultiDeviceSpmv<S>::Piece {
  part::Block block;
  std::shared_ptr<DeviceCsr<S>> a;      // the block's non-zero range of the matrix
  std::unique_ptr<DeviceSpmv<S>> spmv;  // null for a block without rows
  Kernel kernel = Kernel::Auto;
  DeviceBuffer<S> partial;  // Merge: alpha * A_piece * x, on the block's device
  DeviceBuffer<S> recv;     // Merge, block not on device 0: its partial received on device 0
  Ordinal y_offset = 0;     // where its rows start in the device's y (Halo: owned layout)
  Event done, sent{false};  // after its kernel / after its sends, on the block's device
};

template <class S>
struct MultiDeviceSpmv<S>::Dev {
  struct Send {  // Halo: the x entries one other device receives from this one
    int dst = 0;
    Ordinal offset = 0, count = 0;  // where they go in dst's x
    DeviceBuffer<Ordinal> idx;      // their positions in this device's x
    DeviceBuffer<S> buf;
  };
  int device = 0;
  Stream main;
  std::vector<Stream> slots;
  Event start, kernels_start, end;
  Event ready{false}, shared{false};
  std::vector<int> pieces;  // indices into pieces_, in stream-slot order
  std::vector<Ordinal> owned_rows, owned_cols;
  std::size_t halo = 0, local_size = 0;
  std::vector<Send> sends;
};

template <class S>
MultiDeviceSpmv<S>::MultiDeviceSpmv(const CsrPointers<S>& host, const part::PartitionPlan& plan,
                                    const MultiDeviceOptions& o)
    : plan_(plan), exchange_(o.exchange), m_(host.m), n_(host.n) {
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
  const int count = device_count();
  for (int dev : o.devices)
    if (dev < 0 || dev >= count)
      throw InvalidArgument("MultiDeviceSpmv: CUDA device " + std::to_string(dev) +
                            " does not exist (" + std::to_string(count) + " devices)");
  enable_peer_access(o.devices);
  if (exchange_ == Exchange::Auto) {  // one candidate executor alive at a time
    for (Exchange e : part::exchange_candidates(plan.scheme)) {
      MultiDeviceOptions c = o;
      c.exchange = e;
      trials_.push_back({e, MultiDeviceSpmv(host, plan, c).time_apply(o.use)});
    }
    exchange_ = std::min_element(trials_.begin(), trials_.end(), [](const auto& a, const auto& b) {
                  return a.ms < b.ms;
                })->exchange;
  }

  int nslots = 1;
  for (const auto& b : plan.blocks) nslots = std::max(nslots, b.stream_slot + 1);
  for (int dev : o.devices) {
    DeviceGuard guard(dev);
    devs_.push_back(std::make_unique<Dev>());
    devs_.back()->device = dev;
    devs_.back()->slots.resize(nslots);
  }
  const std::size_t nd = devs_.size();
  const Ordinal m = m_, n = n_;

  // Local layout. AllGather / Merge: x and y replicated, a piece writes y[row_begin..]. Halo
  // (as MultiDeviceHost::setup_halo): a device's y = its rows in increasing order; x entry j
  // belongs to the owner of row j*m/n; its x = owned entries, then received ones by owner.
  for (std::size_t i = 0; i < plan.blocks.size(); ++i)
    devs_[plan.blocks[i].device]->pieces.push_back(i);
  std::vector<Ordinal> y_offset(plan.blocks.size(), 0);
  for (auto& dev : devs_) {
    auto by_row = dev->pieces;
    std::sort(by_row.begin(), by_row.end(),
              [&](int p, int q) { return plan.blocks[p].row_begin < plan.blocks[q].row_begin; });
    Ordinal offset = 0;
    for (int p : by_row) {
      const auto& b = plan.blocks[p];
      if (exchange_ == Exchange::Halo) {
        y_offset[p] = offset;
        offset += b.rows();
      } else {
        y_offset[p] = b.row_begin;
      }
      if (b.role == Role::Owned)
        for (Ordinal r = b.row_begin; r < b.row_end; ++r) dev->owned_rows.push_back(r);
    }
    std::stable_sort(dev->pieces.begin(), dev->pieces.end(), [&](int p, int q) {
      return plan.blocks[p].stream_slot < plan.blocks[q].stream_slot;
    });
    dev->local_size = std::max(m, n);
  }
  const auto ranges = exchange_ == Exchange::Halo ? part::halo_column_ranges(plan)
                                                  : std::vector<part::ColumnRange>{};
  for (const auto& c : ranges)
    for (Ordinal j = c.begin; j < c.end; ++j) devs_[c.owner]->owned_cols.push_back(j);

  // One local CSR piece per block (MSREP Alg. 2: local row_ptr = row_ptr - start_idx); Halo
  // pieces arrive with global columns, which the halo setup renumbers on their devices.
  std::vector<DeviceCsr<S>> uploaded(plan.blocks.size());
  std::vector<std::vector<Offset>> ptrs(plan.blocks.size());
  for (std::size_t p = 0; p < plan.blocks.size(); ++p) {
    const auto& b = plan.blocks[p];
    if (b.rows() == 0) continue;
    ptrs[p].resize(b.rows() + 1);
    for (Ordinal r = b.row_begin; r <= b.row_end; ++r)
      ptrs[p][r - b.row_begin] = std::clamp(host.row_ptr[r], b.nnz_begin, b.nnz_end) - b.nnz_begin;
    DeviceGuard guard(devs_[b.device]->device);
    uploaded[p] = DeviceCsr<S>::upload(
        {ptrs[p].data(), host.col + b.nnz_begin, host.val + b.nnz_begin, b.rows(), n});
  }
  if (!ranges.empty()) setup_halo(ranges, uploaded);  // Halo with m, n > 0

  pieces_.resize(plan.blocks.size());
  for (std::size_t p = 0; p < plan.blocks.size(); ++p) {
    const auto& b = plan.blocks[p];
    Dev& dev = *devs_[b.device];
    DeviceGuard guard(dev.device);
    auto pc = std::make_unique<Piece>();
    pc->block = b;
    pc->y_offset = y_offset[p];
    if (b.rows() > 0) {
      pc->kernel =
          o.kernel == Kernel::Auto
              ? analysis::auto_kernel(analysis::row_stats(ptrs[p].data(), b.rows(), uploaded[p].n),
                                      sizeof(S))
              : o.kernel;
      // Kernels that build their own arrays on the host read the (renumbered) columns there.
      std::vector<Ordinal> cols;
      if (exchange_ == Exchange::Halo && kernel_row<S>(pc->kernel).info.reads_host_entries) {
        cols.resize(b.nnz());
        if (!cols.empty()) uploaded[p].col.download(cols.data());
      }
      const CsrPointers<S> piece{ptrs[p].data(),
                                 exchange_ == Exchange::Halo ? cols.data() : host.col + b.nnz_begin,
                                 host.val + b.nnz_begin, b.rows(), uploaded[p].n};
      pc->a = std::make_shared<DeviceCsr<S>>(std::move(uploaded[p]));
      pc->spmv = make_device_spmv<S>(pc->kernel, pc->a, piece);
      if (exchange_ == Exchange::Merge) {
        pc->partial = DeviceBuffer<S>(b.rows());
        if (b.device != 0) {
          DeviceGuard root(devs_[0]->device);
          pc->recv = DeviceBuffer<S>(b.rows());
        }
      }
    }
    pieces_[p] = std::move(pc);
  }
  for (auto& dev : devs_) {
    DeviceGuard guard(dev->device);
    KSPMV_CUDA_CHECK(cudaDeviceSynchronize());  // kernels' setup work is complete
  }
  timings_.assign(nd, DeviceTimings{});
}

// Halo: each device finds, on the GPU, the x entries its pieces read from other devices, numbers
// them after its owned entries (by owner, then column) and renumbers its pieces' columns; each
// owner gets the positions it sends. The devices work concurrently; halo_setup_ms_ is the host
// time of the whole step.
template <class S>
void MultiDeviceSpmv<S>::setup_halo(const std::vector<part::ColumnRange>& ranges,
                                    std::vector<DeviceCsr<S>>& uploaded) {
  const auto start = Clock::now();
  const int nd = ndevices();
  std::vector<std::unique_ptr<HaloSetup>> setups;
  for (int d = 0; d < nd; ++d) {
    Dev& dev = *devs_[d];
    DeviceGuard guard(dev.device);
    setups.push_back(std::make_unique<HaloSetup>(ranges, d, nd, n_, dev.main.get()));
    for (int p : dev.pieces) setups[d]->mark(uploaded[p].col.data(), uploaded[p].nnz);
    setups[d]->number();
  }
  for (int d = 0; d < nd; ++d) {
    Dev& dev = *devs_[d];
    DeviceGuard guard(dev.device);
    HaloSetup& h = *setups[d];
    h.finish();
    for (int p : dev.pieces) {
      h.renumber(uploaded[p].col.data(), uploaded[p].nnz);
      uploaded[p].n = h.owned() + h.received();
    }
    dev.halo = static_cast<std::size_t>(h.received());
    dev.local_size = std::max<std::size_t>(h.owned() + dev.halo, dev.owned_rows.size());
    for (int src = 0; src < nd; ++src) {
      if (src == d || h.received_from(src) == 0) continue;
      typename Dev::Send s;
      s.dst = d;
      s.offset = h.owned() + h.first_received(src);
      s.count = h.received_from(src);
      {
        DeviceGuard owner(devs_[src]->device);
        s.idx = DeviceBuffer<Ordinal>(s.count);
        s.buf = DeviceBuffer<S>(s.count);
      }
      KSPMV_CUDA_CHECK(cudaMemcpyPeerAsync(s.idx.data(), devs_[src]->device, h.positions(src),
                                           dev.device, s.idx.bytes(), dev.main.get()));
      devs_[src]->sends.push_back(std::move(s));
    }
  }
  for (int d = 0; d < nd; ++d) {  // the release of their buffers is part of the cost
    DeviceGuard guard(devs_[d]->device);
    devs_[d]->main.synchronize();
    setups[d].reset();
  }
  halo_setup_ms_ = ms_since(start);
}

template <class S>
MultiDeviceSpmv<S>::~MultiDeviceSpmv() {
  hx_.reset();
  hy_.reset();
  for (auto& pc : pieces_) {
    on_device_noexcept(devs_[0]->device, [&] { pc->recv = DeviceBuffer<S>(); });
    on_device_noexcept(devs_[pc->block.device]->device, [&] { pc.reset(); });
  }
  for (auto& dev : devs_) on_device_noexcept(dev->device, [&] { dev.reset(); });
}

template <class S>
const std::vector<Ordinal>& MultiDeviceSpmv<S>::owned_rows(int d) const {
  return devs_.at(d)->owned_rows;
}

template <class S>
int MultiDeviceSpmv<S>::device(int d) const {
  return devs_.at(d)->device;
}

template <class S>
std::size_t MultiDeviceSpmv<S>::halo_size(int d) const {
  return devs_.at(d)->halo;
}

template <class S>
std::vector<Kernel> MultiDeviceSpmv<S>::block_kernels() const {
  std::vector<Kernel> k;
  for (const auto& pc : pieces_) k.push_back(pc->kernel);
  return k;
}

template <class S>
std::size_t MultiDeviceSpmv<S>::exchange_bytes() const {
  std::size_t entries = 0;
  const std::size_t nd = devs_.size();
  for (const auto& pc : pieces_) {
    if (exchange_ == Exchange::AllGather && pc->block.role == Role::Owned)
      entries += pc->block.rows() * (nd - 1);
    if (exchange_ == Exchange::Merge && pc->block.device != 0) entries += pc->block.rows();
  }
  for (const auto& dev : devs_) entries += dev->halo;
  return entries * sizeof(S);
}

template <class S>
MultiVector<S> MultiDeviceSpmv<S>::make_vector() const {
  std::vector<int> ids;
  std::vector<std::size_t> sizes;
  for (const auto& dev : devs_) {
    ids.push_back(dev->device);
    sizes.push_back(dev->local_size);
  }
  return MultiVector<S>(ids, sizes);
}

template <class S>
void MultiDeviceSpmv<S>::check_vector(const MultiVector<S>& v, const char* name) const {
  bool ok = v.ndevices() == ndevices();
  for (int d = 0; ok && d < ndevices(); ++d)
    ok = v.device(d) == devs_[d]->device && v.size(d) >= devs_[d]->local_size;
  if (!ok)
    throw InvalidArgument(std::string("MultiDeviceSpmv: ") + name +
                          " is not laid out for this executor (use make_vector())");
}

template <class S>
void MultiDeviceSpmv<S>::upload(const S* host, Ordinal len, MultiVector<S>& v) const {
  check_vector(v, "the vector");
  if (len != m_ && len != n_) throw InvalidArgument("MultiDeviceSpmv::upload: wrong length");
  std::vector<S> owned;
  for (int d = 0; d < ndevices(); ++d) {
    const Dev& dev = *devs_[d];
    DeviceGuard guard(dev.device);
    if (exchange_ != Exchange::Halo) {
      copy_to_device(v.data(d), host, len * sizeof(S));
      continue;
    }
    // m == n gives owned_cols == owned_rows; otherwise the length says which one.
    const auto& idx = len == n_ ? dev.owned_cols : dev.owned_rows;
    owned.resize(idx.size());
    for (std::size_t k = 0; k < idx.size(); ++k) owned[k] = host[idx[k]];
    copy_to_device(v.data(d), owned.data(), owned.size() * sizeof(S));
  }
}

template <class S>
void MultiDeviceSpmv<S>::download(const MultiVector<S>& v, Ordinal len, S* host) const {
  check_vector(v, "the vector");
  if (exchange_ != Exchange::Halo) {
    DeviceGuard guard(devs_[0]->device);
    if (len) KSPMV_CUDA_CHECK(cudaMemcpy(host, v.data(0), len * sizeof(S), cudaMemcpyDeviceToHost));
    return;
  }
  if (len != m_) throw InvalidArgument("MultiDeviceSpmv::download: Halo vectors hold y rows");
  std::vector<S> owned;
  for (int d = 0; d < ndevices(); ++d) {
    const Dev& dev = *devs_[d];
    DeviceGuard guard(dev.device);
    owned.resize(dev.owned_rows.size());
    if (!owned.empty())
      KSPMV_CUDA_CHECK(
          cudaMemcpy(owned.data(), v.data(d), owned.size() * sizeof(S), cudaMemcpyDeviceToHost));
    for (std::size_t k = 0; k < owned.size(); ++k) host[dev.owned_rows[k]] = owned[k];
  }
}

template <class S>
void MultiDeviceSpmv<S>::apply(S alpha, const S* x, S beta, S* y) {
  if (!hx_) {
    hx_ = std::make_unique<MultiVector<S>>(make_vector());
    hy_ = std::make_unique<MultiVector<S>>(make_vector());
  }
  if (alpha != S(0) && n_ > 0) upload(x, n_, *hx_);
  if (beta != S(0) && m_ > 0) {
    if (exchange_ == Exchange::Merge) {  // only device 0 reads y
      DeviceGuard guard(devs_[0]->device);
      copy_to_device(hy_->data(0), y, m_ * sizeof(S));
    } else {
      upload(y, m_, *hy_);
    }
  }
  run(alpha, *hx_, beta, *hy_, true);
  download(*hy_, m_, y);
}

template <class S>
void MultiDeviceSpmv<S>::update_values(const S* values) {
  for (auto& pc : pieces_) {
    if (!pc->spmv) continue;
    Dev& dev = *devs_[pc->block.device];
    DeviceGuard guard(dev.device);
    // After the copy has landed, the kernel refreshes what it derives (or gathers) on `main`.
    pc->a->val.upload(values + pc->block.nnz_begin);
    pc->spmv->update_values(pc->a->val.data(), dev.main.get());
  }
  for (auto& dev : devs_) {
    DeviceGuard guard(dev->device);
    dev->main.synchronize();
  }
}

template <class S>
void MultiDeviceSpmv<S>::apply(S alpha, const MultiVector<S>& x, S beta, MultiVector<S>& y) {
  check_vector(x, "x");
  check_vector(y, "y");
  run(alpha, x, beta, y, true);
}

template <class S>
void MultiDeviceSpmv<S>::apply_local(S alpha, const MultiVector<S>& x, S beta, MultiVector<S>& y) {
  if (exchange_ != Exchange::AllGather)
    throw UnsupportedError("MultiDeviceSpmv::apply_local needs the allgather exchange");
  check_vector(x, "x");
  check_vector(y, "y");
  run(alpha, x, beta, y, false);
}

// One apply: (Halo) x entries sent to the devices that need them; every device's kernels in
// slot order; each block's y sent after its kernel (AllGather) or its partial merged on device
// 0 (Merge, MSREP Alg. 3); the host waits for each device's `end` event.
template <class S>
void MultiDeviceSpmv<S>::run(S alpha, const MultiVector<S>& x, S beta, MultiVector<S>& y,
                             bool exchange_y) {
  const std::size_t nd = devs_.size();
  const bool allgather = exchange_ == Exchange::AllGather, merge = exchange_ == Exchange::Merge;
  for (auto& dev : devs_) {
    DeviceGuard guard(dev->device);
    dev->ready.record(cudaStreamLegacy);  // the caller's default-stream work comes first
    wait(dev->main.get(), dev->ready);
    dev->start.record(dev->main.get());
  }
  if (merge && exchange_y) {  // beta applied once, on device 0 (kernels write partials)
    DeviceGuard guard(devs_[0]->device);
    scale_vector(y.data(0), m_, beta, devs_[0]->main.get());
  }
  if (exchange_ == Exchange::Halo) {
    for (std::size_t s = 0; s < nd; ++s) {
      Dev& src = *devs_[s];
      DeviceGuard guard(src.device);
      for (auto& snd : src.sends) {
        gather_entries(snd.buf.data(), x.data(s), snd.idx.data(), snd.count, src.main.get());
        KSPMV_CUDA_CHECK(cudaMemcpyPeerAsync(x.data(snd.dst) + snd.offset, devs_[snd.dst]->device,
                                             snd.buf.data(), src.device, snd.count * sizeof(S),
                                             src.main.get()));
      }
      src.shared.record(src.main.get());
    }
    for (std::size_t d = 0; d < nd; ++d) {
      DeviceGuard guard(devs_[d]->device);
      for (std::size_t s = 0; s < nd; ++s)
        for (const auto& snd : devs_[s]->sends)
          if (snd.dst == static_cast<int>(d)) {
            wait(devs_[d]->main.get(), devs_[s]->shared);
            break;
          }
    }
  }
  for (std::size_t d = 0; d < nd; ++d) {
    Dev& dev = *devs_[d];
    DeviceGuard guard(dev.device);
    dev.kernels_start.record(dev.main.get());
    const Event* previous = &dev.kernels_start;
    for (int p : dev.pieces) {
      Piece& pc = *pieces_[p];
      const cudaStream_t s = dev.slots[pc.block.stream_slot].get();
      wait(s, *previous);
      if (pc.spmv) {
        if (merge)
          pc.spmv->run(alpha, x.data(d), S(0), pc.partial.data(), s);
        else
          pc.spmv->run(alpha, x.data(d), beta, y.data(d) + pc.y_offset, s);
      }
      pc.done.record(s);
      previous = &pc.done;
      const std::size_t bytes = pc.block.rows() * sizeof(S);
      if (!exchange_y || bytes == 0) continue;
      if (allgather && pc.block.role == Role::Owned) {  // Gao et al. 2024 Fig. 2
        for (std::size_t e = 0; e < nd; ++e)
          if (e != d)
            KSPMV_CUDA_CHECK(cudaMemcpyPeerAsync(y.data(e) + pc.block.row_begin, devs_[e]->device,
                                                 y.data(d) + pc.block.row_begin, dev.device, bytes,
                                                 s));
      } else if (merge && d != 0) {
        KSPMV_CUDA_CHECK(cudaMemcpyPeerAsync(pc.recv.data(), devs_[0]->device, pc.partial.data(),
                                             dev.device, bytes, s));
      }
      pc.sent.record(s);
    }
  }
  const auto sent_or_done = [&](const Piece& pc) -> const Event& {
    const bool sends =
        exchange_y && pc.block.rows() > 0 &&
        ((allgather && pc.block.role == Role::Owned) || (merge && pc.block.device != 0));
    return sends ? pc.sent : pc.done;
  };
  for (std::size_t d = 0; d < nd; ++d) {
    Dev& dev = *devs_[d];
    DeviceGuard guard(dev.device);
    const cudaStream_t s = dev.main.get();
    for (int p : dev.pieces) wait(s, sent_or_done(*pieces_[p]));
    if (allgather && exchange_y) {  // rows received from the others
      for (const auto& pc : pieces_)
        if (pc->block.device != static_cast<int>(d) && pc->block.role == Role::Owned &&
            pc->block.rows() > 0)
          wait(s, pc->sent);
    }
    if (merge && exchange_y && d == 0) {  // MSREP Alg. 3: split rows get several partials
      for (const auto& pc : pieces_) {
        if (pc->block.rows() == 0) continue;
        wait(s, sent_or_done(*pc));
        add_vector(y.data(0) + pc->block.row_begin,
                   pc->block.device == 0 ? pc->partial.data() : pc->recv.data(), pc->block.rows(),
                   s);
      }
    }
    dev.end.record(s);
  }
  for (auto& dev : devs_) dev->end.synchronize();
  collect_timings();
}

template <class S>
double MultiDeviceSpmv<S>::time_apply(part::ExchangeUse use) {
  auto x = make_vector(), y = make_vector();
  const std::vector<S> ones(n_, S(1));
  upload(ones.data(), n_, x);
  std::vector<double> ms;
  for (int i = 0; i <= kAutoExchangeTrials; ++i) {  // the first is a warm-up
    const auto t0 = Clock::now();
    run(S(1), x, S(0), y, true);
    if (use == part::ExchangeUse::Iterative && exchange_ == Exchange::Merge) broadcast(y);
    if (i > 0) ms.push_back(ms_since(t0));
  }
  std::nth_element(ms.begin(), ms.begin() + ms.size() / 2, ms.end());
  return ms[ms.size() / 2];
}

template <class S>
void MultiDeviceSpmv<S>::collect_timings() {
  for (std::size_t d = 0; d < devs_.size(); ++d) {
    const Dev& dev = *devs_[d];
    DeviceTimings& t = timings_[d];
    t.total_ms = dev.end.elapsed_since(dev.start);
    t.kernel_ms =
        dev.pieces.empty() ? 0 : pieces_[dev.pieces.back()]->done.elapsed_since(dev.kernels_start);
    t.exchange_ms = std::max(0.0, t.total_ms - t.kernel_ms);
  }
}

template <class S>
void MultiDeviceSpmv<S>::share_owned_rows(MultiVector<S>& v) {
  if (exchange_ != Exchange::AllGather)
    throw UnsupportedError("MultiDeviceSpmv::share_owned_rows needs the allgather exchange");
  check_vector(v, "the vector");
  const std::size_t nd = devs_.size();
  for (std::size_t d = 0; d < nd; ++d) {
    Dev& dev = *devs_[d];
    DeviceGuard guard(dev.device);
    const cudaStream_t s = dev.main.get();
    dev.ready.record(cudaStreamLegacy);
    wait(s, dev.ready);
    for (int p : dev.pieces) {
      const auto& b = pieces_[p]->block;
      if (b.role != Role::Owned || b.rows() == 0) continue;
      for (std::size_t e = 0; e < nd; ++e)
        if (e != d)
          KSPMV_CUDA_CHECK(cudaMemcpyPeerAsync(v.data(e) + b.row_begin, devs_[e]->device,
                                               v.data(d) + b.row_begin, dev.device,
                                               b.rows() * sizeof(S), s));
    }
    dev.shared.record(s);
  }
  for (auto& dev : devs_) dev->shared.synchronize();
}

template <class S>
void MultiDeviceSpmv<S>::broadcast(MultiVector<S>& v) {
  if (exchange_ == Exchange::Halo)
    throw UnsupportedError("MultiDeviceSpmv::broadcast: Halo vectors are not replicated");
  check_vector(v, "the vector");
  Dev& root = *devs_[0];
  DeviceGuard guard(root.device);
  const cudaStream_t s = root.main.get();
  root.ready.record(cudaStreamLegacy);
  wait(s, root.ready);
  const std::size_t bytes = static_cast<std::size_t>(std::max(m_, n_)) * sizeof(S);
  for (int e = 1; e < ndevices(); ++e)
    if (bytes)
      KSPMV_CUDA_CHECK(
          cudaMemcpyPeerAsync(v.data(e), devs_[e]->device, v.data(0), root.device, bytes, s));
  root.main.synchronize();
}

template class MultiVector<float>;
template class MultiVector<double>;
template class MultiDeviceSpmv<float>;
template class MultiDeviceSpmv<double>;

}  // namespace kspmv::cuda
