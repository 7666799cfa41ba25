// CG's vectors on the host: plain loops, dot products accumulated in double; z = d * r where r
// is read (d: Jacobi's inverse diagonal, or none).
#include "kspmv/core/cg_vectors.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <vector>

#include "kspmv/core/timer.hpp"

namespace kspmv {

namespace {

template <class S>
class HostCgVectors final : public CgVectors<S> {
 public:
  HostCgVectors(Ordinal n, const void* layout)
      : n_(n),
        x_(make_host_vector<S>(n, layout)),
        r_(make_host_vector<S>(n, layout)),
        p_(make_host_vector<S>(n, layout)),
        q_(make_host_vector<S>(n, layout)) {}

  const DistributedVector<S>& x() const override { return x_; }
  const DistributedVector<S>& r() const override { return r_; }
  const DistributedVector<S>& p() const override { return p_; }
  const DistributedVector<S>& q() const override { return q_; }

  void load(const S* b, const S* x0, const S* inverse_diagonal) override {
    std::copy(b, b + n_, r_.data(0));
    std::copy(x0, x0 + n_, x_.data(0));
    d_.assign(inverse_diagonal, inverse_diagonal ? inverse_diagonal + n_ : inverse_diagonal);
  }

  void start(double bnorm, double tolerance) override {
    t0_ = Clock::now();
    limit_ = tolerance * bnorm;
    s_ = CgState{};
    const S* r = r_.data(0);
    S* p = p_.data(0);
    double rr = 0, rz = 0;
    for (Ordinal i = 0; i < n_; ++i) {
      p[i] = z(r, i);
      rr += double(r[i]) * double(r[i]);
      rz += double(r[i]) * double(p[i]);
    }
    s_.rr = rr, rz_ = rz;
    stop_if_converged();
  }

  void dot_pq() override {
    if (s_.stopped) return;
    pq_ = dot(p_.data(0), q_.data(0));
    if (!(pq_ > 0)) s_.stopped = true, s_.stop = CgStop::NotPositive, s_.curvature = pq_;
  }

  void update_r() override {
    if (s_.stopped) return;
    const S alpha = static_cast<S>(rz_ / pq_);
    S* r = r_.data(0);
    const S* q = q_.data(0);
    double rr = 0, rz = 0;
    for (Ordinal i = 0; i < n_; ++i) {
      r[i] -= alpha * q[i];
      rr += double(r[i]) * double(r[i]);
      rz += double(r[i]) * double(z(r, i));
    }
    rr_next_ = rr, rz_next_ = rz;
  }

  void update_xp() override {
    if (s_.stopped) return;
    const S alpha = static_cast<S>(rz_ / pq_), beta = static_cast<S>(rz_next_ / rz_);
    S *x = x_.data(0), *p = p_.data(0);
    const S* r = r_.data(0);
    for (Ordinal i = 0; i < n_; ++i) {
      x[i] += alpha * p[i];
      p[i] = z(r, i) + beta * p[i];
    }
    s_.rr = rr_next_, rz_ = rz_next_;
    ++s_.iterations;
    stop_if_converged();
  }

  int snapshot() override {
    s_.ms = ms_since(t0_);
    snaps_[count_ % kCgSnapshots] = s_;
    return count_++;
  }
  CgState state(int k) override { return snaps_[k % kCgSnapshots]; }

  void store(S* x) override { std::copy(x_.data(0), x_.data(0) + n_, x); }

 private:
  double dot(const S* u, const S* v) const {
    double s = 0;
    for (Ordinal i = 0; i < n_; ++i) s += double(u[i]) * double(v[i]);
    return s;
  }
  // Entry i of z = M^-1 r.
  S z(const S* r, Ordinal i) const { return d_.empty() ? r[i] : d_[i] * r[i]; }
  void stop_if_converged() {
    if (std::sqrt(s_.rr) <= limit_) s_.stopped = true, s_.stop = CgStop::Converged;
  }

  Ordinal n_;
  DistributedVector<S> x_, r_, p_, q_;
  std::vector<S> d_;  // M^-1's diagonal; empty: none
  Clock::time_point t0_;
  double limit_ = 0, pq_ = 0, rz_ = 0, rr_next_ = 0, rz_next_ = 0;
  CgState s_;
  std::array<CgState, kCgSnapshots> snaps_;
  int count_ = 0;
};

}  // namespace

template <class S>
DistributedVector<S> make_host_vector(std::size_t n, const void* layout) {
  auto storage = std::make_shared<std::vector<S>>(n);
  return DistributedVector<S>({{-1, storage->data(), n}}, storage, layout);
}

template <class S>
std::unique_ptr<CgVectors<S>> make_host_cg_vectors(Ordinal n, const void* layout) {
  return std::make_unique<HostCgVectors<S>>(n, layout);
}

template std::unique_ptr<CgVectors<float>> make_host_cg_vectors(Ordinal, const void*);
template std::unique_ptr<CgVectors<double>> make_host_cg_vectors(Ordinal, const void*);
template DistributedVector<float> make_host_vector(std::size_t, const void*);
template DistributedVector<double> make_host_vector(std::size_t, const void*);

}  // namespace kspmv
