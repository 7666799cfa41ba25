// Halo setup kernels: mark, exclusive sum, send positions and renumbering, each a grid-stride
// pass over the pieces' non-zeros or over the columns; a column's range by binary search.
#include <cub/device/device_scan.cuh>

#include <algorithm>

#include "backends/cuda/check.hpp"
#include "backends/cuda/halo_setup.hpp"

namespace kspmv::cuda {

namespace {

using part::ColumnRange;

constexpr int kBlock = 256;

unsigned grid_for(long long count) {
  return static_cast<unsigned>(std::clamp<long long>((count + kBlock - 1) / kBlock, 1, 65535));
}

// The range holding column j (ranges sorted by column, covering every column).
__device__ const ColumnRange& range_of(const ColumnRange* r, int count, Ordinal j) {
  int lo = 0, hi = count - 1;
  while (lo < hi) {
    const int mid = (lo + hi + 1) / 2;
    if (r[mid].begin <= j)
      lo = mid;
    else
      hi = mid - 1;
  }
  return r[lo];
}

__global__ void halo_mark_kernel(const Ordinal* __restrict__ col, long long nnz,
                                 const ColumnRange* __restrict__ r, int nr, int self,
                                 Ordinal* __restrict__ index) {
  const long long stride = static_cast<long long>(gridDim.x) * blockDim.x;
  for (long long e = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; e < nnz;
       e += stride) {
    const Ordinal j = col[e];
    const ColumnRange& c = range_of(r, nr, j);
    if (c.owner != self) index[c.order + (j - c.begin)] = 1;  // racing writes of the same 1
  }
}

// Received column j (owner-major position q): its place in its owner's x.
__global__ void halo_positions_kernel(const ColumnRange* __restrict__ r, int nr, Ordinal n,
                                      const Ordinal* __restrict__ index,
                                      Ordinal* __restrict__ positions) {
  const long long stride = static_cast<long long>(gridDim.x) * blockDim.x;
  for (long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; i < n;
       i += stride) {
    const Ordinal j = static_cast<Ordinal>(i);
    const ColumnRange& c = range_of(r, nr, j);
    const Ordinal q = c.order + (j - c.begin);
    if (index[q + 1] != index[q]) positions[index[q]] = c.rank + (j - c.begin);
  }
}

__global__ void halo_renumber_kernel(Ordinal* __restrict__ col, long long nnz,
                                     const ColumnRange* __restrict__ r, int nr, int self,
                                     Ordinal owned, const Ordinal* __restrict__ index) {
  const long long stride = static_cast<long long>(gridDim.x) * blockDim.x;
  for (long long e = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; e < nnz;
       e += stride) {
    const Ordinal j = col[e];
    const ColumnRange& c = range_of(r, nr, j);
    col[e] = c.owner == self ? c.rank + (j - c.begin) : owned + index[c.order + (j - c.begin)];
  }
}

}  // namespace

HaloSetup::HaloSetup(const std::vector<ColumnRange>& ranges, int self, int ndevices, Ordinal n,
                     cudaStream_t stream)
    : self_(self),
      ndevices_(ndevices),
      n_(n),
      stream_(stream),
      starts_(part::halo_owner_starts(ranges, ndevices)),
      ranges_(ranges.size()),
      index_(std::size_t(n) + 1),
      first_d_(std::size_t(ndevices) + 1),
      first_(std::size_t(ndevices) + 1) {
  if (ranges.empty()) throw InvalidArgument("HaloSetup: no column ranges");
  owned_ = starts_[self + 1] - starts_[self];
  ranges_.upload(ranges.data());
  KSPMV_CUDA_CHECK(cudaMemsetAsync(index_.data(), 0, index_.bytes(), stream_));
}

void HaloSetup::mark(const Ordinal* col, Offset nnz) {
  if (nnz == 0) return;
  halo_mark_kernel<<<grid_for(nnz), kBlock, 0, stream_>>>(
      col, nnz, ranges_.data(), static_cast<int>(ranges_.size()), self_, index_.data());
  check_launch("halo_mark_kernel");
}

void HaloSetup::number() {
  std::size_t temp_bytes = 0;
  const long long count = static_cast<long long>(n_) + 1;
  KSPMV_CUDA_CHECK(cub::DeviceScan::ExclusiveSum(nullptr, temp_bytes, index_.data(), index_.data(),
                                                 count, stream_));
  temp_ = DeviceBuffer<unsigned char>(std::max<std::size_t>(temp_bytes, 1));
  KSPMV_CUDA_CHECK(cub::DeviceScan::ExclusiveSum(temp_.data(), temp_bytes, index_.data(),
                                                 index_.data(), count, stream_));
  for (int d = 0; d <= ndevices_; ++d)
    KSPMV_CUDA_CHECK(cudaMemcpyAsync(first_d_.data() + d, index_.data() + starts_[d],
                                     sizeof(Ordinal), cudaMemcpyDeviceToDevice, stream_));
}

void HaloSetup::finish() {
  KSPMV_CUDA_CHECK(cudaMemcpyAsync(first_.data(), first_d_.data(), first_d_.bytes(),
                                   cudaMemcpyDeviceToHost, stream_));
  KSPMV_CUDA_CHECK(cudaStreamSynchronize(stream_));
  positions_ = DeviceBuffer<Ordinal>(received());
  if (received() > 0) {
    halo_positions_kernel<<<grid_for(n_), kBlock, 0, stream_>>>(
        ranges_.data(), static_cast<int>(ranges_.size()), n_, index_.data(), positions_.data());
    check_launch("halo_positions_kernel");
  }
}

void HaloSetup::renumber(Ordinal* col, Offset nnz) {
  if (nnz == 0) return;
  halo_renumber_kernel<<<grid_for(nnz), kBlock, 0, stream_>>>(
      col, nnz, ranges_.data(), static_cast<int>(ranges_.size()), self_, owned_, index_.data());
  check_launch("halo_renumber_kernel");
}

}  // namespace kspmv::cuda
