// kspmv command-line tool: dispatch to the commands. Exit status 0 success, 1 a wrong result, 2 bad
// input: one line on stderr, never a stack trace (tools::guarded_main).
#include <iostream>
#include <string>
#include <vector>

#include "commands.hpp"
#include "kspmv/registry.hpp"
#include "kspmv/version.hpp"
#include "tools/args.hpp"
#include "tools/common.hpp"

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
  out << "  help      show this list, or 'kspmv help COMMAND' for the options of one\n"
         "  --version the versions of kspmv, Kokkos, CUDA and cuSPARSE, and kspmv's commit\n\n"
         "Kokkos options (--kokkos-...) are passed to Kokkos; its warnings are shown with\n"
         "KOKKOS_DISABLE_WARNINGS=0. Exit status: 0 success, 1 a wrong result, 2 bad input.\n";
}

// kspmv --version: "none" for CUDA and cuSPARSE in a build without the CUDA backend, and for
// the driver on a machine without a GPU driver.
void print_versions(std::ostream& out) {
  const kspmv::CudaVersions cuda = kspmv::cuda_versions();
  out << "kspmv " << kspmv::version_string << " (commit " << kspmv::git_commit << ")\n"
      << "Kokkos " << kspmv::tools::kokkos_version() << "\n"
      << "CUDA runtime " << cuda.runtime << ", driver " << cuda.driver << "\n"
      << "cuSPARSE " << cuda.cusparse << "\n";
}

const Command* find_command(const std::vector<Command>& all, const std::string& name) {
  for (const auto& c : all)
    if (c.name == name) return &c;
  return nullptr;
}

int run(int argc, char** argv) {
  const std::vector<std::string> words = kspmv::tools::command_words(argc, argv);
  const auto all = commands();
  if (words.empty() || words[0] == "-h" || words[0] == "--help") {
    print_overview(std::cout);
    return 0;
  }
  if (words[0] == "--version") {
    if (words.size() > 1) throw kspmv::tools::UsageError("'--version' takes no arguments");
    print_versions(std::cout);
    return 0;
  }
  if (words[0] == "help") {
    if (words.size() == 1) {
      print_overview(std::cout);
      return 0;
    }
    const Command* c = find_command(all, words[1]);
    if (c == nullptr || words.size() > 2)
      throw kspmv::tools::UsageError("'help' takes one command name (see 'kspmv --help')");
    std::cout << kspmv::tools::command_help(*c);
    return 0;
  }
  const Command* command = find_command(all, words[0]);
  if (command == nullptr)
    throw kspmv::tools::UsageError("unknown command '" + words[0] + "' (see 'kspmv --help')");
  return kspmv::tools::run_command(*command, {words.begin() + 1, words.end()}, argc, argv);
}

}  // namespace

int main(int argc, char** argv) {
  return kspmv::tools::guarded_main("kspmv", [&] { return run(argc, argv); });
}
