// One rank's vectors in host memory: plain loops, run at once, sums in double.
#include "kspmv/core/rank_vectors.hpp"

#include <algorithm>
#include <cmath>

namespace kspmv {

namespace {

template <class S>
class HostRankVectors final : public RankVectors<S> {
 public:
  int device() const override { return -1; }
  DeviceStream stream() const override { return nullptr; }

  DistributedVector<S> allocate(std::size_t n) const override {
    return make_host_vector<S>(n, this);
  }
  DistributedVector<Ordinal> indices(const std::vector<Ordinal>& idx) const override {
    auto storage = std::make_shared<std::vector<Ordinal>>(idx);
    return DistributedVector<Ordinal>({{-1, storage->data(), idx.size()}}, storage, this);
  }
  DistributedVector<S> host_buffer(std::size_t n) const override { return allocate(n); }

  void fill(S* x, std::size_t n, S value) override { std::fill(x, x + n, value); }
  void combine(S a, const S* x, S b, const S* y, S* out, std::size_t n) override {
    for (std::size_t i = 0; i < n; ++i)
      out[i] = (a == S(0) ? S(0) : a * x[i]) + (b == S(0) ? S(0) : b * y[i]);
  }
  void reduce(Reduction kind, const S* const* x, const S* const* y, int count, std::size_t n,
              double* out) override {
    for (int k = 0; k < count; ++k) {
      double s = 0;
      for (std::size_t i = 0; i < n; ++i) {
        const double v =
            kind == Reduction::Dot ? double(x[k][i]) * double(y[k][i]) : std::abs(double(x[k][i]));
        s = kind == Reduction::AbsMax ? std::max(s, v) : s + v;
      }
      out[k] = s;
    }
  }

  double update_r(S alpha, const S* q, S* r, std::size_t n) override {
    double rr = 0;
    for (std::size_t i = 0; i < n; ++i) {
      r[i] -= alpha * q[i];
      rr += double(r[i]) * double(r[i]);
    }
    return rr;
  }
  void update_xp(S alpha, S beta, const S* r, S* p, S* x, std::size_t n) override {
    for (std::size_t i = 0; i < n; ++i) {
      x[i] += alpha * p[i];
      p[i] = r[i] + beta * p[i];
    }
  }

  void pack(const S* x, const Ordinal* idx, std::size_t count, S* out) override {
    for (std::size_t i = 0; i < count; ++i) out[i] = x[idx[i]];
  }
  void wait_packed() override {}
  void unpack(const S* in, std::size_t count, S* x) override { std::copy(in, in + count, x); }

  void upload(const S* host, std::size_t n, S* x) override { std::copy(host, host + n, x); }
  void download(const S* x, std::size_t n, S* host) override { std::copy(x, x + n, host); }
  void synchronize() override {}
};

}  // namespace

template <class S>
std::unique_ptr<RankVectors<S>> make_host_rank_vectors() {
  return std::make_unique<HostRankVectors<S>>();
}

template std::unique_ptr<RankVectors<float>> make_host_rank_vectors();
template std::unique_ptr<RankVectors<double>> make_host_rank_vectors();

}  // namespace kspmv
