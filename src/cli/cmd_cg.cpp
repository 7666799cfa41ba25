// kspmv cg: solve A x = b by conjugate gradients (Gao et al. 2024, Alg. 1; with --precond jacobi,
// PCG: Saad 2003, Alg. 9.1) on one device or several, b from a file or random, x written to a
// file; check the residual of the returned x against the serial reference SpMV.
#include <cmath>
#include <cstdio>
#include <functional>
#include <iostream>
#include <memory>
#include <vector>

#include "cg_watch.hpp"
#include "commands.hpp"
#include "kspmv/formats/convert.hpp"
#include "kspmv/io/matrix_market.hpp"
#include "kspmv/solvers/cg.hpp"
#include "partitioners/partition_plan.hpp"
#include "testing/reference.hpp"
#include "tools/common.hpp"
#include "tools/json.hpp"

namespace kspmv::cli {

namespace {

// Whether a == a^T, entry by entry (after sorting and merging duplicates).
template <class Scalar>
bool is_symmetric(const CsrMatrix<Scalar>& a) {
  if (a.nrows != a.ncols) return false;
  const auto s = sort_and_merge(a), t = sort_and_merge(transpose(a));
  if (s.nnz() != t.nnz()) return false;
  for (Ordinal i = 0; i <= a.nrows; ++i)
    if (s.row_ptr(i) != t.row_ptr(i)) return false;
  for (Offset k = 0; k < s.nnz(); ++k)
    if (s.col_idx(k) != t.col_idx(k) || s.values(k) != t.values(k)) return false;
  return true;
}

// Where `a`'s first NaN or infinite value is, as "row I, column J" ("" when every value is finite;
// 1-based, as in a Matrix Market file).
template <class Scalar>
std::string first_nonfinite(const CsrMatrix<Scalar>& a) {
  for (Ordinal i = 0; i < a.nrows; ++i)
    for (Offset k = a.row_ptr(i); k < a.row_ptr(i + 1); ++k)
      if (!std::isfinite(a.values(k)))
        return "row " + std::to_string(i + 1) + ", column " + std::to_string(a.col_idx(k) + 1);
  return "";
}

// Why CG stopped short, in words ("" when it converged).
template <class Scalar>
std::string stop_reason(const CgResult& res, const CsrMatrix<Scalar>& a) {
  if (res.stop == CgStop::Converged) return "";
  if (res.stop == CgStop::MaxIterations)
    return "the iteration limit ran out (--max-iters " + std::to_string(res.iterations) + ")";
  char curvature[64];
  std::snprintf(curvature, sizeof curvature, "%.3g", res.curvature);
  const std::string nonfinite = first_nonfinite(a);
  return "non-positive curvature p'Ap = " + std::string(curvature) + " at iteration " +
         std::to_string(res.iterations + 1) + ": the matrix is " +
         (!nonfinite.empty() ? "not finite (a NaN or infinite value at " + nonfinite + ")"
          : is_symmetric(a)  ? "symmetric but not positive definite"
                             : "not symmetric (CG needs a symmetric positive definite matrix)");
}

// --tol (default 1e-5 in float, 1e-8 in double) and --max-iters.
CgOptions cg_options(const ParsedArgs& args, bool single) {
  CgOptions o;
  o.tolerance = args.number("tol", single ? 1e-5 : 1e-8);
  if (!(o.tolerance > 0)) throw UsageError("--tol must be > 0");
  o.max_iterations = static_cast<int>(args.integer("max-iters", 1000, 0, 100000000));
  return o;
}

// The right-hand side from --rhs FILE (a Matrix Market array of n x 1, finite values), or random.
template <class Scalar>
std::vector<Scalar> right_hand_side(const ParsedArgs& args, Ordinal n) {
  if (!args.has("rhs")) return random_values<Scalar>(n, 7);
  const std::string path = args.text("rhs", "");
  io::ReadReport report;
  std::vector<Scalar> b = io::read_matrix_market_vector<Scalar>(path, &report);
  if (b.size() != std::size_t(n))
    throw InvalidArgument("--rhs " + path + " has " + std::to_string(b.size()) +
                          " values, the matrix " + std::to_string(n) + " rows");
  for (const io::ValueCount& c : {report.nonfinite, report.overflow})
    if (c.count > 0)
      throw InvalidArgument("--rhs " + path + ": line " + std::to_string(c.first_line) +
                            " holds a value that is not finite in " + precision_name<Scalar>());
  return b;
}

template <class Scalar>
int run_cg(const ParsedArgs& args, const Options& options) {
  const std::string source = args.positionals[0];
  const CgOptions cg_options = cli::cg_options(args, sizeof(Scalar) == sizeof(float));
  const std::string precond = args.choice("precond", "none", {"none", "jacobi"});

  const CsrMatrix<Scalar> a =
      load_matrix<Scalar>(source, stderr_is_terminal(), args.flag("allow-nonfinite"));
  if (a.nrows != a.ncols) throw InvalidArgument(source + " is not square; CG needs an SPD matrix");
  const std::vector<Scalar> b = right_hand_side<Scalar>(args, a.nrows);
  std::unique_ptr<Jacobi<Scalar>> jacobi;
  if (precond == "jacobi") jacobi = std::make_unique<Jacobi<Scalar>>(a);
  Operator<Scalar> op(a, options);
  std::vector<Scalar> x(a.nrows, Scalar(0)), r(a.nrows);
  CgWatch watch(stderr_is_terminal());
  const CgResult res = cg(op, b.data(), x.data(), cg_options, jacobi.get(), std::ref(watch));
  watch.finish();
  const std::string solution = args.text("solution", "");
  if (!solution.empty()) io::write_matrix_market_vector(solution, x.data(), x.size());
  // The residual of the returned x, from the serial reference SpMV.
  r = b;
  reference::spmv(Scalar(-1), a, x.data(), Scalar(1), r.data());
  double rn = 0, bn = 0;
  for (Ordinal i = 0; i < a.nrows; ++i)
    rn += double(r[i]) * double(r[i]), bn += double(b[i]) * double(b[i]);
  const double residual = bn > 0 ? std::sqrt(rn / bn) : std::sqrt(rn);
  // A converged solve must hold its tolerance (with room for the recursive residual's drift).
  const bool ok = res.converged && residual <= 10 * cg_options.tolerance;
  const std::string why = stop_reason(res, a);

  if (args.flag("json")) {
    JsonWriter j(std::cout);
    begin_output(j)
        .field("matrix", source)
        .field("nrows", a.nrows)
        .field("nnz", a.nnz())
        .field("precision", precision_name<Scalar>())
        .field("backend", to_string(options.backend))
        .field("devices", static_cast<long long>(op.options().devices.size()))
        .field("choose_devices", options.choose_devices)
        .field("partition", part::to_string(options.partition))
        .field("exchange", part::to_string(options.exchange))
        .field("chunks", options.chunks)
        .field("precond", precond)
        .field("rhs", args.has("rhs") ? args.text("rhs", "") : "random")
        .field("solution", solution)
        .field("tolerance", cg_options.tolerance)
        .field("iterations", res.iterations)
        .field("converged", res.converged)
        .field("relative_residual", residual)
        .field("ms_per_iteration", res.ms_per_iteration)
        .field("replay", res.replay)
        .field("stop", res.stop == CgStop::Converged       ? "converged"
                       : res.stop == CgStop::MaxIterations ? "max_iterations"
                                                           : "not_positive_definite")
        .field("why", why)
        .key("history")
        .begin_object()
        .field("every", watch.every())
        .field("max_length", static_cast<long long>(CgWatch::kMaxHistory + 1))
        .key("iterations")
        .begin_array();
    for (int it : watch.iterations()) j.value(it);
    j.end_array().key("relative_residuals").begin_array();
    for (double rel : watch.residuals()) j.value(rel);
    j.end_array().end_object().field("ok", ok).end_object();
  } else {
    std::printf("matrix     %s: %d x %d, %lld non-zeros, %s\n", source.c_str(), a.nrows, a.ncols,
                static_cast<long long>(a.nnz()), precision_name<Scalar>());
    std::printf("operator   backend %s, %zu device(s), partition %s, exchange %s\n",
                to_string(options.backend), op.options().devices.size(),
                part::to_string(options.partition), part::to_string(options.exchange));
    std::printf(
        "cg         %d iterations, %.4f ms per iteration, %s (tolerance %.1e), "
        "preconditioner %s\n",
        res.iterations, res.ms_per_iteration, res.converged ? "converged" : "NOT converged",
        cg_options.tolerance, precond.c_str());
    if (!res.replay.empty()) std::printf("iterations %s\n", res.replay.c_str());
    if (!why.empty()) std::printf("stopped    %s\n", why.c_str());
    std::printf("check      relative residual ||b - A x|| / ||b|| = %.3g: %s\n", residual,
                ok ? "ok" : "WRONG");
    if (!solution.empty()) std::printf("solution   written to %s\n", solution.c_str());
  }
  return ok ? 0 : 1;
}

int run(const ParsedArgs& args) {
  Options options;
  options.backend = parse_backend(args.text("backend", "host"));
  options.kernel = parse_kernel(args.text("kernel", "auto"));
  if (args.has("devices")) options.devices = parse_devices(args.text("devices", ""));
  if (args.flag("tpetra")) {
    for (const char* name : {"precond", "rhs", "solution"})
      if (args.has(name))
        throw UsageError(std::string("--") + name + " applies without --tpetra only");
#ifdef KSPMV_HAVE_TPETRA
    const CgOptions o = cg_options(args, false);
    return run_cg_tpetra(args, options, o.tolerance, o.max_iterations);
#else
    throw UsageError(
        "--tpetra: this kspmv was built without the Tpetra adapter "
        "(KSPMV_ENABLE_TPETRA, which needs Tpetra, Belos and MPI)");
#endif
  }
  if (args.has("split")) throw UsageError("--split applies with --tpetra only");
  options.partition =
      part::parse_scheme(args.text("partition", part::to_string(options.partition)));
  options.exchange = part::parse_exchange(args.text("exchange", part::to_string(options.exchange)));
  options.chunks = static_cast<int>(args.integer("chunks", 1, 1, part::kMaxStreamSlots));
  options.choose_devices = args.flag("choose-devices");
  options.graphs = args.choice("graphs", "on", {"on", "off"}) == "on";
  options.signals = args.choice("signals", "on", {"on", "off"}) == "on";
  const std::string precision = args.choice("precision", "double", {"float", "double"});
  return precision == "float" ? run_cg<float>(args, options) : run_cg<double>(args, options);
}

}  // namespace

Command cg_command() {
  Command c;
  c.name = "cg";
  c.summary = "solve A x = b by conjugate gradients on one device, several, or MPI ranks";
  c.description = std::string(
                      "Solves A x = b for a symmetric positive definite A (b from --rhs, else "
                      "random;\nx0 = 0) with an Operator on the chosen backend and devices, "
                      "preconditioned by\nJacobi with --precond jacobi, then recomputes the "
                      "residual with the serial\nreference SpMV. Exit status 1 when CG does not "
                      "converge to --tol within\n--max-iters or the residual does not hold. On a "
                      "terminal, stderr shows the\niteration, residual and time as it runs. "
                      "--json adds the residual history:\nevery iteration's relative residual "
                      "||r|| / ||b||, or, past 1000 iterations,\nevery k-th (\"every\": k doubles "
                      "to keep at most 1001 entries), the last one\nalways included.\n\n"
                      "With --tpetra, under mpirun -np N (or alone: one rank), Tpetra distributes "
                      "the\nmatrix (a file is read on rank 0; gen: builds each rank's own rows), "
                      "each rank's\nblock is a kspmv Operator (on CUDA, the rank's node-local "
                      "GPU) and Belos CG solves.\n\n") +
                  kMatrixArgumentHelp;
  c.positionals = {"FILE|gen:SPEC"};
  c.options = {
      {"backend", "host|cuda|kokkos-default", kBackendHelp},
      {"kernel", "NAME", "SpMV kernel (default auto)"},
      {"devices", "LIST", kDevicesHelp},
      {"partition", "NAME", partition_help()},
      {"exchange", "NAME", exchange_help()},
      {"chunks", "N", kChunksHelp},
      {"choose-devices", "", kChooseDevicesHelp},
      {"graphs", "on|off", kGraphsHelp},
      {"signals", "on|off", kSignalsHelp},
      {"precision", "float|double", "scalar type (default double)"},
      {"tol", "T", "relative residual to reach (default 1e-8 double, 1e-5 float)"},
      {"max-iters", "N", "iteration cap (default 1000)"},
      {"precond", "none|jacobi",
       "preconditioner (default none); jacobi: M = diag(A), which must be positive"},
      {"rhs", "FILE",
       "right-hand side b: a Matrix Market 'array real general' file of n x 1 values"},
      {"solution", "FILE",
       "write x there as a Matrix Market array (n x 1; .gz compresses); the file is replaced "
       "only once complete"},
      {"allow-nonfinite", "", "use a file with NaN, infinite or overflowing values as it is"},
      {"tpetra", "", "distribute over the MPI ranks with Tpetra and solve with Belos CG (double)"},
      {"split", "rows|nz", "--tpetra with a file: equal rows (default) or equal non-zeros a rank"},
      {"json", "", "print one JSON object instead of text"},
  };
  c.run = run;
  return c;
}

}  // namespace kspmv::cli
