// Complex values in the CUDA backend, which never sees Kokkos: Complex<R> is two R, real part
// first, as Kokkos::complex<R> (and cuComplex / cuDoubleComplex, CUDA_C_32F / CUDA_C_64F), so the
// facade passes a Kokkos::complex array as a Complex array (core/operator_cast.hpp). Its
// alignment is R's: Kokkos::complex is aligned to its size or not, as Kokkos was configured
// (KOKKOS_ENABLE_COMPLEX_ALIGN), and either is a valid Complex. The arithmetic is the textbook
// one, as Kokkos::complex's. In device code, ldg() is __ldg for every scalar the kernels read
// through the read-only cache (complex values part by part: no 16-byte alignment is assumed), and
// ldcg() is __ldcg likewise.
#pragma once

#include "backends/cuda/dispatch.hpp"
#include "kspmv/core/complex.hpp"

namespace kspmv::cuda {

template <class R>
struct Complex {
  using value_type = R;
  R re = 0, im = 0;

  Complex() = default;
  KSPMV_HOST_DEVICE constexpr Complex(R real, R imag = 0) : re(real), im(imag) {}
  KSPMV_HOST_DEVICE constexpr R real() const { return re; }
  KSPMV_HOST_DEVICE constexpr R imag() const { return im; }
  KSPMV_HOST_DEVICE Complex& operator+=(const Complex& o) {
    re += o.re;
    im += o.im;
    return *this;
  }
};

template <class R>
KSPMV_HOST_DEVICE constexpr Complex<R> operator+(const Complex<R>& a, const Complex<R>& b) {
  return {a.re + b.re, a.im + b.im};
}
template <class R>
KSPMV_HOST_DEVICE constexpr Complex<R> operator*(const Complex<R>& a, const Complex<R>& b) {
  return {a.re * b.re - a.im * b.im, a.re * b.im + a.im * b.re};
}
template <class R>
KSPMV_HOST_DEVICE constexpr bool operator==(const Complex<R>& a, const Complex<R>& b) {
  return a.re == b.re && a.im == b.im;
}
template <class R>
KSPMV_HOST_DEVICE constexpr bool operator!=(const Complex<R>& a, const Complex<R>& b) {
  return !(a == b);
}

#ifdef __CUDACC__
// __ldg(p), for complex values too.
template <class T>
__device__ __forceinline__ T ldg(const T* p) {
  if constexpr (is_complex_v<T>)
    return {__ldg(&p->re), __ldg(&p->im)};
  else
    return __ldg(p);
}
// __ldcg(p): a load through L2 only, of a value another block wrote in this launch (L1 is not
// coherent across blocks).
template <class T>
__device__ __forceinline__ T ldcg(const T* p) {
  if constexpr (is_complex_v<T>)
    return {__ldcg(&p->re), __ldcg(&p->im)};
  else
    return __ldcg(p);
}
#endif

}  // namespace kspmv::cuda
