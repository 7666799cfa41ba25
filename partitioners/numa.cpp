// Two-level NUMA-aware NZ partitioning and hwloc topology detection (MSREP §4.2).
#include "partitioners/numa.hpp"

#include <map>

#include "kspmv/core/error.hpp"

#ifdef KSPMV_HAVE_HWLOC
#include <hwloc.h>
#endif

namespace kspmv::part {

int Topology::ndevices() const {
  int count = 0;
  for (const auto& node : devices_per_numa_node) count += static_cast<int>(node.size());
  return count;
}

namespace {

Topology single_node(std::size_t ndevices) {
  Topology t;
  t.devices_per_numa_node.emplace_back();
  for (std::size_t i = 0; i < ndevices; ++i)
    t.devices_per_numa_node[0].push_back(static_cast<int>(i));
  return t;
}

#ifdef KSPMV_HAVE_HWLOC
// The OS index of the first NUMA node local to a PCI device, or -1 when hwloc does not know it.
int numa_node_of(hwloc_topology_t topo, const std::string& bus_id) {
  hwloc_obj_t dev = hwloc_get_pcidev_by_busidstring(topo, bus_id.c_str());
  if (dev == nullptr) return -1;
  hwloc_obj_t anc = hwloc_get_non_io_ancestor_obj(topo, dev);
  if (anc == nullptr || anc->nodeset == nullptr) return -1;
  return hwloc_bitmap_first(anc->nodeset);
}
#endif

}  // namespace

Topology detect_topology(const std::vector<std::string>& pci_bus_ids) {
#ifdef KSPMV_HAVE_HWLOC
  hwloc_topology_t topo;
  if (hwloc_topology_init(&topo) != 0) return single_node(pci_bus_ids.size());
#if HWLOC_API_VERSION >= 0x00020000
  hwloc_topology_set_io_types_filter(topo, HWLOC_TYPE_FILTER_KEEP_IMPORTANT);
#else
  hwloc_topology_set_flags(topo, HWLOC_TOPOLOGY_FLAG_IO_DEVICES);
#endif
  std::map<int, std::vector<int>> by_node;
  bool placed_all = hwloc_topology_load(topo) == 0;
  for (std::size_t i = 0; placed_all && i < pci_bus_ids.size(); ++i) {
    const int node = numa_node_of(topo, pci_bus_ids[i]);
    placed_all = node >= 0;
    by_node[node].push_back(static_cast<int>(i));
  }
  hwloc_topology_destroy(topo);
  if (placed_all && !by_node.empty()) {
    Topology t;
    for (auto& entry : by_node) t.devices_per_numa_node.push_back(std::move(entry.second));
    return t;
  }
#endif
  return single_node(pci_bus_ids.size());
}

PartitionPlan partition_numa(const Offset* row_ptr, Ordinal m, Ordinal n, const Topology& topo) {
  const int nd = topo.ndevices();
  std::vector<int> seen(nd > 0 ? nd : 0, 0);
  for (const auto& node : topo.devices_per_numa_node)
    for (int d : node) {
      if (d < 0 || d >= nd || seen[d]++ > 0)
        throw InvalidArgument("partition_numa: the topology must list devices 0.." +
                              std::to_string(nd - 1) + " exactly once");
    }
  PartitionOptions opt;
  opt.ndevices = nd;  // validates nd >= 1 and fills the plan's header
  PartitionPlan p = partition(row_ptr, m, n, opt);
  p.blocks.clear();
  // Level 1: node boundaries are the device-granular NZ boundaries at each node's first device.
  const auto level1 = split_nz(row_ptr, 0, m, nd);
  int first = 0;
  for (const auto& node : topo.devices_per_numa_node) {
    const int count = static_cast<int>(node.size());
    if (count == 0) continue;
    const auto b = split_nz(row_ptr, level1[first], level1[first + count], count);  // level 2
    for (int k = 0; k < count; ++k) {
      Block blk;
      blk.row_begin = b[k];
      blk.row_end = b[k + 1];
      blk.nnz_begin = row_ptr[b[k]];
      blk.nnz_end = row_ptr[b[k + 1]];
      blk.col_end = n;
      blk.device = node[k];
      p.blocks.push_back(blk);
    }
    first += count;
  }
  return p;
}

}  // namespace kspmv::part
