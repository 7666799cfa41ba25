// Matrix Market reader and writer: round trips, storage schemes, fields, one test per malformed
// input checking the error type, file and line, hostile sizes, what the report counts, and
// writes that fail or go to a pipe, a device or standard output.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <limits>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "kspmv/analysis/analyze.hpp"
#include "kspmv/core/error.hpp"
#include "kspmv/io/matrix_market.hpp"
#include "kspmv/io/text_file.hpp"
#include "mm_test_files.hpp"
#include "testing/test_matrices.hpp"

namespace {

namespace fs = std::filesystem;
using kspmv::CsrMatrix;
using kspmv::MemoryError;
using kspmv::Offset;
using kspmv::Ordinal;
using kspmv::ParseError;
using kspmv::io::read_matrix_market;
using kspmv::io::ReadReport;
using kspmv::io::write_matrix_market;
using kspmv::test::expect_same;
using kspmv::test::TempDir;
using Triplets = std::vector<std::tuple<Ordinal, Ordinal, double>>;

std::string kGeneralBanner() {
  return "%%MatrixMarket matrix coordinate real general\n";
}

template <class S>
class MatrixMarketTyped : public ::testing::Test {};
using Scalars = ::testing::Types<float, double>;
TYPED_TEST_SUITE(MatrixMarketTyped, Scalars);

TYPED_TEST(MatrixMarketTyped, ZooRoundTripsExactlyThroughPlainAndGzipFiles) {
  using S = TypeParam;
  TempDir dir;
  for (const auto& [name, a] : kspmv::test::zoo<S>()) {
    for (const std::string ext : {".mtx", ".mtx.gz"}) {
      SCOPED_TRACE(name + ext);
      const std::string path = dir.file(name + ext);
      write_matrix_market(path, a);
      expect_same(read_matrix_market<S>(path), a);
    }
  }
}

TYPED_TEST(MatrixMarketTyped, SymmetricStorageIsMirrored) {
  using S = TypeParam;
  TempDir dir;
  const auto path = dir.write("sym.mtx",
                              "%%MatrixMarket matrix coordinate real symmetric\n"
                              "3 3 4\n1 1 2.0\n2 1 -1.5\n3 2 4\n3 3 0.25\n");
  const auto expected = kspmv::test::from_triplets<S>(
      3, 3, Triplets{{0, 0, 2}, {1, 0, -1.5}, {0, 1, -1.5}, {2, 1, 4}, {1, 2, 4}, {2, 2, 0.25}});
  expect_same(read_matrix_market<S>(path), expected);
}

TYPED_TEST(MatrixMarketTyped, SkewSymmetricStorageIsMirroredNegated) {
  using S = TypeParam;
  TempDir dir;
  const auto path = dir.write("skew.mtx",
                              "%%MatrixMarket matrix coordinate real skew-symmetric\n"
                              "3 3 2\n2 1 1.5\n3 1 -2\n");
  const auto expected = kspmv::test::from_triplets<S>(
      3, 3, Triplets{{1, 0, 1.5}, {0, 1, -1.5}, {2, 0, -2}, {0, 2, 2}});
  expect_same(read_matrix_market<S>(path), expected);
}

TYPED_TEST(MatrixMarketTyped, PatternEntriesAreOne) {
  using S = TypeParam;
  TempDir dir;
  const auto path = dir.write("pattern.mtx",
                              "%%MatrixMarket matrix coordinate pattern general\n"
                              "2 3 3\n1 3\n2 1\n1 1\n");
  const auto expected =
      kspmv::test::from_triplets<S>(2, 3, Triplets{{0, 2, 1}, {1, 0, 1}, {0, 0, 1}});
  expect_same(read_matrix_market<S>(path), expected);
}

TYPED_TEST(MatrixMarketTyped, IntegerFieldAndSymmetricPattern) {
  using S = TypeParam;
  TempDir dir;
  const auto ints = dir.write("int.mtx",
                              "%%MatrixMarket matrix coordinate integer general\n"
                              "2 2 2\n1 2 -7\n2 2 12\n");
  expect_same(read_matrix_market<S>(ints),
              kspmv::test::from_triplets<S>(2, 2, Triplets{{0, 1, -7}, {1, 1, 12}}));
  const auto pattern = dir.write("sympat.mtx",
                                 "%%MatrixMarket matrix coordinate pattern symmetric\n"
                                 "2 2 2\n1 1\n2 1\n");
  expect_same(read_matrix_market<S>(pattern),
              kspmv::test::from_triplets<S>(2, 2, Triplets{{0, 0, 1}, {1, 0, 1}, {0, 1, 1}}));
}

TYPED_TEST(MatrixMarketTyped, UnsortedEntriesAreSortedAndDuplicatesSummed) {
  using S = TypeParam;
  TempDir dir;
  const auto path = dir.write("dups.mtx",
                              "%%MatrixMarket matrix coordinate real general\n"
                              "2 4 5\n1 4 1\n1 2 2\n1 4 0.5\n2 1 3\n1 1 -1\n");
  const auto expected =
      kspmv::test::from_triplets<S>(2, 4, Triplets{{0, 3, 1.5}, {0, 1, 2}, {1, 0, 3}, {0, 0, -1}});
  const auto a = read_matrix_market<S>(path);
  EXPECT_TRUE(a.is_sorted_unique());
  expect_same(a, expected);
  // Rows already in order (the arrays are kept, not scattered), columns not.
  const auto row_ordered = dir.write("row_ordered.mtx",
                                     "%%MatrixMarket matrix coordinate real general\n"
                                     "2 4 5\n1 4 1\n1 2 2\n1 4 0.5\n1 1 -1\n2 1 3\n");
  expect_same(read_matrix_market<S>(row_ordered), expected);
}

TEST(MatrixMarket, CommentsBlankLinesTabsCrlfAndMissingFinalNewline) {
  TempDir dir;
  const auto path = dir.write("comments.mtx",
                              "%%MatrixMarket Matrix Coordinate Real General\r\n"
                              "% a comment\n"
                              "\n"
                              "   \t\n"
                              "%another\n"
                              "  2 2 3  \r\n"
                              "% between entries\n"
                              "1\t1\t1e0\r\n"
                              "\n"
                              "  2 1 -.5\n"
                              "2 2 +2.5");
  const auto expected =
      kspmv::test::from_triplets<double>(2, 2, Triplets{{0, 0, 1}, {1, 0, -0.5}, {1, 1, 2.5}});
  expect_same(read_matrix_market<double>(path), expected);
}

TEST(MatrixMarket, LinesSplitAcrossReadChunksAndLinesLongerThanAChunk) {
  // Entries spanning several 8 MB reads, then a comment line longer than one read.
  const Ordinal m = 5000, n = 3000;
  const Offset count = 600'000;
  Triplets t;
  std::string text = kGeneralBanner() + std::to_string(m) + " " + std::to_string(n) + " " +
                     std::to_string(count) + "\n";
  for (Offset k = 0; k < count; ++k) {
    t.emplace_back(Ordinal(k % m), Ordinal((k * 7) % n), double(k % 13) * 0.25);
    text += std::to_string(k % m + 1) + " " + std::to_string((k * 7) % n + 1) + " " +
            std::to_string(double(k % 13) * 0.25) + "\n";
    if (k == count / 2) text += "%" + std::string(9u << 20, 'x') + "\n";
  }
  ASSERT_GT(text.size(), std::size_t(18) << 20);
  TempDir dir;
  const auto path = dir.write("chunks.mtx", text);
  expect_same(read_matrix_market<double>(path), kspmv::test::from_triplets<double>(m, n, t));
}

TEST(MatrixMarket, GzipIsRecognizedByMagicBytesNotByName) {
  TempDir dir;
  const auto a = kspmv::test::random_matrix<double>(50, 40, 5, 7);
  const std::string gz = dir.file("a.mtx.gz"), renamed = dir.file("a.mtx");
  write_matrix_market(gz, a);
  fs::rename(gz, renamed);
  expect_same(read_matrix_market<double>(renamed), a);
}

TEST(MatrixMarket, InfoReadsOnlyTheHeader) {
  TempDir dir;
  // The entries are garbage: reading the info must not look at them.
  const auto path = dir.write("info.mtx",
                              "%%MatrixMarket matrix coordinate pattern symmetric\n"
                              "% comment\n\n"
                              "5 5 12\n"
                              "not an entry\n");
  const auto info = kspmv::io::read_matrix_market_info(path);
  EXPECT_EQ(info.field, "pattern");
  EXPECT_EQ(info.symmetry, "symmetric");
  EXPECT_EQ(info.nrows, 5);
  EXPECT_EQ(info.ncols, 5);
  EXPECT_EQ(info.entries, 12);
}

// ---- malformed input: each must throw ParseError naming the file and the line ----------------

void expect_parse_error(const std::string& text, long line, const std::string& fragment) {
  TempDir dir;
  const auto path = dir.write("bad.mtx", text);
  try {
    read_matrix_market<double>(path);
    ADD_FAILURE() << "no ParseError; expected one at line " << line << " with '" << fragment << "'";
  } catch (const ParseError& e) {
    EXPECT_EQ(e.file(), path);
    EXPECT_EQ(e.line(), line) << e.what();
    EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos) << e.what();
  }
}

const std::string kGeneral = kGeneralBanner();

TEST(MatrixMarketErrors, ArrayFormatIsNotSupported) {
  expect_parse_error("%%MatrixMarket matrix array real general\n2 2\n1\n2\n3\n4\n", 1,
                     "not supported");
}

// ---- dense vectors (array format) ---------------------------------------------------------------

TYPED_TEST(MatrixMarketTyped, VectorsRoundTripExactlyThroughPlainAndGzipFiles) {
  using S = TypeParam;
  TempDir dir;
  for (std::size_t n : {std::size_t(0), std::size_t(1), std::size_t(1000)}) {
    std::vector<S> v = kspmv::test::random_vector<S>(n, 5 + n);
    if (n > 2) v[1] = S(0), v[2] = std::numeric_limits<S>::denorm_min();
    for (const std::string ext : {".mtx", ".mtx.gz"}) {
      const std::string path = dir.file("v" + std::to_string(n) + ext);
      kspmv::io::write_matrix_market_vector(path, v.data(), v.size());
      EXPECT_EQ(kspmv::io::read_matrix_market_vector<S>(path), v) << path;
    }
  }
}

void expect_vector_error(const std::string& text, long line, const std::string& fragment) {
  TempDir dir;
  const auto path = dir.write("bad.mtx", text);
  try {
    kspmv::io::read_matrix_market_vector<double>(path);
    ADD_FAILURE() << "no ParseError; expected one at line " << line << " with '" << fragment << "'";
  } catch (const ParseError& e) {
    EXPECT_EQ(e.file(), path);
    EXPECT_EQ(e.line(), line) << e.what();
    EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos) << e.what();
  }
}

TEST(MatrixMarketErrors, MalformedVectors) {
  const std::string array = "%%MatrixMarket matrix array real general\n";
  expect_vector_error(array + "% b\n3 1\n1\n2\n", 5, "file ends after 2 of 3 values");
  expect_vector_error(array + "2 1\n1\n2\n3\n", 5, "more values than the 2");
  expect_vector_error(array + "2 1\n1\nx\n", 4, "expected a numeric value, got 'x'");
  expect_vector_error(array + "2 1\n1 2\n3\n", 3, "one value a line");
  expect_vector_error(array + "2 2\n1\n2\n3\n4\n", 2, "not a vector");
  expect_vector_error(array + "2 1 2\n1\n2\n", 2, "size line 'rows columns'");
  expect_vector_error(kGeneral + "2 1 2\n1 1 1\n2 1 2\n", 1, "expected 'array'");
  expect_vector_error("%%MatrixMarket matrix array real symmetric\n2 2\n1\n2\n3\n", 1,
                      "'array real general'");
  expect_vector_error("%%MatrixMarket matrix array pattern general\n2 1\n", 1,
                      "'array real general'");
  ReadReport report;
  TempDir dir;
  const auto v = kspmv::io::read_matrix_market_vector<float>(
      dir.write("inf.mtx", array + "2 1\n1e300\nnan\n"), &report);
  EXPECT_EQ(v.size(), 2u);
  EXPECT_EQ(report.overflow.first_line, 3);  // the caller decides (kspmv cg --rhs refuses)
  EXPECT_EQ(report.nonfinite.first_line, 4);
}

TEST(MatrixMarketErrors, ComplexFieldIsNotSupported) {
  expect_parse_error("%%MatrixMarket matrix coordinate complex general\n1 1 1\n1 1 1 0\n", 1,
                     "not supported");
}

TEST(MatrixMarketErrors, BadBanner) {
  expect_parse_error("%MatrixMarket matrix coordinate real general\n1 1 1\n1 1 1\n", 1,
                     "expected the banner");
  expect_parse_error("%%MatrixMarket matrix coordinate real\n1 1 1\n1 1 1\n", 1,
                     "expected the banner");
}

TEST(MatrixMarketErrors, EmptyFile) {
  expect_parse_error("", 0, "empty file");
}

TEST(MatrixMarketErrors, UnknownField) {
  expect_parse_error("%%MatrixMarket matrix coordinate quaternion general\n1 1 1\n1 1 1\n", 1,
                     "unknown field 'quaternion'");
}

TEST(MatrixMarketErrors, UnknownSymmetry) {
  expect_parse_error("%%MatrixMarket matrix coordinate real diagonal\n1 1 1\n1 1 1\n", 1,
                     "unknown symmetry 'diagonal'");
}

TEST(MatrixMarketErrors, BadSizeLine) {
  expect_parse_error(kGeneral + "% c\n3 3\n", 3, "size line");
  expect_parse_error(kGeneral + "3 x 3\n", 2, "expected an integer column count, got 'x'");
  expect_parse_error(kGeneral + "3 3 1 7\n1 1 1\n", 2, "size line");
  expect_parse_error(kGeneral + "-3 3 1\n", 2, "negative");
  expect_parse_error(kGeneral + "3000000000 3 1\n", 2, "32-bit");
  expect_parse_error(kGeneral + "% only comments\n", 2, "file ends before the size line");
}

TEST(MatrixMarketErrors, SymmetricMustBeSquare) {
  expect_parse_error("%%MatrixMarket matrix coordinate real symmetric\n2 3 1\n1 1 1\n", 2,
                     "must be square");
}

TEST(MatrixMarketErrors, TooFewEntries) {
  expect_parse_error(kGeneral + "3 3 3\n1 1 1\n2 2 2\n\n", 5, "file ends after 2 of the 3");
}

TEST(MatrixMarketErrors, TooManyEntries) {
  expect_parse_error(kGeneral + "3 3 2\n1 1 1\n2 2 2\n3 3 3\n", 5, "more entries than the 2");
}

TEST(MatrixMarketErrors, ZeroIndex) {
  expect_parse_error(kGeneral + "3 3 2\n1 1 1\n0 2 2\n", 4, "row index 0 is outside [1, 3]");
}

TEST(MatrixMarketErrors, OutOfRangeIndex) {
  expect_parse_error(kGeneral + "3 4 2\n1 5 1\n", 3, "column index 5 is outside [1, 4]");
  expect_parse_error(kGeneral + "3 4 2\n4 1 1\n", 3, "row index 4 is outside [1, 3]");
}

TEST(MatrixMarketErrors, NonNumericValue) {
  expect_parse_error(kGeneral + "2 2 2\n1 1 1\n2 2 abc\n", 4,
                     "expected a numeric value, got 'abc'");
  expect_parse_error(kGeneral + "2 2 1\n1 x 1\n", 3, "column index, got 'x'");
  expect_parse_error("%%MatrixMarket matrix coordinate integer general\n2 2 1\n1 1 1.5\n", 3,
                     "expected an integer value, got '1.5'");
}

TEST(MatrixMarketErrors, MissingValue) {
  expect_parse_error(kGeneral + "2 2 1\n1 1\n", 3, "missing value");
}

TEST(MatrixMarketErrors, ExtraGarbageOnALine) {
  expect_parse_error(kGeneral + "2 2 2\n1 1 1\n2 2 2 junk\n", 4, "unexpected 'junk'");
  expect_parse_error(kGeneral + "2 2 1\n1 1 1.0x\n", 3, "expected a numeric value, got '1.0x'");
}

TEST(MatrixMarketErrors, DiagonalEntryInSkewSymmetric) {
  expect_parse_error("%%MatrixMarket matrix coordinate real skew-symmetric\n2 2 2\n2 1 1\n2 2 1\n",
                     4, "diagonal entry (2, 2)");
}

TEST(MatrixMarketErrors, TruncatedGzip) {
  TempDir dir;
  const std::string path = dir.file("cut.mtx.gz");
  write_matrix_market(path, kspmv::test::random_matrix<double>(2000, 2000, 10, 11));
  fs::resize_file(path, fs::file_size(path) / 2);
  try {
    read_matrix_market<double>(path);
    ADD_FAILURE() << "no ParseError for a truncated gzip file";
  } catch (const ParseError& e) {
    EXPECT_EQ(e.file(), path);
    EXPECT_GT(e.line(), 2);  // the lines before the cut were read
    EXPECT_NE(std::string(e.what()).find("truncated gzip"), std::string::npos) << e.what();
  }
}

TEST(MatrixMarketErrors, MissingFileIsAParseErrorAtLineZero) {
  TempDir dir;
  const std::string path = dir.file("does_not_exist.mtx");
  try {
    read_matrix_market<float>(path);
    ADD_FAILURE() << "no ParseError for a missing file";
  } catch (const ParseError& e) {
    EXPECT_EQ(e.file(), path);
    EXPECT_EQ(e.line(), 0);
    EXPECT_NE(std::string(e.what()).find("cannot open"), std::string::npos) << e.what();
  }
  EXPECT_THROW(kspmv::io::read_matrix_market_info(path), ParseError);
}

TEST(MatrixMarketErrors, UnwritablePathThrowsAndLeavesNoFile) {
  TempDir dir;
  const std::string path = dir.file("no_such_dir/out.mtx");
  EXPECT_THROW(write_matrix_market(path, kspmv::test::zoo<double>()[1].second), kspmv::Error);
  EXPECT_FALSE(fs::exists(path));
}

// ---- hostile sizes: memory grows with what the file holds, never with its size line alone ----

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

// While alive, the process may map at most `extra` bytes more than it has now (RLIMIT_AS), so
// an allocation by a size line fails the test even when its pages are never touched; and the
// reader's memory budget (KSPMV_MEMORY_LIMIT) is `budget` bytes.
class MemoryCap {
 public:
  MemoryCap(std::size_t extra, std::size_t budget) {
    getrlimit(RLIMIT_AS, &saved_);
    std::ifstream status("/proc/self/status");
    std::size_t vm_kib = 0;
    for (std::string key; status >> key;) {
      if (key == "VmSize:" && status >> vm_kib) break;
    }
    rlimit cap = saved_;
    cap.rlim_cur = vm_kib * 1024 + extra;
    if (saved_.rlim_cur != RLIM_INFINITY && saved_.rlim_cur < cap.rlim_cur) cap = saved_;
    setrlimit(RLIMIT_AS, &cap);
    setenv("KSPMV_MEMORY_LIMIT", std::to_string(budget).c_str(), 1);
  }
  ~MemoryCap() {
    setrlimit(RLIMIT_AS, &saved_);
    unsetenv("KSPMV_MEMORY_LIMIT");
  }

 private:
  rlimit saved_{};
};

constexpr std::size_t kMiB = std::size_t(1) << 20;

TEST(MatrixMarketHostile, HugeRowCountIsRefusedBeforeAllocating) {
  TempDir dir;
  for (const char* size_line : {"2147483647 1 0\n", "300000000 1 0\n", "1 2000000000 1\n1 1 1\n",
                                "2000000000 2000000000 1\n1 1 1\n"}) {
    SCOPED_TRACE(size_line);
    const auto path = dir.write("huge.mtx", kGeneralBanner() + size_line);
    const auto start = std::chrono::steady_clock::now();
    try {
      MemoryCap cap(512 * kMiB, 256 * kMiB);
      const auto a = read_matrix_market<double>(path);
      EXPECT_LE(Offset(a.nrows) * 8, Offset(256 * kMiB)) << "read a matrix over the budget";
    } catch (const MemoryError& e) {
      EXPECT_NE(std::string(e.what()).find("row pointers"), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find(path), std::string::npos) << e.what();
    }
    EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(2));
  }
}

TEST(MatrixMarketHostile, DeclaredEntriesAreNotReservedUpFront) {
  // A gzip file of 1 entry after 500 KB of random comments (about 250 KB compressed) that
  // claims 10^9 entries: the reader must run out of entries, not of memory.
  TempDir dir;
  const std::string path = dir.file("claims.mtx.gz");
  {
    kspmv::io::detail::TextWriter out(path);
    out.write(kGeneralBanner() + "10 10 1000000000\n");
    std::mt19937_64 gen(1);
    for (int k = 0; k < 8000; ++k) {
      char line[80];
      std::snprintf(line, sizeof line, "%% %016llx%016llx%016llx%08llx\n",
                    static_cast<unsigned long long>(gen()), static_cast<unsigned long long>(gen()),
                    static_cast<unsigned long long>(gen()),
                    static_cast<unsigned long long>(gen() >> 32));
      out.write(line);
    }
    out.write("1 1 1\n");
    out.close();
  }
  ASSERT_GT(fs::file_size(path), 200000u);
  MemoryCap cap(512 * kMiB, 256 * kMiB);
  for (const bool plain : {false, true}) {
    const std::string file =
        plain ? dir.write("claims.mtx", kGeneralBanner() + "10 10 1000000000\n1 1 1\n") : path;
    try {
      read_matrix_market<double>(file);
      ADD_FAILURE() << "no error for " << file;
    } catch (const ParseError& e) {
      EXPECT_NE(std::string(e.what()).find("file ends after 1 of the 1000000000"),
                std::string::npos)
          << e.what();
    }
  }
}

TEST(MatrixMarketHostile, EntriesBeyondTheBudgetAreAMemoryErrorNamingTheSizes) {
  TempDir dir;
  std::string text = kGeneralBanner() + "100 100 200000\n";
  for (int k = 0; k < 200000; ++k) text += std::to_string(k % 100 + 1) + " 1 1\n";
  const auto path = dir.write("many.mtx", text);
  MemoryCap cap(512 * kMiB, 1 * kMiB);  // 200000 entries take 3.2 MB
  try {
    read_matrix_market<double>(path);
    ADD_FAILURE() << "no MemoryError";
  } catch (const MemoryError& e) {
    EXPECT_GT(e.requested_bytes(), e.available_bytes());
    EXPECT_NE(std::string(e.what()).find("100 x 100 matrix"), std::string::npos) << e.what();
  }
}

TEST(MatrixMarketHostile, EndlessLineIsAParseErrorAfterOneMiB) {
  MemoryCap cap(256 * kMiB, 256 * kMiB);
  try {
    read_matrix_market<double>("/dev/zero");
    ADD_FAILURE() << "no ParseError";
  } catch (const ParseError& e) {
    EXPECT_EQ(e.line(), 1);
    EXPECT_NE(std::string(e.what()).find("line longer than"), std::string::npos) << e.what();
  }
  // An entry line over the cap, in the middle of a file; a long comment is skipped instead.
  expect_parse_error(kGeneralBanner() + "% " + std::string(3 * kMiB, 'c') + "\n2 2 1\n1 1 " +
                         std::string(2 * kMiB, '1') + "\n",
                     4, "line longer than 1048576 bytes");
}

TEST(MatrixMarketHostile, MessagesQuoteTokensShortAndEscaped) {
  TempDir dir;
  const std::string token = "x\x01\x1b[31m" + std::string(100000, 'y');
  const auto path =
      dir.write("bad.mtx", kGeneralBanner() + "2 2 1\n1 1 " + token + std::string(1, '\0') + "\n");
  try {
    read_matrix_market<double>(path);
    ADD_FAILURE() << "no ParseError";
  } catch (const ParseError& e) {
    const std::string what = e.what();
    EXPECT_LT(what.size(), path.size() + 200) << what;
    EXPECT_NE(what.find("\\x01"), std::string::npos) << what;
    for (char c : what) EXPECT_TRUE(static_cast<unsigned char>(c) >= 0x20 && c != 0x7f) << what;
  }
}

// ---- statistics from the pattern: same as from the matrix, memory by the entries -------------

void expect_counts_match(const std::string& path) {
  ReadReport report;
  const auto counts = kspmv::io::read_matrix_market_counts(path, {}, report);
  const auto a = read_matrix_market<double>(path);
  ASSERT_EQ(report.info.nrows, a.nrows);
  const auto expected = kspmv::analysis::analyze(a);
  const auto got = kspmv::analysis::analyze(counts.row_ptr, a.ncols);
  EXPECT_EQ(got.nnz, expected.nnz);
  EXPECT_EQ(got.max_row, expected.max_row);
  EXPECT_EQ(got.rows_above, expected.rows_above);
  if (got.nrows == a.nrows) {  // every row present: the same statistics, bit for bit
    EXPECT_EQ(got.min_row, expected.min_row);
    EXPECT_EQ(got.empty_rows, expected.empty_rows);
    EXPECT_EQ(got.stddev_row, expected.stddev_row);
  }
  const double r = kspmv::analysis::power_law_exponent(counts.col_ptr);
  if (std::isnan(expected.power_law_r)) {
    EXPECT_TRUE(std::isnan(r));
  } else {
    EXPECT_EQ(r, expected.power_law_r);
  }
}

TEST(MatrixMarketCounts, AgreeWithTheMatrix) {
  TempDir dir;
  for (const auto& [name, a] : kspmv::test::zoo<double>()) {
    SCOPED_TRACE(name);
    const auto path = dir.file(name + ".mtx");
    write_matrix_market(path, a);
    expect_counts_match(path);
  }
  SCOPED_TRACE("symmetric, duplicates, unsorted, hypersparse");
  expect_counts_match(dir.write("sym.mtx",
                                "%%MatrixMarket matrix coordinate pattern symmetric\n"
                                "5 5 5\n3 1\n1 1\n3 1\n5 2\n4 4\n"));
  expect_counts_match(dir.write(
      "dups.mtx", kGeneralBanner() + "4 6 6\n4 6 1\n1 2 1\n4 6 2\n1 1 1\n3 2 1\n1 2 5\n"));
  expect_counts_match(dir.write(
      "sparse.mtx", kGeneralBanner() + "300000 200000 3\n299999 7 1\n5 199999 1\n5 7 1\n"));
}

TEST(MatrixMarketCounts, HugeDeclaredSizesTakeMemoryByTheEntries) {
  TempDir dir;
  const auto path = dir.write("huge.mtx", kGeneralBanner() +
                                              "2000000000 2000000000 3\n2000000000 1 1\n"
                                              "7 2000000000 1\n7 2000000000 2\n");
  MemoryCap cap(256 * kMiB, 64 * kMiB);
  ReadReport report;
  const auto counts = kspmv::io::read_matrix_market_counts(path, {}, report);
  EXPECT_EQ(report.info.nrows, 2000000000);
  ASSERT_EQ(counts.row_ptr.extent(0), 3u);  // the two non-empty rows
  EXPECT_EQ(counts.row_ptr(1), 1);          // row 7: one entry once duplicates count once
  EXPECT_EQ(counts.row_ptr(2), 2);
  ASSERT_EQ(counts.col_ptr.extent(0), 3u);
}

// ---- what the report counts: non-finite values, overflow, underflow, both triangles ----------

TEST(MatrixMarketReport, NonFiniteOverflowAndUnderflowAreCountedWithTheirFirstLine) {
  TempDir dir;
  const auto path = dir.write("values.mtx", kGeneralBanner() +
                                                "4 4 7\n1 1 1\n1 2 nan\n% c\n2 2 1e400\n"
                                                "2 3 -inf\n3 3 1e300\n3 4 1e-400\n4 4 1e-50\n");
  ReadReport d;
  read_matrix_market<double>(path, {}, &d);
  EXPECT_EQ(d.nonfinite.count, 2);
  EXPECT_EQ(d.nonfinite.first_line, 4);
  EXPECT_EQ(d.overflow.count, 1);
  EXPECT_EQ(d.overflow.first_line, 6);
  EXPECT_EQ(d.underflow.count, 1);
  EXPECT_EQ(d.underflow.first_line, 9);
  EXPECT_EQ(d.warnings.size(), 3u);
  ReadReport f;
  read_matrix_market<float>(path, {}, &f);
  EXPECT_EQ(f.nonfinite.count, 2);
  EXPECT_EQ(f.overflow.count, 2);  // 1e300 too
  EXPECT_EQ(f.overflow.first_line, 6);
  EXPECT_EQ(f.underflow.count, 2);  // 1e-50 too
  EXPECT_NE(f.warnings[1].find("overflow float"), std::string::npos) << f.warnings[1];
  ReadReport clean;
  read_matrix_market<double>(dir.write("clean.mtx", kGeneralBanner() + "1 1 1\n1 1 1e-300\n"), {},
                             &clean);
  EXPECT_EQ(clean.nonfinite.count + clean.overflow.count + clean.underflow.count, 0);
  EXPECT_TRUE(clean.warnings.empty());
}

TEST(MatrixMarketReport, SumOfDuplicatesThatOverflowsIsCounted) {
  TempDir dir;
  ReadReport r;
  const auto a = read_matrix_market<float>(
      dir.write("sum.mtx", kGeneralBanner() + "1 1 2\n1 1 3e38\n1 1 3e38\n"), {}, &r);
  EXPECT_TRUE(std::isinf(a.values(0)));
  EXPECT_EQ(r.overflow.count, 1);
  EXPECT_EQ(r.overflow.first_line, 0);
  ASSERT_EQ(r.warnings.size(), 1u);
  EXPECT_NE(r.warnings[0].find("sums of duplicate entries"), std::string::npos) << r.warnings[0];
}

TEST(MatrixMarketReport, SymmetricStorageWithBothTrianglesIsReported) {
  TempDir dir;
  const std::string sym = "%%MatrixMarket matrix coordinate real symmetric\n3 3 4\n";
  ReadReport lower, upper, both, skew;
  read_matrix_market<double>(dir.write("l.mtx", sym + "1 1 1\n2 1 2\n3 1 3\n3 3 1\n"), {}, &lower);
  EXPECT_EQ(lower.both_triangles_line, 0);
  EXPECT_TRUE(lower.warnings.empty());
  read_matrix_market<double>(dir.write("u.mtx", sym + "1 2 2\n1 1 1\n1 3 3\n3 3 1\n"), {}, &upper);
  EXPECT_EQ(upper.both_triangles_line, 0);
  const auto a = read_matrix_market<double>(
      dir.write("b.mtx", sym + "2 1 2\n1 1 1\n3 3 1\n1 2 2\n"), {}, &both);
  EXPECT_EQ(both.both_triangles_line, 6);
  ASSERT_EQ(both.warnings.size(), 1u);
  EXPECT_NE(both.warnings[0].find("both sides of the diagonal (line 6)"), std::string::npos)
      << both.warnings[0];
  EXPECT_EQ(a.values(1), 4.0);  // (1, 2): 2 stored in each triangle, mirrored and summed
  read_matrix_market<double>(
      dir.write("s.mtx",
                "%%MatrixMarket matrix coordinate real skew-symmetric\n3 3 2\n"
                "2 1 2\n1 3 1\n"),
      {}, &skew);
  EXPECT_EQ(skew.both_triangles_line, 4);
}

// ---- standard input and output --------------------------------------------------------------

// While alive, file descriptor `fd` (0 or 1) is `replacement`.
class Redirect {
 public:
  Redirect(int fd, int replacement) : fd_(fd), saved_(dup(fd)) { dup2(replacement, fd); }
  ~Redirect() {
    dup2(saved_, fd_);
    close(saved_);
  }

 private:
  int fd_, saved_;
};

TEST(MatrixMarketStreams, DashReadsStandardInputPlainOrGzipFromAPipe) {
  TempDir dir;
  const auto a = kspmv::test::random_matrix<double>(300, 200, 6, 5);
  for (const std::string ext : {".mtx", ".mtx.gz"}) {
    SCOPED_TRACE(ext);
    const auto path = dir.file("a" + ext);
    write_matrix_market(path, a);
    const std::string bytes = read_file(path);
    int p[2];
    ASSERT_EQ(pipe(p), 0);
    std::thread feed([&] {  // a pipe cannot rewind
      for (std::size_t done = 0; done < bytes.size();) {
        const ssize_t n = ::write(p[1], bytes.data() + done, bytes.size() - done);
        if (n <= 0) break;
        done += std::size_t(n);
      }
      close(p[1]);
    });
    {
      Redirect in(0, p[0]);
      try {
        expect_same(read_matrix_market<double>("-"), a);
      } catch (const std::exception& e) {
        ADD_FAILURE() << e.what();
      }
    }
    feed.join();
    close(p[0]);
  }
}

TEST(MatrixMarketStreams, DashWritesStandardOutput) {
  TempDir dir;
  const auto a = kspmv::test::zoo<double>()[3].second;
  const std::string captured = dir.file("stdout.txt");
  {
    const int fd = open(captured.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    ASSERT_GE(fd, 0);
    std::fflush(stdout);
    Redirect out(1, fd);
    close(fd);
    const fs::path cwd = fs::current_path();
    fs::current_path(dir.file(""));  // a file named "-" would appear here
    write_matrix_market("-", a);
    fs::current_path(cwd);
  }
  expect_same(read_matrix_market<double>(captured), a);
  EXPECT_FALSE(fs::exists(dir.file("-")));
}

// ---- writes: replace on success only, never remove what kspmv did not create -----------------

TEST(MatrixMarketWrite, NothingAppearsUnderTheNameBeforeClose) {
  TempDir dir;
  const std::string path = dir.file("out.mtx");
  {
    kspmv::io::detail::TextWriter out(path);
    for (int k = 0; k < 100000; ++k) out.write("% more than one buffer: written to disk\n");
    EXPECT_FALSE(fs::exists(path));
  }  // no close(): an interrupted write
  EXPECT_FALSE(fs::exists(path));
  EXPECT_TRUE(dir.names().empty());
}

TEST(MatrixMarketWrite, FailedWriteKeepsTheOldFileAndLeavesNoTemporary) {
  TempDir dir;
  const std::string path = dir.write("out.mtx", "old content\n");
  const auto a = kspmv::test::random_matrix<double>(2000, 2000, 10, 3);
  rlimit saved{};
  getrlimit(RLIMIT_FSIZE, &saved);
  rlimit small = saved;
  small.rlim_cur = 64 << 10;  // a write past 64 KiB fails with EFBIG
  const auto old_handler = std::signal(SIGXFSZ, SIG_IGN);
  setrlimit(RLIMIT_FSIZE, &small);
  for (const std::string target : {path, dir.file("new.mtx.gz")}) {
    try {
      write_matrix_market(target, a);
      ADD_FAILURE() << "no error writing " << target;
    } catch (const kspmv::Error& e) {
      EXPECT_NE(std::string(e.what()).find("write error"), std::string::npos) << e.what();
    }
  }
  setrlimit(RLIMIT_FSIZE, &saved);
  std::signal(SIGXFSZ, old_handler);
  EXPECT_EQ(read_file(path), "old content\n");
  EXPECT_EQ(dir.names(), std::vector<std::string>{"out.mtx"});
}

TEST(MatrixMarketWrite, ReplacingKeepsTheModeAndSymbolicLinks) {
  TempDir dir;
  const auto a = kspmv::test::zoo<double>()[3].second;
  const std::string real = dir.write("real.mtx", "old\n"), link = dir.file("link.mtx");
  fs::permissions(real, fs::perms::owner_read | fs::perms::owner_write | fs::perms::group_read);
  fs::create_symlink("real.mtx", link);
  write_matrix_market(link, a);
  EXPECT_TRUE(fs::is_symlink(link));
  expect_same(read_matrix_market<double>(real), a);
  EXPECT_EQ(fs::status(real).permissions() & fs::perms::all,
            fs::perms::owner_read | fs::perms::owner_write | fs::perms::group_read);
  EXPECT_EQ(dir.names(), (std::vector<std::string>{"link.mtx", "real.mtx"}));
}

TEST(MatrixMarketWrite, FailedWriteToADeviceRemovesNothing) {
  if (!fs::exists("/dev/full")) GTEST_SKIP() << "no /dev/full";
  TempDir dir;
  const std::string link = dir.file("full.mtx");
  fs::create_symlink("/dev/full", link);
  EXPECT_THROW(write_matrix_market(link, kspmv::test::random_matrix<double>(2000, 2000, 10, 3)),
               kspmv::Error);
  EXPECT_TRUE(fs::is_symlink(link));
  EXPECT_TRUE(fs::exists("/dev/full"));
  EXPECT_EQ(dir.names(), std::vector<std::string>{"full.mtx"});
}

}  // namespace
