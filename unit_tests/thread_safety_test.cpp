// The thread-safety contract (README "Reliability", kspmv/operator.hpp): distinct Operators on
// distinct threads are independent for every kernel of the registry (on CUDA each thread on a
// stream of its own); one Operator called from two threads at once refuses the second call with
// InvalidArgument instead of racing. scripts/tsan.sh runs these under ThreadSanitizer.
#include <gtest/gtest.h>

#include <atomic>
#include <string>
#include <thread>
#include <vector>

#include "kspmv/core/error.hpp"
#include "kspmv/core/parallel.hpp"
#include "kspmv/operator.hpp"
#include "testing/reference.hpp"
#include "testing/test_matrices.hpp"
#ifdef KSPMV_HAVE_CUDA
#include "backends/cuda/memory.hpp"
#endif

namespace kspmv::test {
namespace {

constexpr int kThreads = 8;
constexpr int kApplies = 4;

// y = A x on `op` with host vectors, or device vectors on a stream of the calling thread's own
// (CUDA backend).
template <class S>
void apply_here(Operator<S>& op, const std::vector<S>& x, std::vector<S>& y) {
#ifdef KSPMV_HAVE_CUDA
  if (op.options().backend == Backend::Cuda) {
    cuda::DeviceBuffer<S> dx(x.size()), dy(y.size());
    dx.upload(x.data());
    const cuda::Stream stream;
    op.apply(stream.get(), S(1), dx.data(), S(0), dy.data());
    stream.synchronize();
    dy.download(y.data());
    return;
  }
#endif
  op.apply(S(1), x.data(), S(0), y.data());
}

// kThreads threads, each building its own Operator of `kernel` on `a` and applying it kApplies
// times; the error of every apply against the reference.
void run_threads(Backend backend, Kernel kernel) {
  const auto a = random_matrix<double>(700, 650, 9, 5);
  const auto x = random_vector<double>(a.ncols, 6);
  std::vector<double> ref(a.nrows);
  reference::spmv(1.0, a, x.data(), 0.0, ref.data());
  std::vector<double> worst(kThreads, 0);
  std::vector<std::string> failures(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      try {
        Options o;
        o.backend = backend;
        o.kernel = kernel;
        Operator<double> op(a, o);
        for (int i = 0; i < kApplies; ++i) {
          std::vector<double> y(a.nrows, 0);
          apply_here(op, x, y);
          worst[t] = std::max(worst[t], reference::rel_l2_error(y.data(), ref.data(), y.size()));
        }
      } catch (const std::exception& e) {
        failures[t] = e.what();
      }
    });
  }
  for (auto& th : threads) th.join();
  for (int t = 0; t < kThreads; ++t) {
    EXPECT_EQ(failures[t], "") << to_string(backend) << " " << to_string(kernel) << " thread " << t;
    EXPECT_LE(worst[t], reference::tolerance<double>())
        << to_string(backend) << " " << to_string(kernel) << " thread " << t;
  }
}

TEST(ThreadSafety, EightThreadsEachWithItsOwnOperatorRunEveryHostKernel) {
  for (const Backend b : {Backend::Host, Backend::KokkosDefault}) {
    run_threads(b, Kernel::Auto);
    for (const KernelInfo& row : kernels_of(b)) run_threads(b, row.kernel);
  }
}

TEST(ThreadSafety, EightThreadsEachWithItsOwnOperatorAndStreamRunEveryCudaKernel) {
  if (cuda_device_count() == 0) GTEST_SKIP() << "no CUDA device";
  run_threads(Backend::Cuda, Kernel::Auto);
  for (const KernelInfo& row : kernels_of(Backend::Cuda)) run_threads(Backend::Cuda, row.kernel);
}

// Two threads on one Operator: every call either runs alone or is refused with InvalidArgument;
// the calls that ran are right (a race would show as a wrong y, or under TSan).
TEST(ThreadSafety, OneOperatorFromTwoThreadsAtOnceIsRefusedNotRaced) {
  const auto a = random_matrix<double>(3000, 3000, 30, 7);
  const auto x = random_vector<double>(a.ncols, 8);
  std::vector<double> ref(a.nrows);
  reference::spmv(1.0, a, x.data(), 0.0, ref.data());
  for (const KernelInfo& row : kernels_of(Backend::Host)) {
    Options o;
    o.kernel = row.kernel;
    Operator<double> op(a, o);
    std::atomic<int> refused{0}, ran{0}, wrong{0};
    const auto work = [&] {
      std::vector<double> y(a.nrows);
      for (int i = 0; i < 50; ++i) {
        try {
          op.apply(1.0, x.data(), 0.0, y.data());
          (void)op.timings();
          ++ran;
          if (reference::rel_l2_error(y.data(), ref.data(), y.size()) >
              reference::tolerance<double>())
            ++wrong;
        } catch (const InvalidArgument&) {
          ++refused;
        }
      }
    };
    std::thread other(work);
    work();
    other.join();
    EXPECT_EQ(wrong.load(), 0) << to_string(row.kernel);
    EXPECT_GT(ran.load(), 0) << to_string(row.kernel);
    EXPECT_EQ(ran.load() + refused.load(), 100) << to_string(row.kernel);
  }
}

// The refusal itself, made certain: a call while another holds the Operator.
TEST(ThreadSafety, ACallWhileAnotherThreadAppliesThrowsInvalidArgument) {
  const auto a = random_matrix<double>(200000, 200000, 20, 9);
  const auto x = random_vector<double>(a.ncols, 10);
  Operator<double> op(a);
  std::vector<double> y(a.nrows);
  std::atomic<bool> stop{false};
  std::atomic<int> refused{0};
  std::string message;
  const auto apply = [&](std::vector<double>& out) {
    try {
      op.apply(1.0, x.data(), 0.0, out.data());
    } catch (const InvalidArgument& e) {
      if (refused++ == 0) message = e.what();
    }
  };
  std::thread applier([&] {
    while (!stop) apply(y);
  });
  std::vector<double> y2(a.nrows);
  for (int i = 0; i < 200 && refused == 0; ++i) apply(y2);
  stop = true;
  applier.join();
  EXPECT_GT(refused.load(), 0);
  EXPECT_NE(message.find("two threads"), std::string::npos) << message;
}

// The host loops' helper threads are kept between calls and shared by every caller: eight
// threads at once, each loop's blocks calling a loop of their own, every item counted once.
TEST(ThreadSafety, ConcurrentAndNestedHostLoopsCoverEveryItemOnce) {
  constexpr std::int64_t kOuter = 64, kInner = 300;
  std::vector<std::vector<int>> seen(kThreads, std::vector<int>(kOuter * kInner, 0));
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      for (int round = 0; round < 20; ++round)
        parallel_blocks(kOuter, 4, [&](std::int64_t b, std::int64_t e) {
          for (std::int64_t i = b; i < e; ++i)
            parallel_blocks(kInner, 16, [&](std::int64_t ib, std::int64_t ie) {
              for (std::int64_t j = ib; j < ie; ++j) ++seen[t][i * kInner + j];
            });
        });
    });
  for (std::thread& th : threads) th.join();
  for (int t = 0; t < kThreads; ++t)
    for (const int count : seen[t]) ASSERT_EQ(count, 20) << "thread " << t;
}

}  // namespace
}  // namespace kspmv::test
