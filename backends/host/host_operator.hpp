// Factory of the host (Kokkos) backend behind kspmv::Operator.
#pragma once

#include <memory>

#include "kspmv/core/operator_impl.hpp"
#include "kspmv/formats/csr.hpp"

namespace kspmv::host {

// Builds the host execution of options.kernel (Auto -> the best host kernel for `a`).
// Throws UnsupportedError for kernels the host backend does not run.
template <class Scalar>
std::unique_ptr<OperatorImpl<Scalar>> make_operator(const CsrMatrix<Scalar>& a,
                                                    const Options& options);

}  // namespace kspmv::host
