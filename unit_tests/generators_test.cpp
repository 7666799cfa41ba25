// Matrix generators: exact sizes, structure (symmetry, row bounds), determinism per seed,
// planted long rows, and the spec parser with every error it reports.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdlib>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "kspmv/core/error.hpp"
#include "kspmv/gen/generators.hpp"
#include "thread_count.hpp"

namespace kspmv::gen {
namespace {

// Same shape, row pointers, columns and values.
template <class S>
bool same_matrix(const CsrMatrix<S>& a, const CsrMatrix<S>& b) {
  if (a.nrows != b.nrows || a.ncols != b.ncols || a.nnz() != b.nnz()) return false;
  for (Ordinal i = 0; i <= a.nrows; ++i)
    if (a.row_ptr(i) != b.row_ptr(i)) return false;
  for (Offset k = 0; k < a.nnz(); ++k)
    if (a.col_idx(k) != b.col_idx(k) || a.values(k) != b.values(k)) return false;
  return true;
}

template <class S>
void expect_well_formed(const CsrMatrix<S>& a) {
  EXPECT_NO_THROW(a.validate());
  EXPECT_TRUE(a.is_sorted_unique());
}

// Value at (i, j), or NaN when the entry is absent (columns are sorted).
template <class S>
double entry(const CsrMatrix<S>& a, Ordinal i, Ordinal j) {
  const Ordinal* first = a.col_idx.data() + a.row_ptr(i);
  const Ordinal* last = a.col_idx.data() + a.row_ptr(i + 1);
  const Ordinal* p = std::lower_bound(first, last, j);
  return p != last && *p == j ? double(a.values(p - a.col_idx.data())) : std::nan("");
}

// Every (i, j, v) has (j, i, v); with `no_diagonal`, no (i, i).
template <class S>
void expect_symmetric(const CsrMatrix<S>& a, bool no_diagonal) {
  ASSERT_EQ(a.nrows, a.ncols);
  for (Ordinal i = 0; i < a.nrows; ++i)
    for (Offset k = a.row_ptr(i); k < a.row_ptr(i + 1); ++k) {
      const Ordinal j = a.col_idx(k);
      if (no_diagonal) ASSERT_NE(i, j) << "diagonal entry in row " << i;
      ASSERT_EQ(entry(a, j, i), double(a.values(k))) << "(" << i << ", " << j << ")";
    }
}

// Lowers the memory kspmv sees as available (KSPMV_MEMORY_LIMIT) for one scope.
class MemoryLimit {
 public:
  explicit MemoryLimit(double bytes) {
    if (const char* old = std::getenv(kName)) old_ = old;
    setenv(kName, std::to_string(static_cast<unsigned long long>(bytes)).c_str(), 1);
  }
  ~MemoryLimit() {
    if (old_)
      setenv(kName, old_->c_str(), 1);
    else
      unsetenv(kName);
  }

 private:
  static constexpr const char* kName = "KSPMV_MEMORY_LIMIT";
  std::optional<std::string> old_;
};

// Bytes of a CSR's three arrays.
template <class S>
double csr_bytes(const CsrMatrix<S>& a) {
  return 8.0 * (a.nrows + 1) + double(a.nnz()) * (sizeof(Ordinal) + sizeof(S));
}

template <class S>
class GenTyped : public ::testing::Test {};
using Scalars = ::testing::Types<float, double>;
TYPED_TEST_SUITE(GenTyped, Scalars);

TYPED_TEST(GenTyped, StencilsHaveExactNnzAndLaplacianValues) {
  using S = TypeParam;
  for (Ordinal n : {1, 2, 3, 7}) {
    const Offset n2 = Offset(n) * n, n3 = n2 * n;
    const auto l2 = laplace2d<S>(n, n);
    EXPECT_EQ(l2.nnz(), 5 * n2 - 4 * n) << n;
    const auto s7 = stencil3d_7<S>(n);
    EXPECT_EQ(s7.nnz(), 7 * n3 - 6 * n2) << n;
    const auto s27 = stencil3d_27<S>(n);
    EXPECT_EQ(s27.nnz(), Offset(3 * n - 2) * (3 * n - 2) * (3 * n - 2)) << n;
    for (const auto* a : {&l2, &s7, &s27}) {
      expect_well_formed(*a);
      expect_symmetric(*a, false);
    }
    EXPECT_EQ(entry(l2, 0, 0), 4.0);
    EXPECT_EQ(entry(s7, 0, 0), 6.0);
    EXPECT_EQ(entry(s27, 0, 0), 26.0);
  }
  const auto r = laplace2d<S>(5, 3);  // rectangular grid: 5*nx*ny - 2*nx - 2*ny
  EXPECT_EQ(r.nrows, 15);
  EXPECT_EQ(r.nnz(), 5 * 15 - 2 * 5 - 2 * 3);
  const auto s = stencil3d_27<S>(3);  // the centre point sees all 27: its row sums to 0
  double sum = 0;
  for (Offset k = s.row_ptr(13); k < s.row_ptr(14); ++k) sum += s.values(k);
  EXPECT_EQ(s.row_length(13), 27);
  EXPECT_EQ(sum, 0.0);
  EXPECT_EQ(stencil3d_7<S>(0).nrows, 0);
  EXPECT_THROW(stencil3d_7<S>(1291), InvalidArgument);
  EXPECT_THROW(laplace2d<S>(-1, 4), InvalidArgument);
}

TYPED_TEST(GenTyped, BandedHasFullBandsAndDominantDiagonal) {
  using S = TypeParam;
  const Ordinal n = 50, w = 4;
  const auto a = banded<S>(n, w);
  expect_well_formed(a);
  expect_symmetric(a, false);
  EXPECT_EQ(a.nnz(), Offset(n) * (2 * w + 1) - Offset(w) * (w + 1));
  for (Ordinal i = 0; i < n; ++i) {
    EXPECT_EQ(a.col_idx(a.row_ptr(i)), std::max(0, i - w));
    EXPECT_EQ(entry(a, i, i), 2.0 * w + 1);
  }
  EXPECT_EQ(banded<S>(3, 10).nnz(), 9);  // band wider than the matrix: dense
  EXPECT_THROW(banded<S>(5, -1), InvalidArgument);
}

TYPED_TEST(GenTyped, UniformHasExactlyKDistinctColumnsPerRow) {
  using S = TypeParam;
  for (auto [rows, cols, k] : {std::array<int, 3>{300, 1000, 8}, {50, 20, 20}, {40, 100, 60}}) {
    const auto a = uniform_random<S>(rows, cols, k, 7);
    expect_well_formed(a);
    for (Ordinal i = 0; i < rows; ++i) ASSERT_EQ(a.row_length(i), k);
    for (Offset e = 0; e < a.nnz(); ++e) {
      ASSERT_GE(a.values(e), S(-1));
      ASSERT_LT(a.values(e), S(1));
    }
  }
  EXPECT_THROW(uniform_random<S>(10, 5, 6, 1), InvalidArgument);
  EXPECT_THROW(uniform_random<S>(10, 5, -1, 1), InvalidArgument);
}

TYPED_TEST(GenTyped, KroneckerIsSymmetricWithoutDiagonalAndSkewed) {
  using S = TypeParam;
  const auto a = kronecker<S>(12, 8, 3);
  EXPECT_EQ(a.nrows, 4096);
  expect_well_formed(a);
  expect_symmetric(a, true);
  EXPECT_LE(a.nnz(), 2 * 8 * 4096);
  EXPECT_GT(a.nnz(), 8 * 4096);  // duplicates and self-loops remove well under half
  Offset longest = 0;
  for (Ordinal i = 0; i < a.nrows; ++i) longest = std::max(longest, a.row_length(i));
  EXPECT_GT(longest, 20 * a.nnz() / a.nrows);  // a power law has hubs
  EXPECT_THROW(kronecker<S>(0, 16, 1), InvalidArgument);
  EXPECT_THROW(kronecker<S>(10, 0, 1), InvalidArgument);
}

TYPED_TEST(GenTyped, RandomGeometricIsSymmetricWithRggDegree) {
  using S = TypeParam;
  const int scale = 13;
  const auto a = random_geometric<S>(scale, 5);
  EXPECT_EQ(a.nrows, 1 << scale);
  expect_well_formed(a);
  expect_symmetric(a, true);
  // Expected degree pi r^2 n = pi * 0.55^2 * ln n (minus the border), ~8.5 for n = 2^13.
  const double mean = double(a.nnz()) / a.nrows;
  const double expect = std::acos(-1.0) * 0.55 * 0.55 * std::log(double(a.nrows));
  EXPECT_GT(mean, 0.85 * expect);
  EXPECT_LT(mean, 1.05 * expect);
  EXPECT_THROW(random_geometric<S>(31, 1), InvalidArgument);
}

TYPED_TEST(GenTyped, KmerRowsHoldOneToFourEntries) {
  using S = TypeParam;
  for (Ordinal rows : {2, 3, 17, 20000}) {
    const auto a = kmer<S>(rows, 11);
    expect_well_formed(a);
    expect_symmetric(a, true);
    for (Ordinal i = 0; i < rows; ++i) {
      ASSERT_GE(a.row_length(i), 1) << rows << " row " << i;
      ASSERT_LE(a.row_length(i), 4) << rows << " row " << i;
    }
  }
  const auto a = kmer<S>(20000, 11);
  const double mean = double(a.nnz()) / a.nrows;
  EXPECT_GT(mean, 1.9);
  EXPECT_LT(mean, 2.4);
  EXPECT_THROW(kmer<S>(1, 1), InvalidArgument);
}

TYPED_TEST(GenTyped, LongRowsArePlantedAndKeepTheRowsEntries) {
  using S = TypeParam;
  const auto base = laplace2d<S>(40, 40);
  const int count = 5;
  const Ordinal len = 1000;
  const auto a = with_long_rows(base, count, len, 9);
  expect_well_formed(a);
  std::vector<Offset> planted;
  for (Ordinal i = 0; i < a.nrows; ++i) {
    if (a.row_length(i) != base.row_length(i)) planted.push_back(a.row_length(i));
    for (Offset k = base.row_ptr(i); k < base.row_ptr(i + 1); ++k)  // own entries kept
      ASSERT_EQ(entry(a, i, base.col_idx(k)), double(base.values(k)));
  }
  std::sort(planted.rbegin(), planted.rend());
  EXPECT_EQ(planted, (std::vector<Offset>{1000, 500, 250, 125, 62}));
  EXPECT_TRUE(same_matrix(a, with_long_rows(base, count, len, 9)));
  EXPECT_FALSE(same_matrix(a, with_long_rows(base, count, len, 10)));
  // Lengths are capped by the column count: the longest row becomes dense.
  const auto dense = with_long_rows(base, 1, 1 << 30, 1);
  Offset longest = 0;
  for (Ordinal i = 0; i < dense.nrows; ++i) longest = std::max(longest, dense.row_length(i));
  EXPECT_EQ(longest, 1600);
  EXPECT_THROW(with_long_rows(base, 1601, len, 1), InvalidArgument);
  EXPECT_THROW(with_long_rows(base, 1, 0, 1), InvalidArgument);
  auto unsorted = laplace2d<S>(3, 3);
  std::swap(unsorted.col_idx(0), unsorted.col_idx(1));
  EXPECT_THROW(with_long_rows(unsorted, 1, 5, 1), InvalidArgument);
}

TYPED_TEST(GenTyped, FullChipLikeHasMeanNineAndOneHugeRow) {
  using S = TypeParam;
  const Ordinal rows = 30000;
  const auto a = fullchip_like<S>(rows, 4);
  expect_well_formed(a);
  Offset longest = 0;
  for (Ordinal i = 0; i < rows; ++i) longest = std::max(longest, a.row_length(i));
  EXPECT_GE(longest, Offset(rows / 1.3));
  EXPECT_LE(longest, Offset(rows / 1.3) + 12);
  const double mean = double(a.nnz()) / rows;
  EXPECT_GT(mean, 8.0);
  EXPECT_LT(mean, 10.0);
}

TYPED_TEST(GenTyped, EverySpecIsDeterministicPerSeed) {
  using S = TypeParam;
  const std::vector<std::string> seeded = {"uniform:rows=500,k=5,cols=800",
                                           "kron:scale=10,ef=4",
                                           "rgg:scale=10",
                                           "kmer:rows=3000",
                                           "fullchip:rows=2000",
                                           "laplace2d:n=30+longrows:count=3,len=200"};
  for (const auto& spec : seeded) {
    const auto a = from_spec<S>(spec);
    expect_well_formed(a);
    EXPECT_TRUE(same_matrix(a, from_spec<S>(spec))) << spec;
    EXPECT_TRUE(same_matrix(a, from_spec<S>(spec + ",seed=42"))) << spec << " (default seed)";
    EXPECT_FALSE(same_matrix(a, from_spec<S>(spec + ",seed=43"))) << spec;
  }
}

// Rows [b, e) of a, copied: what a row range of a generator must give.
template <class S>
CsrMatrix<S> rows_of(const CsrMatrix<S>& a, Ordinal b, Ordinal e) {
  CsrMatrix<S> r(e - b, a.ncols, a.row_ptr(e) - a.row_ptr(b));
  for (Ordinal i = b; i <= e; ++i) r.row_ptr(i - b) = a.row_ptr(i) - a.row_ptr(b);
  for (Offset k = a.row_ptr(b); k < a.row_ptr(e); ++k) {
    r.col_idx(k - a.row_ptr(b)) = a.col_idx(k);
    r.values(k - a.row_ptr(b)) = a.values(k);
  }
  return r;
}

TYPED_TEST(GenTyped, RowRangesAreTheRowsOfTheWholeMatrix) {
  using S = TypeParam;
  const std::vector<std::string> specs = {"laplace2d:nx=13,ny=11",
                                          "stencil7:n=7",
                                          "stencil27:n=6",
                                          "uniform:rows=500,k=5,cols=800",
                                          "kron:scale=9,ef=4",
                                          "rgg:scale=9",
                                          "kmer:rows=3000",
                                          "banded:n=300,bw=4",
                                          "fullchip:rows=2000",
                                          "laplace2d:n=30+longrows:count=3,len=200",
                                          "uniform:rows=400,k=3+longrows:count=40,len=300"};
  for (const auto& spec : specs) {
    const auto whole = from_spec<S>(spec);
    const Ordinal m = whole.nrows;
    // Blocks of 1 to 5 ranks (every planted long row falls in one of them), empty blocks, one row.
    std::vector<std::pair<Ordinal, Ordinal>> ranges = {{0, 0}, {m, m}, {m / 2, m / 2 + 1}};
    for (Ordinal parts = 1; parts <= 5; ++parts)
      for (Ordinal p = 0; p < parts; ++p) ranges.emplace_back(p * m / parts, (p + 1) * m / parts);
    for (const auto& [b, e] : ranges) {
      const auto block = from_spec<S>(spec, {b, e});
      expect_well_formed(block);
      EXPECT_TRUE(same_matrix(block, rows_of(whole, b, e))) << spec << " rows " << b << ".." << e;
    }
    EXPECT_TRUE(same_matrix(from_spec<S>(spec, {0, -1}), whole)) << spec;
    EXPECT_EQ(spec_rows(spec), m) << spec;
    for (const auto& [b, e] : {std::pair<Ordinal, Ordinal>{-1, 2}, {3, 2}, {0, m + 1}})
      EXPECT_THROW((void)from_spec<S>(spec, {b, e}), InvalidArgument)
          << spec << " " << b << ".." << e;
  }
  // The generators themselves, and a block of a matrix far too large to build whole.
  EXPECT_TRUE(same_matrix(laplace2d<S>(9, 8, {10, 40}), rows_of(laplace2d<S>(9, 8), 10, 40)));
  EXPECT_TRUE(same_matrix(kmer<S>(700, 3, {100, 350}), rows_of(kmer<S>(700, 3), 100, 350)));
  const MemoryLimit limit(double(1 << 30));
  const auto block = from_spec<S>("stencil27:n=1290", {1000000, 1001000});
  EXPECT_EQ(block.nrows, 1000);
  EXPECT_EQ(block.ncols, 2146689000);
  EXPECT_EQ(block.nnz(), 18 * 1000);  // z = 0, y = 775, x = 250..1249: 2 x 3 x 3 entries a row
}

TEST(GenSpec, RowCountsOfSpecsTooLargeToBuildAreKnownAtOnce) {
  const MemoryLimit limit(double(1 << 30));
  EXPECT_EQ(spec_rows("stencil27:n=1290"), 2146689000);
  EXPECT_EQ(spec_rows("kron:scale=28"), 1 << 28);
  EXPECT_EQ(spec_rows("rgg:scale=30+longrows:count=3,len=10"), 1 << 30);
  EXPECT_EQ(spec_rows("uniform:rows=1e9,k=8,cols=50"), 1000000000);
  EXPECT_THROW((void)spec_rows("uniform:rows=10,k=8,cols=5"), InvalidArgument);
  EXPECT_THROW((void)spec_rows("laplace2d:n=46341"), InvalidArgument);
  EXPECT_THROW((void)spec_rows("nosuch:n=3"), InvalidArgument);
}

// The generators run on the host threads (parallel_blocks): one thread and seven build the same
// matrices, with several blocks of rows, edges and points each; a block of rows built on seven
// threads is the rows of the whole matrix built on one.
TEST(GenSpec, OneThreadAndManyBuildTheSameMatrix) {
  const std::vector<std::string> specs = {
      "laplace2d:n=300",      "stencil7:n=40",
      "stencil27:n=40",       "uniform:rows=100000,k=5",
      "kron:scale=15,ef=8",   "rgg:scale=16",
      "kmer:rows=200000",     "banded:n=100000,bw=3",
      "fullchip:rows=100000", "laplace2d:n=300+longrows:count=5,len=30000"};
  for (const auto& spec : specs) {
    const auto one = [&] {
      const test::ThreadCount t(1);
      return from_spec<double>(spec);
    }();
    const test::ThreadCount t(7);
    EXPECT_TRUE(same_matrix(one, from_spec<double>(spec))) << spec;
    const Ordinal b = one.nrows / 3, e = 2 * one.nrows / 3;
    EXPECT_TRUE(same_matrix(rows_of(one, b, e), from_spec<double>(spec, {b, e}))) << spec;
  }
}

// Progress: on the calling thread, in [0, 1], never decreasing, ending at 1; for a block of rows
// too (kron's is cut from the whole matrix after building it).
TEST(GenSpec, ProgressRisesToOneOnTheCallingThread) {
  const std::vector<std::pair<std::string, RowRange>> cases = {
      {"banded:n=200000,bw=4", {}},
      {"kron:scale=15", {}},
      {"fullchip:rows=100000", {}},
      {"uniform:rows=1e5,k=3+longrows:count=2,len=1e4", {}},
      {"kron:scale=15", {1000, 9000}},
      {"fullchip:rows=100000", {50000, 100000}},
      {"laplace2d:n=400+longrows:count=3,len=1e4", {0, 80000}}};
  for (const auto& [spec, rows] : cases) {
    std::vector<double> seen;
    const auto caller = std::this_thread::get_id();
    const auto a = from_spec<float>(spec, rows, [&](double f) {
      EXPECT_EQ(std::this_thread::get_id(), caller);
      seen.push_back(f);
    });
    ASSERT_FALSE(seen.empty()) << spec;
    EXPECT_TRUE(std::is_sorted(seen.begin(), seen.end())) << spec;
    EXPECT_GE(seen.front(), 0.0) << spec;
    EXPECT_DOUBLE_EQ(seen.back(), 1.0) << spec;
  }
}

TEST(GenSpec, BuildsWhatTheDirectCallBuilds) {
  EXPECT_TRUE(same_matrix(from_spec<double>("laplace2d:n=2^4"), laplace2d<double>(16, 16)));
  EXPECT_TRUE(same_matrix(from_spec<double>("laplace2d:nx=7,ny=1e1"), laplace2d<double>(7, 10)));
  EXPECT_TRUE(same_matrix(from_spec<double>("stencil7:n=5"), stencil3d_7<double>(5)));
  EXPECT_TRUE(same_matrix(from_spec<double>("stencil27:n=1.2e1"), stencil3d_27<double>(12)));
  EXPECT_TRUE(same_matrix(from_spec<float>("uniform:rows=100,k=3,seed=5"),
                          uniform_random<float>(100, 100, 3, 5)));
  EXPECT_TRUE(same_matrix(from_spec<float>("uniform:rows=100,k=3,cols=7"),
                          uniform_random<float>(100, 7, 3, 42)));
  EXPECT_TRUE(same_matrix(from_spec<double>("kron:scale=9"), kronecker<double>(9, 16, 42)));
  EXPECT_TRUE(same_matrix(from_spec<double>("rgg:scale=9,seed=3"), random_geometric<double>(9, 3)));
  EXPECT_TRUE(same_matrix(from_spec<double>("kmer:rows=1000"), kmer<double>(1000, 42)));
  EXPECT_TRUE(same_matrix(from_spec<double>("banded:n=100,bw=3"), banded<double>(100, 3)));
  EXPECT_TRUE(same_matrix(from_spec<double>("fullchip:rows=500"), fullchip_like<double>(500, 42)));
  // The seed may close the longrows part; it seeds both parts.
  EXPECT_TRUE(same_matrix(from_spec<double>("kmer:rows=900,seed=8+longrows:count=2,len=50"),
                          from_spec<double>("kmer:rows=900+longrows:count=2,len=50,seed=8")));
}

TEST(GenSpec, RejectsEveryMalformedSpecWithAMessage) {
  const std::vector<std::pair<std::string, std::string>> bad = {
      {"", "empty spec"},
      {":n=3", "missing family name"},
      {"nosuch:n=3", "unknown family 'nosuch'"},
      {"laplace2d:n=3,foo=1", "unknown key 'foo'"},
      {"stencil7", "stencil7 needs n="},
      {"stencil7:", "expected key=value"},
      {"laplace2d:n=3,,", "expected key=value"},
      {"uniform:rows=10,k", "expected key=value"},
      {"uniform:rows=10,k=", "expected key=value"},
      {"uniform:rows=10,=3", "expected key=value"},
      {"uniform:rows=10,k=2,rows=3", "given twice"},
      {"laplace2d:n=3,nx=3", "either n= or nx=,ny="},
      {"laplace2d:nx=3", "both nx= and ny="},
      {"uniform:rows=abc,k=2", "rows=abc"},
      {"uniform:rows=-5,k=2", "rows=-5"},
      {"uniform:rows=1.5,k=2", "rows=1.5"},
      {"uniform:rows=1.5e0,k=2", "not an integer"},
      {"uniform:rows=1.e3,k=2", "malformed"},
      {"uniform:rows=3e9,k=2", "out of range"},
      {"uniform:rows=2^40,k=2", "out of range"},
      {"kron:scale=31", "out of range"},
      {"kron:scale=10,ef=0", "out of range"},
      {"kmer:rows=1", "out of range"},
      {"laplace2d:n=3+foo:x=1", "unknown part 'foo'"},
      {"laplace2d:n=3+longrows:count=1", "longrows needs count= and len="},
      {"laplace2d:n=3+longrows:count=1,len=2,bad=3", "unknown key 'bad' for longrows"},
      {"laplace2d:n=3+longrows:count=10,len=2", "count=10"},
      {"a+b+c", "at most one"},
      {"kron:scale=4,seed=1+longrows:count=1,len=2,seed=2", "seed given twice"},
      {"uniform:rows=10,k=20", "do not fit"},  // from the generator itself
      {"stencil7:n=2000", "n must be in"},
  };
  for (const auto& [spec, message] : bad) {
    try {
      (void)from_spec<double>(spec);
      ADD_FAILURE() << "no error for \"" << spec << "\"";
    } catch (const InvalidArgument& e) {
      EXPECT_NE(std::string(e.what()).find(message), std::string::npos)
          << "spec \"" << spec << "\" gave: " << e.what();
    }
  }
}

TYPED_TEST(GenTyped, ExactSizesAreCheckedAgainstMemoryToTheByte) {
  using S = TypeParam;
  for (const char* spec :
       {"laplace2d:nx=300,ny=200", "stencil7:n=40", "stencil27:n=30",
        "uniform:rows=20000,k=7,cols=50000", "banded:n=30000,bw=5", "banded:n=20,bw=100"}) {
    const double bytes = csr_bytes(from_spec<S>(spec));
    {
      MemoryLimit limit(bytes);
      EXPECT_NO_THROW((void)from_spec<S>(spec)) << spec;
    }
    MemoryLimit limit(bytes - 1);
    EXPECT_THROW((void)from_spec<S>(spec), MemoryError) << spec;
  }
}

TYPED_TEST(GenTyped, EstimatedSizesAreRefusedBelowAndAcceptedAboveTheResult) {
  using S = TypeParam;
  for (const char* spec : {"kron:scale=13,ef=8", "rgg:scale=14", "kmer:rows=100000",
                           "fullchip:rows=20000", "laplace2d:n=200+longrows:count=5,len=20000"}) {
    const double bytes = csr_bytes(from_spec<S>(spec));
    {
      MemoryLimit limit(0.9 * bytes);  // the result alone does not fit
      EXPECT_THROW((void)from_spec<S>(spec), MemoryError) << spec;
    }
    MemoryLimit limit(3 * bytes);  // room for the result and the generator's work arrays
    EXPECT_NO_THROW((void)from_spec<S>(spec)) << spec;
  }
}

TEST(GenSpec, SpecsTooLargeForMemoryAreRefusedBeforeAnyWork) {
  // The sizes of the issue: 16 to 700 GiB, refused at once with the sizes named.
  const MemoryLimit limit(double(1 << 30));
  const std::vector<std::pair<std::string, std::string>> huge = {
      {"laplace2d:n=46340", "2147395600 x 2147395600 matrix with 10736792640 non-zeros in double"},
      {"kron:scale=28", "268435456 x 268435456 matrix with about 8589934592 non-zeros"},
      {"stencil27:n=1290", "2146689000 x 2146689000 matrix with 57870788032 non-zeros"},
      {"rgg:scale=30", "1073741824 x 1073741824 matrix with about"}};
  for (const auto& [spec, sizes] : huge) {
    try {
      (void)from_spec<double>(spec);
      ADD_FAILURE() << "no error for " << spec;
    } catch (const MemoryError& e) {
      EXPECT_GT(e.requested_bytes(), std::size_t(16) << 30) << spec;
      EXPECT_EQ(e.available_bytes(), std::size_t(1) << 30) << spec;
      EXPECT_NE(std::string(e.what()).find(sizes), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find("1024 MiB available"), std::string::npos) << e.what();
    }
  }
}

// Found by the spec fuzzer (signed overflow in the size checks): refused with the reason.
TEST(GenSpec, SizesThatOverflowTheChecksAreRefusedCleanly) {
  try {
    (void)from_spec<double>("stencil7:n=2.7e7");
    ADD_FAILURE() << "no error";
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("n must be in [0, 1290]"), std::string::npos) << e.what();
  }
  const MemoryLimit limit(double(1 << 30));
  EXPECT_THROW((void)from_spec<double>("fullchip:rows=2147483647"), MemoryError);
}

TEST(GenSpec, DecimalNumbersAreReadExactly) {
  // Every integer of 100..9999, and every 7th up to 99999, as d.ddd...eK (1.1e2 is 110).
  for (int v = 100; v < 100000; v += v < 10000 ? 1 : 7) {
    const std::string d = std::to_string(v);
    const std::string text =
        d.substr(0, 1) + "." + d.substr(1) + "e" + std::to_string(d.size() - 1);
    ASSERT_EQ(from_spec<float>("uniform:rows=1,k=0,cols=" + text).ncols, v) << text;
  }
  const std::vector<std::pair<std::string, Ordinal>> good = {{"1.1e2", 110},
                                                             {"12.50e1", 125},
                                                             {"0.5e1", 5},
                                                             {"1.000e3", 1000},
                                                             {"2^0", 1},
                                                             {"3^4", 81},
                                                             {"0.00e0", 0},
                                                             {"000123", 123},
                                                             {"1E3", 1000},
                                                             {"7e0", 7},
                                                             {"2147483647", 2147483647},
                                                             {"2.147483647e9", 2147483647}};
  for (const auto& [text, v] : good)
    EXPECT_EQ(from_spec<float>("uniform:rows=1,k=0,cols=" + text).ncols, v) << text;
  const std::vector<std::pair<std::string, std::string>> bad = {
      {"1.15e1", "not an integer"},
      {"1.25e1", "not an integer"},
      {"1.x5e1", "malformed number"},
      {".5e1", "malformed number"},
      {"2147483648", "out of range"},
      {"2.147483648e9", "out of range"},
      {"99999999999999999999999", "out of range"},
      {"1e19", "out of range"},
      {"1e99999999999999999999", "out of range"},
      {"2^64", "out of range"},
      {"3^99999999999999999999", "out of range"},
      {"1.8446744073709551617e19", "out of range"}};
  for (const auto& [text, message] : bad) {
    try {
      (void)from_spec<float>("uniform:rows=1,k=0,cols=" + text);
      ADD_FAILURE() << "no error for " << text;
    } catch (const InvalidArgument& e) {
      EXPECT_NE(std::string(e.what()).find("cols=" + text + ": " + message), std::string::npos)
          << e.what();
    }
  }
}

TEST(GenSpec, ErrorsQuoteTheSpecEscapedAndCut) {
  using namespace std::string_literals;
  const std::string nasty = "lap\x1b[2J\0lace:n=3"s, key = "laplace2d:n\x01=3"s;
  const std::string very_long = "laplace2d:n=" + std::string(100000, '7');
  for (const auto& spec : {nasty, key, very_long}) {
    try {
      (void)from_spec<double>(spec);
      ADD_FAILURE() << "no error";
    } catch (const InvalidArgument& e) {
      const std::string m = e.what();
      EXPECT_EQ(m.find_first_of("\x1b\x01\0"s), std::string::npos) << m;
      EXPECT_LT(m.size(), 400u);
    }
  }
  try {
    (void)from_spec<double>(nasty);
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("unknown family 'lap\\x1B[2J\\x00lace'"),
              std::string::npos)
        << e.what();
  }
}

TEST(GenSpec, HelpNamesEveryFamily) {
  const std::string h = spec_help();
  for (const char* f : {"laplace2d", "stencil7", "stencil27", "uniform", "kron", "rgg", "kmer",
                        "banded", "fullchip", "longrows", "seed", "2^"})
    EXPECT_NE(h.find(f), std::string::npos) << f;
}

}  // namespace
}  // namespace kspmv::gen
