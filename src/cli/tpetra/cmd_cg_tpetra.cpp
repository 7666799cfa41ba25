// kspmv cg --tpetra: the matrix distributed over MPI ranks by Tpetra (a file read on rank 0, a
// generated matrix built by each rank for its own rows), Belos CG on top, the residual recomputed
// with Tpetra's own SpMV. With the CUDA backend every vector stays on the ranks' GPUs
// (MpiOperator: Tpetra's Import plans the halo, kspmv moves it); with the host backend each
// rank's block is a kspmv Operator under Tpetra's vectors (TpetraOperator).
#include <Tpetra_CrsMatrix.hpp>
#include <Tpetra_MultiVector.hpp>
#include <cstdio>
#include <iostream>

#include "commands.hpp"
#include "kspmv/interop/tpetra_operator.hpp"
#include "tools/common.hpp"
#include "tools/json.hpp"
#include "tools/tpetra/distributed.hpp"

namespace kspmv::cli {

namespace {

int solve(const ParsedArgs& args, Options options, double tol, int max_iters,
          const TpetraComm& comm) {
  const std::string source = args.positionals[0];
  const auto a = load_distributed(source, comm, args.choice("split", "rows", {"rows", "nz"}),
                                  args.flag("allow-nonfinite"));
  if (a->getGlobalNumRows() != a->getDomainMap()->getGlobalNumElements())
    throw InvalidArgument(source + " is not square; CG needs an SPD matrix");
  // Each rank's GPU by its node-local rank unless --devices names the node's devices to share.
  if (options.backend == Backend::Cuda && !args.has("devices")) options.devices = {kAllDevices};
  // CUDA: every vector on the ranks' GPUs (MpiOperator, Belos on kspmv's vectors); host: Belos
  // on Tpetra's vectors through TpetraOperator.
  const bool on_device = options.backend == Backend::Cuda;
  std::string description, kernel;
  KrylovResult res;
  if (on_device) {
    Teuchos::RCP<MpiOperator<double>> op;
    on_every_rank(*comm, [&] { op = Teuchos::rcp(new MpiOperator<double>(a, options)); });
    MpiMultiVector<double> b = op->make_vectors(1), x = op->make_vectors(1);
    b.randomize(7);
    res = belos_solve("cg", op, b, x, tol, max_iters);
    description = op->description(), kernel = to_string(op->kernel());
  } else {
    Teuchos::RCP<TpetraOperator<double>> op;
    on_every_rank(*comm, [&] { op = Teuchos::rcp(new TpetraOperator<double>(a, options)); });
    const auto b = random_vectors(a->getRangeMap(), 1, 7);
    TpetraVectors x(a->getDomainMap(), 1);
    res = belos_solve("cg", op, *a, *b, x, tol, max_iters);
    description = op->description(), kernel = to_string(op->local().kernel());
  }
  // A converged solve must hold its tolerance (with room for the recursive residual's drift).
  const bool ok = res.converged && res.true_residual <= 10 * tol;
  if (comm->getRank() != 0) return ok ? 0 : 1;

  const double ms = res.iterations > 0 ? 1e3 * res.seconds / res.iterations : 0;
  if (args.flag("json")) {
    JsonWriter j(std::cout);
    begin_output(j)
        .field("matrix", source)
        .field("nrows", static_cast<long long>(a->getGlobalNumRows()))
        .field("nnz", static_cast<long long>(a->getGlobalNumEntries()))
        .field("precision", "double")
        .field("ranks", comm->getSize())
        .field("backend", to_string(options.backend))
        .field("kernel", kernel)
        .field("solver", "belos-cg")
        .field("vectors", on_device ? "kspmv-device" : "tpetra")
        .field("tolerance", tol)
        .field("iterations", res.iterations)
        .field("converged", res.converged)
        .field("relative_residual", res.true_residual)
        .field("ms_per_iteration", ms)
        .field("why", res.stopped)
        .field("ok", ok)
        .end_object();
  } else {
    std::printf("matrix     %s: %lld x %lld, %lld non-zeros, double\n", source.c_str(),
                static_cast<long long>(a->getGlobalNumRows()),
                static_cast<long long>(a->getGlobalNumRows()),
                static_cast<long long>(a->getGlobalNumEntries()));
    std::printf("operator   %d MPI rank(s), Tpetra's Import %s; rank 0: %s\n", comm->getSize(),
                on_device ? "plans the halo, vectors on the GPUs" : "moves the halo",
                description.c_str());
    std::printf("cg         Belos CG, %d iterations, %.4f ms per iteration, %s (tolerance %.1e)\n",
                res.iterations, ms, res.converged ? "converged" : "NOT converged", tol);
    if (!res.stopped.empty()) std::printf("stopped    %s\n", res.stopped.c_str());
    std::printf("check      relative residual ||b - A x|| / ||b|| = %.3g: %s\n", res.true_residual,
                ok ? "ok" : "WRONG");
  }
  return ok ? 0 : 1;
}

}  // namespace

int run_cg_tpetra(const ParsedArgs& args, const Options& options, double tol, int max_iters) {
  if (args.choice("precision", "double", {"float", "double"}) != "double")
    throw UsageError("--tpetra solves in double (the scalar Tpetra is built for)");
  for (const char* multi : {"partition", "exchange"})
    if (args.has(multi))
      throw UsageError(std::string("--") + multi +
                       " does not apply with --tpetra (one device a rank)");
  return with_mpi(
      [&](const TpetraComm& comm) { return solve(args, options, tol, max_iters, comm); });
}

}  // namespace kspmv::cli
