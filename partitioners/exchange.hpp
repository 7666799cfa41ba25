// How the devices' results are combined in multi-device SpMV (DESIGN.md "Execution"). Kokkos-free:
// shared by the host emulation (backends/host/multi_device.hpp) and the CUDA executor.
#pragma once

#include <string>

#include "partitioners/partition_plan.hpp"

namespace kspmv::part {

enum class Exchange {
  AllGather,  // x replicated; each device sends its owned y rows to every other device
              // (Gao et al. 2024, Fig. 2); redundant blocks are computed everywhere, never sent
  Merge,      // partial y of every device summed on device 0, beta applied once (MSREP Alg. 3/5/7)
  Halo,       // each device owns its rows of x and y and receives only the x entries it needs
};

// "allgather", "merge", "halo".
const char* to_string(Exchange e);
Exchange parse_exchange(const std::string& name);

// Which exchanges a scheme supports. AllGather: row-disjoint schemes (Rows, NZ, 2NZ, LRA,
// LRA+RC). Merge: every scheme except LRA+RC (a redundant block has no single owner to merge).
// Halo: Rows, NZ, 2NZ, LRA (every row owned by exactly one device).
bool exchange_applies(Scheme s, Exchange e);

}  // namespace kspmv::part
