// The exchange modes as strategies: layout, steps and traffic of AllGather, Merge, Halo and
// AllGatherX, from the plan alone.
#include "partitioners/exchange.hpp"

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "kspmv/core/error.hpp"

namespace kspmv::part {

namespace {

// Sorted, with adjacent or overlapping spans merged and empty ones dropped.
std::vector<Span> merged(std::vector<Span> s) {
  std::sort(s.begin(), s.end(), [](const Span& a, const Span& b) { return a.begin < b.begin; });
  std::vector<Span> out;
  for (const Span& x : s) {
    if (x.count <= 0) continue;
    if (!out.empty() && out.back().begin + out.back().count >= x.begin) {
      const Ordinal end = std::max(out.back().begin + out.back().count, x.begin + x.count);
      out.back().count = end - out.back().begin;
    } else {
      out.push_back(x);
    }
  }
  return out;
}

std::vector<Span> whole(Ordinal len) {
  return len > 0 ? std::vector<Span>{{0, len}} : std::vector<Span>{};
}

// Whether every entry of `inner` lies in `outer` (both merged).
bool covered(const std::vector<Span>& inner, const std::vector<Span>& outer) {
  for (const Span& s : inner) {
    const bool in = std::any_of(outer.begin(), outer.end(), [&](const Span& o) {
      return o.begin <= s.begin && s.begin + s.count <= o.begin + o.count;
    });
    if (!in) return false;
  }
  return true;
}

// Gao et al. 2024, Fig. 2: each Owned block's rows go to every other device after its kernel.
class AllGatherStrategy final : public ExchangeStrategy {
 public:
  explicit AllGatherStrategy(const PartitionPlan& p) : ExchangeStrategy(p, Exchange::AllGather) {}
  std::vector<Span> x_needed(int) const override { return whole(plan_.ncols); }
  std::vector<Span> y_needed(int d) const override { return block_rows(plan_, d, false); }
  std::vector<Span> y_home(int d) const override {
    return d == 0 ? whole(plan_.nrows) : std::vector<Span>{};
  }
  bool replicated() const override { return true; }
  std::vector<Copy> after_block(int b) const override {
    const Block& k = plan_.blocks[b];
    std::vector<Copy> c;
    if (k.role != Role::Owned || k.rows() == 0) return c;
    for (int e = 0; e < plan_.ndevices; ++e)
      if (e != k.device)
        c.push_back({k.device, e, Buffer::Y, Buffer::Y, b, k.row_begin, k.row_begin, k.rows()});
    return c;
  }
};

// MSREP Alg. 3/5/7: partials go to device 0, which scales its y by beta first and adds every
// partial (rows split between two partitions get two) in plan order.
class MergeStrategy final : public ExchangeStrategy {
 public:
  explicit MergeStrategy(const PartitionPlan& p) : ExchangeStrategy(p, Exchange::Merge) {}
  bool partials() const override { return true; }
  std::vector<Span> x_needed(int) const override { return whole(plan_.ncols); }
  std::vector<Span> y_needed(int d) const override {
    return d == 0 ? whole(plan_.nrows) : std::vector<Span>{};
  }
  std::vector<Span> y_home(int d) const override { return y_needed(d); }
  std::vector<Span> scale_first(int d) const override { return y_needed(d); }
  std::vector<Copy> after_block(int b) const override {
    const Block& k = plan_.blocks[b];
    if (k.device == 0 || k.rows() == 0) return {};
    return {{k.device, 0, Buffer::Partial, Buffer::Inbox, b, 0, 0, k.rows()}};
  }
  std::vector<Add> at_end() const override {
    std::vector<Add> a;
    for (std::size_t b = 0; b < plan_.blocks.size(); ++b) {
      const Block& k = plan_.blocks[b];
      if (k.rows() > 0)
        a.push_back({0, static_cast<int>(b), k.device == 0 ? Buffer::Partial : Buffer::Inbox,
                     k.row_begin, k.rows()});
    }
    return a;
  }
};

// Owned rows and x entries (Halo and AllGatherX): y stays with the row owners.
class OwnedStrategy : public ExchangeStrategy {
 public:
  OwnedStrategy(const PartitionPlan& p, Exchange mode) : ExchangeStrategy(p, mode) {}
  std::vector<Span> x_needed(int d) const override { return owned_columns(plan_, d); }
  std::vector<Span> y_needed(int d) const override { return block_rows(plan_, d, false); }
  std::vector<Span> y_home(int d) const override { return block_rows(plan_, d, false); }
};

class HaloStrategy final : public OwnedStrategy {
 public:
  explicit HaloStrategy(const PartitionPlan& p) : OwnedStrategy(p, Exchange::Halo) {}
  bool halo() const override { return true; }
};

// CG(comp), Gao et al. 2024 §5.3: every device's x entries to every other device first.
class AllGatherXStrategy final : public OwnedStrategy {
 public:
  explicit AllGatherXStrategy(const PartitionPlan& p) : OwnedStrategy(p, Exchange::AllGatherX) {}
  std::vector<Copy> before_kernels() const override {
    std::vector<Copy> c;
    for (int d = 0; d < plan_.ndevices; ++d)
      for (const Span& s : x_needed(d))
        for (int e = 0; e < plan_.ndevices; ++e)
          if (e != d) c.push_back({d, e, Buffer::X, Buffer::X, -1, s.begin, s.begin, s.count});
    return c;
  }
};

}  // namespace

bool exchange_applies(Scheme s, Exchange e) {
  const bool msrep = s == Scheme::PCSR || s == Scheme::PCSC || s == Scheme::PCOO;
  switch (e) {
    case Exchange::AllGather:
      return !msrep;
    case Exchange::Merge:
      return s != Scheme::LRARC;
    case Exchange::Halo:
    case Exchange::AllGatherX:
      return !msrep && s != Scheme::LRARC;
    case Exchange::Auto:
      return true;
  }
  return false;
}

std::vector<Exchange> exchange_candidates(Scheme s) {
  std::vector<Exchange> c;
  for (Exchange e : {Exchange::AllGather, Exchange::Merge, Exchange::Halo})
    if (exchange_applies(s, e)) c.push_back(e);
  return c;
}

std::vector<ColumnRange> halo_column_ranges(const PartitionPlan& p) {
  std::vector<ColumnRange> r;
  const Offset m = p.nrows, n = p.ncols;
  if (m == 0 || n == 0) return r;
  const auto first_col = [&](Offset row) { return static_cast<Ordinal>((row * n + m - 1) / m); };
  const auto add = [&](Ordinal r0, Ordinal r1, int owner) {
    const Ordinal c0 = first_col(r0), c1 = first_col(r1);
    if (c0 < c1) r.push_back({c0, c1, owner});
  };
  std::vector<const Block*> blocks;
  for (const Block& b : p.blocks)
    if (b.rows() > 0) blocks.push_back(&b);
  std::sort(blocks.begin(), blocks.end(),
            [](const Block* a, const Block* b) { return a->row_begin < b->row_begin; });
  Ordinal row = 0;
  for (const Block* b : blocks) {
    add(row, b->row_begin, 0);  // rows in no block
    add(b->row_begin, b->row_end, b->device);
    row = b->row_end;
  }
  add(row, p.nrows, 0);
  return r;
}

std::vector<Span> block_rows(const PartitionPlan& p, int d, bool owned_only) {
  std::vector<Span> s;
  for (const Block& b : p.blocks)
    if (b.device == d && (!owned_only || b.role == Role::Owned))
      s.push_back({b.row_begin, b.rows()});
  return merged(std::move(s));
}

std::vector<Span> owned_columns(const PartitionPlan& p, int d) {
  std::vector<Span> s;
  for (const ColumnRange& c : halo_column_ranges(p))
    if (c.owner == d) s.push_back({c.begin, c.end - c.begin});
  return merged(std::move(s));
}

bool ExchangeStrategy::iterates_in_place() const {
  for (int d = 0; d < plan_.ndevices; ++d) {
    const std::vector<Span> held = replicated() ? whole(plan_.nrows) : y_home(d);
    if (!covered(merged(x_needed(d)), held)) return false;
  }
  return true;
}

void ExchangeStrategy::set_halo_counts(std::vector<std::vector<Ordinal>> counts) {
  halo_ = std::move(counts);
}

Ordinal ExchangeStrategy::halo_count(int dst, int src) const {
  if (static_cast<std::size_t>(dst) >= halo_.size()) return 0;
  const auto& row = halo_[dst];
  return static_cast<std::size_t>(src) < row.size() ? row[src] : 0;
}

void ExchangeStrategy::set_x_readers(std::vector<bool> reads) {
  if (!reads.empty() && reads.size() != plan_.blocks.size())
    throw InvalidArgument("set_x_readers: " + std::to_string(reads.size()) + " flags for " +
                          std::to_string(plan_.blocks.size()) + " blocks");
  x_readers_ = std::move(reads);
}

bool ExchangeStrategy::waits_for_x(int b) const {
  if (!halo() && before_kernels().empty()) return false;
  return x_readers_.empty() || x_readers_.at(static_cast<std::size_t>(b));
}

std::vector<int> ExchangeStrategy::kernel_order(int d) const {
  std::vector<int> order;
  for (std::size_t b = 0; b < plan_.blocks.size(); ++b)
    if (plan_.blocks[b].device == d) order.push_back(static_cast<int>(b));
  std::vector<bool> waits(plan_.blocks.size());
  for (int b : order) waits[b] = waits_for_x(b);
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) {
    if (waits[a] != waits[b]) return !waits[a];
    return plan_.blocks[a].stream_slot < plan_.blocks[b].stream_slot;
  });
  return order;
}

std::vector<DeviceTraffic> ExchangeStrategy::traffic(std::size_t scalar_bytes) const {
  std::vector<DeviceTraffic> t(plan_.ndevices);
  const auto count = [&](int src, int dst, Ordinal entries) {
    t[src].bytes_sent += entries * scalar_bytes;
    t[dst].bytes_received += entries * scalar_bytes;
  };
  for (const Copy& c : before_kernels()) count(c.src, c.dst, c.count);
  for (std::size_t b = 0; b < plan_.blocks.size(); ++b)
    for (const Copy& c : after_block(static_cast<int>(b))) count(c.src, c.dst, c.count);
  if (halo())
    for (int dst = 0; dst < plan_.ndevices; ++dst)
      for (int src = 0; src < plan_.ndevices; ++src) count(src, dst, halo_count(dst, src));
  return t;
}

std::size_t ExchangeStrategy::bytes(std::size_t scalar_bytes) const {
  std::size_t sent = 0;
  for (const DeviceTraffic& t : traffic(scalar_bytes)) sent += t.bytes_sent;
  return sent;
}

std::unique_ptr<ExchangeStrategy> make_strategy(const PartitionPlan& plan, Exchange mode) {
  if (mode == Exchange::Auto || !exchange_applies(plan.scheme, mode))
    throw UnsupportedError(std::string("exchange '") + to_string(mode) +
                           "' does not apply to scheme '" + to_string(plan.scheme) + "'");
  switch (mode) {
    case Exchange::AllGather:
      return std::make_unique<AllGatherStrategy>(plan);
    case Exchange::Merge:
      return std::make_unique<MergeStrategy>(plan);
    case Exchange::Halo:
      return std::make_unique<HaloStrategy>(plan);
    default:
      return std::make_unique<AllGatherXStrategy>(plan);
  }
}

std::vector<HaloVolume> halo_volumes(const PartitionPlan& p, const Offset* row_ptr,
                                     const Ordinal* col_idx) {
  if (!exchange_applies(p.scheme, Exchange::Halo))
    throw InvalidArgument(std::string("halo_volumes: Halo does not apply to ") +
                          to_string(p.scheme));
  const int nd = p.ndevices;
  std::vector<HaloVolume> v(static_cast<std::size_t>(nd));
  std::vector<int> owner(static_cast<std::size_t>(p.ncols));
  for (const ColumnRange& c : halo_column_ranges(p)) {
    std::fill(owner.begin() + c.begin, owner.begin() + c.end, c.owner);
    v[c.owner].owned += c.end - c.begin;
  }
  // Each device's blocks together, so that `seen` (the last device that read a column) counts
  // every column once per device.
  std::vector<const Block*> blocks;
  for (const Block& b : p.blocks) blocks.push_back(&b);
  std::stable_sort(blocks.begin(), blocks.end(),
                   [](const Block* a, const Block* b) { return a->device < b->device; });
  std::vector<int> seen(static_cast<std::size_t>(p.ncols), -1);
  std::vector<char> link(static_cast<std::size_t>(nd) * nd, 0);  // link[src * nd + dst]
  for (const Block* b : blocks) {
    const int d = b->device;
    v[d].rows += b->rows();
    v[d].nnz += b->nnz();
    for (Offset k = row_ptr[b->row_begin]; k < row_ptr[b->row_end]; ++k) {
      const Ordinal j = col_idx[k];
      const int o = owner[j];
      if (o == d || seen[j] == d) continue;
      seen[j] = d;
      ++v[d].received;
      ++v[o].sent;
      link[static_cast<std::size_t>(o) * nd + d] = 1;
    }
  }
  for (int s = 0; s < nd; ++s)
    for (int d = 0; d < nd; ++d)
      if (link[static_cast<std::size_t>(s) * nd + d]) ++v[s].targets, ++v[d].sources;
  return v;
}

}  // namespace kspmv::part
