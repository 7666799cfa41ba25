#include "kspmv/core/error.hpp"

#include <fcntl.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <sstream>
#include <utility>
#include <vector>

namespace kspmv {

namespace {
std::string where(const std::string& file, long line) {
  return line > 0 ? file + ":" + std::to_string(line) : file;
}
std::string mib(std::size_t bytes) {
  return std::to_string((bytes >> 20) + ((bytes & ((1u << 20) - 1)) != 0)) + " MiB";
}
}  // namespace

ParseError::ParseError(std::string file, long line, const std::string& what)
    : Error(where(file, line) + ": " + what), file_(std::move(file)), line_(line) {}

MemoryError::MemoryError(const std::string& what, std::size_t requested_bytes,
                         std::size_t available_bytes)
    : Error(what + ": needs " + std::to_string(requested_bytes) + " bytes (" +
            mib(requested_bytes) + ") of memory, " + mib(available_bytes) + " available"),
      requested_(requested_bytes),
      available_(available_bytes) {}

CudaError::CudaError(std::string call, int code, const std::string& message)
    : CudaError(std::move(call), code, message, std::string()) {}

CudaError::CudaError(std::string call, int code, const std::string& message,
                     const std::string& what)
    : Error(what.empty() ? call + " failed with code " + std::to_string(code) + ": " + message
                         : what),
      call_(std::move(call)),
      code_(code) {}

DeviceOutOfMemory::DeviceOutOfMemory(std::string call, int code, std::size_t requested_bytes,
                                     std::size_t free_bytes, std::size_t total_bytes)
    : CudaError(call, code, "out of memory",
                call + ": device out of memory: requested " + std::to_string(requested_bytes) +
                    " bytes (" + mib(requested_bytes) + "), " + mib(free_bytes) + " free of " +
                    mib(total_bytes)),
      requested_(requested_bytes),
      free_(free_bytes) {}

namespace {

constexpr std::size_t kNoLimit = std::numeric_limits<std::size_t>::max();
constexpr std::size_t kUnlimitedV1 = std::size_t(1) << 62;

// What a limit leaves beside what is in use of it.
std::size_t left_of(std::size_t limit, std::size_t used) {
  return limit > used ? limit - used : 0;
}

// The text of a small file of the kernel's (/proc, /sys: at most 64 KiB read), empty where it
// cannot be read. read(2) rather than an ifstream, whose buffer cost more than the read under
// AddressSanitizer: available_memory reads several of these at every Matrix Market read.
std::string small_file(const std::string& path) {
  std::string text;
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return text;
  char buf[4096];
  for (ssize_t got;
       text.size() < (std::size_t(64) << 10) && (got = ::read(fd, buf, sizeof buf)) > 0;)
    text.append(buf, static_cast<std::size_t>(got));
  ::close(fd);
  return text;
}

// The number a cgroup file holds ("max", a missing file or anything else: kNoLimit).
std::size_t cgroup_number(const std::string& path) {
  const std::string text = small_file(path);
  const char* begin = text.c_str();
  while (*begin == ' ' || *begin == '\t' || *begin == '\n') ++begin;
  if (*begin < '0' || *begin > '9') return kNoLimit;
  return static_cast<std::size_t>(std::strtoull(begin, nullptr, 10));
}

// The field `key` ("MemAvailable:") of a /proc file of "key value kB" lines, in bytes (npos when
// missing).
std::size_t kib_field(const std::string& text, const std::string& key) {
  for (std::size_t at = 0; at < text.size();) {
    const std::size_t end = std::min(text.find('\n', at), text.size());
    if (text.compare(at, key.size(), key) == 0) {
      const char* value = text.c_str() + at + key.size();
      char* stop = nullptr;
      const unsigned long long kib = std::strtoull(value, &stop, 10);
      return stop != value ? static_cast<std::size_t>(kib) * 1024 : std::string::npos;
    }
    at = end + 1;
  }
  return std::string::npos;
}

// A "Vm...:" field of /proc/self/status in bytes (0 when missing).
std::size_t status_bytes(const std::string& key) {
  const std::size_t bytes = kib_field(small_file("/proc/self/status"), key);
  return bytes == std::string::npos ? 0 : bytes;
}

// What the soft RLIMIT_AS and RLIMIT_DATA leave beside the address space and data in use.
std::size_t rlimit_left() {
  std::size_t left = kNoLimit;
  const std::pair<int, const char*> limits[] = {{RLIMIT_AS, "VmSize:"}, {RLIMIT_DATA, "VmData:"}};
  for (const auto& [resource, used] : limits) {
    struct rlimit r {};
    if (::getrlimit(resource, &r) == 0 && r.rlim_cur != RLIM_INFINITY)
      left = std::min(left, left_of(static_cast<std::size_t>(r.rlim_cur), status_bytes(used)));
  }
  return left;
}

}  // namespace

namespace detail {

std::size_t cgroup_memory_left(const std::string& proc_cgroup, const std::string& root) {
  std::istringstream in(small_file(proc_cgroup));
  std::size_t left = kNoLimit;
  for (std::string line; std::getline(in, line);) {
    // "0::/path" (v2, limit memory.max), or "N:CONTROLLERS:/path" with memory among the
    // controllers (v1, under memory/: memory.limit_in_bytes).
    const auto first = line.find(':'), second = line.find(':', first + 1);
    if (first == std::string::npos || second == std::string::npos) continue;
    const std::string controllers = line.substr(first + 1, second - first - 1);
    const bool v2 = line.compare(0, first, "0") == 0 && controllers.empty();
    const bool v1 = ("," + controllers + ",").find(",memory,") != std::string::npos;
    if (!v2 && !v1) continue;
    // v2 is mounted at the root, or at unified/ beside the v1 hierarchies.
    const std::vector<std::string> bases = v2 ? std::vector<std::string>{root, root + "/unified"}
                                              : std::vector<std::string>{root + "/memory"};
    const char* limit = v2 ? "/memory.max" : "/memory.limit_in_bytes";
    const char* usage = v2 ? "/memory.current" : "/memory.usage_in_bytes";
    // The group and each group above it up to the mount: the tightest of them binds.
    for (const std::string& base : bases) {
      for (std::string dir = line.substr(second + 1);;) {
        while (!dir.empty() && dir.back() == '/') dir.pop_back();
        // v1 says "no limit" as a number near 2^63; its usage is then not read.
        const std::size_t max = cgroup_number(base + dir + limit);
        if (max < kUnlimitedV1) {
          const std::size_t used = cgroup_number(base + dir + usage);
          left = std::min(left, left_of(max, used == kNoLimit ? 0 : used));
        }
        if (dir.empty()) break;
        const auto up = dir.rfind('/');
        dir.resize(up == std::string::npos ? 0 : up);
      }
    }
  }
  return left;
}

}  // namespace detail

std::size_t available_memory() {
  std::size_t bytes =
      std::min(rlimit_left(), detail::cgroup_memory_left("/proc/self/cgroup", "/sys/fs/cgroup"));
  const std::size_t free = kib_field(small_file("/proc/meminfo"), "MemAvailable:");
  if (free != std::string::npos) {
    bytes = std::min(bytes, free);
  } else {
    const long pages = sysconf(_SC_AVPHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    if (pages > 0 && page > 0)
      bytes = std::min(bytes, static_cast<std::size_t>(pages) * static_cast<std::size_t>(page));
  }
  if (const char* limit = std::getenv("KSPMV_MEMORY_LIMIT")) {
    char* end = nullptr;
    const unsigned long long value = std::strtoull(limit, &end, 10);
    if (*limit < '0' || *limit > '9' || *end != '\0')
      throw InvalidArgument("KSPMV_MEMORY_LIMIT=\"" + printable(limit) +
                            "\" is not a number of bytes");
    if (value < bytes) bytes = static_cast<std::size_t>(value);
  }
  return bytes;
}

void require_memory(std::size_t bytes, const std::string& what) {
  const std::size_t available = available_memory();
  if (bytes > available) throw MemoryError(what, bytes, available);
}

std::string printable(std::string_view text, std::size_t max_len) {
  std::string out;
  for (std::size_t i = 0; i < text.size() && i < max_len; ++i) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (c >= 0x20 && c < 0x7F) {
      out += static_cast<char>(c);
    } else {
      char hex[5];
      std::snprintf(hex, sizeof hex, "\\x%02X", c);
      out += hex;
    }
  }
  if (text.size() > max_len) out += "...";
  return out;
}

}  // namespace kspmv
