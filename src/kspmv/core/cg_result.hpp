// What conjugate gradients (kspmv/solvers/cg.hpp) takes and returns. Kokkos-free: the backends'
// CG vectors (core/cg_vectors.hpp) report its stop reasons.
#pragma once

#include <functional>
#include <string>

namespace kspmv {

struct CgOptions {
  double tolerance = 1e-8;  // stop when ||r|| / ||b|| <= tolerance
  int max_iterations = 1000;
};

// Called by kspmv::cg with each iteration's relative residual ||r|| / ||b|| of the iterated
// residual, in order from iteration 0 (the start) to the stop, a few iterations after the devices
// ran it (never waiting for them).
using CgMonitor = std::function<void(int iteration, double relative_residual)>;

// Why CG stopped.
enum class CgStop {
  Converged,      // the iterated residual reached the tolerance
  MaxIterations,  // CgOptions::max_iterations ran out first
  NotPositive,    // p'Ap <= 0 (or NaN) at iteration `iterations`: A is not positive definite
};

struct CgResult {
  int iterations = 0;
  CgStop stop = CgStop::MaxIterations;
  double curvature = 0;          // p'Ap where CG broke down (stop == NotPositive)
  double relative_residual = 0;  // ||b - A x|| / ||b|| of the returned x (recomputed at the end)
  bool converged = false;        // the iterated residual reached the tolerance
  double ms_per_iteration = 0;
  // How the iterations ran where a backend replays them (CUDA: one graph an iteration), and why
  // not where it could not; empty elsewhere.
  std::string replay;
};

}  // namespace kspmv
