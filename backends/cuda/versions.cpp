// The versions of the CUDA runtime, driver and cuSPARSE (versions.hpp).
#include "backends/cuda/versions.hpp"

#include <cuda_runtime_api.h>
#include <cusparse.h>

namespace kspmv::cuda {

namespace {

// CUDA's encoding, 1000 * major + 10 * minor (13000: "13.0"); "none" for 0 (no driver).
std::string cuda_version(int v) {
  if (v <= 0) return "none";
  return std::to_string(v / 1000) + "." + std::to_string(v % 1000 / 10);
}

int cusparse_property(libraryPropertyType type) {
  int value = -1;
  return cusparseGetProperty(type, &value) == CUSPARSE_STATUS_SUCCESS ? value : -1;
}

}  // namespace

Versions versions() {
  int runtime = 0, driver = 0;
  if (cudaRuntimeGetVersion(&runtime) != cudaSuccess) runtime = 0;
  if (cudaDriverGetVersion(&driver) != cudaSuccess) driver = 0;
  const int major = cusparse_property(MAJOR_VERSION), minor = cusparse_property(MINOR_VERSION),
            patch = cusparse_property(PATCH_LEVEL);
  const std::string cusparse =
      major < 0 || minor < 0 || patch < 0
          ? "unknown"
          : std::to_string(major) + "." + std::to_string(minor) + "." + std::to_string(patch);
  return {cuda_version(runtime), cuda_version(driver), cusparse};
}

}  // namespace kspmv::cuda
