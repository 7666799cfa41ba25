// Command-line parsing for the kspmv tool: each command declares its options once; the same
// declaration parses the arguments and prints the help.
#pragma once

#include <map>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

namespace kspmv::tools {

// Bad command line: the tool prints it on one line and exits with status 2.
class UsageError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct OptionSpec {
  std::string name;     // without the leading "--"
  std::string metavar;  // empty: a flag without a value
  std::string help;
};

class ParsedArgs;

struct Command {
  std::string name;
  std::string summary;                   // one line, for the command list
  std::string description;               // paragraph(s) for `kspmv NAME --help`
  std::vector<std::string> positionals;  // names of the required positional arguments
  std::vector<OptionSpec> options;
  int (*run)(const ParsedArgs&) = nullptr;
  std::string (*extra_help)() = nullptr;  // appended to the help (e.g. the generator specs)
};

class ParsedArgs {
 public:
  bool help = false;
  std::vector<std::string> positionals;

  bool flag(const std::string& name) const { return flags_.count(name) > 0; }
  bool has(const std::string& name) const { return values_.count(name) > 0; }
  std::string text(const std::string& name, const std::string& fallback) const;
  long integer(const std::string& name, long fallback, long min, long max) const;
  double number(const std::string& name, double fallback) const;

 private:
  friend ParsedArgs parse_args(const Command& command, const std::vector<std::string>& args);
  std::set<std::string> flags_;
  std::map<std::string, std::string> values_;
};

// Parses `args` (the words after the command name). Throws UsageError for an unknown option, a
// missing value or a wrong number of positional arguments; `--help`/`-h` sets `help` instead.
ParsedArgs parse_args(const Command& command, const std::vector<std::string>& args);

// The text of `kspmv NAME --help`.
std::string command_help(const Command& command);

// The non-empty parts of `s` between separators `sep`.
std::vector<std::string> split(const std::string& s, char sep);

// Strict conversions: the whole word must be a finite number. `what` names it in the error.
long parse_integer(const std::string& word, const std::string& what);
double parse_number(const std::string& word, const std::string& what);

}  // namespace kspmv::tools
