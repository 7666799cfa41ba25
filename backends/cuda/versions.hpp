// The versions of the CUDA runtime, driver and cuSPARSE this process runs with.
#pragma once

#include <string>

namespace kspmv::cuda {

struct Versions {
  std::string runtime, driver, cusparse;  // "13.0", "13.0", "12.6.3"; driver "none" without one
};
Versions versions();

}  // namespace kspmv::cuda
