// What the Matrix Market tests share: a scratch directory and the bit-exact comparison of two
// matrices.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>
#include <system_error>
#include <vector>

#include "kspmv/formats/csr.hpp"

namespace kspmv::test {

// A fresh directory under the system temporary directory, removed with everything in it.
class TempDir {
 public:
  TempDir() {
    static std::atomic<int> counter{0};
    const auto stamp = std::chrono::steady_clock::now().time_since_epoch().count();
    path_ = std::filesystem::temp_directory_path() /
            ("kspmv_mm_test_" + std::to_string(stamp) + "_" + std::to_string(counter++));
    std::filesystem::create_directories(path_);
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  std::string file(const std::string& name) const { return (path_ / name).string(); }
  std::string write(const std::string& name, const std::string& text) const {
    const std::string p = file(name);
    std::ofstream(p, std::ios::binary) << text;
    return p;
  }
  // The names of the files in the directory.
  std::vector<std::string> names() const {
    std::vector<std::string> n;
    for (const auto& e : std::filesystem::directory_iterator(path_))
      n.push_back(e.path().filename().string());
    std::sort(n.begin(), n.end());
    return n;
  }

 private:
  std::filesystem::path path_;
};

template <class S>
void expect_same(const CsrMatrix<S>& a, const CsrMatrix<S>& b) {
  ASSERT_EQ(a.nrows, b.nrows);
  ASSERT_EQ(a.ncols, b.ncols);
  ASSERT_EQ(a.nnz(), b.nnz());
  for (Ordinal i = 0; i <= a.nrows; ++i) ASSERT_EQ(a.row_ptr(i), b.row_ptr(i)) << "row_ptr " << i;
  for (Offset k = 0; k < a.nnz(); ++k) {
    ASSERT_EQ(a.col_idx(k), b.col_idx(k)) << "entry " << k;
    ASSERT_TRUE(a.values(k) == b.values(k) ||
                (a.values(k) != a.values(k) && b.values(k) != b.values(k)))
        << "entry " << k << ": " << a.values(k) << " and " << b.values(k);  // exact, NaN as NaN
  }
}

}  // namespace kspmv::test
