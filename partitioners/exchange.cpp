#include "partitioners/exchange.hpp"

#include <algorithm>
#include <string>
#include <vector>

#include "kspmv/core/error.hpp"

namespace kspmv::part {

const char* to_string(Exchange e) {
  switch (e) {
    case Exchange::AllGather:
      return "allgather";
    case Exchange::Merge:
      return "merge";
    case Exchange::Halo:
      return "halo";
    case Exchange::Auto:
      return "auto";
  }
  return "?";
}

Exchange parse_exchange(const std::string& name) {
  for (Exchange e : {Exchange::AllGather, Exchange::Merge, Exchange::Halo, Exchange::Auto})
    if (name == to_string(e)) return e;
  throw InvalidArgument("unknown exchange '" + name + "' (valid: allgather, merge, halo, auto)");
}

bool exchange_applies(Scheme s, Exchange e) {
  const bool msrep = s == Scheme::PCSR || s == Scheme::PCSC || s == Scheme::PCOO;
  switch (e) {
    case Exchange::AllGather:
      return !msrep;
    case Exchange::Merge:
      return s != Scheme::LRARC;
    case Exchange::Halo:
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
    if (c0 < c1) r.push_back({c0, c1, owner, 0, 0});
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
  const std::vector<Ordinal> starts = halo_owner_starts(r, p.ndevices);
  std::vector<Ordinal> seen(p.ndevices, 0);
  for (ColumnRange& c : r) {
    c.rank = seen[c.owner];
    c.order = starts[c.owner] + c.rank;
    seen[c.owner] += c.end - c.begin;
  }
  return r;
}

std::vector<Ordinal> halo_owner_starts(const std::vector<ColumnRange>& ranges, int ndevices) {
  std::vector<Ordinal> starts(std::size_t(ndevices) + 1, 0);
  for (const ColumnRange& c : ranges) starts[c.owner + 1] += c.end - c.begin;
  for (int d = 0; d < ndevices; ++d) starts[d + 1] += starts[d];
  return starts;
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
