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
  const unsigned hardware = std::max(1u, std::thread::hardware_concurrency());
  const char* env = std::getenv("KSPMV_THREADS");
  const long asked = env ? std::strtol(env, nullptr, 10) : 0;
  return static_cast<int>(asked > 0 ? std::min<long>(asked, 1024) : hardware);
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
}

}  // namespace kspmv
