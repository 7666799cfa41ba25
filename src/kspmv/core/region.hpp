// Named regions of kspmv's work for Kokkos Tools (Kokkos::Profiling::pushRegion/popRegion):
// "kspmv::setup" and its phases, "kspmv::apply", "kspmv::update_values" (and its phase), so
// that a tool (the Space Time Stack, Nsight through the nvtx connector) shows where kspmv spends
// an application's time. Kokkos-free: the CUDA backend marks its set-up phases through it too.
#pragma once

namespace kspmv {

// Pushes the region `name` (a string literal: it is not copied) for the lifetime of the object.
// With no tool loaded it costs a check; "kspmv::apply" allocates nothing.
class Region {
 public:
  explicit Region(const char* name);
  ~Region();
  Region(const Region&) = delete;
  Region& operator=(const Region&) = delete;
};

}  // namespace kspmv
