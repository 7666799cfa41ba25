// A model of one multi-device apply on distinct devices, to set beside the measured time: what
// the partition and the exchange would give on N GPUs from the time each block's kernel takes
// alone on one GPU, the bytes each copy moves and a peer bandwidth (Gao et al. 2024 §4 reasons
// the same way about NZ, 2NZ and LRA). Kokkos-free host code.
//
// Each device runs its blocks in stream-slot order, back to back. Each copy of the exchange
// (part::ExchangeStrategy) starts when its data is ready and its source's outgoing link is free,
// and takes kCopyLatencyMs + bytes / peer bandwidth; copies from one device go one after
// another. A device's kernels that read x entries it receives start once they have arrived
// (Halo, allgather-x), after those that read none (ExchangeStrategy::kernel_order); Merge's scaling
// and sums on device 0 move 2 and 3 entries per row at the device copy bandwidth, the sums once
// their partial has arrived. The apply ends when the last device has finished its kernels, its
// sends and its receives.
#pragma once

#include <cstddef>
#include <vector>

#include "kspmv/core/operator_impl.hpp"
#include "partitioners/exchange.hpp"

namespace kspmv::part {

// The start-up cost of one copy between devices (cudaMemcpyPeerAsync on NVLink: a few µs).
inline constexpr double kCopyLatencyMs = 0.008;

// The fixed cost of one multi-device apply beyond its kernels and copies (the replayed graph's
// launch, its fork and join across the devices, the events that join it with the streams'
// other work): kFixedMs + kFixedPerDeviceMs per device; with them the prediction for laplace2d
// 4096^2 is within 1% of the measured best on two and on four H200s, and within 8% on five of
// the seven families on four (kron -14%, FullChip-like -24%; perf_tests/README.md, 2026-11-28).
// 0 on one device.
inline constexpr double kFixedMs = 0.004;
inline constexpr double kFixedPerDeviceMs = 0.003;
double fixed_ms(int devices);

// The share of the device's peak memory bandwidth a regular SpMV streams at (an H100's kernels
// reach 0.8-0.9 of it on stencils): choose_device_count's one-device time.
inline constexpr double kSpmvShareOfPeak = 0.85;

// block_ms[b]: the kernel time of plan block b alone (plan order). peer_gbps: GB/s of one
// device's outgoing link; device_gbps: a device's copy bandwidth (bytes read plus written per
// second, GB/s). Throws InvalidArgument unless there is one time per block and both bandwidths
// are positive.
Prediction predict(const ExchangeStrategy& s, const std::vector<double>& block_ms,
                   std::size_t scalar_bytes, double peer_gbps, double device_gbps);

// How many of `devices` devices pay for themselves on an apply that moves `bytes` through one
// device's memory (the effective bytes of the matrix and vectors), on devices of `peak_gbps`
// peak bandwidth: with t(k) = t(1) / k + fixed_ms(k) and t(1) = bytes at kSpmvShareOfPeak of the
// peak, the k of least t(k) among those of efficiency t(1) / (k t(k)) >= 1/2 (1 when none), each
// larger k taken only where t(k) < kChooseGain times the best so far. The exchange is left out:
// where it weighs, the matrix is large enough to want every device.
// InvalidArgument unless devices >= 1 and peak_gbps > 0.
int choose_device_count(double bytes, int devices, double peak_gbps);
// More devices must make the predicted apply this much faster: the model's error (up to 24% on
// four H200s), and a CG iteration's costs per device that it leaves out (laplace2d 1024^2 on two
// H200s, predicted 1.5% faster than on one, ran CG 1% slower).
inline constexpr double kChooseGain = 0.9;

}  // namespace kspmv::part
