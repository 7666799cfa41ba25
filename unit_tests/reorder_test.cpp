// Options::reorder on the host backend: every ordering gives the y of no ordering (poisoned
// output, random inputs, generator matrices), rank 1 and rank 2, in the caller's order and in
// the permuted one; the orderings are permutations, RCM recovers a scrambled grid's band, Auto's
// model reorders a scrambled grid and leaves a numbered one, and CG converges to the same
// solution with and without a reordering.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "kspmv/analysis/locality.hpp"
#include "kspmv/analysis/ordering.hpp"
#include "kspmv/core/error.hpp"
#include "kspmv/formats/column_stripes.hpp"
#include "kspmv/formats/convert.hpp"
#include "kspmv/formats/permute.hpp"
#include "kspmv/gen/generators.hpp"
#include "kspmv/operator.hpp"
#include "kspmv/solvers/cg.hpp"
#include "testing/reference.hpp"
#include "testing/test_matrices.hpp"

namespace kspmv::test {
namespace {

template <class S>
class ReorderTest : public ::testing::Test {};
using Scalars = ::testing::Types<float, double>;
TYPED_TEST_SUITE(ReorderTest, Scalars);

// A random permutation of [0, n), perm[new] = old.
std::vector<Ordinal> shuffled(Ordinal n, std::uint64_t seed) {
  std::vector<Ordinal> perm(n);
  std::iota(perm.begin(), perm.end(), 0);
  std::mt19937_64 rng(seed);
  std::shuffle(perm.begin(), perm.end(), rng);
  return perm;
}

// A 2D Laplacian whose vertices are numbered at random: no locality left.
template <class S>
CsrMatrix<S> scrambled_grid(Ordinal nx, Ordinal ny) {
  return permute_symmetric(gen::laplace2d<S>(nx, ny), shuffled(nx * ny, 11));
}

template <class S>
std::vector<std::pair<std::string, CsrMatrix<S>>> matrices() {
  return {{"laplace2d", gen::laplace2d<S>(23, 19)}, {"scrambled grid", scrambled_grid<S>(31, 29)},
          {"k-mer", gen::kmer<S>(3000, 5)},         {"kron", gen::kronecker<S>(9, 8, 3)},
          {"rgg", gen::random_geometric<S>(10, 2)}, {"fullchip", gen::fullchip_like<S>(2000, 4)}};
}

bool is_permutation_of_rows(const std::vector<Ordinal>& perm, Ordinal n) {
  std::vector<Ordinal> sorted = perm;
  std::sort(sorted.begin(), sorted.end());
  std::vector<Ordinal> rows(n);
  std::iota(rows.begin(), rows.end(), 0);
  return sorted == rows;
}

// y in the order of perm (entry i is y[perm[i]]).
template <class S>
std::vector<S> gathered(const std::vector<S>& y, const std::vector<Ordinal>& perm) {
  std::vector<S> out(y.size());
  for (std::size_t i = 0; i < y.size(); ++i) out[i] = y[perm[i]];
  return out;
}

constexpr Reorder kOrderings[] = {Reorder::Rcm, Reorder::Degree, Reorder::Bfs, Reorder::Auto};

TYPED_TEST(ReorderTest, EveryOrderingGivesTheYOfNoOrderingInBothOrders) {
  using S = TypeParam;
  for (const auto& [name, a] : matrices<S>()) {
    const Ordinal n = a.nrows;
    const auto x = random_vector<S>(n, 21), y0 = random_vector<S>(n, 22);
    const CsrMatrix<S> at = transpose(a);
    for (const Reorder r : kOrderings) {
      SCOPED_TRACE(name + " " + to_string(r));
      Options o;
      o.reorder = r;
      Operator<S> op(a, o);
      if (r != Reorder::Auto) EXPECT_EQ(op.reorder(), r);
      const auto& perm = op.permutation();
      EXPECT_EQ(perm.empty(), op.reorder() == Reorder::None);
      if (!perm.empty()) EXPECT_TRUE(is_permutation_of_rows(perm, n));
      for (const S beta : {S(0), S(0.5)}) {
        for (const Mode mode : {Mode::NoTranspose, Mode::Transpose}) {
          const CsrMatrix<S>& m = mode == Mode::NoTranspose ? a : at;
          std::vector<S> ref = y0;
          reference::spmv(S(1.5), m, x.data(), beta, ref.data());
          Kokkos::View<const S*, Kokkos::HostSpace> xv(x.data(), n);
          std::vector<S> y = beta == S(0) ? nan_vector<S>(n) : y0;
          op.apply(S(1.5), xv, beta, Kokkos::View<S*, Kokkos::HostSpace>(y.data(), n), mode);
          EXPECT_LE(spmv_error(y, ref, S(1.5), m, x.data(), beta, y0), reference::tolerance<S>());
          if (perm.empty()) continue;
          // The permuted order: x and y0 permuted by the caller, y comes back permuted.
          const auto px = gathered(x, perm);
          std::vector<S> py = beta == S(0) ? nan_vector<S>(n) : gathered(y0, perm);
          op.use_permuted_order(true);
          op.apply(S(1.5), Kokkos::View<const S*, Kokkos::HostSpace>(px.data(), n), beta,
                   Kokkos::View<S*, Kokkos::HostSpace>(py.data(), n), mode);
          op.use_permuted_order(false);
          std::vector<S> back(n);
          for (Ordinal i = 0; i < n; ++i) back[perm[i]] = py[i];
          EXPECT_LE(spmv_error(back, ref, S(1.5), m, x.data(), beta, y0),
                    reference::tolerance<S>());
        }
      }
    }
  }
}

TYPED_TEST(ReorderTest, RankTwoViewsInBothOrders) {
  using S = TypeParam;
  using Block = Kokkos::View<S**, Kokkos::LayoutLeft, Kokkos::HostSpace>;
  const auto a = gen::kmer<S>(2500, 8);
  const Ordinal n = a.nrows;
  constexpr int k = 3;
  for (const Reorder r : {Reorder::Rcm, Reorder::Degree, Reorder::Bfs}) {
    SCOPED_TRACE(to_string(r));
    Options o;
    o.reorder = r;
    Operator<S> op(a, o);
    const auto& perm = op.permutation();
    for (const bool permuted : {false, true}) {
      Block x("x", n, k), y("y", n, k);
      std::vector<std::vector<S>> xs, y0s;
      for (int c = 0; c < k; ++c) {
        xs.push_back(random_vector<S>(n, 30 + c));
        y0s.push_back(random_vector<S>(n, 40 + c));
        for (Ordinal i = 0; i < n; ++i) {
          x(i, c) = xs[c][permuted ? perm[i] : i];
          y(i, c) = y0s[c][permuted ? perm[i] : i];
        }
      }
      op.use_permuted_order(permuted);
      op.apply(S(-1), x, S(2), y);
      for (int c = 0; c < k; ++c) {
        std::vector<S> ref = y0s[c], got(n);
        reference::spmv(S(-1), a, xs[c].data(), S(2), ref.data());
        for (Ordinal i = 0; i < n; ++i) got[permuted ? perm[i] : i] = y(i, c);
        EXPECT_LE(spmv_error(got, ref, S(-1), a, xs[c].data(), S(2), y0s[c]),
                  reference::tolerance<S>())
            << "column " << c << (permuted ? ", permuted order" : ", caller's order");
      }
    }
  }
}

TYPED_TEST(ReorderTest, NewValuesDistributedVectorsAndEmulatedDevices) {
  using S = TypeParam;
  const auto a = scrambled_grid<S>(20, 20);
  const Ordinal n = a.nrows;
  const auto x = random_vector<S>(n, 50);
  for (const std::vector<int> devices : {std::vector<int>{0}, std::vector<int>{0, 0}}) {
    SCOPED_TRACE(std::to_string(devices.size()) + " device(s)");
    Options o;
    o.reorder = Reorder::Rcm;
    o.devices = devices;
    Operator<S> op(a, o);
    // New values in the caller's CSR order.
    CsrMatrix<S> b(a.nrows, a.ncols, a.nnz());
    Kokkos::deep_copy(b.row_ptr, a.row_ptr);
    Kokkos::deep_copy(b.col_idx, a.col_idx);
    const auto values = random_vector<S>(a.nnz(), 51);
    std::copy(values.begin(), values.end(), b.values.data());
    op.update_values(b.values);
    std::vector<S> ref(n), y = nan_vector<S>(n);
    reference::spmv(S(1), b, x.data(), S(0), ref.data());
    op.apply(S(1), x.data(), S(0), y.data());
    EXPECT_LE(spmv_error(y, ref, S(1), b, x.data(), S(0), {}), reference::tolerance<S>());
    // Distributed vectors: upload and download in the caller's order.
    const auto dx = op.make_vector(), dy = op.make_vector();
    op.upload(x.data(), n, dx);
    op.apply(S(1), dx, S(0), dy);
    std::vector<S> got = nan_vector<S>(n);
    op.download(dy, n, got.data());
    EXPECT_LE(spmv_error(got, ref, S(1), b, x.data(), S(0), {}), reference::tolerance<S>());
  }
}

TYPED_TEST(ReorderTest, CgConvergesToTheSameSolution) {
  using S = TypeParam;
  const double tol = std::is_same_v<S, float> ? 1e-5 : 1e-10;
  const auto a = scrambled_grid<S>(30, 25);
  const auto b = random_vector<S>(a.nrows, 60);
  std::vector<S> plain(a.ncols, S(0));
  Operator<S> op_plain(a);
  ASSERT_TRUE(cg(op_plain, b.data(), plain.data(), {tol, 3000}).converged);
  for (const Reorder r : {Reorder::Rcm, Reorder::Degree, Reorder::Auto}) {
    SCOPED_TRACE(to_string(r));
    Options o;
    o.reorder = r;
    Operator<S> op(a, o);
    std::vector<S> x(a.ncols, S(0));
    const CgResult res = cg(op, b.data(), x.data(), {tol, 3000});
    EXPECT_TRUE(res.converged);
    EXPECT_LE(res.relative_residual, 10 * tol);
    EXPECT_FALSE(op.permuted_order());  // cg restores the caller's order
    double dd = 0, xx = 0;
    for (std::size_t i = 0; i < x.size(); ++i) {
      dd += std::pow(double(x[i]) - double(plain[i]), 2);
      xx += double(plain[i]) * double(plain[i]);
    }
    // Both within tol of the solution, measured in the residual: the error is at most cond(A)
    // (~ 400 for this grid) times that.
    EXPECT_LE(std::sqrt(dd / xx), 1e3 * 10 * tol);
  }
}

TEST(ReorderOptions, RectangularAndBadNames) {
  const auto rect = random_matrix<double>(40, 50, 3, 1);
  Options o;
  o.reorder = Reorder::Rcm;
  EXPECT_THROW(Operator<double>(rect, o), InvalidArgument);
  o.reorder = Reorder::Degree;
  EXPECT_THROW(Operator<double>(rect, o), InvalidArgument);
  o.reorder = Reorder::Auto;  // left as it is
  Operator<double> op(rect, o);
  EXPECT_EQ(op.reorder(), Reorder::None);
  EXPECT_TRUE(op.permutation().empty());
  EXPECT_EQ(parse_reorder("rcm"), Reorder::Rcm);
  EXPECT_EQ(parse_reorder("bfs"), Reorder::Bfs);
  EXPECT_EQ(parse_reorder("degree"), Reorder::Degree);
  EXPECT_EQ(parse_reorder("stripes"), Reorder::Stripes);
  EXPECT_THROW(parse_reorder("metis"), InvalidArgument);
}

// Stripes run on one CUDA device with the matrix resident: elsewhere refused whatever the device
// count of the machine, as is a stripe width that nothing would use.
TEST(ReorderOptions, StripesOnTheHostAndStripeColumnsAloneAreRefused) {
  const auto a = random_matrix<double>(40, 50, 3, 1);
  Options o;
  o.reorder = Reorder::Stripes;
  EXPECT_THROW(Operator<double>(a, o), UnsupportedError);
  o.backend = Backend::KokkosDefault;
  EXPECT_THROW(Operator<double>(a, o), UnsupportedError);
  o.backend = Backend::Cuda, o.devices = {0, 0};
  EXPECT_THROW(Operator<double>(a, o), UnsupportedError);
  o.devices = {0}, o.residency = Residency::Streamed;
  EXPECT_THROW(Operator<double>(a, o), UnsupportedError);
  Options w;
  w.stripe_columns = 8;  // with reorder none
  EXPECT_THROW(Operator<double>(a, w), InvalidArgument);
  w.reorder = Reorder::Stripes, w.backend = Backend::Cuda, w.stripe_columns = -1;
  EXPECT_THROW(Operator<double>(a, w), InvalidArgument);
  w.reorder = Reorder::Auto, w.backend = Backend::Host, w.stripe_columns = 8;
  Operator<double> host_auto(a, w);  // auto on the host: no cache known, no stripes
  EXPECT_EQ(host_auto.reorder(), Reorder::None);
}

// The stripes of a matrix hold each entry once, in its column's stripe and its row's order,
// and sources maps them back.
TEST(ReorderStripes, ColumnStripesPartitionTheEntries) {
  const auto a = random_matrix<double>(300, 257, 6, 4);
  const CsrPointers<double> p{a.row_ptr.data(), a.col_idx.data(), a.values.data(), a.nrows,
                              a.ncols};
  for (const Ordinal width : {1, 7, 64, 256, 257, 1000}) {
    SCOPED_TRACE("width " + std::to_string(width));
    std::vector<Offset> sources;
    const auto stripes = column_stripes(p, width, &sources);
    ASSERT_EQ(stripes.size(), std::size_t((a.ncols + width - 1) / width));
    ASSERT_EQ(sources.size(), std::size_t(a.nnz()));
    std::vector<int> seen(a.nnz(), 0);
    std::size_t next = 0;
    for (std::size_t s = 0; s < stripes.size(); ++s) {
      const auto& b = stripes[s];
      ASSERT_EQ(b.m, a.nrows);
      ASSERT_EQ(b.n, a.ncols);
      for (Ordinal i = 0; i < b.m; ++i) {
        Offset previous = -1;
        for (Offset q = b.row_ptr[i]; q < b.row_ptr[i + 1]; ++q, ++next) {
          const Offset from = sources[next];
          ASSERT_GE(from, a.row_ptr(i));
          ASSERT_LT(from, a.row_ptr(i + 1));
          ASSERT_GT(from, previous);  // the row's order kept
          previous = from;
          EXPECT_EQ(b.col[q], a.col_idx(from));
          EXPECT_EQ(b.val[q], a.values(from));
          EXPECT_EQ(b.col[q] / width, Ordinal(s));
          ++seen[from];
        }
      }
    }
    EXPECT_EQ(next, sources.size());
    EXPECT_TRUE(std::all_of(seen.begin(), seen.end(), [](int c) { return c == 1; }));
  }
  EXPECT_THROW(column_stripes(p, 0), InvalidArgument);
  const auto empty = from_triplets<double>(0, 0, {});
  const CsrPointers<double> e{empty.row_ptr.data(), nullptr, nullptr, 0, 0};
  EXPECT_EQ(column_stripes(e, 5).size(), 1u);
}

// A k-mer graph numbered at random: in the caller's order the gather of x and the scatter of y
// through a random permutation cost what bfs saves, in the permuted order (a solver's) bfs pays;
// Options::permuted_applies asks auto for the latter.
TEST(ReorderModel, AutoForThePermutedOrderReordersAKmerGraph) {
  const auto kmer = gen::kmer<double>(200000, 3);
  const auto choose = [](const CsrMatrix<double>& a, bool permuted) {
    return analysis::choose_reorder(a.row_ptr.data(), a.col_idx.data(), a.nrows, Reorder::Auto, 8,
                                    0, permuted);
  };
  EXPECT_EQ(choose(kmer, false).reorder, Reorder::None);
  const auto p = choose(kmer, true);
  EXPECT_EQ(p.reorder, Reorder::Bfs);
  EXPECT_TRUE(p.estimate.pays(true));
  EXPECT_FALSE(p.estimate.pays(false));
  Options o;
  o.reorder = Reorder::Auto, o.permuted_applies = true;
  Operator<double> op(kmer, o);
  EXPECT_EQ(op.reorder(), Reorder::Bfs);
  EXPECT_LT(op.timings().reorder_model, analysis::kReorderShare);
  o.reorder = Reorder::Rcm;  // the option weighs auto's choice only
  EXPECT_THROW(Operator<double>(kmer, o), InvalidArgument);
}

// The model takes stripes where a random pattern's gathers miss and leaves a stencil, whose
// gathers are few, as it is; a stripe is a third of the cache.
TEST(ReorderModel, StripesPayOnARandomPatternAndNotOnAStencil) {
  EXPECT_EQ(analysis::stripe_columns(60u << 20, 8), Ordinal((60u << 20) / 24));
  EXPECT_EQ(analysis::stripe_columns(0, 8), 1);
  const auto noise = random_matrix<double>(60000, 60000, 8, 3);
  const auto grid = gen::laplace2d<double>(250, 250);
  const Ordinal width = 8000;  // 64 KB of x a stripe: 8 stripes
  const auto e = analysis::estimate_stripes(noise.row_ptr.data(), noise.col_idx.data(), noise.nrows,
                                            noise.ncols, 8, width);
  EXPECT_EQ(e.stripes, 8);
  EXPECT_TRUE(e.pays());
  const auto g = analysis::estimate_stripes(grid.row_ptr.data(), grid.col_idx.data(), grid.nrows,
                                            grid.ncols, 8, width);
  EXPECT_FALSE(g.pays());
  const auto one = analysis::estimate_stripes(noise.row_ptr.data(), noise.col_idx.data(),
                                              noise.nrows, noise.ncols, 8, noise.ncols);
  EXPECT_EQ(one.stripes, 1);
  EXPECT_FALSE(one.pays());
}

TEST(ReorderOrderings, RcmRecoversTheBandOfAScrambledGrid) {
  const Ordinal nx = 40;
  const auto a = scrambled_grid<double>(nx, nx);
  const auto bandwidth = [](const CsrMatrix<double>& m) {
    Ordinal w = 0;
    for (Ordinal i = 0; i < m.nrows; ++i)
      for (Offset p = m.row_ptr(i); p < m.row_ptr(i + 1); ++p)
        w = std::max<Ordinal>(w, std::abs(m.col_idx(p) - i));
    return w;
  };
  const auto perm = analysis::rcm_order(a.row_ptr.data(), a.col_idx.data(), a.nrows);
  ASSERT_TRUE(is_permutation_of_rows(perm, a.nrows));
  EXPECT_GT(bandwidth(a), 10 * nx);
  EXPECT_LE(bandwidth(permute_symmetric(a, perm)), 2 * nx);
  const auto deg = analysis::degree_order(a.row_ptr.data(), a.nrows);
  ASSERT_TRUE(is_permutation_of_rows(deg, a.nrows));
  for (std::size_t i = 1; i < deg.size(); ++i)
    EXPECT_GE(a.row_length(deg[i - 1]), a.row_length(deg[i]));
  // Several components (a block-diagonal pattern) are all numbered.
  const auto two = gen::kmer<double>(500, 9);
  EXPECT_TRUE(is_permutation_of_rows(
      analysis::rcm_order(two.row_ptr.data(), two.col_idx.data(), two.nrows), two.nrows));
  const auto rect = random_matrix<double>(4, 9, 3, 1);
  EXPECT_THROW(analysis::rcm_order(rect.row_ptr.data(), rect.col_idx.data(), 4), InvalidArgument);
}

// bfs_order: cells around seeds every 64 rows, each numbered level by level. On a path of 130
// vertices the seeds are 0, 64 and 128; a vertex halfway between two joins the lesser seed.
TEST(ReorderOrderings, BfsNumbersCellsAroundSeedsLevelByLevel) {
  std::vector<std::tuple<Ordinal, Ordinal, double>> t;
  const Ordinal n = 130;
  for (Ordinal i = 0; i + 1 < n; ++i) t.emplace_back(i, i + 1, 1.0), t.emplace_back(i + 1, i, 1.0);
  const auto path = from_triplets<double>(n, n, t);
  std::vector<Ordinal> expected;
  for (Ordinal v = 0; v <= 32; ++v) expected.push_back(v);  // seed 0: levels 0..32
  expected.push_back(64);                                   // seed 64
  for (Ordinal d = 1; d <= 31; ++d) expected.push_back(64 - d), expected.push_back(64 + d);
  expected.push_back(96);   // level 32: 32 went to seed 0
  expected.push_back(128);  // seed 128
  for (Ordinal d = 1; d <= 31; ++d) {
    expected.push_back(128 - d);
    if (d == 1) expected.push_back(129);
  }
  EXPECT_EQ(analysis::bfs_order(path.row_ptr.data(), path.col_idx.data(), n), expected);
  // Several components, some without a first-round seed (a block-diagonal pattern), and a
  // scrambled grid: permutations, every component numbered.
  const auto two = gen::kmer<double>(5000, 9);
  EXPECT_TRUE(is_permutation_of_rows(
      analysis::bfs_order(two.row_ptr.data(), two.col_idx.data(), two.nrows), two.nrows));
  const auto grid = scrambled_grid<double>(40, 40);
  EXPECT_TRUE(is_permutation_of_rows(
      analysis::bfs_order(grid.row_ptr.data(), grid.col_idx.data(), grid.nrows), grid.nrows));
  const auto rect = random_matrix<double>(4, 9, 3, 1);
  EXPECT_THROW(analysis::bfs_order(rect.row_ptr.data(), rect.col_idx.data(), 4), InvalidArgument);
  // Near RCM on a k-mer graph by the model as it counted x's sectors (ordering.hpp: 0.99 at 2e6
  // rows): the matrix, y, and 32 bytes a sector.
  const auto kmer = gen::kmer<double>(200000, 3);
  const double streamed = double(kmer.nnz()) * 12 + (kmer.nrows + 1.0) * 4 + kmer.nrows * 8.0;
  const auto bytes = [&](const std::vector<Ordinal>& perm) {
    return streamed + 32 * analysis::estimate_reorder(kmer.row_ptr.data(), kmer.col_idx.data(),
                                                      kmer.nrows, perm, 8)
                               .x_sectors;
  };
  const double bfs =
      bytes(analysis::bfs_order(kmer.row_ptr.data(), kmer.col_idx.data(), kmer.nrows));
  EXPECT_LT(bfs,
            1.1 * bytes(analysis::rcm_order(kmer.row_ptr.data(), kmer.col_idx.data(), kmer.nrows)));
}

// Vectors move in windows (an eighth of the cache) only where they overflow half the cache, and
// only through a permutation that scatters: the identity gathers directly, as its estimate says.
TEST(ReorderModel, WindowsWhereTheVectorOverflowsHalfTheCacheAndTheOrderScatters) {
  const std::size_t cache = 1 << 20;  // 131072 doubles
  EXPECT_EQ(analysis::permute_window(65536, 8, cache), 0);
  EXPECT_EQ(analysis::permute_window(65537, 8, cache), 16384);
  EXPECT_EQ(analysis::permute_window(65537, 4, cache), 0);
  EXPECT_EQ(analysis::permute_window(1 << 20, 8, 0), 0);
  const auto kmer = gen::kmer<double>(200000, 3);  // 1.6 MB of x
  std::vector<Ordinal> identity(kmer.nrows), random(kmer.nrows);
  std::iota(identity.begin(), identity.end(), 0);
  std::iota(random.begin(), random.end(), 0);
  std::mt19937_64 rng(3);
  std::shuffle(random.begin(), random.end(), rng);
  const auto estimate = [&](const std::vector<Ordinal>& perm, std::size_t c) {
    return analysis::estimate_reorder(kmer.row_ptr.data(), kmer.col_idx.data(), kmer.nrows, perm, 8,
                                      c);
  };
  const auto windowed = estimate(random, cache), direct = estimate(random, 0);
  EXPECT_EQ(windowed.window, 16384);
  EXPECT_EQ(direct.window, 0);
  EXPECT_LT(windowed.permute, direct.permute);
  EXPECT_EQ(windowed.after, direct.after);
  EXPECT_EQ(estimate(identity, cache).window, 0);
  EXPECT_EQ(estimate(random, std::size_t(kmer.nrows) * 8 * 2).window, 0);  // x fits half
}

TEST(ReorderModel, AutoReordersAScrambledGridAndLeavesANumberedOne) {
  const auto grid = gen::laplace2d<double>(200, 200);
  const auto scrambled = scrambled_grid<double>(200, 200);
  Options o;
  o.reorder = Reorder::Auto;
  Operator<double> numbered(grid, o), shuffled_op(scrambled, o);
  EXPECT_EQ(numbered.reorder(), Reorder::None);
  EXPECT_GT(numbered.timings().reorder_model, analysis::kReorderShare);
  EXPECT_EQ(shuffled_op.reorder(), Reorder::Bfs);
  // The caller's order pays for gathering through a random permutation: the gain shows in
  // the permuted apply's bytes (below), the model's ratio counts the gather and scatter too.
  EXPECT_LT(shuffled_op.timings().reorder_model, analysis::kReorderShare);
  EXPECT_GT(shuffled_op.timings().reorder_ms, 0);
  const auto e = analysis::estimate_reorder(scrambled.row_ptr.data(), scrambled.col_idx.data(),
                                            scrambled.nrows, shuffled_op.permutation(), 8);
  EXPECT_TRUE(e.pays());
  EXPECT_LT(e.after, 0.6 * e.before);
  // Where x fits in the cache its gathers hit first, no order moves fewer bytes: auto keeps
  // none (and computes no ordering); explicit orderings are still made as asked.
  const auto choose = [&](Reorder r, std::size_t cache) {
    return analysis::choose_reorder(scrambled.row_ptr.data(), scrambled.col_idx.data(),
                                    scrambled.nrows, r, 8, cache);
  };
  const std::size_t x_bytes = std::size_t(scrambled.nrows) * 8;
  EXPECT_EQ(choose(Reorder::Auto, x_bytes).reorder, Reorder::None);
  EXPECT_TRUE(choose(Reorder::Auto, x_bytes).perm.empty());
  const auto permuted = [&](std::size_t cache) {  // Options::permuted_applies: the same
    return analysis::choose_reorder(scrambled.row_ptr.data(), scrambled.col_idx.data(),
                                    scrambled.nrows, Reorder::Auto, 8, cache, true);
  };
  EXPECT_EQ(permuted(x_bytes).reorder, Reorder::None);
  EXPECT_NE(permuted(x_bytes / 4).reorder, Reorder::None);
  EXPECT_NE(choose(Reorder::Auto, x_bytes / 4).reorder, Reorder::None);
  EXPECT_EQ(choose(Reorder::Rcm, x_bytes).reorder, Reorder::Rcm);
  // A random pattern: no order clusters its columns, auto keeps none.
  const auto noise = random_matrix<double>(50000, 50000, 8, 3);
  EXPECT_EQ(analysis::choose_reorder(noise.row_ptr.data(), noise.col_idx.data(), noise.nrows,
                                     Reorder::Auto, 8)
                .reorder,
            Reorder::None);
}

}  // namespace
}  // namespace kspmv::test
