// The kokkos-default backend (Backend::KokkosDefault): the portable Kokkos CSR, COO and CSC kernels
// (space_spmv.hpp) on Kokkos' default execution space, with the matrix in that space's memory.
// With a Kokkos built with CUDA (or HIP, SYCL) that is the GPU: the code the host backend runs and
// the tests validate on the host runs there on device Views. With a host-only Kokkos it is the
// host execution space (OpenMP or Serial), the matrix shared with the host.
#pragma once

#include <memory>
#include <vector>

#include "backends/kokkos/host_operator.hpp"

namespace kspmv::host {

// The backend's kernels (csr, coo, csc), one row each: the registry's kokkos-default rows.
template <class Scalar>
const std::vector<KernelRow<Scalar>>& default_space_kernel_table();

// Builds options.kernel (Auto: csr) on one device, Kokkos' own (the one Kokkos was initialized
// on; Options::devices is not consulted beyond its count). The format is built on the host from
// `a` and copied into the space's memory once (shared, not copied, where that memory is the
// host's). Vectors in the space's memory run in place: apply_device enqueues on an instance of
// Kokkos' default execution space on the caller's stream (CUDA) and returns without waiting (not
// timed: timings() then reports kernel_ms = total_ms = 0); host vectors are staged through
// buffers of the operator's, allocated at the first such apply. update_values takes values in
// host or space memory, waits for the applies already queued and returns once the operator holds
// them (values of its own: never the caller's array). UnsupportedError for other kernels.
template <class Scalar>
std::unique_ptr<OperatorImpl<Scalar>> make_default_space_operator(const CsrMatrix<Scalar>& a,
                                                                  const Options& options);

// The same for a CSR already in the memory of the default execution space (the caller's Views):
// adopted there (space_adopt.hpp: 64-bit signed offsets and 32-bit indices used in place, the
// values copied once, checked there when options.validate), never read back whole. Kernel csr
// (and Auto) only: UnsupportedError for coo and csc. Mode::Transpose is built through the host.
template <class Scalar>
std::unique_ptr<OperatorImpl<Scalar>> make_default_space_operator(const DeviceCsrArrays<Scalar>& a,
                                                                  const Options& options);

// Kokkos' default execution space: its name ("Cuda", "OpenMP", "Serial", ...), and whether it
// computes on the host (its kernels then read host memory, and it has no device vectors).
const char* default_space_name();
bool default_space_is_host();

}  // namespace kspmv::host
