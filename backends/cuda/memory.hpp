// RAII device and pinned host buffers, streams and events (one device each, no copies).
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <utility>
#include <vector>

#include "backends/cuda/check.hpp"

namespace kspmv::cuda {

// Makes `device` current for the lifetime of the guard and restores the previous one.
class DeviceGuard {
 public:
  explicit DeviceGuard(int device);
  ~DeviceGuard();
  DeviceGuard(const DeviceGuard&) = delete;
  DeviceGuard& operator=(const DeviceGuard&) = delete;

 private:
  int previous_ = 0;
  bool changed_ = false;
};

// Runs f with `device` current, for destructors: errors are ignored, never thrown.
template <class F>
void on_device_noexcept(int device, F&& f) noexcept {
  int previous = 0;
  const bool switched =
      cudaGetDevice(&previous) == cudaSuccess && cudaSetDevice(device) == cudaSuccess;
  f();
  if (switched) cudaSetDevice(previous);
}

void* device_malloc(std::size_t bytes);  // DeviceOutOfMemory on failure
void device_free(void* p) noexcept;
// Stream-ordered device memory from kspmv's own pool of the current device, for set-up scratch
// and an executor's small buffers (cuSPARSE's work space, halo links): a cudaMalloc and its
// cudaFree took 0.05-0.23 ms each on an H100, an allocation the pool can serve from memory it
// holds about 1 us. Freed memory stays in the pool, up to kPoolKeepBytes a device, for the next
// set-up. The memory is ready on `stream` at once, on other streams after `stream`'s work
// queued so far. Devices without memory pools get cudaMalloc. DeviceOutOfMemory on failure.
// DeviceBuffer takes larger requests than kPoolKeepBytes from cudaMalloc: memory the pool has
// to map anew costs more than a cudaMalloc (128 MB: 0.18 against 0.07 ms; the halo links of
// the uniform and k-mer families, 0.2-0.7 GB a device, took up to 1.4 and 2.2 ms from the pool).
inline constexpr std::size_t kPoolKeepBytes = std::size_t{256} << 20;
void* pool_malloc(std::size_t bytes, cudaStream_t stream);
// Waits for the owning device's work, as cudaFree does, then gives p back to its pool.
void pool_free(void* p) noexcept;
// Gives p (of pool_malloc, on the current device) back to its pool once `stream` has passed its
// work queued so far, without waiting (a device without pools: cudaFree, which waits).
void pool_free_after(void* p, cudaStream_t stream) noexcept;
void* pinned_malloc(std::size_t bytes);  // CudaError on failure
void pinned_free(void* p) noexcept;
// Copies `bytes` from host memory to the current device and returns when they have landed. A
// plain cudaMemcpy from pageable memory may return once the bytes are staged, before the DMA
// completes, and kernels on non-blocking streams do not wait for it: this one waits.
void copy_to_device(void* dst, const void* host, std::size_t bytes);
// Copies `bytes` of device (or any CUDA-visible) memory to host memory, after the work queued
// on the legacy default stream and, when given, on `after` (the host waits for that stream).
void copy_to_host(void* host, const void* src, std::size_t bytes, cudaStream_t after = nullptr);
// Enqueues a copy of `bytes` from one device's memory to another's (or the same's) on `stream`:
// straight over the link where peer access is enabled, else staged by the driver. Unlike
// cudaMemcpyPeerAsync, it may be captured into a CUDA graph.
void copy_between_devices(void* dst, const void* src, std::size_t bytes, cudaStream_t stream);

// Enables peer access between every pair of distinct devices of `devices` that supports it, each
// pair once a process (asking again is an error that CUDA reports, and compute-sanitizer with
// it; a pair the application enabled itself is accepted). Returns whether every pair of distinct
// devices has it both ways.
bool enable_peer_access(const std::vector<int>& devices);

// Whether kernels on CUDA device `device` may load from device memory `p` (of that device, or of
// a peer that granted it access: cudaMalloc with peer access enabled, pools and VMM allocations
// that set it). False for host, managed and unknown memory, and where the driver cannot tell.
bool device_can_read(const void* p, int device);

struct Pooled {};
inline constexpr Pooled kPooled{};

// Device memory of `n` elements of T on the current device.
template <class T>
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  explicit DeviceBuffer(std::size_t n) : n_(n) {
    if (n > 0) p_ = static_cast<T*>(device_malloc(n * sizeof(T)));
  }
  // From the device's pool (pool_malloc), ready on `stream`.
  DeviceBuffer(std::size_t n, Pooled, cudaStream_t stream)
      : n_(n), owner_(n * sizeof(T) <= kPoolKeepBytes ? Owner::Pool : Owner::Malloc) {
    if (n == 0) return;
    p_ = static_cast<T*>(owner_ == Owner::Pool ? pool_malloc(n * sizeof(T), stream)
                                               : device_malloc(n * sizeof(T)));
  }
  // `n` elements at p, device memory that someone else owns and frees.
  static DeviceBuffer borrow(T* p, std::size_t n) {
    DeviceBuffer b;
    b.p_ = p;
    b.n_ = n;
    b.owner_ = Owner::None;
    return b;
  }
  ~DeviceBuffer() {
    if (owner_ == Owner::Malloc) device_free(p_);
    if (owner_ == Owner::Pool) pool_free(p_);
  }
  DeviceBuffer(DeviceBuffer&& o) noexcept
      : p_(std::exchange(o.p_, nullptr)),
        n_(std::exchange(o.n_, 0)),
        owner_(std::exchange(o.owner_, Owner::Malloc)) {}
  DeviceBuffer& operator=(DeviceBuffer&& o) noexcept {
    std::swap(p_, o.p_);
    std::swap(n_, o.n_);
    std::swap(owner_, o.owner_);
    return *this;
  }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;

  T* data() const { return p_; }
  std::size_t size() const { return n_; }
  std::size_t bytes() const { return n_ * sizeof(T); }
  bool owned() const { return owner_ != Owner::None; }

  // Synchronous copies of `n` elements (all by default); see copy_to_device.
  void upload(const T* host, std::size_t n) { copy_to_device(p_, host, n * sizeof(T)); }
  void upload(const T* host) { upload(host, n_); }
  // Enqueues the copy of every element on `stream` without waiting for it. Pageable host memory
  // is staged before the call returns (CUDA's rule for such copies); page-locked memory is read
  // later: it must stay until `stream` has passed the copy.
  void upload(const T* host, cudaStream_t stream) {
    if (n_) KSPMV_CUDA_CHECK(cudaMemcpyAsync(p_, host, bytes(), cudaMemcpyHostToDevice, stream));
  }
  // Frees the memory now, stream-ordered after `stream`'s work where it came from the pool
  // (pool_free_after); the buffer is then empty.
  void free_after(cudaStream_t stream) noexcept {
    if (owner_ == Owner::Malloc) device_free(p_);
    if (owner_ == Owner::Pool) pool_free_after(p_, stream);
    p_ = nullptr;
    n_ = 0;
  }
  void download(T* host, std::size_t n) const {
    if (n) KSPMV_CUDA_CHECK(cudaMemcpy(host, p_, n * sizeof(T), cudaMemcpyDeviceToHost));
  }
  void download(T* host) const { download(host, n_); }

 private:
  enum class Owner { None, Malloc, Pool };
  T* p_ = nullptr;
  std::size_t n_ = 0;
  Owner owner_ = Owner::Malloc;
};

// A device copy of a host vector (synchronous; from the pool: plans are small).
template <class T>
DeviceBuffer<T> upload_vector(const std::vector<T>& v) {
  DeviceBuffer<T> d(v.size(), kPooled, cudaStreamLegacy);
  d.upload(v.data());
  return d;
}
// The same enqueued on `stream` (non-null) without waiting: v is staged before the call returns.
template <class T>
DeviceBuffer<T> upload_vector(const std::vector<T>& v, cudaStream_t stream) {
  DeviceBuffer<T> d(v.size(), kPooled, stream);
  d.upload(v.data(), stream);
  return d;
}

// Page-locked host memory (needed for truly asynchronous host<->device copies).
template <class T>
class PinnedBuffer {
 public:
  PinnedBuffer() = default;
  explicit PinnedBuffer(std::size_t n) : n_(n) {
    if (n > 0) p_ = static_cast<T*>(pinned_malloc(n * sizeof(T)));
  }
  ~PinnedBuffer() { pinned_free(p_); }
  PinnedBuffer(PinnedBuffer&& o) noexcept
      : p_(std::exchange(o.p_, nullptr)), n_(std::exchange(o.n_, 0)) {}
  PinnedBuffer& operator=(PinnedBuffer&& o) noexcept {
    std::swap(p_, o.p_);
    std::swap(n_, o.n_);
    return *this;
  }
  PinnedBuffer(const PinnedBuffer&) = delete;
  PinnedBuffer& operator=(const PinnedBuffer&) = delete;

  T* data() const { return p_; }
  std::size_t size() const { return n_; }
  T& operator[](std::size_t i) const { return p_[i]; }

 private:
  T* p_ = nullptr;
  std::size_t n_ = 0;
};

// Host memory pinned in place (cudaHostRegister, portable) for the life of the object, so that
// copies from it are asynchronous DMA without a pinned copy of the data. Memory that is page-
// locked already (cudaMallocHost, a registration by someone else) is used as it is and left so.
// Registrations made here are counted per start address: objects pinning the same array share
// the registration, and the last one unregisters it. CudaError when the range cannot be pinned.
class PinnedRange {
 public:
  PinnedRange() = default;
  PinnedRange(const void* p, std::size_t bytes);
  ~PinnedRange();
  PinnedRange(PinnedRange&& o) noexcept : p_(std::exchange(o.p_, nullptr)) {}
  PinnedRange& operator=(PinnedRange&& o) noexcept {
    std::swap(p_, o.p_);
    return *this;
  }
  PinnedRange(const PinnedRange&) = delete;
  PinnedRange& operator=(const PinnedRange&) = delete;

 private:
  void* p_ = nullptr;  // a registration this object holds a count of
};

// Streams and events (and cuSPARSE handles: cusparse_util.hpp) take microseconds each to create
// and to destroy, and a multi-device executor holds dozens. Those made with kReuse come from a
// list of idle ones of the current device and go back to it when destroyed; the lists live until
// the process ends. A stream that goes back with work still queued passes it on: its next
// holder's work follows that work.
struct Reuse {};
inline constexpr Reuse kReuse{};
enum class Idle { Stream, TimingEvent, Event, Cusparse, Staging };  // Staging: any device (-1)
// An idle handle of `kind` on `device`, or nullptr when there is none (the caller creates one).
void* take_idle(Idle kind, int device);
// Keeps `handle` (of `kind`, made on `device`) for the next take_idle.
void give_idle(Idle kind, int device, void* handle) noexcept;
// The current device (CudaError when there is none).
int current_device();

class Stream {
 public:
  Stream();                // a new non-blocking stream on the current device
  explicit Stream(Reuse);  // an idle one of the current device, else a new one
  ~Stream();
  Stream(Stream&& o) noexcept
      : s_(std::exchange(o.s_, nullptr)), idle_device_(std::exchange(o.idle_device_, -1)) {}
  Stream& operator=(Stream&& o) noexcept {
    std::swap(s_, o.s_);
    std::swap(idle_device_, o.idle_device_);
    return *this;
  }
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;
  cudaStream_t get() const { return s_; }
  void synchronize() const;

 private:
  cudaStream_t s_ = nullptr;
  int idle_device_ = -1;  // >= 0: goes back to this device's idle list
};

class Event {
 public:
  explicit Event(bool timing = true);
  Event(bool timing, Reuse);  // an idle one of the current device, else a new one
  ~Event();
  Event(Event&& o) noexcept
      : e_(std::exchange(o.e_, nullptr)),
        timing_(o.timing_),
        idle_device_(std::exchange(o.idle_device_, -1)) {}
  Event& operator=(Event&& o) noexcept {
    std::swap(e_, o.e_);
    std::swap(timing_, o.timing_);
    std::swap(idle_device_, o.idle_device_);
    return *this;
  }
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;
  cudaEvent_t get() const { return e_; }
  void record(cudaStream_t s) const;
  void synchronize() const;
  // Whether the work before the last record has finished (cudaEventQuery; no wait).
  bool done() const;
  // Milliseconds from `start` to this event (both recorded and completed).
  float elapsed_since(const Event& start) const;

 private:
  cudaEvent_t e_ = nullptr;
  bool timing_ = true;
  int idle_device_ = -1;  // >= 0: goes back to this device's idle list
};

}  // namespace kspmv::cuda
