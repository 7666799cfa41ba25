// Halo setup on the GPU (DESIGN.md "Execution", Halo): from the global column indices of a
// device's pieces, already on that device, it finds the x entries the device receives, numbers
// them after its owned ones (by owner, then column, as the host emulation does), lists the
// positions each owner sends, and renumbers the pieces' columns into the device's x. O(nnz + n)
// work on the device and O(devices) values copied to the host: no host pass over the matrix.
#pragma once

#include <cuda_runtime_api.h>

#include <vector>

#include "backends/cuda/memory.hpp"
#include "kspmv/core/types.hpp"
#include "partitioners/exchange.hpp"

namespace kspmv::cuda {

class HaloSetup {
 public:
  // For plan device `self` on the current CUDA device; work is enqueued on `stream`. `ranges`
  // are part::halo_column_ranges of the plan (non-empty), n the number of columns.
  HaloSetup(const std::vector<part::ColumnRange>& ranges, int self, int ndevices, Ordinal n,
            cudaStream_t stream);
  // Marks the remote columns among col[0, nnz) (global indices, device memory).
  void mark(const Ordinal* col, Offset nnz);
  // After every mark: enqueues the numbering of the marked columns. finish() then brings the
  // per-owner counts to the host (waiting for the stream) and enqueues the send positions;
  // renumber() and the accessors below may be used after it.
  void number();
  void finish();
  // Global -> local column indices of col[0, nnz), in place: owned column j -> its rank among
  // the owned ones, received column -> owned() + its place among the received ones.
  void renumber(Ordinal* col, Offset nnz);
  Ordinal owned() const { return owned_; }
  Ordinal received() const { return first_[ndevices_]; }
  // The entries received from device `src`: first_received(src) .. + received_from(src) among
  // the received ones; positions(src) holds their places in src's x (device memory).
  Ordinal first_received(int src) const { return first_[src]; }
  Ordinal received_from(int src) const { return first_[src + 1] - first_[src]; }
  const Ordinal* positions(int src) const { return positions_.data() + first_[src]; }

 private:
  int self_, ndevices_;
  Ordinal n_, owned_ = 0;
  cudaStream_t stream_;
  std::vector<Ordinal> starts_;             // part::halo_owner_starts
  DeviceBuffer<part::ColumnRange> ranges_;  // sorted by column
  DeviceBuffer<Ordinal> index_;             // n + 1, owner-major: flags, then their exclusive sum
  DeviceBuffer<unsigned char> temp_;        // the scan's
  DeviceBuffer<Ordinal> positions_;
  DeviceBuffer<Ordinal> first_d_;  // index_ at each owner's start: ndevices + 1
  std::vector<Ordinal> first_;     // its copy on the host
};

}  // namespace kspmv::cuda
