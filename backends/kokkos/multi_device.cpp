// Sequential emulation of the multi-device executor: local pieces, then the steps of the
// exchange strategy on each device's vectors.
#include "backends/kokkos/multi_device.hpp"

#include <algorithm>
#include <limits>
#include <utility>

#include "kspmv/core/error.hpp"
#include "kspmv/core/timer.hpp"
#include "kspmv/formats/convert.hpp"
#include "kspmv/formats/value_refresh.hpp"

namespace kspmv::host {

namespace {

using part::Buffer;
using part::Scheme;
using part::Span;

using Acc = double;  // partial sums in double for both scalars, as the host kernels do

template <class S>
S scaled(S beta, S y) {
  return beta == S(0) ? S(0) : beta * y;
}

}  // namespace

template <class S>
MultiDeviceHost<S>::MultiDeviceHost(const CsrMatrix<S>& a, const part::PartitionPlan& plan,
                                    Exchange exchange)
    : plan_(plan) {
  if (!exchange_applies(plan.scheme, exchange))
    throw UnsupportedError(std::string("MultiDeviceHost: exchange '") + to_string(exchange) +
                           "' does not apply to scheme '" + part::to_string(plan.scheme) + "'");
  const Ordinal m = a.nrows, n = a.ncols;
  const bool pcsc = plan.scheme == Scheme::PCSC;
  // pCSC partitions the CSC of A (Alg. 4): its pieces take columns, rows and values from there.
  const CscMatrix<S> csc = pcsc ? to_csc(a) : CscMatrix<S>();
  if (pcsc) csc_order_ = csc_order(a);
  const Offset* ptr = pcsc ? csc.col_ptr.data() : a.row_ptr.data();
  const Ordinal* idx = pcsc ? csc.row_idx.data() : a.col_idx.data();
  const S* val = pcsc ? csc.values.data() : a.values.data();
  part::check_plan(plan, ptr, m, n, a.nnz(), "MultiDeviceHost");

  for (const auto& b : plan.blocks) {
    Piece pc;
    pc.block = b;
    const Ordinal l0 = pcsc ? b.col_begin : b.row_begin, l1 = pcsc ? b.col_end : b.row_end;
    pc.idx.assign(idx + b.nnz_begin, idx + b.nnz_end);
    pc.val.assign(val + b.nnz_begin, val + b.nnz_end);
    if (plan.scheme == Scheme::PCOO) {  // Alg. 6: the piece's own (local) row indices
      for (Ordinal r = l0; r < l1; ++r)
        for (Offset e = std::max(ptr[r], b.nnz_begin); e < std::min(ptr[r + 1], b.nnz_end); ++e)
          pc.rows.push_back(r - l0);
    } else {  // Alg. 2/4: local pointer = pointer - start_idx, clamped to the piece's range
      for (Ordinal l = l0; l <= l1; ++l)
        pc.ptr.push_back(std::clamp(ptr[l], b.nnz_begin, b.nnz_end) - b.nnz_begin);
    }
    pc.partial.resize(b.rows());
    if (b.device != 0) pc.inbox.resize(b.rows());
    pieces_.push_back(std::move(pc));
  }
  devices_.resize(plan.ndevices);
  const std::size_t len = static_cast<std::size_t>(std::max(m, n));
  for (auto& dev : devices_) dev.x.resize(len), dev.y.resize(len);

  const bool auto_mode = exchange == Exchange::Auto;
  const auto candidates =
      auto_mode ? part::exchange_candidates(plan.scheme) : std::vector<Exchange>{exchange};
  if (std::find(candidates.begin(), candidates.end(), Exchange::Halo) != candidates.end())
    find_halo(a);
  if (!auto_mode) {
    use(exchange);
    return;
  }
  std::vector<std::string> names;
  for (Exchange e : candidates) names.push_back(to_string(e));
  Tuner tuner("exchange", names);
  std::vector<S> x(n, S(1)), y(m);
  while (!tuner.done()) {  // a steady clock times each candidate's apply
    use(candidates[tuner.current()]);
    const auto t0 = Clock::now();
    apply(S(1), x.data(), S(0), y.data());
    tuner.record(ms_since(t0));
  }
  use(candidates[tuner.best()]);
  trials_ = tuner.trials();
}

template <class S>
void MultiDeviceHost<S>::use(Exchange mode) {
  strategy_ = part::make_strategy(plan_, mode);
  strategy_->set_x_readers(x_readers_);
  if (!strategy_->halo()) return;
  std::vector<std::vector<Ordinal>> counts(halo_.size());
  for (std::size_t d = 0; d < halo_.size(); ++d)
    for (const auto& list : halo_[d]) counts[d].push_back(static_cast<Ordinal>(list.size()));
  strategy_->set_halo_counts(std::move(counts));
}

// Halo: device d receives from each owner the x entries its pieces read that the owner holds
// (part::owned_columns), in increasing order; and which pieces read any.
template <class S>
void MultiDeviceHost<S>::find_halo(const CsrMatrix<S>& a) {
  const int nd = plan_.ndevices;
  std::vector<int> owner(a.ncols, 0);
  for (const part::ColumnRange& r : part::halo_column_ranges(plan_))
    std::fill(owner.begin() + r.begin, owner.begin() + r.end, r.owner);
  x_readers_.clear();
  for (const Piece& pc : pieces_)
    x_readers_.push_back(std::any_of(pc.idx.begin(), pc.idx.end(),
                                     [&](Ordinal j) { return owner[j] != pc.block.device; }));
  std::vector<char> read(a.ncols);
  halo_.assign(nd, std::vector<std::vector<Ordinal>>(nd));
  for (int d = 0; d < nd; ++d) {
    std::fill(read.begin(), read.end(), 0);
    for (const Piece& pc : pieces_)
      if (pc.block.device == d)
        for (Ordinal j : pc.idx) read[j] = 1;
    for (int src = 0; src < nd; ++src) {
      if (src == d) continue;
      for (const Span& s : part::owned_columns(plan_, src))
        for (Ordinal j = s.begin; j < s.begin + s.count; ++j)
          if (read[j]) halo_[d][src].push_back(j);
    }
  }
}

template <class S>
std::vector<S> MultiDeviceHost<S>::device_y(int d) const {
  const std::vector<S>& y = devices_.at(d).y;
  if (strategy_->replicated()) return std::vector<S>(y.begin(), y.begin() + plan_.nrows);
  std::vector<S> rows;
  for (const Span& s : strategy_->y_home(d))
    rows.insert(rows.end(), y.begin() + s.begin, y.begin() + s.begin + s.count);
  return rows;
}

template <class S>
std::vector<Ordinal> MultiDeviceHost<S>::halo_columns(int d) const {
  std::vector<Ordinal> cols;
  if (halo_.empty() || !strategy_->halo()) return cols;
  for (const auto& list : halo_.at(d)) cols.insert(cols.end(), list.begin(), list.end());
  return cols;
}

template <class S>
void MultiDeviceHost<S>::update_values(const S* csr_values) {
  for (auto& pc : pieces_) {
    const Offset begin = pc.block.nnz_begin, count = pc.block.nnz_end - begin;
    if (csc_order_.extent(0) > 0)
      gather_values(csc_order_.data() + begin, count, csr_values, pc.val.data());
    else
      std::copy(csr_values + begin, csr_values + begin + count, pc.val.data());
  }
}

// partial = alpha * A_piece * x.
template <class S>
void MultiDeviceHost<S>::compute(Piece& pc, S alpha, const std::vector<S>& x) const {
  if (alpha == S(0)) {  // A is not read (cuSPARSE semantics)
    std::fill(pc.partial.begin(), pc.partial.end(), S(0));
    return;
  }
  std::vector<Acc> acc(pc.partial.size(), Acc(0));
  if (plan_.scheme == Scheme::PCOO) {  // Alg. 7
    for (std::size_t e = 0; e < pc.val.size(); ++e)
      acc[pc.rows[e]] += Acc(pc.val[e]) * Acc(x[pc.idx[e]]);
  } else if (plan_.scheme == Scheme::PCSC) {  // Alg. 5: column c scatters into a full-length y
    for (std::size_t c = 0; c + 1 < pc.ptr.size(); ++c) {
      const Acc xc = x[pc.block.col_begin + c];
      for (Offset e = pc.ptr[c]; e < pc.ptr[c + 1]; ++e) acc[pc.idx[e]] += Acc(pc.val[e]) * xc;
    }
  } else {  // CSR on the local row pointer (Alg. 3)
    for (std::size_t i = 0; i < acc.size(); ++i)
      for (Offset e = pc.ptr[i]; e < pc.ptr[i + 1]; ++e)
        acc[i] += Acc(pc.val[e]) * Acc(x[pc.idx[e]]);
  }
  for (std::size_t i = 0; i < acc.size(); ++i) pc.partial[i] = static_cast<S>(alpha * acc[i]);
}

template <class S>
S* MultiDeviceHost<S>::buffer(Buffer b, int device, int block) {
  switch (b) {
    case Buffer::X:
      return devices_[device].x.data();
    case Buffer::Y:
      return devices_[device].y.data();
    case Buffer::Partial:
      return pieces_[block].partial.data();
    case Buffer::Inbox:
      return pieces_[block].inbox.data();
  }
  return nullptr;
}

template <class S>
void MultiDeviceHost<S>::run(S alpha, S beta) {
  const part::ExchangeStrategy& s = *strategy_;
  const auto copy = [&](const part::Copy& c) {
    const S* from = buffer(c.from, c.src, c.block) + c.from_offset;
    std::copy(from, from + c.count, buffer(c.to, c.dst, c.block) + c.to_offset);
  };
  for (int d = 0; d < plan_.ndevices; ++d)
    for (const Span& sp : s.scale_first(d))
      for (Ordinal i = sp.begin; i < sp.begin + sp.count; ++i)
        devices_[d].y[i] = scaled(beta, devices_[d].y[i]);
  const auto kernel = [&](int b) {
    Piece& pc = pieces_[b];
    Device& dev = devices_[pc.block.device];
    compute(pc, alpha, dev.x);
    if (!s.partials())
      for (Ordinal k = 0; k < pc.block.rows(); ++k) {
        S& t = dev.y[pc.block.row_begin + k];
        t = scaled(beta, t) + pc.partial[k];
      }
    for (const auto& c : s.after_block(b)) copy(c);
  };
  // The blocks that read no received x entry first, before the copies: an entry a device has
  // not received yet is NaN here.
  for (int d = 0; d < plan_.ndevices; ++d)
    for (int b : s.kernel_order(d))
      if (!s.waits_for_x(b)) kernel(b);
  for (const auto& c : s.before_kernels()) copy(c);
  if (s.halo())  // gather on the owner, copy, scatter: one step here
    for (int dst = 0; dst < plan_.ndevices; ++dst)
      for (int src = 0; src < plan_.ndevices; ++src)
        for (Ordinal j : halo_[dst][src]) devices_[dst].x[j] = devices_[src].x[j];
  for (int d = 0; d < plan_.ndevices; ++d)
    for (int b : s.kernel_order(d))
      if (s.waits_for_x(b)) kernel(b);
  for (const auto& a : s.at_end()) {
    const S* from = buffer(a.from, a.device, a.block);
    S* y = devices_[a.device].y.data() + a.offset;
    for (Ordinal k = 0; k < a.count; ++k) y[k] += from[k];
  }
}

template <class S>
void MultiDeviceHost<S>::apply(S alpha, const S* x, S beta, S* y) {
  const part::ExchangeStrategy& s = *strategy_;
  const S nan = std::numeric_limits<S>::quiet_NaN();
  for (int d = 0; d < plan_.ndevices; ++d) {  // only what the strategy says each device holds
    Device& dev = devices_[d];
    std::fill(dev.x.begin(), dev.x.end(), nan);
    std::fill(dev.y.begin(), dev.y.end(), nan);
    for (const Span& sp : s.x_needed(d))
      std::copy(x + sp.begin, x + sp.begin + sp.count, dev.x.begin() + sp.begin);
    if (beta != S(0))
      for (const Span& sp : s.y_needed(d))
        std::copy(y + sp.begin, y + sp.begin + sp.count, dev.y.begin() + sp.begin);
  }
  run(alpha, beta);
  for (int d = 0; d < plan_.ndevices; ++d)
    for (const Span& sp : s.y_home(d))
      std::copy(devices_[d].y.begin() + sp.begin, devices_[d].y.begin() + sp.begin + sp.count,
                y + sp.begin);
}

namespace {

template <class S>
class MultiDeviceOperator final : public OperatorImpl<S> {
 public:
  MultiDeviceOperator(const CsrMatrix<S>& a, const Options& o) {
    const auto t0 = Clock::now();
    const part::Scheme scheme = o.partition;
    const int nd = static_cast<int>(o.devices.size());
    const auto plan = scheme == Scheme::PCSC
                          ? part::partition_pcsc(to_csc(a).col_ptr.data(), a.nrows, a.ncols, nd)
                          : part::partition(a.row_ptr.data(), a.nrows, a.ncols,
                                            {scheme, nd, o.d_l, o.d_c, o.chunks});
    timings_.partition_ms = ms_since(t0);
    md_ = std::make_unique<MultiDeviceHost<S>>(a, plan, o.exchange);
    timings_.preprocess_ms = ms_since(t0);
    timings_.trials = md_->trials();
    timings_.exchange_bytes = md_->strategy().bytes(sizeof(S));
  }
  void apply_host(S alpha, const S* x, S beta, S* y) override {
    const auto t0 = Clock::now();
    md_->apply(alpha, x, beta, y);
    timings_.total_ms = timings_.kernel_ms = ms_since(t0);
  }
  // New values (CSR order of the matrix) in every piece; the plan and exchange are kept.
  void update_values(const S* csr_order_values, bool) override {
    md_->update_values(csr_order_values);
  }
  Kernel kernel() const override { return Kernel::Csr; }
  Timings timings() const override { return timings_; }

 private:
  std::unique_ptr<MultiDeviceHost<S>> md_;
  Timings timings_;
};

}  // namespace

template <class S>
std::unique_ptr<OperatorImpl<S>> make_multi_operator(const CsrMatrix<S>& a, const Options& o) {
  return std::make_unique<MultiDeviceOperator<S>>(a, o);
}

template class MultiDeviceHost<float>;
template class MultiDeviceHost<double>;
template std::unique_ptr<OperatorImpl<float>> make_multi_operator(const CsrMatrix<float>&,
                                                                  const Options&);
template std::unique_ptr<OperatorImpl<double>> make_multi_operator(const CsrMatrix<double>&,
                                                                   const Options&);

}  // namespace kspmv::host
