// The CUDA backend behind kspmv::Operator: its table of kernels and their factories, and the
// single-device operator. Kokkos-free: the matrix arrives as host pointers.
#pragma once

#include <cstddef>
#include <memory>
#include <vector>

#include "backends/cuda/device_spmv.hpp"
#include "backends/cuda/row_profile.hpp"
#include "kspmv/core/kernel_info.hpp"
#include "kspmv/core/operator_impl.hpp"

namespace kspmv::cuda {

// Number of CUDA devices present (0 when the driver finds none; never throws).
int device_count();
// The peak memory bandwidth of `device` in GB/s (memory clock and bus width), 0 when the driver
// does not say.
double peak_bandwidth_gbps(int device);
// The L2 cache of `device` in bytes, 0 when the driver does not say.
std::size_t l2_cache_bytes(int device);

// Binds one kernel to one matrix on the current device. `a` is the uploaded matrix (null for
// kernels whose row says uses_device_csr == false), `host` the same matrix on the host.
template <class Scalar>
using Factory = std::unique_ptr<DeviceSpmv<Scalar>> (*)(std::shared_ptr<const DeviceCsr<Scalar>> a,
                                                        const CsrPointers<Scalar>& host);

// Binds one kernel to a matrix in device memory only, planned from the row profile the device
// computed (row_profile.hpp): no pass over the rows on the host.
template <class Scalar>
using DeviceFactory = std::unique_ptr<DeviceSpmv<Scalar>> (*)(
    std::shared_ptr<const DeviceCsr<Scalar>> a, const DevicePlanInput& in);

// The same with its set-up (uploads, a library's analysis) enqueued on `stream` without waiting:
// the kernel is ready once `stream` has passed it.
template <class Scalar>
using StreamFactory =
    std::unique_ptr<DeviceSpmv<Scalar>> (*)(std::shared_ptr<const DeviceCsr<Scalar>> a,
                                            const CsrPointers<Scalar>& host, cudaStream_t stream);

template <class Scalar>
struct KernelRow {
  KernelInfo info;
  bool uses_device_csr;  // runs on the uploaded CSR (DeviceCsr) rather than a layout of its own
  Factory<Scalar> make;
  // Kernel::Auto's autotuner times this kernel only where this says so (null: always).
  bool (*worth_timing)(const CsrPointers<Scalar>& host) = nullptr;
  // The factory from the device's row profile, where the kernel has one (the multi-device
  // executor's pieces use it; Auto keeps to these kernels there).
  DeviceFactory<Scalar> make_on_device = nullptr;
  // The factory on a caller's stream, where the kernel has one (an Operator built on an
  // instance); the others plan on the host and upload synchronously.
  StreamFactory<Scalar> make_on_stream = nullptr;
};

// The CUDA backend's kernels, one row each: the registry's CUDA rows.
template <class Scalar>
const std::vector<KernelRow<Scalar>>& kernel_table();

// The row of `kernel`; UnsupportedError when the CUDA backend does not run it.
template <class Scalar>
const KernelRow<Scalar>& kernel_row(Kernel kernel);

// kernel_row(kernel).make(a, host): `kernel` bound to one matrix on the current device.
template <class Scalar>
std::unique_ptr<DeviceSpmv<Scalar>> make_device_spmv(Kernel kernel,
                                                     std::shared_ptr<const DeviceCsr<Scalar>> a,
                                                     const CsrPointers<Scalar>& host);

// Builds the CUDA execution of options.kernel on options.devices[0] (InvalidArgument for a
// device id that does not exist). Resident kernels: the matrix is uploaded once and apply_host
// copies x in (and y when beta != 0) and y out, on a stream of the operator, and returns when y
// is written; apply_device enqueues the kernel on the caller's stream and returns (events time
// it unless the stream is being captured; timings() and synchronize() wait for it).
// Residency::Streamed (or a kernel whose row is Streamed): the matrix stays on the host and is
// streamed on every apply (CSR-Full-Overlap) through a ring of device buffers sized to the device
// memory kspmv may use (the device's free memory, at most options.device_memory_limit, less
// the vectors). Residency::Auto: resident when the matrix with its vectors fits in that memory
// (the CSR at its offset width, the vectors and 5% for the kernels' plans; always for an explicit
// resident kernel), streamed otherwise. MemoryError naming the sizes when the matrix fits in
// neither way, or when Residency::Resident needs more than options.device_memory_limit.
// `keep_alive` owns host_matrix's arrays: a streamed matrix is read from them (pinned in place)
// on every apply, so they must live as long as the operator.
//
// `stream`: where the set-up's device work goes. Null: the legacy default stream, and the
// operator is ready on return. Another (an instance's): the upload and the set-up of the kernels
// with a stream factory (csr-vector, the cuSPARSE kernels) are enqueued there without waiting;
// every later apply, on any stream, and update_values are ordered after it. Kernels that plan on
// the host (partial-overlap, seg, seg-r, hbp) first wait for `stream` (not the device: their
// factories read the uploaded CSR), then set up synchronously; full-overlap streams from host
// memory as before.
//
// Kernel::Auto, options.autotune == false: analysis::auto_kernel of the row statistics.
// Kernel::Auto, options.autotune == true: every row with autotune (and worth_timing) is a
// candidate of the tuner (core/tuner.hpp), run on the caller's first calls (each result is a
// correct SpMV), each call timed with events; the kept one stays, the others are freed.
// kernel() names the kernel of the last apply. Explicit kernels ignore autotune.
template <class Scalar>
std::unique_ptr<OperatorImpl<Scalar>> make_operator(const CsrPointers<Scalar>& host_matrix,
                                                    const Options& options,
                                                    std::shared_ptr<const void> keep_alive,
                                                    cudaStream_t stream = nullptr);

// The same for a matrix already in the memory of options.devices[0] (cuda::adopt): kernels that
// run on the CSR use it there; Kernel::Auto picks among them. It stays resident. With 32-bit
// offsets, Kernel::Auto (not autotuned), csr-vector and the cuSPARSE kernels are planned from the
// row profile computed on the device (row_profile.hpp): nothing of the matrix is read back. Other
// kernels, autotuning and 64-bit offsets read the row pointer back (4 or 8 bytes a row) and,
// where they preprocess on the host, the entries. `stream`: as above.
template <class Scalar>
std::unique_ptr<OperatorImpl<Scalar>> make_operator(const DeviceCsrArrays<Scalar>& device_matrix,
                                                    const Options& options,
                                                    cudaStream_t stream = nullptr);

// Reorder::Bfs of the square matrix `a` on options.devices[0]: A uploaded (on `stream`) and
// ordered there (bfs_order.cu), the permutation read back. nullptr, with nothing done, where the
// ordering does not run there: 64-bit offsets, a streamed kernel, or A with P A P^T and their
// scratch would not fit in the memory the operator may use (then the host orders it).
template <class Scalar>
std::unique_ptr<DeviceOrdering<Scalar>> order_on_device(const CsrPointers<Scalar>& a,
                                                        const Options& options,
                                                        cudaStream_t stream = nullptr);

}  // namespace kspmv::cuda
