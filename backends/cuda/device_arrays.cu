#include <cuda_runtime_api.h>

#include <cstdint>
#include <limits>
#include <string>
#include <type_traits>

#include "backends/cuda/device_arrays.hpp"

namespace kspmv::cuda {

namespace {

constexpr unsigned long long kNone = std::numeric_limits<unsigned long long>::max();
constexpr int kThreads = 256;

unsigned blocks_for(std::size_t n) {
  return static_cast<unsigned>((n + kThreads - 1) / kThreads);
}

// out[i] = in[i] as int32; the first i whose value is outside [lo, hi] goes to *bad.
template <class In, class Out>
__global__ void narrow(const In* in, Out* out, std::size_t count, long long lo, long long hi,
                       unsigned long long* bad) {
  const std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x;
  if (i >= count) return;
  const In v = in[i];
  bool ok = hi >= 0 && static_cast<unsigned long long>(v) <= static_cast<unsigned long long>(hi);
  if constexpr (std::is_signed_v<In>) ok = v >= lo && v <= hi;
  if (!ok) atomicMin(bad, static_cast<unsigned long long>(i));
  out[i] = static_cast<Out>(v);
}

// The first row i with row_ptr[i + 1] < row_ptr[i], or m when row_ptr[0] != 0 or
// row_ptr[m] != nnz.
__global__ void check_rows(const DeviceOffset* row_ptr, Ordinal m, DeviceOffset nnz,
                           unsigned long long* bad) {
  const std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x;
  if (i > static_cast<std::size_t>(m)) return;
  if (i == 0 && row_ptr[0] != 0) atomicMin(bad, static_cast<unsigned long long>(m));
  if (i == static_cast<std::size_t>(m) && row_ptr[m] != nnz)
    atomicMin(bad, static_cast<unsigned long long>(m));
  if (i < static_cast<std::size_t>(m) && row_ptr[i + 1] < row_ptr[i]) atomicMin(bad, i);
}

__global__ void check_cols(const Ordinal* col, std::size_t nnz, Ordinal n,
                           unsigned long long* bad) {
  const std::size_t k = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x;
  if (k < nnz && (col[k] < 0 || col[k] >= n)) atomicMin(bad, static_cast<unsigned long long>(k));
}

// A device flag starting at kNone, read back after the kernels that lower it.
class FirstBad {
 public:
  FirstBad() : flag_(1) { flag_.upload(&kNone, 1); }
  unsigned long long* get() const { return flag_.data(); }
  unsigned long long read() const {
    unsigned long long v = kNone;
    KSPMV_CUDA_CHECK(cudaGetLastError());
    flag_.download(&v, 1);
    return v;
  }

 private:
  DeviceBuffer<unsigned long long> flag_;
};

template <class T>
T read_one(const T* p) {
  T v{};
  KSPMV_CUDA_CHECK(cudaMemcpy(&v, p, sizeof(T), cudaMemcpyDeviceToHost));
  return v;
}

// The row pointer as int32: the caller's array, or a narrowed copy.
template <class O>
DeviceBuffer<DeviceOffset> row_ptr_of(const void* p, std::size_t count) {
  const O* in = static_cast<const O*>(p);
  if constexpr (sizeof(O) == sizeof(DeviceOffset)) {
    if (count > 0 && read_one(in + count - 1) > static_cast<O>(std::numeric_limits<int>::max()))
      throw UnsupportedError("the row map ends past 2^31 - 1 non-zeros");
    return DeviceBuffer<DeviceOffset>::borrow(
        const_cast<DeviceOffset*>(reinterpret_cast<const DeviceOffset*>(in)), count);
  } else {
    DeviceBuffer<DeviceOffset> out(count);
    FirstBad bad;
    if (count > 0)
      narrow<<<blocks_for(count), kThreads>>>(in, out.data(), count, 0,
                                              std::numeric_limits<DeviceOffset>::max(), bad.get());
    if (const auto i = bad.read(); i != kNone)
      throw UnsupportedError("row map entry " + std::to_string(i) +
                             " is negative or past 2^31 - 1 (device offsets are 32-bit)");
    return out;
  }
}

template <class C>
DeviceBuffer<Ordinal> col_of(const void* p, std::size_t nnz, Ordinal n) {
  const C* in = static_cast<const C*>(p);
  if constexpr (sizeof(C) == sizeof(Ordinal)) {
    return DeviceBuffer<Ordinal>::borrow(const_cast<Ordinal*>(reinterpret_cast<const Ordinal*>(in)),
                                         nnz);
  } else {
    DeviceBuffer<Ordinal> out(nnz);
    FirstBad bad;
    if (nnz > 0)
      narrow<<<blocks_for(nnz), kThreads>>>(in, out.data(), nnz, 0, n > 0 ? n - 1 : -1, bad.get());
    if (const auto k = bad.read(); k != kNone)
      throw InvalidArgument("Operator: column index " + std::to_string(read_one(in + k)) +
                            " of entry " + std::to_string(k) + " is outside [0, " +
                            std::to_string(n) + ")");
    return out;
  }
}

template <class S>
void check(const DeviceCsr<S>& d) {
  FirstBad rows, cols;
  check_rows<<<blocks_for(std::size_t(d.m) + 1), kThreads>>>(d.row_ptr.data(), d.m, d.nnz,
                                                             rows.get());
  if (d.nnz > 0)
    check_cols<<<blocks_for(d.nnz), kThreads>>>(d.col.data(), d.nnz, d.n, cols.get());
  if (const auto i = rows.read(); i != kNone) {
    if (i == static_cast<unsigned long long>(d.m))
      throw InvalidArgument("Operator: the row map does not run from 0 to the " +
                            std::to_string(d.nnz) + " entries");
    throw InvalidArgument("Operator: the row map decreases after row " + std::to_string(i));
  }
  if (const auto k = cols.read(); k != kNone)
    throw InvalidArgument("Operator: column index " + std::to_string(read_one(d.col.data() + k)) +
                          " of entry " + std::to_string(k) + " is outside [0, " +
                          std::to_string(d.n) + ")");
}

}  // namespace

template <class S>
DeviceCsr<S> adopt(const DeviceCsrArrays<S>& a, bool validate) {
  if (a.nnz > static_cast<std::size_t>(std::numeric_limits<DeviceOffset>::max()))
    throw UnsupportedError("matrix has " + std::to_string(a.nnz) +
                           " non-zeros; device offsets are 32-bit (at most 2^31 - 1)");
  if (a.m > 0 && a.row_ptr == nullptr) throw InvalidArgument("Operator: the row map is empty");
  DeviceCsr<S> d;
  d.m = a.m;
  d.n = a.n;
  d.nnz = static_cast<DeviceOffset>(a.nnz);
  const std::size_t offsets = a.m + std::size_t(1);
  if (a.row_ptr == nullptr) {
    d.row_ptr = DeviceBuffer<DeviceOffset>(1);
    KSPMV_CUDA_CHECK(cudaMemset(d.row_ptr.data(), 0, sizeof(DeviceOffset)));
  } else if (a.offset_bytes == 4) {
    d.row_ptr = a.offset_signed ? row_ptr_of<std::int32_t>(a.row_ptr, offsets)
                                : row_ptr_of<std::uint32_t>(a.row_ptr, offsets);
  } else {
    d.row_ptr = a.offset_signed ? row_ptr_of<std::int64_t>(a.row_ptr, offsets)
                                : row_ptr_of<std::uint64_t>(a.row_ptr, offsets);
  }
  d.col = a.index_bytes == 4 ? col_of<std::int32_t>(a.col, a.nnz, a.n)
                             : col_of<std::int64_t>(a.col, a.nnz, a.n);
  d.val = DeviceBuffer<S>(a.nnz);
  if (a.nnz > 0)
    KSPMV_CUDA_CHECK(cudaMemcpy(d.val.data(), a.val, d.val.bytes(), cudaMemcpyDeviceToDevice));
  if (validate) check(d);
  KSPMV_CUDA_CHECK(cudaDeviceSynchronize());
  return d;
}

template <class S>
std::vector<Offset> download_row_ptr(const DeviceCsr<S>& a) {
  std::vector<DeviceOffset> narrow_ptr(a.m + std::size_t(1));
  a.row_ptr.download(narrow_ptr.data(), narrow_ptr.size());
  return std::vector<Offset>(narrow_ptr.begin(), narrow_ptr.end());
}

template DeviceCsr<float> adopt(const DeviceCsrArrays<float>&, bool);
template DeviceCsr<double> adopt(const DeviceCsrArrays<double>&, bool);
template std::vector<Offset> download_row_ptr(const DeviceCsr<float>&);
template std::vector<Offset> download_row_ptr(const DeviceCsr<double>&);

}  // namespace kspmv::cuda
