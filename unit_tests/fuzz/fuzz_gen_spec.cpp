// libFuzzer target for the gen: spec parser (gen::from_spec). With a memory budget of kBudget
// bytes (KSPMV_MEMORY_LIMIT) the generators refuse what would not fit before doing any work, so
// every input is parsed and checked but only small matrices are built. Beyond "no memory error,
// no undefined behaviour":
//  - only kspmv::Error escapes, with a message of one short line of printable characters;
//  - a matrix built is valid, with sorted, unique columns;
//  - memory: the peak is at most kFixedBytes + 2 x kBudget.
#include <cstdint>
#include <string>

#include "fuzz_common.hpp"
#include "kspmv/core/error.hpp"
#include "kspmv/gen/generators.hpp"

namespace {
constexpr std::size_t kBudget = std::size_t(16) << 20;
constexpr std::size_t kFixedBytes = std::size_t(16) << 20;
}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  kspmv::fuzz::initialize(kBudget);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using kspmv::fuzz::require;
  const std::string spec(reinterpret_cast<const char*>(data), size);
  kspmv::fuzz::PeakMemory peak;
  peak.start();
  try {
    const auto a = kspmv::gen::from_spec<float>(spec);
    a.validate();
    require(a.is_sorted_unique(), "columns not sorted and unique");
  } catch (const kspmv::Error& e) {
    kspmv::fuzz::require_printable(e.what());
  } catch (const std::exception& e) {
    require(false, std::string("not a kspmv::Error: ") + e.what());
  }
  require(peak.peak_bytes() <= kFixedBytes + 2 * kBudget,
          "peak of " + std::to_string(peak.peak_bytes()) + " bytes");
  return 0;
}
