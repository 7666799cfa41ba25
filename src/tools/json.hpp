// A minimal streaming JSON writer for the tool's --json output (one compact object per run).
#pragma once

#include <ostream>
#include <string>
#include <type_traits>
#include <vector>

namespace kspmv::tools {

class JsonWriter {
 public:
  explicit JsonWriter(std::ostream& out) : out_(out) {}

  JsonWriter& begin_object();
  JsonWriter& end_object();
  JsonWriter& begin_array();
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

  template <class T>
  JsonWriter& field(const std::string& name, const T& v) {
    key(name);
    return value(v);
  }

 private:
  void separate();  // a comma before every element but the first of its container

  std::ostream& out_;
  std::vector<bool> first_;  // one entry per open container
  bool after_key_ = false;
};

// `s` as a quoted JSON string literal.
std::string json_quote(const std::string& s);

}  // namespace kspmv::tools
