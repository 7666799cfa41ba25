// What kspmv cg shows of a solve as it runs (a kspmv::CgMonitor): the relative residual history
// for --json, and a progress line on stderr when stderr is a terminal.
#pragma once

#include <chrono>
#include <vector>

namespace kspmv::cli {

class CgWatch {
 public:
  // History entries kept at most: every iteration up to this many, then every k-th (k doubling,
  // the entries between dropped), plus the last iteration.
  static constexpr std::size_t kMaxHistory = 1000;

  // progress: the line "cg: iteration N, relative residual R, T s" rewritten in place at most
  // 4 times a second from 0.25 s on (a solve shorter than that shows nothing).
  explicit CgWatch(bool progress);
  void operator()(int iteration, double relative_residual);
  // Ends the progress line, if one was shown; the last iteration joins the history.
  void finish();

  int every() const { return every_; }  // k: the history holds iterations 0, k, 2k, ...
  const std::vector<int>& iterations() const { return iterations_; }
  const std::vector<double>& residuals() const { return residuals_; }

 private:
  using Clock = std::chrono::steady_clock;
  bool progress_, shown_ = false;
  Clock::time_point start_ = Clock::now(), last_shown_;
  int every_ = 1;
  int last_iteration_ = -1;
  double last_residual_ = 0;
  std::vector<int> iterations_;
  std::vector<double> residuals_;
};

}  // namespace kspmv::cli
