// The kernel registry: every kernel this build runs, one row per (backend, kernel), with what the
// Operator checks and what the tests, the benchmarks and `kspmv demo` iterate. The rows live in
// each backend's table beside the factories (backends/kokkos/host_operator.cpp and
// backends/cuda/cuda_operator.cpp); the Operator reaches the backends only through here.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "kspmv/core/kernel_info.hpp"
#include "kspmv/core/operator_impl.hpp"
#include "kspmv/core/vector_permutation.hpp"
#include "kspmv/formats/csr.hpp"

namespace kspmv {

// Every row of every backend built in, host first, in each backend's table order. Kernel::Auto
// is no row: every backend takes it.
const std::vector<KernelInfo>& kernel_registry();

// The rows of one backend (empty for CUDA in a build without it).
std::vector<KernelInfo> kernels_of(Backend backend);

// The row of `kernel` on `backend`, or nullptr when that backend does not run it.
const KernelInfo* find_kernel(Backend backend, Kernel kernel);

// Whether `backend` runs `kernel` in this build (Kernel::Auto: every backend built in).
bool supports(Backend backend, Kernel kernel);

// Number of CUDA devices usable by this build (0 without the CUDA backend or without a GPU).
int cuda_device_count();
// The peak memory bandwidth of CUDA device `device` in GB/s (0 where unknown or without CUDA).
double cuda_peak_bandwidth_gbps(int device);
// The L2 cache of CUDA device `device` in bytes (0 where unknown or without CUDA).
std::size_t cuda_l2_cache_bytes(int device);
// The versions of the CUDA runtime, the driver and cuSPARSE this process runs with ("13.0",
// "13.0", "12.6.3"); "none" for each that the build (no CUDA backend) or the machine (no GPU
// driver) lacks.
struct CudaVersions {
  std::string runtime = "none", driver = "none", cusparse = "none";
};
CudaVersions cuda_versions();

// Whether `backend` computes on a device and takes vectors in device memory: CUDA, and
// kokkos-default when Kokkos' default execution space is a device (a GPU).
bool runs_on_device(Backend backend);

// Where `backend` runs, for people: the Kokkos execution space of the host and kokkos-default
// backends ("Serial", "OpenMP", "Cuda", ...), "CUDA" for the CUDA backend.
const char* execution_space_name(Backend backend);

namespace detail {
// Copies `bytes` from device memory (a CUDA device's, or that of Kokkos' default execution
// space) to host memory (InvalidArgument in a build with no device), after the work on `after`
// (a CUDA stream) when given.
void copy_device_to_host(void* host, const void* device, std::size_t bytes,
                         DeviceStream after = nullptr);

// The backend's execution of `options` (devices resolved) for `a`, after the registry's checks:
// the kernel runs on the backend, the residency and the device count suit it. Throws
// UnsupportedError naming what the backend offers instead. `stream`: where a single-device CUDA
// operator enqueues its set-up (cuda::make_operator); null, and other backends: ready on return.
template <class Scalar>
std::unique_ptr<OperatorImpl<Scalar>> make_operator_impl(const CsrMatrix<Scalar>& a,
                                                         const Options& options,
                                                         DeviceStream stream = nullptr);
// The same for a matrix in device memory: the CUDA backend (memory of options.devices[0], one
// device, resident) or kokkos-default (the memory of Kokkos' default execution space).
template <class Scalar>
std::unique_ptr<OperatorImpl<Scalar>> make_operator_impl(const DeviceCsrArrays<Scalar>& a,
                                                         const Options& options,
                                                         DeviceStream stream = nullptr);

// Reorder::Bfs of the square matrix `a` found on the CUDA device options.devices[0] (one device,
// real values): cuda::order_on_device. nullptr where it does not run there (another backend, a
// build without CUDA, complex values, 64-bit offsets, too little device memory): the host orders.
template <class Scalar>
std::unique_ptr<DeviceOrdering<Scalar>> order_on_device(const CsrMatrix<Scalar>& a,
                                                        const Options& options,
                                                        DeviceStream stream = nullptr);

// Gathers and scatters through perm (perm[new] = old) for vectors in host memory, or in the
// memory of `device` (the CUDA backend; UnsupportedError for kokkos-default on a device), there
// in windows of `window` entries where it is positive (analysis::permute_window).
template <class Scalar>
std::unique_ptr<VectorPermutation<Scalar>> make_vector_permutation(const std::vector<Ordinal>& perm,
                                                                   Backend backend, Place place,
                                                                   int device, Ordinal window = 0);
}  // namespace detail

}  // namespace kspmv
