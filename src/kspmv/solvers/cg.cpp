// CG (Gao et al. 2024, Alg. 1; with Jacobi, PCG: Saad 2003, Alg. 9.1) on the Operator: the SpMV is
// Operator::apply on the vectors of Operator::cg_vectors, the vector updates and dot products its
// fused operations, enqueued one iteration after another. The host learns of the stop from
// snapshots kLag iterations old, so the devices never wait for it; the operations after the stop
// change nothing.
#include "kspmv/solvers/cg.hpp"

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "kspmv/core/error.hpp"
#include "kspmv/core/parallel.hpp"

namespace kspmv {

namespace {

// Iterations the host lets the devices run ahead of the last state it read (< kCgSnapshots).
constexpr int kLag = 2;

// Restores the operator's vector order (Operator::use_permuted_order) when it goes.
template <class S>
class PermutedOrder {
 public:
  explicit PermutedOrder(Operator<S>& a) : a_(a), was_(a.permuted_order()) {
    a.use_permuted_order(true);
  }
  ~PermutedOrder() { a_.use_permuted_order(was_); }

 private:
  Operator<S>& a_;
  bool was_;
};

// The solve in the operator's own order: the caller's, or the permuted one of a reordered
// operator (whose vectors, CG's included, hold that order); inverse_diagonal (Jacobi's, in that
// order) or null.
template <class S>
CgResult cg_in_order(Operator<S>& a, const S* b, S* x, const CgOptions& o,
                     const S* inverse_diagonal, const CgMonitor& monitor) {
  const std::size_t n = a.nrows();
  double bb = 0;
  for (std::size_t i = 0; i < n; ++i) bb += double(b[i]) * double(b[i]);
  const double bnorm = std::sqrt(bb);
  CgResult res;
  if (bnorm == 0) {
    for (std::size_t i = 0; i < n; ++i) x[i] = S(0);
    res.converged = true;
    res.stop = CgStop::Converged;
    return res;
  }
  // The host's vector operations are Kokkos launches too (kspmv::host_kokkos_lock).
  const auto host = host_kokkos_lock(a.options().backend != Backend::Cuda);
  const auto v = a.cg_vectors();
  v->load(b, x, inverse_diagonal);
  a.apply(S(-1), v->x(), S(1), v->r());  // r = b - A x
  v->start(bnorm, o.tolerance);
  int seen = -1;  // the last iteration the monitor saw
  const auto read = [&](int k) {
    const CgState s = v->state(k);
    if (monitor && s.iterations > seen) monitor(seen = s.iterations, std::sqrt(s.rr) / bnorm);
    return s;
  };
  CgState st = read(v->snapshot());
  int issued = 0, last = 0, next = 1;  // snapshots taken, and the next one to read
  while (!st.stopped && issued < o.max_iterations) {
    v->iterate([&] {
      a.apply(S(1), v->p(), S(0), v->q());  // q = A p
      v->dot_pq();                          // p'q, and the stop when A is not positive along p
      v->update_r();                        // r -= alpha q, with r'r and r'M^-1 r
      v->update_xp();  // x += alpha p, p = M^-1 r + beta p, the convergence test
    });
    last = v->snapshot();
    ++issued;
    if (last - next >= kLag) st = read(next++);
  }
  while (!st.stopped && next <= last) st = read(next++);  // the first stopped snapshot
  v->store(x);
  res.iterations = st.iterations;
  res.replay = v->replay();
  res.ms_per_iteration = st.iterations ? st.ms / st.iterations : 0;
  if (st.stopped) res.stop = st.stop;
  if (st.stop == CgStop::NotPositive) res.curvature = st.curvature;
  std::vector<S> r(b, b + n);  // the true residual of the returned x
  a.apply(S(-1), x, S(1), r.data());
  double rr = 0;
  for (S e : r) rr += double(e) * double(e);
  res.relative_residual = std::sqrt(rr) / bnorm;
  res.converged = std::sqrt(st.rr) / bnorm <= o.tolerance;
  return res;
}

}  // namespace

// With a reordering (Options::reorder), b, x and the preconditioner's diagonal are permuted once
// and CG runs on P A P^T: no gather or scatter around its SpMVs.
template <class S>
CgResult cg(Operator<S>& a, const S* b, S* x, const CgOptions& o, const Jacobi<S>* m,
            const CgMonitor& monitor) {
  if (a.nrows() != a.ncols()) throw InvalidArgument("cg: the matrix must be square");
  if (!(o.tolerance >= 0) || o.max_iterations < 0)
    throw InvalidArgument("cg: tolerance must be >= 0 and max_iterations >= 0");
  if (m && m->inverse_diagonal().size() != static_cast<std::size_t>(a.nrows()))
    throw InvalidArgument("cg: the preconditioner is for " +
                          std::to_string(m->inverse_diagonal().size()) + " rows, the matrix has " +
                          std::to_string(a.nrows()));
  const S* d = m ? m->inverse_diagonal().data() : nullptr;
  const std::vector<Ordinal>& perm = a.permutation();
  if (perm.empty()) return cg_in_order(a, b, x, o, d, monitor);
  const std::size_t n = perm.size();
  std::vector<S> pb(n), px(n), pd(d ? n : 0);
  constexpr std::int64_t kGrain = std::int64_t(1) << 16;  // random reads: on every host thread
  parallel_blocks(static_cast<std::int64_t>(n), kGrain, [&](std::int64_t begin, std::int64_t end) {
    for (std::int64_t i = begin; i < end; ++i) {
      pb[i] = b[perm[i]];
      px[i] = x[perm[i]];
      if (d) pd[i] = d[perm[i]];
    }
  });
  const PermutedOrder<S> order(a);
  const CgResult res = cg_in_order(a, pb.data(), px.data(), o, d ? pd.data() : nullptr, monitor);
  parallel_blocks(static_cast<std::int64_t>(n), kGrain, [&](std::int64_t begin, std::int64_t end) {
    for (std::int64_t i = begin; i < end; ++i) x[perm[i]] = px[i];
  });
  return res;
}

template CgResult cg(Operator<float>&, const float*, float*, const CgOptions&, const Jacobi<float>*,
                     const CgMonitor&);
template CgResult cg(Operator<double>&, const double*, double*, const CgOptions&,
                     const Jacobi<double>*, const CgMonitor&);

}  // namespace kspmv
