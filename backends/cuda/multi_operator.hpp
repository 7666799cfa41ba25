// The CUDA backend's Operator over several devices (Options::devices with more than one entry):
// the Options::partition plan run by cuda::MultiDeviceSpmv, host vectors in and out, and the
// online (d_l, d_c) tuner of LRA / LRA+RC (Gao et al. 2024 §6.4, Table 3). Kokkos-free.
#pragma once

#include <memory>

#include "kspmv/core/operator_impl.hpp"

namespace kspmv::cuda {

// Builds the executor now (Options::exchange auto: timed for a single apply, resolved once).
// LRA / LRA+RC with o.d_l < 0, o.d_c < 0 and o.tune_partition: the first applies run the
// candidates of part::tuning_candidates in turn, kPartitionTuneTrials applies each (the last one
// timed by the slowest device's events); afterwards the fastest is kept and the others are freed
// (at most two executors exist at a time). `host` must stay valid until then: `keep_alive` owns
// it and is released when tuning ends. apply_device copies device vectors through host memory.
// timings(): per device kernel / exchange / total, total_ms the whole host-vector apply.
template <class Scalar>
std::unique_ptr<OperatorImpl<Scalar>> make_multi_operator(const CsrPointers<Scalar>& host,
                                                          std::shared_ptr<const void> keep_alive,
                                                          const Options& options);

}  // namespace kspmv::cuda
