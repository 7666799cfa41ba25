#include "tools/json.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>

#include "kspmv/core/error.hpp"
#include "kspmv/version.hpp"

namespace kspmv::tools {

std::string json_quote(const std::string& s) {
  std::string q = "\"";
  for (const char c : s) {
    switch (c) {
      case '"':
        q += "\\\"";
        break;
      case '\\':
        q += "\\\\";
        break;
      case '\n':
        q += "\\n";
        break;
      case '\r':
        q += "\\r";
        break;
      case '\t':
        q += "\\t";
        break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\u%04x", static_cast<unsigned>(c));
          q += buf;
        } else {
          q += c;
        }
    }
  }
  return q + "\"";
}

void JsonWriter::separate() {
  if (after_key_) {
    after_key_ = false;
    return;
  }
  if (open_.empty()) return;
  if (!open_.back().first) out_ << ',';
  if (open_.back().one_per_line) out_ << '\n';
  open_.back().first = false;
}

JsonWriter& JsonWriter::close(char c) {
  if (open_.back().one_per_line) out_ << '\n';
  open_.pop_back();
  out_ << c;
  if (open_.empty()) out_ << '\n';
  return *this;
}

JsonWriter& JsonWriter::begin_object() {
  separate();
  out_ << '{';
  open_.push_back({});
  return *this;
}

JsonWriter& JsonWriter::end_object() {
  return close('}');
}

JsonWriter& JsonWriter::begin_array(bool one_per_line) {
  separate();
  out_ << '[';
  open_.push_back({true, one_per_line});
  return *this;
}

JsonWriter& JsonWriter::end_array() {
  return close(']');
}

JsonWriter& JsonWriter::key(const std::string& name) {
  separate();
  out_ << json_quote(name) << ':';
  after_key_ = true;
  return *this;
}

JsonWriter& JsonWriter::value(const std::string& s) {
  separate();
  out_ << json_quote(s);
  return *this;
}

JsonWriter& JsonWriter::null() {
  separate();
  out_ << "null";
  return *this;
}

JsonWriter& JsonWriter::value(bool b) {
  separate();
  out_ << (b ? "true" : "false");
  return *this;
}

JsonWriter& JsonWriter::value(double d) {
  separate();
  if (!std::isfinite(d)) {
    out_ << "null";
    return *this;
  }
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.9g", d);
  out_ << buf;
  return *this;
}

JsonWriter& JsonWriter::value(std::nullptr_t) {
  separate();
  out_ << "null";
  return *this;
}

JsonWriter& JsonWriter::value(const Value& v) {
  return std::visit([this](const auto& x) -> JsonWriter& { return value(x); }, v.v);
}

JsonWriter& JsonWriter::value(const Record& r) {
  begin_object();
  for (const auto& [name, v] : r) field(name, v);
  return end_object();
}

Record select(const Record& r, const std::vector<std::string>& keys) {
  Record out;
  for (const auto& key : keys) {
    const auto it = std::find_if(r.begin(), r.end(), [&](const auto& f) { return f.first == key; });
    if (it == r.end()) throw InvalidArgument("select: the record has no field '" + key + "'");
    out.push_back(*it);
  }
  return out;
}

JsonWriter& begin_output(JsonWriter& j) {
  return j.begin_object().field("kspmv_version", version_string).field("kspmv_commit", git_commit);
}

void write_json(const std::string& path, const Record& header, const std::vector<Record>& results) {
  std::ofstream out(path);
  if (!out) throw Error("cannot write " + path);
  JsonWriter j(out);
  begin_output(j);
  for (const auto& [name, v] : header) j.field(name, v);
  j.key("results").begin_array(true);
  for (const Record& r : results) j.value(r);
  j.end_array().end_object();
}

}  // namespace kspmv::tools
