// MPI through Tpetra for the tool and the benchmarks: start and end, shared failure, loading,
// vectors and Belos solves.
#include "tools/tpetra/distributed.hpp"

#include <BelosBlockGmresSolMgr.hpp>
#include <BelosLinearProblem.hpp>
#include <BelosPseudoBlockCGSolMgr.hpp>
#include <BelosTpetraAdapter.hpp>
#include <Teuchos_CommHelpers.hpp>
#include <Teuchos_oblackholestream.hpp>
#include <Tpetra_Core.hpp>
#include <Tpetra_CrsMatrix.hpp>
#include <Tpetra_MultiVector.hpp>
#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <memory>
#include <vector>

#include "kspmv/core/error.hpp"
#include "kspmv/gen/generators.hpp"
#include "kspmv/interop/tpetra_belos.hpp"
#include "kspmv/interop/tpetra_matrix.hpp"
#include "tools/common.hpp"

namespace kspmv::tools {

int with_mpi(const std::function<int(const TpetraComm&)>& body) {
  int argc = 0;
  char** argv = nullptr;
  Tpetra::ScopeGuard mpi(&argc, &argv);
  return body(Tpetra::getDefaultComm());
}

void on_every_rank(const Teuchos::Comm<int>& comm, const std::function<void()>& body) {
  std::exception_ptr error;
  try {
    body();
  } catch (...) {
    error = std::current_exception();
  }
  const int mine = error ? comm.getRank() : comm.getSize();
  int first = comm.getSize();
  Teuchos::reduceAll(comm, Teuchos::REDUCE_MIN, mine, Teuchos::outArg(first));
  if (error) std::rethrow_exception(error);
  if (first < comm.getSize())
    throw Error("rank " + std::to_string(first) + " failed (its message says why)");
}

Teuchos::RCP<TpetraMatrix> load_distributed(const std::string& source, const TpetraComm& comm,
                                            const std::string& split, bool allow_nonfinite) {
  if (split != "rows" && split != "nz")
    throw InvalidArgument("the rows are split 'rows' or 'nz', not '" + split + "'");
  const int rank = comm->getRank(), ranks = comm->getSize();
  if (source.rfind("gen:", 0) == 0) {
    if (split != "rows")
      throw InvalidArgument(
          "a generated matrix is split into equal row counts (rows): 'nz' "
          "needs the whole row pointer, which no rank builds");
    const std::string spec = source.substr(4);
    CsrMatrix<double> rows;
    TpetraGlobal m = 0;
    on_every_rank(*comm, [&] {
      m = gen::spec_rows(spec);
      const auto starts = uniform_row_starts(m, ranks);
      rows = gen::from_spec<double>(
          spec, {static_cast<Ordinal>(starts[rank]), static_cast<Ordinal>(starts[rank + 1])});
    });
    return tpetra_matrix_from_rows(comm, m, rows);
  }
  // A file: read on rank 0 only, then Tpetra's Export sends each rank its rows.
  CsrMatrix<double> whole;
  std::vector<TpetraGlobal> starts;
  on_every_rank(*comm, [&] {
    if (rank != 0) return;
    whole = load_matrix<double>(source, stderr_is_terminal(), allow_nonfinite);
    if (split == "nz") starts = nz_row_starts(whole.row_ptr, ranks);
  });
  return distribute(whole, comm, starts);
}

Teuchos::RCP<TpetraVectors> random_vectors(const Teuchos::RCP<const Tpetra::Map<>>& map,
                                           std::size_t k, std::uint64_t seed) {
  auto v = Teuchos::rcp(new TpetraVectors(map, k, false));
  const auto view = v->getLocalViewHost(Tpetra::Access::OverwriteAll);
  for (std::size_t j = 0; j < k; ++j)
    for (std::size_t i = 0; i < view.extent(0); ++i) {
      view(i, j) = random_entry<double>(seed, map->getGlobalElement(static_cast<int>(i)), j);
    }
  return v;
}

double max_relative_error(const TpetraVectors& x, const TpetraVectors& y) {
  const std::size_t k = x.getNumVectors();
  TpetraVectors diff(x, Teuchos::Copy);
  diff.update(-1.0, y, 1.0);
  std::vector<double> d(k), ny(k), nx(k);
  diff.norm2(Teuchos::ArrayView<double>(d));
  y.norm2(Teuchos::ArrayView<double>(ny));
  x.norm2(Teuchos::ArrayView<double>(nx));
  double worst = 0;
  for (std::size_t j = 0; j < k; ++j) {
    // NaN anywhere makes the error NaN, which compares false against any bound.
    const double e = d[j] / (ny[j] > 0 ? ny[j] : nx[j] > 0 ? nx[j] : 1);
    worst = std::isnan(e) || std::isnan(worst) ? std::numeric_limits<double>::quiet_NaN()
                                               : std::max(worst, e);
  }
  return worst;
}

namespace {

// Belos' "cg" (PseudoBlockCG) or "gmres" (BlockGmres) on op X = B: the iterations, whether it
// converged or why not, and the time of the solve (the true residual is the caller's).
template <class MV, class OP>
KrylovResult belos_iterate(const std::string& method, const Teuchos::RCP<const OP>& op, const MV& b,
                           MV& x, double tol, int max_iters, int restart,
                           const Teuchos::Comm<int>& comm) {
  using Problem = Belos::LinearProblem<double, MV, OP>;
  if (method != "cg" && method != "gmres")
    throw InvalidArgument("Krylov method 'cg' or 'gmres', not '" + method + "'");
  auto problem = Teuchos::rcp(new Problem(op, Teuchos::rcpFromRef(x), Teuchos::rcpFromRef(b)));
  if (!problem->setProblem()) throw InvalidArgument("Belos could not set up the problem");
  auto params = Teuchos::rcp(new Teuchos::ParameterList);
  params->set("Convergence Tolerance", tol);
  params->set("Maximum Iterations", max_iters);
  params->set("Output Stream", Teuchos::RCP<std::ostream>(new Teuchos::oblackholestream));
  std::unique_ptr<Belos::SolverManager<double, MV, OP>> solver;
  if (method == "cg") {
    solver = std::make_unique<Belos::PseudoBlockCGSolMgr<double, MV, OP>>(problem, params);
  } else {
    params->set("Num Blocks", restart);
    params->set("Maximum Restarts", max_iters / restart + 1);
    solver = std::make_unique<Belos::BlockGmresSolMgr<double, MV, OP>>(problem, params);
  }
  KrylovResult result;
  comm.barrier();
  const auto start = std::chrono::steady_clock::now();
  try {
    result.converged = solver->solve() == Belos::Converged;
    if (!result.converged) result.stopped = "the iteration limit ran out";
  } catch (const Belos::CGIterateFailure&) {  // the same on every rank: p'Ap is a global sum
    result.stopped = "non-positive curvature p'Ap: the matrix is not symmetric positive definite";
  }
  result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  result.iterations = solver->getNumIters();
  return result;
}

// The largest over the columns of ||b - A x|| / ||b||, with Tpetra's own SpMV.
double true_residual(const TpetraMatrix& a, const TpetraVectors& b, const TpetraVectors& x) {
  TpetraVectors r(b, Teuchos::Copy);
  a.apply(x, r, Teuchos::NO_TRANS, -1.0, 1.0);
  std::vector<double> rn(b.getNumVectors()), bn(b.getNumVectors());
  r.norm2(Teuchos::ArrayView<double>(rn));
  b.norm2(Teuchos::ArrayView<double>(bn));
  double worst = 0;
  for (std::size_t j = 0; j < rn.size(); ++j)
    worst = std::max(worst, bn[j] > 0 ? rn[j] / bn[j] : rn[j]);
  return worst;
}

}  // namespace

KrylovResult belos_solve(const std::string& method,
                         const Teuchos::RCP<const Tpetra::Operator<double>>& op,
                         const TpetraMatrix& a, const TpetraVectors& b, TpetraVectors& x,
                         double tol, int max_iters, int restart) {
  KrylovResult result = belos_iterate(method, op, b, x, tol, max_iters, restart, *a.getComm());
  result.true_residual = true_residual(a, b, x);
  return result;
}

KrylovResult belos_solve(const std::string& method,
                         const Teuchos::RCP<const MpiOperator<double>>& op,
                         const MpiMultiVector<double>& b, MpiMultiVector<double>& x, double tol,
                         int max_iters, int restart) {
  const TpetraMatrix& a = op->matrix();
  KrylovResult result = belos_iterate(method, op, b, x, tol, max_iters, restart, *a.getComm());
  TpetraVectors bt(a.getRangeMap(), b.num_vectors()), xt(a.getDomainMap(), x.num_vectors());
  b.copy_to(bt);
  x.copy_to(xt);
  result.true_residual = true_residual(a, bt, xt);
  return result;
}

std::string weak_stencil27(int n, int ranks) {
  if (n < 1 || ranks < 1) throw InvalidArgument("weak_stencil27: needs n >= 1 and ranks >= 1");
  return "stencil27:n=" + std::to_string(std::lround(n * std::cbrt(double(ranks))));
}

}  // namespace kspmv::tools
