// What the kspmv tool and the benchmarks share past one node (built with the Tpetra adapter):
// MPI started through Tpetra, errors raised on every rank together, a matrix loaded for every
// rank, vectors that do not depend on the number of ranks, and Belos solves.
#pragma once

#include <Teuchos_Comm.hpp>
#include <Teuchos_RCP.hpp>
#include <Tpetra_CrsMatrix_decl.hpp>
#include <Tpetra_MultiVector_decl.hpp>
#include <Tpetra_Operator.hpp>
#include <cstdint>
#include <functional>
#include <string>

#include "kspmv/interop/tpetra_distributed.hpp"

namespace kspmv::tools {

using TpetraMatrix = Tpetra::CrsMatrix<double>;
using TpetraVectors = Tpetra::MultiVector<double>;
using TpetraComm = Teuchos::RCP<const Teuchos::Comm<int>>;

// Runs body(comm) between the start of MPI (through Tpetra; Kokkos is running already) and its
// end, so that every Tpetra object of the body is gone before MPI_Finalize. A program started
// without mpirun is one rank (MPI singleton).
int with_mpi(const std::function<int(const TpetraComm&)>& body);

// Runs body on every rank of comm; when it throws on some rank, it throws on every rank: the
// original error where it happened, elsewhere an Error naming the first rank that failed (so that
// no rank waits in a collective call for one that gave up). Collective.
void on_every_rank(const Teuchos::Comm<int>& comm, const std::function<void()>& body);

// The matrix of `source` over the ranks of comm. "gen:SPEC": each rank generates its own block
// of rows (equal row counts), no rank builds the whole matrix (except for kron and rgg). A Matrix
// Market file is read on rank 0 (load_matrix) and distributed by Tpetra's Export, rows split
// "rows" (equal row counts) or "nz" (about equal non-zeros; kspmv's NZ partitioner). Collective;
// errors are raised on every rank.
Teuchos::RCP<TpetraMatrix> load_distributed(const std::string& source, const TpetraComm& comm,
                                            const std::string& split = "rows",
                                            bool allow_nonfinite = false);

// k vectors on `map` whose entry (global row g, column j) is uniform in [-1, 1) from (seed, g,
// j): the same vectors on any number of ranks.
Teuchos::RCP<TpetraVectors> random_vectors(const Teuchos::RCP<const Tpetra::Map<>>& map,
                                           std::size_t k, std::uint64_t seed);

// The largest over the columns of ||x_j - y_j|| / ||y_j|| (||x_j|| where y_j is zero). Collective.
double max_relative_error(const TpetraVectors& x, const TpetraVectors& y);

struct KrylovResult {
  int iterations = 0;
  bool converged = false;
  std::string stopped;       // why it stopped short, in words ("" when it converged)
  double true_residual = 0;  // the largest over the columns of ||b - A x|| / ||b||, recomputed
  double seconds = 0;        // the solve alone
};

// Solves op X = B, X holding the initial guess, with Belos: "cg" (PseudoBlockCG) or "gmres"
// (BlockGmres restarted every `restart` iterations), to relative residual `tol` (of the initial
// residual) within max_iters; then recomputes the true residual with `a` (Tpetra's own apply).
// A CG breakdown (p'Ap <= 0: A is not SPD) ends the solve unconverged. Belos prints nothing.
// Collective.
KrylovResult belos_solve(const std::string& method,
                         const Teuchos::RCP<const Tpetra::Operator<double>>& op,
                         const TpetraMatrix& a, const TpetraVectors& b, TpetraVectors& x,
                         double tol, int max_iters, int restart = 50);

// The same on kspmv's device-resident vectors (kspmv/interop/tpetra_belos.hpp), every vector of
// the solve where the ranks' backends compute; the true residual with op->matrix()'s own SpMV.
KrylovResult belos_solve(const std::string& method,
                         const Teuchos::RCP<const MpiOperator<double>>& op,
                         const MpiMultiVector<double>& b, MpiMultiVector<double>& x, double tol,
                         int max_iters, int restart = 50);

// A stencil27 spec of about `ranks` times n^3 rows (n * cbrt(ranks) points a side), for weak
// scaling: each of `ranks` ranks then builds about n^3 rows of its own (load_distributed).
std::string weak_stencil27(int n, int ranks);

}  // namespace kspmv::tools
