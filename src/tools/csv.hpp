// The result files of the benchmarks: CSV with one Record per row (the keys of the first as the
// header), and the CSV, JSON and summary a GPU benchmark writes.
#pragma once

#include <string>
#include <vector>

#include "tools/json.hpp"

namespace kspmv::tools {

// `v` as %.6g, empty when not finite: a CSV number, and the numbers of the benchmarks' logs.
std::string fmt(double v);

// Writes the header (the keys of rows[0]) and one line per row to `path`. Values: null and
// non-finite numbers empty, booleans 1 or 0, numbers as fmt().
void write_csv(const std::string& path, const std::vector<Record>& rows);

// In `dir` (created): NAME.csv of `rows`; NAME.json of `header` and `full` (the rows with what
// only the JSON holds); summary.json of `header` and the `summary_keys` of each row.
void write_results(const std::string& dir, const std::string& name, const Record& header,
                   const std::vector<Record>& rows, const std::vector<Record>& full,
                   const std::vector<std::string>& summary_keys);

}  // namespace kspmv::tools
