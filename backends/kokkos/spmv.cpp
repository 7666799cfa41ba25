// Host SpMV kernels: the portable kernels on Kokkos::DefaultHostExecutionSpace.
#include "backends/kokkos/spmv.hpp"

namespace kspmv::host {

template <class S>
void spmv(S alpha, const CsrMatrix<S>& a, const S* x, S beta, S* y) {
  spmv(HostExecSpace(), alpha, arrays_of<HostExecSpace>(a), x, beta, y);
}

template <class S>
void spmv(S alpha, const CooMatrix<S>& a, const S* x, S beta, S* y) {
  const ScatterWork<HostExecSpace> work(Kokkos::view_alloc(Kokkos::WithoutInitializing, "t"),
                                        a.nrows);
  spmv(HostExecSpace(), alpha, arrays_of<HostExecSpace>(a), x, beta, y, work);
}

template <class S>
void spmv(S alpha, const CscMatrix<S>& a, const S* x, S beta, S* y) {
  const ScatterWork<HostExecSpace> work(Kokkos::view_alloc(Kokkos::WithoutInitializing, "t"),
                                        a.nrows);
  spmv(HostExecSpace(), alpha, arrays_of<HostExecSpace>(a), x, beta, y, work);
}

#define KSPMV_INSTANTIATE(S)                                   \
  template void spmv(S, const CsrMatrix<S>&, const S*, S, S*); \
  template void spmv(S, const CooMatrix<S>&, const S*, S, S*); \
  template void spmv(S, const CscMatrix<S>&, const S*, S, S*);
KSPMV_INSTANTIATE(float)
KSPMV_INSTANTIATE(double)
#undef KSPMV_INSTANTIATE
template void spmv(Kokkos::complex<float>, const CsrMatrix<Kokkos::complex<float>>&,
                   const Kokkos::complex<float>*, Kokkos::complex<float>, Kokkos::complex<float>*);
template void spmv(Kokkos::complex<double>, const CsrMatrix<Kokkos::complex<double>>&,
                   const Kokkos::complex<double>*, Kokkos::complex<double>,
                   Kokkos::complex<double>*);

}  // namespace kspmv::host
