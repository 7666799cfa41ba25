// kspmv::TpetraOperator on Tpetra's default Node, and the device each rank's block runs on.
#include <mpi.h>

#include <Teuchos_DefaultMpiComm.hpp>
#include <numeric>

#include "kspmv/core/error.hpp"
#include "kspmv/interop/tpetra_operator_def.hpp"
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

#ifdef HAVE_TPETRA_INST_DOUBLE
template class TpetraOperator<double, TpetraNode>;
#endif
#ifdef HAVE_TPETRA_INST_FLOAT
template class TpetraOperator<float, TpetraNode>;
#endif

}  // namespace kspmv
