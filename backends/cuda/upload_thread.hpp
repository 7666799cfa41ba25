// Host-to-device copies on a host thread of their own, so that a set-up queues its device work
// and plans its kernels while the matrix crosses (Gao et al. 2024 §3.2: transfers hidden under
// work), waiting only for the copies it reads. The multi-device set-up's upload runs on one.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

namespace kspmv::cuda {

class UploadThread {
 public:
  struct Copy {
    int device = 0;
    void* dst = nullptr;  // device memory of `device`
    const void* src = nullptr;
    std::size_t bytes = 0;
  };
  // Starts copying `copies` in order, each on a non-blocking stream of its device.
  explicit UploadThread(std::vector<Copy> copies);
  // Stops after the copy in progress and waits for the thread (an error is for wait and finish).
  ~UploadThread();
  UploadThread(const UploadThread&) = delete;
  UploadThread& operator=(const UploadThread&) = delete;

  // Returns once copies [0, k) have landed on their devices, and the milliseconds it waited;
  // rethrows the error that stopped the copies before the k-th.
  double wait(std::size_t k);
  // Waits for every copy (the milliseconds it waited); rethrows the thread's error.
  double finish();
  // Milliseconds spent in copies [first, last), which have landed.
  double copy_ms(std::size_t first, std::size_t last) const;

 private:
  void run() noexcept;

  std::vector<Copy> copies_;
  std::vector<double> ms_;  // each copy's, written before it counts as landed
  mutable std::mutex mutex_;
  std::condition_variable landed_cv_;
  std::size_t landed_ = 0;
  bool stop_ = false;
  std::exception_ptr error_;
  std::thread thread_;  // last: it starts once the members above exist
};

}  // namespace kspmv::cuda
