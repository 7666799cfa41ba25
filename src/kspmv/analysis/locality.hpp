// The locality model behind Reorder::Auto: the bytes one apply moves past the L1 cache, with and
// without a symmetric permutation, counting the gathers of x as the distinct 32-byte sectors
// that each group of kLocalityRows consecutive rows reads. Kokkos-free.
#pragma once

#include <cstddef>
#include <vector>

#include "kspmv/core/options.hpp"
#include "kspmv/core/types.hpp"

namespace kspmv::analysis {

// Rows of a group: a block of 128 threads at CSR-Vector's 4 lanes a row, which shares one L1.
inline constexpr Ordinal kLocalityRows = 32;
// The memory transaction of a GPU's L2 and DRAM.
inline constexpr std::size_t kSectorBytes = 32;
// Groups sampled at most (spread evenly over the rows, the count scaled to all of them), so
// that the measure costs a small part of an ordering.
inline constexpr Ordinal kLocalitySamples = Ordinal(1) << 16;
// The permuted apply, gather and scatter included, must move at most this share of the bytes of
// the apply on A for Reorder::Auto to reorder (the model is not calibrated: a margin).
inline constexpr double kReorderShare = 0.95;

// The distinct sectors of x (entries of `value_bytes`) that the groups of rows of P A P^T read,
// summed over the groups: perm[new] = old and inv its inverse, both empty for A itself.
double x_sectors(const Offset* row_ptr, const Ordinal* col, Ordinal n,
                 const std::vector<Ordinal>& perm, const std::vector<Ordinal>& inv,
                 std::size_t value_bytes);

// Bytes of one apply (y = A x, beta = 0) by the model, on an n x n matrix of nnz entries.
struct ReorderEstimate {
  double before = 0;   // on A: the matrix, y, and x's sectors
  double after = 0;    // on P A P^T in the permuted order
  double permute = 0;  // x gathered and y scattered through perm, around each apply
  // The bytes of an apply after reordering: in the caller's order, with the gather and scatter;
  // in the permuted order (a solver that permutes its vectors once), without.
  double bytes(bool permuted = false) const { return after + (permuted ? 0 : permute); }
  // Whether reordering pays (bytes(permuted) <= kReorderShare * before).
  bool pays(bool permuted = false) const { return bytes(permuted) <= kReorderShare * before; }
};
ReorderEstimate estimate_reorder(const Offset* row_ptr, const Ordinal* col, Ordinal n,
                                 const std::vector<Ordinal>& perm, std::size_t value_bytes);

// The ordering `asked` resolves to for an n x n pattern: rcm and degree as asked; auto, the one
// of them with the fewest bytes by the model (in the permuted order when `permuted`, else in the
// caller's: ReorderEstimate::bytes) where it pays, else none (its estimate kept; no
// ordering is computed where even a free x and an in-order gather and scatter would not pay, and
// RCM is not where a one-pass breadth-first order saves no bytes at all).
// cache_bytes (0: not known): the cache that x's gathers hit before memory; where x fits in it,
// each of its sectors reaches memory once whatever the order, so auto keeps none (on an H200,
// kron scale 21's x of 17 MB in a 60 MB L2: RCM, kept by the sector count, was 12% slower).
struct ReorderChoice {
  Reorder reorder = Reorder::None;
  std::vector<Ordinal> perm;  // perm[new] = old; empty for none
  ReorderEstimate estimate;   // of perm (auto: of the best candidate, kept or not)
};
ReorderChoice choose_reorder(const Offset* row_ptr, const Ordinal* col, Ordinal n, Reorder asked,
                             std::size_t value_bytes, std::size_t cache_bytes = 0,
                             bool permuted = false);

// Reorder::Stripes: the columns of a stripe, `asked` where it is positive
// (Options::stripe_columns), else those whose entries of x (value_bytes each) fill a third of a
// cache of cache_bytes (at least one column). Measured on an H200 (60 MB L2, uniform 2e7 rows of 8,
// double, each stripe's product by cuSPARSE, 2026-12-01): stripes of 20 MB 1.34-1.62x cuSPARSE on
// the whole matrix, of 27 MB 1.61x, of 40 MB 1.54x, of 10 MB 0.80-1.11x.
Ordinal stripe_columns(std::size_t cache_bytes, std::size_t value_bytes, Ordinal asked = 0);

// Bytes of one apply by the model (y = A x, beta = 0) on an m-row matrix of n columns, as it is
// (x's sectors counted as in estimate_reorder) and as column stripes of `width` columns, each of
// which streams the matrix's stripe and reads the row pointer, reads and writes y once, and
// reads its part of x once (its gathers hit the cache).
struct StripesEstimate {
  double before = 0, after = 0;
  Ordinal stripes = 1;
  bool pays() const { return stripes > 1 && after <= kReorderShare * before; }
};
StripesEstimate estimate_stripes(const Offset* row_ptr, const Ordinal* col, Ordinal m, Ordinal n,
                                 std::size_t value_bytes, Ordinal width);

}  // namespace kspmv::analysis
