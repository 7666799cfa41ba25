// The host (Kokkos) backend behind kspmv::Operator: its table of kernels and their factories.
#pragma once

#include <memory>
#include <vector>

#include "kspmv/core/kernel_info.hpp"
#include "kspmv/core/operator_impl.hpp"
#include "kspmv/formats/csr.hpp"

namespace kspmv::host {

// Builds one kernel's format from `a` (shared, not copied, where the format is the CSR itself).
template <class Scalar>
using Factory = std::unique_ptr<OperatorImpl<Scalar>> (*)(const CsrMatrix<Scalar>& a);

template <class Scalar>
struct KernelRow {
  KernelInfo info;
  Factory<Scalar> make;
};

// The host backend's kernels, one row each: the registry's host rows.
template <class Scalar>
const std::vector<KernelRow<Scalar>>& kernel_table();

// Builds the host execution of options.kernel (Auto: csr) on one device. Throws
// UnsupportedError for kernels the host backend does not run.
template <class Scalar>
std::unique_ptr<OperatorImpl<Scalar>> make_operator(const CsrMatrix<Scalar>& a,
                                                    const Options& options);

// The row of `table` for `kernel` (Auto: csr) made for `a`; UnsupportedError naming `backend`
// when the table has none.
template <class Scalar>
std::unique_ptr<OperatorImpl<Scalar>> make_from_table(const std::vector<KernelRow<Scalar>>& table,
                                                      const CsrMatrix<Scalar>& a, Kernel kernel,
                                                      Backend backend);

}  // namespace kspmv::host
