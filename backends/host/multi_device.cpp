// Sequential emulation of the multi-device executor: local pieces, partial results, exchanges.
#include "backends/host/multi_device.hpp"

#include <algorithm>
#include <chrono>
#include <numeric>
#include <utility>

#include "kspmv/core/error.hpp"
#include "kspmv/core/timer.hpp"
#include "kspmv/formats/convert.hpp"
#include "kspmv/formats/value_refresh.hpp"

namespace kspmv::host {

namespace {

using part::Role;
using part::Scheme;

using Acc = double;  // partial sums in double for both scalars, as the host kernels do

template <class S>
S scaled(S beta, S y) {
  return beta == S(0) ? S(0) : beta * y;
}

}  // namespace

template <class S>
MultiDeviceHost<S>::MultiDeviceHost(const CsrMatrix<S>& a, const part::PartitionPlan& plan,
                                    Exchange exchange)
    : exchange_(exchange), plan_(plan) {
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
  if (exchange_ == Exchange::Auto) {  // the candidate that sends the fewest bytes
    std::size_t fewest = 0;
    for (Exchange e : part::exchange_candidates(plan.scheme)) {
      const MultiDeviceHost candidate(a, plan, e);
      std::size_t bytes = 0;
      for (const auto& t : candidate.exchange_bytes()) bytes += t.bytes_received;
      if (exchange_ == Exchange::Auto || bytes < fewest) exchange_ = e, fewest = bytes;
    }
  }

  devices_.resize(plan.ndevices);
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
    pc.partial.resize(pcsc ? m : b.rows());
    devices_[b.device].pieces.push_back(std::move(pc));
  }

  traffic_.assign(plan.ndevices, DeviceTraffic{});
  const std::size_t nd = devices_.size();
  if (exchange_ == Exchange::AllGather) {
    std::vector<std::size_t> owned(nd, 0);
    for (std::size_t d = 0; d < nd; ++d) {
      devices_[d].y.resize(m);
      for (const auto& pc : devices_[d].pieces)
        if (pc.block.role == Role::Owned) owned[d] += pc.block.rows() * sizeof(S);
    }
    const std::size_t total = std::accumulate(owned.begin(), owned.end(), std::size_t{0});
    for (std::size_t d = 0; d < nd; ++d) traffic_[d] = {owned[d] * (nd - 1), total - owned[d]};
  } else if (exchange_ == Exchange::Merge) {
    devices_[0].y.resize(m);
    for (std::size_t d = 1; d < nd; ++d)
      for (const auto& pc : devices_[d].pieces) {
        traffic_[d].bytes_sent += pc.partial.size() * sizeof(S);
        traffic_[0].bytes_received += pc.partial.size() * sizeof(S);
      }
  } else {
    setup_halo(a);
  }
}

// Row owner: the device of the Owned block holding the row. x entry j belongs to the owner of
// row j*m/n (row j of a square matrix). Each device's x = its owned entries, then the entries it
// receives grouped by owner; its y = its owned rows in increasing order. Column indices of its
// pieces are renumbered into its x.
template <class S>
void MultiDeviceHost<S>::setup_halo(const CsrMatrix<S>& a) {
  const Ordinal m = a.nrows, n = a.ncols;
  std::vector<int> row_owner(m, 0);
  for (std::size_t d = 0; d < devices_.size(); ++d) {
    auto& pieces = devices_[d].pieces;
    std::sort(pieces.begin(), pieces.end(),
              [](const Piece& p, const Piece& q) { return p.block.row_begin < q.block.row_begin; });
    Ordinal offset = 0;
    for (auto& pc : pieces) {
      pc.y_offset = offset;
      offset += pc.block.rows();
      for (Ordinal r = pc.block.row_begin; r < pc.block.row_end; ++r)
        row_owner[r] = static_cast<int>(d);
    }
    devices_[d].y.resize(offset);
  }
  const auto x_owner = [&](Ordinal j) {
    return row_owner[static_cast<Ordinal>(static_cast<Offset>(j) * m / n)];
  };
  if (m > 0)
    for (Ordinal j = 0; j < n; ++j) devices_[x_owner(j)].owned_cols.push_back(j);

  std::vector<Ordinal> local(n);
  for (std::size_t d = 0; d < devices_.size(); ++d) {
    Device& dev = devices_[d];
    std::fill(local.begin(), local.end(), -1);
    for (std::size_t k = 0; k < dev.owned_cols.size(); ++k)
      local[dev.owned_cols[k]] = static_cast<Ordinal>(k);
    for (const auto& pc : dev.pieces)
      for (Ordinal j : pc.idx)
        if (local[j] < 0) dev.halo_cols.push_back(j);
    std::sort(dev.halo_cols.begin(), dev.halo_cols.end(), [&](Ordinal i, Ordinal j) {
      return std::make_pair(x_owner(i), i) < std::make_pair(x_owner(j), j);
    });
    dev.halo_cols.erase(std::unique(dev.halo_cols.begin(), dev.halo_cols.end()),
                        dev.halo_cols.end());
    for (std::size_t k = 0; k < dev.halo_cols.size(); ++k) {
      const Ordinal j = dev.halo_cols[k];
      const int src = x_owner(j);
      const auto& src_cols = devices_[src].owned_cols;
      local[j] = static_cast<Ordinal>(dev.owned_cols.size() + k);
      dev.halo_src.push_back(src);
      dev.halo_src_pos.push_back(static_cast<Ordinal>(
          std::lower_bound(src_cols.begin(), src_cols.end(), j) - src_cols.begin()));
      traffic_[src].bytes_sent += sizeof(S);
      traffic_[d].bytes_received += sizeof(S);
    }
    for (auto& pc : dev.pieces)
      for (Ordinal& j : pc.idx) j = local[j];
    dev.x.resize(dev.owned_cols.size() + dev.halo_cols.size());
  }
}

template <class S>
void MultiDeviceHost<S>::update_values(const S* csr_values) {
  for (auto& dev : devices_)
    for (auto& pc : dev.pieces) {
      const Offset begin = pc.block.nnz_begin, count = pc.block.nnz_end - begin;
      if (csc_order_.extent(0) > 0)
        gather_values(csc_order_.data() + begin, count, csr_values, pc.val.data());
      else
        std::copy(csr_values + begin, csr_values + begin + count, pc.val.data());
    }
}

template <class S>
void MultiDeviceHost<S>::compute_partials(S alpha) {
  const bool pcsc = plan_.scheme == Scheme::PCSC, pcoo = plan_.scheme == Scheme::PCOO;
  std::vector<Acc> acc;
  for (auto& dev : devices_) {
    const S* x = dev.x.data();
    for (auto& pc : dev.pieces) {
      if (alpha == S(0)) {  // A is not read (cuSPARSE semantics)
        std::fill(pc.partial.begin(), pc.partial.end(), S(0));
        continue;
      }
      acc.assign(pc.partial.size(), Acc(0));
      if (pcoo) {  // Alg. 7
        for (std::size_t e = 0; e < pc.val.size(); ++e)
          acc[pc.rows[e]] += Acc(pc.val[e]) * Acc(x[pc.idx[e]]);
      } else if (pcsc) {  // Alg. 5: column c scatters val * x[col_begin + c] into a full-length y
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
  }
}

template <class S>
void MultiDeviceHost<S>::apply(S alpha, const S* x, S beta, S* y) {
  const Ordinal m = plan_.nrows, n = plan_.ncols;
  // Upload x: a replica everywhere, or (Halo) each device's owned entries then its halo.
  for (auto& dev : devices_) {
    if (exchange_ == Exchange::Halo) {
      for (std::size_t k = 0; k < dev.owned_cols.size(); ++k) dev.x[k] = x[dev.owned_cols[k]];
    } else {
      dev.x.assign(x, x + n);
    }
  }
  for (auto& dev : devices_)
    for (std::size_t k = 0; k < dev.halo_cols.size(); ++k)
      dev.x[dev.owned_cols.size() + k] = devices_[dev.halo_src[k]].x[dev.halo_src_pos[k]];

  compute_partials(alpha);

  if (exchange_ == Exchange::AllGather) {
    for (auto& dev : devices_) {
      dev.y.assign(y, y + m);
      for (const auto& pc : dev.pieces)
        for (Ordinal k = 0; k < pc.block.rows(); ++k) {
          S& t = dev.y[pc.block.row_begin + k];
          t = scaled(beta, t) + pc.partial[k];
        }
    }
    for (auto& src : devices_)  // owned rows to every other device; redundant rows stay
      for (const auto& pc : src.pieces) {
        if (pc.block.role != Role::Owned) continue;
        for (auto& dst : devices_)
          if (&dst != &src)
            std::copy(src.y.begin() + pc.block.row_begin, src.y.begin() + pc.block.row_end,
                      dst.y.begin() + pc.block.row_begin);
      }
    std::copy(devices_[0].y.begin(), devices_[0].y.end(), y);
  } else if (exchange_ == Exchange::Merge) {
    // beta*y once per row on device 0, then every partial (split rows: several) added.
    auto& root = devices_[0].y;
    for (Ordinal i = 0; i < m; ++i) root[i] = scaled(beta, y[i]);
    for (const auto& dev : devices_)
      for (const auto& pc : dev.pieces)
        for (std::size_t k = 0; k < pc.partial.size(); ++k)
          root[pc.block.row_begin + k] += pc.partial[k];
    std::copy(root.begin(), root.end(), y);
  } else {
    for (auto& dev : devices_)
      for (const auto& pc : dev.pieces)
        for (Ordinal k = 0; k < pc.block.rows(); ++k)
          dev.y[pc.y_offset + k] = scaled(beta, y[pc.block.row_begin + k]) + pc.partial[k];
    for (const auto& dev : devices_)
      for (const auto& pc : dev.pieces)
        std::copy(dev.y.begin() + pc.y_offset, dev.y.begin() + pc.y_offset + pc.block.rows(),
                  y + pc.block.row_begin);
  }
}

namespace {

template <class S>
class MultiDeviceOperator final : public OperatorImpl<S> {
 public:
  MultiDeviceOperator(const CsrMatrix<S>& a, const Options& o) {
    const auto t0 = std::chrono::steady_clock::now();
    const part::Scheme scheme = part::parse_scheme(o.partition);
    const int nd = static_cast<int>(o.devices.size());
    const auto plan =
        scheme == Scheme::PCSC
            ? part::partition_pcsc(to_csc(a).col_ptr.data(), a.nrows, a.ncols, nd)
            : part::partition(a.row_ptr.data(), a.nrows, a.ncols, {scheme, nd, o.d_l, o.d_c});
    md_ = std::make_unique<MultiDeviceHost<S>>(a, plan, parse_exchange(o.exchange));
    timings_.preprocess_ms = ms_since(t0);
  }
  void apply_host(S alpha, const S* x, S beta, S* y) override {
    const auto t0 = std::chrono::steady_clock::now();
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
