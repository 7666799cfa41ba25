// The partitioners of Gao et al. 2024 (NZ, 2NZ, LRA, LRA+RC) and MSREP (pCSR, pCSC, pCOO).
#include "partitioners/partition_plan.hpp"

#include <algorithm>
#include <cmath>
#include <string>

#include "kspmv/core/error.hpp"

namespace kspmv::part {

namespace {

void check_devices(int ndevices) {
  if (ndevices < 1)
    throw InvalidArgument("partition: ndevices must be >= 1 (got " + std::to_string(ndevices) +
                          ")");
}

// floor(total * k / parts) without overflowing for any total that fits an Offset.
Offset share(Offset total, int k, int parts) {
  return (total / parts) * k + (total % parts) * k / parts;
}

PartitionPlan empty_plan(Scheme s, Ordinal m, Ordinal n, Offset nnz, int ndevices) {
  PartitionPlan p;
  p.scheme = s;
  p.nrows = m;
  p.ncols = n;
  p.nnz = nnz;
  p.ndevices = ndevices;
  return p;
}

Block row_block(const Offset* row_ptr, Ordinal n, Ordinal r0, Ordinal r1, int device, int slot,
                Role role = Role::Owned) {
  Block b;
  b.row_begin = r0;
  b.row_end = r1;
  b.nnz_begin = row_ptr[r0];
  b.nnz_end = row_ptr[r1];
  b.col_begin = 0;
  b.col_end = n;
  b.device = device;
  b.stream_slot = slot;
  b.role = role;
  return b;
}

// NZ-split rows [r0, r1) over all devices on one stream slot (Gao et al. §3.1).
void add_nz_blocks(PartitionPlan& p, const Offset* row_ptr, Ordinal r0, Ordinal r1, int slot) {
  const auto b = split_nz(row_ptr, r0, r1, p.ndevices);
  for (int g = 0; g < p.ndevices; ++g)
    p.blocks.push_back(row_block(row_ptr, p.ncols, b[g], b[g + 1], g, slot));
}

// The first row holding the most non-zeros.
Ordinal longest_row(const Offset* row_ptr, Ordinal m) {
  Ordinal best = 0;
  Offset best_len = m > 0 ? row_ptr[1] - row_ptr[0] : 0;
  for (Ordinal i = 1; i < m; ++i) {
    const Offset len = row_ptr[i + 1] - row_ptr[i];
    if (len > best_len) best = i, best_len = len;
  }
  return best;
}

void check_fraction(double d, const char* name) {
  if (!(d >= 0.0 && d <= 1.0))
    throw InvalidArgument(std::string("partition: ") + name + " must be in [0, 1] (got " +
                          std::to_string(d) + ")");
}

// LRA (§3.3) and LRA+RC (§3.4, Fig. 5): A_l = the first or last m_l = floor(d_l*m) rows,
// whichever holds the longest row (the last when neither does, as in Fig. 5(a)); A_c = the
// m_c = round(d_c*m) rows next to A_l or at the far end, whichever has fewer non-zeros (the far
// end on ties); A_s = the rest. Rounding m_c reproduces the paper's example (m = 7, d_c = 0.1 ->
// m_c = 1), which floor would not. A_s and A_l are NZ-split (short part on stream 0, long on 1);
// every device gets an A_c block on stream 2. (1e-9 absorbs d*m landing just below an integer.)
void add_lra_blocks(PartitionPlan& p, const Offset* row_ptr, Ordinal m, bool redundant,
                    Ordinal longest) {
  const auto m_l = static_cast<Ordinal>(std::floor(p.d_l * m + 1e-9));
  const auto m_c =
      redundant ? std::min(m - m_l, static_cast<Ordinal>(std::floor(p.d_c * m + 0.5))) : 0;
  const bool long_first = m_l > 0 && (longest >= 0 ? longest : longest_row(row_ptr, m)) < m_l;
  const Ordinal l0 = long_first ? 0 : m - m_l;
  // The short-row side is [s0, s1); A_c is taken from one of its ends.
  const Ordinal s0 = long_first ? m_l : 0, s1 = long_first ? m : m - m_l;
  const Ordinal near0 = long_first ? s0 : s1 - m_c;  // the m_c rows next to A_l
  const Ordinal far0 = long_first ? s1 - m_c : s0;   // the m_c rows at the other end
  const auto nnz_of = [&](Ordinal r0) { return row_ptr[r0 + m_c] - row_ptr[r0]; };
  const Ordinal c0 = nnz_of(near0) < nnz_of(far0) ? near0 : far0;
  const Ordinal a0 = c0 == s0 ? s0 + m_c : s0, a1 = c0 == s0 ? s1 : s1 - m_c;
  add_nz_blocks(p, row_ptr, a0, a1, 0);
  add_nz_blocks(p, row_ptr, l0, l0 + m_l, 1);
  if (redundant)
    for (int g = 0; g < p.ndevices; ++g)
      p.blocks.push_back(row_block(row_ptr, p.ncols, c0, c0 + m_c, g, 2, Role::Redundant));
}

// MSREP Alg. 2/4/6: partition i covers non-zeros [i*nnz/np, (i+1)*nnz/np) of a compressed
// pointer `ptr` over `len` rows (or columns). Returns per partition its first line (the line that
// holds its first non-zero; lines before it with no entries go to the previous partition), its
// end line and whether its first line is shared with the previous partition.
struct NnzRange {
  Ordinal begin, end;
  Offset nnz_begin, nnz_end;
  bool start_flag;
};
std::vector<NnzRange> nnz_ranges(const Offset* ptr, Ordinal len, int np) {
  const Offset nnz = ptr[len];
  std::vector<NnzRange> r(np);
  for (int i = 0; i < np; ++i) {
    const Offset s = share(nnz, i, np);
    r[i].nnz_begin = s;
    r[i].nnz_end = share(nnz, i + 1, np);
    if (i == 0 || s == nnz) {
      r[i].begin = i == 0 ? 0 : len;
    } else {  // the last line whose pointer is <= s holds non-zero s (binary search)
      r[i].begin = static_cast<Ordinal>(std::upper_bound(ptr, ptr + len + 1, s) - ptr - 1);
    }
    r[i].start_flag = r[i].begin < len && ptr[r[i].begin] < s;
  }
  for (int i = 0; i < np; ++i)
    r[i].end = i + 1 < np ? r[i + 1].begin + (r[i + 1].start_flag ? 1 : 0) : len;
  return r;
}

}  // namespace

LraParams table3_defaults(Scheme s, double mean_nnz_per_row) {
  const bool sparse_rows = mean_nnz_per_row < 8;
  if (s == Scheme::LRA) return {sparse_rows ? 0.50 : 0.325, 0.0};
  if (s == Scheme::LRARC) return sparse_rows ? LraParams{0.375, 0.20} : LraParams{0.30, 0.025};
  return {0.0, 0.0};
}

std::vector<LraParams> tuning_candidates(Scheme s, double mean_nnz_per_row) {
  const bool sparse_rows = mean_nnz_per_row < 8;
  if (s == Scheme::LRA)
    return sparse_rows ? std::vector<LraParams>{{0.50, 0}, {0.40, 0}, {0.60, 0}}
                       : std::vector<LraParams>{{0.325, 0}, {0.25, 0}, {0.40, 0}};
  if (s == Scheme::LRARC)
    return sparse_rows ? std::vector<LraParams>{{0.375, 0.20},
                                                {0.35, 0.15},
                                                {0.40, 0.25},
                                                {0.35, 0.25},
                                                {0.40, 0.15}}
                       : std::vector<LraParams>{
                             {0.30, 0.025}, {0.25, 0.0}, {0.35, 0.05}, {0.25, 0.05}, {0.35, 0.0}};
  return {};
}

std::vector<Ordinal> split_nz(const Offset* row_ptr, Ordinal r0, Ordinal r1, int parts) {
  std::vector<Ordinal> b(parts + 1, r0);
  b[parts] = r1;
  const Offset base = row_ptr[r0], total = row_ptr[r1] - base;
  for (int k = 1; k < parts; ++k) {
    const Offset target = base + share(total, k, parts);
    const Ordinal lo = static_cast<Ordinal>(
        std::lower_bound(row_ptr + b[k - 1], row_ptr + r1 + 1, target) - row_ptr);
    const bool take_lower = lo > b[k - 1] && target - row_ptr[lo - 1] <= row_ptr[lo] - target;
    b[k] = take_lower ? lo - 1 : lo;
  }
  return b;
}

PartitionPlan partition(const Offset* row_ptr, Ordinal m, Ordinal n, const PartitionOptions& opt) {
  check_devices(opt.ndevices);
  if (m < 0 || n < 0) throw InvalidArgument("partition: negative matrix size");
  if (opt.scheme == Scheme::PCSC)
    throw InvalidArgument("partition: pCSC splits columns; call partition_pcsc with col_ptr");
  if (opt.chunks < 1 || opt.chunks > kMaxStreamSlots)
    throw InvalidArgument("partition: chunks must be 1.." + std::to_string(kMaxStreamSlots) +
                          ", not " + std::to_string(opt.chunks));
  if (opt.chunks > 1 && opt.scheme != Scheme::NZ)
    throw InvalidArgument(std::string("partition: chunks apply to nz, not ") +
                          to_string(opt.scheme));
  const Offset nnz = row_ptr[m];
  PartitionPlan p = empty_plan(opt.scheme, m, n, nnz, opt.ndevices);
  const int nd = opt.ndevices;
  switch (opt.scheme) {
    case Scheme::Rows:
      for (int g = 0; g < nd; ++g)
        p.blocks.push_back(row_block(row_ptr, n, static_cast<Ordinal>(share(m, g, nd)),
                                     static_cast<Ordinal>(share(m, g + 1, nd)), g, 0));
      break;
    case Scheme::NZ: {
      const auto b = split_nz(row_ptr, 0, m, nd);
      for (int g = 0; g < nd; ++g) {
        const auto c = split_nz(row_ptr, b[g], b[g + 1], opt.chunks);
        for (int k = 0; k < opt.chunks; ++k)
          p.blocks.push_back(row_block(row_ptr, n, c[k], c[k + 1], g, k));
      }
      break;
    }
    case Scheme::TwoNZ: {  // §3.2: NZ into two halves, then each half NZ over the devices
      const auto half = split_nz(row_ptr, 0, m, 2);
      add_nz_blocks(p, row_ptr, half[0], half[1], 0);
      add_nz_blocks(p, row_ptr, half[1], half[2], 1);
      break;
    }
    case Scheme::LRA:
    case Scheme::LRARC: {
      const double mean = m > 0 ? static_cast<double>(nnz) / m : 0.0;
      const LraParams def = table3_defaults(opt.scheme, mean);
      p.d_l = opt.d_l < 0 ? def.d_l : opt.d_l;
      p.d_c = opt.scheme == Scheme::LRA ? 0.0 : (opt.d_c < 0 ? def.d_c : opt.d_c);
      check_fraction(p.d_l, "d_l");
      check_fraction(p.d_c, "d_c");
      if (p.d_l + p.d_c > 1.0) throw InvalidArgument("partition: d_l + d_c must be <= 1");
      if (opt.longest_row >= m && m > 0)
        throw InvalidArgument("partition: longest_row " + std::to_string(opt.longest_row) +
                              " is not a row of the matrix");
      add_lra_blocks(p, row_ptr, m, opt.scheme == Scheme::LRARC, opt.longest_row);
      break;
    }
    case Scheme::PCSR:
    case Scheme::PCOO:  // row-sorted COO has CSR's non-zero order: same ranges (Alg. 2 / Alg. 6)
      for (const auto& r : nnz_ranges(row_ptr, m, nd)) {
        Block b;
        b.row_begin = r.begin;
        b.row_end = r.end;
        b.nnz_begin = r.nnz_begin;
        b.nnz_end = r.nnz_end;
        b.col_end = n;
        b.device = static_cast<int>(p.blocks.size());
        b.start_flag = r.start_flag;
        p.blocks.push_back(b);
      }
      break;
    case Scheme::PCSC:
      break;  // rejected above
  }
  return p;
}

PartitionPlan partition_pcsc(const Offset* col_ptr, Ordinal m, Ordinal n, int ndevices) {
  check_devices(ndevices);
  if (m < 0 || n < 0) throw InvalidArgument("partition_pcsc: negative matrix size");
  PartitionPlan p = empty_plan(Scheme::PCSC, m, n, col_ptr[n], ndevices);
  for (const auto& r : nnz_ranges(col_ptr, n, ndevices)) {
    Block b;
    b.row_end = m;
    b.nnz_begin = r.nnz_begin;
    b.nnz_end = r.nnz_end;
    b.col_begin = r.begin;
    b.col_end = r.end;
    b.device = static_cast<int>(p.blocks.size());
    b.start_flag = r.start_flag;
    p.blocks.push_back(b);
  }
  return p;
}

void check_plan(const PartitionPlan& p, const Offset* ptr, Ordinal m, Ordinal n, Offset nnz,
                const char* who) {
  if (p.nrows != m || p.ncols != n || p.nnz != nnz || p.ndevices < 1)
    throw InvalidArgument(std::string(who) + ": the partition plan was made for another matrix");
  const bool by_cols = p.scheme == Scheme::PCSC;
  const Ordinal lines = by_cols ? n : m;
  for (const auto& b : p.blocks) {
    const Ordinal l0 = by_cols ? b.col_begin : b.row_begin, l1 = by_cols ? b.col_end : b.row_end;
    const bool ok = b.device >= 0 && b.device < p.ndevices && 0 <= b.row_begin &&
                    b.row_begin <= b.row_end && b.row_end <= m && 0 <= b.col_begin &&
                    b.col_begin <= b.col_end && b.col_end <= n && 0 <= l0 && l0 <= l1 &&
                    l1 <= lines && 0 <= b.nnz_begin && b.nnz_begin <= b.nnz_end &&
                    b.nnz_end <= nnz && ptr[l0] <= b.nnz_begin && b.nnz_end <= ptr[l1] &&
                    b.stream_slot >= 0 && b.stream_slot < kMaxStreamSlots;
    if (!ok) throw InvalidArgument(std::string(who) + ": a partition block is out of bounds");
  }
}

}  // namespace kspmv::part
