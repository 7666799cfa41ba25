#include "backends/cuda/memory.hpp"

#include <cuda.h>

#include <map>
#include <mutex>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace kspmv::cuda {

void throw_cuda_error(const char* call, cudaError_t code) {
  throw CudaError(call, static_cast<int>(code),
                  std::string(cudaGetErrorName(code)) + ": " + cudaGetErrorString(code));
}

void throw_cusparse_error(const char* call, cusparseStatus_t code) {
  throw CudaError(call, static_cast<int>(code), cusparseGetErrorString(code));
}

void throw_out_of_memory(const char* call, cudaError_t code, std::size_t requested) {
  cudaGetLastError();  // clear the sticky-free allocation error
  std::size_t free_bytes = 0, total_bytes = 0;
  cudaMemGetInfo(&free_bytes, &total_bytes);
  throw DeviceOutOfMemory(call, static_cast<int>(code), requested, free_bytes, total_bytes);
}

DeviceGuard::DeviceGuard(int device) {
  KSPMV_CUDA_CHECK(cudaGetDevice(&previous_));
  if (device != previous_) {
    KSPMV_CUDA_CHECK(cudaSetDevice(device));
    changed_ = true;
  }
}
DeviceGuard::~DeviceGuard() {
  if (changed_) cudaSetDevice(previous_);
}

void* device_malloc(std::size_t bytes) {
  void* p = nullptr;
  const cudaError_t code = cudaMalloc(&p, bytes);
  if (code == cudaErrorMemoryAllocation) throw_out_of_memory("cudaMalloc", code, bytes);
  check(code, "cudaMalloc");
  return p;
}
void device_free(void* p) noexcept {
  if (p) cudaFree(p);
}
void* pinned_malloc(std::size_t bytes) {
  void* p = nullptr;
  check(cudaMallocHost(&p, bytes), "cudaMallocHost");
  return p;
}
void pinned_free(void* p) noexcept {
  if (p) cudaFreeHost(p);
}

void copy_to_device(void* dst, const void* host, std::size_t bytes) {
  if (bytes == 0) return;
  KSPMV_CUDA_CHECK(cudaMemcpy(dst, host, bytes, cudaMemcpyHostToDevice));
  KSPMV_CUDA_CHECK(cudaStreamSynchronize(cudaStreamLegacy));
}

void copy_to_host(void* host, const void* src, std::size_t bytes, cudaStream_t after) {
  if (bytes == 0) return;
  if (after) KSPMV_CUDA_CHECK(cudaStreamSynchronize(after));
  KSPMV_CUDA_CHECK(cudaMemcpy(host, src, bytes, cudaMemcpyDefault));
}

void copy_between_devices(void* dst, const void* src, std::size_t bytes, cudaStream_t stream) {
  if (bytes == 0) return;
  KSPMV_CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDefault, stream));
}

namespace {
// The registrations PinnedRange made, by start address, with their number of holders.
std::mutex registrations_mutex;
std::map<void*, int>& registrations() {
  static std::map<void*, int> counts;
  return counts;
}

// The idle handles of each kind and device (never destroyed: they live until the process ends).
struct IdleLists {
  std::mutex mutex;
  std::map<std::pair<Idle, int>, std::vector<void*>> lists;
};
IdleLists& idle_lists() {
  static auto* lists = new IdleLists;  // never destroyed: handles may go back at exit
  return *lists;
}

// kspmv's memory pool of each device (nullptr where the device has no memory pools), made on
// first use with access for every peer that can reach it; never destroyed.
struct Pools {
  std::mutex mutex;
  std::map<int, cudaMemPool_t> pools;
};
Pools& pools() {
  static auto* p = new Pools;
  return *p;
}

cudaMemPool_t make_pool(int device) {
  int supported = 0;
  KSPMV_CUDA_CHECK(cudaDeviceGetAttribute(&supported, cudaDevAttrMemoryPoolsSupported, device));
  if (!supported) return nullptr;
  cudaMemPoolProps props{};
  props.allocType = cudaMemAllocationTypePinned;
  props.location.type = cudaMemLocationTypeDevice;
  props.location.id = device;
  cudaMemPool_t pool = nullptr;
  KSPMV_CUDA_CHECK(cudaMemPoolCreate(&pool, &props));
  auto keep = static_cast<unsigned long long>(kPoolKeepBytes);
  KSPMV_CUDA_CHECK(cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &keep));
  int count = 0;
  KSPMV_CUDA_CHECK(cudaGetDeviceCount(&count));
  for (int peer = 0; peer < count; ++peer) {  // halo links are copied between devices
    int can = 0;
    if (peer == device || cudaDeviceCanAccessPeer(&can, peer, device) != cudaSuccess || !can)
      continue;
    cudaMemAccessDesc access{};
    access.location.type = cudaMemLocationTypeDevice;
    access.location.id = peer;
    access.flags = cudaMemAccessFlagsProtReadWrite;
    KSPMV_CUDA_CHECK(cudaMemPoolSetAccess(pool, &access, 1));
  }
  return pool;
}

cudaMemPool_t pool_of(int device) {
  Pools& p = pools();
  const std::lock_guard<std::mutex> lock(p.mutex);
  const auto it = p.pools.find(device);
  if (it != p.pools.end()) return it->second;
  const cudaMemPool_t pool = make_pool(device);
  p.pools.emplace(device, pool);
  return pool;
}

}  // namespace

void* pool_malloc(std::size_t bytes, cudaStream_t stream) {
  if (bytes == 0) return nullptr;
  const cudaMemPool_t pool = pool_of(current_device());
  if (!pool) return device_malloc(bytes);
  void* p = nullptr;
  const cudaError_t code = cudaMallocFromPoolAsync(&p, bytes, pool, stream);
  if (code == cudaErrorMemoryAllocation)
    throw_out_of_memory("cudaMallocFromPoolAsync", code, bytes);
  check(code, "cudaMallocFromPoolAsync");
  return p;
}

void pool_free(void* p) noexcept {
  if (!p) return;
  cudaPointerAttributes at{};
  if (cudaPointerGetAttributes(&at, p) != cudaSuccess) {
    cudaGetLastError();
    return;
  }
  cudaMemPool_t pool = nullptr;
  try {
    pool = pool_of(at.device);  // made when p was allocated: no CUDA call here
  } catch (...) {
  }
  on_device_noexcept(at.device, [&] {
    if (pool) {
      cudaDeviceSynchronize();
      cudaFreeAsync(p, cudaStreamLegacy);
    } else {
      cudaFree(p);
    }
  });
}

void pool_free_after(void* p, cudaStream_t stream) noexcept {
  if (!p) return;
  cudaMemPool_t pool = nullptr;
  try {
    pool = pool_of(current_device());  // made when p was allocated
  } catch (...) {
  }
  if (pool)
    cudaFreeAsync(p, stream);
  else
    cudaFree(p);
}

PinnedRange::PinnedRange(const void* p, std::size_t bytes) {
  if (p == nullptr || bytes == 0) return;
  void* q = const_cast<void*>(p);
  const std::lock_guard<std::mutex> lock(registrations_mutex);
  auto& counts = registrations();
  if (const auto it = counts.find(q); it != counts.end()) {
    ++it->second;
    p_ = q;
    return;
  }
  cudaPointerAttributes at{};
  if (cudaPointerGetAttributes(&at, q) != cudaSuccess) cudaGetLastError();
  if (at.type == cudaMemoryTypeHost) return;  // page-locked by someone else: used as it is
  const cudaError_t code = cudaHostRegister(q, bytes, cudaHostRegisterPortable);
  if (code == cudaErrorHostMemoryAlreadyRegistered) {  // part of it, by someone else
    cudaGetLastError();
    return;
  }
  if (code != cudaSuccess) {
    cudaGetLastError();
    throw CudaError("cudaHostRegister", static_cast<int>(code),
                    "cannot pin " + std::to_string(bytes) +
                        " bytes of host memory in place: " + cudaGetErrorString(code));
  }
  counts[q] = 1;
  p_ = q;
}

PinnedRange::~PinnedRange() {
  if (!p_) return;
  const std::lock_guard<std::mutex> lock(registrations_mutex);
  auto& counts = registrations();
  const auto it = counts.find(p_);
  if (it != counts.end() && --it->second == 0) {
    counts.erase(it);
    cudaHostUnregister(p_);
  }
}

void* take_idle(Idle kind, int device) {
  IdleLists& l = idle_lists();
  const std::lock_guard<std::mutex> lock(l.mutex);
  auto& list = l.lists[{kind, device}];
  if (list.empty()) return nullptr;
  void* h = list.back();
  list.pop_back();
  return h;
}

void give_idle(Idle kind, int device, void* handle) noexcept {
  IdleLists& l = idle_lists();
  try {
    const std::lock_guard<std::mutex> lock(l.mutex);
    l.lists[{kind, device}].push_back(handle);
  } catch (...) {  // no memory for the list (or a failed lock): the handle is let go
  }
}

namespace {

using PointerAttribute = CUresult (*)(void*, CUpointer_attribute, CUdeviceptr);

// The driver's cuPointerGetAttribute, through the runtime (kspmv does not link the driver), or
// null.
PointerAttribute pointer_attribute() {
  static const PointerAttribute fn = [] {
    void* f = nullptr;
    cudaDriverEntryPointQueryResult found{};
#if CUDART_VERSION >= 12050
    const cudaError_t code = cudaGetDriverEntryPointByVersion("cuPointerGetAttribute", &f, 4000,
                                                              cudaEnableDefault, &found);
#else
    const cudaError_t code =
        cudaGetDriverEntryPoint("cuPointerGetAttribute", &f, cudaEnableDefault, &found);
#endif
    if (code != cudaSuccess || found != cudaDriverEntryPointSuccess) {
      cudaGetLastError();
      return PointerAttribute{nullptr};
    }
    return reinterpret_cast<PointerAttribute>(f);
  }();
  return fn;
}

}  // namespace

bool enable_peer_access(const std::vector<int>& devices) {
  static std::mutex mutex;
  static std::set<std::pair<int, int>> enabled;
  const std::lock_guard<std::mutex> lock(mutex);
  bool every = true;
  for (int a : devices)
    for (int b : devices) {
      if (a == b || enabled.count({a, b})) continue;
      int can = 0;
      KSPMV_CUDA_CHECK(cudaDeviceCanAccessPeer(&can, a, b));
      if (!can) {  // cudaMemcpyPeerAsync stages through host memory
        every = false;
        continue;
      }
      DeviceGuard guard(a);
      const cudaError_t code = cudaDeviceEnablePeerAccess(b, 0);
      if (code == cudaErrorPeerAccessAlreadyEnabled)  // by the application
        cudaGetLastError();
      else
        check(code, "cudaDeviceEnablePeerAccess");
      enabled.insert({a, b});
    }
  return every;
}

bool device_can_read(const void* p, int device) {
  cudaPointerAttributes a{};
  if (!p || cudaPointerGetAttributes(&a, p) != cudaSuccess) {
    cudaGetLastError();
    return false;
  }
  if (a.type != cudaMemoryTypeDevice) return false;
  if (a.device == device) return true;
  const PointerAttribute get = pointer_attribute();
  if (!get) return false;
  DeviceGuard guard(device);
  unsigned long long flags = 0;  // 64 bits, whichever width the driver writes
  if (get(&flags, CU_POINTER_ATTRIBUTE_ACCESS_FLAGS, reinterpret_cast<CUdeviceptr>(p)) !=
      CUDA_SUCCESS)
    return false;
  return flags == CU_POINTER_ATTRIBUTE_ACCESS_FLAG_READ ||
         flags == CU_POINTER_ATTRIBUTE_ACCESS_FLAG_READWRITE;
}

int current_device() {
  int d = 0;
  KSPMV_CUDA_CHECK(cudaGetDevice(&d));
  return d;
}

Stream::Stream() {
  KSPMV_CUDA_CHECK(cudaStreamCreateWithFlags(&s_, cudaStreamNonBlocking));
}
Stream::Stream(Reuse) : idle_device_(current_device()) {
  s_ = static_cast<cudaStream_t>(take_idle(Idle::Stream, idle_device_));
  if (!s_) KSPMV_CUDA_CHECK(cudaStreamCreateWithFlags(&s_, cudaStreamNonBlocking));
}
Stream::~Stream() {
  if (s_ && idle_device_ >= 0)
    give_idle(Idle::Stream, idle_device_, s_);
  else if (s_)
    cudaStreamDestroy(s_);
}
void Stream::synchronize() const {
  KSPMV_CUDA_CHECK(cudaStreamSynchronize(s_));
}

Event::Event(bool timing) : timing_(timing) {
  KSPMV_CUDA_CHECK(
      cudaEventCreateWithFlags(&e_, timing ? cudaEventDefault : cudaEventDisableTiming));
}
Event::Event(bool timing, Reuse) : timing_(timing), idle_device_(current_device()) {
  e_ = static_cast<cudaEvent_t>(take_idle(timing ? Idle::TimingEvent : Idle::Event, idle_device_));
  if (!e_)
    KSPMV_CUDA_CHECK(
        cudaEventCreateWithFlags(&e_, timing ? cudaEventDefault : cudaEventDisableTiming));
}
Event::~Event() {
  if (e_ && idle_device_ >= 0)
    give_idle(timing_ ? Idle::TimingEvent : Idle::Event, idle_device_, e_);
  else if (e_)
    cudaEventDestroy(e_);
}
void Event::record(cudaStream_t s) const {
  KSPMV_CUDA_CHECK(cudaEventRecord(e_, s));
}
void Event::synchronize() const {
  KSPMV_CUDA_CHECK(cudaEventSynchronize(e_));
}
bool Event::done() const {
  const cudaError_t code = cudaEventQuery(e_);
  if (code == cudaErrorNotReady) return false;
  KSPMV_CUDA_CHECK(code);
  return true;
}
float Event::elapsed_since(const Event& start) const {
  float ms = 0;
  KSPMV_CUDA_CHECK(cudaEventElapsedTime(&ms, start.e_, e_));
  return ms;
}

}  // namespace kspmv::cuda
