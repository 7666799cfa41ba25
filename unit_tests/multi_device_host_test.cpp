// Host emulation of multi-device SpMV: every scheme x exchange x N = 1..8 against the reference.
#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

#include "backends/kokkos/multi_device.hpp"
#include "kspmv/core/error.hpp"
#include "kspmv/gen/generators.hpp"
#include "testing/reference.hpp"
#include "testing/test_matrices.hpp"

namespace {

using namespace kspmv;
using host::Exchange;
using host::MultiDeviceHost;
using part::Scheme;

template <class S>
class MultiDeviceHostTest : public ::testing::Test {};
using Scalars = ::testing::Types<float, double>;
TYPED_TEST_SUITE(MultiDeviceHostTest, Scalars);

// The zoo plus matrices whose longest rows sit at the top, the bottom and the middle.
template <class S>
std::vector<std::pair<std::string, CsrMatrix<S>>> matrices() {
  auto z = test::zoo<S>();
  for (Ordinal at : {0, 120, 299}) {
    std::vector<std::tuple<Ordinal, Ordinal, double>> t;
    for (Ordinal j = 0; j < 400; ++j) t.emplace_back(at, j, 1.0 + j % 3);
    for (Ordinal j = 0; j < 150; ++j) t.emplace_back((at + 100) % 300, 2 * j, -0.5);
    for (Ordinal i = 0; i < 300; ++i)
      for (Ordinal k = 0; k < i % 5; ++k) t.emplace_back(i, (i * 7 + k * 31) % 400, 0.25 * k - 1);
    z.emplace_back("long_row_at_" + std::to_string(at), test::from_triplets<S>(300, 400, t));
  }
  z.emplace_back("laplace2d_30", gen::laplace2d<S>(30, 30));  // blocks that need no halo
  return z;
}

template <class S>
part::PartitionPlan plan_for(const CsrMatrix<S>& a, Scheme s, int nd, int chunks = 1) {
  if (s == Scheme::PCSC) {
    const auto csc = to_csc(a);
    return part::partition_pcsc(csc.col_ptr.data(), a.nrows, a.ncols, nd);
  }
  part::PartitionOptions o{s, nd};
  o.chunks = chunks;
  return part::partition(a.row_ptr.data(), a.nrows, a.ncols, o);
}

// Every scheme, and NZ in three chunks a device.
std::vector<std::pair<Scheme, int>> schemes_and_chunks() {
  std::vector<std::pair<Scheme, int>> v;
  for (Scheme s : part::all_schemes()) v.emplace_back(s, 1);
  v.emplace_back(Scheme::NZ, 3);
  return v;
}

TYPED_TEST(MultiDeviceHostTest, EverySchemeAndExchangeMatchesReferenceOnOneToEightDevices) {
  using S = TypeParam;
  std::uint64_t seed = 1;
  for (const auto& [name, a] : matrices<S>())
    for (const auto& [s, chunks] : schemes_and_chunks())
      for (Exchange e :
           {Exchange::AllGather, Exchange::Merge, Exchange::Halo, Exchange::AllGatherX}) {
        if (!host::exchange_applies(s, e)) continue;
        for (int nd = 1; nd <= 8; ++nd) {
          MultiDeviceHost<S> md(a, plan_for(a, s, nd, chunks), e);
          const std::string what = name + " " + part::to_string(s) + "/" + std::to_string(chunks) +
                                   " " + host::to_string(e) + " N=" + std::to_string(nd);
          for (S beta : {S(0), S(-0.75)}) {
            const auto x = test::random_vector<S>(a.ncols, ++seed);
            const auto y0 = beta == S(0) ? test::nan_vector<S>(a.nrows)
                                         : test::random_vector<S>(a.nrows, ++seed);
            auto y = y0, ref = y0;
            reference::spmv(S(1.5), a, x.data(), beta, ref.data());
            md.apply(S(1.5), x.data(), beta, y.data());
            EXPECT_LE(test::spmv_error(y, ref, S(1.5), a, x.data(), beta, y0),
                      reference::tolerance<S>())
                << what << " beta=" << beta;
            if (e == Exchange::AllGather)  // every device ends with the whole y
              for (int d = 0; d < nd; ++d) EXPECT_EQ(md.device_y(d), y) << what << " device " << d;
          }
        }
      }
}

TYPED_TEST(MultiDeviceHostTest, AlphaZeroScalesYWithoutReadingA) {
  using S = TypeParam;
  const auto a = test::random_matrix<S>(50, 40, 4, 11);
  MultiDeviceHost<S> md(a, plan_for(a, Scheme::PCSR, 3), Exchange::Merge);
  auto x = test::nan_vector<S>(40);
  auto y = test::random_vector<S>(50, 12);
  auto ref = y;
  reference::spmv(S(0), a, x.data(), S(2), ref.data());
  md.apply(S(0), x.data(), S(2), y.data());
  EXPECT_EQ(y, ref);
}

TEST(MultiDeviceHostTrafficTest, AllGatherSendsOwnedRowsToEveryOtherDeviceAndRedundantNothing) {
  const auto a = test::random_matrix<double>(1000, 1000, 6, 5);
  for (int nd = 1; nd <= 4; ++nd) {
    MultiDeviceHost<double> nz(a, plan_for(a, Scheme::NZ, nd), Exchange::AllGather);
    std::size_t sent = 0, received = 0;
    for (const auto& t : nz.exchange_bytes()) {
      sent += t.bytes_sent;
      received += t.bytes_received;
    }
    EXPECT_EQ(sent, (nd - 1) * 1000 * sizeof(double));
    EXPECT_EQ(received, sent);
    const auto rc_plan = part::partition(a.row_ptr.data(), 1000, 1000,
                                         part::PartitionOptions{Scheme::LRARC, nd, 0.3, 0.1});
    MultiDeviceHost<double> rc(a, rc_plan, Exchange::AllGather);
    std::size_t rc_sent = 0;
    for (const auto& t : rc.exchange_bytes()) rc_sent += t.bytes_sent;
    EXPECT_EQ(rc_sent, (nd - 1) * 900 * sizeof(double));  // the 100 redundant rows never move
  }
}

TEST(MultiDeviceHostTrafficTest, MergeSendsPartialsToDeviceZero) {
  const auto a = test::random_matrix<double>(400, 300, 5, 6);
  const auto plan = plan_for(a, Scheme::PCSR, 4);
  MultiDeviceHost<double> md(a, plan, Exchange::Merge);
  std::size_t expect = 0;
  for (const auto& b : plan.blocks)
    if (b.device != 0) {
      EXPECT_EQ(md.exchange_bytes()[b.device].bytes_sent, b.rows() * sizeof(double));
      expect += b.rows() * sizeof(double);
    }
  EXPECT_EQ(md.exchange_bytes()[0].bytes_received, expect);
  const auto csc_plan = plan_for(a, Scheme::PCSC, 4);  // full-length partial vectors
  MultiDeviceHost<double> csc(a, csc_plan, Exchange::Merge);
  EXPECT_EQ(csc.exchange_bytes()[0].bytes_received, 3 * 400 * sizeof(double));
}

TEST(MultiDeviceHostTrafficTest, HaloReceivesOnlyTheNeighbouringEntriesOfATridiagonalMatrix) {
  std::vector<std::tuple<Ordinal, Ordinal, double>> t;
  for (Ordinal i = 0; i < 100; ++i) {
    t.emplace_back(i, i, 2.0);
    if (i > 0) t.emplace_back(i, i - 1, -1.0);
    if (i + 1 < 100) t.emplace_back(i, i + 1, -1.0);
  }
  const auto a = test::from_triplets<double>(100, 100, t);
  MultiDeviceHost<double> md(a, plan_for(a, Scheme::Rows, 4), Exchange::Halo);
  EXPECT_EQ(md.halo_columns(0), (std::vector<Ordinal>{25}));
  EXPECT_EQ(md.halo_columns(1), (std::vector<Ordinal>{24, 50}));
  EXPECT_EQ(md.halo_columns(3), (std::vector<Ordinal>{74}));
  EXPECT_EQ(md.exchange_bytes()[1].bytes_sent, 2 * sizeof(double));
  EXPECT_EQ(md.exchange_bytes()[1].bytes_received, 2 * sizeof(double));
  EXPECT_EQ(md.device_y(2).size(), 25u);
}

// 2NZ on four tridiagonal blocks of 100 rows, rows 150 and 250 coupled: device 0 holds rows
// [0,100) and [200,300), device 1 [100,200) and [300,400). The blocks that read no x entry of the
// other device run first, before the halo arrives (the emulation leaves an entry not received
// yet NaN), and the result is still the reference's.
TEST(MultiDeviceHostTrafficTest, HaloRunsTheBlocksThatReadNoReceivedEntryFirst) {
  std::vector<std::tuple<Ordinal, Ordinal, double>> t = {{150, 250, -0.5}, {250, 150, -0.5}};
  for (Ordinal i = 0; i < 400; ++i) {
    t.emplace_back(i, i, 2.0);
    if (i % 100 > 0) t.emplace_back(i, i - 1, -1.0);
    if (i % 100 < 99) t.emplace_back(i, i + 1, -1.0);
  }
  const auto a = test::from_triplets<double>(400, 400, t);
  const auto plan = plan_for(a, Scheme::TwoNZ, 2);
  MultiDeviceHost<double> md(a, plan, Exchange::Halo);
  const auto& s = md.strategy();
  int early = 0;
  for (std::size_t b = 0; b < plan.blocks.size(); ++b) {
    const part::Block& k = plan.blocks[b];
    bool reads = false;  // any column outside its device's own
    for (Offset e = a.row_ptr(k.row_begin); e < a.row_ptr(k.row_end); ++e) {
      bool own = false;
      for (const part::Span& o : part::owned_columns(plan, k.device))
        own |= o.begin <= a.col_idx(e) && a.col_idx(e) < o.begin + o.count;
      reads |= !own;
    }
    EXPECT_EQ(s.waits_for_x(static_cast<int>(b)), reads) << "block " << b;
    early += !reads;
  }
  EXPECT_GE(early, 1);
  for (int d = 0; d < 2; ++d) {
    bool waited = false;
    for (int b : s.kernel_order(d)) {
      EXPECT_TRUE(s.waits_for_x(b) || !waited) << "device " << d << " block " << b;
      waited |= s.waits_for_x(b);
    }
  }
  const std::vector<double> x(a.ncols, 1.0);
  std::vector<double> y(a.nrows), ref(a.nrows);
  reference::spmv(1.0, a, x.data(), 0.0, ref.data());
  md.apply(1.0, x.data(), 0.0, y.data());
  EXPECT_EQ(y, ref);
  const auto all = part::make_strategy(plan, Exchange::AllGather);
  all->set_x_readers(std::vector<bool>(plan.blocks.size(), true));
  EXPECT_FALSE(all->waits_for_x(0));  // x is replicated: nothing to wait for
}

// part::halo_volumes, computed from the plan and the column indices alone, is the traffic of the
// emulation's Halo exchange: entries received and sent, and the devices they come from and go to.
TEST(MultiDeviceHostTrafficTest, HaloVolumesAreTheHaloExchangesTraffic) {
  for (const auto& [name, a] : matrices<double>())
    for (Scheme s : part::all_schemes()) {
      if (!host::exchange_applies(s, Exchange::Halo)) continue;
      for (int nd = 1; nd <= 8; ++nd) {
        const auto plan = plan_for(a, s, nd);
        const MultiDeviceHost<double> md(a, plan, Exchange::Halo);
        const auto v = part::halo_volumes(plan, a.row_ptr.data(), a.col_idx.data());
        const auto ranges = part::halo_column_ranges(plan);
        auto owner = [&](Ordinal j) {
          for (const auto& c : ranges)
            if (j >= c.begin && j < c.end) return c.owner;
          return -1;
        };
        const std::string what = name + " " + part::to_string(s) + " N=" + std::to_string(nd);
        ASSERT_EQ(v.size(), static_cast<std::size_t>(nd)) << what;
        std::vector<std::vector<bool>> link(nd, std::vector<bool>(nd, false));
        Ordinal rows = 0, owned = 0;
        Offset nnz = 0;
        for (int d = 0; d < nd; ++d) {
          rows += v[d].rows, owned += v[d].owned, nnz += v[d].nnz;
          EXPECT_EQ(v[d].received, static_cast<Ordinal>(md.halo_columns(d).size())) << what;
          EXPECT_EQ(v[d].received * sizeof(double), md.exchange_bytes()[d].bytes_received) << what;
          EXPECT_EQ(v[d].sent * sizeof(double), md.exchange_bytes()[d].bytes_sent) << what;
          for (Ordinal j : md.halo_columns(d)) link[owner(j)][d] = true;
        }
        for (int d = 0; d < nd; ++d) {
          int sources = 0, targets = 0;
          for (int e = 0; e < nd; ++e) sources += link[e][d], targets += link[d][e];
          EXPECT_EQ(v[d].sources, sources) << what << " device " << d;
          EXPECT_EQ(v[d].targets, targets) << what << " device " << d;
        }
        EXPECT_EQ(rows, a.nrows) << what;
        EXPECT_EQ(owned, a.nrows > 0 ? a.ncols : 0) << what;
        EXPECT_EQ(nnz, a.nnz()) << what;
      }
    }
  const auto a = test::from_triplets<double>(4, 4, {{0, 0, 1.0}});
  EXPECT_THROW(part::halo_volumes(plan_for(a, Scheme::PCSR, 2), a.row_ptr.data(), a.col_idx.data()),
               InvalidArgument);
}

TEST(MultiDeviceHostErrorsTest, RejectsForeignPlansAndExchangesThatDoNotApply) {
  const auto a = test::random_matrix<double>(30, 30, 3, 7);
  const auto b = test::random_matrix<double>(31, 30, 3, 8);
  EXPECT_THROW(MultiDeviceHost<double>(a, plan_for(b, Scheme::NZ, 2), Exchange::AllGather),
               InvalidArgument);
  EXPECT_THROW(MultiDeviceHost<double>(a, plan_for(a, Scheme::PCSR, 2), Exchange::AllGather),
               UnsupportedError);
  EXPECT_THROW(MultiDeviceHost<double>(a, plan_for(a, Scheme::LRARC, 2), Exchange::Merge),
               UnsupportedError);
  EXPECT_THROW(MultiDeviceHost<double>(a, plan_for(a, Scheme::PCSC, 2), Exchange::Halo),
               UnsupportedError);
  EXPECT_THROW(host::parse_exchange("broadcast"), InvalidArgument);
  EXPECT_EQ(host::parse_exchange("halo"), Exchange::Halo);
}

}  // namespace
