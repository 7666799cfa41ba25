// Row statistics and MSREP's power-law exponent.
#include "kspmv/analysis/row_stats.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "kspmv/analysis/analyze.hpp"
#include "kspmv/core/error.hpp"

namespace kspmv::analysis {

namespace {
// Least-squares fit of log(density) against log(k) over power-of-two bins of the positive
// counts count(0..n) (MSREP Sec. 5.2: P(k) ~ k^-R); returns -slope, NaN with < 2 bins.
template <class Count>
double fit_exponent(Offset n, const Count& count) {
  Offset bins[64] = {};
  for (Offset i = 0; i < n; ++i) {
    const Offset k = count(i);
    if (k <= 0) continue;
    int b = 0;
    while ((k >> (b + 1)) != 0) ++b;
    ++bins[b];
  }
  return power_law_exponent_of_bins(bins);
}
}  // namespace

double power_law_exponent_of_bins(const Offset (&bins)[64]) {
  double sx = 0, sy = 0, sxx = 0, sxy = 0;
  int used = 0;
  for (int b = 0; b < 63; ++b) {
    if (bins[b] == 0) continue;
    const double lo = std::ldexp(1.0, b), hi = std::ldexp(1.0, b + 1) - 1;
    const double x = 0.5 * (std::log(lo) + std::log(hi));  // log of the bin's geometric centre
    const double y = std::log(double(bins[b]) / lo);       // bin width 2^b counts
    sx += x, sy += y, sxx += x * x, sxy += x * y, ++used;
  }
  if (used < 2) return std::numeric_limits<double>::quiet_NaN();
  const double slope = (used * sxy - sx * sy) / (used * sxx - sx * sx);
  return -slope;
}

double power_law_exponent(const Offset* ptr, Offset len) {
  return fit_exponent(len, [&](Offset i) { return ptr[i + 1] - ptr[i]; });
}

double power_law_exponent(const HostView<Offset>& ptr) {
  return power_law_exponent(ptr.data(), ptr.extent(0) > 0 ? Offset(ptr.extent(0)) - 1 : 0);
}

RowStats row_stats(const Offset* row_ptr, Ordinal m, Ordinal ncols, Offset max_len) {
  if (m < 0) throw InvalidArgument("row_stats: negative row count " + std::to_string(m));
  RowStats s;
  s.ncols = ncols;
  for (Offset t : {32, 256, 4096, 65536}) s.rows_above.emplace_back(t, 0);
  const bool all = max_len == std::numeric_limits<Offset>::max();
  s.power_law_r = all ? power_law_exponent(row_ptr, m) : fit_exponent(m, [&](Offset i) {
    const Offset k = row_ptr[i + 1] - row_ptr[i];
    return k <= max_len ? k : 0;
  });
  s.min_row = std::numeric_limits<Offset>::max();
  for (Ordinal i = 0; i < m; ++i) {
    const Offset k = row_ptr[i + 1] - row_ptr[i];
    if (k > max_len) continue;
    ++s.nrows, s.nnz += k;
    s.min_row = std::min(s.min_row, k);
    if (k > s.max_row || s.nrows == 1) s.max_row = k, s.longest_row = i;
    s.empty_rows += k == 0;
    for (auto& [threshold, count] : s.rows_above) count += k > threshold;
  }
  if (s.nrows == 0) {
    s.min_row = 0;
    return s;
  }
  s.mean_row = double(s.nnz) / s.nrows;
  double squares = 0;  // a second pass: deviations from the mean, without cancellation
  for (Ordinal i = 0; i < m; ++i) {
    const Offset k = row_ptr[i + 1] - row_ptr[i];
    if (k <= max_len) squares += (k - s.mean_row) * (k - s.mean_row);
  }
  s.stddev_row = std::sqrt(squares / s.nrows);
  return s;
}

RowStats analyze(const HostView<Offset>& row_ptr, Ordinal ncols) {
  const std::size_t len = row_ptr.extent(0);
  if (len > std::size_t(std::numeric_limits<Ordinal>::max()) + 1)
    throw InvalidArgument("analyze: row_ptr has more than 2^31 rows");
  return row_stats(row_ptr.data(), len > 0 ? static_cast<Ordinal>(len - 1) : 0, ncols);
}

template <class S>
RowStats analyze(const CsrMatrix<S>& a) {
  RowStats s = analyze(a.row_ptr, a.ncols);
  HostView<Offset> per_column("kspmv::analysis::column_counts", a.ncols);
  const auto col = a.col_idx;
  for (Offset k = 0; k < s.nnz; ++k) {
    if (col(k) < 0 || col(k) >= a.ncols)
      throw InvalidArgument("analyze: column index " + std::to_string(col(k)) + " at position " +
                            std::to_string(k) + " is outside [0, " + std::to_string(a.ncols) + ")");
    ++per_column(col(k));
  }
  s.power_law_r = fit_exponent(a.ncols, [&](Offset j) { return per_column(j); });
  return s;
}

std::string summary(const RowStats& s) {
  char buf[256];
  std::snprintf(buf, sizeof buf,
                "%d x %d, nnz %lld, per row mean %.3g max %lld std %.3g, %d empty rows, R=%.3g",
                s.nrows, s.ncols, static_cast<long long>(s.nnz), s.mean_row,
                static_cast<long long>(s.max_row), s.stddev_row, s.empty_rows, s.power_law_r);
  return buf;
}

template RowStats analyze<float>(const CsrMatrix<float>&);
template RowStats analyze<double>(const CsrMatrix<double>&);

}  // namespace kspmv::analysis
