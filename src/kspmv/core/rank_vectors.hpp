// The storage and operations of one MPI rank's vectors, in the memory where its backend computes:
// a CUDA device's (backends/cuda/rank_vectors.hpp) or the host's (plain loops, here). What
// kspmv's vectors past one process stand on (interop/tpetra_vector.hpp): the rank's part of every
// vector stays where the rank's Operator reads it, and only the halo and the partial sums of the
// dot products cross to the host for MPI. Kokkos-free.
//
// Operations are enqueued in order on stream() and return without waiting (the host runs them
// at once), except those that return a value or fill a host array, which wait for what they
// need. Vectors are arrays of n entries (Scalar*) in that memory; x and y may be the same array
// wherever both appear.
#pragma once

#include <cstddef>
#include <memory>
#include <vector>

#include "kspmv/core/distributed_vector.hpp"
#include "kspmv/core/operator_impl.hpp"
#include "kspmv/core/types.hpp"

namespace kspmv {

// What reduce() sums over the entries of a pair of vectors (AbsMax: their largest magnitude).
enum class Reduction { Dot, AbsSum, AbsMax };

template <class Scalar>
class RankVectors {
 public:
  virtual ~RankVectors() = default;
  // The CUDA device of the memory (-1: host memory) and the stream the operations go on, where
  // Operator::apply(stream, ...) orders the rank's SpMV with them (nullptr on the host).
  virtual int device() const = 0;
  virtual DeviceStream stream() const = 0;

  // n entries (not initialized); one part, of device(). And an index array, copied there.
  virtual DistributedVector<Scalar> allocate(std::size_t n) const = 0;
  virtual DistributedVector<Ordinal> indices(const std::vector<Ordinal>& idx) const = 0;
  // n entries of host memory that copies to and from the device run from asynchronously
  // (page-locked for CUDA).
  virtual DistributedVector<Scalar> host_buffer(std::size_t n) const = 0;

  // x = value.
  virtual void fill(Scalar* x, std::size_t n, Scalar value) = 0;
  // out = a*x + b*y, entry by entry: x is not read when a == 0, y not when b == 0 (NaN included).
  virtual void combine(Scalar a, const Scalar* x, Scalar b, const Scalar* y, Scalar* out,
                       std::size_t n) = 0;
  // out[i] = the rank's sum over the entries of the pair (x[i], y[i]) (Dot: x.y in double; AbsSum
  // and AbsMax read x alone), for i < count; waits for them.
  virtual void reduce(Reduction kind, const Scalar* const* x, const Scalar* const* y, int count,
                      std::size_t n, double* out) = 0;

  // CG's fused passes on the rank's rows (Gao et al. 2024, Alg. 1, as core/cg_vectors.hpp):
  // r -= alpha q, returning the rank's r.r of the new r (one pass; waits for it); and x += alpha
  // p, p = r + beta p (one pass).
  virtual double update_r(Scalar alpha, const Scalar* q, Scalar* r, std::size_t n) = 0;
  virtual void update_xp(Scalar alpha, Scalar beta, const Scalar* r, Scalar* p, Scalar* x,
                         std::size_t n) = 0;

  // The halo: pack gathers x[idx[i]] for i < count into the host array `out` (host_buffer), which
  // holds them once wait_packed() returns, without holding up the operations enqueued after
  // pack (on a CUDA device: a gather on the device, then a copy of the gathered entries alone on
  // a stream of its own). unpack copies `count` host entries `in` to x, before the operations
  // enqueued after it.
  virtual void pack(const Scalar* x, const Ordinal* idx, std::size_t count, Scalar* out) = 0;
  virtual void wait_packed() = 0;
  virtual void unpack(const Scalar* in, std::size_t count, Scalar* x) = 0;

  // n entries between host memory and x; both wait.
  virtual void upload(const Scalar* host, std::size_t n, Scalar* x) = 0;
  virtual void download(const Scalar* x, std::size_t n, Scalar* host) = 0;
  // Waits for every operation enqueued.
  virtual void synchronize() = 0;
};

// The host's: plain loops, sums in double.
template <class Scalar>
std::unique_ptr<RankVectors<Scalar>> make_host_rank_vectors();

extern template std::unique_ptr<RankVectors<float>> make_host_rank_vectors();
extern template std::unique_ptr<RankVectors<double>> make_host_rank_vectors();

}  // namespace kspmv
