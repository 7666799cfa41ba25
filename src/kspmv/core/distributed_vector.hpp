// A vector laid out for one Operator's devices (Operator::make_vector): one part per device, in
// that device's memory (host memory for the host backend). Every layout is global: a part holds
// max(nrows, ncols) entries and entry i of the vector sits at position i of a part. Which entries
// of which part are valid depends on the operator's exchange (Operator::apply says). A handle:
// copies share the storage, which lives while a copy does. Kokkos-free.
#pragma once

#include <cstddef>
#include <memory>
#include <utility>
#include <vector>

namespace kspmv {

template <class Scalar>
class DistributedVector {
 public:
  struct Part {
    int device = -1;  // CUDA device id; -1: host memory
    Scalar* data = nullptr;
    std::size_t size = 0;
  };

  DistributedVector() = default;
  // `storage` owns the parts' memory; `layout` identifies the operator whose layout it is.
  DistributedVector(std::vector<Part> parts, std::shared_ptr<void> storage, const void* layout)
      : parts_(std::move(parts)), storage_(std::move(storage)), layout_(layout) {}

  int parts() const { return static_cast<int>(parts_.size()); }
  const Part& part(int d) const { return parts_.at(static_cast<std::size_t>(d)); }
  Scalar* data(int d) const { return part(d).data; }
  const void* layout() const { return layout_; }
  // What owns the parts' memory: a cache keyed by the parts' addresses (the multi-device
  // executor's replays) tells a vector from a later one at the same addresses by it.
  const std::shared_ptr<void>& storage() const { return storage_; }

 private:
  std::vector<Part> parts_;
  std::shared_ptr<void> storage_;
  const void* layout_ = nullptr;
};

}  // namespace kspmv
