// The host threads of the library's large loops (kspmv/core/parallel.hpp).
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <stdexcept>
#include <thread>
#include <vector>

#include "kspmv/core/parallel.hpp"
#include "thread_count.hpp"

namespace kspmv::test {
namespace {

TEST(ParallelBlocks, CoversEveryItemOnceInBlocksOfTheGrain) {
  for (const char* threads : {"1", "3", "16"}) {
    const ThreadCount t(std::atoi(threads));
    EXPECT_EQ(host_threads(), std::atoi(threads));
    for (const std::int64_t n : {0, 1, 99, 100, 101, 12345}) {
      std::vector<std::atomic<int>> hits(n);
      std::atomic<int> bad_blocks{0};
      parallel_blocks(n, 100, [&](std::int64_t b, std::int64_t e) {
        if (b % 100 != 0 || e - b > 100 || e > n || e <= b) ++bad_blocks;
        for (std::int64_t i = b; i < e; ++i) ++hits[i];
      });
      EXPECT_EQ(bad_blocks, 0) << n;
      for (std::int64_t i = 0; i < n; ++i) ASSERT_EQ(hits[i], 1) << "item " << i << " of " << n;
    }
  }
}

TEST(ParallelBlocks, HostThreadsAreTheHardwaresWithoutAPositiveSetting) {
  const unsigned hardware = std::max(1u, std::thread::hardware_concurrency());
  for (const int threads : {0, -3}) {
    const ThreadCount t(threads);
    EXPECT_EQ(host_threads(), int(hardware)) << threads;
  }
  const ThreadCount t(5000);
  EXPECT_EQ(host_threads(), 1024);
}

TEST(ParallelBlocks, RunsOnSeveralThreadsAndReportsProgressOnTheCaller) {
  const ThreadCount t(4);
  std::vector<std::thread::id> ids(64);
  std::vector<double> progress;
  const auto caller = std::this_thread::get_id();
  parallel_blocks(
      64, 1,
      [&](std::int64_t b, std::int64_t) {
        ids[b] = std::this_thread::get_id();
        std::this_thread::sleep_for(std::chrono::milliseconds(2));
      },
      [&](double f) {
        EXPECT_EQ(std::this_thread::get_id(), caller);
        progress.push_back(f);
      });
  std::sort(ids.begin(), ids.end());
  EXPECT_GT(std::unique(ids.begin(), ids.end()) - ids.begin(), 1);
  ASSERT_FALSE(progress.empty());
  EXPECT_TRUE(std::is_sorted(progress.begin(), progress.end()));
  EXPECT_GT(progress.front(), 0.0);
  EXPECT_LE(progress.back(), 1.0);
}

TEST(ParallelBlocks, RethrowsTheFirstErrorOnceEveryThreadStopped) {
  const ThreadCount t(4);
  std::atomic<int> running{0}, after{0};
  EXPECT_THROW(parallel_blocks(1000, 1,
                               [&](std::int64_t b, std::int64_t) {
                                 ++running;
                                 if (b == 10) throw std::runtime_error("block 10");
                                 --running;
                               }),
               std::runtime_error);
  after = running.load();
  EXPECT_EQ(after, 1);  // only the block that threw did not finish; none still runs
}

TEST(ParallelBlocks, AProgressThatThrowsIsRethrownOnceTheHelpersStopped) {
  const ThreadCount t(4);
  std::atomic<int> running{0};
  EXPECT_THROW(parallel_blocks(
                   1000, 1,
                   [&](std::int64_t, std::int64_t) {
                     ++running;
                     std::this_thread::sleep_for(std::chrono::microseconds(50));
                     --running;
                   },
                   [](double) { throw std::runtime_error("progress"); }),
               std::runtime_error);
  EXPECT_EQ(running.load(), 0);
}

TEST(ParallelBlocks, FetchAddIsAtomicAcrossThreads) {
  const ThreadCount t(8);
  std::int64_t counter = 0;
  parallel_blocks(100000, 10, [&](std::int64_t b, std::int64_t e) {
    for (std::int64_t i = b; i < e; ++i) fetch_add(&counter, 1);
  });
  EXPECT_EQ(counter, 100000);
}

TEST(ParallelBlocks, InclusiveScanMatchesTheSerialSum) {
  for (const char* threads : {"1", "5"}) {
    const ThreadCount t(std::atoi(threads));
    for (const std::int64_t n : {0, 1, 65535, 65536, 65537, 300001}) {
      std::vector<std::int64_t> v(n), want(n);
      std::int64_t sum = 0;
      for (std::int64_t i = 0; i < n; ++i) v[i] = (i * 7919) % 13 - 3, want[i] = sum += v[i];
      inclusive_scan(v.data(), n);
      EXPECT_EQ(v, want) << n << " items on " << threads << " threads";
    }
  }
}

}  // namespace
}  // namespace kspmv::test
