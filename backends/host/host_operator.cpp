// Placeholder: the host backend's kernels land with the host backend work.
#include "backends/host/host_operator.hpp"

namespace kspmv::host {
template <class Scalar>
std::unique_ptr<OperatorImpl<Scalar>> make_operator(const CsrMatrix<Scalar>&, const Options&) {
  throw UnsupportedError("host backend not built yet");
}
template std::unique_ptr<OperatorImpl<float>> make_operator(const CsrMatrix<float>&,
                                                            const Options&);
template std::unique_ptr<OperatorImpl<double>> make_operator(const CsrMatrix<double>&,
                                                             const Options&);
}  // namespace kspmv::host
