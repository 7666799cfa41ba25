// kspmv::TpetraOperator: Tpetra moves the data between ranks, kspmv applies each rank's block.
#include "kspmv/interop/tpetra_operator.hpp"

#include <mpi.h>

#include <Teuchos_DefaultMpiComm.hpp>
#include <Tpetra_CrsMatrix.hpp>
#include <Tpetra_Export.hpp>
#include <Tpetra_Import.hpp>
#include <Tpetra_MultiVector.hpp>
#include <numeric>

#include "kspmv/core/error.hpp"
#include "kspmv/registry.hpp"

namespace kspmv {

int node_local_rank(const Teuchos::Comm<int>& comm) {
  const auto* mpi = dynamic_cast<const Teuchos::MpiComm<int>*>(&comm);
  if (mpi == nullptr) return 0;  // a serial communicator: one rank
  MPI_Comm node;
  MPI_Comm_split_type((*mpi->getRawMpiComm())(), MPI_COMM_TYPE_SHARED, comm.getRank(),
                      MPI_INFO_NULL, &node);
  int rank = 0;
  MPI_Comm_rank(node, &rank);
  MPI_Comm_free(&node);
  return rank;
}

int device_for_rank(const Teuchos::Comm<int>& comm, const std::vector<int>& devices) {
  std::vector<int> pool = devices;
  if (devices.size() == 1 && devices[0] == kAllDevices) {
    pool.resize(static_cast<std::size_t>(cuda_device_count()));
    std::iota(pool.begin(), pool.end(), 0);
  }
  if (pool.empty())
    throw UnsupportedError(devices.empty() ? "TpetraOperator: no device given"
                                           : "TpetraOperator: no CUDA device is present");
  return pool[static_cast<std::size_t>(node_local_rank(comm)) % pool.size()];
}

namespace {

// The local block of `a` (rows of the row map, columns of the column map) as a kspmv Operator.
template <class Scalar, class Matrix>
Operator<Scalar> local_operator(const Matrix& a, Options options) {
  const auto ncols = static_cast<Ordinal>(a.getColMap()->getNodeNumElements());
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

// Whether the local entries of x and y share memory (then y cannot be written while x is read).
template <class MV>
bool overlap(const MV& x, const MV& y) {
  const auto xv = x.getLocalViewHost(Tpetra::Access::ReadOnly);
  const auto yv = y.getLocalViewHost(Tpetra::Access::ReadOnly);
  const auto* x0 = xv.data();
  const auto* y0 = yv.data();
  return x0 != nullptr && y0 != nullptr && x0 < y0 + yv.span() && y0 < x0 + xv.span();
}

// y = beta * y, with beta == 0 overwriting (NaN included).
template <class MV, class Scalar>
void scale(MV& y, Scalar beta) {
  if (beta == Scalar(0))
    y.putScalar(Scalar(0));
  else if (beta != Scalar(1))
    y.scale(beta);
}

}  // namespace

template <class Scalar>
TpetraOperator<Scalar>::TpetraOperator(Teuchos::RCP<const crs_matrix_type> a, Options options)
    : matrix_(a),
      importer_(checked(a).getGraph()->getImporter()),
      exporter_(a->getGraph()->getExporter()),
      local_(local_operator<Scalar>(*a, std::move(options))) {}

template <class Scalar>
TpetraOperator<Scalar>::~TpetraOperator() = default;

template <class Scalar>
auto TpetraOperator<Scalar>::getDomainMap() const -> Teuchos::RCP<const map_type> {
  return matrix_->getDomainMap();
}

template <class Scalar>
auto TpetraOperator<Scalar>::getRangeMap() const -> Teuchos::RCP<const map_type> {
  return matrix_->getRangeMap();
}

template <class Scalar>
auto TpetraOperator<Scalar>::work(Teuchos::RCP<multivector_type>& slot,
                                  const Teuchos::RCP<const map_type>& map, std::size_t k) const
    -> multivector_type& {
  if (slot.is_null() || slot->getNumVectors() != k)
    slot = Teuchos::rcp(new multivector_type(map, k, false));
  return *slot;
}

template <class Scalar>
void TpetraOperator<Scalar>::apply_local(const multivector_type& x, multivector_type& y, Mode mode,
                                         Scalar alpha, Scalar beta) const {
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

template <class Scalar>
void TpetraOperator<Scalar>::apply(const multivector_type& X, multivector_type& Y,
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
  if (X.getLocalLength() != in_map->getNodeNumElements() ||
      Y.getLocalLength() != out_map->getNodeNumElements())
    throw InvalidArgument("TpetraOperator::apply: X or Y is not distributed like the " +
                          std::string(trans ? "range and domain" : "domain and range") +
                          " maps of the matrix");
  if (alpha == Scalar(0)) {
    scale(Y, beta);
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
  } else if (!out_transfer && overlap(X, Y)) {  // y written in place while x is read
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
  scale(Y, beta);
  if (trans)
    Y.doExport(yl, *importer_, Tpetra::ADD_ASSIGN);
  else
    Y.doExport(yl, *exporter_, Tpetra::ADD_ASSIGN);
}

template <class Scalar>
void TpetraOperator<Scalar>::refresh_values() {
  if (local_.options().backend == Backend::Cuda)
    local_.update_values(matrix_->getLocalMatrixDevice().values);
  else
    local_.update_values(matrix_->getLocalMatrixHost().values);
}

template <class Scalar>
std::string TpetraOperator<Scalar>::description() const {
  const Options& o = local_.options();
  std::string d = "kspmv::TpetraOperator (" + std::string(to_string(o.backend)) + " kernel " +
                  to_string(local_.kernel());
  if (o.backend == Backend::Cuda) d += ", device " + std::to_string(o.devices[0]);
  return d + ")";
}

#ifdef HAVE_TPETRA_INST_DOUBLE
template class TpetraOperator<double>;
#endif
#ifdef HAVE_TPETRA_INST_FLOAT
template class TpetraOperator<float>;
#endif

}  // namespace kspmv
