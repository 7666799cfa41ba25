#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <string>
#include <type_traits>

#include "backends/cuda/complex.hpp"
#include "backends/cuda/device_arrays.hpp"

namespace kspmv::cuda {

namespace {

constexpr unsigned long long kNone = std::numeric_limits<unsigned long long>::max();
constexpr int kThreads = 256;

unsigned blocks_for(std::size_t n) {
  return static_cast<unsigned>((n + kThreads - 1) / kThreads);
}

// out[i] = in[i] as Out; the first i whose value is outside [lo, hi] goes to *bad.
template <class In, class Out>
__global__ void narrow(const In* in, Out* out, std::size_t count, long long lo, long long hi,
                       unsigned long long* bad) {
  const std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x;
  if (i >= count) return;
  const In v = in[i];
  bool ok = hi >= 0 && static_cast<unsigned long long>(v) <= static_cast<unsigned long long>(hi);
  if constexpr (std::is_signed_v<In>) ok = v >= lo && v <= hi;
  if (!ok && bad) atomicMin(bad, static_cast<unsigned long long>(i));
  out[i] = static_cast<Out>(v);
}

// The first row i with row_ptr[i + 1] < row_ptr[i], or m when row_ptr[0] != 0 or
// row_ptr[m] != nnz.
template <class O>
__global__ void check_rows(const O* row_ptr, Ordinal m, O nnz, unsigned long long* bad) {
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

// A device flag starting at kNone, read back after the kernels that lower it on `stream` (the
// host waits for that stream: the set-up's one read-back of a check). Set and freed on `stream`
// too: nothing waits for the device or the legacy default stream.
class FirstBad {
 public:
  explicit FirstBad(cudaStream_t stream) : flag_(1, kPooled, stream), stream_(stream) {
    KSPMV_CUDA_CHECK(cudaMemsetAsync(flag_.data(), 0xff, flag_.bytes(), stream));  // kNone
  }
  ~FirstBad() { flag_.free_after(stream_); }
  FirstBad(const FirstBad&) = delete;
  FirstBad& operator=(const FirstBad&) = delete;
  unsigned long long* get() const { return flag_.data(); }
  unsigned long long read() const {
    unsigned long long v = kNone;
    KSPMV_CUDA_CHECK(cudaGetLastError());
    KSPMV_CUDA_CHECK(cudaStreamSynchronize(stream_));
    flag_.download(&v, 1);
    return v;
  }

 private:
  DeviceBuffer<unsigned long long> flag_;
  cudaStream_t stream_;
};

// *p, read back after `stream`'s work.
template <class T>
T read_one(const T* p, cudaStream_t stream) {
  T v{};
  KSPMV_CUDA_CHECK(cudaStreamSynchronize(stream));
  KSPMV_CUDA_CHECK(cudaMemcpy(&v, p, sizeof(T), cudaMemcpyDeviceToHost));
  return v;
}

// The row pointer as O (DeviceOffset when nnz < 2^31, else Offset): the caller's array when it
// has O's width (an unsigned one ending within O's range), or a converted copy whose entries
// must lie in [0, max of O].
template <class O, class In>
DeviceBuffer<O> row_ptr_of(const void* p, std::size_t count, cudaStream_t stream) {
  const In* in = static_cast<const In*>(p);
  if constexpr (sizeof(In) == sizeof(O)) {
    if (std::is_unsigned_v<In> && count > 0 &&
        read_one(in + count - 1, stream) > static_cast<In>(std::numeric_limits<O>::max()))
      throw UnsupportedError("the row map ends past " +
                             std::to_string(std::numeric_limits<O>::max()) + " non-zeros");
    return DeviceBuffer<O>::borrow(const_cast<O*>(reinterpret_cast<const O*>(in)), count);
  } else {
    DeviceBuffer<O> out(count);
    FirstBad bad(stream);
    if (count > 0)
      narrow<<<blocks_for(count), kThreads, 0, stream>>>(in, out.data(), count, 0,
                                                         std::numeric_limits<O>::max(), bad.get());
    if (const auto i = bad.read(); i != kNone)
      throw UnsupportedError("row map entry " + std::to_string(i) + " is negative or past " +
                             std::to_string(std::numeric_limits<O>::max()) +
                             (sizeof(O) == 4 ? " (the matrix has fewer than 2^31 non-zeros)" : ""));
    return out;
  }
}

// The caller's row map of any supported type as O.
template <class O>
DeviceBuffer<O> row_ptr_as(const void* p, int bytes, bool is_signed, std::size_t count,
                           cudaStream_t stream) {
  if (bytes == 4)
    return is_signed ? row_ptr_of<O, std::int32_t>(p, count, stream)
                     : row_ptr_of<O, std::uint32_t>(p, count, stream);
  return is_signed ? row_ptr_of<O, std::int64_t>(p, count, stream)
                   : row_ptr_of<O, std::uint64_t>(p, count, stream);
}

template <class C>
DeviceBuffer<Ordinal> col_of(const void* p, std::size_t nnz, Ordinal n, cudaStream_t stream) {
  const C* in = static_cast<const C*>(p);
  if constexpr (sizeof(C) == sizeof(Ordinal)) {
    return DeviceBuffer<Ordinal>::borrow(const_cast<Ordinal*>(reinterpret_cast<const Ordinal*>(in)),
                                         nnz);
  } else {
    DeviceBuffer<Ordinal> out(nnz);
    FirstBad bad(stream);
    if (nnz > 0)
      narrow<<<blocks_for(nnz), kThreads, 0, stream>>>(in, out.data(), nnz, 0, n > 0 ? n - 1 : -1,
                                                       bad.get());
    if (const auto k = bad.read(); k != kNone)
      throw InvalidArgument("Operator: column index " + std::to_string(read_one(in + k, stream)) +
                            " of entry " + std::to_string(k) + " is outside [0, " +
                            std::to_string(n) + ")");
    return out;
  }
}

template <class S>
void check(const DeviceCsr<S>& d, cudaStream_t stream) {
  FirstBad rows(stream), cols(stream);
  d.with_view([&](const auto& v) {
    using O = std::remove_cv_t<std::remove_pointer_t<decltype(v.row_ptr)>>;
    check_rows<<<blocks_for(std::size_t(d.m) + 1), kThreads, 0, stream>>>(
        v.row_ptr, d.m, static_cast<O>(d.nnz), rows.get());
  });
  if (d.nnz > 0)
    check_cols<<<blocks_for(d.nnz), kThreads, 0, stream>>>(d.col.data(), d.nnz, d.n, cols.get());
  if (const auto i = rows.read(); i != kNone) {
    if (i == static_cast<unsigned long long>(d.m))
      throw InvalidArgument("Operator: the row map does not run from 0 to the " +
                            std::to_string(d.nnz) + " entries");
    throw InvalidArgument("Operator: the row map decreases after row " + std::to_string(i));
  }
  if (const auto k = cols.read(); k != kNone)
    throw InvalidArgument("Operator: column index " +
                          std::to_string(read_one(d.col.data() + k, stream)) + " of entry " +
                          std::to_string(k) + " is outside [0, " + std::to_string(d.n) + ")");
}

}  // namespace

template <class S>
DeviceCsr<S> adopt(const DeviceCsrArrays<S>& a, bool validate, cudaStream_t stream) {
  if (a.m > 0 && a.row_ptr == nullptr) throw InvalidArgument("Operator: the row map is empty");
  if (a.offset_bytes == 4 && a.offset_signed &&
      !narrow_offsets(static_cast<Offset>(std::min<std::size_t>(a.nnz, INT64_MAX))))
    throw InvalidArgument("Operator: " + std::to_string(a.nnz) +
                          " non-zeros cannot be indexed by a signed 32-bit row map");
  DeviceCsr<S> d;
  d.m = a.m;
  d.n = a.n;
  d.nnz = static_cast<Offset>(a.nnz);
  const std::size_t offsets = a.m + std::size_t(1);
  const bool wide = !narrow_offsets(d.nnz);
  if (a.row_ptr == nullptr) {
    d.row_ptr = DeviceBuffer<DeviceOffset>(1);
    KSPMV_CUDA_CHECK(cudaMemsetAsync(d.row_ptr.data(), 0, sizeof(DeviceOffset), stream));
  } else if (wide) {
    d.row_ptr_wide =
        row_ptr_as<Offset>(a.row_ptr, a.offset_bytes, a.offset_signed, offsets, stream);
  } else {
    d.row_ptr =
        row_ptr_as<DeviceOffset>(a.row_ptr, a.offset_bytes, a.offset_signed, offsets, stream);
  }
  d.col = a.index_bytes == 4 ? col_of<std::int32_t>(a.col, a.nnz, a.n, stream)
                             : col_of<std::int64_t>(a.col, a.nnz, a.n, stream);
  d.val = DeviceBuffer<S>(a.nnz);
  if (a.nnz > 0)
    KSPMV_CUDA_CHECK(
        cudaMemcpyAsync(d.val.data(), a.val, d.val.bytes(), cudaMemcpyDeviceToDevice, stream));
  if (validate) check(d, stream);
  // On the legacy default stream the matrix is ready on return; on another, its work stays queued.
  if (!stream) KSPMV_CUDA_CHECK(cudaStreamSynchronize(nullptr));
  return d;
}

template <class S>
std::vector<Offset> download_row_ptr(const DeviceCsr<S>& a) {
  const std::size_t count = a.m + std::size_t(1);
  if (a.wide()) {
    std::vector<Offset> row_ptr(count);
    a.row_ptr_wide.download(row_ptr.data(), count);
    return row_ptr;
  }
  std::vector<DeviceOffset> narrow_ptr(count);
  a.row_ptr.download(narrow_ptr.data(), count);
  return std::vector<Offset>(narrow_ptr.begin(), narrow_ptr.end());
}

DeviceBuffer<Offset> widen(const Ordinal* indices, std::size_t count) {
  DeviceBuffer<Offset> out(count);
  if (count > 0)
    narrow<<<blocks_for(count), kThreads>>>(indices, out.data(), count,
                                            std::numeric_limits<Ordinal>::min(),
                                            std::numeric_limits<Ordinal>::max(), nullptr);
  check_launch("narrow");
  return out;
}

template DeviceCsr<float> adopt(const DeviceCsrArrays<float>&, bool, cudaStream_t);
template DeviceCsr<double> adopt(const DeviceCsrArrays<double>&, bool, cudaStream_t);
template std::vector<Offset> download_row_ptr(const DeviceCsr<float>&);
template std::vector<Offset> download_row_ptr(const DeviceCsr<double>&);
template std::vector<Offset> download_row_ptr(const DeviceCsr<Complex<float>>&);
template std::vector<Offset> download_row_ptr(const DeviceCsr<Complex<double>>&);

}  // namespace kspmv::cuda
