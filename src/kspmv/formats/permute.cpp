// P A P^T (permute.hpp).
#include "kspmv/formats/permute.hpp"

#include <Kokkos_Complex.hpp>
#include <algorithm>
#include <string>
#include <vector>

#include "kspmv/analysis/ordering.hpp"
#include "kspmv/core/error.hpp"
#include "kspmv/core/parallel.hpp"

namespace kspmv {

namespace {
constexpr std::int64_t kGrain = 1 << 14;  // rows a block of the host threads

// The row pointer of P A P^T into out[0..n]: row i is row perm[i] of A.
template <class Scalar>
void permuted_offsets(const CsrMatrix<Scalar>& a, const std::vector<Ordinal>& perm, Offset* out) {
  const Ordinal n = a.nrows;
  out[0] = 0;
  parallel_blocks(n, kGrain, [&](std::int64_t begin, std::int64_t end) {
    for (std::int64_t i = begin; i < end; ++i) out[i + 1] = a.row_length(perm[i]);
  });
  inclusive_scan(out + 1, n);
}
}  // namespace

template <class Scalar>
CsrMatrix<Scalar> permute_symmetric(const CsrMatrix<Scalar>& a, const std::vector<Ordinal>& perm) {
  if (a.nrows != a.ncols || perm.size() != static_cast<std::size_t>(a.nrows))
    throw InvalidArgument("permute_symmetric: a permutation of " + std::to_string(perm.size()) +
                          " entries for a " + std::to_string(a.nrows) + " x " +
                          std::to_string(a.ncols) + " matrix (P A P^T needs a square one)");
  const Ordinal n = a.nrows;
  const std::vector<Ordinal> inv = analysis::inverse_permutation(perm);
  CsrMatrix<Scalar> b(n, n, a.nnz());
  permuted_offsets(a, perm, b.row_ptr.data());
  parallel_blocks(n, kGrain, [&](std::int64_t begin, std::int64_t end) {
    for (std::int64_t i = begin; i < end; ++i) {
      const Offset from = a.row_ptr(perm[i]), to = b.row_ptr(i), len = b.row_ptr(i + 1) - to;
      for (Offset j = 0; j < len; ++j) {
        b.col_idx(to + j) = inv[a.col_idx(from + j)];
        b.values(to + j) = a.values(from + j);
      }
    }
  });
  return b;
}

template <class Scalar>
void permute_values(const CsrMatrix<Scalar>& a, const std::vector<Ordinal>& perm, const Scalar* in,
                    Scalar* out) {
  std::vector<Offset> to(static_cast<std::size_t>(a.nrows) + 1);
  permuted_offsets(a, perm, to.data());
  parallel_blocks(a.nrows, kGrain, [&](std::int64_t begin, std::int64_t end) {
    for (std::int64_t i = begin; i < end; ++i) {
      const Offset from = a.row_ptr(perm[i]);
      std::copy(in + from, in + from + a.row_length(perm[i]), out + to[i]);
    }
  });
}

template CsrMatrix<float> permute_symmetric(const CsrMatrix<float>&, const std::vector<Ordinal>&);
template CsrMatrix<double> permute_symmetric(const CsrMatrix<double>&, const std::vector<Ordinal>&);
template void permute_values(const CsrMatrix<float>&, const std::vector<Ordinal>&, const float*,
                             float*);
template void permute_values(const CsrMatrix<double>&, const std::vector<Ordinal>&, const double*,
                             double*);
#define KSPMV_INSTANTIATE(S)                                                                 \
  template CsrMatrix<S> permute_symmetric(const CsrMatrix<S>&, const std::vector<Ordinal>&); \
  template void permute_values(const CsrMatrix<S>&, const std::vector<Ordinal>&, const S*, S*);
KSPMV_INSTANTIATE(Kokkos::complex<float>)
KSPMV_INSTANTIATE(Kokkos::complex<double>)
#undef KSPMV_INSTANTIATE

}  // namespace kspmv
