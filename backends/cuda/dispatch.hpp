// Runtime sizes to template arguments, for kernels that keep per-thread arrays in registers or
// reduce over a compile-time group width.
#pragma once

#include <type_traits>
#include <utility>

namespace kspmv::cuda {

namespace detail {
template <class F, int... Ks>
void with_count(int k, F& f, std::integer_sequence<int, Ks...>) {
  ((k == Ks + 1 ? (f(std::integral_constant<int, Ks + 1>{}), true) : false) || ...);
}
}  // namespace detail

// Calls f(std::integral_constant<int, K>{}) with K == k for 1 <= k <= Max; nothing otherwise
// (the caller checks the range).
template <int Max, class F>
void with_count(int k, F&& f) {
  detail::with_count(k, f, std::make_integer_sequence<int, Max>{});
}

// Calls f(std::integral_constant<int, V>{}) with V == lanes for lanes in 1, 2, 4, 8, 16, 32;
// nothing otherwise (the caller checks the value).
template <class F>
void with_lanes(int lanes, F&& f) {
  detail::with_count(lanes, f, std::integer_sequence<int, 0, 1, 3, 7, 15, 31>{});
}

}  // namespace kspmv::cuda
