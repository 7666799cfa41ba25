#include "kspmv/core/error.hpp"

#include <utility>

namespace kspmv {

namespace {
std::string where(const std::string& file, long line) {
  return line > 0 ? file + ":" + std::to_string(line) : file;
}
std::string mib(std::size_t bytes) {
  return std::to_string((bytes + (1u << 20) - 1) >> 20) + " MiB";
}
}  // namespace

ParseError::ParseError(std::string file, long line, const std::string& what)
    : Error(where(file, line) + ": " + what), file_(std::move(file)), line_(line) {}

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

}  // namespace kspmv
