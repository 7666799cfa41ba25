// Scratch (not in the project): a random permutation of n doubles, direct gather / scatter
// against two-pass windowed gathers at several windows. Times by events, median of 20.
#include <algorithm>
#include <cstdio>
#include <cub/device/device_radix_sort.cuh>
#include <numeric>
#include <random>
#include <vector>
__global__ void gat(double* o, const double* in, const int* idx, long n) {
  for (long i = blockIdx.x * (long)blockDim.x + threadIdx.x; i < n;
       i += (long)gridDim.x * blockDim.x)
    o[i] = in[idx[i]];
}
__global__ void gats(double* o, const double* in, const int* idx, long n) {
  for (long i = blockIdx.x * (long)blockDim.x + threadIdx.x; i < n;
       i += (long)gridDim.x * blockDim.x)
    __stcs(o + i, in[__ldcs(idx + i)]);
}
__global__ void gat4(double* o, const double* in, const int* idx, long n) {
  long i = 4 * (blockIdx.x * (long)blockDim.x + threadIdx.x);
  for (; i + 3 < n; i += 4L * gridDim.x * blockDim.x) {
    int4 k = __ldcs(reinterpret_cast<const int4*>(idx + i));
    double2 a = make_double2(in[k.x], in[k.y]), b = make_double2(in[k.z], in[k.w]);
    __stcs(reinterpret_cast<double2*>(o + i), a);
    __stcs(reinterpret_cast<double2*>(o + i + 2), b);
  }
}
__global__ void gatw(double* __restrict__ out, const double* __restrict__ in,
                     const int* __restrict__ idx, long n) {
  const long warps = (long)gridDim.x * blockDim.x / 32;
  const int lane = threadIdx.x % 32;
  for (long base = (blockIdx.x * (long)blockDim.x + threadIdx.x) / 32 * 128; base < n;
       base += warps * 128) {
    double v[4];
#pragma unroll
    for (int j = 0; j < 4; ++j) {
      long i = base + lane + 32 * j;
      if (i < n) v[j] = in[idx[i]];
    }
#pragma unroll
    for (int j = 0; j < 4; ++j) {
      long i = base + lane + 32 * j;
      if (i < n) out[i] = v[j];
    }
  }
}
__global__ void sca(double* o, const double* in, const int* idx, long n) {
  for (long i = blockIdx.x * (long)blockDim.x + threadIdx.x; i < n;
       i += (long)gridDim.x * blockDim.x)
    o[idx[i]] = in[i];
}
__global__ void keyk(const int* src, long n, int w, unsigned* key, int* ix) {
  for (long i = blockIdx.x * (long)blockDim.x + threadIdx.x; i < n;
       i += (long)gridDim.x * blockDim.x) {
    key[i] = src[i] / w;
    ix[i] = i;
  }
}
__global__ void plank(const int* src, const int* order, long n, int* from, int* slot) {
  for (long t = blockIdx.x * (long)blockDim.x + threadIdx.x; t < n;
       t += (long)gridDim.x * blockDim.x) {
    int i = order[t];
    from[t] = src[i];
    slot[i] = t;
  }
}
int main(int argc, char** argv) {
  long n = argc > 1 ? atol(argv[1]) : 60000000;
  int l2 = 0;
  cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, 0);
  std::vector<int> perm(n);
  std::iota(perm.begin(), perm.end(), 0);
  std::mt19937_64 rng(1);
  std::shuffle(perm.begin(), perm.end(), rng);
  int *dp, *from, *slot, *ix, *ord;
  unsigned *k1, *k2;
  double *a, *b, *w;
  cudaMalloc(&dp, n * 4);
  cudaMalloc(&from, n * 4);
  cudaMalloc(&slot, n * 4);
  cudaMalloc(&ix, n * 4);
  cudaMalloc(&ord, n * 4);
  cudaMalloc(&k1, n * 4);
  cudaMalloc(&k2, n * 4);
  cudaMalloc(&a, n * 8);
  cudaMalloc(&b, n * 8);
  cudaMalloc(&w, n * 8);
  cudaMemcpy(dp, perm.data(), n * 4, cudaMemcpyHostToDevice);
  cudaMemset(a, 0, n * 8);
  unsigned g = std::min<long>(65535, (n + 255) / 256);
  cudaEvent_t e0, e1;
  cudaEventCreate(&e0);
  cudaEventCreate(&e1);
  auto time = [&](auto f) {
    std::vector<float> t;
    for (int r = 0; r < 21; ++r) {
      cudaEventRecord(e0);
      f();
      cudaEventRecord(e1);
      cudaEventSynchronize(e1);
      float ms;
      cudaEventElapsedTime(&ms, e0, e1);
      if (r) t.push_back(ms);
    }
    std::sort(t.begin(), t.end());
    return t[t.size() / 2];
  };
  printf("n %ld, L2 %d bytes, copy of n doubles %.3f ms\n", n, l2,
         time([&] { cudaMemcpyAsync(b, a, n * 8, cudaMemcpyDeviceToDevice); }));
  printf("direct gather %.3f ms, direct scatter %.3f ms\n",
         time([&] { gat<<<g, 256>>>(b, a, dp, n); }), time([&] { sca<<<g, 256>>>(b, a, dp, n); }));
  for (int div : {2, 4, 8, 16}) {
    int win = l2 / div / 8;
    keyk<<<g, 256>>>(dp, n, win, k1, ix);
    size_t bytes = 0;
    void* tmp = nullptr;
    cub::DeviceRadixSort::SortPairs(tmp, bytes, k1, k2, ix, ord, (int)n, 0, 12);
    cudaMalloc(&tmp, bytes);
    cudaEventRecord(e0);
    keyk<<<g, 256>>>(dp, n, win, k1, ix);
    cub::DeviceRadixSort::SortPairs(tmp, bytes, k1, k2, ix, ord, (int)n, 0, 12);
    plank<<<g, 256>>>(dp, ord, n, from, slot);
    cudaEventRecord(e1);
    cudaEventSynchronize(e1);
    float plan;
    cudaEventElapsedTime(&plan, e0, e1);
    cudaFree(tmp);
    float t = time([&] {
      gat<<<g, 256>>>(w, a, from, n);
      gat<<<g, 256>>>(b, w, slot, n);
    });
    float p1 = time([&] { gat<<<g, 256>>>(w, a, from, n); });
    printf("window L2/%d (%d entries): two-pass %.3f ms (pass 1 %.3f), plan %.3f ms\n", div, win, t,
           p1, plan);
    unsigned g4 = std::min<long>(65535, (n / 4 + 255) / 256);
    float ts = time([&] {
      gats<<<g, 256>>>(w, a, from, n);
      gats<<<g, 256>>>(b, w, slot, n);
    });
    float ts1 = time([&] { gats<<<g, 256>>>(w, a, from, n); });
    float t4 = time([&] {
      gat4<<<g4, 256>>>(w, a, from, n);
      gat4<<<g4, 256>>>(b, w, slot, n);
    });
    float t41 = time([&] { gat4<<<g4, 256>>>(w, a, from, n); });
    float tb = time([&] {
      gats<<<std::min<long>(65535, (n + 1023) / 1024), 1024>>>(w, a, from, n);
      gats<<<std::min<long>(65535, (n + 1023) / 1024), 1024>>>(b, w, slot, n);
    });
    float tw = time([&] {
      gatw<<<g4, 256>>>(w, a, from, n);
      gatw<<<g4, 256>>>(b, w, slot, n);
    });
    printf("   warp-strided 4 a thread %.3f\n", tw);
    printf(
        "   streaming hints %.3f (pass 1 %.3f); 4 a thread %.3f (pass 1 %.3f); blocks of 1024 "
        "%.3f\n",
        ts, ts1, t4, t41, tb);
  }
  // check the last plan
  gat<<<g, 256>>>(w, a, from, n);
  gat<<<g, 256>>>(b, w, slot, n);
  printf("err %s\n", cudaGetErrorString(cudaDeviceSynchronize()));
}
