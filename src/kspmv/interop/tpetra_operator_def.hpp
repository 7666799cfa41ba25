// kspmv::TpetraOperator's definitions, for any Tpetra Node: Tpetra moves the data between ranks,
// kspmv applies each rank's block. The library instantiates Tpetra's default Node; a program on
// another includes this header (after kspmv/interop/tpetra_operator.hpp's) and instantiates
// `template class kspmv::TpetraOperator<double, ItsNode>;` once.
#pragma once

#include <Tpetra_CrsMatrix.hpp>
#include <Tpetra_Export.hpp>
#include <Tpetra_Import.hpp>
#include <Tpetra_MultiVector.hpp>

#include "kspmv/core/error.hpp"
#include "kspmv/interop/tpetra_matrix.hpp"
#include "kspmv/interop/tpetra_operator.hpp"

namespace kspmv {

namespace tpetra_operator_detail {

// The local block of `a` (rows of the row map, columns of the column map) as a kspmv Operator.
template <class Scalar, class Matrix>
Operator<Scalar> local_operator(const Matrix& a, Options options) {
  const auto ncols = static_cast<Ordinal>(local_count(*a.getColMap()));
  if (options.backend == Backend::Cuda) {
    options.devices = {device_for_rank(*a.getComm(), options.devices)};
    const auto m = a.getLocalMatrixDevice();  // in CUDA memory when Tpetra runs on CUDA
    return Operator<Scalar>(ncols, m.graph.row_map, m.graph.entries, m.values, options);
  }
  options.devices = {0};  // one block per rank
  const auto m = a.getLocalMatrixHost();
  return Operator<Scalar>(ncols, m.graph.row_map, m.graph.entries, m.values, options);
}

template <class Matrix>
const Matrix& checked(const Teuchos::RCP<const Matrix>& a) {
  if (a.is_null()) throw InvalidArgument("TpetraOperator: null matrix");
  if (!a->isFillComplete())
    throw InvalidArgument("TpetraOperator: the matrix is not fill complete");
  return *a;
}

// y = beta * y, with beta == 0 overwriting (NaN included).
template <class MV, class Scalar>
void scale(MV& y, Scalar beta) {
  if (beta == Scalar(0))
    y.putScalar(Scalar(0));
  else if (beta != Scalar(1))
    y.scale(beta);
}

}  // namespace tpetra_operator_detail

template <class Scalar, class Node>
TpetraOperator<Scalar, Node>::TpetraOperator(Teuchos::RCP<const crs_matrix_type> a, Options options)
    : matrix_(a),
      importer_(tpetra_operator_detail::checked(a).getGraph()->getImporter()),
      exporter_(a->getGraph()->getExporter()),
      local_(tpetra_operator_detail::local_operator<Scalar>(*a, std::move(options))) {}

template <class Scalar, class Node>
TpetraOperator<Scalar, Node>::~TpetraOperator() = default;

template <class Scalar, class Node>
auto TpetraOperator<Scalar, Node>::getDomainMap() const -> Teuchos::RCP<const map_type> {
  return matrix_->getDomainMap();
}

template <class Scalar, class Node>
auto TpetraOperator<Scalar, Node>::getRangeMap() const -> Teuchos::RCP<const map_type> {
  return matrix_->getRangeMap();
}

template <class Scalar, class Node>
auto TpetraOperator<Scalar, Node>::work(Teuchos::RCP<multivector_type>& slot,
                                        const Teuchos::RCP<const map_type>& map,
                                        std::size_t k) const -> multivector_type& {
  if (slot.is_null() || slot->getNumVectors() != k)
    slot = Teuchos::rcp(new multivector_type(map, k, false));
  return *slot;
}

template <class Scalar, class Node>
void TpetraOperator<Scalar, Node>::apply_local(const multivector_type& x, multivector_type& y,
                                               Mode mode, Scalar alpha, Scalar beta) const {
  if (!x.isConstantStride() || !y.isConstantStride()) {
    for (std::size_t j = 0; j < x.getNumVectors(); ++j)
      apply_local(*x.getVector(j), *y.getVectorNonConst(j), mode, alpha, beta);
    return;
  }
  // k columns at once (rank-2 LayoutLeft Views); device Views where the kernels run on a GPU.
  if (local_.options().backend == Backend::Cuda) {
    const auto xv = x.getLocalViewDevice(Tpetra::Access::ReadOnly);
    const auto yv = beta == Scalar(0) ? y.getLocalViewDevice(Tpetra::Access::OverwriteAll)
                                      : y.getLocalViewDevice(Tpetra::Access::ReadWrite);
    local_.apply(alpha, xv, beta, yv, mode);
    local_.synchronize();
  } else {
    const auto xv = x.getLocalViewHost(Tpetra::Access::ReadOnly);
    const auto yv = beta == Scalar(0) ? y.getLocalViewHost(Tpetra::Access::OverwriteAll)
                                      : y.getLocalViewHost(Tpetra::Access::ReadWrite);
    local_.apply(alpha, xv, beta, yv, mode);
  }
}

template <class Scalar, class Node>
void TpetraOperator<Scalar, Node>::apply(const multivector_type& X, multivector_type& Y,
                                         Teuchos::ETransp mode, Scalar alpha, Scalar beta) const {
  // A^T reads x in the row map and writes y in the column map: the Export runs backwards to
  // bring x in, the Import backwards to send y out (as Tpetra::CrsMatrix::apply does).
  const bool trans = mode != Teuchos::NO_TRANS;
  const auto& in_map = trans ? getRangeMap() : getDomainMap();
  const auto& out_map = trans ? getDomainMap() : getRangeMap();
  const std::size_t k = X.getNumVectors();
  if (Y.getNumVectors() != k)
    throw InvalidArgument("TpetraOperator::apply: X has " + std::to_string(k) +
                          " vectors but Y has " + std::to_string(Y.getNumVectors()));
  if (X.getLocalLength() != local_count(*in_map) || Y.getLocalLength() != local_count(*out_map))
    throw InvalidArgument("TpetraOperator::apply: X or Y is not distributed like the " +
                          std::string(trans ? "range and domain" : "domain and range") +
                          " maps of the matrix");
  if (alpha == Scalar(0)) {
    tpetra_operator_detail::scale(Y, beta);
    return;
  }
  const auto& in_transfer = trans ? static_cast<bool>(exporter_) : static_cast<bool>(importer_);
  const auto& out_transfer = trans ? static_cast<bool>(importer_) : static_cast<bool>(exporter_);
  const auto& in_local_map = trans ? matrix_->getRowMap() : matrix_->getColMap();
  const auto& out_local_map = trans ? matrix_->getColMap() : matrix_->getRowMap();
  auto& in_slot = trans ? row_work_ : column_work_;
  auto& out_slot = trans ? column_work_ : row_work_;
  const Mode local_mode = trans ? Mode::Transpose : Mode::NoTranspose;

  const multivector_type* x = &X;
  if (in_transfer) {
    multivector_type& xl = work(in_slot, in_local_map, k);
    if (trans)
      xl.doImport(X, *exporter_, Tpetra::INSERT);
    else
      xl.doImport(X, *importer_, Tpetra::INSERT);
    x = &xl;
  } else if (!out_transfer && X.aliases(Y)) {  // y written in place while x is read
    multivector_type& xl = work(in_slot, in_local_map, k);
    Tpetra::deep_copy(xl, X);
    x = &xl;
  }
  if (!out_transfer) {
    apply_local(*x, Y, local_mode, alpha, beta);
    return;
  }
  // ADD_ASSIGN adds into the entries this rank keeps too (ADD would replace those).
  multivector_type& yl = work(out_slot, out_local_map, k);
  apply_local(*x, yl, local_mode, alpha, Scalar(0));
  tpetra_operator_detail::scale(Y, beta);
  if (trans)
    Y.doExport(yl, *importer_, Tpetra::ADD_ASSIGN);
  else
    Y.doExport(yl, *exporter_, Tpetra::ADD_ASSIGN);
}

template <class Scalar, class Node>
void TpetraOperator<Scalar, Node>::refresh_values() {
  if (local_.options().backend == Backend::Cuda)
    local_.update_values(matrix_->getLocalMatrixDevice().values);
  else
    local_.update_values(matrix_->getLocalMatrixHost().values);
}

template <class Scalar, class Node>
std::string TpetraOperator<Scalar, Node>::description() const {
  const Options& o = local_.options();
  std::string d = "kspmv::TpetraOperator (" + std::string(to_string(o.backend)) + " kernel " +
                  to_string(local_.kernel());
  if (o.backend == Backend::Cuda) d += ", device " + std::to_string(o.devices[0]);
  return d + ")";
}

}  // namespace kspmv
