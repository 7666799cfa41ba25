// kspmv convert and kspmv gen: write Matrix Market files (gzip-compressed when OUT ends in .gz).
#include <iostream>

#include "commands.hpp"
#include "kspmv/gen/generators.hpp"
#include "kspmv/io/matrix_market.hpp"
#include "tools/common.hpp"

namespace kspmv::cli {

namespace {

// The status line goes to stderr: OUT may be standard output ("-" or /dev/stdout).
int write(const std::string& source, const std::string& out) {
  const auto a = load_matrix<double>(source, stderr_is_terminal(), true);
  io::write_matrix_market(out, a);
  std::cerr << "wrote " << (out == "-" ? "standard output" : out) << ": " << a.nrows << " x "
            << a.ncols << ", " << a.nnz() << " non-zeros\n";
  return 0;
}

int run_convert(const ParsedArgs& args) {
  return write(args.positionals[0], args.positionals[1]);
}

int run_gen(const ParsedArgs& args) {
  const std::string& spec = args.positionals[0];
  return write(spec.compare(0, 4, "gen:") == 0 ? spec : "gen:" + spec, args.positionals[1]);
}

}  // namespace

Command convert_command() {
  Command c;
  c.name = "convert";
  c.summary = "rewrite a matrix as Matrix Market (.mtx or .mtx.gz by OUT's extension)";
  c.description = std::string(
                      "Reads IN and writes it to OUT as 'coordinate real general' in double "
                      "precision,\ngzip-compressed when OUT ends in .gz. Symmetric storage is "
                      "expanded, duplicates\nsummed. An existing OUT is replaced only once the "
                      "new file is complete.\n\n") +
                  "IN is a Matrix Market file (.mtx or .mtx.gz, - for standard input) or "
                  "gen:SPEC\n('kspmv help gen'). OUT - is standard output.";
  c.positionals = {"IN", "OUT"};
  c.run = run_convert;
  return c;
}

Command gen_command() {
  Command c;
  c.name = "gen";
  c.summary = "generate a matrix from a spec and write it as Matrix Market";
  c.description =
      "Generates the matrix SPEC describes (double precision) and writes it to OUT,\n"
      "gzip-compressed when OUT ends in .gz. The same specs work as gen:SPEC wherever a\n"
      "command takes a matrix.";
  c.positionals = {"SPEC", "OUT"};
  c.run = run_gen;
  c.extra_help = gen::spec_help;
  return c;
}

}  // namespace kspmv::cli
