#include "partitioners/exchange.hpp"

#include <algorithm>

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

}  // namespace kspmv::part
