#include "partitioners/cost_model.hpp"

#include <algorithm>

#include "kspmv/core/error.hpp"

namespace kspmv::part {

Prediction predict(const ExchangeStrategy& s, const std::vector<double>& block_ms,
                   std::size_t scalar_bytes, double peer_gbps, double device_gbps) {
  const PartitionPlan& plan = s.plan();
  if (block_ms.size() != plan.blocks.size())
    throw InvalidArgument("predict: " + std::to_string(block_ms.size()) + " block times for " +
                          std::to_string(plan.blocks.size()) + " blocks");
  if (!(peer_gbps > 0) || !(device_gbps > 0))
    throw InvalidArgument("predict: bandwidths must be positive");
  const int nd = plan.ndevices;
  const auto peer_ms = [&](Ordinal entries) {
    return kCopyLatencyMs + entries * double(scalar_bytes) / (peer_gbps * 1e6);
  };
  const auto local_ms = [&](Ordinal entries, int passes) {
    return passes * entries * double(scalar_bytes) / (device_gbps * 1e6);
  };
  std::vector<double> link(nd, 0.0), arrived(nd, 0.0), clock(nd, 0.0), kernels(nd, 0.0);
  const auto send = [&](int src, int dst, double ready, Ordinal entries) {
    const double end = std::max(ready, link[src]) + peer_ms(entries);
    link[src] = end;
    arrived[dst] = std::max(arrived[dst], end);
    return end;
  };
  for (int d = 0; d < nd; ++d)
    for (const Span& sp : s.scale_first(d)) clock[d] += local_ms(sp.count, 2);
  for (const Copy& c : s.before_kernels()) send(c.src, c.dst, 0.0, c.count);
  if (s.halo())
    for (int dst = 0; dst < nd; ++dst)
      for (int src = 0; src < nd; ++src)
        if (s.halo_count(dst, src) > 0) send(src, dst, 0.0, s.halo_count(dst, src));
  const std::vector<double> x_arrived = arrived;  // the x entries before the kernels
  std::vector<double> inbox(plan.blocks.size(), 0.0);
  for (int d = 0; d < nd; ++d)
    for (int b : s.kernel_order(d)) {
      if (s.waits_for_x(b)) clock[d] = std::max(clock[d], x_arrived[d]);
      clock[d] += block_ms[b];
      kernels[d] += block_ms[b];
      for (const Copy& c : s.after_block(b)) inbox[b] = send(c.src, c.dst, clock[d], c.count);
    }
  for (const Add& a : s.at_end())
    clock[a.device] = std::max(clock[a.device], inbox[a.block]) + local_ms(a.count, 3);
  Prediction p;
  for (int d = 0; d < nd; ++d) {
    p.ms = std::max({p.ms, clock[d], link[d], arrived[d]});
    p.kernel_ms = std::max(p.kernel_ms, kernels[d]);
  }
  p.ms += fixed_ms(nd);
  p.exchange_ms = p.ms - p.kernel_ms;
  return p;
}

double fixed_ms(int devices) {
  return devices > 1 ? kFixedMs + kFixedPerDeviceMs * devices : 0.0;
}

int choose_device_count(double bytes, int devices, double peak_gbps) {
  if (devices < 1 || !(peak_gbps > 0))
    throw InvalidArgument("choose_device_count: at least one device and a positive bandwidth");
  const double one = bytes / (kSpmvShareOfPeak * peak_gbps * 1e6);
  int best = 1;
  double best_ms = one;
  for (int k = 2; k <= devices; ++k) {
    const double ms = one / k + fixed_ms(k);
    if (one >= 0.5 * k * ms && ms < kChooseGain * best_ms) best = k, best_ms = ms;
  }
  return best;
}

}  // namespace kspmv::part
