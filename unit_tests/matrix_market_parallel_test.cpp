// The Matrix Market reader on several threads: files of several MiB, cut into pieces that are
// parsed apart and joined in file order, give what one thread gives: the same matrix bit for bit,
// the same report (counts and first lines), the same error at the same line wherever it lies.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <functional>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "kspmv/core/error.hpp"
#include "kspmv/io/matrix_market.hpp"
#include "kspmv/io/text_file.hpp"
#include "mm_test_files.hpp"
#include "thread_count.hpp"

namespace kspmv::test {
namespace {

using io::read_matrix_market;
using io::ReadReport;

// What one read gave.
struct Outcome {
  bool ok = false;
  std::string error;
  CsrMatrix<double> a;
  ReadReport report;
};

Outcome read_on(const std::string& path, int threads) {
  const ThreadCount t(threads);
  Outcome r;
  try {
    r.a = read_matrix_market<double>(path, {}, &r.report);
    r.ok = true;
  } catch (const Error& e) {
    r.error = e.what();
  }
  return r;
}

void expect_same_outcome(const Outcome& one, const Outcome& many) {
  ASSERT_EQ(one.ok, many.ok) << one.error << " | " << many.error;
  if (!one.ok) {
    EXPECT_EQ(one.error, many.error);
    return;
  }
  expect_same(one.a, many.a);
  for (auto [a, b] : {std::pair{&one.report.nonfinite, &many.report.nonfinite},
                      std::pair{&one.report.overflow, &many.report.overflow},
                      std::pair{&one.report.underflow, &many.report.underflow}}) {
    EXPECT_EQ(a->count, b->count);
    EXPECT_EQ(a->first_line, b->first_line);
  }
  EXPECT_EQ(one.report.both_triangles_line, many.report.both_triangles_line);
  EXPECT_EQ(one.report.warnings, many.report.warnings);
}

// A file of `rows` rows of `per_row` entries (about 6.5 MiB for 60000 x 5), row by row or in a
// shuffled order, with comments and blank lines among the entries; `edit(line, text)` may change
// the text of entry line `line` (1-based among the entries) before it is written.
std::string entries_file(const std::string& banner, Ordinal rows, int per_row, bool shuffled,
                         long declared_extra,
                         const std::function<void(long, std::string&)>& edit = {}) {
  std::mt19937_64 gen(rows);
  std::vector<Ordinal> order(rows);
  for (Ordinal i = 0; i < rows; ++i) order[i] = i;
  if (shuffled) std::shuffle(order.begin(), order.end(), gen);
  std::string body;
  long count = 0;
  char text[96];
  for (const Ordinal i : order) {
    for (int k = 0; k < per_row; ++k) {
      const Ordinal j = static_cast<Ordinal>(gen() % std::uint64_t(i + 1));  // lower triangle
      std::snprintf(text, sizeof text, "%d %d %.6g\n", i + 1, j + 1,
                    double(gen() % 2000000) / 1e6 - 1.0);
      std::string line = text;
      if (edit)
        edit(++count, line);
      else
        ++count;
      body += line;
      if (count % 20000 == 0) body += "% a comment among the entries\n\n";
    }
  }
  return banner + std::to_string(rows) + " " + std::to_string(rows) + " " +
         std::to_string(count + declared_extra) + "\n" + body;
}

const std::string kGeneral = "%%MatrixMarket matrix coordinate real general\n";
const std::string kSymmetric = "%%MatrixMarket matrix coordinate real symmetric\n";
const std::string kSkew = "%%MatrixMarket matrix coordinate real skew-symmetric\n";
const std::string kPattern = "%%MatrixMarket matrix coordinate pattern general\n";

// Each file is read on one thread and on four (pieces of at least 1 MiB: four of them), with
// `gzip` also compressed, and on two.
void expect_threads_agree(const std::string& name, const std::string& text, bool gzip = false) {
  SCOPED_TRACE(name);
  ASSERT_GT(text.size(), std::size_t(4) << 20);
  TempDir dir;
  const std::string plain = dir.write(name + ".mtx", text);
  const Outcome one = read_on(plain, 1);
  expect_same_outcome(one, read_on(plain, 4));
  if (!gzip) return;
  expect_same_outcome(one, read_on(plain, 2));
  const std::string gz = dir.file(name + ".mtx.gz");
  {
    io::detail::TextWriter out(gz);
    for (std::size_t at = 0; at < text.size(); at += 4096)  // write() takes 4096 bytes at most
      out.write(std::string_view(text).substr(at, 4096));
    out.close();
  }
  const Outcome compressed = read_on(gz, 4);
  if (one.ok) {
    expect_same_outcome(one, compressed);
  } else {  // the same error, in the other file
    ASSERT_FALSE(compressed.ok);
    EXPECT_EQ(one.error.substr(plain.size()), compressed.error.substr(gz.size()));
  }
}

constexpr Ordinal kRows = 60000;
constexpr int kPerRow = 5;  // 300000 entries

TEST(MatrixMarketThreads, RowOrderedFileGivesTheSameMatrix) {
  expect_threads_agree("rows", entries_file(kGeneral, kRows, kPerRow, false, 0), true);
}

TEST(MatrixMarketThreads, ShuffledFileWithDuplicatesGivesTheSameMatrix) {
  // Rows in random order, and entries repeated: duplicates are summed in file order.
  expect_threads_agree("shuffled",
                       entries_file(kGeneral, kRows, kPerRow, true, 0, [](long n, std::string& l) {
                         if (n % 7 == 0) l += l;
                       }));
}

TEST(MatrixMarketThreads, PatternFileGivesTheSameMatrix) {
  expect_threads_agree(
      "pattern", entries_file(kPattern, kRows, 7, false, 0,
                              [](long, std::string& l) { l = l.substr(0, l.rfind(' ')) + "\n"; }));
}

TEST(MatrixMarketThreads, ReportsCountAndPlaceLateValuesAndTriangles) {
  // NaN, overflow and underflow, and the upper triangle, first seen deep in the file.
  expect_threads_agree(
      "report", entries_file(kSymmetric, kRows, kPerRow, false, 0, [](long n, std::string& l) {
        const std::string at = l.substr(0, l.rfind(' '));
        if (n % 100000 == 77777) l = at + " nan\n";
        if (n % 90000 == 12345) l = at + " 1e400\n";
        if (n % 110000 == 4321) l = at + " 1e-400\n";
        if (n == 200001) l = "50001 52000 1.5\n";  // upper
      }));
}

TEST(MatrixMarketThreads, ErrorsDeepInTheFileAreTheSame) {
  const auto broken = [](long bad, std::string text) {
    return [bad, text](long n, std::string& l) {
      if (n == bad) l = text;
    };
  };
  const auto file = [](const std::string& banner,
                       const std::function<void(long, std::string&)>& edit) {
    return entries_file(banner, kRows, kPerRow, false, 0, edit);
  };
  expect_threads_agree("token", file(kGeneral, broken(270000, "5 5 1.0x\n")), true);
  expect_threads_agree("index", file(kGeneral, broken(220000, "60001 1 1.0\n")));
  expect_threads_agree("extra", file(kGeneral, broken(170001, "1 1 1.0 2.0\n")));
  expect_threads_agree("long", file(kGeneral, broken(190000, std::string(1100000, '1') + "\n")));
  // Skew-symmetric: the generated diagonal entries moved off it, one left deep in the file.
  expect_threads_agree("skew", file(kSkew, [](long n, std::string& l) {
                         int i = 0, j = 0;
                         std::sscanf(l.c_str(), "%d %d", &i, &j);
                         if (n == 280000)
                           l = "7 7 1.0\n";
                         else if (i == j)
                           l = i == 1 ? "2 1 0.5\n"
                                      : std::to_string(i) + " " + std::to_string(j - 1) + " 0.5\n";
                       }));
  // More entries than declared (the first too many in the third or fourth piece), or fewer.
  expect_threads_agree("too_many", entries_file(kGeneral, kRows, kPerRow, false, -90000));
  expect_threads_agree("too_few", entries_file(kGeneral, kRows, kPerRow, false, 3));
}

}  // namespace
}  // namespace kspmv::test
