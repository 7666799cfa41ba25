// Probe (not part of the project): does a column-striped apply beat one CSR pass when x misses
// the L2? And how much would an ideal ordering give k-mer (its chain order)?
#include <cuda_runtime.h>
#include <cusparse.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <numeric>
#include <random>
#include <vector>

#define CK(x)                                                      \
  do {                                                             \
    cudaError_t e_ = (x);                                          \
    if (e_ != cudaSuccess) {                                       \
      printf("CUDA %s at %d\n", cudaGetErrorString(e_), __LINE__); \
      exit(1);                                                     \
    }                                                              \
  } while (0)
#define CS(x)                                           \
  do {                                                  \
    cusparseStatus_t e_ = (x);                          \
    if (e_ != CUSPARSE_STATUS_SUCCESS) {                \
      printf("cusparse %d at %d\n", (int)e_, __LINE__); \
      exit(1);                                          \
    }                                                   \
  } while (0)

static inline uint64_t mix(uint64_t z) {
  z += 0x9e3779b97f4a7c15ull;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}
static inline double unit(uint64_t h) {
  return (h >> 11) * (1.0 / 9007199254740992.0);
}

template <class T>
struct Csr {
  int m = 0, n = 0;
  std::vector<int> rp, ci;
  std::vector<T> v;
};

template <class T>
Csr<T> uniform(int m, int k) {
  Csr<T> a;
  a.m = a.n = m;
  a.rp.resize(m + 1);
  a.ci.resize(size_t(m) * k);
  a.v.resize(size_t(m) * k);
  for (int i = 0; i <= m; ++i) a.rp[i] = i * k;
  for (size_t j = 0; j < size_t(m) * k; ++j) {
    a.ci[j] = int(mix(j) % uint64_t(m));
    a.v[j] = T(unit(mix(j ^ 0xabcdef)) - 0.5);
  }
  return a;
}

// The kmer generator's graph: chain position t, vertex sigma(t); identity sigma = chain order.
template <class T>
Csr<T> kmer(int n, bool chain_order) {
  std::vector<int> sigma(n), inv(n);
  std::iota(sigma.begin(), sigma.end(), 0);
  if (!chain_order) std::shuffle(sigma.begin(), sigma.end(), std::mt19937_64(7));
  for (int t = 0; t < n; ++t) inv[sigma[t]] = t;
  uint64_t pow2 = 1;
  while (pow2 < uint64_t(n)) pow2 <<= 1;
  const uint64_t mask[2] = {mix(11) & (pow2 - 1), mix(12) & (pow2 - 1)};
  const double pb[2] = {0.2, 0.1};
  auto chain = [&](uint64_t s) {
    return s % 2 == 0 || s + 2 >= uint64_t(n) || unit(mix(s * 3 + 1)) >= 0.2;
  };
  Csr<T> a;
  a.m = a.n = n;
  a.rp.assign(n + 1, 0);
  a.ci.reserve(size_t(n) * 23 / 10);
  for (int v = 0; v < n; ++v) {
    const uint64_t t = inv[v];
    int out[4], len = 0;
    if (t > 0 && chain(t - 1)) out[len++] = sigma[t - 1];
    if (t + 1 < uint64_t(n) && chain(t)) out[len++] = sigma[t + 1];
    for (int b = 0; b < 2; ++b) {
      const uint64_t u = t ^ mask[b];
      if (mask[b] <= 1 || u >= uint64_t(n) || (u > t ? u - t : t - u) <= 1) continue;
      if (unit(mix(std::min(t, u) * 7 + 2 + b)) < pb[b]) out[len++] = sigma[u];
    }
    std::sort(out, out + len);
    for (int j = 0; j < len; ++j) {
      a.ci.push_back(out[j]);
      a.v.push_back(T(unit(mix(size_t(v) * 5 + j)) - 0.5));
    }
    a.rp[v + 1] = int(a.ci.size());
  }
  return a;
}

// S column stripes, each a CSR over all rows with global column indices.
template <class T>
std::vector<Csr<T>> stripes(const Csr<T>& a, int S) {
  const int w = (a.n + S - 1) / S;
  std::vector<Csr<T>> s(S);
  for (auto& b : s) {
    b.m = a.m;
    b.n = a.n;
    b.rp.assign(a.m + 1, 0);
  }
  for (int i = 0; i < a.m; ++i)
    for (int j = a.rp[i]; j < a.rp[i + 1]; ++j) s[a.ci[j] / w].rp[i + 1]++;
  for (auto& b : s) {
    for (int i = 0; i < a.m; ++i) b.rp[i + 1] += b.rp[i];
    b.ci.resize(b.rp[a.m]);
    b.v.resize(b.rp[a.m]);
  }
  std::vector<int> fill(S);
  for (int i = 0; i < a.m; ++i) {
    for (int t = 0; t < S; ++t) fill[t] = s[t].rp[i];
    for (int j = a.rp[i]; j < a.rp[i + 1]; ++j) {
      auto& b = s[a.ci[j] / w];
      int& f = fill[a.ci[j] / w];
      b.ci[f] = a.ci[j];
      b.v[f] = a.v[j];
      ++f;
    }
  }
  return s;
}

template <class T>
struct Dev {
  int m, n, nnz;
  int *rp, *ci;
  T* v;
};
template <class T>
Dev<T> upload(const Csr<T>& a) {
  Dev<T> d{a.m, a.n, int(a.ci.size())};
  CK(cudaMalloc(&d.rp, sizeof(int) * (a.m + 1)));
  CK(cudaMalloc(&d.ci, sizeof(int) * std::max<size_t>(1, a.ci.size())));
  CK(cudaMalloc(&d.v, sizeof(T) * std::max<size_t>(1, a.v.size())));
  CK(cudaMemcpy(d.rp, a.rp.data(), sizeof(int) * (a.m + 1), cudaMemcpyHostToDevice));
  CK(cudaMemcpy(d.ci, a.ci.data(), sizeof(int) * a.ci.size(), cudaMemcpyHostToDevice));
  CK(cudaMemcpy(d.v, a.v.data(), sizeof(T) * a.v.size(), cudaMemcpyHostToDevice));
  return d;
}
template <class T>
void release(Dev<T>& d) {
  cudaFree(d.rp);
  cudaFree(d.ci);
  cudaFree(d.v);
}

template <bool CS, class T>
__device__ __forceinline__ T ld(const T* p) {
  if constexpr (CS)
    return __ldcs(p);
  else
    return *p;
}

// One thread a row; CS: the matrix and y are streamed (evict-first), x alone stays in L2.
template <class T, bool CS>
__global__ void rows_kernel(int m, const int* __restrict__ rp, const int* __restrict__ ci,
                            const T* __restrict__ v, const T* __restrict__ x, T* __restrict__ y,
                            T alpha, T beta) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= m) return;
  const int b = ld<CS>(rp + i), e = ld<CS>(rp + i + 1);
  T s = 0;
  for (int j = b; j < e; ++j) s += ld<CS>(v + j) * __ldg(x + ld<CS>(ci + j));
  T out = alpha * s;
  if (beta != T(0)) out += beta * ld<CS>(y + i);
  if constexpr (CS)
    __stcs(y + i, out);
  else
    y[i] = out;
}

// Four lanes a row (full rows of uniform k=8).
template <class T>
__global__ void quad_kernel(int m, const int* __restrict__ rp, const int* __restrict__ ci,
                            const T* __restrict__ v, const T* __restrict__ x, T* __restrict__ y,
                            T alpha, T beta) {
  const int g = blockIdx.x * blockDim.x + threadIdx.x;
  const int i = g / 4, lane = g % 4;
  T s = 0;
  if (i < m)
    for (int j = rp[i] + lane; j < rp[i + 1]; j += 4)
      s += __ldcs(v + j) * __ldg(x + __ldcs(ci + j));
  s += __shfl_down_sync(0xffffffffu, s, 2, 4);
  s += __shfl_down_sync(0xffffffffu, s, 1, 4);
  if (i < m && lane == 0) {
    T out = alpha * s;
    if (beta != T(0)) out += beta * y[i];
    y[i] = out;
  }
}

template <class T>
__global__ void poison(T* y, int m) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < m) y[i] = T(NAN);
}

template <class F>
double median_ms(F&& f, int reps = 15) {
  cudaEvent_t a, b;
  CK(cudaEventCreate(&a));
  CK(cudaEventCreate(&b));
  for (int r = 0; r < 3; ++r) f();
  std::vector<float> t;
  for (int r = 0; r < reps; ++r) {
    f();  // an untimed call of the same body before each timed one
    CK(cudaEventRecord(a));
    f();
    CK(cudaEventRecord(b));
    CK(cudaEventSynchronize(b));
    float ms;
    CK(cudaEventElapsedTime(&ms, a, b));
    t.push_back(ms);
  }
  std::sort(t.begin(), t.end());
  CK(cudaEventDestroy(a));
  CK(cudaEventDestroy(b));
  return t[t.size() / 2];
}

template <class T>
double rel_err(const std::vector<T>& ref, T* dy, int m) {
  std::vector<T> y(m);
  CK(cudaMemcpy(y.data(), dy, sizeof(T) * m, cudaMemcpyDeviceToHost));
  double num = 0, den = 0;
  for (int i = 0; i < m; ++i) {
    const double d = double(y[i]) - double(ref[i]);
    num = std::isfinite(d) ? std::max(num, std::fabs(d)) : INFINITY;
    den = std::max(den, std::fabs(double(ref[i])));
  }
  return num / den;
}

template <class T>
void run(const char* name, const Csr<T>& a, std::vector<int> Ss) {
  const int m = a.m;
  const double nnz = a.ci.size();
  cusparseHandle_t h;
  CS(cusparseCreate(&h));
  Dev<T> d = upload(a);
  T *x, *y;
  CK(cudaMalloc(&x, sizeof(T) * a.n));
  CK(cudaMalloc(&y, sizeof(T) * m));
  std::vector<T> hx(a.n);
  for (int i = 0; i < a.n; ++i) hx[i] = T(unit(mix(i + 99)) - 0.5);
  CK(cudaMemcpy(x, hx.data(), sizeof(T) * a.n, cudaMemcpyHostToDevice));
  const cudaDataType dt = sizeof(T) == 8 ? CUDA_R_64F : CUDA_R_32F;
  auto make_mat = [&](const Dev<T>& b) {
    cusparseSpMatDescr_t A;
    CS(cusparseCreateCsr(&A, b.m, b.n, b.nnz, b.rp, b.ci, b.v, CUSPARSE_INDEX_32I,
                         CUSPARSE_INDEX_32I, CUSPARSE_INDEX_BASE_ZERO, dt));
    return A;
  };
  cusparseDnVecDescr_t X, Y;
  CS(cusparseCreateDnVec(&X, a.n, x, dt));
  CS(cusparseCreateDnVec(&Y, m, y, dt));
  const T one = 1, zero = 0;
  std::vector<void*> bufs;
  auto cusp = [&](cusparseSpMatDescr_t A, const T* beta) {
    size_t sz = 0;
    CS(cusparseSpMV_bufferSize(h, CUSPARSE_OPERATION_NON_TRANSPOSE, &one, A, X, beta, Y, dt,
                               CUSPARSE_SPMV_ALG_DEFAULT, &sz));
    void* buf = nullptr;
    if (sz) CK(cudaMalloc(&buf, sz));
    bufs.push_back(buf);
    return buf;
  };
  cusparseSpMatDescr_t A = make_mat(d);
  void* buf = cusp(A, &zero);
  auto full = [&] {
    CS(cusparseSpMV(h, CUSPARSE_OPERATION_NON_TRANSPOSE, &one, A, X, &zero, Y, dt,
                    CUSPARSE_SPMV_ALG_DEFAULT, buf));
  };
  const int blocks = (m + 255) / 256;
  poison<<<blocks, 256>>>(y, m);
  full();
  std::vector<T> ref(m);
  CK(cudaMemcpy(ref.data(), y, sizeof(T) * m, cudaMemcpyDeviceToHost));
  const double base = median_ms(full);
  const double bytes = nnz * (sizeof(T) + 4) + (m + 1) * 4.0 + 2.0 * m * sizeof(T);
  printf("%s %s rows %d nnz %.0f x %.0f MB | cusparse %.4f ms (%.0f GB/s)\n", name,
         sizeof(T) == 8 ? "double" : "float", m, nnz, a.n * double(sizeof(T)) / 1e6, base,
         bytes / base / 1e6);
  auto report = [&](const char* what, int S, auto&& f) {
    poison<<<blocks, 256>>>(y, m);
    f();
    CK(cudaDeviceSynchronize());
    const double err = rel_err(ref, y, m);
    const double t = median_ms(f);
    printf("  %-22s S=%-3d %.4f ms  x%.3f cusparse  err %.1e\n", what, S, t, base / t, err);
  };
  report("rows (one pass)", 1,
         [&] { rows_kernel<T, false><<<blocks, 256>>>(m, d.rp, d.ci, d.v, x, y, one, zero); });
  report("quad (one pass)", 1, [&] {
    quad_kernel<T><<<(4 * size_t(m) + 255) / 256, 256>>>(m, d.rp, d.ci, d.v, x, y, one, zero);
  });
  for (int S : Ss) {
    auto hs = stripes(a, S);
    std::vector<Dev<T>> ds;
    std::vector<cusparseSpMatDescr_t> As;
    std::vector<void*> sb;
    for (auto& b : hs) {
      ds.push_back(upload(b));
      As.push_back(make_mat(ds.back()));
      sb.push_back(cusp(As.back(), &one));
    }
    hs.clear();
    report("stripes rows cs", S, [&] {
      for (int s = 0; s < S; ++s)
        rows_kernel<T, true>
            <<<blocks, 256>>>(m, ds[s].rp, ds[s].ci, ds[s].v, x, y, one, s ? one : zero);
    });
    report("stripes rows", S, [&] {
      for (int s = 0; s < S; ++s)
        rows_kernel<T, false>
            <<<blocks, 256>>>(m, ds[s].rp, ds[s].ci, ds[s].v, x, y, one, s ? one : zero);
    });
    report("stripes cusparse", S, [&] {
      for (int s = 0; s < S; ++s)
        CS(cusparseSpMV(h, CUSPARSE_OPERATION_NON_TRANSPOSE, &one, As[s], X, s ? &one : &zero, Y,
                        dt, CUSPARSE_SPMV_ALG_DEFAULT, sb[s]));
    });
    for (auto& M : As) cusparseDestroySpMat(M);
    for (auto& b : ds) release(b);
  }
  cusparseDestroySpMat(A);
  for (void* b : bufs) cudaFree(b);
  cusparseDestroyDnVec(X);
  cusparseDestroyDnVec(Y);
  cusparseDestroy(h);
  release(d);
  cudaFree(x);
  cudaFree(y);
  fflush(stdout);
}

int main() {
  int l2 = 0;
  CK(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, 0));
  printf("L2 %d MB\n", l2 >> 20);
  {
    void *p, *q;
    const size_t b = size_t(1) << 30;
    CK(cudaMalloc(&p, b));
    CK(cudaMalloc(&q, b));
    const double t = median_ms([&] { CK(cudaMemcpy(q, p, b, cudaMemcpyDeviceToDevice)); }, 5);
    printf("copy %.0f GB/s\n", 2.0 * b / t / 1e6);
    cudaFree(p);
    cudaFree(q);
  }
  run("uniform 2e7x8", uniform<double>(20000000, 8), {2, 3, 4, 6, 8, 12, 16});
  run("uniform 2e7x8", uniform<float>(20000000, 8), {2, 4, 8});
  run("uniform 1e7x16", uniform<double>(10000000, 16), {2, 4, 8});
  run("kmer 6e7 chain", kmer<double>(60000000, true), {});
  run("kmer 6e7 random", kmer<double>(60000000, false), {4, 16});
  return 0;
}
