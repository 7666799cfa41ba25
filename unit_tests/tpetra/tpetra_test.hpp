// What the Tpetra adapter's tests share: the communicator, generated distributed matrices and the
// comparison of a kspmv apply with Tpetra::CrsMatrix::apply.
#pragma once

#include <Tpetra_Core.hpp>
#include <Tpetra_CrsMatrix.hpp>
#include <Tpetra_MultiVector.hpp>
#include <limits>
#include <string>

#include "kspmv/gen/generators.hpp"
#include "kspmv/interop/tpetra_matrix.hpp"
#include "kspmv/interop/tpetra_operator.hpp"
#include "tools/tpetra/distributed.hpp"

namespace kspmv::test {

using tools::TpetraMatrix;
using tools::TpetraVectors;
using Map = Tpetra::Map<>;

inline Teuchos::RCP<const Teuchos::Comm<int>> comm() {
  return Tpetra::getDefaultComm();
}

// The matrix of a gen: spec, each rank generating its own rows (equal row counts).
inline Teuchos::RCP<TpetraMatrix> generated(const std::string& spec) {
  return tools::load_distributed("gen:" + spec, comm());
}

// A 7-point Laplacian on an n^3 grid plus a central-difference convection term along x with cell
// Peclet number 2c (the x neighbours get -1 -+ c): nonsymmetric. Each rank builds its own rows.
inline Teuchos::RCP<TpetraMatrix> convection_diffusion(Ordinal n, double c) {
  const Ordinal m = n * n * n;
  const auto starts = uniform_row_starts(m, comm()->getSize());
  const int r = comm()->getRank();
  const auto first = static_cast<Ordinal>(starts[r]);
  auto rows = gen::stencil3d_7<double>(n, {first, static_cast<Ordinal>(starts[r + 1])});
  for (Ordinal i = 0; i < rows.nrows; ++i)
    for (Offset k = rows.row_ptr(i); k < rows.row_ptr(i + 1); ++k) {
      const Ordinal offset = rows.col_idx(k) - (first + i);
      if (offset == 1) rows.values(k) = -1 + c;
      if (offset == -1) rows.values(k) = -1 - c;
    }
  return tpetra_matrix_from_rows(comm(), m, rows);
}

// The relative error of op's Y = alpha*op(A)*X + beta*Y against A's own apply, on k random
// vectors; Y starts random, or NaN where beta == 0 (an entry left unwritten cannot pass).
inline double apply_error(const TpetraOperator<double>& op, const TpetraMatrix& a, std::size_t k,
                          Teuchos::ETransp mode, double alpha, double beta) {
  const bool trans = mode != Teuchos::NO_TRANS;
  const auto x = tools::random_vectors(trans ? a.getRangeMap() : a.getDomainMap(), k, 11);
  const auto y0 = tools::random_vectors(trans ? a.getDomainMap() : a.getRangeMap(), k, 12);
  TpetraVectors expected(*y0, Teuchos::Copy), y(*y0, Teuchos::Copy);
  if (beta == 0) y.putScalar(std::numeric_limits<double>::quiet_NaN());
  a.apply(*x, expected, mode, alpha, beta);
  op.apply(*x, y, mode, alpha, beta);
  return tools::max_relative_error(y, expected);
}

}  // namespace kspmv::test
