// A matrix that arrives in device memory planned there: the row profile of its 32-bit row
// pointer (backends/cuda/row_profile.hpp: profile_rows) against analysis::row_stats of the host
// row pointer, and the Operators of device arrays: the kernel Auto's rule picks on the host
// (csr-vector where that kernel plans on the host), each result against the oracle on a poisoned
// y, long rows included. GPU tests skip without a device.
#include <gtest/gtest.h>

#include <string>
#include <tuple>
#include <vector>

#include "kspmv/analysis/kernel_choice.hpp"
#include "kspmv/gen/generators.hpp"
#include "kspmv/operator.hpp"
#include "testing/reference.hpp"
#include "testing/test_matrices.hpp"
#ifdef KSPMV_HAVE_CUDA
#include <cuda_runtime_api.h>

#include "backends/cuda/device_spmv.hpp"
#include "backends/cuda/row_profile.hpp"
#include "row_profile_expect.hpp"
#endif

namespace kspmv::test {
namespace {

#ifdef KSPMV_HAVE_CUDA

class CudaDeviceStats : public testing::Test {
 protected:
  void SetUp() override {
    if (cuda_device_count() == 0) GTEST_SKIP() << "no CUDA device";
  }
};

// The zoo, rows past every long-row threshold of CSR-Vector, and larger matrices of the families
// Auto tells apart.
std::vector<std::pair<std::string, CsrMatrix<double>>> matrices() {
  auto all = zoo<double>();
  std::vector<std::tuple<Ordinal, Ordinal, double>> t;
  for (Ordinal j = 0; j < 100000; ++j) t.emplace_back(3, j, 1.0);
  for (Ordinal i = 0; i < 200; ++i)
    for (Ordinal j = 0; j < 1 + i * 25; ++j) t.emplace_back(10 + i, (j * 13 + i) % 100000, 0.5);
  all.emplace_back("long rows", from_triplets<double>(300, 100000, t));
  all.emplace_back("random", random_matrix<double>(5000, 4000, 9, 2));
  all.emplace_back("laplace2d", gen::laplace2d<double>(300, 300));
  all.emplace_back("kron", gen::from_spec<double>("kron:scale=14"));
  all.emplace_back("uniform", gen::from_spec<double>("uniform:rows=300000,k=8"));
  return all;
}

TEST_F(CudaDeviceStats, ProfileOfA32BitRowPointerEqualsTheHostStatistics) {
  for (const auto& [name, a] : matrices()) {
    const auto d = cuda::DeviceCsr<double>::upload(pointers(a));
    cuda::DeviceBuffer<cuda::ProfileSums> sums(1);
    cuda::profile_rows(d.row_ptr.data(), a.nrows, sums.data(), nullptr);
    cuda::ProfileSums h;
    KSPMV_CUDA_CHECK(cudaMemcpy(&h, sums.data(), sizeof h, cudaMemcpyDeviceToHost));
    const cuda::RowProfile p = cuda::to_profile(h, a.ncols);
    expect_profile_of(p, a.row_ptr.data(), a.nrows, a.ncols, name);
    const auto all = analysis::row_stats(a.row_ptr.data(), a.nrows, a.ncols);
    EXPECT_EQ(analysis::auto_kernel(p.all, 8), analysis::auto_kernel(all, 8)) << name;
    EXPECT_EQ(analysis::auto_kernel(p.all, 4), analysis::auto_kernel(all, 4)) << name;
    for (int k = 0; k < 6; ++k) {
      Ordinal longer = 0;
      for (Ordinal i = 0; i < a.nrows; ++i) longer += a.row_length(i) > (Offset{128} << k);
      EXPECT_EQ(p.longer_than[k], longer) << name << " > " << (128 << k);
    }
  }
}

// Auto on device arrays runs the host rule's kernel (csr-vector where that one plans on the
// host), csr-vector and cuSPARSE the kernel asked; every result matches the oracle.
TEST_F(CudaDeviceStats, DeviceArraysPlannedOnTheDeviceMatchReference) {
  for (const auto& [name, a] : matrices()) {
    Kernel expected = analysis::auto_kernel(analysis::row_stats(a.row_ptr.data(), a.nrows, a.ncols),
                                            sizeof(double));
    if (find_kernel(Backend::Cuda, expected)->reads_host_entries ||
        expected == Kernel::PartialOverlap)
      expected = Kernel::CsrVector;
    const auto d = cuda::DeviceCsr<double>::upload(pointers(a));
    const DeviceCsrArrays<double> arrays{d.row_ptr.data(), 4,       true,    d.col.data(),        4,
                                         d.val.data(),     a.nrows, a.ncols, std::size_t(a.nnz())};
    for (const Kernel k :
         {Kernel::Auto, Kernel::CsrVector, Kernel::Cusparse, Kernel::CusparseAlg2}) {
      Options o;
      o.backend = Backend::Cuda;
      o.kernel = k;
      Operator<double> op(arrays, o);
      EXPECT_EQ(op.kernel(), k == Kernel::Auto ? expected : k) << name;
      const auto x = random_vector<double>(a.ncols, 3);
      const auto y0 = nan_vector<double>(a.nrows);
      auto y = y0, ref = y0;
      reference::spmv(1.0, a, x.data(), 0.0, ref.data());
      cuda::DeviceBuffer<double> dx(x.size()), dy(y.size());
      dx.upload(x.data());
      dy.upload(y.data());
      op.apply(nullptr, 1.0, dx.data(), 0.0, dy.data());
      op.synchronize();
      dy.download(y.data());
      EXPECT_LE(spmv_error(y, ref, 1.0, a, x.data(), 0.0, y0), reference::tolerance<double>())
          << name << " " << to_string(k);
    }
  }
}

#endif  // KSPMV_HAVE_CUDA

}  // namespace
}  // namespace kspmv::test
