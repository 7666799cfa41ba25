// Host vectors through a permutation, on the host threads.
#include "backends/kokkos/vector_permutation.hpp"

#include <Kokkos_Complex.hpp>

#include "kspmv/core/parallel.hpp"

namespace kspmv::host {

namespace {

constexpr std::int64_t kGrain = 1 << 15;  // entries a block of the host threads

template <class Scalar>
class HostPermutation final : public VectorPermutation<Scalar> {
 public:
  explicit HostPermutation(std::vector<Ordinal> perm) : perm_(std::move(perm)) {}
  void gather(const Scalar* in, std::size_t ld, Scalar* out, int k, DeviceStream) override {
    const std::size_t n = perm_.size();
    for (int c = 0; c < k; ++c)
      parallel_blocks(std::int64_t(n), kGrain, [&](std::int64_t b, std::int64_t e) {
        for (std::int64_t i = b; i < e; ++i) out[i + c * n] = in[perm_[i] + c * ld];
      });
  }
  void scatter(const Scalar* in, Scalar* out, std::size_t ld, int k, DeviceStream) override {
    const std::size_t n = perm_.size();
    for (int c = 0; c < k; ++c)
      parallel_blocks(std::int64_t(n), kGrain, [&](std::int64_t b, std::int64_t e) {
        for (std::int64_t i = b; i < e; ++i) out[perm_[i] + c * ld] = in[i + c * n];
      });
  }
  Scalar* work(int which, int k) override {
    std::vector<Scalar>& w = work_[which];
    if (w.size() < perm_.size() * k) w.resize(perm_.size() * k);
    return w.data();
  }

 private:
  std::vector<Ordinal> perm_;
  std::vector<Scalar> work_[2];
};

}  // namespace

template <class Scalar>
std::unique_ptr<VectorPermutation<Scalar>> make_vector_permutation(std::vector<Ordinal> perm) {
  return std::make_unique<HostPermutation<Scalar>>(std::move(perm));
}

template std::unique_ptr<VectorPermutation<float>> make_vector_permutation(std::vector<Ordinal>);
template std::unique_ptr<VectorPermutation<double>> make_vector_permutation(std::vector<Ordinal>);
template std::unique_ptr<VectorPermutation<Kokkos::complex<float>>> make_vector_permutation(
    std::vector<Ordinal>);
template std::unique_ptr<VectorPermutation<Kokkos::complex<double>>> make_vector_permutation(
    std::vector<Ordinal>);

}  // namespace kspmv::host
