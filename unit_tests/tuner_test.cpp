// The tuner's one rule (core/tuner.hpp): candidates in turn or interleaved, warm-up calls
// dropped, the smallest median kept (ties: the earlier), every trial recorded.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "kspmv/core/error.hpp"
#include "kspmv/core/tuner.hpp"

namespace kspmv {
namespace {

// Feeds the tuner the times of `calls[k]` for candidate k, in the order it asks for them.
void run(Tuner& t, const std::vector<std::vector<double>>& calls) {
  std::vector<std::size_t> used(calls.size(), 0);
  while (!t.done()) {
    const std::size_t k = t.current();
    t.record(calls[k].at(used[k]++));
  }
}

TEST(TunerTest, CandidatesRunInTurnAndTheSmallestMedianAfterWarmUpIsKept) {
  Tuner t("kernel", {"a", "b", "c"}, 1, 3);
  EXPECT_FALSE(t.done());
  EXPECT_EQ(t.current(), 0u);
  // a: warm-up 100 dropped, median 5; b: median 4 (one slow run does not matter); c: median 6.
  run(t, {{100, 5, 1, 9}, {0.5, 4, 4, 50}, {6, 6, 6, 6}});
  EXPECT_EQ(t.best(), 1u);
  EXPECT_EQ(t.current(), 1u);
  const auto trials = t.trials();
  ASSERT_EQ(trials.size(), 3u);
  EXPECT_EQ(trials[0].choice, "kernel");
  EXPECT_EQ(trials[0].candidate, "a");
  EXPECT_DOUBLE_EQ(trials[0].median_ms, 5);
  EXPECT_DOUBLE_EQ(trials[1].median_ms, 4);
  EXPECT_DOUBLE_EQ(trials[2].median_ms, 6);
  for (const auto& tr : trials) EXPECT_EQ(tr.runs, 3);
  EXPECT_FALSE(trials[0].kept);
  EXPECT_TRUE(trials[1].kept);
  EXPECT_FALSE(trials[2].kept);
}

// Interleaved: a call of each candidate a round, the warm-up rounds dropped; the calls' order
// is a, b, c, a, b, c, ...
TEST(TunerTest, InterleavedCandidatesTakeACallEachARoundWarmUpRoundsFirst) {
  Tuner t("kernel", {"a", "b", "c"}, 1, 3, Tuner::Order::Interleaved);
  std::vector<std::size_t> order;
  // a slow first round (the warm-up, dropped), then b fastest by its median.
  const std::vector<std::vector<double>> calls = {{90, 5, 5, 5}, {80, 4, 9, 4}, {70, 6, 6, 1}};
  std::vector<std::size_t> used(3, 0);
  while (!t.done()) {
    const std::size_t k = t.current();
    order.push_back(k);
    t.record(calls[k].at(used[k]++));
  }
  EXPECT_EQ(order, (std::vector<std::size_t>{0, 1, 2, 0, 1, 2, 0, 1, 2, 0, 1, 2}));
  EXPECT_EQ(t.best(), 1u);
  EXPECT_EQ(t.current(), 1u);
  const auto trials = t.trials();
  EXPECT_DOUBLE_EQ(trials[0].median_ms, 5);
  EXPECT_DOUBLE_EQ(trials[1].median_ms, 4);
  EXPECT_DOUBLE_EQ(trials[2].median_ms, 6);
  for (const auto& tr : trials) EXPECT_EQ(tr.runs, 3);
  EXPECT_TRUE(trials[1].kept);
  Tuner one("kernel", {"only"}, 1, 3, Tuner::Order::Interleaved);
  EXPECT_TRUE(one.done());
}

TEST(TunerTest, TiesKeepTheEarlierCandidateAndEvenRunsTakeTheMiddlePairsMean) {
  Tuner t("exchange", {"x", "y"}, 0, 4);
  run(t, {{1, 2, 3, 4}, {4, 1, 3, 2}});
  EXPECT_DOUBLE_EQ(t.trials()[0].median_ms, 2.5);
  EXPECT_DOUBLE_EQ(t.trials()[1].median_ms, 2.5);
  EXPECT_EQ(t.best(), 0u);
}

TEST(TunerTest, OneCandidateIsKeptUntimedAndBadArgumentsThrow) {
  Tuner t("partition", {"only"});
  EXPECT_TRUE(t.done());
  EXPECT_EQ(t.best(), 0u);
  t.record(7);  // nothing left to time
  ASSERT_EQ(t.trials().size(), 1u);
  EXPECT_TRUE(t.trials()[0].kept);
  EXPECT_EQ(t.trials()[0].runs, 0);
  EXPECT_THROW(Tuner("kernel", {}), InvalidArgument);
  EXPECT_THROW(Tuner("kernel", {"a", "b"}, -1, 3), InvalidArgument);
  EXPECT_THROW(Tuner("kernel", {"a", "b"}, 1, 0), InvalidArgument);
}

TEST(TunerTest, TrialsBeforeTheEndShowWhatRanAndKeepNothing) {
  Tuner t("kernel", {"a", "b"}, kTuneWarmup, kTuneRuns);
  for (int i = 0; i < kTuneWarmup + kTuneRuns; ++i) t.record(2.0);
  EXPECT_EQ(t.current(), 1u);
  const auto trials = t.trials();
  EXPECT_EQ(trials[0].runs, kTuneRuns);
  EXPECT_EQ(trials[1].runs, 0);
  EXPECT_FALSE(trials[0].kept || trials[1].kept);
}

}  // namespace
}  // namespace kspmv
