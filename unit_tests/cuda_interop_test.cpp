// The CUDA Operator inside a GPU application: matrices given in device arrays (32- and 64-bit
// offsets, used in place or narrowed, checked on the device), applies enqueued on the caller's
// streams (two operators at once, ten applies captured in a CUDA graph and replayed, every
// kernel of the registry run on one at once when built), values refreshed on the same pattern.
// Every result against the oracle on a poisoned y. GPU tests skip without a device.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "kspmv/core/error.hpp"
#include "kspmv/formats/convert.hpp"
#include "kspmv/gen/generators.hpp"
#include "kspmv/operator.hpp"
#include "testing/reference.hpp"
#include "testing/test_matrices.hpp"
#ifdef KSPMV_HAVE_CUDA
#include <cuda_runtime_api.h>

#include "backends/cuda/cuda_operator.hpp"
#include "backends/cuda/memory.hpp"
#endif

namespace kspmv::test {
namespace {

#ifdef KSPMV_HAVE_CUDA

Options cuda_options(Kernel kernel = Kernel::Auto) {
  Options o;
  o.backend = Backend::Cuda;
  o.kernel = kernel;
  return o;
}

// A host CSR matrix copied to device arrays with offsets and column indices of the types the
// caller picks (as KokkosSparse matrices hold them).
template <class S, class O, class C>
struct DeviceArrays {
  cuda::DeviceBuffer<O> row_ptr;
  cuda::DeviceBuffer<C> col;
  cuda::DeviceBuffer<S> val;
  DeviceCsrArrays<S> arrays;

  explicit DeviceArrays(const CsrMatrix<S>& a)
      : row_ptr(a.nrows + std::size_t(1)), col(a.nnz()), val(a.nnz()) {
    const std::vector<O> p(a.row_ptr.data(), a.row_ptr.data() + a.nrows + 1);
    const std::vector<C> c(a.col_idx.data(), a.col_idx.data() + a.nnz());
    row_ptr.upload(p.data());
    col.upload(c.data());
    val.upload(a.values.data());
    arrays = {row_ptr.data(), int(sizeof(O)), std::is_signed_v<O>,
              col.data(),     int(sizeof(C)), val.data(),
              a.nrows,        a.ncols,        std::size_t(a.nnz())};
  }
};

// y = alpha*A*x + beta*y through op on device vectors and a stream of the caller, against the
// oracle on `a`.
template <class S>
void expect_matches(Operator<S>& op, const CsrMatrix<S>& a, const std::string& what,
                    std::uint64_t seed) {
  const auto x = random_vector<S>(a.ncols, seed);
  const auto y0 = nan_vector<S>(a.nrows);
  auto ref = y0, y = y0;
  reference::spmv(S(2), a, x.data(), S(0), ref.data());
  cuda::DeviceBuffer<S> dx(x.size()), dy(y.size());
  dx.upload(x.data());
  dy.upload(y.data());
  const cuda::Stream stream;
  op.apply(stream.get(), S(2), dx.data(), S(0), dy.data());
  stream.synchronize();
  dy.download(y.data());
  EXPECT_LE(spmv_error(y, ref, S(2), a, x.data(), S(0), y0), reference::tolerance<S>())
      << what << " kernel " << to_string(op.kernel());
}

class CudaInterop : public testing::Test {
 protected:
  void SetUp() override {
    if (cuda_device_count() == 0) GTEST_SKIP() << "no CUDA device";
  }
};

TEST_F(CudaInterop, MatrixFromDeviceArraysOfEveryIndexWidthMatchesReference) {
  for (const auto& [name, a] : zoo<double>()) {
    for (const Kernel k : {Kernel::Auto, Kernel::CsrVector, Kernel::Cusparse,
                           Kernel::PartialOverlap, Kernel::Seg, Kernel::Hbp}) {
      const std::string what = name + " " + to_string(k);
      {
        const DeviceArrays<double, std::int32_t, std::int32_t> d(a);  // used in place
        Operator<double> op(d.arrays, cuda_options(k));
        expect_matches(op, a, what + " int32", 1);
      }
      {
        const DeviceArrays<double, std::int64_t, std::int64_t> d(a);  // narrowed once
        Operator<double> op(d.arrays, cuda_options(k));
        expect_matches(op, a, what + " int64", 2);
      }
      {
        const DeviceArrays<double, std::uint64_t, std::int32_t> d(a);
        Operator<double> op(d.arrays, cuda_options(k));
        expect_matches(op, a, what + " uint64", 3);
      }
    }
  }
  const auto f = random_matrix<float>(3000, 2000, 9, 4);
  const DeviceArrays<float, std::uint32_t, std::int32_t> d(f);
  Operator<float> op(d.arrays, cuda_options());
  expect_matches(op, f, "float random", 5);
}

TEST_F(CudaInterop, AutoOnDeviceArraysKeepsTheMatrixOnTheDevice) {
  // Regular short rows: on a host matrix Auto takes seg, which preprocesses on the host.
  const auto a = gen::laplace2d<double>(200, 200);
  const DeviceArrays<double, std::int32_t, std::int32_t> d(a);
  Operator<double> op(d.arrays, cuda_options());
  const KernelInfo* row = find_kernel(Backend::Cuda, op.kernel());
  ASSERT_NE(row, nullptr);
  EXPECT_FALSE(row->reads_host_entries) << to_string(op.kernel());
  expect_matches(op, a, "laplace2d", 6);
}

TEST_F(CudaInterop, DeviceArraysAreCheckedOnTheDevice) {
  auto a = random_matrix<double>(300, 200, 5, 7);
  {
    auto bad = a;
    bad.col_idx = make_host_view<Ordinal>("col", a.nnz());
    std::copy(a.col_idx.data(), a.col_idx.data() + a.nnz(), bad.col_idx.data());
    bad.col_idx(17) = 200;
    const DeviceArrays<double, std::int32_t, std::int32_t> d32(bad);
    const DeviceArrays<double, std::int64_t, std::int64_t> d64(bad);
    for (const auto* arrays : {&d32.arrays, &d64.arrays}) {
      try {
        Operator<double> op(*arrays, cuda_options());
        ADD_FAILURE() << "accepted a column index out of range";
      } catch (const InvalidArgument& e) {
        EXPECT_NE(std::string(e.what()).find("entry 17"), std::string::npos) << e.what();
      }
    }
  }
  {
    auto bad = a;
    bad.row_ptr = make_host_view<Offset>("row_ptr", a.nrows + 1);
    std::copy(a.row_ptr.data(), a.row_ptr.data() + a.nrows + 1, bad.row_ptr.data());
    bad.row_ptr(51) = bad.row_ptr(50) - 1;
    const DeviceArrays<double, std::int32_t, std::int32_t> d(bad);
    try {
      Operator<double> op(d.arrays, cuda_options());
      ADD_FAILURE() << "accepted a decreasing row map";
    } catch (const InvalidArgument& e) {
      EXPECT_NE(std::string(e.what()).find("decreases"), std::string::npos) << e.what();
    }
  }
  const DeviceArrays<double, std::int32_t, std::int32_t> d(a);
  Options host;
  EXPECT_THROW(Operator<double>(d.arrays, host), InvalidArgument);
  Options streamed = cuda_options();
  streamed.residency = Residency::Streamed;
  EXPECT_THROW(Operator<double>(d.arrays, streamed), UnsupportedError);
}

// Built from device arrays, the transpose is built on the device; k vectors read A once per 8.
TEST_F(CudaInterop, DeviceArraysTransposeAndBlocksMatchReference) {
  const auto a = random_matrix<double>(3000, 2000, 7, 14);
  const auto at = transpose(a);
  const DeviceArrays<double, std::int64_t, std::int32_t> d(a);
  for (const Kernel kernel : {Kernel::Auto, Kernel::Cusparse, Kernel::Seg}) {
    Operator<double> op(d.arrays, cuda_options(kernel));
    for (const Mode mode : {Mode::NoTranspose, Mode::Transpose})
      for (const int k : {1, 4, 11}) {
        const CsrMatrix<double>& b = mode == Mode::Transpose ? at : a;
        const auto m = static_cast<std::size_t>(b.nrows), n = static_cast<std::size_t>(b.ncols);
        const auto x = random_vector<double>(n * k, 15 + k);
        const auto y0 = random_vector<double>(m * k, 16 + k);
        auto y = y0, ref = y0;
        for (int c = 0; c < k; ++c)
          reference::spmv(0.5, b, x.data() + c * n, -1.0, ref.data() + c * m);
        cuda::DeviceBuffer<double> dx(x.size()), dy(y.size());
        dx.upload(x.data());
        dy.upload(y.data());
        const cuda::Stream stream;
        op.apply(stream.get(), 0.5, dx.data(), -1.0, dy.data(), k, mode);
        stream.synchronize();
        dy.download(y.data());
        EXPECT_LE(reference::rel_l2_error(y.data(), ref.data(), y.size()), 1e-12)
            << to_string(kernel) << " " << to_string(mode) << " k=" << k;
      }
  }
}

// y <- A*x + beta*y, ten times, captured in a CUDA graph and replayed twice: the result equals
// twenty applies on the host.
TEST_F(CudaInterop, TenAppliesCapturedInAGraphReplayCorrectly) {
  const auto a = random_matrix<double>(5000, 5000, 7, 8);
  for (const Kernel k : {Kernel::CsrVector, Kernel::Cusparse, Kernel::PartialOverlap, Kernel::Seg,
                         Kernel::SegR, Kernel::Hbp}) {
    Operator<double> op(a, cuda_options(k));
    const auto x = random_vector<double>(a.ncols, 9);
    auto ref = random_vector<double>(a.nrows, 10);
    std::vector<double> y = ref;
    cuda::DeviceBuffer<double> dx(x.size()), dy(y.size());
    dx.upload(x.data());
    dy.upload(y.data());
    const cuda::Stream stream;
    op.apply(stream.get(), 1.0, dx.data(), 0.5, dy.data());  // before capture: first-use work
    stream.synchronize();
    reference::spmv(1.0, a, x.data(), 0.5, ref.data());
    cudaGraph_t graph = nullptr;
    ASSERT_EQ(cudaStreamBeginCapture(stream.get(), cudaStreamCaptureModeThreadLocal), cudaSuccess);
    for (int i = 0; i < 10; ++i) op.apply(stream.get(), 1.0, dx.data(), 0.5, dy.data());
    ASSERT_EQ(cudaStreamEndCapture(stream.get(), &graph), cudaSuccess) << to_string(k);
    cudaGraphExec_t exec = nullptr;
    ASSERT_EQ(cudaGraphInstantiate(&exec, graph, 0), cudaSuccess);
    for (int replay = 0; replay < 2; ++replay) {
      ASSERT_EQ(cudaGraphLaunch(exec, stream.get()), cudaSuccess);
      for (int i = 0; i < 10; ++i) reference::spmv(1.0, a, x.data(), 0.5, ref.data());
    }
    stream.synchronize();
    dy.download(y.data());
    EXPECT_LE(reference::rel_l2_error(y.data(), ref.data(), y.size()), 1e-12) << to_string(k);
    cudaGraphExecDestroy(exec);
    cudaGraphDestroy(graph);
  }
}

// Two operators on two streams at once, each result checked.
TEST_F(CudaInterop, TwoOperatorsOnTwoStreamsAtOnce) {
  const auto a = random_matrix<double>(20000, 20000, 9, 11);
  const auto b = gen::laplace2d<double>(150, 150);
  Options timed = cuda_options(Kernel::CsrVector);
  timed.time_applies = true;  // opa times each apply with events, opb (the default) does not
  Operator<double> opa(a, timed), opb(b, cuda_options(Kernel::Seg));
  const auto xa = random_vector<double>(a.ncols, 12), xb = random_vector<double>(b.ncols, 13);
  std::vector<double> ra(a.nrows, 0.0), rb(b.nrows, 0.0);
  cuda::DeviceBuffer<double> dxa(xa.size()), dya(ra.size()), dxb(xb.size()), dyb(rb.size());
  dxa.upload(xa.data());
  dxb.upload(xb.data());
  dya.upload(ra.data());
  dyb.upload(rb.data());
  const cuda::Stream sa, sb;
  for (int i = 0; i < 5; ++i) {
    opa.apply(sa.get(), 1.0, dxa.data(), 1.0, dya.data());
    opb.apply(sb.get(), -1.0, dxb.data(), 1.0, dyb.data());
    reference::spmv(1.0, a, xa.data(), 1.0, ra.data());
    reference::spmv(-1.0, b, xb.data(), 1.0, rb.data());
  }
  opa.synchronize();
  opb.synchronize();
  std::vector<double> ya(ra.size()), yb(rb.size());
  dya.download(ya.data());
  dyb.download(yb.data());
  EXPECT_LE(reference::rel_l2_error(ya.data(), ra.data(), ya.size()), 1e-12);
  EXPECT_LE(reference::rel_l2_error(yb.data(), rb.data(), yb.size()), 1e-12);
  EXPECT_GT(opa.timings().kernel_ms, 0.0);  // waits for the last apply and times it
  EXPECT_EQ(opb.timings().kernel_ms, 0.0);  // not timed
}

// Kernels with dynamic shared memory sized per matrix (HBP's x segment, the overlap pipelines'
// stages): an operator built after another, on a narrower matrix, must not make the wider one's
// launches fail.
TEST_F(CudaInterop, ANarrowerOperatorBuiltLaterLeavesTheWiderOneRunning) {
  const auto wide = random_matrix<double>(3000, 9000, 7, 21);
  const auto narrow = random_matrix<double>(300, 40, 5, 22);
  for (const Kernel kernel : {Kernel::Hbp, Kernel::PartialOverlap, Kernel::FullOverlap}) {
    Operator<double> first(wide, cuda_options(kernel));
    Operator<double> second(narrow, cuda_options(kernel));
    expect_matches(first, wide, "wide after narrow", 23);
    expect_matches(second, narrow, "narrow", 24);
  }
}

// Every kernel of the registry is ready when its factory returns (DeviceSpmv): nothing of its
// set-up is left on the legacy default stream, and its first run, enqueued at once on a
// non-blocking stream (which does not wait for that stream), matches. x and y are uploaded
// before the build: an upload waits for the legacy default stream. HBP's plan kernels were once
// left running there, and a first run read its slots' destinations before they were written.
TEST_F(CudaInterop, EveryKernelIsReadyWhenItsFactoryReturns) {
  const auto a = gen::laplace2d<double>(400, 400);
  const auto host = pointers(a);
  const auto d =
      std::make_shared<const cuda::DeviceCsr<double>>(cuda::DeviceCsr<double>::upload(host));
  const auto x = random_vector<double>(a.ncols, 31);
  const auto y0 = nan_vector<double>(a.nrows);
  auto ref = y0;
  reference::spmv(1.0, a, x.data(), 0.0, ref.data());
  const cuda::Stream stream;
  for (const auto& row : cuda::kernel_table<double>()) {
    SCOPED_TRACE(to_string(row.info.kernel));
    cuda::DeviceBuffer<double> dx(x.size()), dy(y0.size());
    dx.upload(x.data());
    dy.upload(y0.data());
    const auto kernel = row.make(row.uses_device_csr ? d : nullptr, host);
    EXPECT_EQ(cudaStreamQuery(cudaStreamLegacy), cudaSuccess) << "set-up still running";
    kernel->run(1.0, dx.data(), 0.0, dy.data(), stream.get());
    stream.synchronize();
    auto y = y0;
    dy.download(y.data());
    EXPECT_LE(spmv_error(y, ref, 1.0, a, x.data(), 0.0, y0), reference::tolerance<double>());
  }
}

#endif  // KSPMV_HAVE_CUDA

}  // namespace
}  // namespace kspmv::test
