// The kernel registry (registry.hpp): the backends' tables and factories behind one list.
#include "kspmv/registry.hpp"

#include <string>

#include "backends/kokkos/default_space_operator.hpp"
#include "backends/kokkos/host_operator.hpp"
#include "backends/kokkos/multi_device.hpp"
#include "backends/kokkos/space_adopt.hpp"
#include "backends/kokkos/vector_permutation.hpp"
#include "kspmv/core/complex.hpp"
#include "kspmv/core/error.hpp"
#include "kspmv/core/operator_cast.hpp"
#ifdef KSPMV_HAVE_CUDA
#include "backends/cuda/complex.hpp"
#include "backends/cuda/cuda_operator.hpp"
#include "backends/cuda/memory.hpp"
#include "backends/cuda/multi_operator.hpp"
#include "backends/cuda/vector_permutation.hpp"
#include "backends/cuda/versions.hpp"
#endif

namespace kspmv {

namespace {

std::vector<KernelInfo> build_registry() {
  std::vector<KernelInfo> rows;
  for (const auto& row : host::kernel_table<double>()) rows.push_back(row.info);
#ifdef KSPMV_HAVE_CUDA
  for (const auto& row : cuda::kernel_table<double>()) rows.push_back(row.info);
#endif
  for (const auto& row : host::default_space_kernel_table<double>()) rows.push_back(row.info);
  return rows;
}

bool is_streamed(const KernelInfo& row) {
  return row.residency == Residency::Streamed;
}
bool any(const KernelInfo&) {
  return true;
}
bool on_devices(const KernelInfo& row) {
  return row.multi_device;
}
bool takes_complex(const KernelInfo& row) {
  return row.complex_values;
}

// Whether a row of `backend` satisfies `keep`.
bool any_row(Backend backend, bool (*keep)(const KernelInfo&)) {
  for (const auto& row : kernel_registry())
    if (row.backend == backend && keep(row)) return true;
  return false;
}

// "csr, coo, ..." of the rows of a backend that `keep` accepts, for error messages.
std::string names_of(Backend backend, bool (*keep)(const KernelInfo&)) {
  std::string names;
  for (const auto& row : kernel_registry())
    if (row.backend == backend && keep(row))
      names += (names.empty() ? "" : ", ") + std::string(to_string(row.kernel));
  return names.empty() ? "none" : names;
}

}  // namespace

const std::vector<KernelInfo>& kernel_registry() {
  static const std::vector<KernelInfo> rows = build_registry();
  return rows;
}

std::vector<KernelInfo> kernels_of(Backend backend) {
  std::vector<KernelInfo> rows;
  for (const auto& row : kernel_registry())
    if (row.backend == backend) rows.push_back(row);
  return rows;
}

const KernelInfo* find_kernel(Backend backend, Kernel kernel) {
  for (const auto& row : kernel_registry())
    if (row.backend == backend && row.kernel == kernel) return &row;
  return nullptr;
}

bool supports(Backend backend, Kernel kernel) {
#ifndef KSPMV_HAVE_CUDA
  if (backend == Backend::Cuda) return false;
#endif
  return kernel == Kernel::Auto || find_kernel(backend, kernel) != nullptr;
}

int cuda_device_count() {
#ifdef KSPMV_HAVE_CUDA
  return cuda::device_count();
#else
  return 0;
#endif
}

double cuda_peak_bandwidth_gbps(int device) {
#ifdef KSPMV_HAVE_CUDA
  return cuda::peak_bandwidth_gbps(device);
#else
  (void)device;
  return 0;
#endif
}

std::size_t cuda_l2_cache_bytes(int device) {
#ifdef KSPMV_HAVE_CUDA
  return cuda::l2_cache_bytes(device);
#else
  (void)device;
  return 0;
#endif
}

CudaVersions cuda_versions() {
#ifdef KSPMV_HAVE_CUDA
  const cuda::Versions v = cuda::versions();
  return {v.runtime, v.driver, v.cusparse};
#else
  return {};
#endif
}

bool runs_on_device(Backend backend) {
  if (backend == Backend::Cuda) return true;
  return backend == Backend::KokkosDefault && !host::default_space_is_host();
}

const char* execution_space_name(Backend backend) {
  if (backend == Backend::Cuda) return "CUDA";
  return backend == Backend::Host ? HostExecSpace::name() : host::default_space_name();
}

namespace detail {

void copy_device_to_host(void* host, const void* device, std::size_t bytes, DeviceStream after) {
#ifdef KSPMV_HAVE_CUDA
  cuda::copy_to_host(host, device, bytes, after);
#else
  (void)after;
  if (!runs_on_device(Backend::KokkosDefault))
    throw InvalidArgument("device memory given to a build without a device");
  using Unmanaged = Kokkos::MemoryTraits<Kokkos::Unmanaged>;
  Kokkos::deep_copy(
      Kokkos::View<char*, HostMemorySpace, Unmanaged>(static_cast<char*>(host), bytes),
      Kokkos::View<const char*, host::SpaceMemory, Unmanaged>(static_cast<const char*>(device),
                                                              bytes));
#endif
}

namespace {

// The registry's checks of `o`: the kernel runs on the backend, the residency and the device
// count suit it. Returns whether o runs on several devices.
bool check_options(const Options& o) {
  const std::string backend = to_string(o.backend);
  if (!supports(o.backend, o.kernel)) {
    if (o.backend == Backend::Cuda && kernels_of(Backend::Cuda).empty())
      throw UnsupportedError("kspmv was built without the CUDA backend (KSPMV_ENABLE_CUDA)");
    throw UnsupportedError("the " + backend + " backend does not run kernel '" +
                           to_string(o.kernel) + "' (it runs auto, " + names_of(o.backend, any) +
                           ")");
  }
  const KernelInfo* row = find_kernel(o.backend, o.kernel);  // null for Auto
  const bool streams = row ? is_streamed(*row) : any_row(o.backend, is_streamed);
  if (o.residency == Residency::Streamed && !streams)
    throw UnsupportedError("the " + backend + " backend streams the matrix with kernels: " +
                           names_of(o.backend, is_streamed) + " (not '" + to_string(o.kernel) +
                           "')");
  const bool multi = o.devices.size() > 1;
  if (multi && !any_row(o.backend, on_devices))
    throw UnsupportedError("the " + backend + " backend runs on one device");
  if (multi && row && !row->multi_device)
    throw UnsupportedError("the " + backend + " backend runs kernel '" + to_string(o.kernel) +
                           "' on one device only (on several: auto, " +
                           names_of(o.backend, on_devices) + ")");
  if (multi && o.residency == Residency::Streamed)
    throw UnsupportedError("streamed residency runs on one device only");
  return multi;
}

// The registry's checks of `o` for complex values: one device, and a kernel whose row takes them
// (Auto: a backend with such a row, where Auto picks among them).
void check_complex(const Options& o, bool multi) {
  const std::string backend = to_string(o.backend);
  const KernelInfo* row = find_kernel(o.backend, o.kernel);  // null for Auto
  if (row ? !row->complex_values : !any_row(o.backend, takes_complex))
    throw UnsupportedError(
        "the " + backend + " backend's kernel '" + to_string(o.kernel) +
        "' takes no complex values (kernels that do: " + names_of(o.backend, takes_complex) + ")");
  if (multi) throw UnsupportedError("complex values run on one device");
}

}  // namespace

template <class Scalar>
std::unique_ptr<OperatorImpl<Scalar>> make_operator_impl(const CsrMatrix<Scalar>& a,
                                                         const Options& o, DeviceStream stream) {
  const bool multi = check_options(o);
  if constexpr (is_complex_v<Scalar>) {
    check_complex(o, multi);
#ifdef KSPMV_HAVE_CUDA
    if (o.backend == Backend::Cuda) {  // the same arrays as cuda::Complex (core/operator_cast.hpp)
      using C = cuda::Complex<real_t<Scalar>>;
      const CsrPointers<C> p{a.row_ptr.data(), a.col_idx.data(),
                             reinterpret_cast<const C*>(a.values.data()), a.nrows, a.ncols};
      auto keep = std::make_shared<const CsrMatrix<Scalar>>(a);
      return std::make_unique<OperatorCast<Scalar, C>>(
          cuda::make_operator(p, o, std::move(keep), stream));
    }
#endif
    (void)stream;
    return host::make_operator(a, o);  // the host backend's complex rows
  } else {
    if (o.backend == Backend::Host)
      return multi ? host::make_multi_operator(a, o) : host::make_operator(a, o);
    if (o.backend == Backend::KokkosDefault) return host::make_default_space_operator(a, o);
#ifdef KSPMV_HAVE_CUDA
    const CsrPointers<Scalar> p{a.row_ptr.data(), a.col_idx.data(), a.values.data(), a.nrows,
                                a.ncols};
    // The Views are shared: they keep the matrix alive while the partition is tuned, and while a
    // streamed matrix is read from them.
    auto keep = std::make_shared<const CsrMatrix<Scalar>>(a);
    if (multi) return cuda::make_multi_operator(p, std::move(keep), o);
    return cuda::make_operator(p, o, std::move(keep), stream);
#else
    (void)stream;
    throw UnsupportedError("kspmv was built without the CUDA backend (KSPMV_ENABLE_CUDA)");
#endif
  }
}

template <class Scalar>
std::unique_ptr<DeviceOrdering<Scalar>> order_on_device(const CsrMatrix<Scalar>& a,
                                                        const Options& o, DeviceStream stream) {
#ifdef KSPMV_HAVE_CUDA
  if constexpr (!is_complex_v<Scalar>) {
    if (o.backend == Backend::Cuda && o.devices.size() == 1 && o.residency != Residency::Streamed) {
      const CsrPointers<Scalar> p{a.row_ptr.data(), a.col_idx.data(), a.values.data(), a.nrows,
                                  a.ncols};
      return cuda::order_on_device(p, o, stream);
    }
  }
#endif
  (void)a, (void)o, (void)stream;
  return nullptr;
}

template <class Scalar>
std::unique_ptr<OperatorImpl<Scalar>> make_operator_impl(const DeviceCsrArrays<Scalar>& a,
                                                         const Options& o, DeviceStream stream) {
  if (!runs_on_device(o.backend))
    throw InvalidArgument(std::string("Operator: the matrix is in device memory; the ") +
                          to_string(o.backend) + " backend takes host memory");
  if (check_options(o))
    throw UnsupportedError(
        "Operator: a matrix in device memory runs on that device only; build a multi-device "
        "operator from a host matrix");
  if constexpr (is_complex_v<Scalar>) {
    check_complex(o, false);
    (void)a, (void)stream;
    throw UnsupportedError("Operator: complex values in device memory (give a host matrix)");
  } else {
    if (o.backend == Backend::KokkosDefault) return host::make_default_space_operator(a, o);
#ifdef KSPMV_HAVE_CUDA
    return cuda::make_operator(a, o, stream);
#else
    (void)a, (void)stream;
    throw UnsupportedError("kspmv was built without the CUDA backend (KSPMV_ENABLE_CUDA)");
#endif
  }
}

template <class Scalar>
std::unique_ptr<VectorPermutation<Scalar>> make_vector_permutation(const std::vector<Ordinal>& perm,
                                                                   Backend backend, Place place,
                                                                   int device, Ordinal window) {
  if (place == Place::Host) return host::make_vector_permutation<Scalar>(perm);
#ifdef KSPMV_HAVE_CUDA
  if constexpr (!is_complex_v<Scalar>)  // complex values are permuted in host memory only
    if (backend == Backend::Cuda)
      return cuda::make_vector_permutation<Scalar>(perm, device, window);
#endif
  (void)device, (void)window;
  throw UnsupportedError(std::string("reorder: the ") + to_string(backend) +
                         " backend permutes vectors in host memory only");
}

template std::unique_ptr<OperatorImpl<float>> make_operator_impl(const CsrMatrix<float>&,
                                                                 const Options&, DeviceStream);
template std::unique_ptr<OperatorImpl<double>> make_operator_impl(const CsrMatrix<double>&,
                                                                  const Options&, DeviceStream);
template std::unique_ptr<OperatorImpl<float>> make_operator_impl(const DeviceCsrArrays<float>&,
                                                                 const Options&, DeviceStream);
template std::unique_ptr<OperatorImpl<double>> make_operator_impl(const DeviceCsrArrays<double>&,
                                                                  const Options&, DeviceStream);
template std::unique_ptr<DeviceOrdering<float>> order_on_device(const CsrMatrix<float>&,
                                                                const Options&, DeviceStream);
template std::unique_ptr<DeviceOrdering<double>> order_on_device(const CsrMatrix<double>&,
                                                                 const Options&, DeviceStream);
template std::unique_ptr<VectorPermutation<float>> make_vector_permutation(
    const std::vector<Ordinal>&, Backend, Place, int, Ordinal);
template std::unique_ptr<VectorPermutation<double>> make_vector_permutation(
    const std::vector<Ordinal>&, Backend, Place, int, Ordinal);
#define KSPMV_INSTANTIATE(S)                                                                  \
  template std::unique_ptr<OperatorImpl<S>> make_operator_impl(const CsrMatrix<S>&,           \
                                                               const Options&, DeviceStream); \
  template std::unique_ptr<OperatorImpl<S>> make_operator_impl(const DeviceCsrArrays<S>&,     \
                                                               const Options&, DeviceStream);
KSPMV_INSTANTIATE(Kokkos::complex<float>)
KSPMV_INSTANTIATE(Kokkos::complex<double>)
#undef KSPMV_INSTANTIATE
template std::unique_ptr<VectorPermutation<Kokkos::complex<float>>> make_vector_permutation(
    const std::vector<Ordinal>&, Backend, Place, int, Ordinal);
template std::unique_ptr<VectorPermutation<Kokkos::complex<double>>> make_vector_permutation(
    const std::vector<Ordinal>&, Backend, Place, int, Ordinal);

}  // namespace detail

}  // namespace kspmv
