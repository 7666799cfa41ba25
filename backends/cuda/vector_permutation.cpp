// Device vectors through a permutation: the indexed-copy kernels of vector_ops.hpp, one launch a
// column, on the caller's stream (no allocation or wait for one column: graph capturable).
#include "backends/cuda/vector_permutation.hpp"

#include "backends/cuda/memory.hpp"
#include "backends/cuda/vector_ops.hpp"

namespace kspmv::cuda {

namespace {

template <class Scalar>
class DevicePermutation final : public VectorPermutation<Scalar> {
 public:
  DevicePermutation(const std::vector<Ordinal>& perm, int device)
      : device_(device), n_(perm.size()) {
    DeviceGuard guard(device_);
    perm_ = DeviceBuffer<Ordinal>(n_);
    perm_.upload(perm.data());
    for (auto& w : work_) w = DeviceBuffer<Scalar>(n_);
  }
  void gather(const Scalar* in, std::size_t ld, Scalar* out, int k, DeviceStream stream) override {
    DeviceGuard guard(device_);
    for (int c = 0; c < k; ++c)
      gather_entries(out + c * n_, in + c * ld, perm_.data(), static_cast<Ordinal>(n_), stream);
  }
  void scatter(const Scalar* in, Scalar* out, std::size_t ld, int k, DeviceStream stream) override {
    DeviceGuard guard(device_);
    for (int c = 0; c < k; ++c)
      scatter_entries(out + c * ld, in + c * n_, perm_.data(), static_cast<Ordinal>(n_), stream);
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
  DeviceBuffer<Ordinal> perm_;
  DeviceBuffer<Scalar> work_[2];
};

}  // namespace

template <class Scalar>
std::unique_ptr<VectorPermutation<Scalar>> make_vector_permutation(const std::vector<Ordinal>& perm,
                                                                   int device) {
  return std::make_unique<DevicePermutation<Scalar>>(perm, device);
}

template std::unique_ptr<VectorPermutation<float>> make_vector_permutation(
    const std::vector<Ordinal>&, int);
template std::unique_ptr<VectorPermutation<double>> make_vector_permutation(
    const std::vector<Ordinal>&, int);

}  // namespace kspmv::cuda
