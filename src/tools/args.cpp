#include "tools/args.hpp"

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <sstream>

namespace kspmv::tools {

namespace {

const OptionSpec* find_option(const Command& command, const std::string& name) {
  for (const auto& option : command.options)
    if (option.name == name) return &option;
  return nullptr;
}

std::string see_help(const Command& command) {
  return " (see 'kspmv " + command.name + " --help')";
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
      parsed.values_[name] = word.substr(eq + 1);
    } else if (i + 1 < args.size()) {
      parsed.values_[name] = args[++i];
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
  return it == values_.end() ? fallback : it->second;
}

long ParsedArgs::integer(const std::string& name, long fallback, long min, long max) const {
  const auto it = values_.find(name);
  if (it == values_.end()) return fallback;
  const long v = parse_integer(it->second, "--" + name);
  if (v < min || v > max)
    throw UsageError("--" + name + " must be in [" + std::to_string(min) + ", " +
                     std::to_string(max) + "], got " + it->second);
  return v;
}

double ParsedArgs::number(const std::string& name, double fallback) const {
  const auto it = values_.find(name);
  return it == values_.end() ? fallback : parse_number(it->second, "--" + name);
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
  out << "usage: kspmv " << command.name << " [options]";
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

}  // namespace kspmv::tools
