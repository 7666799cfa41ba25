// CUDA graphs over the streams of several devices: the work of one multi-device apply (or of one
// CG iteration) captured once and replayed with a single launch, so that the host is off the
// per-apply path (docs/DESIGN.md "Execution"). A graph may hold work on several devices when it
// is launched from the host; its launch stream's device starts it.
#pragma once

#include <cuda_runtime_api.h>

#include <functional>
#include <memory>
#include <vector>

#include "backends/cuda/memory.hpp"

namespace kspmv::cuda {

// Whether `stream` is being captured into a graph (by this thread or another).
bool capturing(cudaStream_t stream);

// Records `event` on `stream`; while the stream is captured, as a node of the graph that replays
// record (cudaEventRecordExternal: a timing event measures each replay), not as a dependency.
void record_in_graph(const Event& event, cudaStream_t stream);

// Streams of several devices that one graph spans: streams[k] is a stream of CUDA device
// devices[k]; streams[0] launches the graph.
struct StreamSet {
  std::vector<int> devices;
  std::vector<cudaStream_t> streams;
};

class MultiGraph {
 public:
  MultiGraph() = default;
  // Captures what body() enqueues on the set's streams as one graph (streams[0] captured, the
  // others forked from it by events and joined back at the end; body may fork further streams
  // from them if it joins them back), then instantiates it and uploads it to the devices.
  // Throws CudaError (or what body throws) when the capture fails; the streams are then out of
  // capture, with nothing enqueued on them.
  MultiGraph(StreamSet set, const std::function<void()>& body);
  ~MultiGraph();
  MultiGraph(MultiGraph&&) noexcept;
  MultiGraph& operator=(MultiGraph&&) noexcept;
  MultiGraph(const MultiGraph&) = delete;
  MultiGraph& operator=(const MultiGraph&) = delete;

  // One replay, enqueued on streams[0] after the work queued so far on every stream of the set
  // (join_in; else after streams[0]'s alone: the caller knows the others have queued nothing
  // since the last replay), and the work queued on them later follows it (join_out; else the
  // caller calls join_out() before it queues work on the other streams). `before` and `after`
  // (events of devices[0]), when given, are recorded on streams[0] around the launch itself.
  // Throws CudaError, with nothing launched, where CUDA refuses the launch.
  void launch(const Event* before = nullptr, const Event* after = nullptr, bool join_in = true,
              bool join_out = true) const;
  // The other streams' later work after the last replay.
  void join_out() const;

 private:
  StreamSet set_;
  cudaGraphExec_t exec_ = nullptr;
  // Per stream: an event of its device after its earlier work (streams[0]: the replay's end).
  std::vector<std::unique_ptr<Event>> marks_;
};

}  // namespace kspmv::cuda
