// Host CG: vector operations are plain loops (accumulated in double), SpMV through the Operator.
#include "kspmv/solvers/cg.hpp"

#include <chrono>
#include <cmath>
#include <vector>

#include "kspmv/core/error.hpp"

namespace kspmv {

namespace {

template <class S>
double dot(const std::vector<S>& u, const std::vector<S>& v) {
  double s = 0;
  for (std::size_t i = 0; i < u.size(); ++i) s += double(u[i]) * double(v[i]);
  return s;
}

}  // namespace

template <class S>
CgResult cg(Operator<S>& a, const S* b, S* x, const CgOptions& o) {
  if (a.nrows() != a.ncols()) throw InvalidArgument("cg: the matrix must be square");
  if (!(o.tolerance >= 0) || o.max_iterations < 0)
    throw InvalidArgument("cg: tolerance must be >= 0 and max_iterations >= 0");
  const std::size_t n = a.nrows();
  const auto t0 = std::chrono::steady_clock::now();
  std::vector<S> r(b, b + n), p(n), q(n);
  const double bnorm = std::sqrt(dot(r, r));
  CgResult res;
  if (bnorm == 0) {
    for (std::size_t i = 0; i < n; ++i) x[i] = S(0);
    res.converged = true;
    res.stop = CgStop::Converged;
    return res;
  }
  a.apply(S(-1), x, S(1), r.data());  // r = b - A x
  p = r;
  double rr = dot(r, r);
  while (std::sqrt(rr) / bnorm > o.tolerance && res.iterations < o.max_iterations) {
    a.apply(S(1), p.data(), S(0), q.data());  // q = A p
    const double pq = dot(p, q);
    if (!(pq > 0)) {  // A is not positive definite along p (or breakdown)
      res.stop = CgStop::NotPositive, res.curvature = pq;
      break;
    }
    const S alpha = static_cast<S>(rr / pq);
    for (std::size_t i = 0; i < n; ++i) {
      x[i] += alpha * p[i];
      r[i] -= alpha * q[i];
    }
    const double rr_next = dot(r, r);
    const S beta = static_cast<S>(rr_next / rr);
    rr = rr_next;
    for (std::size_t i = 0; i < n; ++i) p[i] = r[i] + beta * p[i];
    ++res.iterations;
  }
  const double ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  res.ms_per_iteration = res.iterations ? ms / res.iterations : 0;
  r.assign(b, b + n);
  a.apply(S(-1), x, S(1), r.data());
  res.relative_residual = std::sqrt(dot(r, r)) / bnorm;
  res.converged = std::sqrt(rr) / bnorm <= o.tolerance;
  if (res.converged) res.stop = CgStop::Converged;
  return res;
}

template CgResult cg(Operator<float>&, const float*, float*, const CgOptions&);
template CgResult cg(Operator<double>&, const double*, double*, const CgOptions&);

}  // namespace kspmv
