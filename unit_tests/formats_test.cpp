// CSR, COO and CSC: conversions, clean-up, copies and validation, on the zoo.
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <limits>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "kspmv/core/error.hpp"
#include "testing/test_matrices.hpp"

namespace kspmv::test {
namespace {

// Row-major dense copy (zoo matrices are small enough), duplicates summed.
template <class S>
std::vector<double> dense(const CsrMatrix<S>& a) {
  std::vector<double> d(std::size_t(a.nrows) * a.ncols, 0.0);
  for (Ordinal i = 0; i < a.nrows; ++i)
    for (Offset k = a.row_ptr(i); k < a.row_ptr(i + 1); ++k)
      d[std::size_t(i) * a.ncols + a.col_idx(k)] += a.values(k);
  return d;
}

template <class S>
std::vector<double> dense(const CscMatrix<S>& a) {
  std::vector<double> d(std::size_t(a.nrows) * a.ncols, 0.0);
  for (Ordinal j = 0; j < a.ncols; ++j)
    for (Offset k = a.col_ptr(j); k < a.col_ptr(j + 1); ++k)
      d[std::size_t(a.row_idx(k)) * a.ncols + j] += a.values(k);
  return d;
}

// Same shape and the same arrays, entry by entry.
template <class S>
void expect_identical(const CsrMatrix<S>& a, const CsrMatrix<S>& b) {
  ASSERT_EQ(a.nrows, b.nrows);
  ASSERT_EQ(a.ncols, b.ncols);
  ASSERT_EQ(a.nnz(), b.nnz());
  for (Ordinal i = 0; i <= a.nrows; ++i) EXPECT_EQ(a.row_ptr(i), b.row_ptr(i)) << "row_ptr " << i;
  for (Offset k = 0; k < a.nnz(); ++k) {
    EXPECT_EQ(a.col_idx(k), b.col_idx(k)) << "entry " << k;
    EXPECT_EQ(a.values(k), b.values(k)) << "entry " << k;
  }
}

template <class S>
class Formats : public ::testing::Test {};
using Scalars = ::testing::Types<float, double>;
TYPED_TEST_SUITE(Formats, Scalars);

TYPED_TEST(Formats, ZooMatricesValidateAndAreSorted) {
  for (const auto& [name, a] : zoo<TypeParam>()) {
    SCOPED_TRACE(name);
    EXPECT_NO_THROW(a.validate());
    EXPECT_TRUE(a.is_sorted_unique());
  }
}

TYPED_TEST(Formats, CooRoundTripIsRowMajorAndExact) {
  for (const auto& [name, a] : zoo<TypeParam>()) {
    SCOPED_TRACE(name);
    const auto c = to_coo(a);
    EXPECT_NO_THROW(c.validate());
    ASSERT_EQ(c.nnz(), a.nnz());
    for (Offset k = 1; k < c.nnz(); ++k) EXPECT_LE(c.row_idx(k - 1), c.row_idx(k));
    expect_identical(to_csr(c), a);
  }
}

TYPED_TEST(Formats, CscHoldsTheSameMatrixWithSortedRowsAndRoundTrips) {
  for (const auto& [name, a] : zoo<TypeParam>()) {
    SCOPED_TRACE(name);
    const auto c = to_csc(a);
    ASSERT_EQ(c.nnz(), a.nnz());
    EXPECT_EQ(dense(c), dense(a));
    for (Ordinal j = 0; j < c.ncols; ++j)
      for (Offset k = c.col_ptr(j) + 1; k < c.col_ptr(j + 1); ++k)
        EXPECT_LT(c.row_idx(k - 1), c.row_idx(k)) << "column " << j;
    expect_identical(to_csr(c), a);
  }
}

TYPED_TEST(Formats, TransposeSwapsIndicesAndTwiceIsTheOriginal) {
  for (const auto& [name, a] : zoo<TypeParam>()) {
    SCOPED_TRACE(name);
    const auto t = transpose(a);
    ASSERT_EQ(t.nrows, a.ncols);
    ASSERT_EQ(t.ncols, a.nrows);
    EXPECT_NO_THROW(t.validate());
    const auto da = dense(a), dt = dense(t);
    for (Ordinal i = 0; i < a.nrows; ++i)
      for (Ordinal j = 0; j < a.ncols; ++j)
        ASSERT_EQ(dt[std::size_t(j) * a.nrows + i], da[std::size_t(i) * a.ncols + j]);
    expect_identical(transpose(t), a);
  }
}

TYPED_TEST(Formats, SortAndMergeSortsColumnsAndSumsDuplicates) {
  using S = TypeParam;
  // Row 0: columns 3, 1, 3, 0; row 1 empty; row 2: column 2 twice, cancelling.
  CsrMatrix<S> a(3, 4, 6);
  const Offset rp[] = {0, 4, 4, 6};
  const Ordinal col[] = {3, 1, 3, 0, 2, 2};
  const S val[] = {1, 2, 3, 4, 5, -5};
  for (int i = 0; i < 4; ++i) a.row_ptr(i) = rp[i];
  for (int k = 0; k < 6; ++k) a.col_idx(k) = col[k], a.values(k) = val[k];
  ASSERT_NO_THROW(a.validate());
  EXPECT_FALSE(a.is_sorted_unique());

  const auto s = sort_and_merge(a);
  EXPECT_TRUE(s.is_sorted_unique());
  CsrMatrix<S> expected(3, 4, 4);
  const Offset erp[] = {0, 3, 3, 4};
  const Ordinal ecol[] = {0, 1, 3, 2};
  const S eval[] = {4, 2, 4, 0};
  for (int i = 0; i < 4; ++i) expected.row_ptr(i) = erp[i];
  for (int k = 0; k < 4; ++k) expected.col_idx(k) = ecol[k], expected.values(k) = eval[k];
  expect_identical(s, expected);
  EXPECT_EQ(dense(s), dense(a));
}

TYPED_TEST(Formats, UnsortedCooWithDuplicatesBecomesSortedCsr) {
  using S = TypeParam;
  CooMatrix<S> c(3, 3, 5);
  const Ordinal r[] = {2, 0, 2, 0, 2}, col[] = {1, 2, 0, 2, 1};
  const S v[] = {1, 2, 3, 4, 5};
  for (int k = 0; k < 5; ++k) c.row_idx(k) = r[k], c.col_idx(k) = col[k], c.values(k) = v[k];
  const auto a = to_csr(c);
  EXPECT_TRUE(a.is_sorted_unique());
  EXPECT_EQ(dense(a), (std::vector<double>{0, 0, 6, 0, 0, 0, 3, 6, 0}));
}

TYPED_TEST(Formats, ConvertScalarKeepsStructureAndRoundsValues) {
  using S = TypeParam;
  using Other = std::conditional_t<std::is_same_v<S, float>, double, float>;
  for (const auto& [name, a] : zoo<S>()) {
    SCOPED_TRACE(name);
    const CsrMatrix<Other> b = convert_scalar<Other>(a);
    ASSERT_EQ(b.nnz(), a.nnz());
    for (Ordinal i = 0; i <= a.nrows; ++i) EXPECT_EQ(b.row_ptr(i), a.row_ptr(i));
    for (Offset k = 0; k < a.nnz(); ++k) {
      EXPECT_EQ(b.col_idx(k), a.col_idx(k));
      EXPECT_EQ(b.values(k), static_cast<Other>(a.values(k)));
    }
    expect_identical(convert_scalar<S>(a), a);
  }
}

TYPED_TEST(Formats, CloneIsADeepCopy) {
  using S = TypeParam;
  for (const auto& [name, a] : zoo<S>()) {
    SCOPED_TRACE(name);
    auto b = clone(a);
    expect_identical(b, a);
    if (a.nnz() == 0) continue;
    EXPECT_NE(b.values.data(), a.values.data());
    EXPECT_NE(b.col_idx.data(), a.col_idx.data());
    EXPECT_NE(b.row_ptr.data(), a.row_ptr.data());
    const S before = a.values(0);
    b.values(0) = before + S(1);
    b.col_idx(0) = a.col_idx(0) + 1;
    EXPECT_EQ(a.values(0), before);
  }
}

TYPED_TEST(Formats, ValidateRejectsBrokenCsr) {
  using S = TypeParam;
  const auto good = random_matrix<S>(20, 15, 3, 8);
  ASSERT_GT(good.nnz(), 2);
  {
    auto a = clone(good);
    a.row_ptr(0) = 1;
    EXPECT_THROW(a.validate(), InvalidArgument) << "row_ptr not starting at 0";
  }
  {
    auto a = clone(good);
    std::swap(a.row_ptr(5), a.row_ptr(6));
    if (a.row_ptr(5) == a.row_ptr(6)) a.row_ptr(6) = a.row_ptr(5) - 1;
    EXPECT_THROW(a.validate(), InvalidArgument) << "decreasing row_ptr";
  }
  {
    auto a = clone(good);
    a.row_ptr(a.nrows) = a.nnz() + 1;
    EXPECT_THROW(a.validate(), InvalidArgument) << "row_ptr past the arrays";
  }
  {
    auto a = clone(good);
    a.col_idx(1) = a.ncols;
    EXPECT_THROW(a.validate(), InvalidArgument) << "column == ncols";
    a.col_idx(1) = -1;
    EXPECT_THROW(a.validate(), InvalidArgument) << "negative column";
  }
  {
    auto a = clone(good);
    a.values = HostView<S>("short", a.nnz() - 1);
    EXPECT_THROW(a.validate(), InvalidArgument) << "values shorter than nnz";
  }
  {
    auto a = clone(good);
    a.row_ptr = HostView<Offset>("short", a.nrows);
    EXPECT_THROW(a.validate(), InvalidArgument) << "row_ptr of nrows entries";
  }
  EXPECT_THROW(CsrMatrix<S>(-1, 3, 0), InvalidArgument);
}

TYPED_TEST(Formats, ValidateRejectsBrokenCoo) {
  using S = TypeParam;
  const auto good = to_coo(random_matrix<S>(20, 15, 3, 8));
  ASSERT_NO_THROW(good.validate());
  CooMatrix<S> a(good.nrows, good.ncols, good.nnz());
  Kokkos::deep_copy(a.row_idx, good.row_idx);
  Kokkos::deep_copy(a.col_idx, good.col_idx);
  Kokkos::deep_copy(a.values, good.values);
  a.row_idx(0) = a.nrows;
  EXPECT_THROW(a.validate(), InvalidArgument) << "row out of range";
  a.row_idx(0) = 0;
  a.col_idx(0) = -1;
  EXPECT_THROW(a.validate(), InvalidArgument) << "column out of range";
  a.col_idx(0) = 0;
  ASSERT_NO_THROW(a.validate());
  a.values = HostView<S>("long", a.nnz() + 1);
  EXPECT_THROW(a.validate(), InvalidArgument) << "array lengths differ";
}

TEST(Allocation, FailureIsAMemoryErrorNamingTheArrayAndTheBytes) {
  const std::size_t huge = std::size_t(1) << 56;  // 512 PiB of doubles: no machine has them
  try {
    (void)make_host_view<double>("kspmv::test::huge", huge);
    ADD_FAILURE() << "no error";
  } catch (const MemoryError& e) {
    EXPECT_EQ(e.requested_bytes(), huge * sizeof(double));
    EXPECT_NE(std::string(e.what()).find("cannot allocate kspmv::test::huge: needs " +
                                         std::to_string(huge * sizeof(double)) + " bytes"),
              std::string::npos)
        << e.what();
  }
  EXPECT_THROW((void)make_host_view<double>("x", std::numeric_limits<std::size_t>::max()),
               MemoryError);
  try {
    (void)CsrMatrix<float>(4, 4, Offset(huge));
    ADD_FAILURE() << "no error";
  } catch (const MemoryError& e) {
    EXPECT_NE(std::string(e.what()).find("kspmv::csr::col_idx"), std::string::npos) << e.what();
  }
  EXPECT_THROW((void)CooMatrix<double>(4, 4, Offset(huge)), MemoryError);
  EXPECT_THROW((void)CscMatrix<double>(4, 4, Offset(huge)), MemoryError);
}

TEST(Allocation, MemoryLimitLowersTheAvailableMemory) {
  const char* name = "KSPMV_MEMORY_LIMIT";
  const char* old = std::getenv(name);
  const bool had = old != nullptr;
  const std::string saved = had ? old : "";
  unsetenv(name);
  EXPECT_GT(available_memory(), 0u);
  setenv(name, "12345", 1);
  EXPECT_EQ(available_memory(), 12345u);
  EXPECT_NO_THROW(require_memory(12345, "a request"));
  try {
    require_memory(12346, "a request");
    ADD_FAILURE() << "no error";
  } catch (const MemoryError& e) {
    EXPECT_EQ(e.requested_bytes(), 12346u);
    EXPECT_EQ(e.available_bytes(), 12345u);
    EXPECT_EQ(std::string(e.what()),
              "a request: needs 12346 bytes (1 MiB) of memory, 1 MiB available");
  }
  setenv(name, "99999999999999999999999", 1);  // lowers, never raises: the machine's memory
  EXPECT_LT(available_memory(), std::numeric_limits<std::size_t>::max());
  for (const char* bad : {"12k", "", "-5", " 7", "1e9"}) {
    setenv(name, bad, 1);
    EXPECT_THROW((void)available_memory(), InvalidArgument) << bad;
  }
  if (had)
    setenv(name, saved.c_str(), 1);
  else
    unsetenv(name);
}

// ulimit -v and -d: what the soft limit leaves beside the process's use of it is the most
// available_memory() says (it said MemAvailable, 23 GB, under an 8 GB ulimit -v).
TEST(Allocation, ResourceLimitsLowerTheAvailableMemory) {
  for (const int resource : {RLIMIT_AS, RLIMIT_DATA}) {
    struct rlimit saved {};
    ASSERT_EQ(getrlimit(resource, &saved), 0);
    // 512 MiB beyond a generous guess of the process's use (the address space of a test with
    // Kokkos and the CUDA runtime loaded runs to gigabytes).
    const std::size_t before = available_memory();
    std::ifstream status("/proc/self/status");
    std::size_t used_kib = 0;
    for (std::string key; status >> key;) {
      std::size_t kib = 0;
      if (key == (resource == RLIMIT_AS ? "VmSize:" : "VmData:") && status >> kib) used_kib = kib;
      status.ignore(std::numeric_limits<std::streamsize>::max(), '\n');
    }
    ASSERT_GT(used_kib, 0u);
    const std::size_t room = std::size_t(512) << 20;
    struct rlimit lowered = saved;
    lowered.rlim_cur = used_kib * 1024 + room;
    if (saved.rlim_cur != RLIM_INFINITY && saved.rlim_cur < lowered.rlim_cur) continue;
    ASSERT_EQ(setrlimit(resource, &lowered), 0);
    const std::size_t limited = available_memory();
    ASSERT_EQ(setrlimit(resource, &saved), 0);
    EXPECT_LE(limited, room) << resource;
    EXPECT_GT(limited, room / 2) << resource;  // the process did not grow by half of it meanwhile
    EXPECT_LE(limited, before);
  }
}

// cgroup v1 and v2 (memory.max), the group and those above it: the tightest limit less its usage.
TEST(Allocation, CgroupLimitsLowerTheAvailableMemory) {
  namespace fs = std::filesystem;
  const fs::path root = fs::temp_directory_path() / ("kspmv_cgroup_" + std::to_string(getpid()));
  fs::remove_all(root);
  const auto put = [&](const fs::path& file, const std::string& text) {
    fs::create_directories(file.parent_path());
    std::ofstream(file) << text << '\n';
  };
  put(root / "proc_v2", "0::/app/job");
  put(root / "cg/app/job/memory.max", "max");
  put(root / "cg/app/job/memory.current", "100");
  EXPECT_EQ(detail::cgroup_memory_left((root / "proc_v2").string(), (root / "cg").string()),
            std::numeric_limits<std::size_t>::max());
  put(root / "cg/app/memory.max", "5000");  // the parent's limit binds
  put(root / "cg/app/memory.current", "1000");
  EXPECT_EQ(detail::cgroup_memory_left((root / "proc_v2").string(), (root / "cg").string()), 4000u);
  put(root / "cg/app/job/memory.max", "3000");
  EXPECT_EQ(detail::cgroup_memory_left((root / "proc_v2").string(), (root / "cg").string()), 2900u);
  put(root / "proc_v1", "9:pids:/\n4:cpu,memory:/box\n0::/");
  put(root / "cg/memory/box/memory.limit_in_bytes", "9223372036854771712");  // no limit in v1
  put(root / "cg/memory/box/memory.usage_in_bytes", "7");
  put(root / "cg/memory/memory.limit_in_bytes", "800");
  put(root / "cg/memory/memory.usage_in_bytes", "900");  // over: nothing left
  EXPECT_EQ(detail::cgroup_memory_left((root / "proc_v1").string(), (root / "cg").string()), 0u);
  put(root / "cg/memory/memory.usage_in_bytes", "300");
  EXPECT_EQ(detail::cgroup_memory_left((root / "proc_v1").string(), (root / "cg").string()), 500u);
  EXPECT_EQ(detail::cgroup_memory_left((root / "missing").string(), (root / "cg").string()),
            std::numeric_limits<std::size_t>::max());
  fs::remove_all(root);
}

TEST(Printable, EscapesControlAndNonAsciiBytesAndCutsLongText) {
  using namespace std::string_literals;
  EXPECT_EQ(printable("plain text 1.5e3"), "plain text 1.5e3");
  EXPECT_EQ(printable("a\tb\x1b[2J\0\x7f\xc3\xa9"s), "a\\x09b\\x1B[2J\\x00\\x7F\\xC3\\xA9");
  EXPECT_EQ(printable(std::string(100, 'x'), 10), "xxxxxxxxxx...");
  EXPECT_EQ(printable("0123456789", 10), "0123456789");
  EXPECT_EQ(printable(std::string(1000, '\n')).size(), 80 * 4 + 3);
}

}  // namespace
}  // namespace kspmv::test
