// Halo lists: a mark pass over the pieces' non-zeros, then one stream compaction per span.
#include <thrust/iterator/counting_iterator.h>
#include <cub/device/device_select.cuh>

#include <algorithm>
#include <cstdint>
#include <string>

#include "backends/cuda/check.hpp"
#include "backends/cuda/grid_stride.cuh"
#include "backends/cuda/halo_lists.hpp"

namespace kspmv::cuda {

namespace {

constexpr Offset kReadFirstPerColumn = 8;  // entries per column above which marks are read first

// The device's own spans as kernel arguments (a device has at most a few).
struct Own {
  int count = 0;
  Ordinal begin[part::kMaxStreamSlots] = {}, end[part::kMaxStreamSlots] = {};
};

// The marks are one bit a column, so that they stay in L2 (k-mer's 60M columns: 7.5 MB; as
// bytes, 60 MB went to DRAM and the pass took 2.1 ms). `read_first`: a column referenced many
// times over (a power-law matrix) is marked once, and the atomic on a word whose bit is set
// already, which would still queue at L2, is skipped; where columns are referenced a few times
// each the read is one more round trip.
// Returns whether j is another device's.
__device__ bool mark_column(Ordinal j, const Own& own, bool read_first, unsigned* marks) {
  bool mine = false;
  for (int k = 0; k < own.count; ++k) mine |= own.begin[k] <= j && j < own.end[k];
  const unsigned bit = 1u << (j % 32);
  if (!mine && !(read_first && (marks[j / 32] & bit))) atomicOr(&marks[j / 32], bit);
  return !mine;
}

// Four columns a thread and step (16-byte loads) over the first `quads` * 4, then one. A warp
// that met another device's column sets *reads (once it is set, a read and no store).
__global__ void mark_kernel(const Ordinal* __restrict__ col, long long nnz, long long quads,
                            Own own, bool read_first, unsigned* __restrict__ marks,
                            unsigned* reads) {
  const long long stride = static_cast<long long>(gridDim.x) * blockDim.x;
  const long long first = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x;
  const auto* col4 = reinterpret_cast<const int4*>(col);
  bool other = false;
  for (long long q = first; q < quads; q += stride) {
    const int4 c = col4[q];
    other |= mark_column(c.x, own, read_first, marks);
    other |= mark_column(c.y, own, read_first, marks);
    other |= mark_column(c.z, own, read_first, marks);
    other |= mark_column(c.w, own, read_first, marks);
  }
  for (long long e = 4 * quads + first; e < nnz; e += stride)
    other |= mark_column(col[e], own, read_first, marks);
  if (__any_sync(0xffffffffu, other) && threadIdx.x % 32 == 0 &&
      *static_cast<volatile unsigned*>(reads) == 0)
    *reads = 1;
}

// Whether column j is marked.
struct Marked {
  const unsigned* marks;
  __device__ bool operator()(Ordinal j) const { return (marks[j / 32] >> (j % 32)) & 1u; }
};

// The selection's temporary storage for up to n items.
std::size_t select_temp_bytes(Ordinal n) {
  std::size_t bytes = 0;
  thrust::counting_iterator<Ordinal> columns(0);
  KSPMV_CUDA_CHECK(cub::DeviceSelect::If(nullptr, bytes, columns, static_cast<Ordinal*>(nullptr),
                                         static_cast<Ordinal*>(nullptr), n, Marked{nullptr}));
  return bytes;
}

std::size_t mark_words(Ordinal n) {
  return (static_cast<std::size_t>(n) + 31) / 32;
}

std::size_t aligned(std::size_t bytes) {
  return (bytes + 255) / 256 * 256;
}

// The spans' counts and the groups' flags, read back together.
std::size_t counts_bytes(std::size_t max_spans) {
  return aligned((max_spans + HaloFinder::kMaxGroups) * sizeof(Ordinal));
}

}  // namespace

// Scratch: the counts and flags, the marks (both cleared by one memset), the selected columns and
// the selection's temporary storage.
std::size_t HaloFinder::scratch_bytes(Ordinal n, std::size_t max_spans) {
  return counts_bytes(std::max<std::size_t>(max_spans, 1)) +
         aligned(mark_words(n) * sizeof(unsigned)) + aligned(n * sizeof(Ordinal)) +
         aligned(select_temp_bytes(n));
}

HaloFinder::HaloFinder(Ordinal n, const std::vector<part::Span>& own, std::size_t max_spans,
                       Offset entries, unsigned char* scratch, cudaStream_t stream)
    : n_(n),
      own_(own),
      max_spans_(std::max<std::size_t>(max_spans, 1)),
      read_first_(entries >= kReadFirstPerColumn * static_cast<Offset>(n)),
      stream_(stream) {
  if (own.size() > static_cast<std::size_t>(part::kMaxStreamSlots))
    throw InvalidArgument("halo: " + std::to_string(own.size()) + " spans of own columns");
  span_counts_ = reinterpret_cast<Ordinal*>(scratch);
  reads_ = reinterpret_cast<unsigned*>(span_counts_ + max_spans_);
  const std::size_t head = counts_bytes(max_spans_);
  marks_ = reinterpret_cast<unsigned*>(scratch + head);
  const std::size_t cleared = head + aligned(mark_words(n) * sizeof(unsigned));
  found_ = reinterpret_cast<Ordinal*>(scratch + cleared);
  temp_ = scratch + cleared + aligned(n * sizeof(Ordinal));
  temp_bytes_ = select_temp_bytes(n);
  KSPMV_CUDA_CHECK(cudaMemsetAsync(scratch, 0, cleared, stream_));
}

void HaloFinder::mark(const Ordinal* col, Offset nnz, int group) {
  if (group < 0 || group >= kMaxGroups)
    throw InvalidArgument("halo: group " + std::to_string(group) + " of at most " +
                          std::to_string(kMaxGroups));
  if (nnz == 0) return;
  Own own;
  for (const part::Span& s : own_) {
    own.begin[own.count] = s.begin;
    own.end[own.count++] = s.begin + s.count;
  }
  const long long quads = reinterpret_cast<std::uintptr_t>(col) % 16 == 0 ? nnz / 4 : 0;
  mark_kernel<<<grid_for(std::max<long long>(quads, nnz - 4 * quads)), kStrideBlock, 0, stream_>>>(
      col, nnz, quads, own, read_first_, marks_, reads_ + group);
  check_launch("mark_kernel");
}

void HaloFinder::select(int k, const std::vector<part::Span>& spans) {
  if (static_cast<int>(lists_.size()) != k) throw InvalidArgument("halo: lists out of order");
  if (spans_.size() + spans.size() > max_spans_)
    throw InvalidArgument("halo: more spans than planned");
  Selection sel;
  sel.first = static_cast<Ordinal>(spans_.size());
  for (const part::Span& s : spans) {
    thrust::counting_iterator<Ordinal> columns(s.begin);
    std::size_t bytes = temp_bytes_;
    KSPMV_CUDA_CHECK(cub::DeviceSelect::If(temp_, bytes, columns, found_ + used_,
                                           span_counts_ + spans_.size(), s.count, Marked{marks_},
                                           stream_));
    sel.at.push_back(used_);
    spans_.push_back(s);
    used_ += s.count;  // the spans of other devices are disjoint: used_ <= n
  }
  lists_.push_back(sel);
}

std::vector<Ordinal> HaloFinder::counts() {
  host_counts_.assign(max_spans_ + kMaxGroups, 0);
  KSPMV_CUDA_CHECK(cudaMemcpyAsync(host_counts_.data(), span_counts_,
                                   host_counts_.size() * sizeof(Ordinal), cudaMemcpyDeviceToHost,
                                   stream_));
  KSPMV_CUDA_CHECK(cudaStreamSynchronize(stream_));
  std::vector<Ordinal> per_list;
  for (const Selection& sel : lists_) {
    Ordinal c = 0;
    for (std::size_t i = 0; i < sel.at.size(); ++i) c += host_counts_[sel.first + i];
    per_list.push_back(c);
  }
  return per_list;
}

bool HaloFinder::reads_other(int group) const {
  if (host_counts_.empty()) throw InvalidArgument("halo: reads_other before counts");
  return host_counts_.at(max_spans_ + static_cast<std::size_t>(group)) != 0;
}

void HaloFinder::copy_list(int k, Ordinal* to) const {
  const Selection& sel = lists_.at(k);
  for (std::size_t i = 0; i < sel.at.size(); ++i) {
    const Ordinal c = host_counts_[sel.first + i];
    if (c > 0)
      KSPMV_CUDA_CHECK(cudaMemcpyAsync(to, found_ + sel.at[i], c * sizeof(Ordinal),
                                       cudaMemcpyDeviceToDevice, stream_));
    to += c;
  }
}

}  // namespace kspmv::cuda
