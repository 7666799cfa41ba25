// kspmv command-line tool: dispatch, Kokkos set-up and the one place errors become exit codes
// (0 success, 1 a wrong result, 2 bad input: one line on stderr, never a stack trace).
#include <Kokkos_Core.hpp>
#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <iostream>
#include <new>
#include <string>
#include <vector>

#include "args.hpp"
#include "commands.hpp"
#include "kspmv/core/error.hpp"

namespace {

using kspmv::cli::Command;

std::vector<Command> commands() {
  using namespace kspmv::cli;
  return {demo_command(),    info_command(), spmv_command(),
          convert_command(), gen_command(),  cg_command()};
}

void print_overview(std::ostream& out) {
  out << "usage: kspmv COMMAND [options] [arguments]\n\n"
         "Sparse matrix-vector multiplication y = alpha*A*x + beta*y on Kokkos and CUDA.\n\n"
         "commands:\n";
  for (const auto& c : commands()) {
    out << "  " << c.name << std::string(10 - c.name.size(), ' ') << c.summary << '\n';
  }
  out << "  help      show this list, or 'kspmv help COMMAND' for the options of one\n\n"
         "Kokkos options (--kokkos-...) are passed to Kokkos; its warnings are shown with\n"
         "KOKKOS_DISABLE_WARNINGS=0. Exit status: 0 success, 1 a wrong result, 2 bad input.\n";
}

const Command* find_command(const std::vector<Command>& all, const std::string& name) {
  for (const auto& c : all)
    if (c.name == name) return &c;
  return nullptr;
}

// One line: the tool promises a single-line message on stderr.
std::string one_line(std::string message) {
  for (char& c : message)
    if (c == '\n' || c == '\r') c = ' ';
  while (!message.empty() && message.back() == ' ') message.pop_back();
  return message;
}

int run(int argc, char** argv) {
  // Kokkos gets its own options; the command parser never sees them.
  std::vector<char*> kokkos_argv = {argv[0]};
  std::vector<std::string> words;
  for (int i = 1; i < argc; ++i) {
    const std::string word = argv[i];
    if (word.compare(0, 9, "--kokkos-") == 0)
      kokkos_argv.push_back(argv[i]);
    else
      words.push_back(word);
  }
  const auto all = commands();
  if (words.empty() || words[0] == "-h" || words[0] == "--help") {
    print_overview(std::cout);
    return 0;
  }
  if (words[0] == "help") {
    if (words.size() == 1) {
      print_overview(std::cout);
      return 0;
    }
    const Command* c = find_command(all, words[1]);
    if (c == nullptr || words.size() > 2)
      throw kspmv::cli::UsageError("'help' takes one command name (see 'kspmv --help')");
    std::cout << kspmv::cli::command_help(*c);
    return 0;
  }
  const Command* command = find_command(all, words[0]);
  if (command == nullptr)
    throw kspmv::cli::UsageError("unknown command '" + words[0] + "' (see 'kspmv --help')");
  const auto args = kspmv::cli::parse_args(*command, {words.begin() + 1, words.end()});
  if (args.help) {
    std::cout << kspmv::cli::command_help(*command);
    return 0;
  }
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
  return command->run(args);
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run(argc, argv);
  } catch (const std::bad_alloc&) {
    std::cerr << "kspmv: error: out of memory (the matrix or its vectors do not fit)\n";
  } catch (const std::exception& e) {
    std::cerr << "kspmv: error: " << one_line(e.what()) << '\n';
  } catch (...) {
    std::cerr << "kspmv: error: unknown failure\n";
  }
  return 2;
}
