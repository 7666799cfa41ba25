// What the kernel registry says of one kernel on one backend. Each backend keeps one table of
// these rows beside their factories (backends/*/*_operator.cpp); kspmv/registry.hpp lists all.
#pragma once

#include "kspmv/core/options.hpp"

namespace kspmv {

struct KernelInfo {
  Kernel kernel = Kernel::Auto;
  Backend backend = Backend::Host;
  // Streamed: the matrix stays in host memory and crosses to the device on every apply.
  Residency residency = Residency::Resident;
  // The device build reads the host's column indices and values (not only its row pointer).
  bool reads_host_entries = false;
  // Kernel::Auto with Options::autotune times this kernel among its candidates.
  bool autotune = false;
  // Runs on the pieces of a multi-device partition (Options::devices with several entries).
  bool multi_device = false;
  const char* summary = "";  // one line, for help texts and the demo
  // Takes complex values (Kokkos::complex<float>, Kokkos::complex<double>); the others refuse
  // them, and Kernel::Auto picks among the rows that take them.
  bool complex_values = false;
};

}  // namespace kspmv
