// kspmv info: size, storage and row statistics of a matrix (analysis::analyze).
#include <cstdio>
#include <iostream>

#include "commands.hpp"
#include "kspmv/analysis/analyze.hpp"
#include "kspmv/io/matrix_market.hpp"
#include "tools/common.hpp"
#include "tools/json.hpp"

namespace kspmv::cli {

namespace {

int run(const ParsedArgs& args) {
  const std::string& source = args.positionals[0];
  const bool is_file = source.compare(0, 4, "gen:") != 0;
  io::MatrixMarketInfo header;
  if (is_file) header = io::read_matrix_market_info(source);
  const auto a = load_matrix<double>(source);
  const analysis::RowStats s = analysis::analyze(a);

  if (!args.flag("json")) {
    std::printf("matrix     %s\n", source.c_str());
    if (is_file)
      std::printf("file       %s %s, %lld entries stored\n", header.field.c_str(),
                  header.symmetry.c_str(), static_cast<long long>(header.entries));
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
        .field("entries_stored", header.entries);
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
                      "R.\n\n") +
                  kMatrixArgumentHelp;
  c.positionals = {"FILE|gen:SPEC"};
  c.options = {{"json", "", "print one JSON object instead of text"}};
  c.run = run;
  return c;
}

}  // namespace kspmv::cli
