// Partitioners: coverage, bounds, balance, the papers' worked examples, defaults and errors.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "kspmv/core/error.hpp"
#include "partitioners/exchange.hpp"
#include "partitioners/numa.hpp"
#include "partitioners/partition_plan.hpp"
#include "testing/test_matrices.hpp"

namespace {

using namespace kspmv;
using part::Block;
using part::PartitionOptions;
using part::PartitionPlan;
using part::Role;
using part::Scheme;

std::vector<Offset> row_ptr_of(const std::vector<Offset>& lengths) {
  std::vector<Offset> p(lengths.size() + 1, 0);
  for (std::size_t i = 0; i < lengths.size(); ++i) p[i + 1] = p[i] + lengths[i];
  return p;
}

struct Pattern {
  std::string name;
  std::vector<Offset> ptr;  // row pointer (m + 1)
  Ordinal n;
  Ordinal m() const { return static_cast<Ordinal>(ptr.size() - 1); }
  Offset max_row() const {
    Offset r = 0;
    for (std::size_t i = 0; i + 1 < ptr.size(); ++i) r = std::max(r, ptr[i + 1] - ptr[i]);
    return r;
  }
};

// Row lengths with a few long rows: at the top, at the bottom, or in the middle.
std::vector<Offset> long_row_lengths(Ordinal m, Ordinal long_at, std::uint64_t seed) {
  std::mt19937_64 gen(seed);
  std::uniform_int_distribution<int> len(0, 6);
  std::vector<Offset> l(m);
  for (auto& e : l) e = len(gen);
  l[long_at] = 5000;
  l[(long_at + m / 3) % m] = 700;
  return l;
}

std::vector<Pattern> patterns() {
  std::vector<Pattern> v;
  for (auto& [name, a] : test::zoo<double>())
    v.push_back(
        {name, std::vector<Offset>(a.row_ptr.data(), a.row_ptr.data() + a.nrows + 1), a.ncols});
  v.push_back({"long_row_top", row_ptr_of(long_row_lengths(500, 0, 7)), 6000});
  v.push_back({"long_row_bottom", row_ptr_of(long_row_lengths(500, 499, 8)), 6000});
  v.push_back({"long_row_middle", row_ptr_of(long_row_lengths(500, 250, 9)), 6000});
  return v;
}

PartitionPlan make_plan(const Pattern& p, Scheme s, int nd, double d_l = -1, double d_c = -1) {
  if (s == Scheme::PCSC) return part::partition_pcsc(p.ptr.data(), p.m(), p.n, nd);
  return part::partition(p.ptr.data(), p.m(), p.n, PartitionOptions{s, nd, d_l, d_c});
}

int slots_of(Scheme s) {
  switch (s) {
    case Scheme::TwoNZ:
    case Scheme::LRA:
      return 2;
    case Scheme::LRARC:
      return 3;
    default:
      return 1;
  }
}

// Row schemes: owned rows tile [0, m) once, every device has one block per slot, redundant
// blocks are the same rows on every device and disjoint from the owned ones, nnz ranges match.
void check_row_plan(const Pattern& p, const PartitionPlan& plan, const std::string& what) {
  const int nd = plan.ndevices;
  ASSERT_EQ(plan.blocks.size(), static_cast<std::size_t>(nd * slots_of(plan.scheme))) << what;
  std::vector<int> owned(p.m(), 0), redundant(p.m(), 0);
  std::vector<std::vector<int>> per_device_slot(nd, std::vector<int>(3, 0));
  for (const Block& b : plan.blocks) {
    ASSERT_TRUE(0 <= b.row_begin && b.row_begin <= b.row_end && b.row_end <= p.m()) << what;
    ASSERT_TRUE(b.device >= 0 && b.device < nd) << what;
    ASSERT_TRUE(b.stream_slot >= 0 && b.stream_slot < slots_of(plan.scheme)) << what;
    EXPECT_EQ(b.nnz_begin, p.ptr[b.row_begin]) << what;
    EXPECT_EQ(b.nnz_end, p.ptr[b.row_end]) << what;
    EXPECT_EQ(b.col_begin, 0) << what;
    EXPECT_EQ(b.col_end, p.n) << what;
    EXPECT_FALSE(b.start_flag) << what;
    ++per_device_slot[b.device][b.stream_slot];
    EXPECT_EQ(b.role == Role::Redundant, b.stream_slot == 2) << what;
    for (Ordinal r = b.row_begin; r < b.row_end; ++r)
      ++(b.role == Role::Owned ? owned : redundant)[r];
  }
  for (int d = 0; d < nd; ++d)
    for (int s = 0; s < slots_of(plan.scheme); ++s)
      EXPECT_EQ(per_device_slot[d][s], 1) << what << " device " << d << " slot " << s;
  for (Ordinal r = 0; r < p.m(); ++r) {
    const bool is_redundant = redundant[r] > 0;
    EXPECT_EQ(redundant[r], is_redundant ? nd : 0) << what << " row " << r;
    EXPECT_EQ(owned[r], is_redundant ? 0 : 1) << what << " row " << r;
  }
}

// MSREP: nnz ranges [i*nnz/np, (i+1)*nnz/np) on device i; line ranges tile [0, lines) and
// overlap by exactly the flagged shared line.
void check_msrep_plan(const std::vector<Offset>& ptr, const PartitionPlan& plan, bool by_cols,
                      const std::string& what) {
  const int np = plan.ndevices;
  const Ordinal lines = static_cast<Ordinal>(ptr.size() - 1);
  const Offset nnz = ptr.back();
  ASSERT_EQ(plan.blocks.size(), static_cast<std::size_t>(np)) << what;
  for (int i = 0; i < np; ++i) {
    const Block& b = plan.blocks[i];
    const Ordinal l0 = by_cols ? b.col_begin : b.row_begin, l1 = by_cols ? b.col_end : b.row_end;
    EXPECT_EQ(b.device, i) << what;
    EXPECT_EQ(b.nnz_begin, static_cast<Offset>(std::floor(static_cast<double>(i) * nnz / np)))
        << what;
    EXPECT_EQ(b.nnz_end, i + 1 < np ? plan.blocks[i + 1].nnz_begin : nnz) << what;
    ASSERT_TRUE(0 <= l0 && l0 <= l1 && l1 <= lines) << what;
    EXPECT_LE(ptr[l0], b.nnz_begin) << what;
    EXPECT_LE(b.nnz_end, ptr[l1]) << what;
    EXPECT_EQ(b.start_flag, l0 < lines && ptr[l0] < b.nnz_begin) << what;
    EXPECT_EQ(i == 0 ? 0 : plan.blocks[i - 1].*(by_cols ? &Block::col_end : &Block::row_end),
              l0 + (b.start_flag ? 1 : 0))
        << what << " partition " << i;
    if (by_cols) {
      EXPECT_EQ(b.row_begin, 0);
      EXPECT_EQ(b.row_end, plan.nrows);
    }
  }
  const Block& last = plan.blocks.back();
  EXPECT_EQ(by_cols ? last.col_end : last.row_end, lines) << what;
}

TEST(PartitionersTest, EverySchemeCoversEveryRowOrNonZeroExactlyOncePerDeviceSet) {
  for (const auto& p : patterns())
    for (Scheme s : part::all_schemes())
      for (int nd = 1; nd <= 8; ++nd) {
        const std::string what = p.name + " " + part::to_string(s) + " N=" + std::to_string(nd);
        if (s == Scheme::PCSC) {
          // Column pointer of a pattern: reuse the row pointer as a CSC of the transpose shape.
          const PartitionPlan plan = part::partition_pcsc(p.ptr.data(), p.n, p.m(), nd);
          check_msrep_plan(p.ptr, plan, true, what);
          continue;
        }
        const PartitionPlan plan = make_plan(p, s, nd);
        EXPECT_EQ(plan.scheme, s);
        EXPECT_EQ(plan.nrows, p.m());
        EXPECT_EQ(plan.ncols, p.n);
        EXPECT_EQ(plan.nnz, p.ptr.back());
        EXPECT_EQ(plan.ndevices, nd);
        if (s == Scheme::PCSR || s == Scheme::PCOO)
          check_msrep_plan(p.ptr, plan, false, what);
        else
          check_row_plan(p, plan, what);
      }
}

// Halo column ranges against the definition: column j belongs to the device of row j*m/n; each
// device's owned columns (part::owned_columns) are exactly those, in increasing spans.
TEST(PartitionersTest, HaloColumnRangesFollowTheRowOwners) {
  for (const auto& p : patterns())
    for (Scheme s : {Scheme::Rows, Scheme::NZ, Scheme::TwoNZ, Scheme::LRA})
      for (int nd = 1; nd <= 8; ++nd)
        for (const Ordinal n : {p.n, p.n / 3 + 1, 2 * p.n + 5}) {  // square and rectangular
          const std::string what = p.name + " " + part::to_string(s) + " N=" + std::to_string(nd) +
                                   " n=" + std::to_string(n);
          PartitionPlan plan = make_plan(p, s, nd);
          plan.ncols = n;
          std::vector<int> row_owner(p.m(), 0);
          for (const Block& b : plan.blocks)
            for (Ordinal r = b.row_begin; r < b.row_end; ++r) row_owner[r] = b.device;
          std::vector<std::vector<Ordinal>> owned(nd);
          for (Ordinal j = 0; j < n && p.m() > 0; ++j)
            owned[row_owner[static_cast<Offset>(j) * p.m() / n]].push_back(j);
          const auto ranges = part::halo_column_ranges(plan);
          Ordinal next = 0;
          for (const auto& c : ranges) {
            ASSERT_EQ(c.begin, next) << what;  // sorted, contiguous, non-empty
            ASSERT_LT(c.begin, c.end) << what;
            next = c.end;
            for (Ordinal j = c.begin; j < c.end; ++j) {
              const auto& mine = owned[c.owner];
              const auto at = std::lower_bound(mine.begin(), mine.end(), j);
              ASSERT_TRUE(at != mine.end() && *at == j) << what << " column " << j;
            }
          }
          EXPECT_EQ(next, p.m() > 0 ? n : 0) << what;
          for (int d = 0; d < nd; ++d) {
            std::vector<Ordinal> listed;
            Ordinal end = -1;
            for (const auto& sp : part::owned_columns(plan, d)) {
              EXPECT_GT(sp.begin, end) << what << " device " << d;  // increasing, merged
              for (Ordinal j = sp.begin; j < sp.begin + sp.count; ++j) listed.push_back(j);
              end = sp.begin + sp.count;
            }
            EXPECT_EQ(listed, owned[d]) << what << " device " << d;
          }
        }
}

TEST(PartitionersTest, NzBlocksStayWithinAverageNonZerosPlusLongestRow) {
  for (const auto& p : patterns())
    for (int nd = 1; nd <= 8; ++nd) {
      const Offset nnz = p.ptr.back();
      for (const Block& b : make_plan(p, Scheme::NZ, nd).blocks)
        EXPECT_LE(b.nnz(), (nnz + nd - 1) / nd + p.max_row()) << p.name << " N=" << nd;
      for (const Block& b : make_plan(p, Scheme::TwoNZ, nd).blocks)
        EXPECT_LE(b.nnz(), (nnz + 2 * nd - 1) / (2 * nd) + p.max_row() * 3 / 2 + 1)
            << p.name << " N=" << nd;
      for (const Block& b : make_plan(p, Scheme::PCSR, nd).blocks)
        EXPECT_LE(b.nnz(), (nnz + nd - 1) / nd) << p.name << " N=" << nd;
    }
}

// NZ in chunks: each device keeps NZ's rows, cut into `chunks` contiguous blocks in slot order,
// each within its share of the device's non-zeros plus the longest row.
TEST(PartitionersTest, NzInChunksCutsEachDevicesRowsInSlotOrder) {
  for (const auto& p : patterns())
    for (int nd : {1, 2, 3})
      for (int chunks : {2, 4}) {
        const std::string what =
            p.name + " N=" + std::to_string(nd) + " chunks=" + std::to_string(chunks);
        const PartitionPlan whole = make_plan(p, Scheme::NZ, nd);
        PartitionOptions o{Scheme::NZ, nd};
        o.chunks = chunks;
        const PartitionPlan plan = part::partition(p.ptr.data(), p.m(), p.n, o);
        ASSERT_EQ(plan.blocks.size(), static_cast<std::size_t>(nd * chunks)) << what;
        for (int d = 0; d < nd; ++d) {
          const Block& w = whole.blocks[d];
          Ordinal row = w.row_begin;
          for (int k = 0; k < chunks; ++k) {
            const Block& b = plan.blocks[d * chunks + k];
            EXPECT_EQ(b.device, d) << what;
            EXPECT_EQ(b.stream_slot, k) << what;
            EXPECT_EQ(b.row_begin, row) << what;
            EXPECT_LE(b.nnz(), (w.nnz() + chunks - 1) / chunks + p.max_row()) << what;
            row = b.row_end;
          }
          EXPECT_EQ(row, w.row_end) << what;
        }
      }
  const Pattern p{"p", row_ptr_of({1, 2, 3}), 3};
  for (int chunks : {0, part::kMaxStreamSlots + 1}) {
    PartitionOptions o{Scheme::NZ, 2};
    o.chunks = chunks;
    EXPECT_THROW(part::partition(p.ptr.data(), 3, 3, o), InvalidArgument) << chunks;
  }
  PartitionOptions lra{Scheme::LRA, 2};
  lra.chunks = 2;
  EXPECT_THROW(part::partition(p.ptr.data(), 3, 3, lra), InvalidArgument);
}

TEST(PartitionersTest, RowsSchemeGivesEqualRowCounts) {
  const Pattern p{"r", row_ptr_of(std::vector<Offset>(10, 2)), 10};
  const PartitionPlan plan = make_plan(p, Scheme::Rows, 3);
  EXPECT_EQ(plan.blocks[0].rows(), 3);
  EXPECT_EQ(plan.blocks[1].rows(), 3);
  EXPECT_EQ(plan.blocks[2].rows(), 4);
}

// Gao et al. 2024, Fig. 3/5: 7x7, 17 non-zeros. The paper shows the matrix only as a figure; these
// row lengths satisfy every fact its text states: NZ on 2 GPUs gives rows 1-2 (8 nnz) and 3-7
// (9 nnz); 2NZ gives A_2^{s1} one row and A_2^{s2} three rows; in LRA the first GPU's short block
// has the NNZ of its long block and twice its rows; row 1 is the longest; row 3 holds 2 and
// row 7 holds 1 non-zero.
const std::vector<Offset> kGaoExample = {5, 3, 2, 3, 2, 1, 1};

std::vector<std::pair<Ordinal, Ordinal>> rows_of(const PartitionPlan& plan, int slot) {
  std::vector<std::pair<Ordinal, Ordinal>> r;
  for (const Block& b : plan.blocks)
    if (b.stream_slot == slot) r.emplace_back(b.row_begin, b.row_end);
  return r;
}
using Ranges = std::vector<std::pair<Ordinal, Ordinal>>;

TEST(PartitionersTest, GaoWorkedExampleNzAndTwoNz) {
  const Pattern p{"gao", row_ptr_of(kGaoExample), 7};
  ASSERT_EQ(p.ptr.back(), 17);
  const PartitionPlan nz = make_plan(p, Scheme::NZ, 2);  // Fig. 3(a)
  EXPECT_EQ(rows_of(nz, 0), (Ranges{{0, 2}, {2, 7}}));
  EXPECT_EQ(nz.blocks[0].nnz(), 8);
  EXPECT_EQ(nz.blocks[1].nnz(), 9);
  const PartitionPlan two = make_plan(p, Scheme::TwoNZ, 2);  // Fig. 3(b)
  EXPECT_EQ(rows_of(two, 0), (Ranges{{0, 1}, {1, 2}}));
  EXPECT_EQ(rows_of(two, 1), (Ranges{{2, 4}, {4, 7}}));
}

TEST(PartitionersTest, GaoWorkedExampleLongRowAware) {
  const Pattern p{"gao", row_ptr_of(kGaoExample), 7};
  const PartitionPlan lra = make_plan(p, Scheme::LRA, 2, 0.3);  // Fig. 3(c)
  EXPECT_EQ(rows_of(lra, 1), (Ranges{{0, 1}, {1, 2}}));         // A_l = rows 1-2
  EXPECT_EQ(rows_of(lra, 0), (Ranges{{2, 4}, {4, 7}}));         // A_s = rows 3-7
  EXPECT_EQ(lra.blocks[0].nnz(), lra.blocks[2].nnz());          // GPU 1: short nnz == long nnz
  EXPECT_EQ(lra.blocks[0].rows(), 2 * lra.blocks[2].rows());    // ... with twice the rows
}

TEST(PartitionersTest, GaoWorkedExampleRedundantComputing) {
  const Pattern p{"gao", row_ptr_of(kGaoExample), 7};
  const PartitionPlan rc = make_plan(p, Scheme::LRARC, 2, 0.3, 0.1);  // Fig. 3(d) / 5(b) case 2
  EXPECT_DOUBLE_EQ(rc.d_l, 0.3);
  EXPECT_DOUBLE_EQ(rc.d_c, 0.1);
  EXPECT_EQ(rows_of(rc, 1), (Ranges{{0, 1}, {1, 2}}));  // A_l = rows 1-2 (m_l = 2)
  EXPECT_EQ(rows_of(rc, 0), (Ranges{{2, 4}, {4, 6}}));  // A_s = rows 3-6 (m_s = 4)
  EXPECT_EQ(rows_of(rc, 2), (Ranges{{6, 7}, {6, 7}}));  // A_c = row 7 on both (m_c = 1)
  for (const Block& b : rc.blocks) EXPECT_EQ(b.role == Role::Redundant, b.stream_slot == 2);
}

TEST(PartitionersTest, LongRowBlockSitsAtTheEndHoldingTheLongestRow) {
  const Pattern top{"top", row_ptr_of(long_row_lengths(100, 3, 1)), 100};
  const Pattern bottom{"bottom", row_ptr_of(long_row_lengths(100, 97, 2)), 100};
  const Pattern middle{"middle", row_ptr_of(long_row_lengths(100, 50, 3)), 100};
  const auto long_span = [](const PartitionPlan& plan) {
    const auto r = rows_of(plan, 1);
    return std::make_pair(r.front().first, r.back().second);
  };
  EXPECT_EQ(long_span(make_plan(top, Scheme::LRA, 3, 0.2)), std::make_pair(0, 20));
  EXPECT_EQ(long_span(make_plan(bottom, Scheme::LRA, 3, 0.2)), std::make_pair(80, 100));
  EXPECT_EQ(long_span(make_plan(middle, Scheme::LRA, 3, 0.2)), std::make_pair(80, 100));
}

TEST(PartitionersTest, MsrepStartFlagMarksARowSplitWithThePreviousPartition) {
  const Pattern one_row{"one_row", row_ptr_of({10}), 10};
  const PartitionPlan a = make_plan(one_row, Scheme::PCSR, 4);
  for (int i = 0; i < 4; ++i) {
    EXPECT_EQ(a.blocks[i].start_flag, i > 0);
    EXPECT_EQ(a.blocks[i].row_begin, 0);
    EXPECT_EQ(a.blocks[i].row_end, 1);
  }
  const Pattern two{"two", row_ptr_of({3, 3}), 4};
  const PartitionPlan b = make_plan(two, Scheme::PCSR, 3);  // nnz ranges [0,2) [2,4) [4,6)
  EXPECT_EQ(rows_of(b, 0), (Ranges{{0, 1}, {0, 2}, {1, 2}}));
  EXPECT_FALSE(b.blocks[0].start_flag);
  EXPECT_TRUE(b.blocks[1].start_flag);
  EXPECT_TRUE(b.blocks[2].start_flag);
  const Pattern exact{"exact", row_ptr_of({2, 2}), 4};  // boundary on a row start: no flag
  const PartitionPlan c = make_plan(exact, Scheme::PCOO, 2);
  EXPECT_EQ(rows_of(c, 0), (Ranges{{0, 1}, {1, 2}}));
  EXPECT_FALSE(c.blocks[1].start_flag);
  const Pattern empties{"empties", row_ptr_of({0, 0, 3, 0, 0}), 4};  // empty rows: each covered
  const PartitionPlan d = make_plan(empties, Scheme::PCSR, 2);
  EXPECT_EQ(rows_of(d, 0), (Ranges{{0, 3}, {2, 5}}));
  EXPECT_TRUE(d.blocks[1].start_flag);
}

TEST(PartitionersTest, Table3DefaultsFollowMeanNonZerosPerRow) {
  const Pattern sparse{"sparse", row_ptr_of(std::vector<Offset>(100, 7)), 100};
  const Pattern dense{"dense", row_ptr_of(std::vector<Offset>(100, 8)), 100};
  const PartitionPlan a = make_plan(sparse, Scheme::LRA, 2),
                      b = make_plan(sparse, Scheme::LRARC, 2);
  const PartitionPlan c = make_plan(dense, Scheme::LRA, 2), d = make_plan(dense, Scheme::LRARC, 2);
  EXPECT_DOUBLE_EQ(a.d_l, 0.50);
  EXPECT_DOUBLE_EQ(a.d_c, 0.0);
  EXPECT_DOUBLE_EQ(b.d_l, 0.375);
  EXPECT_DOUBLE_EQ(b.d_c, 0.20);
  EXPECT_DOUBLE_EQ(c.d_l, 0.325);
  EXPECT_DOUBLE_EQ(d.d_l, 0.30);
  EXPECT_DOUBLE_EQ(d.d_c, 0.025);
  EXPECT_EQ(rows_of(b, 2).front(), std::make_pair(80, 100));  // m_c = 20 rows, ties: far end
  const PartitionPlan e = make_plan(dense, Scheme::LRARC, 2, 0.5, -1);  // only d_c defaulted
  EXPECT_DOUBLE_EQ(e.d_l, 0.5);
  EXPECT_DOUBLE_EQ(e.d_c, 0.025);
}

TEST(PartitionersTest, BadArgumentsThrow) {
  const Pattern p{"p", row_ptr_of({1, 2, 3}), 3};
  EXPECT_THROW(make_plan(p, Scheme::NZ, 0), InvalidArgument);
  EXPECT_THROW(part::partition_pcsc(p.ptr.data(), 3, 3, -1), InvalidArgument);
  EXPECT_THROW(make_plan(p, Scheme::LRA, 2, 1.5), InvalidArgument);
  EXPECT_THROW(make_plan(p, Scheme::LRA, 2, std::nan("")), InvalidArgument);
  EXPECT_THROW(make_plan(p, Scheme::LRARC, 2, 0.2, 1.5), InvalidArgument);
  EXPECT_THROW(make_plan(p, Scheme::LRARC, 2, 0.8, 0.5), InvalidArgument);
  EXPECT_THROW(part::partition(p.ptr.data(), 3, 3, PartitionOptions{Scheme::PCSC, 2}),
               InvalidArgument);
  EXPECT_THROW(part::parse_scheme("metis"), InvalidArgument);
  for (Scheme s : part::all_schemes()) EXPECT_EQ(part::parse_scheme(part::to_string(s)), s);
}

TEST(PartitionersTest, MoreDevicesThanRowsGivesEmptyBlocks) {
  const Pattern p{"p", row_ptr_of({4, 1, 2}), 3};
  for (Scheme s : {Scheme::Rows, Scheme::NZ, Scheme::TwoNZ, Scheme::LRA, Scheme::LRARC}) {
    const PartitionPlan plan = make_plan(p, s, 8);
    check_row_plan(p, plan, part::to_string(s));
    EXPECT_TRUE(std::any_of(plan.blocks.begin(), plan.blocks.end(),
                            [](const Block& b) { return b.rows() == 0; }));
  }
}

TEST(PartitionersTest, NumaTwoLevelSplitPlacesEachDeviceOnceInProportion) {
  const Pattern p{"numa", row_ptr_of(long_row_lengths(1000, 10, 4)), 1000};
  const part::Topology topo{{{0, 2, 4}, {1}, {3, 5}}};
  const PartitionPlan plan = part::partition_numa(p.ptr.data(), p.m(), p.n, topo);
  EXPECT_EQ(plan.ndevices, 6);
  EXPECT_EQ(plan.scheme, Scheme::NZ);
  check_row_plan(p, plan, "numa");
  // Blocks are in row order, node by node: devices 0,2,4 then 1 then 3,5.
  std::vector<int> order;
  for (const Block& b : plan.blocks) order.push_back(b.device);
  EXPECT_EQ(order, (std::vector<int>{0, 2, 4, 1, 3, 5}));
  // Node 0 holds about half of the non-zeros (3 of 6 devices).
  const Offset node0 = plan.blocks[2].nnz_end, nnz = p.ptr.back();
  EXPECT_LE(std::abs(node0 - nnz / 2), p.max_row());
  EXPECT_THROW(part::partition_numa(p.ptr.data(), p.m(), p.n, part::Topology{{{0, 0}}}),
               InvalidArgument);
  EXPECT_THROW(part::partition_numa(p.ptr.data(), p.m(), p.n, part::Topology{{{0, 2}}}),
               InvalidArgument);
}

TEST(PartitionersTest, DetectTopologyPlacesEveryDeviceOnce) {
  const part::Topology t = part::detect_topology({"0000:ff:1f.7", "not-a-bus-id", "0000:00:00.0"});
  std::vector<int> all;
  for (const auto& node : t.devices_per_numa_node) all.insert(all.end(), node.begin(), node.end());
  std::sort(all.begin(), all.end());
  EXPECT_EQ(all, (std::vector<int>{0, 1, 2}));
}

}  // namespace
