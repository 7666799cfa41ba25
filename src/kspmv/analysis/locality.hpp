// The locality model behind Reorder::Auto: the bytes one apply moves past the L1 cache, with and
// without a symmetric permutation, counting the gathers of x as the distinct 64-byte atoms
// (pairs of 32-byte sectors) that each group of kLocalityRows consecutive rows reads, each at
// kAtomCost. Kokkos-free.
#pragma once

#include <cstddef>
#include <functional>
#include <vector>

#include "kspmv/core/options.hpp"
#include "kspmv/core/types.hpp"

namespace kspmv::analysis {

// Rows of a group: a block of 128 threads at CSR-Vector's 4 lanes a row, which shares one L1.
inline constexpr Ordinal kLocalityRows = 32;
// The memory transaction of a GPU's L2.
inline constexpr std::size_t kSectorBytes = 32;
// The unit of DRAM: two sectors, which a miss in the L2 fetches.
inline constexpr std::size_t kAtomBytes = 64;
// What an atom of x costs, in bytes streamed at the copy rate: measured on an H200 (double), the
// apply on k-mer 6e7 in its own order (3.58 ms: 103 bytes an atom past its streamed bytes) and
// a gather of 6e7 entries through a random permutation (1.52-1.67 ms on four machines: 93-106
// bytes an entry past its index and output). The bfs-ordered apply (0.86 ms, its atoms
// clustered) then comes at 0.28 of the first's bytes, 0.24 of its time; counting 32-byte
// sectors, the model had said 0.51.
inline constexpr double kAtomCost = 104;
// What a pass of little work an entry costs against the bytes it streams: measured on an H200
// (double), 1.5x for a vector moved in windows (58.5 bytes an entry against 40, permute_window)
// and 1.85x for column stripes past the first (uniform 2e7 x 8 in 8 stripes 2.22 ms; k-mer 2e7
// in 8 stripes 1.66 ms, 1.66x its apply, which the model at one byte a byte had put at 0.77x).
inline constexpr double kPassCost = 2;
// Groups sampled at most (spread evenly over the rows, the count scaled to all of them), so
// that the measure costs a small part of an ordering.
inline constexpr Ordinal kLocalitySamples = Ordinal(1) << 16;
// The permuted apply, gather and scatter included, must move at most this share of the bytes of
// the apply on A for Reorder::Auto to reorder (the model is not calibrated: a margin).
inline constexpr double kReorderShare = 0.95;

// The distinct sectors of x (entries of `value_bytes`) that the groups of rows of P A P^T read,
// summed over the groups: perm[new] = old and inv its inverse, both empty for A itself. (The
// bytes below count their atoms.)
double x_sectors(const Offset* row_ptr, const Ordinal* col, Ordinal n,
                 const std::vector<Ordinal>& perm, const std::vector<Ordinal>& inv,
                 std::size_t value_bytes);

// Bytes of one apply (y = A x, beta = 0) by the model, on an n x n matrix of nnz entries.
struct ReorderEstimate {
  double before = 0;     // on A: the matrix, y, and x's atoms
  double after = 0;      // on P A P^T in the permuted order
  double permute = 0;    // x gathered and y scattered through perm, around each apply
  double x_sectors = 0;  // x's sectors on P A P^T (x_sectors)
  Ordinal window = 0;    // the vectors' permutation in windows of this many entries (0: direct)
  // The bytes of an apply after reordering: in the caller's order, with the gather and scatter;
  // in the permuted order (a solver that permutes its vectors once), without.
  double bytes(bool permuted = false) const { return after + (permuted ? 0 : permute); }
  // Whether reordering pays (bytes(permuted) <= kReorderShare * before).
  bool pays(bool permuted = false) const { return bytes(permuted) <= kReorderShare * before; }
};
// The model's bytes of one apply on A: ReorderEstimate::before.
double apply_bytes(const Offset* row_ptr, const Ordinal* col, Ordinal n, std::size_t value_bytes);
// The window (entries) of a vector permutation in two passes (cuda::WindowedGather) for n
// entries of value_bytes, where they overflow half the cache of cache_bytes: an eighth of that
// cache, which pass 1's reads then stay in; 0 (one direct gather) where they fit or cache_bytes
// is 0 (not known). On an H200 (60 MB L2), 6e7 doubles through a random permutation
// (permute_bench): one gather 1.522 ms, one scatter 3.647 ms; in windows of a half, a quarter, an
// eighth and a sixteenth of the L2 0.958, 0.872, 0.852 and 0.860 ms (the scatter in windows of an
// eighth 0.852): 58.5 bytes an entry at the copy rate against the 40 its passes stream.
Ordinal permute_window(Ordinal n, std::size_t value_bytes, std::size_t cache_bytes);
// The estimate of perm (inv its inverse) for A of `before` bytes (apply_bytes), its vectors
// moved in windows (permute_window) where that moves fewer bytes than a direct gather.
ReorderEstimate estimate_reorder(const Offset* row_ptr, const Ordinal* col, Ordinal n,
                                 const std::vector<Ordinal>& perm, const std::vector<Ordinal>& inv,
                                 std::size_t value_bytes, double before,
                                 std::size_t cache_bytes = 0);
ReorderEstimate estimate_reorder(const Offset* row_ptr, const Ordinal* col, Ordinal n,
                                 const std::vector<Ordinal>& perm, std::size_t value_bytes,
                                 std::size_t cache_bytes = 0);
// A's columns count as clustered where x's sectors (x_sectors) are fewer than this share of its
// entries: CSR-Vector's thread a row, and reorder_can_pay's test, measure the same.
inline constexpr double kClusteredSectors = 0.5;
// Reorder::Auto's test before it computes an ordering: whether even the least x any order could
// read (once where x fits in the cache of cache_bytes, as A's apply reads it then; none at all
// otherwise) and the cheapest gather and scatter (none in the permuted order) would pay; `bound`
// gets those bytes (and A's x_sectors), its `after` A's own where A's columns are clustered. Where
// x fits in the cache, each of its sectors reaches memory once whatever the order, so Auto keeps
// none (on an H200, kron scale 21's x of 17 MB in a 60 MB L2: RCM, kept by the sector count, was
// 12% slower). Where A's columns are clustered (a stencil, a mesh numbered well), no ordering was
// worth its set-up: on an H200, bfs computed on stencil7 256^3 and rgg scale 23 in the permuted
// order moved 1.00 and 1.02 of A's bytes by the model (set-up 0.4 and 0.7 s).
bool reorder_can_pay(const Offset* row_ptr, const Ordinal* col, Ordinal n, std::size_t value_bytes,
                     std::size_t cache_bytes, bool permuted, ReorderEstimate& bound);

// The ordering `asked` resolves to for an n x n pattern: rcm, degree and bfs as asked; auto, bfs
// where reorder_can_pay and the model says it pays (in the permuted order when `permuted`, else
// in the caller's: ReorderEstimate::bytes), else none (its estimate kept). cache_bytes (0: not
// known): the cache that x's gathers hit before memory. Auto weighs bfs alone: as good as RCM
// by the model (ordering.hpp) in a fraction of its time and on the device, where degree was
// never kept (on an H200 it lost on kron, FullChip-like and rgg, 0.71-0.98x none permuted).
struct ReorderChoice {
  Reorder reorder = Reorder::None;
  std::vector<Ordinal> perm;  // perm[new] = old; empty for none
  ReorderEstimate estimate;   // of perm (auto: of the best candidate, kept or not)
};
// `bfs`, where given, finds bfs's permutation (the Operator's on the CUDA device); else
// bfs_order on the host.
ReorderChoice choose_reorder(const Offset* row_ptr, const Ordinal* col, Ordinal n, Reorder asked,
                             std::size_t value_bytes, std::size_t cache_bytes = 0,
                             bool permuted = false,
                             const std::function<std::vector<Ordinal>()>& bfs = {});

// Reorder::Stripes: the columns of a stripe, `asked` where it is positive
// (Options::stripe_columns), else those whose entries of x (value_bytes each) fill a third of a
// cache of cache_bytes (at least one column). Measured on an H200 (60 MB L2, uniform 2e7 rows of 8,
// double, each stripe's product by cuSPARSE, 2026-12-01): stripes of 20 MB 1.34-1.62x cuSPARSE on
// the whole matrix, of 27 MB 1.61x, of 40 MB 1.54x, of 10 MB 0.80-1.11x.
Ordinal stripe_columns(std::size_t cache_bytes, std::size_t value_bytes, Ordinal asked = 0);

// Bytes of one apply by the model (y = A x, beta = 0) on an m-row matrix of n columns, as it is
// (x's atoms counted as in estimate_reorder) and as column stripes of `width` columns, each of
// which streams the matrix's stripe and reads the row pointer, reads and writes y once (each
// stripe past the first at kPassCost), and reads its part of x once (its gathers hit the cache).
struct StripesEstimate {
  double before = 0, after = 0;
  Ordinal stripes = 1;
  bool pays() const { return stripes > 1 && after <= kReorderShare * before; }
};
StripesEstimate estimate_stripes(const Offset* row_ptr, const Ordinal* col, Ordinal m, Ordinal n,
                                 std::size_t value_bytes, Ordinal width);

}  // namespace kspmv::analysis
