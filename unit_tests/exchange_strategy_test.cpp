// The exchange strategies (partitioners/exchange.hpp) on small plans: what each adds to the
// layout, the copies of each step, the bytes they move, whether iterations keep their vectors
// in place; and the cost model (partitioners/cost_model.hpp) on cases worked out by hand.
#include <gtest/gtest.h>

#include <vector>

#include "kspmv/core/error.hpp"
#include "partitioners/cost_model.hpp"
#include "partitioners/exchange.hpp"
#include "partitioners/partition_plan.hpp"

namespace kspmv {
namespace {

using part::Buffer;
using part::Exchange;
using part::Scheme;
using part::Span;

// One non-zero per row: m rows, m columns.
std::vector<Offset> diagonal(Ordinal m) {
  std::vector<Offset> ptr(m + 1);
  for (Ordinal i = 0; i <= m; ++i) ptr[i] = i;
  return ptr;
}

part::PartitionPlan plan_of(Scheme s, Ordinal m, int nd) {
  const auto ptr = diagonal(m);
  return part::partition(ptr.data(), m, m, {s, nd});
}

bool same(const std::vector<Span>& a, const std::vector<Span>& b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i)
    if (a[i].begin != b[i].begin || a[i].count != b[i].count) return false;
  return true;
}

TEST(ExchangeStrategyTest, AllGatherSendsEachOwnedBlockToEveryOtherDeviceAfterItsKernel) {
  const auto plan = plan_of(Scheme::Rows, 900, 3);  // rows [0,300) [300,600) [600,900)
  const auto s = part::make_strategy(plan, Exchange::AllGather);
  EXPECT_TRUE(s->replicated());
  EXPECT_FALSE(s->partials());
  EXPECT_TRUE(same(s->x_needed(1), {{0, 900}}));
  EXPECT_TRUE(same(s->y_needed(1), {{300, 300}}));
  EXPECT_TRUE(same(s->y_home(0), {{0, 900}}));
  EXPECT_TRUE(s->y_home(2).empty());
  const auto c = s->after_block(1);
  ASSERT_EQ(c.size(), 2u);
  for (const auto& k : c) {
    EXPECT_EQ(k.src, 1);
    EXPECT_NE(k.dst, 1);
    EXPECT_EQ(k.from, Buffer::Y);
    EXPECT_EQ(k.from_offset, 300);
    EXPECT_EQ(k.count, 300);
  }
  EXPECT_EQ(s->bytes(8), 6u * 300 * 8);
  EXPECT_EQ(s->traffic(8)[0].bytes_received, 600u * 8);
  EXPECT_TRUE(s->iterates_in_place());
}

TEST(ExchangeStrategyTest, MergeScalesOnDeviceZeroAndAddsEveryPartialInPlanOrder) {
  const auto plan = plan_of(Scheme::PCSR, 1000, 2);  // non-zeros [0,500) and [500,1000)
  const auto s = part::make_strategy(plan, Exchange::Merge);
  EXPECT_TRUE(s->partials());
  EXPECT_FALSE(s->replicated());
  EXPECT_TRUE(same(s->scale_first(0), {{0, 1000}}));
  EXPECT_TRUE(s->scale_first(1).empty());
  EXPECT_TRUE(s->y_needed(1).empty());
  EXPECT_TRUE(s->after_block(0).empty());  // device 0's partial stays
  const auto c = s->after_block(1);
  ASSERT_EQ(c.size(), 1u);
  EXPECT_EQ(c[0].from, Buffer::Partial);
  EXPECT_EQ(c[0].to, Buffer::Inbox);
  EXPECT_EQ(c[0].count, 500);
  const auto adds = s->at_end();
  ASSERT_EQ(adds.size(), 2u);
  EXPECT_EQ(adds[0].from, Buffer::Partial);
  EXPECT_EQ(adds[1].from, Buffer::Inbox);
  EXPECT_EQ(adds[1].offset, 500);
  EXPECT_EQ(s->bytes(4), 500u * 4);
  EXPECT_FALSE(s->iterates_in_place());  // the next x is needed on device 1 too
}

TEST(ExchangeStrategyTest, HaloAndAllGatherXKeepRowsWithTheirOwners) {
  const auto plan = plan_of(Scheme::NZ, 100, 2);
  const auto halo = part::make_strategy(plan, Exchange::Halo);
  EXPECT_TRUE(halo->halo());
  EXPECT_TRUE(same(halo->x_needed(1), {{50, 50}}));
  EXPECT_TRUE(same(halo->y_home(1), {{50, 50}}));
  EXPECT_EQ(halo->bytes(8), 0u);  // until the executor found its lists
  halo->set_halo_counts({{0, 3}, {2, 0}});
  EXPECT_EQ(halo->halo_count(0, 1), 3);
  EXPECT_EQ(halo->traffic(8)[1].bytes_sent, 3u * 8);
  EXPECT_EQ(halo->traffic(8)[1].bytes_received, 2u * 8);
  EXPECT_TRUE(halo->iterates_in_place());
  const auto x = part::make_strategy(plan, Exchange::AllGatherX);
  EXPECT_FALSE(x->halo());
  const auto before = x->before_kernels();
  ASSERT_EQ(before.size(), 2u);
  EXPECT_EQ(before[0].from, Buffer::X);
  EXPECT_EQ(x->bytes(8), 100u * 8);
  EXPECT_TRUE(x->iterates_in_place());
}

TEST(ExchangeStrategyTest, ModesThatDoNotApplyAndAutoAreRefused) {
  const auto ptr = diagonal(50);
  const auto rc = part::partition(ptr.data(), 50, 50, {Scheme::LRARC, 2});
  EXPECT_THROW(part::make_strategy(rc, Exchange::Halo), UnsupportedError);
  EXPECT_THROW(part::make_strategy(rc, Exchange::Merge), UnsupportedError);
  EXPECT_THROW(part::make_strategy(rc, Exchange::Auto), UnsupportedError);
  EXPECT_EQ(part::parse_exchange("allgather-x"), Exchange::AllGatherX);
  EXPECT_EQ(part::exchange_candidates(Scheme::NZ).size(), 3u);  // allgather-x is no candidate
}

// Two devices, rows [0,500) [500,1000), kernels of 1 and 2 ms, 4 GB/s links: device 0 sends its
// 4000 bytes at 1 ms (arriving at 1 + 0.008 + 0.001), device 1 at 2 ms: the apply ends at 2.009,
// plus the fixed cost of an apply on two devices.
TEST(CostModelTest, AllGatherEndsWhenTheSlowestDevicesRowsHaveArrived) {
  const auto s = part::make_strategy(plan_of(Scheme::Rows, 1000, 2), Exchange::AllGather);
  const Prediction p = part::predict(*s, {1.0, 2.0}, 8, 4.0, 1000.0);
  EXPECT_NEAR(p.ms, 2.0 + part::kCopyLatencyMs + 0.001 + part::fixed_ms(2), 1e-12);
  EXPECT_NEAR(p.kernel_ms, 2.0, 1e-12);
  EXPECT_NEAR(p.exchange_ms, p.ms - 2.0, 1e-12);
}

// pCSR, two blocks of 500 rows and 1 ms each, 4 GB/s links, 1 GB/s device copies (8-byte
// values): device 0 scales its y first (2 passes of 8000 bytes: 0.016 ms), runs its kernel to
// 1.016, adds its own partial (3 passes of 4000 bytes: 0.012) to 1.028, then the partial of
// device 1 (arrived at 1 + 0.009) to 1.040.
TEST(CostModelTest, MergeAddsEachPartialOnDeviceZeroOnceItArrived) {
  const auto s = part::make_strategy(plan_of(Scheme::PCSR, 1000, 2), Exchange::Merge);
  const Prediction p = part::predict(*s, {1.0, 1.0}, 8, 4.0, 1.0);
  EXPECT_NEAR(p.ms, 1.040 + part::fixed_ms(2), 1e-12);
  EXPECT_NEAR(p.kernel_ms, 1.0, 1e-12);
}

// Halo: device 1 waits for the 1000 entries device 0 sends it (0.008 + 8000 / 4e6 ms) before its
// 1 ms kernel; device 0 needs nothing.
TEST(CostModelTest, HaloDelaysTheKernelsOfTheReceivers) {
  const auto s = part::make_strategy(plan_of(Scheme::NZ, 1000, 2), Exchange::Halo);
  s->set_halo_counts({{0, 0}, {1000, 0}});
  const Prediction p = part::predict(*s, {1.0, 1.0}, 8, 4.0, 1000.0);
  EXPECT_NEAR(p.ms, 1.0 + part::kCopyLatencyMs + 0.002 + part::fixed_ms(2), 1e-12);
  EXPECT_THROW(part::predict(*s, {1.0}, 8, 4.0, 1.0), InvalidArgument);
  EXPECT_THROW(part::predict(*s, {1.0, 1.0}, 8, 0.0, 1.0), InvalidArgument);
}

// Halo with 2NZ (blocks [0,250) and [500,750) on device 0, [250,500) and [750,1000) on device 1;
// 0.5 ms each): device 1 receives 1000 entries (0.010 ms). Where only its first block reads them,
// its second runs while they cross and it ends at 1.0; were every block to wait, at 1.010.
TEST(CostModelTest, HaloHidesTheCopiesUnderTheBlocksThatReadNoReceivedEntry) {
  const auto s = part::make_strategy(plan_of(Scheme::TwoNZ, 1000, 2), Exchange::Halo);
  s->set_halo_counts({{0, 0}, {1000, 0}});
  const std::vector<double> ms = {0.5, 0.5, 0.5, 0.5};
  EXPECT_NEAR(part::predict(*s, ms, 8, 4.0, 1000.0).ms,
              1.0 + part::kCopyLatencyMs + 0.002 + part::fixed_ms(2), 1e-12);
  s->set_x_readers({false, true, false, false});
  EXPECT_EQ(s->kernel_order(1), (std::vector<int>{3, 1}));
  EXPECT_EQ(s->kernel_order(0), (std::vector<int>{0, 2}));
  const Prediction p = part::predict(*s, ms, 8, 4.0, 1000.0);
  EXPECT_NEAR(p.ms, 1.0 + part::fixed_ms(2), 1e-12);
  EXPECT_NEAR(p.kernel_ms, 1.0, 1e-12);
  EXPECT_THROW(s->set_x_readers({true}), InvalidArgument);
}

TEST(CostModelTest, TheFixedCostGrowsWithTheDevicesAndIsNoneOnOne) {
  EXPECT_EQ(part::fixed_ms(1), 0.0);
  EXPECT_GT(part::fixed_ms(2), 0.0);
  EXPECT_NEAR(part::fixed_ms(4) - part::fixed_ms(2), 2 * part::kFixedPerDeviceMs, 1e-15);
}

// One device streams `bytes` in t1; k devices take t1 / k + fixed_ms(k). An apply of many times
// the fixed cost takes every device; one of about the fixed cost takes none of the others, and
// in between the count stops where the devices would keep less than half their share or gain
// less than 1 - kChooseGain.
TEST(CostModelTest, TheDevicesThatPayForThemselves) {
  const double peak = 1000;  // GB/s: t1 = bytes / (kSpmvShareOfPeak * 1e9) s
  const auto bytes_for = [&](double t1_ms) { return t1_ms * part::kSpmvShareOfPeak * peak * 1e6; };
  EXPECT_EQ(part::choose_device_count(bytes_for(1000 * part::fixed_ms(4)), 4, peak), 4);
  EXPECT_EQ(part::choose_device_count(bytes_for(part::fixed_ms(2)), 4, peak), 1);
  for (double t1 : {0.01, 0.03, 0.05, 0.1, 0.3}) {
    const int k = part::choose_device_count(bytes_for(t1), 4, peak);
    const double tk = t1 / k + part::fixed_ms(k);
    EXPECT_TRUE(k == 1 || t1 >= 0.5 * k * tk) << t1;
    for (int j = k + 1; j <= 4; ++j)  // no larger count is both efficient and faster enough
      EXPECT_FALSE(t1 >= 0.5 * j * (t1 / j + part::fixed_ms(j)) &&
                   t1 / j + part::fixed_ms(j) < part::kChooseGain * tk)
          << t1 << " " << j;
    if (k > 1) EXPECT_LT(tk, part::kChooseGain * t1) << t1;  // it gains enough over one
  }
  EXPECT_EQ(part::choose_device_count(bytes_for(1.0), 1, peak), 1);
  EXPECT_THROW(part::choose_device_count(1.0, 0, peak), InvalidArgument);
  EXPECT_THROW(part::choose_device_count(1.0, 2, 0.0), InvalidArgument);
}

TEST(PartitionLongestRowTest, AGivenLongestRowPlansLikeTheScanAndABadOneIsRefused) {
  std::vector<Offset> ptr = {0, 1, 2, 12, 13, 14, 15, 16, 17};  // row 2 is the longest
  for (Scheme s : {Scheme::LRA, Scheme::LRARC}) {
    const auto scan =
        part::partition(ptr.data(), 8, 8, {s, 2, 0.25, s == Scheme::LRARC ? 0.25 : 0});
    part::PartitionOptions o{s, 2, 0.25, s == Scheme::LRARC ? 0.25 : 0};
    o.longest_row = 2;
    const auto given = part::partition(ptr.data(), 8, 8, o);
    ASSERT_EQ(given.blocks.size(), scan.blocks.size());
    for (std::size_t b = 0; b < scan.blocks.size(); ++b) {
      EXPECT_EQ(given.blocks[b].row_begin, scan.blocks[b].row_begin);
      EXPECT_EQ(given.blocks[b].row_end, scan.blocks[b].row_end);
    }
    o.longest_row = 8;
    EXPECT_THROW(part::partition(ptr.data(), 8, 8, o), InvalidArgument);
  }
}

}  // namespace
}  // namespace kspmv
