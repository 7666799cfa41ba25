// The vectors of conjugate gradients (Gao et al. 2024, Alg. 1; preconditioned by Jacobi, PCG:
// Saad 2003, Alg. 9.1) in one Operator's layout, and the fused vector operations kspmv::cg runs
// on them: each operation is one pass over the vectors (updates and the dot products that follow
// them together, one reduction), enqueued without waiting; the scalars (r.r, r.z, p.q, the stop
// state) stay where the vectors are until state() reads a snapshot. z = M^-1 r is never stored:
// with M = diag(d)^-1 it is d * r, entry by entry, where r is read.
// Once stopped (converged, or p'Ap <= 0), every operation leaves the vectors as they are, so a
// caller that learns of the stop a few iterations late has lost nothing but time.
// Kokkos-free: the CUDA backend implements it (backends/cuda/cg_vectors.hpp).
#pragma once

#include <functional>
#include <memory>
#include <string>

#include "kspmv/core/cg_result.hpp"
#include "kspmv/core/distributed_vector.hpp"
#include "kspmv/core/types.hpp"

namespace kspmv {

// The state after the operations enqueued before a snapshot.
struct CgState {
  int iterations = 0;  // update_xp calls before the stop
  bool stopped = false;
  CgStop stop = CgStop::MaxIterations;  // Converged or NotPositive once stopped
  double rr = 0;                        // r.r of the iterated residual
  double curvature = 0;                 // p'Ap at a NotPositive stop
  double ms = 0;                        // from start() to the snapshot (device time on a device)
};

// Snapshots state() can still read: the last kCgSnapshots taken.
inline constexpr int kCgSnapshots = 8;

template <class Scalar>
class CgVectors {
 public:
  virtual ~CgVectors() = default;
  // The solution, the residual, the search direction and q = A p, in the operator's layout.
  virtual const DistributedVector<Scalar>& x() const = 0;
  virtual const DistributedVector<Scalar>& r() const = 0;
  virtual const DistributedVector<Scalar>& p() const = 0;
  virtual const DistributedVector<Scalar>& q() const = 0;
  // x = x0 and r = b (host arrays of n entries), and the preconditioner M^-1 = diag(inverse
  // diagonal, n entries) or none (nullptr: z = r); returns when they are in place.
  virtual void load(const Scalar* b, const Scalar* x0, const Scalar* inverse_diagonal) = 0;
  // After r = b - A x: p = z, rr = r.r, rz = r.z; stopped (converged) at once when sqrt(rr) <=
  // tolerance * bnorm. The clock of CgState::ms starts here.
  virtual void start(double bnorm, double tolerance) = 0;
  // pq = p.q; stopped (NotPositive, curvature = pq) unless pq > 0.
  virtual void dot_pq() = 0;
  // alpha = rz / pq; r -= alpha q; rr_next = r.r, rz_next = r.z (one pass).
  virtual void update_r() = 0;
  // x += alpha p; p = z + (rz_next / rz) p; rr = rr_next, rz = rz_next; one more iteration;
  // stopped (converged) when sqrt(rr) <= tolerance * bnorm (one pass).
  virtual void update_xp() = 0;
  // One iteration: step() enqueues the SpMV q = A p on the operator and dot_pq, update_r and
  // update_xp, and nothing else. A backend may capture it once and replay it (CUDA: one graph
  // launch an iteration); here it runs step().
  virtual void iterate(const std::function<void()>& step) { step(); }
  // How iterate ran the iterations so far (CgResult::replay).
  virtual std::string replay() const { return {}; }
  // Records the state after everything enqueued so far; returns its number (0, 1, ...).
  virtual int snapshot() = 0;
  // Waits for snapshot k (one of the last kCgSnapshots) and returns it.
  virtual CgState state(int k) = 0;
  // x to a host array of n entries; returns when it is written.
  virtual void store(Scalar* x) = 0;
};

// CG's vectors as host arrays (the host backend, one device or emulated devices): the
// operations run at once, in double for the dot products. `layout` tags the vectors (the
// operator's identity), n is the system size.
template <class Scalar>
std::unique_ptr<CgVectors<Scalar>> make_host_cg_vectors(Ordinal n, const void* layout);

// A DistributedVector of one host array of n entries (zeros).
template <class Scalar>
DistributedVector<Scalar> make_host_vector(std::size_t n, const void* layout);

extern template std::unique_ptr<CgVectors<float>> make_host_cg_vectors(Ordinal, const void*);
extern template std::unique_ptr<CgVectors<double>> make_host_cg_vectors(Ordinal, const void*);
extern template DistributedVector<float> make_host_vector(std::size_t, const void*);
extern template DistributedVector<double> make_host_vector(std::size_t, const void*);

}  // namespace kspmv
