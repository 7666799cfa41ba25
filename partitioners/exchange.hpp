// How the devices' results are combined in multi-device SpMV (docs/DESIGN.md "Several devices"):
// one ExchangeStrategy per mode, planned from the PartitionPlan alone and carried out step by step
// by the CUDA executor (backends/cuda/multi_device.hpp) and by the host emulation
// (backends/kokkos/multi_device.hpp) alike. Kokkos-free.
//
// Every mode lays vectors out the same way: each device holds max(m, n) entries of x and of y at
// their global positions. The modes differ in which entries each device holds when an apply
// starts, in the copies between devices, and in where y is whole when it ends.
#pragma once

#include <cstddef>
#include <memory>
#include <vector>

#include "partitioners/partition_plan.hpp"

namespace kspmv::part {

// Which exchanges a scheme supports. AllGather: row-disjoint schemes (Rows, NZ, 2NZ, LRA,
// LRA+RC). Merge: every scheme except LRA+RC (a redundant block has no single owner to merge).
// Halo, AllGatherX: Rows, NZ, 2NZ, LRA (every row owned by exactly one device). Auto: every one.
bool exchange_applies(Scheme s, Exchange e);
// The exchanges Auto chooses from for a scheme: AllGather, Merge, Halo where they apply.
std::vector<Exchange> exchange_candidates(Scheme s);

// Halo and AllGatherX: x entry j belongs to the device owning row floor(j*m/n), so the rows
// [r0, r1) of a block own the columns [ceil(r0*n/m), ceil(r1*n/m)). A ColumnRange is such a run.
struct ColumnRange {
  Ordinal begin = 0, end = 0;  // columns [begin, end)
  int owner = 0;
};
// The non-empty column ranges of a plan whose blocks have disjoint rows, sorted by column and
// covering [0, n); rows in no block belong to device 0. Empty when m or n is 0.
// O(blocks log blocks).
std::vector<ColumnRange> halo_column_ranges(const PartitionPlan& p);

// Entries [begin, begin + count) of a vector.
struct Span {
  Ordinal begin = 0, count = 0;
};

// What a copy reads and writes: a device's x or y, a block's partial result alpha*A_b*x (its
// rows, on its device) or the copy of that partial on another device.
enum class Buffer { X, Y, Partial, Inbox };

// `count` entries from buffer `from` of device `src` to buffer `to` of device `dst`.
struct Copy {
  int src = 0, dst = 0;
  Buffer from = Buffer::Y, to = Buffer::Y;
  int block = -1;  // plan index of the block whose Partial / Inbox it is
  Ordinal from_offset = 0, to_offset = 0, count = 0;
};

// y[offset, offset + count) += `from` of `block`, on `device`.
struct Add {
  int device = 0;
  int block = 0;
  Buffer from = Buffer::Partial;
  Ordinal offset = 0, count = 0;
};

// Bytes one device sends to and receives from the others in one apply (uploads and downloads
// between host and devices are not exchanges).
struct DeviceTraffic {
  std::size_t bytes_sent = 0;
  std::size_t bytes_received = 0;
};

class ExchangeStrategy {
 public:
  virtual ~ExchangeStrategy() = default;
  Exchange mode() const { return mode_; }
  const PartitionPlan& plan() const { return plan_; }

  // What it adds to the layout.
  // Whether the blocks' kernels write alpha*A_b*x into their Partial instead of y.
  virtual bool partials() const { return false; }
  // The x entries device d holds when an apply starts (it reads the others after the exchange).
  virtual std::vector<Span> x_needed(int d) const = 0;
  // The y entries device d reads when beta != 0.
  virtual std::vector<Span> y_needed(int d) const = 0;
  // The rows of y read from device d when an apply has ended: every row from one device.
  virtual std::vector<Span> y_home(int d) const = 0;
  // Whether every device ends an apply with the whole y.
  virtual bool replicated() const { return false; }

  // What runs before the kernels, after each block's kernel, and at the end.
  // Rows of device d's y scaled by beta before the kernels.
  virtual std::vector<Span> scale_first(int d) const {
    (void)d;
    return {};
  }
  // Copies of x entries before the kernels.
  virtual std::vector<Copy> before_kernels() const { return {}; }
  // Whether each device receives the x entries its pieces read, by the lists the executor finds
  // in the matrix (gather on the owner, copy, scatter), before the kernels.
  virtual bool halo() const { return false; }
  // Copies after the kernel of plan block b.
  virtual std::vector<Copy> after_block(int b) const {
    (void)b;
    return {};
  }
  // Sums once every copy into their device has arrived.
  virtual std::vector<Add> at_end() const { return {}; }

  // Transfer hiding (Gao et al. 2024 §3.2): a block that reads no x entry its device receives
  // runs while the copies before the kernels cross. `reads[b]`: whether plan block b reads an x
  // entry its device does not own (part::owned_columns), set by the executor once found in the
  // matrix; until then every block does.
  void set_x_readers(std::vector<bool> reads);
  // Whether block b's kernel waits for the copies before the kernels (Halo, AllGatherX: a block
  // that reads received entries; never where x is replicated).
  bool waits_for_x(int b) const;
  // Device d's blocks in the order their kernels run, one after another: those that wait for no
  // x first, then the others, each group in stream-slot order.
  std::vector<int> kernel_order(int d) const;

  // Whether the x entries each device needs are the rows of y it holds after an apply (square
  // matrices): an iterative method keeps its vectors where they are (AllGather, Halo,
  // AllGatherX; not Merge).
  bool iterates_in_place() const;

  // The bytes it moves. Halo: counts[dst][src] x entries device dst receives from device src per
  // apply, set by the executor once it found them.
  void set_halo_counts(std::vector<std::vector<Ordinal>> counts);
  Ordinal halo_count(int dst, int src) const;
  std::vector<DeviceTraffic> traffic(std::size_t scalar_bytes) const;
  std::size_t bytes(std::size_t scalar_bytes) const;  // sent, summed over devices

 protected:
  ExchangeStrategy(const PartitionPlan& plan, Exchange mode) : plan_(plan), mode_(mode) {}
  PartitionPlan plan_;
  Exchange mode_;
  std::vector<std::vector<Ordinal>> halo_;
  std::vector<bool> x_readers_;  // empty: unknown, every block reads received entries
};

// The strategy of `mode` for `plan`. Throws UnsupportedError when the mode does not apply to the
// plan's scheme, and for Auto (the caller times the candidates).
std::unique_ptr<ExchangeStrategy> make_strategy(const PartitionPlan& plan, Exchange mode);

// Sorted, merged spans: the rows of device d's blocks (all, or its Owned ones), and the x entries
// it owns under the Halo rule.
std::vector<Span> block_rows(const PartitionPlan& p, int d, bool owned_only);
std::vector<Span> owned_columns(const PartitionPlan& p, int d);

// What one device computes and exchanges in one Halo apply: its rows and non-zeros, the x entries
// it owns, the distinct x entries its rows read from other devices (received) and those that
// other devices read from it (sent, once per receiving device), and how many devices it receives
// from (sources) and sends to (targets). The same for the devices of one node (the multi-device
// executor's Halo) and for MPI ranks (Tpetra's Import moves these entries).
struct HaloVolume {
  Ordinal rows = 0;
  Offset nnz = 0;
  Ordinal owned = 0, received = 0, sent = 0;
  int sources = 0, targets = 0;
};
// Per device, the HaloVolume of a plan that Halo applies to, for the CSR with this row pointer and
// these column indices (the plan's matrix): reads the column indices once, O(nnz + n) time and
// 2n ints of memory. Throws InvalidArgument for a plan Halo does not apply to.
std::vector<HaloVolume> halo_volumes(const PartitionPlan& p, const Offset* row_ptr,
                                     const Ordinal* col_idx);

}  // namespace kspmv::part
