#include "kspmv/core/error.hpp"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <limits>
#include <utility>

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

std::size_t available_memory() {
  std::size_t bytes = std::numeric_limits<std::size_t>::max();
  std::ifstream meminfo("/proc/meminfo");
  bool found = false;
  for (std::string key; !found && meminfo >> key;) {
    unsigned long long kib = 0;
    if (key == "MemAvailable:" && meminfo >> kib) {
      bytes = static_cast<std::size_t>(kib) * 1024;
      found = true;
    }
    meminfo.ignore(std::numeric_limits<std::streamsize>::max(), '\n');
  }
  if (!found) {
    const long pages = sysconf(_SC_AVPHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    if (pages > 0 && page > 0)
      bytes = static_cast<std::size_t>(pages) * static_cast<std::size_t>(page);
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
