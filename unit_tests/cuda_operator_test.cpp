// The CUDA Operator's error paths (its results are checked by conformance_test.cpp). GPU tests
// skip without a device.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <memory>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "kspmv/core/error.hpp"
#include "kspmv/operator.hpp"
#include "testing/reference.hpp"
#include "testing/test_matrices.hpp"
#ifdef KSPMV_HAVE_CUDA
#include <cuda_runtime_api.h>

#include "backends/cuda/csr_vector.hpp"
#include "backends/cuda/cuda_operator.hpp"
#include "backends/cuda/memory.hpp"
#include "backends/cuda/upload_thread.hpp"
#endif

namespace kspmv::test {
namespace {

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
  // -1 is kAllDevices; a negative id is refused on every backend and build, before CUDA is asked.
  EXPECT_THROW(Operator<double>(a, cuda_options({-2})), InvalidArgument);
#ifdef KSPMV_HAVE_CUDA
  EXPECT_THROW(Operator<double>(a, cuda_options({9999})), InvalidArgument);
#else
  EXPECT_THROW(Operator<double>(a, cuda_options({9999})), UnsupportedError);
#endif
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

// One vector of host memory applied after a block of three on the same operator: the staging
// buffers have grown to three vectors, and the copies must still move one. (They moved the
// buffers' size: a y of one vector received three, a heap overrun that glibc caught in the
// complex conformance test.) x and y sit inside larger arrays whose other entries must stay.
TEST(CudaOperatorHostVectors, OneVectorAfterABlockMovesOneVector) {
  if (cuda_device_count() == 0) GTEST_SKIP() << "no CUDA device";
  const auto a = random_matrix<double>(500, 400, 6, 3);
  Operator<double> op(a, cuda_options({0}));
  constexpr int k = 3;
  const std::size_t m = a.nrows, n = a.ncols;
  Kokkos::View<double**, Kokkos::LayoutLeft, Kokkos::HostSpace> xb("x", n, k), yb("y", m, k);
  const auto xs = random_vector<double>(n * k, 4);
  std::copy(xs.begin(), xs.end(), xb.data());
  op.apply(1.0, xb, 0.0, yb);
  const auto x = random_vector<double>(n, 5);
  std::vector<double> xbuf(3 * n, 0.0), ybuf(3 * m, 7.0);
  std::copy(x.begin(), x.end(), xbuf.begin() + n);
  const auto y0 = nan_vector<double>(m);
  std::copy(y0.begin(), y0.end(), ybuf.begin() + m);
  op.apply(2.0, xbuf.data() + n, 0.0, ybuf.data() + m);
  auto ref = y0;
  reference::spmv(2.0, a, x.data(), 0.0, ref.data());
  const std::vector<double> y(ybuf.begin() + m, ybuf.begin() + 2 * m);
  EXPECT_LE(spmv_error(y, ref, 2.0, a, x.data(), 0.0, y0), reference::tolerance<double>());
  for (std::size_t i = 0; i < m; ++i) {
    ASSERT_EQ(ybuf[i], 7.0) << "before y, entry " << i;
    ASSERT_EQ(ybuf[2 * m + i], 7.0) << "after y, entry " << i;
  }
}

#ifdef KSPMV_HAVE_CUDA
// A failed KSPMV_CUDA_CHECK names the call, the file and line it was written at, and the error (no
// GPU needed).
TEST(CudaErrors, CheckNamesTheCallItsFileAndLine) {
  const int line = __LINE__ + 2;
  try {
    KSPMV_CUDA_CHECK(cudaErrorInvalidValue);
    FAIL() << "no CudaError";
  } catch (const CudaError& e) {
    const std::string what = e.what();
    const std::string where = "cuda_operator_test.cpp:" + std::to_string(line) + ": ";
    EXPECT_NE(what.find(where + "cudaErrorInvalidValue failed with code"), std::string::npos)
        << what;
    EXPECT_EQ(e.code(), static_cast<int>(cudaErrorInvalidValue));
  }
}

// The memory pool (memory.hpp): buffers under the bytes the pool keeps and over them (those from
// cudaMalloc) hold what is written to them, also when taken again after a free.
TEST(CudaMemory, PooledBuffersHoldTheirData) {
  if (cuda_device_count() == 0) GTEST_SKIP() << "no CUDA device";
  cuda::DeviceGuard guard(0);
  const cuda::Stream s;
  for (const std::size_t bytes : {std::size_t{1} << 20, cuda::kPoolKeepBytes + 256})
    for (int round = 0; round < 2; ++round) {
      const cuda::DeviceBuffer<unsigned char> b(bytes, cuda::kPooled, s.get());
      ASSERT_NE(b.data(), nullptr);
      const int value = 0x5a + round;
      KSPMV_CUDA_CHECK(cudaMemsetAsync(b.data(), value, bytes, s.get()));
      std::vector<unsigned char> back(bytes);
      KSPMV_CUDA_CHECK(
          cudaMemcpyAsync(back.data(), b.data(), bytes, cudaMemcpyDeviceToHost, s.get()));
      s.synchronize();
      EXPECT_EQ(std::count(back.begin(), back.end(), value), static_cast<std::ptrdiff_t>(bytes))
          << bytes << " bytes, round " << round;
    }
}

// Where kernels of a device may load from: its own memory and its pool's, a peer's where access
// was granted (the multi-device Halo then reads the peer's entries itself), never host memory.
TEST(CudaMemory, DeviceCanReadItsOwnMemoryAndPeersThatGrantedAccess) {
  if (cuda_device_count() == 0) GTEST_SKIP() << "no CUDA device";
  cuda::DeviceGuard guard(0);
  const cuda::Stream s;
  const cuda::DeviceBuffer<double> plain(16), pooled(16, cuda::kPooled, s.get());
  EXPECT_TRUE(cuda::device_can_read(plain.data(), 0));
  EXPECT_TRUE(cuda::device_can_read(pooled.data(), 0));
  const std::vector<double> host(16);
  EXPECT_FALSE(cuda::device_can_read(host.data(), 0));
  EXPECT_FALSE(cuda::device_can_read(nullptr, 0));
  if (cuda_device_count() < 2) return;
  int can = 0;
  KSPMV_CUDA_CHECK(cudaDeviceCanAccessPeer(&can, 1, 0));
  cuda::enable_peer_access({0, 1});  // where possible; once a process
  EXPECT_EQ(cuda::device_can_read(plain.data(), 1), can != 0);
  EXPECT_EQ(cuda::device_can_read(pooled.data(), 1), can != 0);  // kspmv's pool grants it
}

// The upload thread (upload_thread.hpp): a stream made to wait for copy k, or the host after
// landed(k), sees its bytes, copies of several staging slots each, more slots' worth than the
// staging holds; the copies from a gate on wait until it is opened; a copy that fails (one without
// a destination, refused before any CUDA call) is reported by then and finish, not lost, and an
// upload let go early stops and joins.
TEST(CudaUploadThread, CopiesLandInOrderBehindTheGateAndErrorsReachTheCaller) {
  if (cuda_device_count() == 0) GTEST_SKIP() << "no CUDA device";
  cuda::DeviceGuard guard(0);
  const std::size_t n = cuda::UploadThread::kSlotBytes * 3 / 2 / sizeof(double) + 5;
  std::vector<std::vector<double>> host;
  std::vector<cuda::DeviceBuffer<double>> dev;
  std::vector<cuda::UploadThread::Copy> copies;
  for (int k = 0; k < cuda::UploadThread::kSlots + 1; ++k) {
    host.push_back(random_vector<double>(n - k, 40 + k));
    dev.emplace_back(n);
    copies.push_back({0, dev.back().data(), host.back().data(), (n - k) * sizeof(double)});
  }
  const auto back_of = [&](std::size_t k, cudaStream_t s) {
    std::vector<double> back(n - k, -1);
    KSPMV_CUDA_CHECK(cudaMemcpyAsync(back.data(), dev[k].data(), back.size() * sizeof(double),
                                     cudaMemcpyDeviceToHost, s));
    KSPMV_CUDA_CHECK(cudaStreamSynchronize(s));
    return back;
  };
  {
    cuda::UploadThread upload(copies);
    const cuda::Stream s;
    for (std::size_t k = 0; k < copies.size(); ++k) {
      if (k % 2 == 0) {
        EXPECT_GE(upload.then(k, s.get()), 0.0);
      } else {
        EXPECT_GE(upload.landed(k), 0.0);
      }
      EXPECT_EQ(back_of(k, s.get()), host[k]) << "copy " << k;
    }
    EXPECT_GE(upload.finish(), 0.0);
    EXPECT_GT(upload.total_ms(), 0.0);
    for (std::size_t k = 1; k <= copies.size(); ++k)
      EXPECT_GE(upload.queued_ms(k), upload.queued_ms(k - 1));
  }
  {  // the copies from the gate on wait for open()
    for (auto& d : dev) KSPMV_CUDA_CHECK(cudaMemset(d.data(), 0xff, n * sizeof(double)));
    cuda::UploadThread gated(copies, 2);
    const cuda::Stream s;
    EXPECT_GE(gated.landed(1), 0.0);
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    EXPECT_NE(back_of(2, s.get()), host[2]);
    gated.open();
    EXPECT_GE(gated.landed(2), 0.0);
    EXPECT_EQ(back_of(2, s.get()), host[2]);
    EXPECT_GE(gated.finish(), 0.0);
    EXPECT_EQ(back_of(copies.size() - 1, s.get()), host.back());
    const cuda::UploadThread dropped(copies, 1);  // never opened: joins all the same
  }
  copies.insert(copies.begin() + 1, {0, nullptr, host[0].data(), n * sizeof(double)});  // fails
  cuda::UploadThread failing(copies);
  const cuda::Stream s;
  EXPECT_NO_THROW(failing.then(0, s.get()));
  EXPECT_THROW(failing.then(1, s.get()), InvalidArgument);
  EXPECT_THROW(failing.finish(), InvalidArgument);
  { const cuda::UploadThread dropped(copies); }  // joins without waiting for the caller
}
#endif

}  // namespace
}  // namespace kspmv::test
