// How the devices' results are combined in multi-device SpMV (DESIGN.md "Execution"). Kokkos-free:
// shared by the host emulation (backends/host/multi_device.hpp) and the CUDA executor.
#pragma once

#include <string>
#include <vector>

#include "partitioners/partition_plan.hpp"

namespace kspmv::part {

enum class Exchange {
  AllGather,  // x replicated; each device sends its owned y rows to every other device
              // (Gao et al. 2024, Fig. 2); redundant blocks are computed everywhere, never sent
  Merge,      // partial y of every device summed on device 0, beta applied once (MSREP Alg. 3/5/7)
  Halo,       // each device owns its rows of x and y and receives only the x entries it needs
  Auto,       // the CUDA executor times every exchange that applies and keeps the fastest for
              // the ExchangeUse; the host emulation takes the fewest bytes exchanged
};

// What Auto measures: one apply (x given on every device, y wherever the exchange leaves it),
// or an iterative solve where y becomes the next x (Merge then also broadcasts y).
enum class ExchangeUse { Apply, Iterative };

// "allgather", "merge", "halo", "auto".
const char* to_string(Exchange e);
Exchange parse_exchange(const std::string& name);

// Which exchanges a scheme supports. AllGather: row-disjoint schemes (Rows, NZ, 2NZ, LRA,
// LRA+RC). Merge: every scheme except LRA+RC (a redundant block has no single owner to merge).
// Halo: Rows, NZ, 2NZ, LRA (every row owned by exactly one device). Auto: every scheme.
bool exchange_applies(Scheme s, Exchange e);
// The exchanges Auto chooses from for a scheme: AllGather, Merge, Halo where they apply.
std::vector<Exchange> exchange_candidates(Scheme s);

// Halo: x entry j belongs to the device owning row floor(j*m/n), so the rows [r0, r1) of a block
// own the columns [ceil(r0*n/m), ceil(r1*n/m)). A ColumnRange is such a run of columns, with its
// place in the owner-major order of all columns (device 0's columns, then device 1's, ...,
// increasing within a device) and among its owner's columns.
struct ColumnRange {
  Ordinal begin = 0, end = 0;  // columns [begin, end)
  int owner = 0;
  Ordinal order = 0;  // owner-major position of column `begin`
  Ordinal rank = 0;   // position of column `begin` among its owner's columns
};
// The non-empty column ranges of a plan whose blocks have disjoint rows (the Halo schemes),
// sorted by column and covering [0, n); rows in no block belong to device 0. Empty when m or n
// is 0. O(blocks log blocks).
std::vector<ColumnRange> halo_column_ranges(const PartitionPlan& p);
// Owner-major position of each device's first column: ndevices + 1 entries, the last one n.
std::vector<Ordinal> halo_owner_starts(const std::vector<ColumnRange>& ranges, int ndevices);

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
