#include "kspmv/io/text_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <atomic>
#include <cerrno>
#include <climits>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <mutex>
#include <system_error>

#include "kspmv/core/error.hpp"

namespace kspmv::io::detail {

namespace {
constexpr std::uint64_t kProgressMinBytes = 50ull << 20;
constexpr unsigned kZlibBuffer = 1u << 20;
constexpr std::size_t kMaxGzRead = std::size_t(1) << 30;  // gzread takes an unsigned length
constexpr std::size_t kWriteBuffer = std::size_t(4) << 20;
constexpr std::size_t kSmallBuffer = std::size_t(64) << 10;  // the least a small file starts with

std::string system_message() {
  return std::error_code(errno, std::generic_category()).message();
}

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() &&
         s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// The file `path` names once symbolic links are followed (the link itself is kept).
std::filesystem::path resolve_links(std::filesystem::path p) {
  for (int hops = 0; hops < 40 && std::filesystem::is_symlink(p); ++hops) {
    const std::filesystem::path to = std::filesystem::read_symlink(p);
    p = to.is_absolute() ? to : p.parent_path() / to;
  }
  return p;
}

// Named temporary files to remove when SIGINT, SIGTERM or SIGHUP ends the process. The handler
// reads fixed slots and calls unlink (async-signal-safe): no allocation, no lock.
struct TempSlot {
  std::atomic<bool> taken{false};
  std::atomic<bool> named{false};  // `path` is complete
  char path[PATH_MAX];
};
constexpr int kTempSlots = 64;
TempSlot temp_slots[kTempSlots];
constexpr int kCleanupSignals[] = {SIGINT, SIGTERM, SIGHUP};

void remove_temps_and_reraise(int sig) {
  for (TempSlot& slot : temp_slots)
    if (slot.named.load()) ::unlink(slot.path);
  ::raise(sig);  // SA_RESETHAND: the default action now, which ends the process
}

// The handler, on each signal whose disposition is the default one (a program's own handler, or
// an ignored signal, is left alone).
void install_cleanup_handlers() {
  static std::once_flag once;
  std::call_once(once, [] {
    for (const int sig : kCleanupSignals) {
      struct sigaction old {};
      if (::sigaction(sig, nullptr, &old) != 0 || old.sa_handler != SIG_DFL ||
          (old.sa_flags & SA_SIGINFO) != 0)
        continue;
      struct sigaction action {};
      action.sa_handler = remove_temps_and_reraise;
      sigemptyset(&action.sa_mask);
      action.sa_flags = SA_RESETHAND;
      ::sigaction(sig, &action, nullptr);
    }
  });
}

// Registers `path` for removal by a signal; the slot, or -1 when all are taken (the file is then
// not removed by a signal).
int register_temp(const std::string& path) {
  if (path.size() >= PATH_MAX) return -1;
  install_cleanup_handlers();
  for (int i = 0; i < kTempSlots; ++i) {
    if (temp_slots[i].taken.exchange(true)) continue;
    std::memcpy(temp_slots[i].path, path.c_str(), path.size() + 1);
    temp_slots[i].named.store(true);
    return i;
  }
  return -1;
}

void unregister_temp(int slot) {
  if (slot < 0) return;
  temp_slots[slot].named.store(false);
  temp_slots[slot].taken.store(false);
}

// A short name beside `target` that does not exist yet (".kspmv-PID-N.tmp": the target's own
// name may be NAME_MAX bytes long).
std::string temp_name_beside(const std::filesystem::path& target) {
  static std::atomic<unsigned> counter{0};
  std::filesystem::path p = target;
  p.replace_filename(".kspmv-" + std::to_string(getpid()) + "-" + std::to_string(counter++) +
                     ".tmp");
  return p.string();
}

// An unnamed file (O_TMPFILE) in the directory of `target`, to be linked in by name once complete;
// -1 when the file system (or the kernel) has none, or /proc/self/fd, which links it, is missing.
int open_unnamed_beside(const std::filesystem::path& target) {
#ifdef O_TMPFILE
  const char* tmpfile = std::getenv("KSPMV_TMPFILE");  // "0": the named fallback (for tests)
  if ((tmpfile != nullptr && std::string(tmpfile) == "0") || ::access("/proc/self/fd", X_OK) != 0)
    return -1;
  const std::filesystem::path dir = target.has_parent_path() ? target.parent_path() : ".";
  return ::open(dir.c_str(), O_TMPFILE | O_WRONLY | O_CLOEXEC, 0666);
#else
  (void)target;
  return -1;
#endif
}

// Creates a new, empty file named `temp` beside `target` (mode 0666 less the umask), registered
// for removal by a signal in `slot`.
int create_temp_beside(const std::filesystem::path& target, std::string& temp, int& slot) {
  for (int attempt = 0; attempt < 1000; ++attempt) {
    const std::string name = temp_name_beside(target);
    // Registered before it exists: a signal between open and registration leaves nothing.
    slot = register_temp(name);
    const int fd = ::open(name.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (fd >= 0) {
      temp = name;
      return fd;
    }
    unregister_temp(slot);
    slot = -1;
    if (errno != EEXIST) return -1;
  }
  return -1;
}
}  // namespace

std::string display_name(const std::string& path, bool output) {
  return path != "-" ? path : output ? "<stdout>" : "<stdin>";
}

// ---- LineReader -------------------------------------------------------------------------------

LineReader::LineReader(const std::string& path, std::size_t chunk_bytes, bool progress)
    : path_(display_name(path, false)) {
  const int fd = path == "-" ? ::dup(STDIN_FILENO) : ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw ParseError(path_, 0, "cannot open file: " + system_message());
  struct stat st {};
  if (::fstat(fd, &st) == 0 && S_ISREG(st.st_mode)) file_bytes_ = std::uint64_t(st.st_size);
  // zlib reads gzip data and passes anything else through, so no rewind is needed.
  gz_ = gzdopen(fd, "rb");
  if (!gz_) {
    ::close(fd);
    throw ParseError(path_, 0, "cannot open file: " + system_message());
  }
  // Large buffers for large files only: a small file starts with room for itself (and a '\n'),
  // and the buffer grows to the full size (room for the longest line and its '\n') when a line
  // does not fit (gzip data inflates, a file may grow).
  const bool small = file_bytes_ > 0 && file_bytes_ < chunk_bytes;
  if (!small) gzbuffer(gz_, kZlibBuffer);
  full_capacity_ = std::max(chunk_bytes, kMaxLineBytes + 2);
  capacity_ = small ? std::min(std::max(std::size_t(file_bytes_) + 2, kSmallBuffer), full_capacity_)
                    : full_capacity_;
  buf_.reset(new char[capacity_]);
  progress_ = progress && file_bytes_ > kProgressMinBytes && isatty(STDERR_FILENO);
  start_ = last_shown_ = std::chrono::steady_clock::now();
}

LineReader::~LineReader() {
  if (progress_ && last_shown_ != start_) std::fputc('\n', stderr);
  gzclose(gz_);
}

std::size_t LineReader::read_some(char* dst, std::size_t n) {
  const int got = gzread(gz_, dst, static_cast<unsigned>(std::min(n, kMaxGzRead)));
  int code = Z_OK;
  const char* message = gzerror(gz_, &code);
  if (got < 0 && code == Z_ERRNO)
    throw ParseError(path_, line_ + 1, "read error: " + system_message());
  if (got < 0) throw ParseError(path_, line_ + 1, std::string("corrupt gzip data: ") + message);
  // zlib reports a stream that stops before its end as Z_BUF_ERROR and returns 0 bytes.
  if (got == 0 && code == Z_BUF_ERROR)
    throw ParseError(path_, line_ + 1, "truncated gzip file (compressed data ends early)");
  return static_cast<std::size_t>(got);
}

std::string long_line_message() {
  return "line longer than " + std::to_string(kMaxLineBytes) + " bytes (not a Matrix Market file?)";
}

std::string_view LineReader::long_line(std::string_view line, long number) const {
  const std::size_t first = line.find_first_not_of(" \t\r");
  if (first == std::string_view::npos || line[first] != '%')
    throw ParseError(path_, number, long_line_message());
  return line.substr(0, kMaxLineBytes);
}

bool LineReader::refill() {
  // Keep the unfinished last line: move it to the front and read after it.
  const std::size_t tail = data_end_ - lines_end_;
  std::memmove(buf_.get(), buf_.get() + lines_end_, tail);
  pos_ = lines_end_ = 0;
  data_end_ = tail;
  for (;;) {
    if (eof_) {
      if (data_end_ == 0) {
        if (progress_) show_progress(true);
        return false;
      }
      buf_[data_end_++] = '\n';  // the last line has no '\n': give it one (capacity_ has room)
      lines_end_ = data_end_;
      return true;
    }
    if (data_end_ == capacity_ && capacity_ < full_capacity_) {  // a small file's buffer
      std::unique_ptr<char[]> grown(new char[full_capacity_]);
      std::memcpy(grown.get(), buf_.get(), data_end_);
      buf_ = std::move(grown);
      capacity_ = full_capacity_;
    } else if (data_end_ == capacity_) {  // an unfinished line fills the buffer: a long comment
      long_line(std::string_view(buf_.get(), data_end_), line_ + 1);
      data_end_ = kMaxLineBytes;
      skipping_ = true;
    }
    char* const fresh = buf_.get() + data_end_;
    std::size_t got = read_some(fresh, capacity_ - data_end_);
    if (got == 0) {
      eof_ = true;
      continue;
    }
    if (skipping_) {  // drop the comment up to its '\n'
      const char* nl = static_cast<const char*>(std::memchr(fresh, '\n', got));
      if (nl == nullptr) continue;
      got -= static_cast<std::size_t>(nl - fresh);
      std::memmove(fresh, nl, got);
      skipping_ = false;
    }
    data_end_ += got;
    for (std::size_t k = data_end_; k > data_end_ - got; --k) {  // the tail held no '\n'
      if (buf_[k - 1] == '\n') {
        lines_end_ = k;
        if (progress_) show_progress(false);
        return true;
      }
    }
  }
}

void LineReader::show_progress(bool done) {
  const auto now = std::chrono::steady_clock::now();
  if (!done && now - last_shown_ < std::chrono::milliseconds(200)) return;
  last_shown_ = now;
  const double consumed = double(gzoffset(gz_));
  const double seconds = std::chrono::duration<double>(now - start_).count();
  std::fprintf(stderr, "\rreading %s: %3.0f%% (%.0f MB/s)", path_.c_str(),
               100.0 * consumed / double(file_bytes_),
               seconds > 0 ? consumed / seconds / 1e6 : 0.0);
  std::fflush(stderr);
}

// ---- TextWriter -------------------------------------------------------------------------------

TextWriter::TextWriter(const std::string& path)
    : path_(display_name(path, true)), buf_(new char[kWriteBuffer]), capacity_(kWriteBuffer) {
  struct stat st {};
  const bool exists = path != "-" && ::stat(path.c_str(), &st) == 0;
  if (path == "-") {
    fd_ = ::dup(STDOUT_FILENO);
  } else if (exists && !S_ISREG(st.st_mode)) {  // a pipe or a device: no file to replace
    fd_ = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
  } else {
    target_ = resolve_links(path).string();
    fd_ = open_unnamed_beside(target_);
    unnamed_ = fd_ >= 0;
    if (!unnamed_) fd_ = create_temp_beside(target_, temp_, temp_slot_);
    if (fd_ >= 0 && exists) ::fchmod(fd_, st.st_mode & 07777);  // the replaced file's mode
  }
  if (fd_ < 0) throw Error(path_ + ": cannot create file: " + system_message());
  if (ends_with(path, ".gz")) {
    const int gz_fd = ::dup(fd_);
    gz_ = gz_fd >= 0 ? gzdopen(gz_fd, "wb6") : nullptr;
    if (!gz_) {
      if (gz_fd >= 0) ::close(gz_fd);
      fail("cannot start gzip compression");
    }
    gzbuffer(gz_, kZlibBuffer);
  }
}

TextWriter::~TextWriter() {
  if (gz_) gzclose(gz_);
  if (fd_ >= 0) ::close(fd_);
  if (!temp_.empty()) ::unlink(temp_.c_str());
  unregister_temp(temp_slot_);
}

void TextWriter::fail(const std::string& what) {
  throw Error(path_ + ": write error: " + what);
}

void TextWriter::flush() {
  if (used_ == 0) return;
  if (gz_) {
    if (gzwrite(gz_, buf_.get(), static_cast<unsigned>(used_)) != int(used_)) {
      int code = Z_OK;
      const char* message = gzerror(gz_, &code);
      fail(code == Z_ERRNO ? system_message() : message);
    }
  } else {
    for (std::size_t done = 0; done < used_;) {
      const ssize_t n = ::write(fd_, buf_.get() + done, used_ - done);
      if (n < 0 && errno != EINTR) fail(system_message());
      if (n > 0) done += static_cast<std::size_t>(n);
    }
  }
  used_ = 0;
}

void TextWriter::close() {
  flush();
  if (gz_) {
    const int rc = gzclose(gz_);
    gz_ = nullptr;
    if (rc != Z_OK)
      fail(rc == Z_ERRNO ? system_message() : "gzclose failed, code " + std::to_string(rc));
  }
  // A regular file reaches the disk before it takes the target's name.
  if (!target_.empty() && ::fsync(fd_) != 0) fail(system_message());
  if (unnamed_) link_unnamed();
  const int fd = fd_;
  fd_ = -1;
  if (::close(fd) != 0) fail(system_message());
  if (!temp_.empty()) {
    if (::rename(temp_.c_str(), target_.c_str()) != 0) fail(system_message());
    temp_.clear();
    unregister_temp(temp_slot_);
    temp_slot_ = -1;
  }
}

void TextWriter::link_unnamed() {
  // linkat cannot replace a file: the complete file takes a short temporary name, registered for
  // removal by a signal, and close() renames it over the target.
  const std::string proc = "/proc/self/fd/" + std::to_string(fd_);
  for (int attempt = 0; attempt < 1000; ++attempt) {
    const std::string name = temp_name_beside(target_);
    temp_slot_ = register_temp(name);
    if (::linkat(AT_FDCWD, proc.c_str(), AT_FDCWD, name.c_str(), AT_SYMLINK_FOLLOW) == 0) {
      temp_ = name;
      return;
    }
    const int code = errno;
    unregister_temp(temp_slot_);
    temp_slot_ = -1;
    errno = code;
    if (code != EEXIST) fail(system_message());
  }
  fail("no free temporary name beside the file");
}

}  // namespace kspmv::io::detail
