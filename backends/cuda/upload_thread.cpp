#include "backends/cuda/upload_thread.hpp"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <deque>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>

#include "backends/cuda/memory.hpp"
#include "kspmv/core/error.hpp"
#include "kspmv/core/timer.hpp"

namespace kspmv::cuda {

// The thread of every upload, one at a time. Waking a sleeping thread took about 0.1 ms, as long
// as a small matrix's SpMV: told that an upload is coming, it spins for it a while instead, and
// the caller spins for the end of the last copies.
class CopyThread {
 public:
  static CopyThread& get() {
    static CopyThread t;
    return t;
  }
  void submit(UploadThread* u) {
    const std::lock_guard<std::mutex> lock(mutex_);
    jobs_.push_back(u);
    cv_.notify_one();
  }
  void expect() {
    const std::lock_guard<std::mutex> lock(mutex_);
    expect_ = true;
    cv_.notify_one();
  }

 private:
  static constexpr std::chrono::milliseconds kSpin{20};

  CopyThread() : thread_([this] { loop(); }) {}
  ~CopyThread() {
    {
      const std::lock_guard<std::mutex> lock(mutex_);
      quit_ = true;
      cv_.notify_one();
    }
    thread_.join();
  }
  void loop() {
    std::unique_lock<std::mutex> lock(mutex_);
    for (;;) {
      cv_.wait(lock, [&] { return quit_ || expect_ || !jobs_.empty(); });
      if (jobs_.empty() && expect_ && !quit_) {
        expect_ = false;
        const auto until = Clock::now() + kSpin;
        while (jobs_.empty() && !quit_ && Clock::now() < until) {
          lock.unlock();
          std::this_thread::yield();
          lock.lock();
        }
        continue;
      }
      if (jobs_.empty()) return;  // quit
      UploadThread* u = jobs_.front();
      jobs_.pop_front();
      lock.unlock();
      u->run();
      lock.lock();
    }
  }

  std::mutex mutex_;
  std::condition_variable cv_;
  std::deque<UploadThread*> jobs_;
  bool quit_ = false, expect_ = false;
  std::thread thread_;  // last: it starts once the members above exist
};

void UploadThread::expect() {
  CopyThread::get().expect();
}

UploadThread::UploadThread(std::vector<Copy> copies, std::size_t gate)
    : copies_(std::move(copies)),
      gate_(gate),
      landed_(copies_.size()),
      queued_ms_(copies_.size(), 0) {
  CopyThread::get().submit(this);
}

UploadThread::~UploadThread() {
  {
    const std::lock_guard<std::mutex> lock(mutex_);
    stop_ = true;
    queued_cv_.notify_all();  // a copy waiting at the gate
  }
  wait_ended();
}

void UploadThread::open() {
  const std::lock_guard<std::mutex> lock(mutex_);
  open_ = true;
  queued_cv_.notify_all();
}

void UploadThread::wait_ended() {
  std::unique_lock<std::mutex> lock(mutex_);
  queued_cv_.wait(lock, [&] { return ended_; });
}

void UploadThread::run() noexcept {
  const auto t0 = Clock::now();
  struct Lane {  // a device's stream, and the events after each staging slot's last copy
    int device;
    Stream stream;
    std::vector<Event> slot_free;
  };
  std::vector<Lane> lanes;
  std::vector<int> slot_lane(kSlots, -1);  // the lane whose copy last read the slot
  unsigned char* staging = nullptr;
  try {
    staging = static_cast<unsigned char*>(take_idle(Idle::Staging, -1));
    if (!staging) staging = static_cast<unsigned char*>(pinned_malloc(kSlots * kSlotBytes));
    int slot = 0;
    for (std::size_t k = 0; k < copies_.size(); ++k) {
      {
        std::unique_lock<std::mutex> lock(mutex_);
        if (k == gate_) queued_cv_.wait(lock, [&] { return open_ || stop_; });
        if (stop_) break;
      }
      const Copy& c = copies_[k];
      if (c.bytes > 0 && (!c.dst || !c.src))
        throw InvalidArgument("upload: copy " + std::to_string(k) + " of " +
                              std::to_string(c.bytes) + " bytes has no " +
                              (c.dst ? "source" : "destination"));
      DeviceGuard guard(c.device);
      int l = 0;
      while (l < static_cast<int>(lanes.size()) && lanes[l].device != c.device) ++l;
      if (l == static_cast<int>(lanes.size())) {
        lanes.push_back({c.device, Stream(kReuse), {}});
        for (int s = 0; s < kSlots; ++s) lanes.back().slot_free.emplace_back(false, kReuse);
      }
      Lane& lane = lanes[l];
      const auto* src = static_cast<const unsigned char*>(c.src);
      auto* dst = static_cast<unsigned char*>(c.dst);
      for (std::size_t at = 0; at < c.bytes; at += kSlotBytes, slot = (slot + 1) % kSlots) {
        const std::size_t n = std::min(kSlotBytes, c.bytes - at);
        if (slot_lane[slot] >= 0) lanes[slot_lane[slot]].slot_free[slot].synchronize();
        unsigned char* room = staging + slot * kSlotBytes;
        std::memcpy(room, src + at, n);
        KSPMV_CUDA_CHECK(
            cudaMemcpyAsync(dst + at, room, n, cudaMemcpyHostToDevice, lane.stream.get()));
        lane.slot_free[slot].record(lane.stream.get());
        slot_lane[slot] = l;
      }
      auto landed = std::make_unique<Event>(false, kReuse);
      landed->record(lane.stream.get());
      const std::lock_guard<std::mutex> lock(mutex_);
      landed_[k] = std::move(landed);
      queued_ms_[k] = ms_since(t0);
      queued_ = k + 1;
      queued_cv_.notify_all();
    }
    for (Lane& lane : lanes) {
      DeviceGuard guard(lane.device);
      lane.stream.synchronize();
    }
  } catch (...) {
    for (Lane& lane : lanes) cudaStreamSynchronize(lane.stream.get());  // staging is read no more
    const std::lock_guard<std::mutex> lock(mutex_);
    error_ = std::current_exception();
    queued_cv_.notify_all();
  }
  if (staging) give_idle(Idle::Staging, -1, staging);
  lanes.clear();
  const std::lock_guard<std::mutex> lock(mutex_);
  total_ms_ = ms_since(t0);
  ended_ = true;
  queued_cv_.notify_all();
}

double UploadThread::wait_queued(std::size_t k) {
  const auto t0 = Clock::now();
  std::unique_lock<std::mutex> lock(mutex_);
  queued_cv_.wait(lock, [&] { return queued_ >= k || error_; });
  if (queued_ < k) std::rethrow_exception(error_);
  return ms_since(t0);
}

double UploadThread::then(std::size_t k, cudaStream_t stream) {
  const double waited = wait_queued(k + 1);
  KSPMV_CUDA_CHECK(cudaStreamWaitEvent(stream, landed_[k]->get(), 0));
  return waited;
}

double UploadThread::landed(std::size_t k) {
  const auto t0 = Clock::now();
  wait_queued(k + 1);
  landed_[k]->synchronize();
  return ms_since(t0);
}

double UploadThread::finish() {
  const auto t0 = Clock::now();
  open();
  {
    std::unique_lock<std::mutex> lock(mutex_);
    queued_cv_.wait(lock, [&] { return queued_ == copies_.size() || ended_; });
  }
  for (;;) {  // the last copies land within a few slots' time: no sleep, no wake-up to wait for
    {
      const std::lock_guard<std::mutex> lock(mutex_);
      if (ended_) break;
    }
    std::this_thread::yield();
  }
  if (error_) std::rethrow_exception(error_);
  return ms_since(t0);
}

double UploadThread::queued_ms(std::size_t k) const {
  const std::lock_guard<std::mutex> lock(mutex_);
  if (!ended_) throw std::logic_error("UploadThread::queued_ms before finish");
  return k == 0 ? 0 : queued_ms_.at(k - 1);
}

double UploadThread::total_ms() const {
  const std::lock_guard<std::mutex> lock(mutex_);
  if (!ended_) throw std::logic_error("UploadThread::total_ms before finish");
  return total_ms_;
}

}  // namespace kspmv::cuda
