// kspmv info: size, storage and row statistics of a matrix (analysis::analyze).
#include <cstdio>
#include <iostream>

#include "commands.hpp"
#include "common.hpp"
#include "json.hpp"
#include "kspmv/analysis/row_stats.hpp"
#include "kspmv/io/matrix_market.hpp"

namespace kspmv::cli {

namespace {

int run(const ParsedArgs& args) {
  const std::string& source = args.positionals[0];
  const bool is_file = source.compare(0, 4, "gen:") != 0;
  io::ReadReport report;
  const io::MatrixMarketInfo& header = report.info;
  CsrMatrix<double> a;
  if (is_file) {
    a = io::read_matrix_market<double>(source, {}, &report);
    print_warnings(source, report);
  } else {
    a = load_matrix<double>(source);
  }
  const analysis::RowStats s = analysis::analyze(a);

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
    return 0;
  }
  JsonWriter j(std::cout);
  j.begin_object().field("matrix", source);
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
  j.end_array().end_object();
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
                      "R.\nValues that are NaN, infinite or out of range are counted.\n\n") +
                  kMatrixArgumentHelp;
  c.positionals = {"FILE|gen:SPEC"};
  c.options = {{"json", "", "print one JSON object instead of text"}};
  c.run = run;
  return c;
}

}  // namespace kspmv::cli
