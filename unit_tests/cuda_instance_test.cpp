// Set-up and value refreshes on the caller's stream (the Operator's instance and stream
// constructors, update_values on a stream): the set-up is enqueued behind the caller's work
// without waiting for it, two operators built, applied and refreshed on two streams at once give
// the oracle's results, and applies on another stream come after the set-up and the refresh.
// Every y poisoned first. GPU tests skip without a device.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "kspmv/gen/generators.hpp"
#include "kspmv/operator.hpp"
#include "testing/reference.hpp"
#include "testing/test_matrices.hpp"
#ifdef KSPMV_HAVE_CUDA
#include <cuda_runtime_api.h>

#include "backends/cuda/memory.hpp"
#endif

namespace kspmv::test {
namespace {

#ifdef KSPMV_HAVE_CUDA

class CudaInstance : public testing::Test {
 protected:
  void SetUp() override {
    if (cuda_device_count() == 0) GTEST_SKIP() << "no CUDA device";
  }
};

Options cuda_options(Kernel kernel) {
  Options o;
  o.backend = Backend::Cuda;
  o.kernel = kernel;
  return o;
}

// `a` with every value v replaced by 1 - 2v: the same pattern, new values.
template <class S>
CsrMatrix<S> revalued(const CsrMatrix<S>& a) {
  CsrMatrix<S> b = a;
  b.values = HostView<S>("values", a.values.extent(0));
  for (std::size_t k = 0; k < a.values.extent(0); ++k) b.values(k) = S(1) - S(2) * a.values(k);
  return b;
}

// One operator's vectors on the device and what its applies must give.
struct Case {
  CsrMatrix<double> a, b;  // the matrix and its new values
  std::vector<double> x, y0;
  cuda::DeviceBuffer<double> dx, dy, dvals;
  Case(CsrMatrix<double> m, std::uint64_t seed)
      : a(std::move(m)),
        b(revalued(a)),
        x(random_vector<double>(a.ncols, seed)),
        y0(nan_vector<double>(a.nrows)),
        dx(x.size()),
        dy(y0.size()),
        dvals(b.values.extent(0)) {
    dx.upload(x.data());
    dy.upload(y0.data());
    dvals.upload(b.values.data());
  }
  // y (read back after `stream`) against y = 2*M*x of the matrix m.
  void expect(const CsrMatrix<double>& m, cudaStream_t stream, const std::string& what) {
    KSPMV_CUDA_CHECK(cudaStreamSynchronize(stream));
    auto ref = y0, y = y0;
    reference::spmv(2.0, m, x.data(), 0.0, ref.data());
    dy.download(y.data());
    EXPECT_LE(spmv_error(y, ref, 2.0, m, x.data(), 0.0, y0), reference::tolerance<double>())
        << what;
    dy.upload(y0.data());  // poisoned for the next apply
  }
};

// Holds `stream` at a host function until open() (or 30 s, so that a set-up that waits for the
// stream fails the test instead of hanging it).
class Gate {
 public:
  explicit Gate(cudaStream_t stream) {
    KSPMV_CUDA_CHECK(cudaLaunchHostFunc(stream, &Gate::hold, this));
  }
  ~Gate() { open(); }
  void open() { open_ = true; }

 private:
  static void hold(void* self) {
    const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    auto* g = static_cast<Gate*>(self);
    while (!g->open_ && std::chrono::steady_clock::now() < until)
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  std::atomic<bool> open_{false};
};

// The set-up of the kernels with a stream factory, from a host matrix and from device arrays,
// goes behind the caller's work on its stream: the constructor returns while that work (held
// by a gate) has not run, and the first apply there follows the set-up. The process's first
// cuSPARSE handle is made before the gate: cusparseCreate waits for the whole device (CUDA
// 13.0 on an H200: 3.0 s behind a stream held 3 s, later handles 0 s), and kspmv keeps its
// handles for reuse, so only a process's first cuSPARSE operator on a device waits (README).
TEST_F(CudaInstance, SetUpIsEnqueuedBehindTheCallersWork) {
  {
    Options o = cuda_options(Kernel::Cusparse);
    Operator<double> first(gen::laplace2d<double>(10, 10), o);
  }
  for (const Kernel kernel : {Kernel::CsrVector, Kernel::Cusparse}) {
    SCOPED_TRACE(to_string(kernel));
    Case c(gen::laplace2d<double>(60, 60), 3);
    const cuda::Stream stream;
    Gate gate(stream.get());
    const auto t0 = std::chrono::steady_clock::now();
    Operator<double> op(stream.get(), c.a, cuda_options(kernel));
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    const bool queued = cudaStreamQuery(stream.get()) == cudaErrorNotReady;
    op.apply(stream.get(), 2.0, c.dx.data(), 0.0, c.dy.data());
    gate.open();
    EXPECT_TRUE(queued) << "the stream ran dry while its gate was closed";
    EXPECT_LT(s, 10.0) << "the constructor waited for the caller's stream";
    c.expect(c.a, stream.get(), "first apply behind the set-up");
  }
}

// Device arrays on a stream: converted and profiled there, applied on another stream at once.
TEST_F(CudaInstance, DeviceArraysSetUpOnAStream) {
  Case c(gen::laplace2d<double>(80, 80), 4);
  const CsrMatrix<double>& a = c.a;
  cuda::DeviceBuffer<Offset> row_ptr(a.nrows + std::size_t(1));  // 64-bit: narrowed there
  cuda::DeviceBuffer<Ordinal> col(a.nnz());
  cuda::DeviceBuffer<double> val(a.nnz());
  row_ptr.upload(a.row_ptr.data());
  col.upload(a.col_idx.data());
  val.upload(a.values.data());
  const DeviceCsrArrays<double> arrays{row_ptr.data(), 8,       true,    col.data(),          4,
                                       val.data(),     a.nrows, a.ncols, std::size_t(a.nnz())};
  const cuda::Stream setup, other;
  for (const Kernel kernel : {Kernel::Auto, Kernel::CsrVector, Kernel::Cusparse}) {
    SCOPED_TRACE(to_string(kernel));
    Operator<double> op(setup.get(), arrays, cuda_options(kernel));
    op.apply(other.get(), 2.0, c.dx.data(), 0.0, c.dy.data());
    c.expect(a, other.get(), "apply on another stream after the set-up");
  }
}

// Two operators built on two streams, applied there at once, refreshed with device values on
// their streams without waiting, then applied on each other's stream: every result the
// oracle's, for every kernel of the CUDA backend.
TEST_F(CudaInstance, TwoOperatorsOnTwoStreamsSetUpApplyAndRefreshAtOnce) {
  for (const KernelInfo& row : kernels_of(Backend::Cuda)) {
    SCOPED_TRACE(to_string(row.kernel));
    Case one(random_matrix<double>(5000, 4000, 9, 11), 12);
    Case two(gen::laplace2d<double>(90, 90), 13);
    const cuda::Stream sa, sb;
    Operator<double> opa(sa.get(), one.a, cuda_options(row.kernel));
    Operator<double> opb(sb.get(), two.a, cuda_options(row.kernel));
    opa.apply(sa.get(), 2.0, one.dx.data(), 0.0, one.dy.data());
    opb.apply(sb.get(), 2.0, two.dx.data(), 0.0, two.dy.data());
    one.expect(one.a, sa.get(), "first apply of one");
    two.expect(two.a, sb.get(), "first apply of two");
    opa.update_values(sa.get(), one.dvals.data(), one.dvals.size(), true);
    opb.update_values(sb.get(), two.b.values.data(), two.b.values.extent(0), false);
    opa.apply(sb.get(), 2.0, one.dx.data(), 0.0, one.dy.data());  // after the refresh on sa
    opb.apply(sa.get(), 2.0, two.dx.data(), 0.0, two.dy.data());
    one.expect(one.b, sb.get(), "one refreshed on its stream, applied on the other");
    two.expect(two.b, sa.get(), "two refreshed from host values, applied on the other stream");
  }
}

#endif  // KSPMV_HAVE_CUDA

}  // namespace
}  // namespace kspmv::test
