// Complex test matrices: a real matrix's pattern and values with random imaginary parts.
#include "kspmv/gen/detail.hpp"
#include "kspmv/gen/generators.hpp"

namespace kspmv::gen {

template <class C>
CsrMatrix<C> with_imaginary_parts(const CsrMatrix<typename C::value_type>& a, std::uint64_t seed) {
  CsrMatrix<C> c;
  c.nrows = a.nrows;
  c.ncols = a.ncols;
  c.row_ptr = a.row_ptr;  // the pattern is shared
  c.col_idx = a.col_idx;
  c.values = make_host_view<C>("kspmv::gen::complex_values", a.values.extent(0));
  for (std::size_t k = 0; k < a.values.extent(0); ++k)  // entry k's own draw: thread-free
    c.values(k) =
        C(a.values(k),
          static_cast<typename C::value_type>(2.0 * detail::unit(detail::hash(seed, k)) - 1.0));
  return c;
}

template CsrMatrix<Kokkos::complex<float>> with_imaginary_parts(const CsrMatrix<float>&,
                                                                std::uint64_t);
template CsrMatrix<Kokkos::complex<double>> with_imaginary_parts(const CsrMatrix<double>&,
                                                                 std::uint64_t);

}  // namespace kspmv::gen
