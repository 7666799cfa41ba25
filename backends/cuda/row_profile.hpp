// Row statistics of a CSR row pointer in device memory, computed there in one pass (docs/DESIGN.md
// "One device": a matrix on the device is analysed and planned there). The multi-device executor
// plans its pieces from these: each piece's local row pointer is narrowed on its device from the
// matrix's 64-bit one in the same pass, and no pass over the rows runs on the host.
#pragma once

#include <cuda_runtime_api.h>

#include <array>
#include <cstddef>
#include <functional>

#include "kspmv/analysis/row_stats.hpp"
#include "kspmv/core/types.hpp"
#include "kspmv/formats/long_rows.hpp"

namespace kspmv::cuda {

// Rows longer than this are left out of RowProfile::short_rows: CSR-Vector's widest long-row
// threshold (analysis::csr_vector_long_row_threshold(32)), from which it picks its lanes.
inline constexpr Offset kShortRowCut = 4096;

// What one pass gathers, as the device accumulates it (zeroed by narrow_and_profile).
struct ProfileSums {
  struct Part {  // the rows counted
    unsigned long long rows, nnz, squares, min_len, max_key, empty;
    unsigned long long above[4];  // longer than 32, 256, 4096, 65536
  } all, short_rows;
  unsigned long long longer_than[6];  // rows longer than 128 << k, k = 0..5
  unsigned long long bins[64];        // rows with 2^b <= length < 2^(b+1)
};

struct RowProfile {
  analysis::RowStats all;         // every row (longest_row, the power-law exponent)
  analysis::RowStats short_rows;  // rows of at most kShortRowCut non-zeros (power_law_r unset)
  std::array<Ordinal, 6> longer_than{};  // rows longer than 128 << k non-zeros, k = 0..5
};

// What a kernel plans from when its matrix is in device memory only: the profile, and the plan
// of the rows longer than a threshold (found on the device; their extents read back).
struct DevicePlanInput {
  RowProfile profile;
  std::function<LongRowPlan(Offset threshold, Offset chunk_nnz)> long_rows;
  // Device memory of at least `bytes` for the set-up's own passing needs (the stand-in vectors
  // a library's analysis wants), valid until the device has been synchronized after the factory
  // returned: the set-up may leave work on it queued on `stream`, and neither frees it nor waits
  // for that work. Null: the set-up allocates its own and waits.
  std::function<void*(std::size_t bytes)> scratch;
  // Where the set-up queues its device work (a library's analysis): null, the legacy default
  // stream. A non-blocking stream lets that work run beside copies on the legacy stream.
  cudaStream_t stream = nullptr;
  // x's sectors by the locality model (analysis::x_sectors) where the set-up has counted them
  // (Reorder::Bfs's P A P^T), else negative: CSR-Vector's thread a row for clustered columns.
  double x_sectors = -1;
};

// Enqueues on `stream`, for the m rows whose pointer is src[0..m] (64-bit, device memory of this
// device or of a peer it can read): when `local` is not null, local[i] = clamp(src[i], lo, hi)
// - lo (the piece's own row pointer, MSREP Alg. 2), and the rows' statistics, of the local
// pointer when there is one, into `sums` (device memory).
void narrow_and_profile(const Offset* src, Ordinal m, Offset lo, Offset hi, DeviceOffset* local,
                        ProfileSums* sums, cudaStream_t stream);

// Enqueues on `stream` the statistics of the m rows of a 32-bit row pointer row_ptr[0..m] in
// device memory (a matrix that arrived on one device, device_arrays.hpp) into `sums`.
void profile_rows(const DeviceOffset* row_ptr, Ordinal m, ProfileSums* sums, cudaStream_t stream);

// Loads longest_row_on_device's kernel on the current device. CUDA loads a kernel when it is
// first used (lazily): 0.12 ms of the first LRA partition of a process on an H100, where a
// multi-device set-up before it, waiting for its upload, could have done it.
void load_longest_row_kernel();

// The first longest row of the m rows whose 64-bit pointer is src[0..m] (device memory of the
// current device): one pass on `stream`, reduced into *key (device memory, one word, set here),
// read back (waits for `stream`). What LRA needs of the whole matrix (Gao et al. 2024 §3.3).
Ordinal longest_row_on_device(const Offset* src, Ordinal m, unsigned long long* key,
                              cudaStream_t stream);

// The profile of `sums` read back to the host, for rows of ncols columns.
RowProfile to_profile(const ProfileSums& sums, Ordinal ncols);

// At least the number of rows of the profile longer than `threshold` (exact when threshold is
// 128 << k, k < 6).
Ordinal long_row_bound(const RowProfile& p, Offset threshold);

// The rows of the local row pointer local[0..m] (device memory) longer than `threshold`, cut
// into chunks of chunk_nnz (kspmv::plan_long_rows); at most `count` of them (a bound from the
// profile: long_row_bound). Its lists are found in `scratch` (device memory of
// long_rows_scratch_bytes(count)), or in one allocation of its own when that is null. Waits for
// `stream`.
LongRowPlan plan_long_rows_on_device(const DeviceOffset* local, Ordinal m, Offset threshold,
                                     Ordinal count, Offset chunk_nnz, cudaStream_t stream,
                                     void* scratch = nullptr);
std::size_t long_rows_scratch_bytes(Ordinal count);

}  // namespace kspmv::cuda
