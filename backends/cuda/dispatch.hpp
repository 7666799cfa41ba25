// Runtime sizes to template arguments, for kernels that keep per-thread arrays in registers or
// reduce over a compile-time group width. Host and device code alike: a kernel picks its lanes
// per batch with them too.
#pragma once

#include <type_traits>
#include <utility>

#ifdef __CUDACC__
#define KSPMV_HOST_DEVICE __host__ __device__
#else
#define KSPMV_HOST_DEVICE
#endif

namespace kspmv::cuda {

namespace detail {
template <class F, int... Ks>
KSPMV_HOST_DEVICE void with_count(int k, F& f, std::integer_sequence<int, Ks...>) {
  ((k == Ks + 1 ? (f(std::integral_constant<int, Ks + 1>{}), true) : false) || ...);
}
}  // namespace detail

// Calls f(std::integral_constant<int, K>{}) with K == k for 1 <= k <= Max; nothing otherwise
// (the caller checks the range).
template <int Max, class F>
KSPMV_HOST_DEVICE void with_count(int k, F&& f) {
  detail::with_count(k, f, std::make_integer_sequence<int, Max>{});
}

// Calls f(std::integral_constant<int, V>{}) with V == lanes for lanes in 1, 2, 4, 8, 16, 32;
// nothing otherwise (the caller checks the value).
template <class F>
KSPMV_HOST_DEVICE void with_lanes(int lanes, F&& f) {
  detail::with_count(lanes, f, std::integer_sequence<int, 0, 1, 3, 7, 15, 31>{});
}

}  // namespace kspmv::cuda
