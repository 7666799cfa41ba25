// NUMA-aware two-level placement (MSREP §4.2): non-zeros are split across NUMA nodes in
// proportion to their device counts, then across each node's devices.
#pragma once

#include <string>
#include <vector>

#include "partitioners/partition_plan.hpp"

namespace kspmv::part {

// Device indices (0 .. ndevices-1, each exactly once) grouped by the NUMA node they attach to.
struct Topology {
  std::vector<std::vector<int>> devices_per_numa_node;
  int ndevices() const;
};

// The NUMA node of each PCI device ("dddd:bb:dd.f", as cudaDeviceGetPCIBusId writes it; device i
// is pci_bus_ids[i]), nodes in increasing OS index. Built without hwloc, or when hwloc cannot
// place every device, one node holding all devices.
Topology detect_topology(const std::vector<std::string>& pci_bus_ids);

// An NZ plan built in two levels: level 1 gives node k the row range nearest to
// nnz * (devices before k) / ndevices .. nnz * (devices up to k) / ndevices; level 2 NZ-splits that
// range over the node's devices in the order listed. Throws InvalidArgument unless the topology
// lists each of 0 .. ndevices-1 exactly once.
PartitionPlan partition_numa(const Offset* row_ptr, Ordinal m, Ordinal n, const Topology& topo);

}  // namespace kspmv::part
