// Multi-GPU CG: simple vector kernels (axpy, p = r + beta p, two-stage dot) on each device's
// legacy default stream, which the executor's apply orders itself after.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <utility>
#include <vector>

#include "backends/cuda/cg_multi.hpp"
#include "backends/cuda/check.hpp"

namespace kspmv::cuda {

namespace {

constexpr int kBlock = 256;
constexpr int kMaxGrid = 1024;  // partial sums of the first dot stage

int grid_for(Ordinal count) {
  return static_cast<int>(std::min<long long>((count + kBlock - 1) / kBlock, kMaxGrid));
}

template <class S>
__global__ void axpy_kernel(S* __restrict__ y, const S* __restrict__ x, S a, Ordinal n) {
  const long long stride = static_cast<long long>(gridDim.x) * blockDim.x;
  for (long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; i < n;
       i += stride)
    y[i] += a * x[i];
}

// p = r + beta p (p = r when beta == 0, whatever p held).
template <class S>
__global__ void xpay_kernel(S* __restrict__ p, const S* __restrict__ r, S beta, Ordinal n) {
  const long long stride = static_cast<long long>(gridDim.x) * blockDim.x;
  for (long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; i < n;
       i += stride)
    p[i] = beta == S(0) ? r[i] : r[i] + beta * p[i];
}

// Block sum of v into out[blockIdx.x] (blockDim.x == kBlock).
__device__ void block_sum(double v, double* out) {
  __shared__ double s[kBlock];
  s[threadIdx.x] = v;
  __syncthreads();
  for (int w = kBlock / 2; w > 0; w /= 2) {
    if (threadIdx.x < w) s[threadIdx.x] += s[threadIdx.x + w];
    __syncthreads();
  }
  if (threadIdx.x == 0) out[blockIdx.x] = s[0];
}

template <class S>
__global__ void dot_partial_kernel(const S* __restrict__ u, const S* __restrict__ v, Ordinal n,
                                   double* __restrict__ partial) {
  double sum = 0;
  const long long stride = static_cast<long long>(gridDim.x) * blockDim.x;
  for (long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; i < n;
       i += stride)
    sum += static_cast<double>(u[i]) * static_cast<double>(v[i]);
  block_sum(sum, partial);
}

__global__ void dot_final_kernel(const double* __restrict__ partial, int count,
                                 double* __restrict__ out) {
  double sum = 0;
  for (int i = threadIdx.x; i < count; i += blockDim.x) sum += partial[i];
  block_sum(sum, out);
}

// A part of a device's local vectors: [offset, offset + count).
struct Range {
  Ordinal offset = 0, count = 0;
};

// Per device: the ranges its vector operations update and those its dot products sum, and the
// dot scratch (on that device).
struct DevicePart {
  int device = 0;
  std::vector<Range> update, dot;
  DeviceBuffer<double> partial, result;
};

template <class S>
class Vectors {
 public:
  Vectors(const MultiDeviceSpmv<S>& a, bool comp) {
    const auto& plan = a.plan();
    const Ordinal m = plan.nrows;
    for (int d = 0; d < a.ndevices(); ++d) {
      parts_.emplace_back();
      DevicePart& p = parts_.back();
      p.device = a.device(d);
      DeviceGuard guard(p.device);
      p.partial = DeviceBuffer<double>(kMaxGrid);
      p.result = DeviceBuffer<double>(1);
      if (a.exchange() == part::Exchange::Halo) {
        p.update = {{0, static_cast<Ordinal>(a.owned_rows(d).size())}};
        p.dot = p.update;
      } else if (comp) {
        for (const auto& b : plan.blocks)
          if (b.device == d && b.rows() > 0) p.update.push_back({b.row_begin, b.rows()});
        p.dot = p.update;
      } else {  // AllGather: redundant updates everywhere, dots on device 0
        p.update = {{0, m}};
        if (d == 0) p.dot = p.update;
      }
    }
  }

  ~Vectors() {
    for (auto& p : parts_) {
      int previous = 0;
      const bool switched =
          cudaGetDevice(&previous) == cudaSuccess && cudaSetDevice(p.device) == cudaSuccess;
      p.partial = DeviceBuffer<double>();
      p.result = DeviceBuffer<double>();
      if (switched) cudaSetDevice(previous);
    }
  }
  Vectors(const Vectors&) = delete;
  Vectors& operator=(const Vectors&) = delete;

  void axpy(MultiVector<S>& y, const MultiVector<S>& x, S alpha) {
    for (std::size_t d = 0; d < parts_.size(); ++d) {
      DeviceGuard guard(parts_[d].device);
      for (const Range& r : parts_[d].update) {
        if (r.count <= 0) continue;
        axpy_kernel<<<grid_for(r.count), kBlock>>>(y.data(d) + r.offset, x.data(d) + r.offset,
                                                   alpha, r.count);
        check_launch("axpy_kernel");
      }
    }
  }
  void xpay(MultiVector<S>& p, const MultiVector<S>& r, S beta) {
    for (std::size_t d = 0; d < parts_.size(); ++d) {
      DeviceGuard guard(parts_[d].device);
      for (const Range& g : parts_[d].update) {
        if (g.count <= 0) continue;
        xpay_kernel<<<grid_for(g.count), kBlock>>>(p.data(d) + g.offset, r.data(d) + g.offset, beta,
                                                   g.count);
        check_launch("xpay_kernel");
      }
    }
  }
  // Sum over devices of their partial dot products (every launch first, then the reads).
  double dot(const MultiVector<S>& u, const MultiVector<S>& v) {
    std::vector<std::pair<std::size_t, int>> pending;  // (device, launches)
    double total = 0;
    for (std::size_t d = 0; d < parts_.size(); ++d) {
      DevicePart& p = parts_[d];
      DeviceGuard guard(p.device);
      for (const Range& g : p.dot) {
        if (g.count <= 0) continue;
        const int grid = grid_for(g.count);
        dot_partial_kernel<<<grid, kBlock>>>(u.data(d) + g.offset, v.data(d) + g.offset, g.count,
                                             p.partial.data());
        check_launch("dot_partial_kernel");
        dot_final_kernel<<<1, kBlock>>>(p.partial.data(), grid, p.result.data());
        check_launch("dot_final_kernel");
        double host = 0;  // synchronous: the legacy stream orders it after the kernels
        p.result.download(&host, 1);
        total += host;
      }
    }
    return total;
  }

 private:
  std::vector<DevicePart> parts_;
};

}  // namespace

template <class S>
CgResult cg_multi(MultiDeviceSpmv<S>& a, const S* b, S* x, const CgOptions& o, bool comp) {
  const auto& plan = a.plan();
  if (plan.nrows != plan.ncols) throw InvalidArgument("cg_multi: the matrix must be square");
  if (!(o.tolerance >= 0) || o.max_iterations < 0)
    throw InvalidArgument("cg_multi: tolerance must be >= 0 and max_iterations >= 0");
  if (a.exchange() == part::Exchange::Merge)
    throw UnsupportedError("cg_multi: use the allgather or halo exchange");
  if (comp && a.exchange() != part::Exchange::AllGather)
    throw UnsupportedError("cg_multi: CG(comp) runs on an allgather executor");
  if (comp)
    for (const auto& blk : plan.blocks)
      if (blk.role == part::Role::Redundant)
        throw UnsupportedError("cg_multi: CG(comp) needs every row owned by one device");
  const Ordinal n = plan.nrows;
  double bnorm = 0;
  for (Ordinal i = 0; i < n; ++i) bnorm += double(b[i]) * double(b[i]);
  bnorm = std::sqrt(bnorm);
  CgResult res;
  if (bnorm == 0) {
    for (Ordinal i = 0; i < n; ++i) x[i] = S(0);
    res.converged = true;
    res.stop = CgStop::Converged;
    return res;
  }
  Vectors<S> ops(a, comp);
  auto vx = a.make_vector(), vr = a.make_vector(), vp = a.make_vector(), vq = a.make_vector();
  // q = A v; CG(comp) first sends every device's owned rows of v to the others.
  const auto spmv = [&](MultiVector<S>& v) {
    if (comp) {
      a.share_owned_rows(v);
      a.apply_local(S(1), v, S(0), vq);
    } else {
      a.apply(S(1), v, S(0), vq);
    }
  };
  a.upload(x, n, vx);
  a.upload(b, n, vr);
  spmv(vx);
  ops.axpy(vr, vq, S(-1));  // r = b - A x
  ops.xpay(vp, vr, S(0));   // p = r
  double rr = ops.dot(vr, vr);
  const auto t0 = std::chrono::steady_clock::now();
  while (std::sqrt(rr) / bnorm > o.tolerance && res.iterations < o.max_iterations) {
    spmv(vp);
    const double pq = ops.dot(vp, vq);
    if (!(pq > 0)) {  // not positive definite along p (or breakdown)
      res.stop = CgStop::NotPositive, res.curvature = pq;
      break;
    }
    const S alpha = static_cast<S>(rr / pq);
    ops.axpy(vx, vp, alpha);
    ops.axpy(vr, vq, -alpha);
    const double rr_next = ops.dot(vr, vr);
    ops.xpay(vp, vr, static_cast<S>(rr_next / rr));
    rr = rr_next;
    ++res.iterations;
  }
  if (comp) a.share_owned_rows(vx);  // every device held only its own rows of x
  const double ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  res.ms_per_iteration = res.iterations ? ms / res.iterations : 0;
  a.download(vx, n, x);
  std::vector<S> r(b, b + n);  // the true residual of the returned x
  a.apply(S(-1), x, S(1), r.data());
  double rnorm = 0;
  for (S v : r) rnorm += double(v) * double(v);
  res.relative_residual = std::sqrt(rnorm) / bnorm;
  res.converged = std::sqrt(rr) / bnorm <= o.tolerance;
  if (res.converged) res.stop = CgStop::Converged;
  return res;
}

template CgResult cg_multi(MultiDeviceSpmv<float>&, const float*, float*, const CgOptions&, bool);
template CgResult cg_multi(MultiDeviceSpmv<double>&, const double*, double*, const CgOptions&,
                           bool);

}  // namespace kspmv::cuda
