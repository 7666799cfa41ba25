// kspmv info: size, storage and row statistics of a matrix (analysis::analyze).
#include <cmath>
#include <cstdio>
#include <iostream>

#include "commands.hpp"
#include "kspmv/analysis/analyze.hpp"
#include "kspmv/io/matrix_market.hpp"
#include "tools/common.hpp"
#include "tools/json.hpp"

namespace kspmv::cli {

namespace {

// The statistics of all `nrows` rows from those of some of them, every non-empty one among them
// (the rows left out are empty): the sum of squared deviations is the subset's, moved to the
// new mean, plus the empty rows'.
analysis::RowStats with_empty_rows(analysis::RowStats s, Ordinal nrows) {
  const Ordinal missing = nrows - s.nrows;
  if (missing == 0) return s;
  const double mean = double(s.nnz) / nrows, shift = s.mean_row - mean;
  const double squares =
      s.nrows * (s.stddev_row * s.stddev_row + shift * shift) + missing * mean * mean;
  s.nrows = nrows;
  s.empty_rows += missing;
  s.min_row = 0;
  s.mean_row = mean;
  s.stddev_row = std::sqrt(squares / nrows);
  return s;
}

int run(const ParsedArgs& args) {
  const std::string& source = args.positionals[0];
  const bool is_file = source.compare(0, 4, "gen:") != 0;
  io::ReadReport report;
  const io::MatrixMarketInfo& header = report.info;
  analysis::RowStats s;
  if (is_file) {  // from the pattern alone, in memory in proportion to the entries
    const io::PatternCounts counts = io::read_matrix_market_counts(source, {}, report);
    print_warnings(source, report);
    s = with_empty_rows(analysis::analyze(counts.row_ptr, header.ncols), header.nrows);
    s.power_law_r = analysis::power_law_exponent(counts.col_ptr);
  } else {
    s = analysis::analyze(load_matrix<double>(source));
  }

  if (!args.flag("json")) {
    std::printf("matrix     %s\n", source.c_str());
    if (is_file)
      std::printf("file       %s %s, %lld entries stored\n", header.field.c_str(),
                  header.symmetry.c_str(), static_cast<long long>(header.entries));
    if (report.nonfinite.count + report.overflow.count + report.underflow.count > 0)
      std::printf("values     %lld NaN or infinite, %lld overflow, %lld underflow to 0\n",
                  static_cast<long long>(report.nonfinite.count),
                  static_cast<long long>(report.overflow.count),
                  static_cast<long long>(report.underflow.count));
    std::printf("rows       %s\n", analysis::summary(s).c_str());
    std::string above;
    for (const auto& [threshold, rows] : s.rows_above)
      above +=
          (above.empty() ? "" : ", ") + std::to_string(rows) + " > " + std::to_string(threshold);
    if (!above.empty()) std::printf("long rows  %s\n", above.c_str());
    std::printf("build      %s\n", to_string(kokkos_build()).c_str());
    return 0;
  }
  JsonWriter j(std::cout);
  begin_output(j).field("matrix", source);
  if (is_file) {
    j.field("field", header.field)
        .field("symmetry", header.symmetry)
        .field("entries_stored", header.entries)
        .field("nonfinite_values", report.nonfinite.count)
        .field("overflow_values", report.overflow.count)
        .field("underflow_values", report.underflow.count);
  }
  j.field("nrows", s.nrows)
      .field("ncols", s.ncols)
      .field("nnz", s.nnz)
      .field("min_row", s.min_row)
      .field("max_row", s.max_row)
      .field("mean_row", s.mean_row)
      .field("stddev_row", s.stddev_row)
      .field("empty_rows", s.empty_rows)
      .field("power_law_r", s.power_law_r)
      .key("rows_above")
      .begin_array();
  for (const auto& [threshold, rows] : s.rows_above)
    j.begin_object().field("length", threshold).field("rows", rows).end_object();
  j.end_array();
  const KokkosBuild kokkos = kokkos_build();
  j.field("kokkos_version", kokkos.version)
      .field("host_execution_space", kokkos.host_space)
      .field("host_threads", kokkos.host_threads)
      .field("default_execution_space", kokkos.default_space)
      .end_object();
  return 0;
}

}  // namespace

Command info_command() {
  Command c;
  c.name = "info";
  c.summary = "size and row statistics of a matrix";
  c.description = std::string(
                      "Prints the size, how a file stores the matrix, and the row statistics that "
                      "choose\nthe kernel: row lengths (mean, maximum, standard deviation), empty "
                      "rows, rows\nlonger than a few thresholds, and MSREP's power-law exponent "
                      "R.\nA file is read without keeping its values; those that are NaN, "
                      "infinite or out\nof range are counted. The last line names the Kokkos "
                      "of this build, its host\nexecution space and threads, and its default "
                      "execution space.\n\n") +
                  kMatrixArgumentHelp;
  c.positionals = {"FILE|gen:SPEC"};
  c.options = {{"json", "", "print one JSON object instead of text"}};
  c.run = run;
  return c;
}

}  // namespace kspmv::cli
