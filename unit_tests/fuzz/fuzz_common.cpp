#include "fuzz_common.hpp"

#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <fstream>
#include <vector>

#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define KSPMV_FUZZ_ASAN 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__)
#define KSPMV_FUZZ_ASAN 1
#endif
#ifdef KSPMV_FUZZ_ASAN
#if __has_include(<sanitizer/allocator_interface.h>)
#include <sanitizer/allocator_interface.h>
#else  // GCC installs no allocator_interface.h; its libasan exports the same two functions
extern "C" {
std::size_t __sanitizer_get_allocated_size(const volatile void* p);
int __sanitizer_install_malloc_and_free_hooks(void (*malloc_hook)(const volatile void*,
                                                                  std::size_t),
                                              void (*free_hook)(const volatile void*));
}
#endif
#endif

namespace kspmv::fuzz {

namespace {
#ifdef KSPMV_FUZZ_ASAN
std::atomic<std::size_t> live{0}, peak{0}, base{0};

void on_malloc(const volatile void*, std::size_t size) {
  const std::size_t now = live += size;
  for (std::size_t p = peak; now > p && !peak.compare_exchange_weak(p, now);) {
  }
}
void on_free(const volatile void* ptr) {
  if (ptr == nullptr) return;
  live -= __sanitizer_get_allocated_size(const_cast<const void*>(ptr));
}
#else
// A field of /proc/self/status in bytes (0 if absent).
std::size_t status_bytes(const std::string& field) {
  std::ifstream status("/proc/self/status");
  for (std::string key; status >> key;) {
    std::size_t kib = 0;
    if (key == field && status >> kib) return kib * 1024;
  }
  return 0;
}
std::size_t rss_at_start = 0;
bool hwm_reset = false;
#endif
}  // namespace

void require_printable(const std::string& message) {
  // The failure's text is built only on a failure: this runs for every error of every input.
  if (message.size() > 4096)
    require(false, "a message of " + std::to_string(message.size()) + " bytes");
  for (const char c : message)
    if (c < 0x20 || c >= 0x7f) require(false, "a message with the byte " + std::to_string(int(c)));
}

void initialize(std::size_t memory_budget) {
  static int argc = 1;
  static char name[] = "kspmv_fuzz";
  static char* argv[] = {name, nullptr};
  static Kokkos::ScopeGuard kokkos(argc, argv);
  setenv("KSPMV_MEMORY_LIMIT", std::to_string(memory_budget).c_str(), 1);
  // Two pieces of a chunk on two threads whatever the machine has; more would also grow the
  // reader's buffer (4 MiB a thread) past the harness's fixed allowance.
  setenv("KSPMV_THREADS", "2", 1);
#ifdef KSPMV_FUZZ_ASAN
  require(__sanitizer_install_malloc_and_free_hooks(on_malloc, on_free) != 0,
          "cannot install the allocator hooks");
#endif
}

std::string scratch_path(const std::string& suffix) {
  static const std::filesystem::path dir =
      access("/dev/shm", W_OK) == 0 ? "/dev/shm" : std::filesystem::temp_directory_path();
  static std::vector<std::string> paths;  // removed at exit
  if (paths.empty())
    std::atexit([] {
      for (const auto& p : paths) std::remove(p.c_str());
    });
  const std::string path = (dir / ("kspmv_fuzz_" + std::to_string(getpid()) + suffix)).string();
  if (std::find(paths.begin(), paths.end(), path) == paths.end()) paths.push_back(path);
  return path;
}

void write_file(const std::string& path, const char* data, std::size_t size, bool gzip) {
  bool ok = false;
  if (gzip) {
    gzFile f = gzopen(path.c_str(), "wb1");
    ok = f != nullptr && (size == 0 || gzwrite(f, data, unsigned(size)) == int(size));
    ok = f != nullptr && gzclose(f) == Z_OK && ok;
  } else {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    ok = bool(out.write(data, std::streamsize(size)));
  }
  require(ok, "cannot write the scratch file " + path);
}

void PeakMemory::start() {
#ifdef KSPMV_FUZZ_ASAN
  base = live.load();
  peak = base.load();
#else
  std::ofstream clear("/proc/self/clear_refs");
  hwm_reset = bool(clear << "5" << std::flush);  // resets VmHWM to the current resident set
  if (!hwm_reset) {
    static bool told = false;
    if (!told) std::fprintf(stderr, "note: /proc/self/clear_refs not writable, peak not checked\n");
    told = true;
  }
  rss_at_start = status_bytes("VmRSS:");
#endif
}

std::size_t PeakMemory::peak_bytes() const {
#ifdef KSPMV_FUZZ_ASAN
  return peak - base;
#else
  const std::size_t hwm = hwm_reset ? status_bytes("VmHWM:") : 0;
  return hwm > rss_at_start ? hwm - rss_at_start : 0;
#endif
}

}  // namespace kspmv::fuzz
