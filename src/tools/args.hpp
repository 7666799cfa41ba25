// Command-line parsing for the kspmv tool and the benchmarks: each command declares its options
// once; the same declaration parses the arguments and prints the help.
#pragma once

#include <functional>
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
  std::string program = "kspmv";          // empty: the command is the program (a benchmark)
};

class ParsedArgs {
 public:
  bool help = false;
  std::vector<std::string> positionals;

  bool flag(const std::string& name) const { return flags_.count(name) > 0; }
  bool has(const std::string& name) const { return values_.count(name) > 0; }
  // The last value given (or `fallback`); all(): every value, in order (repeatable options).
  std::string text(const std::string& name, const std::string& fallback) const;
  std::vector<std::string> all(const std::string& name) const;
  // text() that must be one of `choices`.
  std::string choice(const std::string& name, const std::string& fallback,
                     const std::vector<std::string>& choices) const;
  long integer(const std::string& name, long fallback, long min, long max) const;
  double number(const std::string& name, double fallback) const;

 private:
  friend ParsedArgs parse_args(const Command& command, const std::vector<std::string>& args);
  std::set<std::string> flags_;
  std::map<std::string, std::vector<std::string>> values_;
};

// Parses `args` (the words after the command name). Throws UsageError for an unknown option, a
// missing value or a wrong number of positional arguments; `--help`/`-h` sets `help` instead.
ParsedArgs parse_args(const Command& command, const std::vector<std::string>& args);

// The text of `kspmv NAME --help`.
std::string command_help(const Command& command);

// The words of the command line after the program name, less Kokkos's own (--kokkos-...).
std::vector<std::string> command_words(int argc, char** argv);

// Runs `command` on `args`: its help on --help (exit status 0), else command.run between the
// initialization of Kokkos (with the --kokkos-... words of argv) and its finalization.
int run_command(const Command& command, const std::vector<std::string>& args, int argc,
                char** argv);

// What main() returns: body(), or 2 after an exception or when standard output could not be
// written (flushed here, at the end), told on stderr as one line "PROGRAM: error: WHAT".
// Standard descriptors closed at the start are opened on /dev/null for reading first, so that
// writes to a closed standard output fail too.
int guarded_main(const std::string& program, const std::function<int()>& body);

// main() of a program that is one command (a benchmark).
int command_main(const Command& command, int argc, char** argv);

// The non-empty parts of `s` between separators `sep`.
std::vector<std::string> split(const std::string& s, char sep);

// Strict conversions: the whole word must be a finite number. `what` names it in the error.
long parse_integer(const std::string& word, const std::string& what);
double parse_number(const std::string& word, const std::string& what);

}  // namespace kspmv::tools
