// One rank's vectors on a CUDA device: grid-stride kernels on the rank's stream; a sum is
// reduced per block in double, then the blocks' sums of every pair added in block order by one
// block per pair, and only those numbers copied back.
#include <algorithm>
#include <cmath>
#include <utility>

#include "backends/cuda/check.hpp"
#include "backends/cuda/memory.hpp"
#include "backends/cuda/rank_vectors.hpp"
#include "backends/cuda/vector_ops.hpp"

namespace kspmv::cuda {

namespace {

constexpr int kBlock = 256;
constexpr int kMaxBlocks = 512;  // blocks of a reduction, each leaving one partial sum

int blocks_for(std::size_t n) {
  return static_cast<int>(std::clamp<std::size_t>((n + kBlock - 1) / kBlock, 1, kMaxBlocks));
}

#define KSPMV_FOR_ENTRIES(i, n)                                                                  \
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < (n); \
       i += static_cast<std::size_t>(gridDim.x) * blockDim.x)

// The larger of a and b, NaN winning (a NaN entry makes the norm NaN).
__device__ double larger(double a, double b) {
  return a != a || a > b ? a : b;
}

// The block's sum (or largest value), in thread 0.
template <bool Max>
__device__ double block_reduce(double v) {
  __shared__ double warps[kBlock / 32];
  for (int o = 16; o > 0; o /= 2) {
    const double w = __shfl_down_sync(0xffffffffu, v, o);
    v = Max ? larger(v, w) : v + w;
  }
  if (threadIdx.x % 32 == 0) warps[threadIdx.x / 32] = v;
  __syncthreads();
  v = threadIdx.x < kBlock / 32 ? warps[threadIdx.x] : 0.0;
  if (threadIdx.x < 32)
    for (int o = 16; o > 0; o /= 2) {
      const double w = __shfl_down_sync(0xffffffffu, v, o);
      v = Max ? larger(v, w) : v + w;
    }
  return v;
}

template <class S>
__global__ void fill_kernel(S* __restrict__ x, std::size_t n, S value) {
  KSPMV_FOR_ENTRIES(i, n) x[i] = value;
}

// out = a*x + b*y; x and y are not read where their factor is 0 (out may be either).
template <class S>
__global__ void combine_kernel(S a, const S* x, S b, const S* y, S* out, std::size_t n) {
  KSPMV_FOR_ENTRIES(i, n) {
    out[i] = (a == S(0) ? S(0) : a * x[i]) + (b == S(0) ? S(0) : b * y[i]);
  }
}

// partial[blockIdx.x] = the block's share of the reduction of (x, y).
template <Reduction K, class S>
__global__ void reduce_kernel(const S* __restrict__ x, const S* __restrict__ y, std::size_t n,
                              double* __restrict__ partial) {
  double v = 0;
  KSPMV_FOR_ENTRIES(i, n) {
    if constexpr (K == Reduction::Dot) v += double(x[i]) * double(y[i]);
    if constexpr (K == Reduction::AbsSum) v += fabs(double(x[i]));
    if constexpr (K == Reduction::AbsMax) v = larger(v, fabs(double(x[i])));
  }
  v = block_reduce<K == Reduction::AbsMax>(v);
  if (threadIdx.x == 0) partial[blockIdx.x] = v;
}

// out[p] = the reduction of pair p's `blocks` partial sums, in block order (one block per pair).
template <bool Max>
__global__ void finish_kernel(const double* __restrict__ partial, int blocks,
                              double* __restrict__ out) {
  const double* mine = partial + static_cast<std::size_t>(blockIdx.x) * kMaxBlocks;
  double v = 0;
  for (int b = threadIdx.x; b < blocks; b += blockDim.x) v = Max ? larger(v, mine[b]) : v + mine[b];
  v = block_reduce<Max>(v);
  if (threadIdx.x == 0) out[blockIdx.x] = v;
}

template <class S>
__global__ void update_r_kernel(S alpha, const S* __restrict__ q, S* __restrict__ r, std::size_t n,
                                double* __restrict__ partial) {
  double v = 0;
  KSPMV_FOR_ENTRIES(i, n) {
    const S ri = r[i] - alpha * q[i];
    r[i] = ri;
    v += double(ri) * double(ri);
  }
  v = block_reduce<false>(v);
  if (threadIdx.x == 0) partial[blockIdx.x] = v;
}

template <class S>
__global__ void update_xp_kernel(S alpha, S beta, const S* __restrict__ r, S* __restrict__ p,
                                 S* __restrict__ x, std::size_t n) {
  KSPMV_FOR_ENTRIES(i, n) {
    const S pi = p[i];
    x[i] += alpha * pi;
    p[i] = r[i] + beta * pi;
  }
}

#undef KSPMV_FOR_ENTRIES

// f() with `device` current.
template <class F>
auto on_device(int device, F f) {
  DeviceGuard guard(device);
  return f();
}

template <class S>
class DeviceRankVectors final : public RankVectors<S> {
 public:
  explicit DeviceRankVectors(int device)
      : device_(device),
        compute_(on_device(device, [] { return Stream(); })),
        copy_(on_device(device, [] { return Stream(); })),
        ordered_(on_device(device, [] { return Event(false); })),
        packed_(on_device(device, [] { return Event(false); })),
        arrived_(on_device(device, [] { return Event(false); })) {}

  ~DeviceRankVectors() override {
    on_device_noexcept(device_, [&] {
      cudaStreamSynchronize(compute_.get());
      cudaStreamSynchronize(copy_.get());
    });
  }

  int device() const override { return device_; }
  DeviceStream stream() const override { return compute_.get(); }

  DistributedVector<S> allocate(std::size_t n) const override {
    DeviceGuard guard(device_);
    auto b = std::make_shared<DeviceBuffer<S>>(n);
    return DistributedVector<S>({{device_, b->data(), n}}, b, this);
  }
  DistributedVector<Ordinal> indices(const std::vector<Ordinal>& idx) const override {
    DeviceGuard guard(device_);
    auto b = std::make_shared<DeviceBuffer<Ordinal>>(idx.size());
    b->upload(idx.data());
    return DistributedVector<Ordinal>({{device_, b->data(), idx.size()}}, b, this);
  }
  DistributedVector<S> host_buffer(std::size_t n) const override {
    auto b = std::make_shared<PinnedBuffer<S>>(n);
    return DistributedVector<S>({{-1, b->data(), n}}, b, this);
  }

  void fill(S* x, std::size_t n, S value) override {
    if (n == 0) return;
    DeviceGuard guard(device_);
    fill_kernel<<<blocks_for(n), kBlock, 0, compute_.get()>>>(x, n, value);
    check_launch("fill_kernel");
  }
  void combine(S a, const S* x, S b, const S* y, S* out, std::size_t n) override {
    if (n == 0) return;
    DeviceGuard guard(device_);
    combine_kernel<<<blocks_for(n), kBlock, 0, compute_.get()>>>(a, x, b, y, out, n);
    check_launch("combine_kernel");
  }
  void reduce(Reduction kind, const S* const* x, const S* const* y, int count, std::size_t n,
              double* out) override {
    if (count <= 0) return;
    DeviceGuard guard(device_);
    reserve(count);
    const int blocks = blocks_for(n);
    for (int k = 0; k < count; ++k) {
      double* partial = partial_.data() + static_cast<std::size_t>(k) * kMaxBlocks;
      if (kind == Reduction::Dot)
        reduce_kernel<Reduction::Dot>
            <<<blocks, kBlock, 0, compute_.get()>>>(x[k], y[k], n, partial);
      else if (kind == Reduction::AbsSum)
        reduce_kernel<Reduction::AbsSum>
            <<<blocks, kBlock, 0, compute_.get()>>>(x[k], x[k], n, partial);
      else
        reduce_kernel<Reduction::AbsMax>
            <<<blocks, kBlock, 0, compute_.get()>>>(x[k], x[k], n, partial);
      check_launch("reduce_kernel");
    }
    finish(kind == Reduction::AbsMax, blocks, count, out);
  }

  double update_r(S alpha, const S* q, S* r, std::size_t n) override {
    DeviceGuard guard(device_);
    reserve(1);
    const int blocks = blocks_for(n);
    update_r_kernel<<<blocks, kBlock, 0, compute_.get()>>>(alpha, q, r, n, partial_.data());
    check_launch("update_r_kernel");
    double rr = 0;
    finish(false, blocks, 1, &rr);
    return rr;
  }
  void update_xp(S alpha, S beta, const S* r, S* p, S* x, std::size_t n) override {
    if (n == 0) return;
    DeviceGuard guard(device_);
    update_xp_kernel<<<blocks_for(n), kBlock, 0, compute_.get()>>>(alpha, beta, r, p, x, n);
    check_launch("update_xp_kernel");
  }

  // The gather on the compute stream, the copy of its result on the copy stream.
  void pack(const S* x, const Ordinal* idx, std::size_t count, S* out) override {
    DeviceGuard guard(device_);
    if (send_.size() < count) send_ = DeviceBuffer<S>(count);
    gather_entries(send_.data(), x, idx, static_cast<Ordinal>(count), compute_.get());
    after_compute();
    if (count > 0)
      KSPMV_CUDA_CHECK(cudaMemcpyAsync(out, send_.data(), count * sizeof(S), cudaMemcpyDeviceToHost,
                                       copy_.get()));
    packed_.record(copy_.get());
  }
  void wait_packed() override { packed_.synchronize(); }
  void unpack(const S* in, std::size_t count, S* x) override {
    DeviceGuard guard(device_);
    after_compute();  // x is not overwritten while earlier work reads it
    if (count > 0)
      KSPMV_CUDA_CHECK(
          cudaMemcpyAsync(x, in, count * sizeof(S), cudaMemcpyHostToDevice, copy_.get()));
    arrived_.record(copy_.get());
    KSPMV_CUDA_CHECK(cudaStreamWaitEvent(compute_.get(), arrived_.get(), 0));
  }

  void upload(const S* host, std::size_t n, S* x) override {
    copy(x, host, n, cudaMemcpyHostToDevice);
  }
  void download(const S* x, std::size_t n, S* host) override {
    copy(host, x, n, cudaMemcpyDeviceToHost);
  }
  void synchronize() override { compute_.synchronize(); }

 private:
  // Room for the partial sums of `count` pairs.
  void reserve(int count) {
    const auto c = static_cast<std::size_t>(count);
    if (partial_.size() < c * kMaxBlocks) partial_ = DeviceBuffer<double>(c * kMaxBlocks);
    if (sums_.size() < c) sums_ = DeviceBuffer<double>(c), host_sums_ = PinnedBuffer<double>(c);
  }
  // out[0..count) = the sums of the partial sums, read back once they are done.
  void finish(bool max, int blocks, int count, double* out) {
    if (max)
      finish_kernel<true>
          <<<count, kBlock, 0, compute_.get()>>>(partial_.data(), blocks, sums_.data());
    else
      finish_kernel<false>
          <<<count, kBlock, 0, compute_.get()>>>(partial_.data(), blocks, sums_.data());
    check_launch("finish_kernel");
    KSPMV_CUDA_CHECK(cudaMemcpyAsync(host_sums_.data(), sums_.data(), count * sizeof(double),
                                     cudaMemcpyDeviceToHost, compute_.get()));
    compute_.synchronize();
    std::copy(host_sums_.data(), host_sums_.data() + count, out);
  }
  // n entries after the work queued on the compute stream; returns when they are copied.
  void copy(S* dst, const S* src, std::size_t n, cudaMemcpyKind kind) {
    DeviceGuard guard(device_);
    if (n > 0) KSPMV_CUDA_CHECK(cudaMemcpyAsync(dst, src, n * sizeof(S), kind, compute_.get()));
    compute_.synchronize();
  }
  // The copy stream's next work after the compute stream's work queued so far.
  void after_compute() {
    ordered_.record(compute_.get());
    KSPMV_CUDA_CHECK(cudaStreamWaitEvent(copy_.get(), ordered_.get(), 0));
  }

  int device_;
  Stream compute_, copy_;
  Event ordered_, packed_, arrived_;
  DeviceBuffer<S> send_;
  DeviceBuffer<double> partial_, sums_;
  PinnedBuffer<double> host_sums_;
};

}  // namespace

template <class S>
std::unique_ptr<RankVectors<S>> make_device_rank_vectors(int device) {
  return std::make_unique<DeviceRankVectors<S>>(device);
}

template std::unique_ptr<RankVectors<float>> make_device_rank_vectors(int);
template std::unique_ptr<RankVectors<double>> make_device_rank_vectors(int);

}  // namespace kspmv::cuda
