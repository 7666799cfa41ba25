// Device vectors through a permutation: the indexed-copy kernels of vector_ops.hpp, or two of
// them by WindowedGather, one column after another, on the caller's stream (no allocation or
// wait for one column: graph capturable).
#include "backends/cuda/vector_permutation.hpp"

#include "backends/cuda/memory.hpp"
#include "backends/cuda/vector_ops.hpp"
#include "backends/cuda/windowed_gather.hpp"
#include "kspmv/core/error.hpp"

namespace kspmv::cuda {

namespace {

template <class Scalar>
class DevicePermutation final : public VectorPermutation<Scalar> {
 public:
  DevicePermutation(const std::vector<Ordinal>& perm, int device, Ordinal window)
      : device_(device), n_(perm.size()) {
    DeviceGuard guard(device_);
    perm_ = DeviceBuffer<Ordinal>(n_);
    perm_.upload(perm.data());
    for (auto& w : work_) w = DeviceBuffer<Scalar>(n_);
    const auto n = static_cast<Ordinal>(n_);
    if (window <= 0 || window >= n) return;
    try {  // 16 bytes of indices and an entry of work an entry, for perm's 4
      gather_ = WindowedGather(perm_.data(), n, window, false, cudaStreamLegacy);
      scatter_ = WindowedGather(perm_.data(), n, window, true, cudaStreamLegacy);
      windows_ = DeviceBuffer<Scalar>(n_);
      KSPMV_CUDA_CHECK(cudaStreamSynchronize(cudaStreamLegacy));
      perm_ = DeviceBuffer<Ordinal>();    // the windows' indices replace it
    } catch (const DeviceOutOfMemory&) {  // direct gathers, slower, in the memory there is
      KSPMV_CUDA_CHECK(cudaStreamSynchronize(cudaStreamLegacy));
      gather_ = WindowedGather();
      scatter_ = WindowedGather();
      windows_ = DeviceBuffer<Scalar>();
    }
  }
  void gather(const Scalar* in, std::size_t ld, Scalar* out, int k, DeviceStream stream) override {
    DeviceGuard guard(device_);
    const auto n = static_cast<Ordinal>(n_);
    for (int c = 0; c < k; ++c) {
      if (windows_.size())
        gather_.run(in + c * ld, out + c * n_, windows_.data(), stream);
      else
        gather_entries(out + c * n_, in + c * ld, perm_.data(), n, stream);
    }
  }
  void scatter(const Scalar* in, Scalar* out, std::size_t ld, int k, DeviceStream stream) override {
    DeviceGuard guard(device_);
    const auto n = static_cast<Ordinal>(n_);
    for (int c = 0; c < k; ++c) {
      if (windows_.size())
        scatter_.run(in + c * n_, out + c * ld, windows_.data(), stream);
      else
        scatter_entries(out + c * ld, in + c * n_, perm_.data(), n, stream);
    }
  }
  Scalar* work(int which, int k) override {
    DeviceBuffer<Scalar>& w = work_[which];
    if (w.size() < n_ * k) {
      DeviceGuard guard(device_);
      KSPMV_CUDA_CHECK(cudaDeviceSynchronize());  // the old array may still be read
      w = DeviceBuffer<Scalar>(n_ * k);
    }
    return w.data();
  }

 private:
  int device_;
  std::size_t n_;
  DeviceBuffer<Ordinal> perm_;  // for direct gathers (empty where windowed)
  DeviceBuffer<Scalar> work_[2];
  WindowedGather gather_, scatter_;  // where windowed: through perm, and through its inverse
  DeviceBuffer<Scalar> windows_;     // their work array
};

}  // namespace

template <class Scalar>
std::unique_ptr<VectorPermutation<Scalar>> make_vector_permutation(const std::vector<Ordinal>& perm,
                                                                   int device, Ordinal window) {
  return std::make_unique<DevicePermutation<Scalar>>(perm, device, window);
}

template std::unique_ptr<VectorPermutation<float>> make_vector_permutation(
    const std::vector<Ordinal>&, int, Ordinal);
template std::unique_ptr<VectorPermutation<double>> make_vector_permutation(
    const std::vector<Ordinal>&, int, Ordinal);

}  // namespace kspmv::cuda
