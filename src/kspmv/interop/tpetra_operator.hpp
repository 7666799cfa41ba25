// kspmv::TpetraOperator: a Tpetra::Operator whose local block is a kspmv Operator, so that a
// matrix distributed over MPI ranks by Tpetra runs kspmv's kernels on each rank while Tpetra's
// Import moves the halo and Belos (or any Tpetra solver) runs on top (docs/DESIGN.md
// "Several processes"). kspmv has no MPI layer of its own: every message is Tpetra's.
//
// Built when Tpetra is found (CMake option KSPMV_ENABLE_TPETRA; target kspmv::kspmv_tpetra).
// Scalars: those the Tpetra build instantiates among float and double (Debian's: double), on
// Tpetra's default Node, built into the library; another Node (a Tpetra built with CUDA and
// another default, say) includes kspmv/interop/tpetra_operator_def.hpp to instantiate it.
#pragma once

#include <TpetraCore_config.h>
#include <Teuchos_Comm.hpp>
#include <Teuchos_RCP.hpp>
#include <Tpetra_CrsMatrix_fwd.hpp>
#include <Tpetra_Export_fwd.hpp>
#include <Tpetra_Import_fwd.hpp>
#include <Tpetra_MultiVector_decl.hpp>
#include <Tpetra_Operator.hpp>
#include <string>

#include "kspmv/core/options.hpp"
#include "kspmv/operator.hpp"

namespace kspmv {

// The rank's place among the ranks of `comm` that share its node (MPI_Comm_split_type), from 0.
int node_local_rank(const Teuchos::Comm<int>& comm);

// The CUDA device this rank's local block runs on: the node-local rank modulo the number of
// devices in `devices` (kAllDevices: every device of the node). Throws UnsupportedError when no
// device is usable.
int device_for_rank(const Teuchos::Comm<int>& comm, const std::vector<int>& devices);

// Tpetra's default Node (Debian's: Serial).
using TpetraNode = Tpetra::Map<>::node_type;

template <class Scalar, class Node = TpetraNode>
class TpetraOperator : public Tpetra::Operator<Scalar, Tpetra::Map<>::local_ordinal_type,
                                               Tpetra::Map<>::global_ordinal_type, Node> {
 public:
  using local_ordinal_type = Tpetra::Map<>::local_ordinal_type;
  using global_ordinal_type = Tpetra::Map<>::global_ordinal_type;
  using node_type = Node;
  using operator_type = Tpetra::Operator<Scalar, local_ordinal_type, global_ordinal_type, Node>;
  using map_type = Tpetra::Map<local_ordinal_type, global_ordinal_type, node_type>;
  using multivector_type =
      Tpetra::MultiVector<Scalar, local_ordinal_type, global_ordinal_type, node_type>;
  using crs_matrix_type =
      Tpetra::CrsMatrix<Scalar, local_ordinal_type, global_ordinal_type, node_type>;

  // The local block of the fill-complete matrix `a` (its rows of the row map, its columns of the
  // column map) becomes a kspmv Operator with `options`; `a` is kept (its maps, Import and
  // Export are Tpetra's). Backend::Cuda runs it on one device per rank, device_for_rank(comm,
  // options.devices): with options.devices = {kAllDevices} each rank of a node takes its own
  // GPU. Several devices per rank are not supported (InvalidArgument). Throws InvalidArgument
  // when `a` is null or not fill complete.
  explicit TpetraOperator(Teuchos::RCP<const crs_matrix_type> a, Options options = {});
  ~TpetraOperator() override;

  Teuchos::RCP<const map_type> getDomainMap() const override;
  Teuchos::RCP<const map_type> getRangeMap() const override;

  // Y = alpha*op(A)*X + beta*Y on every column, as Tpetra::CrsMatrix::apply: X is imported into
  // the column map (NO_TRANS) or the row map (TRANS), the local block applied by kspmv, and the
  // result exported where the target map differs from the row map (column map for TRANS). The
  // local block reads and writes the MultiVectors' device views with the CUDA backend (where
  // Tpetra's Node keeps them: GPU memory with a CUDA Node, host memory with Debian's Serial one)
  // and their host views otherwise; no other view is taken.
  // beta == 0 overwrites Y (NaN included); alpha == 0 leaves A and X unread. X and Y may be the
  // same MultiVector. Throws InvalidArgument when the numbers of vectors or the local lengths do
  // not match.
  void apply(const multivector_type& X, multivector_type& Y,
             Teuchos::ETransp mode = Teuchos::NO_TRANS,
             Scalar alpha = Teuchos::ScalarTraits<Scalar>::one(),
             Scalar beta = Teuchos::ScalarTraits<Scalar>::zero()) const override;

  // TRANS and CONJ_TRANS (the same for real scalars): A^T's local block is built by kspmv on
  // the first transposed apply (Operator's Mode::Transpose).
  bool hasTransposeApply() const override { return true; }

  // Reads the matrix's current values (same graph, after resumeFill / fillComplete) into the
  // local Operator, keeping every plan (kernel, partition, the autotuner's choice). Throws
  // InvalidArgument when the local number of entries changed.
  void refresh_values();

  // The local block's Operator (its kernel, the timings of the last apply).
  const Operator<Scalar>& local() const { return local_; }
  Operator<Scalar>& local() { return local_; }
  const crs_matrix_type& matrix() const { return *matrix_; }

  std::string description() const override;

 private:
  using import_type = Tpetra::Import<local_ordinal_type, global_ordinal_type, node_type>;
  using export_type = Tpetra::Export<local_ordinal_type, global_ordinal_type, node_type>;

  // y = alpha * op(local block) * x + beta * y on the local entries of x and y.
  void apply_local(const multivector_type& x, multivector_type& y, Mode mode, Scalar alpha,
                   Scalar beta) const;
  // A work MultiVector on `map` with k columns, kept between applies.
  multivector_type& work(Teuchos::RCP<multivector_type>& slot,
                         const Teuchos::RCP<const map_type>& map, std::size_t k) const;

  Teuchos::RCP<const crs_matrix_type> matrix_;
  Teuchos::RCP<const import_type> importer_;  // domain map -> column map (null: the same map)
  Teuchos::RCP<const export_type> exporter_;  // row map -> range map (null: the same map)
  mutable Operator<Scalar> local_;
  mutable Teuchos::RCP<multivector_type> column_work_, row_work_;
};

#ifdef HAVE_TPETRA_INST_DOUBLE
extern template class TpetraOperator<double, TpetraNode>;
#endif
#ifdef HAVE_TPETRA_INST_FLOAT
extern template class TpetraOperator<float, TpetraNode>;
#endif

}  // namespace kspmv
