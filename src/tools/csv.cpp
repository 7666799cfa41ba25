#include "tools/csv.hpp"

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>

#include "kspmv/core/error.hpp"

namespace kspmv::tools {

namespace {

// A CSV field: quoted when it holds a comma, a quote or a line break (generator specs hold
// commas).
std::string csv_field(const std::string& s) {
  if (s.find_first_of(",\"\n\r") == std::string::npos) return s;
  std::string q = "\"";
  for (const char c : s) q += c == '"' ? std::string("\"\"") : std::string(1, c);
  return q + "\"";
}

struct CsvText {
  std::string operator()(std::nullptr_t) const { return ""; }
  std::string operator()(bool b) const { return b ? "1" : "0"; }
  std::string operator()(long long i) const { return std::to_string(i); }
  std::string operator()(double d) const { return fmt(d); }
  std::string operator()(const std::string& s) const { return csv_field(s); }
};

}  // namespace

std::string fmt(double v) {
  if (!std::isfinite(v)) return "";
  char b[32];
  std::snprintf(b, sizeof b, "%.6g", v);
  return b;
}

void write_csv(const std::string& path, const std::vector<Record>& rows) {
  std::ofstream out(path);
  if (!out) throw Error("cannot write " + path);
  const auto line = [&](const Record& r, bool header) {
    for (std::size_t k = 0; k < r.size(); ++k)
      out << (k ? "," : "")
          << (header ? csv_field(r[k].first) : std::visit(CsvText{}, r[k].second.v));
    out << '\n';
  };
  if (!rows.empty()) line(rows[0], true);
  for (const Record& r : rows) line(r, false);
}

void write_results(const std::string& dir, const std::string& name, const Record& header,
                   const std::vector<Record>& rows, const std::vector<Record>& full,
                   const std::vector<std::string>& summary_keys) {
  const std::filesystem::path out = dir;
  std::filesystem::create_directories(out);
  write_csv(out / (name + ".csv"), rows);
  write_json(out / (name + ".json"), header, full);
  std::vector<Record> summary;
  for (const Record& r : rows) summary.push_back(select(r, summary_keys));
  write_json(out / "summary.json", header, summary);
}

}  // namespace kspmv::tools
