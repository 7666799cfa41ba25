// CG past one process on device-resident vectors (kspmv::MpiOperator): kspmv's fused CG over MPI
// (mpi_cg) and Belos CG on kspmv's vectors, on the ranks of one launch, one GPU each by
// node-local rank (or the host backend), against kspmv::cg in one process.
//
//   mpiexec -np N distributed_bench [--matrix SPEC] [--weak-n N] [--backend cuda|host]
//                                   [--tol T] [--max-iters N] [--runs N] [--baselines]
//                                   [--out DIR]
//
// Strong scaling: --matrix (default stencil27:n=160) over the N ranks. Weak scaling: a stencil27
// of about N * weak_n^3 rows (tools::weak_stencil27), each rank generating its own block of rows
// (the generators' RowRange). --baselines (on one rank): kspmv::cg in this one process on one
// GPU and on every GPU of the machine, the rows the distributed runs are compared with. Each
// solve runs --runs times after a warm-up (x = 0 each time); shown: the median per iteration,
// the iterations, the true relative residual. Writes distributed_bench.{csv,json} and
// summary.json into --out (rank 0); perf_tests/run_distributed.sh runs it on 1, 2 and 4 ranks.
#include <Teuchos_CommHelpers.hpp>
#include <Tpetra_CrsMatrix.hpp>
#include <cstdio>
#include <numeric>
#include <string>
#include <vector>

#include "kspmv/gen/generators.hpp"
#include "kspmv/interop/tpetra_distributed.hpp"
#include "kspmv/interop/tpetra_matrix.hpp"
#include "kspmv/registry.hpp"
#include "kspmv/solvers/cg.hpp"
#include "tools/args.hpp"
#include "tools/common.hpp"
#include "tools/csv.hpp"
#include "tools/tpetra/distributed.hpp"

namespace {

using namespace kspmv;
using namespace kspmv::tools;

struct Settings {
  Backend backend = Backend::Host;
  CgOptions cg;
  int runs = 3;
};

struct Solve {
  double ms_per_iteration = 0;
  int iterations = 0;
  double residual = 0;
  bool converged = false;
};

// The median per iteration of `runs` solves after a warm-up, with the last solve's outcome.
template <class F>
Solve repeated(int runs, const F& solve) {
  std::vector<double> ms;
  Solve last;
  for (int i = 0; i <= runs; ++i) {
    last = solve();
    if (i > 0) ms.push_back(last.ms_per_iteration);
  }
  last.ms_per_iteration = median(ms);
  return last;
}

Record row(const std::string& spec, const char* scaling, int ranks, const Settings& s,
           const char* solver, int devices, long long rows, long long nnz, const Solve& r,
           long long halo = 0) {
  return {{"matrix", spec},
          {"scaling", scaling},
          {"ranks", ranks},
          {"backend", to_string(s.backend)},
          {"solver", solver},
          {"devices", devices},
          {"rows", rows},
          {"nnz", nnz},
          {"ms_per_iteration", r.ms_per_iteration},
          {"iterations", r.iterations},
          {"residual", r.residual},
          {"converged", r.converged},
          {"halo_entries_max", halo}};  // the most entries a rank sends per apply
}

// kspmv::cg in this process on `devices` GPUs (the host backend: one), b as the ranks have it.
Record one_process(const std::string& spec, const Settings& s, int devices) {
  const auto a = gen::from_spec<double>(spec);
  Options o;
  o.backend = s.backend;
  o.devices.resize(static_cast<std::size_t>(devices));
  std::iota(o.devices.begin(), o.devices.end(), 0);
  Operator<double> op(a, o);
  std::vector<double> b(static_cast<std::size_t>(a.nrows)), x(b.size());
  for (Ordinal g = 0; g < a.nrows; ++g) b[g] = random_entry<double>(7, g, 0);
  const Solve r = repeated(s.runs, [&] {
    std::fill(x.begin(), x.end(), 0.0);
    const CgResult c = cg(op, b.data(), x.data(), s.cg);
    return Solve{c.ms_per_iteration, c.iterations, c.relative_residual, c.converged};
  });
  return row(spec, "strong", 1, s, "one-process", devices, a.nrows, a.nnz(), r);
}

// Fused CG and (strong scaling) Belos CG on the ranks of comm.
std::vector<Record> distributed(const std::string& spec, const char* scaling,
                                const TpetraComm& comm, const Settings& s, bool belos) {
  const auto a = load_distributed("gen:" + spec, comm);
  Options o;
  o.backend = s.backend;
  if (s.backend == Backend::Cuda) o.devices = {kAllDevices};  // a GPU per rank of a node
  const auto op = Teuchos::rcp(new MpiOperator<double>(a, o));
  MpiMultiVector<double> b = op->make_vectors(1), x = op->make_vectors(1);
  b.randomize(7);
  const int ranks = comm->getSize();
  const auto rows = static_cast<long long>(a->getGlobalNumRows());
  const auto nnz = static_cast<long long>(a->getGlobalNumEntries());
  long long sent = static_cast<long long>(op->sent()), halo = 0;
  Teuchos::reduceAll(*comm, Teuchos::REDUCE_MAX, sent, Teuchos::outArg(halo));
  std::vector<Record> out;
  const Solve fused = repeated(s.runs, [&] {
    x.fill(0);
    const CgResult c = mpi_cg(*op, b, x, s.cg);
    return Solve{c.ms_per_iteration, c.iterations, c.relative_residual, c.converged};
  });
  out.push_back(row(spec, scaling, ranks, s, "fused", ranks, rows, nnz, fused, halo));
  if (belos) {
    const Solve bel = repeated(s.runs, [&] {
      x.fill(0);
      const KrylovResult k = belos_solve("cg", op, b, x, s.cg.tolerance, s.cg.max_iterations);
      const double ms = k.iterations > 0 ? 1e3 * k.seconds / k.iterations : 0;
      return Solve{ms, k.iterations, k.true_residual, k.converged};
    });
    out.push_back(row(spec, scaling, ranks, s, "belos", ranks, rows, nnz, bel, halo));
  }
  return out;
}

int run(const ParsedArgs& in, const TpetraComm& comm) {
  Settings s;
  const std::string which =
      in.choice("backend", cuda_device_count() > 0 ? "cuda" : "host", {"cuda", "host"});
  s.backend = which == "cuda" ? Backend::Cuda : Backend::Host;
  s.cg.tolerance = in.number("tol", 1e-8);
  s.cg.max_iterations = static_cast<int>(in.integer("max-iters", 2000, 1, 1000000000));
  s.runs = static_cast<int>(in.integer("runs", 3, 1, 1000));
  const std::string spec = in.text("matrix", "stencil27:n=160");
  const int weak_n = static_cast<int>(in.integer("weak-n", 160, 1, 100000));
  const int ranks = comm->getSize();
  const bool root = comm->getRank() == 0;

  std::vector<Record> rows;
  if (in.flag("baselines") && ranks == 1) {
    rows.push_back(one_process(spec, s, 1));
    const int gpus = cuda_device_count();
    if (s.backend == Backend::Cuda && gpus > 1) rows.push_back(one_process(spec, s, gpus));
  }
  for (Record& r : distributed(spec, "strong", comm, s, true)) rows.push_back(std::move(r));
  for (Record& r : distributed(weak_stencil27(weak_n, ranks), "weak", comm, s, false))
    rows.push_back(std::move(r));
  if (!root) return 0;
  std::printf("%-20s %-6s %5s %-12s %7s %10s %6s %9s\n", "matrix", "scale", "ranks", "solver",
              "devices", "ms/iter", "iters", "residual");
  for (const Record& r : rows) {
    const auto get = [&](const char* key) -> const Value& {
      for (const auto& [k, v] : r)
        if (k == key) return v;
      throw InvalidArgument(key);
    };
    std::printf("%-20s %-6s %5lld %-12s %7lld %10.4f %6lld %9.2e\n",
                std::get<std::string>(get("matrix").v).c_str(),
                std::get<std::string>(get("scaling").v).c_str(),
                std::get<long long>(get("ranks").v), std::get<std::string>(get("solver").v).c_str(),
                std::get<long long>(get("devices").v), std::get<double>(get("ms_per_iteration").v),
                std::get<long long>(get("iterations").v), std::get<double>(get("residual").v));
  }
  if (in.has("out")) {
    const Record header = {{"date", utc_date()},
                           {"ranks", ranks},
                           {"cuda_devices", cuda_device_count()},
                           {"tolerance", s.cg.tolerance},
                           {"runs", s.runs}};
    write_results(in.text("out", "."), "distributed_bench", header, rows, rows,
                  {"matrix", "scaling", "ranks", "solver", "devices", "ms_per_iteration",
                   "iterations", "residual"});
  }
  return 0;
}

Command command() {
  Command c;
  c.name = "distributed_bench";
  c.program = "";
  c.description =
      "kspmv's fused CG and Belos CG over MPI ranks on device-resident vectors\n"
      "(kspmv::MpiOperator), strong and weak scaling, against kspmv::cg in one process\n"
      "(--baselines). mpiexec -np N distributed_bench; perf_tests/run_distributed.sh runs\n"
      "N = 1, 2, 4.";
  c.options = {
      {"matrix", "SPEC", "the strong-scaling matrix (default stencil27:n=160)"},
      {"weak-n", "N", "weak scaling: about N^3 rows of stencil27 per rank (default 160)"},
      {"backend", "cuda|host", "the kspmv backend (default cuda where a GPU is present)"},
      {"tol", "T", "relative residual to reach (default 1e-8)"},
      {"max-iters", "N", "iteration limit (default 2000)"},
      {"runs", "N", "timed solves of each kind after a warm-up (default 3)"},
      {"baselines", "", "on one rank: kspmv::cg in one process on one GPU and on all"},
      {"out", "DIR", "write distributed_bench.csv, distributed_bench.json and summary.json"},
  };
  c.run = [](const ParsedArgs& in) {
    return with_mpi([&](const TpetraComm& comm) {
      int rc = 0;
      on_every_rank(*comm, [&] { rc = run(in, comm); });
      return rc;
    });
  };
  c.extra_help = gen::spec_help;
  return c;
}

}  // namespace

int main(int argc, char** argv) {
  return kspmv::tools::command_main(command(), argc, argv);
}
