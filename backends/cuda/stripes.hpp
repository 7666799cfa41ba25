// Reorder::Stripes on one device: the matrix cut into column stripes (formats/column_stripes.hpp),
// each bound to a kernel of its own, run one after another on the apply's stream, so that the
// part of x a stripe gathers stays in the L2 while the stripe is read (paper 3's column blocks).
#pragma once

#include <memory>

#include "backends/cuda/device_spmv.hpp"

namespace kspmv::cuda {

// The stripes of `host` of `width` columns on the current device, each bound to `kernel`
// (Kernel::Auto: a thread a row for stripes of short rows, cuSPARSE for the others). A stripe's
// run after the first adds to y (beta 1). Values refresh through each entry's position in
// `host`, found from its pattern (which must outlive the kernel) at the first refresh. Real
// values.
template <class Scalar>
std::unique_ptr<DeviceSpmv<Scalar>> make_striped(Kernel kernel, const CsrPointers<Scalar>& host,
                                                 Ordinal width);

}  // namespace kspmv::cuda
