#include "backends/cuda/graph.hpp"

#include <utility>

namespace kspmv::cuda {

namespace {

void wait(cudaStream_t s, const Event& e) {
  KSPMV_CUDA_CHECK(cudaStreamWaitEvent(s, e.get(), 0));
}

}  // namespace

bool capturing(cudaStream_t stream) {
  cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
  KSPMV_CUDA_CHECK(cudaStreamIsCapturing(stream, &status));
  return status != cudaStreamCaptureStatusNone;
}

void record_in_graph(const Event& event, cudaStream_t stream) {
  KSPMV_CUDA_CHECK(cudaEventRecordWithFlags(event.get(), stream, cudaEventRecordExternal));
}

MultiGraph::MultiGraph(StreamSet set, const std::function<void()>& body) : set_(std::move(set)) {
  const std::size_t n = set_.streams.size();
  if (n == 0 || set_.devices.size() != n)
    throw InvalidArgument("MultiGraph: one device for each stream, and at least one stream");
  std::vector<std::unique_ptr<Event>> forks;  // the capture's fork (0) and joins (k > 0)
  for (std::size_t k = 0; k < n; ++k) {
    DeviceGuard guard(set_.devices[k]);
    marks_.push_back(std::make_unique<Event>(false, kReuse));
    forks.push_back(std::make_unique<Event>(false, kReuse));
  }
  const cudaStream_t origin = set_.streams[0];
  cudaGraph_t graph = nullptr;
  DeviceGuard guard(set_.devices[0]);
  KSPMV_CUDA_CHECK(cudaStreamBeginCapture(origin, cudaStreamCaptureModeThreadLocal));
  try {
    forks[0]->record(origin);
    for (std::size_t k = 1; k < n; ++k) {
      DeviceGuard on(set_.devices[k]);
      wait(set_.streams[k], *forks[0]);
    }
    body();
    for (std::size_t k = 1; k < n; ++k) {
      {
        DeviceGuard on(set_.devices[k]);
        forks[k]->record(set_.streams[k]);
      }
      wait(origin, *forks[k]);
    }
    KSPMV_CUDA_CHECK(cudaStreamEndCapture(origin, &graph));
  } catch (...) {
    cudaGraph_t broken = nullptr;  // ending the origin's capture ends the forked streams' too
    if (cudaStreamEndCapture(origin, &broken) == cudaSuccess && broken) cudaGraphDestroy(broken);
    cudaGetLastError();
    throw;
  }
  const cudaError_t made = cudaGraphInstantiate(&exec_, graph, 0);
  cudaGraphDestroy(graph);
  KSPMV_CUDA_CHECK(made);
  KSPMV_CUDA_CHECK(cudaGraphUpload(exec_, origin));
}

MultiGraph::~MultiGraph() {
  if (exec_) cudaGraphExecDestroy(exec_);  // a replay in flight completes first
  for (std::size_t k = 0; k < marks_.size(); ++k)
    on_device_noexcept(set_.devices[k], [&] { marks_[k].reset(); });
}

MultiGraph::MultiGraph(MultiGraph&& o) noexcept
    : set_(std::move(o.set_)),
      exec_(std::exchange(o.exec_, nullptr)),
      marks_(std::move(o.marks_)) {}

MultiGraph& MultiGraph::operator=(MultiGraph&& o) noexcept {
  std::swap(set_, o.set_);
  std::swap(exec_, o.exec_);
  std::swap(marks_, o.marks_);
  return *this;
}

void MultiGraph::launch(const Event* before, const Event* after, bool join_in,
                        bool join_out) const {
  const std::size_t n = set_.streams.size();
  const cudaStream_t origin = set_.streams[0];
  if (join_in)
    for (std::size_t k = 1; k < n; ++k) {
      DeviceGuard on(set_.devices[k]);
      marks_[k]->record(set_.streams[k]);
    }
  {
    DeviceGuard guard(set_.devices[0]);
    if (join_in)
      for (std::size_t k = 1; k < n; ++k) wait(origin, *marks_[k]);
    if (before) before->record(origin);
    const cudaError_t launched = cudaGraphLaunch(exec_, origin);
    if (launched != cudaSuccess) cudaGetLastError();  // not sticky: the streams stay usable
    KSPMV_CUDA_CHECK(launched);
    if (after) after->record(origin);
    marks_[0]->record(origin);
  }
  if (join_out) this->join_out();
}

void MultiGraph::join_out() const {
  for (std::size_t k = 1; k < set_.streams.size(); ++k) {
    DeviceGuard on(set_.devices[k]);
    wait(set_.streams[k], *marks_[0]);
  }
}

}  // namespace kspmv::cuda
