// A minimal streaming JSON writer for the tool's --json output and the benchmarks' result files,
// and Record: one result as named values, written as a JSON object or a CSV row (csv.hpp).
#pragma once

#include <cstddef>
#include <ostream>
#include <string>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

namespace kspmv::tools {

// A value of a record: null (a missing value), a boolean, an integer, a number or a string.
// Implicit conversions, so that a record reads as a table: {{"rows", a.nrows}, {"ms", ms}}.
struct Value {
  std::variant<std::nullptr_t, bool, long long, double, std::string> v;

  Value(std::nullptr_t) {}
  Value(bool b) : v(b) {}
  Value(double d) : v(d) {}
  Value(std::string s) : v(std::move(s)) {}
  Value(const char* s) : v(std::string(s)) {}
  template <class T, std::enable_if_t<std::is_integral_v<T> && !std::is_same_v<T, bool>, int> = 0>
  Value(T i) : v(static_cast<long long>(i)) {}
};

using Record = std::vector<std::pair<std::string, Value>>;

class JsonWriter {
 public:
  explicit JsonWriter(std::ostream& out) : out_(out) {}

  JsonWriter& begin_object();
  JsonWriter& end_object();
  // one_per_line: each element on a line of its own (a benchmark's results).
  JsonWriter& begin_array(bool one_per_line = false);
  JsonWriter& end_array();
  JsonWriter& key(const std::string& name);

  JsonWriter& value(const std::string& s);
  JsonWriter& value(const char* s) { return value(std::string(s)); }
  JsonWriter& value(bool b);
  JsonWriter& value(double d);  // NaN and infinities are written as null
  JsonWriter& null();
  template <class T, std::enable_if_t<std::is_integral_v<T> && !std::is_same_v<T, bool>, int> = 0>
  JsonWriter& value(T v) {
    separate();
    out_ << std::to_string(v);
    return *this;
  }
  JsonWriter& value(std::nullptr_t);
  JsonWriter& value(const Value& v);
  JsonWriter& value(const Record& r);  // an object

  template <class T>
  JsonWriter& field(const std::string& name, const T& v) {
    key(name);
    return value(v);
  }

 private:
  struct Open {
    bool first = true, one_per_line = false;
  };
  void separate();  // a comma before every element but the first of its container
  JsonWriter& close(char c);

  std::ostream& out_;
  std::vector<Open> open_;  // the open containers, innermost last
  bool after_key_ = false;
};

// Opens the top-level object of a JSON output of the tool or a benchmark with the fields that say
// which kspmv wrote it: "kspmv_version" (<kspmv/version.hpp>) and "kspmv_commit".
JsonWriter& begin_output(JsonWriter& j);

// `s` as a quoted JSON string literal.
std::string json_quote(const std::string& s);

// The fields of `r` named in `keys`, in that order (InvalidArgument for a key `r` lacks).
Record select(const Record& r, const std::vector<std::string>& keys);

// A benchmark's result file: {begin_output's fields, the fields of `header`, "results": [one
// record per line]}.
void write_json(const std::string& path, const Record& header, const std::vector<Record>& results);

}  // namespace kspmv::tools
