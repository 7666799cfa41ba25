// KSPMV_THREADS set for the life of an object (the host threads of the library's large loops).
#pragma once

#include <cstdlib>
#include <string>

namespace kspmv::test {

class ThreadCount {
 public:
  explicit ThreadCount(int threads) {
    const char* before = std::getenv("KSPMV_THREADS");
    had_ = before != nullptr;
    if (had_) saved_ = before;
    setenv("KSPMV_THREADS", std::to_string(threads).c_str(), 1);
  }
  ~ThreadCount() {
    if (had_)
      setenv("KSPMV_THREADS", saved_.c_str(), 1);
    else
      unsetenv("KSPMV_THREADS");
  }
  ThreadCount(const ThreadCount&) = delete;
  ThreadCount& operator=(const ThreadCount&) = delete;

 private:
  bool had_ = false;
  std::string saved_;
};

}  // namespace kspmv::test
