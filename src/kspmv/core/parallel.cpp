#include "kspmv/core/parallel.hpp"

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <exception>
#include <mutex>
#include <system_error>
#include <thread>
#include <vector>

namespace kspmv {

int host_threads() {
  const char* env = std::getenv("KSPMV_THREADS");
  const long asked = env ? std::strtol(env, nullptr, 10) : 0;
  if (asked > 0) return static_cast<int>(std::min<long>(asked, 1024));
  // glibc reads /sys/devices/system/cpu/online for this at every call: only when needed.
  return static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
}

void parallel_blocks(std::int64_t n, std::int64_t grain,
                     const std::function<void(std::int64_t, std::int64_t)>& body,
                     const std::function<void(double)>& progress) {
  if (n <= 0) return;
  grain = std::max<std::int64_t>(grain, 1);
  const std::int64_t blocks = (n + grain - 1) / grain;
  const int threads = static_cast<int>(std::min<std::int64_t>(host_threads(), blocks));
  std::atomic<std::int64_t> next{0}, done{0};
  std::atomic<bool> failed{false};
  std::exception_ptr error;
  std::mutex error_mutex;
  const auto work = [&](bool report) {
    for (std::int64_t b; !failed.load(std::memory_order_relaxed) && (b = next++) < blocks;) {
      try {
        body(b * grain, std::min(n, (b + 1) * grain));
      } catch (...) {
        const std::lock_guard<std::mutex> lock(error_mutex);
        if (!error) error = std::current_exception();
        failed = true;
      }
      const std::int64_t finished = ++done;
      if (report && progress) progress(double(finished) / double(blocks));
    }
  };
  std::vector<std::thread> pool;
  pool.reserve(threads - 1);
  for (int t = 1; t < threads; ++t) {
    try {
      pool.emplace_back(work, false);
    } catch (const std::system_error&) {  // no more threads to be had: fewer do the work
      break;
    }
  }
  work(true);
  for (std::thread& t : pool) t.join();
  if (error) std::rethrow_exception(error);
  if (progress) progress(1.0);
}

void inclusive_scan(std::int64_t* v, std::int64_t n) {
  // Block sums in parallel, their scan, then each block offset by the blocks before it.
  constexpr std::int64_t kGrain = std::int64_t(1) << 16;
  const std::int64_t blocks = (n + kGrain - 1) / kGrain;
  if (blocks <= 1) {
    for (std::int64_t i = 1; i < n; ++i) v[i] += v[i - 1];
    return;
  }
  std::vector<std::int64_t> sums(static_cast<std::size_t>(blocks) + 1, 0);
  parallel_blocks(n, kGrain, [&](std::int64_t b, std::int64_t e) {
    std::int64_t s = 0;
    for (std::int64_t i = b; i < e; ++i) s += v[i], v[i] = s;
    sums[b / kGrain + 1] = s;
  });
  for (std::int64_t k = 0; k < blocks; ++k) sums[k + 1] += sums[k];
  parallel_blocks(n, kGrain, [&](std::int64_t b, std::int64_t e) {
    const std::int64_t before = sums[b / kGrain];
    for (std::int64_t i = b; i < e; ++i) v[i] += before;
  });
}

}  // namespace kspmv
