// Device-initiated ordering between devices (issue 31's put-with-signal, Gao et al. 2024 §3.2's
// transfer hiding without the host): each device counts its applies in its own memory (its
// epoch) and raises flags in its peers' memory through peer pointers; a peer's one-thread kernel
// waits until the flags it needs reach its own epoch. The host enqueues each device's work with
// no event between devices, so each device's apply can be one graph launch of its own.
#pragma once

#include <cuda_runtime_api.h>

namespace kspmv::cuda {

using Flag = unsigned long long;

// At most this many flags one kernel raises or waits for.
constexpr int kMaxFlags = 16;

struct FlagSet {
  Flag* at[kMaxFlags] = {};
  int count = 0;
};

// A wait that lasts this long stops its kernel with a trap (a device error that the next CUDA
// call reports) rather than hang: the devices' epochs no longer match.
constexpr double kFlagTimeoutSeconds = 60;

// Enqueues one single-thread kernel on `stream`: when `next`, *epoch += 1; every flag of `raise`
// (memory of this device or of a peer it may access) set to *epoch once the stream's earlier
// writes are visible to the peers (a system-scope release); then a wait until every flag of
// `wait` is at least *epoch (a system-scope acquire: the work after it sees what the raisers
// wrote before they raised them). Nothing is enqueued when there is nothing to do.
void signal_and_wait(Flag* epoch, bool next, const FlagSet& raise, const FlagSet& wait,
                     cudaStream_t stream);

}  // namespace kspmv::cuda
