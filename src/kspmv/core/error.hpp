// Error types thrown by kspmv. Library code never exits and never prints unless asked.
// Kokkos-free: the CUDA backend throws these too.
#pragma once

#include <cstddef>
#include <stdexcept>
#include <string>
#include <string_view>

namespace kspmv {

// Base of every error kspmv throws.
class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// A caller passed something that cannot work (wrong sizes, unknown option, bad spec).
class InvalidArgument : public Error {
 public:
  using Error::Error;
};

// A valid request kspmv does not support (complex Matrix Market, nnz too large for a device, ...).
class UnsupportedError : public Error {
 public:
  using Error::Error;
};

// Host memory for a request is not there: what needed requested_bytes, with available_bytes
// available at that moment. The message names both.
class MemoryError : public Error {
 public:
  MemoryError(const std::string& what, std::size_t requested_bytes, std::size_t available_bytes);
  std::size_t requested_bytes() const noexcept { return requested_; }
  std::size_t available_bytes() const noexcept { return available_; }

 private:
  std::size_t requested_;
  std::size_t available_;
};

// Input file could not be read or parsed; names the file and the 1-based line (0: no line).
class ParseError : public Error {
 public:
  ParseError(std::string file, long line, const std::string& what);
  const std::string& file() const noexcept { return file_; }
  long line() const noexcept { return line_; }

 private:
  std::string file_;
  long line_;
};

// A CUDA runtime or cuSPARSE call failed.
class CudaError : public Error {
 public:
  CudaError(std::string call, int code, const std::string& message);
  const std::string& call() const noexcept { return call_; }
  int code() const noexcept { return code_; }

 protected:
  CudaError(std::string call, int code, const std::string& message, const std::string& what);

 private:
  std::string call_;
  int code_;
};

// A device allocation failed: how much was asked and how much was free at that moment.
class DeviceOutOfMemory : public CudaError {
 public:
  DeviceOutOfMemory(std::string call, int code, std::size_t requested_bytes, std::size_t free_bytes,
                    std::size_t total_bytes);
  std::size_t requested_bytes() const noexcept { return requested_; }
  std::size_t free_bytes() const noexcept { return free_; }

 private:
  std::size_t requested_;
  std::size_t free_;
};

// Host memory available now, in bytes: the least of MemAvailable of /proc/meminfo (elsewhere the
// free pages sysconf reports), what the soft RLIMIT_AS and RLIMIT_DATA (ulimit -v, -d) leave
// beside the address space and data in use, and what the cgroup's memory limit (v2 memory.max,
// v1 memory.limit_in_bytes, of the process's group and those above it) leaves beside its
// usage; lowered to KSPMV_MEMORY_LIMIT (a byte count) when that is set.
std::size_t available_memory();

namespace detail {
// What the memory limits of the cgroups that `proc_cgroup` (/proc/self/cgroup) names leave,
// their files under `root` (/sys/fs/cgroup); SIZE_MAX when none has a limit.
std::size_t cgroup_memory_left(const std::string& proc_cgroup, const std::string& root);
}  // namespace detail

// Throws MemoryError unless `bytes` fit in available_memory(); `what` names the request.
void require_memory(std::size_t bytes, const std::string& what);

// Text from an input made safe to quote in a message: bytes outside printable ASCII (control
// characters, NUL, DEL, non-ASCII) become \xNN; text past max_len bytes is cut and ends in "...".
std::string printable(std::string_view text, std::size_t max_len = 80);

}  // namespace kspmv
