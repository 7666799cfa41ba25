// Matrices and block sizes shared by the HBP tests (host preprocessing and kernel, GPU
// preprocessing and kernel): the zoo, generated families and the shared Matrix Market files.
#pragma once

#include <cstdlib>
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include "kspmv/core/error.hpp"
#include "kspmv/formats/hbp.hpp"
#include "kspmv/gen/generators.hpp"
#include "kspmv/io/matrix_market.hpp"
#include "seg_test_cases.hpp"

namespace kspmv::test::hbp {

// The zoo (with a 10^5-entry row), and small members of the generated families.
template <class S>
std::vector<std::pair<std::string, CsrMatrix<S>>> matrices() {
  auto z = seg::matrices<S>();
  for (const char* spec : {"laplace2d:n=100", "stencil27:n=14", "uniform:rows=5000,k=8",
                           "kron:scale=12", "rgg:scale=12", "kmer:rows=6000", "fullchip:rows=4000",
                           "laplace2d:n=60+longrows:count=3,len=3000"})
    z.emplace_back(spec, gen::from_spec<S>(spec));
  return z;
}

// Block sizes: the paper's 512 x 4096, small blocks (many blocks and block columns, x segments
// cut short), the largest rows with columns whose double x segment still fits the shared memory
// of an H100 (128 KB), and the extremes of the fixed/competitive split.
inline std::vector<HbpParams> params() {
  return {HbpParams{}, HbpParams{32, 64, 0.5}, HbpParams{96, 1000, 0.0},
          HbpParams{1024, 16384, 1.0}};
}

inline std::string describe(const HbpParams& p) {
  return "blocks " + std::to_string(p.block_rows) + " x " + std::to_string(p.block_cols) +
         ", fixed " + std::to_string(p.fixed_fraction);
}

// The Matrix Market files of the directory named by $KSPMV_MATRICES (the GPU suite sets it)
// with at most `max_entries` stored entries. Empty when it is unset or not a directory: the
// tests never need them.
inline std::vector<std::filesystem::path> shared_matrix_files(Offset max_entries) {
  namespace fs = std::filesystem;
  const char* dir = std::getenv("KSPMV_MATRICES");
  std::error_code ec;
  if (!dir || !fs::is_directory(dir, ec)) return {};
  std::vector<fs::path> files;
  for (const auto& e : fs::directory_iterator(dir)) {
    const std::string f = e.path().filename().string();
    if (f.find(".mtx") == std::string::npos) continue;
    try {
      const auto info = io::read_matrix_market_info(e.path().string());
      if (info.field != "complex" && info.entries <= max_entries) files.push_back(e.path());
    } catch (const Error&) {  // array or unreadable files are not in the set
    }
  }
  std::sort(files.begin(), files.end());
  return files;
}

}  // namespace kspmv::test::hbp
