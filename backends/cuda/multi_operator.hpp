// The CUDA backend's Operator over several devices (Options::devices with more than one entry):
// the Options::partition plan run by cuda::MultiDeviceSpmv, and the online (d_l, d_c) tuner of
// LRA / LRA+RC (Gao et al. 2024 §6.4, Table 3). Kokkos-free.
#pragma once

#include <memory>

#include "kspmv/core/operator_impl.hpp"

namespace kspmv::cuda {

// Builds the executor now (Options::exchange auto: timed once, at construction). The matrix's
// row pointer goes to options.devices[0] once; LRA and LRA+RC read the longest row from the row
// statistics computed there. LRA / LRA+RC with o.d_l < 0, o.d_c < 0 and o.tune_partition: the
// first applies run the candidates of part::tuning_candidates in turn by the tuner's rule
// (core/tuner.hpp), each apply timed by the slowest device's events; after each candidate the
// better of it and the best so far is kept (at most two executors exist at a time), and once all
// ran the best stays. make_vector and make_cg_vectors end the tuning (distributed vectors fix the
// partition). `host` must stay valid until then: `keep_alive` owns it. Device vectors of
// devices[0] (apply_device) are copied out to the devices and y gathered back, on the devices'
// streams, without host synchronization. timings(): per device kernel / exchange / total (every
// apply is timed: the executor's events order its streams), the set-up's parts and what the
// tuners tried.
template <class Scalar>
std::unique_ptr<OperatorImpl<Scalar>> make_multi_operator(const CsrPointers<Scalar>& host,
                                                          std::shared_ptr<const void> keep_alive,
                                                          const Options& options);

}  // namespace kspmv::cuda
