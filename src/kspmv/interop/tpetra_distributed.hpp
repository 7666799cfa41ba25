// kspmv::MpiOperator: a square matrix distributed over MPI ranks by Tpetra, applied to
// MpiMultiVectors whose entries stay where each rank's kspmv backend computes (its GPU with the
// CUDA backend), and kspmv::mpi_cg, kspmv's fused CG on them (DESIGN.md "Execution", past one
// process).
//
// Tpetra contributes the plan and nothing else: the matrix's Import (domain map -> column map)
// says which owned entries go to which rank and how many arrive from where. Debian's Tpetra runs
// on a Serial Kokkos and a Kokkos CUDA View cannot live in the same process, so the vectors are
// kspmv's own (kspmv/core/rank_vectors.hpp) and the halo moves as kspmv packs it: each apply
// gathers the entries to send (on the GPU), copies only those to page-locked host memory, sends
// them with nonblocking MPI (MPI_Isend/MPI_Irecv on a duplicate of the matrix's Teuchos
// communicator) and copies what arrives into the ghost entries of x. The rows that read no ghost
// entry (interior rows, kept first on each rank) are computed while the halo is in flight; the
// others (boundary rows) once it has landed. Each is a kspmv Operator of its own.
#pragma once

#include <mpi.h>

#include <TpetraCore_config.h>
#include <Teuchos_RCP.hpp>
#include <Tpetra_CrsMatrix_decl.hpp>
#include <memory>
#include <string>
#include <vector>

#include "kspmv/core/cg_result.hpp"
#include "kspmv/core/options.hpp"
#include "kspmv/interop/tpetra_vector.hpp"
#include "kspmv/operator.hpp"

namespace kspmv {

template <class Scalar>
class MpiOperator {
 public:
  using crs_matrix_type = Tpetra::CrsMatrix<Scalar>;
  using vector_type = MpiMultiVector<Scalar>;

  // The fill-complete square matrix `a`, whose row, domain and range maps must be the same
  // (InvalidArgument otherwise), split on each rank into its interior and boundary rows, each a
  // kspmv Operator with `options`: Backend::Cuda on the device device_for_rank(comm,
  // options.devices) (kAllDevices: a GPU per rank of a node), the host backend in host memory.
  // Collective (the halo's order is agreed once with a message of global indices).
  explicit MpiOperator(Teuchos::RCP<const crs_matrix_type> a, Options options = {});
  ~MpiOperator();
  MpiOperator(const MpiOperator&) = delete;
  MpiOperator& operator=(const MpiOperator&) = delete;

  const std::shared_ptr<const MpiLayout<Scalar>>& layout() const { return layout_; }
  // k vectors of zeros in this operator's layout.
  vector_type make_vectors(std::size_t k) const { return vector_type(layout_, k); }

  // Y = alpha*A*X + beta*Y on every column (beta == 0 overwrites Y, NaN included). X's ghost
  // entries are rewritten, its owned ones unchanged; X and Y must not share a column. On a
  // device, returns once the last kernels are enqueued (the vectors' operations come after
  // them). Collective. InvalidArgument for vectors of another operator or unequal counts.
  void apply(const vector_type& X, vector_type& Y, Scalar alpha = Scalar(1),
             Scalar beta = Scalar(0)) const;

  std::size_t interior_rows() const { return interior_rows_; }
  // Entries this rank sends and receives per vector and apply, and the ranks it sends to.
  std::size_t sent() const { return send_ranks_.empty() ? 0 : send_offsets_.back(); }
  std::size_t received() const { return layout_->ghosts; }
  std::size_t neighbours() const { return send_ranks_.size(); }
  // The kernel of the interior rows (of the boundary rows where no row is interior).
  Kernel kernel() const;
  const Options& options() const { return options_; }
  const crs_matrix_type& matrix() const { return *matrix_; }
  std::string description() const;

 private:
  void exchange(const Scalar* x) const;  // sends x's packed entries, receives its ghosts

  Teuchos::RCP<const crs_matrix_type> matrix_;
  Options options_;
  std::shared_ptr<const MpiLayout<Scalar>> layout_;
  std::size_t interior_rows_ = 0;
  mutable std::unique_ptr<Operator<Scalar>> interior_, boundary_;  // null where no row is
  MPI_Comm comm_ = MPI_COMM_NULL;  // a duplicate, for the halo's messages alone
  std::vector<int> send_ranks_, receive_ranks_;
  std::vector<std::size_t> send_offsets_, receive_offsets_;  // ranks + 1 each
  DistributedVector<Ordinal> send_positions_;  // where the vectors hold the entries sent
  DistributedVector<Scalar> send_buffer_, receive_buffer_;  // host memory
  mutable std::vector<MPI_Request> requests_;
};

// kspmv's CG (Gao et al. 2024, Alg. 1) over MPI on the first column of b and x (x holds the
// initial guess): its SpMV is a.apply, its vector updates the fused passes of the rank vectors,
// and each iteration sums two dot products across the ranks, one allreduce each (p.q; r.r with
// the update of r). The stop is decided on every rank from the same sums. relative_residual is
// recomputed from b - A x; ms_per_iteration is host time over the iterations. Collective.
template <class Scalar>
CgResult mpi_cg(const MpiOperator<Scalar>& a, const MpiMultiVector<Scalar>& b,
                MpiMultiVector<Scalar>& x, const CgOptions& options = {});

#ifdef HAVE_TPETRA_INST_DOUBLE
extern template class MpiOperator<double>;
extern template CgResult mpi_cg(const MpiOperator<double>&, const MpiMultiVector<double>&,
                                MpiMultiVector<double>&, const CgOptions&);
#endif
#ifdef HAVE_TPETRA_INST_FLOAT
extern template class MpiOperator<float>;
extern template CgResult mpi_cg(const MpiOperator<float>&, const MpiMultiVector<float>&,
                                MpiMultiVector<float>&, const CgOptions&);
#endif

}  // namespace kspmv
