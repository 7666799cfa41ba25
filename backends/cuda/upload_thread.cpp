#include "backends/cuda/upload_thread.hpp"

#include <stdexcept>
#include <utility>

#include "backends/cuda/memory.hpp"
#include "kspmv/core/timer.hpp"

namespace kspmv::cuda {

UploadThread::UploadThread(std::vector<Copy> copies)
    : copies_(std::move(copies)), ms_(copies_.size(), 0), thread_([this] { run(); }) {}

UploadThread::~UploadThread() {
  {
    const std::lock_guard<std::mutex> lock(mutex_);
    stop_ = true;
  }
  if (thread_.joinable()) thread_.join();
}

void UploadThread::run() noexcept {
  try {
    std::vector<std::pair<int, Stream>> streams;  // one per device, made on first use
    for (std::size_t k = 0; k < copies_.size(); ++k) {
      {
        const std::lock_guard<std::mutex> lock(mutex_);
        if (stop_) return;
      }
      const Copy& c = copies_[k];
      DeviceGuard guard(c.device);
      auto s = streams.begin();
      while (s != streams.end() && s->first != c.device) ++s;
      if (s == streams.end()) s = streams.emplace(s, c.device, Stream(kReuse));
      const auto t0 = Clock::now();
      copy_to_device(c.dst, c.src, c.bytes, s->second.get());
      ms_[k] = ms_since(t0);
      const std::lock_guard<std::mutex> lock(mutex_);
      landed_ = k + 1;
      landed_cv_.notify_all();
    }
  } catch (...) {
    const std::lock_guard<std::mutex> lock(mutex_);
    error_ = std::current_exception();
    landed_cv_.notify_all();
  }
}

double UploadThread::wait(std::size_t k) {
  const auto t0 = Clock::now();
  std::unique_lock<std::mutex> lock(mutex_);
  landed_cv_.wait(lock, [&] { return landed_ >= k || error_; });
  if (landed_ < k) std::rethrow_exception(error_);
  return ms_since(t0);
}

double UploadThread::finish() {
  const double waited = wait(copies_.size());
  thread_.join();
  thread_ = std::thread();
  return waited;
}

double UploadThread::copy_ms(std::size_t first, std::size_t last) const {
  const std::lock_guard<std::mutex> lock(mutex_);
  if (first > last || last > landed_)
    throw std::logic_error("UploadThread::copy_ms: copies that have not landed");
  double ms = 0;
  for (std::size_t k = first; k < last; ++k) ms += ms_[k];
  return ms;
}

}  // namespace kspmv::cuda
