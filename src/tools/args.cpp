#include "tools/args.hpp"

#include <execinfo.h>
#include <fcntl.h>
#include <unistd.h>

#include <csignal>

#include <Kokkos_Core.hpp>
#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <iterator>
#include <new>
#include <sstream>

namespace kspmv::tools {

namespace {

const OptionSpec* find_option(const Command& command, const std::string& name) {
  for (const auto& option : command.options)
    if (option.name == name) return &option;
  return nullptr;
}

// "kspmv NAME", or NAME alone when the command is the program.
std::string invocation(const Command& command) {
  return command.program.empty() ? command.name : command.program + " " + command.name;
}

std::string see_help(const Command& command) {
  return " (see '" + invocation(command) + " --help')";
}

bool is_kokkos_option(const char* word) {
  return std::string(word).compare(0, 9, "--kokkos-") == 0;
}

// Kokkos' options of 3.4 to 4.x (Kokkos ignores a name it does not know, and reads a number it
// cannot parse as it can): the integer ones, with their least value, then the others.
struct KokkosInteger {
  const char* name;
  long min;
  bool pair;  // INT[,INT]
};
constexpr KokkosInteger kKokkosIntegers[] = {
    {"threads", 1, false},    {"num-threads", 1, false}, {"numa", 1, false},
    {"device", 0, false},     {"device-id", 0, false},   {"ndevices", 1, true},
    {"num-devices", 1, true},
};
constexpr const char* kKokkosOthers[] = {
    "help",       "disable-warnings", "print-configuration", "tune-internals",   "tools-library",
    "tools-libs", "tools-args",       "tools-help",          "map-device-id-by",
};

// Throws UsageError for a --kokkos-... word with a name Kokkos does not know or an integer value
// that is not one.
void check_kokkos_option(const std::string& word) {
  const auto eq = word.find('=');
  const std::string name = word.substr(9, eq == std::string::npos ? std::string::npos : eq - 9);
  const std::string value = eq == std::string::npos ? "" : word.substr(eq + 1);
  for (const KokkosInteger& option : kKokkosIntegers) {
    if (name != option.name) continue;
    const std::vector<std::string> parts = split(value, ',');
    const std::size_t most = option.pair ? 2 : 1;
    if (eq == std::string::npos || parts.empty() || parts.size() > most ||
        std::count(value.begin(), value.end(), ',') + 1 != long(parts.size()))
      throw UsageError("--kokkos-" + name + " takes =INT" + (option.pair ? "[,INT]" : "") +
                       ", got '" + word + "'");
    for (std::size_t i = 0; i < parts.size(); ++i)
      if (parse_integer(parts[i], "--kokkos-" + name) < (i == 0 ? option.min : 0))
        throw UsageError("--kokkos-" + name + " must be at least " + std::to_string(option.min) +
                         ", got '" + value + "'");
    return;
  }
  for (const char* other : kKokkosOthers)
    if (name == other) return;
  throw UsageError("unknown Kokkos option '--kokkos-" + name + "' (see '--kokkos-help')");
}

// The --kokkos-... words of argv for Kokkos: checked, and --kokkos-num-threads given the name a
// Kokkos before 4 reads (--kokkos-threads; Kokkos 3 ignores the other).
std::vector<std::string> kokkos_words(int argc, char** argv) {
  std::vector<std::string> words;
  for (int i = 1; i < argc; ++i) {
    if (!is_kokkos_option(argv[i])) continue;
    std::string word = argv[i];
    check_kokkos_option(word);
#if KOKKOS_VERSION < 40000
    if (word.compare(0, 21, "--kokkos-num-threads=") == 0) word.replace(0, 20, "--kokkos-threads");
#endif
    words.push_back(word);
  }
  return words;
}

// One line: the programs promise a single-line message on stderr.
std::string one_line(std::string message) {
  for (char& c : message)
    if (c == '\n' || c == '\r') c = ' ';
  while (!message.empty() && message.back() == ' ') message.pop_back();
  return message;
}

// A standard descriptor closed when the program starts is opened on /dev/null for reading: no
// file the program opens takes its number (std::cout would write into a matrix being written),
// and writes to a closed standard output fail (EBADF) instead of vanishing.
void occupy_closed_standard_descriptors() {
  for (int fd = STDIN_FILENO; fd <= STDERR_FILENO; ++fd) {
    if (::fcntl(fd, F_GETFD) >= 0 || errno != EBADF) continue;
    const int got = ::open("/dev/null", O_RDONLY);
    if (got >= 0 && got != fd) {
      ::dup2(got, fd);
      ::close(got);
    }
  }
}

// A crash (segmentation fault, bus error, illegal instruction, arithmetic fault) says so on
// standard error with the call stack (function names where the program exports them), then
// ends the program by the signal as before (where no one else handles the signal: sanitizers
// report their own). Only async-signal-safe calls run in the handler;
// backtrace() is called once beforehand so that it does not load its unwinder there.
const char* g_program = "kspmv";

extern "C" void report_crash(int sig) {
  const char* head = ": crashed (signal ";
  (void)!::write(STDERR_FILENO, g_program, std::strlen(g_program));
  (void)!::write(STDERR_FILENO, head, std::strlen(head));
  char digits[4] = {char('0' + sig / 10 % 10), char('0' + sig % 10), ')', '\n'};
  (void)!::write(STDERR_FILENO, digits, sizeof digits);
  void* frames[64];
  ::backtrace_symbols_fd(frames, ::backtrace(frames, 64), STDERR_FILENO);
  std::signal(sig, SIG_DFL);
  std::raise(sig);
}

void report_crashes(const std::string& program) {
  static std::string name;
  name = program;
  g_program = name.c_str();
  void* warm[1];
  ::backtrace(warm, 1);
  for (int sig : {SIGSEGV, SIGBUS, SIGILL, SIGFPE}) {
    struct sigaction old {};  // a sanitizer's handler, or the application's, is kept
    if (::sigaction(sig, nullptr, &old) == 0 && old.sa_handler == SIG_DFL)
      std::signal(sig, report_crash);
  }
}

// Flushes standard output; what went wrong with it since the start ("" when nothing did).
std::string stdout_failure() {
  errno = 0;  // a failed flush of either sets it
  std::cout.flush();
  const bool flushed = std::fflush(stdout) == 0;
  const int code = errno;
  if (flushed && !std::ferror(stdout) && !std::cout.fail()) return "";
  return std::string("cannot write standard output") +
         (code != 0 ? std::string(": ") + std::strerror(code) : "");
}

}  // namespace

ParsedArgs parse_args(const Command& command, const std::vector<std::string>& args) {
  ParsedArgs parsed;
  bool options_done = false;
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& word = args[i];
    if (options_done || word.size() < 2 || word[0] != '-') {
      parsed.positionals.push_back(word);
      continue;
    }
    if (word == "--") {
      options_done = true;
      continue;
    }
    if (word == "-h" || word == "--help") {
      parsed.help = true;
      continue;
    }
    if (word.compare(0, 2, "--") != 0)
      throw UsageError("unknown option '" + word + "' for '" + command.name + "'" +
                       see_help(command));
    const auto eq = word.find('=');
    const std::string name = word.substr(2, eq == std::string::npos ? std::string::npos : eq - 2);
    const OptionSpec* option = find_option(command, name);
    if (option == nullptr)
      throw UsageError("unknown option '--" + name + "' for '" + command.name + "'" +
                       see_help(command));
    if (option->metavar.empty()) {
      if (eq != std::string::npos)
        throw UsageError("option '--" + name + "' takes no value" + see_help(command));
      parsed.flags_.insert(name);
    } else if (eq != std::string::npos) {
      parsed.values_[name].push_back(word.substr(eq + 1));
    } else if (i + 1 < args.size()) {
      parsed.values_[name].push_back(args[++i]);
    } else {
      throw UsageError("option '--" + name + "' needs a value " + option->metavar +
                       see_help(command));
    }
  }
  if (parsed.help) return parsed;
  const auto& expected = command.positionals;
  if (parsed.positionals.size() < expected.size())
    throw UsageError("'" + command.name + "' needs " + expected[parsed.positionals.size()] +
                     see_help(command));
  if (parsed.positionals.size() > expected.size())
    throw UsageError("unexpected argument '" + parsed.positionals[expected.size()] + "' for '" +
                     command.name + "'" + see_help(command));
  return parsed;
}

std::string ParsedArgs::text(const std::string& name, const std::string& fallback) const {
  const auto it = values_.find(name);
  return it == values_.end() ? fallback : it->second.back();
}

std::vector<std::string> ParsedArgs::all(const std::string& name) const {
  const auto it = values_.find(name);
  return it == values_.end() ? std::vector<std::string>{} : it->second;
}

std::string ParsedArgs::choice(const std::string& name, const std::string& fallback,
                               const std::vector<std::string>& choices) const {
  const std::string v = text(name, fallback);
  if (std::find(choices.begin(), choices.end(), v) != choices.end()) return v;
  std::string list;
  for (const auto& c : choices) list += (list.empty() ? "" : ", ") + c;
  throw UsageError("--" + name + " must be one of " + list + ", got '" + v + "'");
}

long ParsedArgs::integer(const std::string& name, long fallback, long min, long max) const {
  if (!has(name)) return fallback;
  const std::string word = text(name, "");
  const long v = parse_integer(word, "--" + name);
  if (v < min || v > max)
    throw UsageError("--" + name + " must be in [" + std::to_string(min) + ", " +
                     std::to_string(max) + "], got " + word);
  return v;
}

double ParsedArgs::number(const std::string& name, double fallback) const {
  return has(name) ? parse_number(text(name, ""), "--" + name) : fallback;
}

long parse_integer(const std::string& word, const std::string& what) {
  char* end = nullptr;
  errno = 0;
  const long v = std::strtol(word.c_str(), &end, 10);
  if (word.empty() || *end != '\0' || errno == ERANGE)
    throw UsageError(what + ": '" + word + "' is not an integer");
  return v;
}

double parse_number(const std::string& word, const std::string& what) {
  char* end = nullptr;
  errno = 0;
  const double v = std::strtod(word.c_str(), &end);
  if (word.empty() || *end != '\0' || errno == ERANGE || !std::isfinite(v))
    throw UsageError(what + ": '" + word + "' is not a finite number");
  return v;
}

std::string command_help(const Command& command) {
  std::ostringstream out;
  out << "usage: " << invocation(command) << " [options]";
  for (const auto& p : command.positionals) out << ' ' << p;
  out << "\n\n" << command.description << "\n\noptions:\n";
  // "  --name VALUE" then the help from column 28, wrapped at column 100.
  auto line = [&](const std::string& left, const std::string& help) {
    out << "  " << left;
    if (left.size() < 26)
      out << std::string(26 - left.size(), ' ');
    else
      out << "\n" << std::string(28, ' ');
    std::istringstream words(help);
    std::string word;
    std::size_t column = 28;
    for (bool first = true; words >> word; first = false) {
      if (!first && column + 1 + word.size() > 100) {
        out << '\n' << std::string(28, ' ');
        column = 28;
      } else if (!first) {
        out << ' ';
        ++column;
      }
      out << word;
      column += word.size();
    }
    out << '\n';
  };
  for (const auto& option : command.options)
    line("--" + option.name + (option.metavar.empty() ? "" : " " + option.metavar), option.help);
  line("-h, --help", "show this help");
  if (command.extra_help != nullptr) out << '\n' << command.extra_help();
  return out.str();
}

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> parts;
  std::stringstream in(s);
  for (std::string p; std::getline(in, p, sep);)
    if (!p.empty()) parts.push_back(p);
  return parts;
}

std::vector<std::string> command_words(int argc, char** argv) {
  std::vector<std::string> words;
  for (int i = 1; i < argc; ++i)
    if (!is_kokkos_option(argv[i])) words.emplace_back(argv[i]);
  return words;
}

int run_command(const Command& command, const std::vector<std::string>& args, int argc,
                char** argv) {
  const ParsedArgs parsed = parse_args(command, args);
  if (parsed.help) {
    std::cout << command_help(command);
    return 0;
  }
  std::vector<std::string> words = kokkos_words(argc, argv);
  std::vector<char*> kokkos_argv = {argv[0]};
  for (std::string& word : words) kokkos_argv.push_back(word.data());
  // Kokkos' warnings (OpenMP's four lines on OMP_PROC_BIND on every run) would break the one-line
  // stderr promise: off unless the user chose with KOKKOS_DISABLE_WARNINGS or the option.
  static char disable_warnings[] = "--kokkos-disable-warnings";
  const bool user_chose =
      std::getenv("KOKKOS_DISABLE_WARNINGS") != nullptr ||
      std::any_of(kokkos_argv.begin() + 1, kokkos_argv.end(), [](const char* a) {
        return std::strncmp(a, disable_warnings, sizeof disable_warnings - 1) == 0;
      });
  if (!user_chose) kokkos_argv.push_back(disable_warnings);
  int kokkos_argc = static_cast<int>(kokkos_argv.size());
  kokkos_argv.push_back(nullptr);
  Kokkos::ScopeGuard kokkos(kokkos_argc, kokkos_argv.data());
  return command.run(parsed);
}

int guarded_main(const std::string& program, const std::function<int()>& body) {
  occupy_closed_standard_descriptors();
  report_crashes(program);
  std::string error;
  int status = 2;
  try {
    status = body();
  } catch (const std::bad_alloc&) {
    error = "out of memory (the matrix or its vectors do not fit)";
  } catch (const std::exception& e) {
    error = one_line(e.what());
  } catch (...) {
    error = "unknown failure";
  }
  // Output that did not reach standard output is a failure whatever the body returned.
  const std::string lost = stdout_failure();
  if (error.empty() && !lost.empty()) error = lost;
  if (error.empty()) return status;
  std::cerr << program << ": error: " << error << '\n';
  return 2;
}

int command_main(const Command& command, int argc, char** argv) {
  return guarded_main(command.name,
                      [&] { return run_command(command, command_words(argc, argv), argc, argv); });
}

}  // namespace kspmv::tools
