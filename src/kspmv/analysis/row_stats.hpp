// Row statistics of a sparse matrix and the power-law exponent R of MSREP (Sec. 5.2).
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "kspmv/formats/csr.hpp"

namespace kspmv::analysis {

struct RowStats {
  Ordinal nrows = 0, ncols = 0;
  Offset nnz = 0;
  Offset min_row = 0, max_row = 0;      // shortest and longest row (0 for a matrix without rows)
  double mean_row = 0, stddev_row = 0;  // population standard deviation
  Ordinal empty_rows = 0;
  // (threshold, number of rows longer than threshold) for thresholds 32, 256, 4096, 65536.
  std::vector<std::pair<Offset, Ordinal>> rows_above;
  // MSREP's exponent R of P(k) ~ k^-R: from the non-zeros per column when the matrix is given,
  // from the non-zeros per row when only row_ptr is (see power_law_exponent). NaN when the
  // counts take fewer than two octaves' worth of values (no slope to fit).
  double power_law_r = 0;
};

// Statistics from row_ptr alone (R from the row-length distribution).
RowStats analyze(const HostView<Offset>& row_ptr, Ordinal ncols);
// Statistics of a CSR matrix (R from the column counts, as MSREP defines it).
template <class S>
RowStats analyze(const CsrMatrix<S>& a);

// R of P(k) ~ k^-R for the counts k = ptr(i+1) - ptr(i) of a row or column pointer array
// (MSREP Sec. 5.2): least-squares slope of log density against log k over power-of-two bins
// [2^b, 2^(b+1)) of the non-zero counts; empty rows/columns do not enter. NaN if fewer than two
// bins are occupied.
double power_law_exponent(const HostView<Offset>& ptr);

// One line: "m x n, nnz N, per row mean/max/std, E empty rows, R=...".
std::string summary(const RowStats& s);

}  // namespace kspmv::analysis
