// OperatorImpl<To> over an OperatorImpl<From> of another type with the same layout: how the
// facade's Kokkos::complex<R> reaches the Kokkos-free CUDA backend's cuda::Complex<R>
// (backends/cuda/complex.hpp). Arrays pass as they are (From may be aligned less strictly than
// To, never more), scalars by their bytes.
#pragma once

#include <cstring>
#include <memory>
#include <utility>
#include <vector>

#include "kspmv/core/operator_impl.hpp"

namespace kspmv {

template <class To, class From>
class OperatorCast final : public OperatorImpl<To> {
  static_assert(sizeof(To) == sizeof(From) && alignof(From) <= alignof(To),
                "OperatorCast: the two scalar types must share their layout");

 public:
  explicit OperatorCast(std::unique_ptr<OperatorImpl<From>> impl) : impl_(std::move(impl)) {}

  void apply_host(To alpha, const To* x, To beta, To* y) override {
    impl_->apply_host(cast(alpha), cast(x), cast(beta), cast(y));
  }
  void apply_device(To alpha, const To* x, To beta, To* y, DeviceStream stream) override {
    impl_->apply_device(cast(alpha), cast(x), cast(beta), cast(y), stream);
  }
  void apply_host_block(To alpha, const To* x, std::size_t ldx, To beta, To* y, std::size_t ldy,
                        int k) override {
    impl_->apply_host_block(cast(alpha), cast(x), ldx, cast(beta), cast(y), ldy, k);
  }
  void apply_device_block(To alpha, const To* x, std::size_t ldx, To beta, To* y, std::size_t ldy,
                          int k, DeviceStream stream) override {
    impl_->apply_device_block(cast(alpha), cast(x), ldx, cast(beta), cast(y), ldy, k, stream);
  }
  void update_values(const To* values, bool device) override {
    impl_->update_values(cast(values), device);
  }
  void update_values_on(const To* values, bool device, DeviceStream stream) override {
    impl_->update_values_on(cast(values), device, stream);
  }
  void synchronize() override { impl_->synchronize(); }
  std::vector<PartInfo> parts(int runs) override { return impl_->parts(runs); }
  Prediction predict(const std::vector<double>& part_ms, double peer_gbps,
                     double device_gbps) const override {
    return impl_->predict(part_ms, peer_gbps, device_gbps);
  }
  std::unique_ptr<OperatorImpl<To>> make_transpose() const override {
    auto t = impl_->make_transpose();
    return t ? std::make_unique<OperatorCast>(std::move(t)) : nullptr;
  }
  bool transposes_itself() const override { return impl_->transposes_itself(); }
  Kernel kernel() const override { return impl_->kernel(); }
  Residency residency() const override { return impl_->residency(); }
  Timings timings() const override { return impl_->timings(); }

 private:
  static From cast(const To& v) {
    From f;
    std::memcpy(static_cast<void*>(&f), &v, sizeof f);
    return f;
  }
  static const From* cast(const To* p) { return reinterpret_cast<const From*>(p); }
  static From* cast(To* p) { return reinterpret_cast<From*>(p); }

  std::unique_ptr<OperatorImpl<From>> impl_;
};

}  // namespace kspmv
