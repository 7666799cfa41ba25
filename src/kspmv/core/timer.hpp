// Wall-clock milliseconds, for preprocessing times and host-side timings.
#pragma once

#include <chrono>

namespace kspmv {

using Clock = std::chrono::steady_clock;

// Milliseconds from t0 to now.
inline double ms_since(Clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

}  // namespace kspmv
