// Row statistics of a sparse matrix and the power-law exponent R of MSREP (Sec. 5.2), from a row
// pointer alone. Kokkos-free: the CUDA backend reads the same statistics (analyze.hpp has the
// View and CsrMatrix overloads).
#pragma once

#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "kspmv/core/types.hpp"

namespace kspmv::analysis {

struct RowStats {
  Ordinal nrows = 0, ncols = 0;         // nrows: the rows counted (see row_stats' max_len)
  Offset nnz = 0;                       // non-zeros of the rows counted
  Offset min_row = 0, max_row = 0;      // shortest and longest row (0 for a matrix without rows)
  Ordinal longest_row = 0;              // the first row counted that holds max_row non-zeros
  double mean_row = 0, stddev_row = 0;  // population standard deviation
  Ordinal empty_rows = 0;
  // (threshold, number of rows longer than threshold) for thresholds 32, 256, 4096, 65536.
  std::vector<std::pair<Offset, Ordinal>> rows_above;
  // MSREP's exponent R of P(k) ~ k^-R: from the non-zeros per column when the matrix is given,
  // from the non-zeros per row when only row_ptr is (see power_law_exponent). NaN when the
  // counts take fewer than two octaves' worth of values (no slope to fit).
  double power_law_r = 0;

  // Coefficient of variation of the row lengths, stddev / mean (0 when the mean is 0).
  double cv() const { return mean_row > 0 ? stddev_row / mean_row : 0; }
};

// Statistics of the rows of row_ptr[0..m] that hold at most `max_len` non-zeros (all rows by
// default; R from the row lengths). Throws InvalidArgument for a negative m.
RowStats row_stats(const Offset* row_ptr, Ordinal m, Ordinal ncols,
                   Offset max_len = std::numeric_limits<Offset>::max());

// R of P(k) ~ k^-R for the counts k = ptr[i+1] - ptr[i], i < len, of a row or column pointer
// (MSREP Sec. 5.2): least-squares slope of log density against log k over power-of-two bins
// [2^b, 2^(b+1)) of the non-zero counts; empty rows/columns do not enter. NaN if fewer than two
// bins are occupied.
double power_law_exponent(const Offset* ptr, Offset len);
// The same fit from the counts already binned: bins[b] counts the rows (or columns) with
// 2^b <= k < 2^(b+1) non-zeros (a histogram computed on a device, for one).
double power_law_exponent_of_bins(const Offset (&bins)[64]);

// One line: "m x n, nnz N, per row mean/max/std, E empty rows, R=...".
std::string summary(const RowStats& s);

}  // namespace kspmv::analysis
