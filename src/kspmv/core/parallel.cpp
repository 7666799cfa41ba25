#include "kspmv/core/parallel.hpp"

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstdlib>
#include <deque>
#include <exception>
#include <memory>
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

namespace {

// The helpers of parallel_blocks: threads made once and kept (making two threads a call cost the
// Matrix Market fuzz target, a few reads of a few hundred bytes an input, most of its time under
// AddressSanitizer). A task that no idle thread takes is never waited for: its caller does the
// blocks itself, so that nested and concurrent calls cannot wait on each other.
class Helpers {
 public:
  // Queues `count` copies of `task` for the helpers, made up to `count` threads.
  void post(int count, const std::function<void()>& task) {
    const std::lock_guard<std::mutex> lock(mutex_);
    for (int t = 0; t < count; ++t) tasks_.push_back(task);
    for (; made_ < count; ++made_) {
      try {  // detached: they live as long as the process (the object is never freed)
        std::thread([this] { serve(); }).detach();
      } catch (const std::system_error&) {  // no more threads to be had: fewer do the work
        break;
      }
    }
    wake_.notify_all();
  }

 private:
  [[noreturn]] void serve() {
    for (;;) {
      std::function<void()> task;
      {
        std::unique_lock<std::mutex> lock(mutex_);
        wake_.wait(lock, [this] { return !tasks_.empty(); });
        task = std::move(tasks_.front());
        tasks_.pop_front();
      }
      task();
    }
  }

  std::mutex mutex_;
  std::condition_variable wake_;
  std::deque<std::function<void()>> tasks_;
  int made_ = 0;  // threads serving
};

Helpers& helpers() {
  static Helpers* const h = new Helpers;  // never freed: its threads wait on it until exit
  return *h;
}

// One call's shared state, kept alive by the tasks that a helper may take after the call ended.
struct Loop {
  std::atomic<std::int64_t> next{0}, done{0};
  std::atomic<bool> failed{false};
  std::exception_ptr error;
  std::mutex mutex;  // error, joined, running
  std::condition_variable finished;
  bool joined = false;  // the caller is done: a helper taking a task now leaves at once
  int running = 0;      // helpers inside the loop
};

}  // namespace

void parallel_blocks(std::int64_t n, std::int64_t grain,
                     const std::function<void(std::int64_t, std::int64_t)>& body,
                     const std::function<void(double)>& progress) {
  if (n <= 0) return;
  grain = std::max<std::int64_t>(grain, 1);
  const std::int64_t blocks = (n + grain - 1) / grain;
  const int threads = static_cast<int>(std::min<std::int64_t>(host_threads(), blocks));
  const auto loop = std::make_shared<Loop>();
  const auto work = [&](bool report) {
    Loop& l = *loop;
    for (std::int64_t b; !l.failed.load(std::memory_order_relaxed) && (b = l.next++) < blocks;) {
      try {
        body(b * grain, std::min(n, (b + 1) * grain));
      } catch (...) {
        const std::lock_guard<std::mutex> lock(l.mutex);
        if (!l.error) l.error = std::current_exception();
        l.failed = true;
      }
      const std::int64_t finished = ++l.done;
      if (report && progress) progress(double(finished) / double(blocks));
    }
  };
  if (threads > 1) {
    // A helper enters only while the caller has not finished, and the caller waits for those
    // inside: `work` and what it refers to live until then.
    const std::function<void()> task = [loop, &work] {
      {
        const std::lock_guard<std::mutex> lock(loop->mutex);
        if (loop->joined) return;
        ++loop->running;
      }
      work(false);
      const std::lock_guard<std::mutex> lock(loop->mutex);
      if (--loop->running == 0) loop->finished.notify_all();
    };
    try {
      helpers().post(threads - 1, task);
    } catch (const std::exception&) {  // no memory for the queue: the caller does the blocks
    }
  }
  try {
    work(true);
  } catch (...) {  // progress threw: the helpers stop before their next block
    const std::lock_guard<std::mutex> lock(loop->mutex);
    if (!loop->error) loop->error = std::current_exception();
    loop->failed = true;
  }
  {
    std::unique_lock<std::mutex> lock(loop->mutex);
    loop->joined = true;
    loop->finished.wait(lock, [&] { return loop->running == 0; });
  }
  if (loop->error) std::rethrow_exception(loop->error);
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
