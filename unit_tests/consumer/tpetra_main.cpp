// The README's Tpetra example from an installed kspmv (kspmv::kspmv_tpetra): a 2D Laplacian
// whose rows each MPI rank generates, applied by the kspmv-backed operator and by Tpetra's own.
#include <Tpetra_Core.hpp>
#include <Tpetra_CrsMatrix.hpp>
#include <cstdio>
#include <kspmv/gen/generators.hpp>
#include <kspmv/interop/tpetra_matrix.hpp>
#include <kspmv/interop/tpetra_operator.hpp>
#include <vector>

int main(int argc, char** argv) {
  Tpetra::ScopeGuard tpetra(&argc, &argv);  // MPI and Kokkos
  double error = 0;
  {
    const auto comm = Tpetra::getDefaultComm();
    const int n = 100, rank = comm->getRank();
    const auto starts = kspmv::uniform_row_starts(n * n, comm->getSize());  // this rank's rows
    const auto rows =
        kspmv::gen::laplace2d<double>(n, n, {int(starts[rank]), int(starts[rank + 1])});
    const auto a = kspmv::tpetra_matrix_from_rows(comm, n * n, rows);  // Tpetra::CrsMatrix<double>

    kspmv::Options options;                        // Backend::Cuda: each rank on its node-local GPU
    kspmv::TpetraOperator<double> op(a, options);  // a Tpetra::Operator<double>, for Belos too
    Tpetra::MultiVector<double> x(a->getDomainMap(), 2), y(a->getRangeMap(), 2),
        ref(a->getRangeMap(), 2);
    x.randomize();
    op.apply(x, y);  // Tpetra's Import moves the halo, kspmv applies each rank's block
    a->apply(x, ref);
    y.update(-1.0, ref, 1.0);
    std::vector<double> diff(2), norm(2);
    y.norm2(diff);
    ref.norm2(norm);
    error = std::max(diff[0] / norm[0], diff[1] / norm[1]);
    if (rank == 0)
      std::printf("%s on %d rank(s): relative error %.2e against Tpetra::CrsMatrix::apply\n",
                  op.description().c_str(), comm->getSize(), error);
  }
  return error <= 1e-12 ? 0 : 1;
}
