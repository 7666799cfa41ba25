// Complex values (Kokkos::complex<float>, Kokkos::complex<double>): which kernels take them and how
// their sums widen. Kokkos-free: a complex type is told by its imag() member.
#pragma once

#include <type_traits>
#include <utility>

namespace kspmv {

template <class T, class = void>
inline constexpr bool is_complex_v = false;
template <class T>
inline constexpr bool is_complex_v<T, std::void_t<decltype(std::declval<const T&>().imag())>> =
    true;

// The real type of T: T itself, or the type of a complex T's parts.
template <class T, class = void>
struct real_of {
  using type = T;
};
template <class T>
struct real_of<T, std::enable_if_t<is_complex_v<T>>> {
  using type = typename T::value_type;
};
template <class T>
using real_t = typename real_of<T>::type;

}  // namespace kspmv
