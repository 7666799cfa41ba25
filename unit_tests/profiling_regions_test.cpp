// kspmv's Kokkos Tools regions, seen by push/pop region callbacks set as a tool library sets
// them (Kokkos::Tools::Experimental::set_push_region_callback, in Kokkos 3.4 and 4.x):
// "kspmv::setup" around the construction, one "kspmv::apply" per apply, "kspmv::update_values",
// and on the CUDA backend the set-up's phases inside "kspmv::setup"; every push popped. The
// applies are checked against the oracle on a poisoned y too.
#include <gtest/gtest.h>

#include <Kokkos_Core.hpp>
#include <algorithm>
#include <string>
#include <vector>

#include "kspmv/gen/generators.hpp"
#include "kspmv/operator.hpp"
#include "testing/reference.hpp"
#include "testing/test_matrices.hpp"

namespace kspmv::test {
namespace {

// What the callbacks saw: "+name" for a push, "-name" for the pop that closes it.
std::vector<std::string>* seen = nullptr;
std::vector<std::string>* open_regions = nullptr;

void on_push(const char* name) {
  seen->push_back(std::string("+") + name);
  open_regions->push_back(name);
}
void on_pop() {
  ASSERT_FALSE(open_regions->empty()) << "a pop without a push";
  seen->push_back("-" + open_regions->back());
  open_regions->pop_back();
}

// Installs the callbacks for its lifetime.
class RegionRecorder {
 public:
  RegionRecorder() {
    seen = &events;
    open_regions = &open;
    Kokkos::Tools::Experimental::set_push_region_callback(on_push);
    Kokkos::Tools::Experimental::set_pop_region_callback(on_pop);
  }
  ~RegionRecorder() {
    Kokkos::Tools::Experimental::set_push_region_callback(nullptr);
    Kokkos::Tools::Experimental::set_pop_region_callback(nullptr);
    seen = nullptr;
    open_regions = nullptr;
  }
  RegionRecorder(const RegionRecorder&) = delete;
  RegionRecorder& operator=(const RegionRecorder&) = delete;

  long count(const std::string& event) const {
    return std::count(events.begin(), events.end(), event);
  }
  // Whether `inner` was pushed while `outer` was open.
  bool nested(const std::string& outer, const std::string& inner) const {
    int depth = 0;
    for (const auto& e : events) {
      if (e == "+" + inner && depth > 0) return true;
      if (e == "+" + outer) ++depth;
      if (e == "-" + outer) --depth;
    }
    return false;
  }

  std::vector<std::string> events, open;
};

// Builds, applies three times and refreshes an operator of `options`, checking each apply.
void run_and_check(const Options& options, RegionRecorder& rec) {
  const auto a = gen::laplace2d<double>(30, 30);
  Operator<double> op(a, options);
  const auto x = random_vector<double>(a.ncols, 5);
  const auto y0 = nan_vector<double>(a.nrows);
  auto ref = y0;
  reference::spmv(2.0, a, x.data(), 0.0, ref.data());
  for (int i = 0; i < 3; ++i) {
    auto y = y0;
    op.apply(2.0, x.data(), 0.0, y.data());
    EXPECT_LE(spmv_error(y, ref, 2.0, a, x.data(), 0.0, y0), reference::tolerance<double>());
  }
  op.update_values(a.values.data(), a.values.extent(0), false);
  EXPECT_EQ(rec.count("+kspmv::setup"), 1);
  EXPECT_EQ(rec.count("+kspmv::apply"), 3);
  EXPECT_EQ(rec.count("+kspmv::update_values"), 1);
  EXPECT_TRUE(rec.open.empty()) << "a region was left open";
}

TEST(ProfilingRegions, HostOperatorMarksSetupAppliesAndRefresh) {
  RegionRecorder rec;
  Options o;
  o.backend = Backend::Host;
  run_and_check(o, rec);
  EXPECT_EQ(rec.count("-kspmv::setup"), 1);
  EXPECT_EQ(rec.count("-kspmv::apply"), 3);
}

TEST(ProfilingRegions, CudaOperatorMarksItsSetupPhases) {
  if (cuda_device_count() == 0) GTEST_SKIP() << "no CUDA device (or built without CUDA)";
  RegionRecorder rec;
  Options o;
  o.backend = Backend::Cuda;
  o.kernel = Kernel::CsrVector;
  run_and_check(o, rec);
  for (const char* phase :
       {"kspmv::setup::analysis", "kspmv::setup::upload", "kspmv::setup::kernels"})
    EXPECT_TRUE(rec.nested("kspmv::setup", phase)) << phase;
  EXPECT_TRUE(rec.nested("kspmv::update_values", "kspmv::update_values::copy"))
      << "the backend's refresh phase inside the Operator's";
}

}  // namespace
}  // namespace kspmv::test
