// Value refresh on a fixed pattern (update_values) on the host: every host format through
// ValueRefresh, run by host::spmv as the host Operator runs it, and the multi-device emulation.
// Each is built, applied, refreshed with new random values of the same pattern (twice), and
// applied again against the oracle on the new values, y NaN-poisoned when beta == 0; alpha == 0
// runs after a refresh to NaN values (A must stay unread). The plan (every array that does not
// hold values) must not change, nor the caller's values array.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "backends/kokkos/batched_csr_spmv.hpp"
#include "backends/kokkos/hbp_spmv.hpp"
#include "backends/kokkos/multi_device.hpp"
#include "backends/kokkos/segmented_csr_spmv.hpp"
#include "backends/kokkos/spmv.hpp"
#include "batched_test_matrices.hpp"
#include "hbp_test_cases.hpp"
#include "kspmv/formats/value_refresh.hpp"
#include "refresh_test_cases.hpp"

namespace kspmv::test {
namespace {

using refresh::Apply;
using refresh::expect_alpha_zero_ignores;
using refresh::expect_matches;
using refresh::refresh_matrices;
using refresh::unsorted_with_duplicates;
using refresh::with_values;

// Appends the entries of an array to a fingerprint of the plan.
template <class V>
void append(std::vector<long long>& out, const V& v, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) out.push_back(static_cast<long long>(v[i]));
}
template <class T>
void append(std::vector<long long>& out, const HostView<T>& v) {
  append(out, v, v.extent(0));
}
template <class T>
void append(std::vector<long long>& out, const std::vector<T>& v) {
  append(out, v, v.size());
}

// Every array of the formats but their values: the structure and plans a refresh keeps.
template <class S>
std::vector<long long> plan_of(const CsrMatrix<S>& f) {
  std::vector<long long> p;
  append(p, f.row_ptr);
  append(p, f.col_idx);
  p.push_back(f.values.extent(0));
  return p;
}
template <class S>
std::vector<long long> plan_of(const CooMatrix<S>& f) {
  std::vector<long long> p;
  append(p, f.row_idx);
  append(p, f.col_idx);
  p.push_back(f.values.extent(0));
  return p;
}
template <class S>
std::vector<long long> plan_of(const CscMatrix<S>& f) {
  std::vector<long long> p;
  append(p, f.col_ptr);
  append(p, f.row_idx);
  p.push_back(f.values.extent(0));
  return p;
}
template <class S>
std::vector<long long> plan_of(const BatchedCsr<S>& f) {
  std::vector<long long> p = plan_of(f.csr);
  for (std::size_t b = 0; b < f.batch_infos.extent(0); ++b) {
    const BatchInfo& i = f.batch_infos(b);
    p.insert(p.end(), {i.row_begin, i.row_end, i.nnz_begin, i.nnz_end, i.vector_size});
  }
  append(p, f.long_row_infos);
  for (std::size_t b = 0; b < f.big_batch_infos.extent(0); ++b) {
    const BigBatchInfo& i = f.big_batch_infos(b);
    p.insert(p.end(), {i.nnz_begin, i.nnz_end, i.batch_begin, i.batch_end, i.long_begin, i.long_end,
                       i.row_begin, i.row_end});
  }
  append(p, f.batches_by_vector);
  append(p, f.vector_begin, f.vector_begin.size());
  return p;
}
template <class S>
std::vector<long long> plan_of(const SegmentedCsr<S>& f) {
  std::vector<long long> p = {f.seg_length};
  append(p, f.row_seg_ptr);
  append(p, f.col_idx);
  p.push_back(f.values.extent(0));
  return p;
}
template <class S>
std::vector<long long> plan_of(const HbpMatrix<S>& f) {
  std::vector<long long> p = {f.hash.shift, f.hash.fine, f.hash.spread};
  for (const auto* v :
       {&f.block_row, &f.block_col, &f.table_ptr, &f.group_ptr, &f.output_hash, &f.combine_ptr})
    append(p, *v);
  append(p, f.begin_nnz);
  append(p, f.col);
  append(p, f.add_sign);
  p.push_back(static_cast<long long>(f.data.size()));
  return p;
}

// Builds `Format` from `a`, then runs the cases before and after refreshes to two sets of
// random values and one of NaN values, checking the plan and the caller's values each time.
template <class S, class Format, class Build>
void expect_refresh_works(const CsrMatrix<S>& a, const Build& build, const std::string& what) {
  SCOPED_TRACE(what);
  std::uint64_t seed = seg::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  Format f = build(a);
  ValueRefresh<S, Format> refresh(a);
  const auto plan = plan_of(f);
  const std::vector<S> caller(a.values.data(), a.values.data() + a.nnz());
  const Apply<S> apply = [&](S alpha, const S* x, S beta, S* y) {
    host::spmv(alpha, f, x, beta, y);
  };
  expect_matches(apply, a, seed, "before a refresh");
  for (int round = 1; round <= 2; ++round) {
    const auto v = random_vector<S>(a.nnz(), ++seed);
    refresh(f, v.data());
    EXPECT_EQ(plan_of(f), plan) << "refresh " << round;
    expect_matches(apply, with_values(a, v), seed, "after refresh " + std::to_string(round));
  }
  const auto poison = nan_vector<S>(a.nnz());
  refresh(f, poison.data());
  expect_alpha_zero_ignores(apply, with_values(a, poison), seed);
  EXPECT_EQ(plan_of(f), plan);
  EXPECT_TRUE(std::equal(caller.begin(), caller.end(), a.values.data()))
      << "the caller's values array was written";
}

template <class S>
class Refresh : public ::testing::Test {};
using Scalars = ::testing::Types<float, double>;
TYPED_TEST_SUITE(Refresh, Scalars);

TYPED_TEST(Refresh, CsrCooAndCscKeepTheirStructure) {
  using S = TypeParam;
  for (const auto& [name, a] : refresh_matrices<S>()) {
    expect_refresh_works<S, CsrMatrix<S>>(
        a, [](const CsrMatrix<S>& m) { return m; }, "csr " + name);
    expect_refresh_works<S, CooMatrix<S>>(
        a, [](const CsrMatrix<S>& m) { return to_coo(m); }, "coo " + name);
    expect_refresh_works<S, CscMatrix<S>>(
        a, [](const CsrMatrix<S>& m) { return to_csc(m); }, "csc " + name);
  }
}

// The CSR kernel shares the caller's matrix: a refresh gives it values of its own and leaves the
// caller's row_ptr and col_idx shared.
TYPED_TEST(Refresh, CsrGetsValuesOfItsOwnAndKeepsSharingThePattern) {
  using S = TypeParam;
  const auto a = random_matrix<S>(50, 60, 4, 3);
  CsrMatrix<S> f = a;
  ValueRefresh<S, CsrMatrix<S>> refresh(a);
  const auto v = random_vector<S>(a.nnz(), 4);
  refresh(f, v.data());
  EXPECT_NE(f.values.data(), a.values.data());
  EXPECT_EQ(f.row_ptr.data(), a.row_ptr.data());
  EXPECT_EQ(f.col_idx.data(), a.col_idx.data());
  const S* own = f.values.data();
  refresh(f, v.data());
  EXPECT_EQ(f.values.data(), own) << "a second refresh allocated again";
}

TYPED_TEST(Refresh, BatchedCsrKeepsItsBatchesAndLongRows) {
  using S = TypeParam;
  auto matrices = batched_matrices<S>();
  matrices.emplace_back("unsorted_with_duplicates", unsorted_with_duplicates<S>(700, 900, 6));
  for (const auto& [name, a] : matrices)
    for (const auto& [pname, p] : batch_param_sets())
      expect_refresh_works<S, BatchedCsr<S>>(
          a, [&p = p](const CsrMatrix<S>& m) { return make_batched_csr(m, p); },
          "batched " + name + " / " + pname);
}

TYPED_TEST(Refresh, SegmentedCsrKeepsItsSegments) {
  using S = TypeParam;
  for (const auto& [name, a] : refresh_matrices<S>())
    for (const int len : seg::seg_lengths())
      expect_refresh_works<S, SegmentedCsr<S>>(
          a, [len](const CsrMatrix<S>& m) { return to_segmented(m, len); },
          "segmented " + name + " seg_length " + std::to_string(len));
}

TYPED_TEST(Refresh, HbpKeepsItsBlocksAndRowOrder) {
  using S = TypeParam;
  auto matrices = hbp::matrices<S>();
  matrices.emplace_back("unsorted_with_duplicates", unsorted_with_duplicates<S>(700, 900, 7));
  for (const auto& [name, a] : matrices)
    for (const auto& p : hbp::params())
      expect_refresh_works<S, HbpMatrix<S>>(
          a,
          [&p = p](const CsrMatrix<S>& m) {
            const auto c = pointers(m);
            return build_hbp(c, p, hbp_sample_hash(c.row_ptr, c.col, c.m, c.n, p));
          },
          "hbp " + name + ", " + hbp::describe(p));
}

// An HBP format of another row order than the hash's cannot be refreshed by rebuilding it.
TEST(RefreshHbp, RefusesAFormatOfAnotherReordering) {
  const auto a = gen::from_spec<double>("kron:scale=10");
  const auto c = pointers(a);
  const HbpParams p;
  HbpMatrix<double> sorted =
      build_hbp(c, p, hbp_sample_hash(c.row_ptr, c.col, c.m, c.n, p), HbpReorder::Sort);
  ValueRefresh<double, HbpMatrix<double>> refresh(a);
  const auto v = random_vector<double>(a.nnz(), 1);
  EXPECT_THROW(refresh(sorted, v.data()), InvalidArgument);
}

// The maps the refreshes gather through name exactly where each stored value comes from.
TYPED_TEST(Refresh, CscOrderAndHbpSourcesNameEachValuesPosition) {
  using S = TypeParam;
  for (const auto& [name, a] : refresh_matrices<S>()) {
    SCOPED_TRACE(name);
    const CscMatrix<S> csc = to_csc(a);
    const HostView<Offset> order = csc_order(a);
    ASSERT_EQ(order.extent(0), csc.values.extent(0));
    for (std::size_t p = 0; p < order.extent(0); ++p)
      ASSERT_EQ(csc.values(p), a.values(order(p))) << "csc entry " << p;
    const auto c = pointers(a);
    const HbpParams hp{32, 64, 0.5};
    std::vector<Offset> sources;
    const HbpMatrix<S> h = build_hbp(c, hp, hbp_sample_hash(c.row_ptr, c.col, c.m, c.n, hp),
                                     HbpReorder::Hash, &sources);
    ASSERT_EQ(sources.size(), h.data.size());
    std::vector<int> seen(a.nnz(), 0);
    for (std::size_t e = 0; e < sources.size(); ++e) {
      ASSERT_EQ(h.data[e], a.values(sources[e])) << "hbp element " << e;
      ++seen[sources[e]];
    }
    EXPECT_EQ(std::count(seen.begin(), seen.end(), 1), a.nnz()) << "not a permutation";
  }
}

// The host emulation of several devices: each piece takes its range of the new values (pCSC:
// through the CSC order); plan, exchange and traffic unchanged.
TYPED_TEST(Refresh, MultiDeviceEmulationRefreshesEveryPiece) {
  using S = TypeParam;
  using part::Scheme;
  auto matrices = refresh_matrices<S>();
  for (const auto& [name, a] : matrices)
    for (const Scheme s : part::all_schemes())
      for (const host::Exchange e :
           {host::Exchange::AllGather, host::Exchange::Merge, host::Exchange::Halo}) {
        if (!host::exchange_applies(s, e)) continue;
        for (const int nd : {1, 3}) {
          const auto plan = s == Scheme::PCSC ? part::partition_pcsc(to_csc(a).col_ptr.data(),
                                                                     a.nrows, a.ncols, nd)
                                              : part::partition(a.row_ptr.data(), a.nrows, a.ncols,
                                                                part::PartitionOptions{s, nd});
          host::MultiDeviceHost<S> md(a, plan, e);
          const std::string what = name + " " + part::to_string(s) + " " + host::to_string(e) +
                                   " N=" + std::to_string(nd);
          SCOPED_TRACE(what);
          std::uint64_t seed = seg::fresh_seed();
          SCOPED_TRACE("seed " + std::to_string(seed));
          const Apply<S> apply = [&](S alpha, const S* x, S beta, S* y) {
            md.apply(alpha, x, beta, y);
          };
          const auto traffic = md.exchange_bytes();
          std::vector<std::vector<Ordinal>> halo;
          for (int d = 0; d < nd; ++d) halo.push_back(md.halo_columns(d));
          expect_matches(apply, a, seed, "before a refresh");
          for (int round = 1; round <= 2; ++round) {
            const auto v = random_vector<S>(a.nnz(), ++seed);
            md.update_values(v.data());
            expect_matches(apply, with_values(a, v), seed,
                           "after refresh " + std::to_string(round));
          }
          const auto poison = nan_vector<S>(a.nnz());
          md.update_values(poison.data());
          expect_alpha_zero_ignores(apply, with_values(a, poison), seed);
          EXPECT_EQ(md.exchange(), e);
          for (int d = 0; d < nd; ++d) {
            EXPECT_EQ(md.exchange_bytes()[d].bytes_sent, traffic[d].bytes_sent);
            EXPECT_EQ(md.exchange_bytes()[d].bytes_received, traffic[d].bytes_received);
            EXPECT_EQ(md.halo_columns(d), halo[d]);
          }
        }
      }
}

}  // namespace
}  // namespace kspmv::test
