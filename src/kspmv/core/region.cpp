#include "kspmv/core/region.hpp"

#include <Kokkos_Core.hpp>
#include <string>

namespace kspmv {

// Kokkos calls the tool's callback only where one is set. Names of up to 15 characters
// ("kspmv::apply") fit the string's own storage: an apply allocates nothing.
Region::Region(const char* name) {
  Kokkos::Profiling::pushRegion(std::string(name));
}

Region::~Region() {
  Kokkos::Profiling::popRegion();
}

}  // namespace kspmv
