// Host-to-device copies on a host thread of their own, so that a set-up queues its device work
// and plans its kernels while the matrix crosses (Gao et al. 2024 §3.2: transfers hidden under
// work); the set-up's streams wait for the copies they read on the devices, by events. The
// thread copies through page-locked staging slots with asynchronous copies: a copy from pageable
// memory holds a lock of the CUDA driver for its whole length, and the other thread's module
// loads, cudaMalloc and pageable copies would wait for it. One thread, started on first use and
// kept until the process ends, runs the uploads one after another (starting a thread took about
// 0.15 ms, most of a small matrix's SpMV). The multi-device set-up's upload runs on it.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <memory>
#include <mutex>
#include <vector>

#include <cuda_runtime_api.h>

namespace kspmv::cuda {

class Event;

class UploadThread {
 public:
  struct Copy {
    int device = 0;
    void* dst = nullptr;  // device memory of `device`
    const void* src = nullptr;
    std::size_t bytes = 0;
  };
  // Page-locked staging, taken from (and given back to) a list of idle ones that lives until the
  // process ends: kSlots slots of kSlotBytes.
  static constexpr int kSlots = 4;
  static constexpr std::size_t kSlotBytes = std::size_t{8} << 20;

  // Tells the upload thread that an upload will soon be queued (see upload_thread.cpp).
  static void expect();
  // Queues copying `copies` in order, on one non-blocking stream per device, after the uploads
  // queued before. The copies from index `gate` on wait for open() (or finish).
  explicit UploadThread(std::vector<Copy> copies, std::size_t gate = SIZE_MAX);
  // Stops after the copy in progress and waits for the rest to be dropped (an error is for then
  // and finish).
  ~UploadThread();
  UploadThread(const UploadThread&) = delete;
  UploadThread& operator=(const UploadThread&) = delete;

  // Lets the copies from the gate on go.
  void open();
  // Makes `stream` (of any device) wait for copy k and the copies before it to its device, once
  // the thread has queued them; returns the milliseconds the host waited for that. Rethrows the
  // error that stopped the thread before it queued copy k.
  double then(std::size_t k, cudaStream_t stream);
  // Returns once copy k and the copies before it to its device have landed (the milliseconds
  // it waited); rethrows as `then` does.
  double landed(std::size_t k);
  // Opens the gate, waits until every copy has landed and the upload has ended (the
  // milliseconds it waited); rethrows its error.
  double finish();
  // After finish: milliseconds from the start until copies [0, k) were queued, and until all
  // had landed (the staging's allocation, where none was idle, included).
  double queued_ms(std::size_t k) const;
  double total_ms() const;

 private:
  friend class CopyThread;
  void run() noexcept;
  double wait_queued(std::size_t k);
  void wait_ended();

  std::vector<Copy> copies_;
  std::size_t gate_;
  std::vector<std::unique_ptr<Event>> landed_;  // each copy's, recorded once it is queued
  std::vector<double> queued_ms_;
  double total_ms_ = 0;
  mutable std::mutex mutex_;
  std::condition_variable queued_cv_;
  std::size_t queued_ = 0;
  bool open_ = false, stop_ = false, ended_ = false;
  std::exception_ptr error_;
};

}  // namespace kspmv::cuda
