// kspmv cg's residual history (every k-th iteration, k doubling to keep it short) and its
// progress line on a terminal.
#include "cg_watch.hpp"

#include <cstdio>

namespace kspmv::cli {

CgWatch::CgWatch(bool progress) : progress_(progress), last_shown_(start_) {}

void CgWatch::operator()(int iteration, double relative_residual) {
  last_iteration_ = iteration, last_residual_ = relative_residual;
  if (iteration % every_ == 0) {
    iterations_.push_back(iteration);
    residuals_.push_back(relative_residual);
    if (iterations_.size() > kMaxHistory) {  // keep the multiples of 2k
      every_ *= 2;
      std::size_t kept = 0;
      for (std::size_t k = 0; k < iterations_.size(); ++k)
        if (iterations_[k] % every_ == 0)
          iterations_[kept] = iterations_[k], residuals_[kept++] = residuals_[k];
      iterations_.resize(kept);
      residuals_.resize(kept);
    }
  }
  if (!progress_) return;
  const auto now = Clock::now();
  if (now - last_shown_ < std::chrono::milliseconds(250)) return;
  last_shown_ = now;
  shown_ = true;
  std::fprintf(stderr, "\rcg: iteration %d, relative residual %.3e, %.1f s", iteration,
               relative_residual, std::chrono::duration<double>(now - start_).count());
  std::fflush(stderr);
}

void CgWatch::finish() {
  if (last_iteration_ >= 0 && (iterations_.empty() || iterations_.back() != last_iteration_)) {
    iterations_.push_back(last_iteration_);
    residuals_.push_back(last_residual_);
  }
  if (shown_) std::fputs("\n", stderr);
  shown_ = false;
}

}  // namespace kspmv::cli
