// Every CUDA kernel through kspmv::Operator against the long-double oracle: the zoo, a 2e5-nnz
// row, a random 1e5-row matrix, float and double, beta 0 (y poisoned with NaN) and beta != 0,
// alpha 0, host and device vectors; and the error paths. GPU tests skip without a device.
// The sanitizer run of the GPU suite selects the small cases with --gtest_filter='*Zoo*'.
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <tuple>
#include <vector>

#include "backends/host/reference.hpp"
#include "kspmv/core/error.hpp"
#include "kspmv/operator.hpp"
#include "test_matrices.hpp"
#ifdef KSPMV_HAVE_CUDA
#include <cuda_runtime_api.h>

#include "backends/cuda/csr_vector.hpp"
#include "backends/cuda/cuda_operator.hpp"
#include "backends/cuda/memory.hpp"
#endif

namespace kspmv::test {
namespace {

struct CudaCase {
  Kernel kernel;
  bool autotune;
};

std::string case_name(const testing::TestParamInfo<CudaCase>& info) {
  std::string name = to_string(info.param.kernel);
  for (char& c : name)
    if (c == '-') c = '_';
  return info.param.autotune ? name + "_autotune" : name;
}

// (alpha, beta): beta == 0 runs on a NaN-poisoned y, beta != 0 on a random y.
const std::vector<std::pair<double, double>> kScalars = {
    {1.5, 0.0}, {-0.75, 2.0}, {0.0, 0.5}, {0.0, 0.0}, {1.0, 1.0}};

template <class S>
void expect_matches_reference(Operator<S>& op, const CsrMatrix<S>& a, const std::string& what,
                              bool device_vectors = false) {
  std::uint64_t seed = 11;
  for (const auto& [alpha_d, beta_d] : kScalars) {
    const S alpha = static_cast<S>(alpha_d), beta = static_cast<S>(beta_d);
    const auto x = random_vector<S>(a.ncols, ++seed);
    const auto y0 = beta == S(0) ? nan_vector<S>(a.nrows) : random_vector<S>(a.nrows, ++seed);
    auto y = y0, ref = y0;
    reference::spmv(alpha, a, x.data(), beta, ref.data());
    if (!device_vectors) {
      op.apply(alpha, x.data(), beta, y.data());
    } else {
#ifdef KSPMV_HAVE_CUDA
      cuda::DeviceBuffer<S> dx(x.size()), dy(y.size());
      dx.upload(x.data());
      dy.upload(y.data());
      op.apply(alpha, dx.data(), beta, dy.data(), true);
      dy.download(y.data());
#endif
    }
    EXPECT_LE(spmv_error(y, ref, alpha, a, x.data(), beta, y0), reference::tolerance<S>())
        << what << " alpha=" << alpha_d << " beta=" << beta_d << " kernel "
        << to_string(op.kernel());
  }
}

class CudaKernels : public testing::TestWithParam<CudaCase> {
 protected:
  void SetUp() override {
    if (cuda_device_count() == 0) GTEST_SKIP() << "no CUDA device (or built without CUDA)";
#ifdef KSPMV_HAVE_CUDA
    if (!cuda::kernel_available(GetParam().kernel))
      GTEST_SKIP() << "kernel " << to_string(GetParam().kernel) << " is not built yet";
#endif
  }
  Options options() const {
    Options o;
    o.backend = Backend::Cuda;
    o.kernel = GetParam().kernel;
    o.autotune = GetParam().autotune;
    return o;
  }
  // Runs every (alpha, beta) case, repeated past the autotuning phase when autotuning.
  template <class S>
  void check(const CsrMatrix<S>& a, const std::string& what, bool device_vectors = false) {
    Operator<S> op(a, options());
    const int rounds = GetParam().autotune ? 4 : 1;
    for (int r = 0; r < rounds; ++r) expect_matches_reference(op, a, what, device_vectors);
  }
};

TEST_P(CudaKernels, ZooMatchesReference) {
  for (const auto& [name, a] : zoo<float>()) check(a, "float " + name);
  for (const auto& [name, a] : zoo<double>()) check(a, "double " + name);
}

TEST_P(CudaKernels, ZooWithDeviceVectorsMatchesReference) {
  for (const auto& [name, a] : zoo<float>()) check(a, "float " + name, true);
  for (const auto& [name, a] : zoo<double>()) check(a, "double " + name, true);
}

// One row of 2e5 non-zeros (the long-row path), rows of 3000 (between the default thresholds)
// and short rows.
template <class S>
CsrMatrix<S> long_row_matrix() {
  const Ordinal n = 200000, m = 1000;
  std::vector<std::tuple<Ordinal, Ordinal, double>> t;
  for (Ordinal j = 0; j < n; ++j) t.emplace_back(17, j, 1.0 + (j % 13) * 0.25);
  for (Ordinal i = 100; i < 110; ++i)
    for (Ordinal j = 0; j < 3000; ++j) t.emplace_back(i, (j * 61 + i) % n, -0.5 + (j % 3));
  for (Ordinal i = 0; i < m; ++i) t.emplace_back(i, (i * 7919) % n, 2.0);
  return from_triplets<S>(m, n, t);
}

TEST_P(CudaKernels, LongRowMatchesReference) {
  check(long_row_matrix<float>(), "float long_row");
  check(long_row_matrix<double>(), "double long_row", true);
}

TEST_P(CudaKernels, RandomLargeMatchesReference) {
  check(random_matrix<float>(100000, 100000, 8, 21), "float random_1e5");
  check(random_matrix<double>(100000, 100000, 8, 22), "double random_1e5");
}

INSTANTIATE_TEST_SUITE_P(
    AllCudaKernels, CudaKernels,
    testing::Values(CudaCase{Kernel::Auto, false}, CudaCase{Kernel::Auto, true},
                    CudaCase{Kernel::CsrVector, false}, CudaCase{Kernel::PartialOverlap, false},
                    CudaCase{Kernel::FullOverlap, false}, CudaCase{Kernel::Seg, false},
                    CudaCase{Kernel::SegR, false}, CudaCase{Kernel::Cusparse, false},
                    CudaCase{Kernel::CusparseAlg2, false}),
    case_name);

// ---- error paths (no GPU needed unless stated) -------------------------------------------------

Options cuda_options(std::vector<int> devices, Kernel kernel = Kernel::CsrVector) {
  Options o;
  o.backend = Backend::Cuda;
  o.kernel = kernel;
  o.devices = std::move(devices);
  return o;
}

TEST(CudaOperatorErrors, NonexistentDeviceIdThrowsNotCrashes) {
  const auto a = random_matrix<double>(50, 50, 3, 5);
  for (int device : {-2, 9999}) {  // -1 is kAllDevices
#ifdef KSPMV_HAVE_CUDA
    EXPECT_THROW(Operator<double>(a, cuda_options({device})), InvalidArgument) << device;
#else
    EXPECT_THROW(Operator<double>(a, cuda_options({device})), UnsupportedError) << device;
#endif
  }
  EXPECT_THROW(Operator<double>(a, cuda_options({})), Error);
}

TEST(CudaOperatorErrors, HostKernelOnCudaBackendThrowsUnsupported) {
  const auto a = random_matrix<float>(20, 20, 3, 6);
  EXPECT_THROW(Operator<float>(a, cuda_options({0}, Kernel::Coo)), UnsupportedError);
}

TEST(CudaOperatorErrors, HostPointersToDeviceApplyThrowAndLeaveYUnchanged) {
  if (cuda_device_count() == 0) GTEST_SKIP() << "no CUDA device";
  const auto a = random_matrix<double>(64, 64, 4, 7);
  Operator<double> op(a, cuda_options({0}));
  const auto x = random_vector<double>(64, 1);
  auto y = random_vector<double>(64, 2);
  const auto before = y;
  EXPECT_THROW(op.apply(1.0, x.data(), 0.0, y.data(), true), InvalidArgument);
  EXPECT_EQ(y, before);
}

TEST(CudaOperatorErrors, TimingsAreFilledAfterApply) {
  if (cuda_device_count() == 0) GTEST_SKIP() << "no CUDA device";
  const auto a = random_matrix<float>(1000, 1000, 8, 8);
  Operator<float> op(a, cuda_options({0}));
  const auto x = random_vector<float>(1000, 1);
  auto y = nan_vector<float>(1000);
  op.apply(1.0f, x.data(), 0.0f, y.data());
  const Timings t = op.timings();
  EXPECT_GT(t.kernel_ms, 0.0);
  EXPECT_GE(t.total_ms, t.kernel_ms);
  EXPECT_GT(t.preprocess_ms, 0.0);
}

#ifdef KSPMV_HAVE_CUDA
// The Kernel::Auto rule (cuda_operator.hpp) on row shapes alone: no GPU needed.
TEST(CudaAutoRule, FollowsTheDocumentedThresholds) {
  const Offset big = cuda::kAutoLatencyNnz;
  EXPECT_EQ(cuda::auto_kernel(cuda::RowShape{}, 8), Kernel::CsrVector);
  // Latency-bound: skewed -> seg, otherwise csr-vector.
  EXPECT_EQ(cuda::auto_kernel({20000, 10000, 20, 5}, 8), Kernel::Seg);
  EXPECT_EQ(cuda::auto_kernel({50000, 50, 5, 1.5}, 8), Kernel::Seg);
  EXPECT_EQ(cuda::auto_kernel({50000, 5, 5, 0.05}, 8), Kernel::CsrVector);
  EXPECT_EQ(cuda::auto_kernel({100000, 16, 6, 0.22}, 8), Kernel::CsrVector);
  // Bandwidth-bound.
  EXPECT_EQ(cuda::auto_kernel({big, 10000, 30, 5}, 8), Kernel::Cusparse);  // power law
  EXPECT_EQ(cuda::auto_kernel({big, 100, 30, 1.2}, 8), Kernel::Cusparse);
  EXPECT_EQ(cuda::auto_kernel({big, 5, 5, 0.02}, 8), Kernel::CsrVector);     // 2D stencil
  EXPECT_EQ(cuda::auto_kernel({big, 27, 26.6, 0.1}, 8), Kernel::CsrVector);  // 3D stencil
  EXPECT_EQ(cuda::auto_kernel({big, 27, 26.6, 0.1}, 4), Kernel::Cusparse);   // float
  EXPECT_EQ(cuda::auto_kernel({big, 5, 5, 0.02}, 4), Kernel::CsrVector);
  EXPECT_EQ(cuda::auto_kernel({big, 30, 15, 0.26}, 8), Kernel::CsrVector);  // geometric graph
  EXPECT_EQ(cuda::auto_kernel({big, 8, 8, 0}, 8), Kernel::Seg);             // uniform, double
  EXPECT_EQ(cuda::auto_kernel({big, 8, 8, 0}, 4), Kernel::Cusparse);        // float
}

// CSR-Vector's lanes per row (csr_vector.hpp): host arithmetic, no GPU needed.
TEST(CsrVectorLanes, FollowTheDocumentedRule) {
  const Ordinal many = 1 << 18;
  EXPECT_EQ(cuda::csr_vector_lanes(5, 0.01, 16 << 20), 1);  // 2D stencil
  EXPECT_EQ(cuda::csr_vector_lanes(5, 0.01, many - 1), 4);  // latency-bound: more lanes
  EXPECT_EQ(cuda::csr_vector_lanes(2, 0.3, 60 << 20), 4);   // irregular short rows
  EXPECT_EQ(cuda::csr_vector_lanes(26.7, 0.06, 4 << 20), 4);
  EXPECT_EQ(cuda::csr_vector_lanes(5, 0.3, 10000), 8);  // capped by the mean rounded up
  EXPECT_EQ(cuda::csr_vector_lanes(60, 0.3, 2910), 32);
  EXPECT_EQ(cuda::csr_vector_lanes(200, 0.3, 100), 32);
  EXPECT_EQ(cuda::csr_vector_lanes(22, 0.3, 20000), 16);  // 20000 * 16 >= 2^18
}

TEST(CudaAutoRule, RowShapeOfAStencilAndOfOneLongRow) {
  const std::vector<Offset> stencil = {0, 5, 10, 15, 20};  // four rows of 5
  const cuda::RowShape s = cuda::row_shape(stencil.data(), 4);
  EXPECT_EQ(s.nnz, 20);
  EXPECT_EQ(s.max, 5);
  EXPECT_DOUBLE_EQ(s.mean, 5);
  EXPECT_DOUBLE_EQ(s.cv, 0);
  const std::vector<Offset> one_long = {0, 1, 1, 9001, 9002};
  const cuda::RowShape l = cuda::row_shape(one_long.data(), 4);
  EXPECT_EQ(l.max, 9000);
  EXPECT_GT(l.cv, 1.5);
  EXPECT_EQ(cuda::auto_kernel(l, 8), Kernel::Seg);
  const cuda::RowShape short_rows =
      cuda::row_shape(one_long.data(), 4, 10);  // the long row left out
  EXPECT_EQ(short_rows.rows, 3);
  EXPECT_EQ(short_rows.nnz, 2);
  EXPECT_EQ(short_rows.max, 1);
}
#endif

}  // namespace
}  // namespace kspmv::test
