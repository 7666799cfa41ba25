// The conformance test: every kernel of the registry (and Auto on each backend, with and without
// autotuning on CUDA) through kspmv::Operator, on the edge-case zoo and two larger matrices, for
// several (alpha, beta) with NaN in y when beta == 0, in float and double, with the vectors in host
// memory (Views and pointers) and, on CUDA, in device memory (synchronous pointers, and
// asynchronous on a stream of the caller), on kokkos-default in Views of Kokkos' default memory
// space applied on an instance; the transpose, blocks of k vectors and, on CUDA,
// matrices given in device arrays as well; each result against the long-double oracle with the
// output poisoned first. CUDA cases skip without a GPU. A new kernel is tested
// here as soon as its registry row exists. The sanitizer run of the GPU suite selects the small
// cases with --gtest_filter='*Zoo*'. Complex values on every row that takes them (and Auto on its
// backend), modes N, T, C and H, on CUDA with device vectors too; the other rows must refuse them.
#include <gtest/gtest.h>

#include <string>
#include <tuple>
#include <vector>

#include "kspmv/core/error.hpp"
#include "kspmv/formats/convert.hpp"
#include "kspmv/mixed_operator.hpp"
#include "kspmv/operator.hpp"
#include "kspmv/spmv.hpp"
#include "spmv_check.hpp"
#include "testing/reference.hpp"
#include "testing/test_matrices.hpp"
#ifdef KSPMV_HAVE_CUDA
#include "backends/cuda/memory.hpp"
#endif

namespace kspmv::test {
namespace {

struct Case {
  Backend backend;
  Kernel kernel;
  bool autotune;
};

// Auto on each backend built in (and Auto autotuned on CUDA), then every registry row.
std::vector<Case> cases() {
  std::vector<Case> all;
  for (const Backend b : kBackends) {
    if (!supports(b, Kernel::Auto)) continue;
    all.push_back({b, Kernel::Auto, false});
    if (b == Backend::Cuda) all.push_back({b, Kernel::Auto, true});
  }
  for (const KernelInfo& row : kernel_registry()) all.push_back({row.backend, row.kernel, false});
  return all;
}

std::string case_name(const testing::TestParamInfo<Case>& info) {
  std::string name = std::string(to_string(info.param.backend)) + "_" +
                     to_string(info.param.kernel) + (info.param.autotune ? "_autotune" : "");
  for (char& c : name)
    if (c == '-') c = '_';
  return name;
}

// Where x and y live during apply.
enum class Vectors { HostViews, HostPointers, DevicePointers, DeviceStream, SpaceViews };

using Space = Kokkos::DefaultExecutionSpace;
// k vectors of n entries in Kokkos' default memory space, a copy of `v`.
template <class S>
Kokkos::View<S**, Kokkos::LayoutLeft, Space::memory_space> space_copy(const std::vector<S>& v,
                                                                      std::size_t n, int k) {
  Kokkos::View<S**, Kokkos::LayoutLeft, Space::memory_space> d("d", n, k);
  Kokkos::deep_copy(d,
                    Kokkos::View<const S**, Kokkos::LayoutLeft, HostMemorySpace>(v.data(), n, k));
  return d;
}
template <class S, class D>
void copy_back(std::vector<S>& v, const D& d) {
  Kokkos::deep_copy(
      Kokkos::View<S**, Kokkos::LayoutLeft, HostMemorySpace>(v.data(), d.extent(0), d.extent(1)),
      d);
}

// (alpha, beta): beta == 0 runs on a NaN-poisoned y, beta != 0 on a random y.
const std::vector<std::pair<double, double>> kScalars = {
    {1.5, 0.0}, {-0.75, 2.0}, {0.0, 0.5}, {0.0, 0.0}, {1.0, 1.0}};

template <class S>
void apply(Operator<S>& op, S alpha, const std::vector<S>& x, S beta, std::vector<S>& y,
           Vectors where) {
  if (where == Vectors::HostPointers) return op.apply(alpha, x.data(), beta, y.data());
  if (where == Vectors::HostViews) {
    const HostView<const S> xv(x.data(), x.size());
    const HostView<S> yv(y.data(), y.size());
    return op.apply(alpha, xv, beta, yv);
  }
  if (where == Vectors::SpaceViews) {  // rank 1, on an instance
    const auto dx = space_copy(x, x.size(), 1);
    const auto dy = space_copy(y, y.size(), 1);
    const Space exec;
    op.apply(exec, alpha, Kokkos::subview(dx, Kokkos::ALL, 0), beta,
             Kokkos::subview(dy, Kokkos::ALL, 0));
    exec.fence();
    return copy_back(y, dy);
  }
#ifdef KSPMV_HAVE_CUDA
  cuda::DeviceBuffer<S> dx(x.size()), dy(y.size());
  dx.upload(x.data());
  dy.upload(y.data());
  if (where == Vectors::DevicePointers) {
    op.apply(alpha, dx.data(), beta, dy.data(), true);
  } else {
    const cuda::Stream stream;
    op.apply(stream.get(), alpha, dx.data(), beta, dy.data());
    stream.synchronize();
  }
  dy.download(y.data());
#endif
}

// k vectors at once: a rank-2 LayoutLeft View with a padded leading dimension on the host, k
// vectors one after the other in device memory on CUDA, a rank-2 LayoutLeft View in Kokkos'
// default memory space on kokkos-default.
template <class S>
void apply_block(Operator<S>& op, S alpha, const std::vector<S>& x, std::size_t n, S beta,
                 std::vector<S>& y, std::size_t m, int k, Mode mode, bool device) {
  if (device && op.options().backend == Backend::KokkosDefault) {
    const auto dx = space_copy(x, n, k);
    const auto dy = space_copy(y, m, k);
    op.apply(Space(), alpha, dx, beta, dy, mode);
    Space().fence();
    return copy_back(y, dy);
  }
  if (!device) {
    using Block = Kokkos::View<S**, Kokkos::LayoutStride, HostMemorySpace>;
    const std::size_t ldx = n + 3, ldy = m + 5;
    std::vector<S> xs(ldx * k), ys(ldy * k);
    for (int c = 0; c < k; ++c) {
      std::copy(x.begin() + c * n, x.begin() + (c + 1) * n, xs.begin() + c * ldx);
      std::copy(y.begin() + c * m, y.begin() + (c + 1) * m, ys.begin() + c * ldy);
    }
    const Block xv(xs.data(), Kokkos::LayoutStride(n, 1, std::size_t(k), ldx));
    const Block yv(ys.data(), Kokkos::LayoutStride(m, 1, std::size_t(k), ldy));
    op.apply(alpha, xv, beta, yv, mode);
    for (int c = 0; c < k; ++c)
      std::copy(ys.begin() + c * ldy, ys.begin() + c * ldy + m, y.begin() + c * m);
    return;
  }
#ifdef KSPMV_HAVE_CUDA
  cuda::DeviceBuffer<S> dx(x.size()), dy(y.size());
  dx.upload(x.data());
  dy.upload(y.data());
  const cuda::Stream stream;
  op.apply(stream.get(), alpha, dx.data(), beta, dy.data(), k, mode);
  stream.synchronize();
  dy.download(y.data());
#endif
}

// y = alpha*A*x + beta*y on one vector where `where` says, fresh random x and y poisoned where
// beta == 0, against the oracle.
template <class S>
void check_apply(Operator<S>& op, const CsrMatrix<S>& a, S alpha, S beta, Vectors where,
                 std::uint64_t seed, const std::string& what) {
  const auto x = random_vector<S>(a.ncols, seed);
  const auto y0 = beta == S(0) ? nan_vector<S>(a.nrows) : random_vector<S>(a.nrows, seed + 1000);
  auto y = y0, ref = y0;
  reference::spmv(alpha, a, x.data(), beta, ref.data());
  apply(op, alpha, x, beta, y, where);
  EXPECT_LE(spmv_error(y, ref, alpha, a, x.data(), beta, y0), reference::tolerance<S>())
      << what << " vectors " << static_cast<int>(where) << " kernel " << to_string(op.kernel());
}

// y = alpha*op(A)*x + beta*y on k vectors through apply_block (b: op(A)), fresh random x and y
// poisoned where beta == 0, each column against the oracle on b.
template <class S>
void check_block(Operator<S>& op, const CsrMatrix<S>& b, S alpha, S beta, int k, Mode mode,
                 bool device, std::uint64_t seed, const std::string& what) {
  const auto m = static_cast<std::size_t>(b.nrows), n = static_cast<std::size_t>(b.ncols);
  const auto x = random_vector<S>(n * k, seed);
  const auto y0 = beta == S(0) ? nan_vector<S>(m * k) : random_vector<S>(m * k, seed + 1000);
  auto y = y0;
  apply_block(op, alpha, x, n, beta, y, m, k, mode, device);
  for (int c = 0; c < k; ++c) {
    const std::vector<S> yc(y.begin() + c * m, y.begin() + (c + 1) * m);
    const std::vector<S> y0c(y0.begin() + c * m, y0.begin() + (c + 1) * m);
    auto ref = y0c;
    reference::spmv(alpha, b, x.data() + c * n, beta, ref.data());
    EXPECT_LE(spmv_error(yc, ref, alpha, b, x.data() + c * n, beta, y0c), reference::tolerance<S>())
        << what << " " << to_string(mode) << " k=" << k << " column " << c << " kernel "
        << to_string(op.kernel());
  }
}

class Conformance : public testing::TestWithParam<Case> {
 protected:
  void SetUp() override {
    if (GetParam().backend == Backend::Cuda && cuda_device_count() == 0)
      GTEST_SKIP() << "no CUDA device";
  }

  std::vector<Vectors> vector_places() const {
    if (GetParam().backend == Backend::Cuda)
      return {Vectors::HostPointers, Vectors::DevicePointers, Vectors::DeviceStream};
    if (GetParam().backend == Backend::KokkosDefault)
      return {Vectors::HostViews, Vectors::HostPointers, Vectors::SpaceViews};
    return {Vectors::HostViews, Vectors::HostPointers};
  }

  // Whether the backend takes vectors and values in memory other than the host's (CUDA device
  // memory; Kokkos' default memory space, the host's too with a host-only Kokkos).
  bool other_memory() const { return GetParam().backend != Backend::Host; }

  // Every (alpha, beta) on fresh random x, for each place of the vectors; repeated past the
  // autotuning phase when autotuning.
  template <class S>
  void check(const CsrMatrix<S>& a, const std::string& what) {
    Options o;
    o.backend = GetParam().backend;
    o.kernel = GetParam().kernel;
    o.autotune = GetParam().autotune;
    Operator<S> op(a, o);
    const int rounds = o.autotune ? 4 : 1;
    std::uint64_t seed = 11;
    for (int r = 0; r < rounds; ++r)
      for (const Vectors where : vector_places())
        for (const auto& [alpha_d, beta_d] : kScalars) {
          check_apply(
              op, a, static_cast<S>(alpha_d), static_cast<S>(beta_d), where, ++seed,
              what + " alpha=" + std::to_string(alpha_d) + " beta=" + std::to_string(beta_d));
        }
  }

  // y = alpha*op(A)*x + beta*y on k vectors (k == 1 through a rank-2 View too), each column
  // against the oracle; Mode::Transpose against the oracle on the transposed matrix.
  template <class S>
  void check_modes(const CsrMatrix<S>& a, const std::string& what) {
    Options o;
    o.backend = GetParam().backend;
    o.kernel = GetParam().kernel;
    o.autotune = GetParam().autotune;
    Operator<S> op(a, o);
    const CsrMatrix<S> at = transpose(a);
    std::uint64_t seed = 101;
    for (const Mode mode : {Mode::NoTranspose, Mode::Transpose})
      for (const int k : {1, 3, 9})
        for (const bool device : {false, true}) {
          if (device && !other_memory()) continue;
          const S alpha = S(1.25), beta = k == 3 ? S(0) : S(-0.5);
          check_block(op, mode == Mode::Transpose ? at : a, alpha, beta, k, mode, device, ++seed,
                      what + (device ? " device" : " host"));
        }
  }
};

TEST_P(Conformance, ZooMatchesReference) {
  for (const auto& [name, a] : zoo<float>()) check(a, "float " + name);
  for (const auto& [name, a] : zoo<double>()) check(a, "double " + name);
}

// One row of 2e5 non-zeros (CUDA's long-row path), rows of 3000 (between the default thresholds)
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

TEST_P(Conformance, ZooTransposeAndBlocksMatchReference) {
  for (const auto& [name, a] : zoo<float>()) check_modes(a, "float " + name);
  for (const auto& [name, a] : zoo<double>()) check_modes(a, "double " + name);
}

// New values on the same pattern (from host memory, and from device memory on CUDA): the same
// kernel runs, on the new values.
TEST_P(Conformance, ZooUpdateValuesKeepsTheKernelAndMatchesReference) {
  for (const auto& [name, a] : zoo<double>()) {
    Options o;
    o.backend = GetParam().backend;
    o.kernel = GetParam().kernel;
    o.autotune = GetParam().autotune;
    Operator<double> op(a, o);
    const auto x = random_vector<double>(a.ncols, 31);
    std::vector<double> y(a.nrows);
    do {  // until the autotuner has decided
      op.apply(1.0, x.data(), 0.0, y.data());
    } while (op.timings().tuning);
    const Kernel kernel = op.kernel();
    for (const bool device : {false, true}) {
      if (device && !other_memory()) continue;
      CsrMatrix<double> b = a;  // the same pattern, new values
      b.values = make_host_view<double>("values", a.nnz());
      const auto v = random_vector<double>(a.nnz(), device ? 33 : 32);
      std::copy(v.begin(), v.end(), b.values.data());
      if (device && o.backend == Backend::KokkosDefault)
        op.update_values(Kokkos::subview(space_copy(v, v.size(), 1), Kokkos::ALL, 0));
#ifdef KSPMV_HAVE_CUDA
      if (device && o.backend == Backend::Cuda) {
        cuda::DeviceBuffer<double> dv(v.size());
        dv.upload(v.data());
        op.update_values(dv.data(), v.size(), true);
      }
#endif
      if (!device) op.update_values(HostView<const double>(v.data(), v.size()));
      EXPECT_EQ(op.kernel(), kernel) << name;
      for (const Vectors where : vector_places()) {
        auto y0 = nan_vector<double>(a.nrows), yk = y0, ref = y0;
        reference::spmv(1.5, b, x.data(), 0.0, ref.data());
        apply(op, 1.5, x, 0.0, yk, where);
        EXPECT_LE(spmv_error(yk, ref, 1.5, b, x.data(), 0.0, y0), reference::tolerance<double>())
            << name << (device ? " device values" : " host values") << " vectors "
            << static_cast<int>(where) << " kernel " << to_string(op.kernel());
      }
      // The transpose is rebuilt from the new values.
      const auto bt = transpose(b);
      std::vector<double> xt = random_vector<double>(a.nrows, 34), yt(a.ncols), reft(a.ncols);
      reference::spmv(1.0, bt, xt.data(), 0.0, reft.data());
      apply_block(op, 1.0, xt, a.nrows, 0.0, yt, a.ncols, 1, Mode::Transpose, false);
      EXPECT_LE(reference::rel_l2_error(yt.data(), reft.data(), yt.size()),
                reference::tolerance<double>())
          << name << " transpose after update_values";
    }
  }
}

// Whether case c takes complex values: its row says so (Auto: a row of its backend does).
bool takes_complex(const Case& c) {
  for (const KernelInfo& row : kernel_registry())
    if (row.backend == c.backend && row.complex_values &&
        (c.kernel == Kernel::Auto || row.kernel == c.kernel))
      return true;
  return false;
}

// Complex alpha and beta: beta == 0 runs on a NaN-poisoned y.
template <class Z>
std::vector<std::pair<Z, Z>> complex_scalars() {
  return {{Z(1.5, -0.5), Z(0)}, {Z(-0.75, 0.25), Z(2, 1)}, {Z(0), Z(0.5, 0.5)}};
}

// Complex values on CUDA device vectors: A and A^T on k = 1 and 3 vectors, and A on one vector
// through device pointers applied synchronously and on a stream of the caller's; each column
// against the oracle with y poisoned where beta == 0.
template <class Z>
void check_complex_device(Operator<Z>& op, const CsrMatrix<Z>& a, const std::string& what) {
  const CsrMatrix<Z> at = transpose(a);
  std::uint64_t seed = 300;
  for (const auto& [alpha, beta] : complex_scalars<Z>()) {
    for (const Vectors where : {Vectors::DevicePointers, Vectors::DeviceStream})
      check_apply(op, a, alpha, beta, where, ++seed, what);
    for (const Mode mode : {Mode::NoTranspose, Mode::Transpose})
      for (const int k : {1, 3})
        check_block(op, mode == Mode::Transpose ? at : a, alpha, beta, k, mode, true, ++seed,
                    what + " device");
  }
}

// Complex values, complex alpha and beta: modes N and T through the Operator, C and H through
// kspmv::spmv on it, rank-1 and rank-2 host Views, each against the oracle on op(A) with y
// poisoned where beta == 0, and on CUDA device vectors too; a case that does not take them
// refuses them (UnsupportedError).
template <class Z>
void check_complex(const Case& c, const CsrMatrix<Z>& a, const std::string& what) {
  Options o;
  o.backend = c.backend;
  o.kernel = c.kernel;
  o.autotune = c.autotune;
  if (!takes_complex(c)) {
    EXPECT_THROW(Operator<Z>(a, o), UnsupportedError) << what;
    return;
  }
  Operator<Z> op(a, o);
  SpmvHandle<Z> handle;
  std::uint64_t seed = 200;
  for (const std::string mode : {"N", "T", "C", "H"})
    for (const auto& scalars : complex_scalars<Z>())
      for (const int k : {0, 3}) {
        const Z alpha = scalars.first, beta = scalars.second;
        const auto call = [&](auto x, auto y) {
          if (mode == "N" || mode == "T")
            op.apply(alpha, x, beta, y, mode == "T" ? Mode::Transpose : Mode::NoTranspose);
          else
            spmv(HostExecSpace(), handle, mode.c_str(), alpha, op, x, beta, y);
        };
        EXPECT_LE((spmv_call_error<Kokkos::LayoutLeft, HostMemorySpace>(a, mode, k, alpha, beta,
                                                                        ++seed, call)),
                  reference::tolerance<Z>())
            << what << " mode " << mode << " k=" << k << " kernel " << to_string(op.kernel());
      }
  if (c.backend == Backend::Cuda) check_complex_device(op, a, what);
}

TEST_P(Conformance, ZooComplexMatchesReference) {
  using Zd = Kokkos::complex<double>;
  using Zf = Kokkos::complex<float>;
  for (const auto& [name, a] : zoo<double>())
    check_complex(GetParam(), gen::with_imaginary_parts<Zd>(a, 5), "complex<double> " + name);
  for (const auto& [name, a] : zoo<float>())
    check_complex(GetParam(), gen::with_imaginary_parts<Zf>(a, 6), "complex<float> " + name);
}

TEST_P(Conformance, LongRowMatchesReference) {
  check(long_row_matrix<float>(), "float long_row");
  check(long_row_matrix<double>(), "double long_row");
}

TEST_P(Conformance, RandomLargeMatchesReference) {
  check(random_matrix<float>(100000, 100000, 8, 21), "float random_1e5");
  check(random_matrix<double>(100000, 100000, 8, 22), "double random_1e5");
}

TEST_P(Conformance, LongRowComplexMatchesReference) {
  const auto a = long_row_matrix<double>();
  check_complex(GetParam(), gen::with_imaginary_parts<Kokkos::complex<double>>(a, 7),
                "complex<double> long_row");
}

TEST_P(Conformance, ReportsItsKernelAndTimings) {
  const auto a = random_matrix<double>(500, 400, 6, 9);
  Options o;
  o.backend = GetParam().backend;
  o.kernel = GetParam().kernel;
  Operator<double> op(a, o);
  if (o.kernel != Kernel::Auto) {
    EXPECT_EQ(op.kernel(), o.kernel);
  } else {
    EXPECT_NE(find_kernel(o.backend, op.kernel()), nullptr) << to_string(op.kernel());
  }
  EXPECT_GE(op.timings().preprocess_ms, 0.0);
  const auto x = random_vector<double>(a.ncols, 1);
  auto y = nan_vector<double>(a.nrows);
  op.apply(1.0, x.data(), 0.0, y.data());
  EXPECT_GT(op.timings().total_ms, 0.0);
}

INSTANTIATE_TEST_SUITE_P(Registry, Conformance, testing::ValuesIn(cases()), case_name);

// Mixed precision (kspmv/mixed_operator.hpp): a float matrix on double device vectors, on a
// stream of the caller's, against the oracle on the same matrix in double. Its float values are
// exact in double and cuSPARSE computes in double, so double's tolerance holds; fresh random x,
// y poisoned where beta == 0.
TEST(MixedPrecision, FloatMatrixOnDoubleVectorsMatchesReference) {
  if (cuda_device_count() == 0) GTEST_SKIP() << "no CUDA device";
#ifdef KSPMV_HAVE_CUDA
  auto matrices = zoo<float>();
  matrices.emplace_back("long_row", long_row_matrix<float>());
  matrices.emplace_back("random_1e5", random_matrix<float>(100000, 100000, 8, 23));
  Options o;
  o.backend = Backend::Cuda;
  EXPECT_EQ(MixedOperator(matrices.front().second, o).kernel(), Kernel::Cusparse);  // Auto's
  std::uint64_t seed = 400;
  for (const Kernel kernel : {Kernel::Cusparse, Kernel::CusparseAlg2}) {
    o.kernel = kernel;
    for (const auto& [name, a] : matrices) {
      MixedOperator op(a, o);
      const CsrMatrix<double> ad = convert_scalar<double>(a);
      for (const auto& [alpha, beta] : kScalars) {
        const auto x = random_vector<double>(a.ncols, ++seed);
        const auto y0 =
            beta == 0 ? nan_vector<double>(a.nrows) : random_vector<double>(a.nrows, ++seed);
        auto y = y0, ref = y0;
        reference::spmv(alpha, ad, x.data(), beta, ref.data());
        cuda::DeviceBuffer<double> dx(x.size()), dy(y.size());
        dx.upload(x.data());
        dy.upload(y.data());
        const cuda::Stream stream;
        op.apply(stream.get(), alpha, dx.data(), beta, dy.data());
        stream.synchronize();
        dy.download(y.data());
        EXPECT_LE(spmv_error(y, ref, alpha, ad, x.data(), beta, y0), reference::tolerance<double>())
            << name << " " << to_string(kernel) << " alpha=" << alpha << " beta=" << beta;
      }
    }
  }
#endif
}

TEST(MixedPrecision, RefusesWhatItDoesNotRun) {
  const auto a = random_matrix<float>(20, 20, 3, 6);
  EXPECT_THROW(MixedOperator(a, Options{}), UnsupportedError);  // the host backend
  Options csr_vector;
  csr_vector.backend = Backend::Cuda;
  csr_vector.kernel = Kernel::CsrVector;
  EXPECT_THROW(MixedOperator(a, csr_vector), UnsupportedError);
  Options two;
  two.backend = Backend::Cuda;
  two.devices = {0, 0};
  EXPECT_THROW(MixedOperator(a, two), UnsupportedError);
}

// The registry itself: every row names its backend's kernel once, supports() agrees with it, and
// the Operator refuses what the registry does not list.
TEST(Registry, RowsAreUniqueAndAgreeWithSupports) {
  const auto& rows = kernel_registry();
  ASSERT_FALSE(rows.empty());
  for (std::size_t i = 0; i < rows.size(); ++i) {
    EXPECT_NE(rows[i].kernel, Kernel::Auto);
    EXPECT_TRUE(supports(rows[i].backend, rows[i].kernel));
    EXPECT_EQ(find_kernel(rows[i].backend, rows[i].kernel), &rows[i]);
    EXPECT_STRNE(rows[i].summary, "");
    for (std::size_t j = 0; j < i; ++j)
      EXPECT_FALSE(rows[i].backend == rows[j].backend && rows[i].kernel == rows[j].kernel);
  }
  EXPECT_TRUE(supports(Backend::Host, Kernel::Auto));
}

TEST(Registry, OperatorRefusesUnlistedKernelsAndResidencies) {
  const auto a = random_matrix<double>(20, 20, 3, 6);
  for (const Backend b : {Backend::Host, Backend::Cuda})
    for (Kernel k : {Kernel::Csr, Kernel::Coo, Kernel::CsrVector, Kernel::FullOverlap}) {
      if (supports(b, k)) continue;
      Options o;
      o.backend = b;
      o.kernel = k;
      EXPECT_THROW(Operator<double>(a, o), UnsupportedError) << to_string(b) << " " << to_string(k);
    }
  Options streamed;  // the host backend has no streamed kernel
  streamed.residency = Residency::Streamed;
  EXPECT_THROW(Operator<double>(a, streamed), UnsupportedError);
  Options automatic;  // residency does not apply on the host: auto (the default) is resident
  EXPECT_EQ(automatic.residency, Residency::Auto);
  EXPECT_EQ(Operator<double>(a, automatic).residency(), Residency::Resident);
  Options seg_on_two;  // the host emulation of several devices runs csr only
  seg_on_two.kernel = Kernel::Seg;
  seg_on_two.devices = {0, 1};
  EXPECT_THROW(Operator<double>(a, seg_on_two), UnsupportedError);
}

}  // namespace
}  // namespace kspmv::test
