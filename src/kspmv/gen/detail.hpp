// Internals shared by the generators: counter-based random numbers, a pseudo-random permutation,
// sampling without replacement, the count-then-fill CSR builder and the threads that run them.
// Not part of the public API.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "kspmv/core/parallel.hpp"
#include "kspmv/formats/csr.hpp"
#include "kspmv/gen/generators.hpp"

namespace kspmv::gen::detail {

// Items per block of the generators' parallel loops.
inline constexpr std::int64_t kGrain = std::int64_t(1) << 14;

// The progress callback of the from_spec call running on this thread (empty: none); a
// ProgressScope sets it for its lifetime: to `progress`, or to the part [from, to] of the
// current one (a generator's last step).
std::function<void(double)>& progress_sink();
class ProgressScope {
 public:
  explicit ProgressScope(std::function<void(double)> progress);
  ProgressScope(double from, double to);
  ~ProgressScope();
  ProgressScope(const ProgressScope&) = delete;
  ProgressScope& operator=(const ProgressScope&) = delete;

 private:
  std::function<void(double)> previous_;
};

// Calls f(i) for every i in [0, n) on the host threads (parallel_blocks); f(i) for distinct i
// must not conflict. The loop's progress goes to the progress sink as [from, to].
template <class F>
void for_each_index(std::int64_t n, const F& f, double from = 0, double to = 0) {
  const std::function<void(double)>& sink = progress_sink();
  parallel_blocks(
      n, kGrain,
      [&](std::int64_t b, std::int64_t e) {
        for (std::int64_t i = b; i < e; ++i) f(i);
      },
      sink && to > from
          ? std::function<void(double)>([&](double x) { sink(from + x * (to - from)); })
          : std::function<void(double)>());
}

inline std::uint64_t splitmix64(std::uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

// A hash of (seed, a, b): the counter that makes every row's random stream independent.
inline std::uint64_t hash(std::uint64_t seed, std::uint64_t a, std::uint64_t b = 0) {
  return splitmix64(splitmix64(seed ^ splitmix64(a)) ^ (b * 0xD1B54A32D192ED03ull));
}

// Uniform double in [0, 1) from the top 53 bits.
inline double unit(std::uint64_t bits) {
  return static_cast<double>(bits >> 11) * 0x1p-53;
}

// splitmix64 stream seeded by (seed, stream): rows, edges and points each get their own.
class Rng {
 public:
  Rng(std::uint64_t seed, std::uint64_t stream) : state_(hash(seed, stream)) {}
  std::uint64_t next() { return splitmix64(state_ += 0x9E3779B97F4A7C15ull); }
  double uniform() { return unit(next()); }
  // Uniform in [0, n) for n <= 2^32 (multiply-shift, bias below 2^-32).
  std::uint64_t below(std::uint64_t n) { return ((next() >> 32) * n) >> 32; }
  template <class S>
  S value() {  // in [-1, 1)
    return static_cast<S>(2.0 * uniform() - 1.0);
  }

 private:
  std::uint64_t state_;
};

// The value of entry (i, j) of a symmetric matrix: the same for (j, i), in [-1, 1).
template <class S>
S symmetric_value(std::uint64_t seed, Ordinal i, Ordinal j) {
  const auto lo = static_cast<std::uint64_t>(i < j ? i : j);
  const auto hi = static_cast<std::uint64_t>(i < j ? j : i);
  return static_cast<S>(2.0 * unit(hash(seed, lo, hi + 1)) - 1.0);
}

// A pseudo-random permutation of [0, n): invertible multiply/xorshift/add rounds on the next
// power of two, cycle-walking back into [0, n).
class Bijection {
 public:
  Bijection(std::uint64_t n, std::uint64_t seed);
  std::uint64_t operator()(std::uint64_t x) const {
    do x = forward_once(x);
    while (x >= n_);
    return x;
  }
  std::uint64_t inverse(std::uint64_t y) const {
    do y = inverse_once(y);
    while (y >= n_);
    return y;
  }

 private:
  static constexpr int kRounds = 3;
  std::uint64_t forward_once(std::uint64_t x) const;
  std::uint64_t inverse_once(std::uint64_t x) const;

  std::uint64_t n_, mask_;
  int bits_, shift_;
  std::uint64_t mul_[kRounds], mul_inv_[kRounds], add_[kRounds];
};

// Writes k distinct values of [0, n) in increasing order to out (k <= n): Floyd's algorithm
// with sorted insertion when k is small against n, selection sampling (Knuth's S) otherwise.
void sample_sorted(Rng& rng, Offset k, Offset n, Ordinal* out);

// Throws InvalidArgument("<what>: <message>") unless ok.
void require(bool ok, const std::string& what, const std::string& message);

// Refuses (MemoryError) a generator whose peak memory, an m x n CSR of `nnz` entries of
// `scalar_bytes` plus `work_bytes` of its own arrays, exceeds the available memory; called before
// any work. `exact` says whether nnz is exact or an estimate (random generators).
void require_memory(const std::string& what, Offset m, Offset n, double nnz, bool exact,
                    std::size_t scalar_bytes, double work_bytes = 0);

// A RowRange of a matrix of m rows, checked: rows [begin, end), and their share of the rows (the
// share of the non-zeros a generator's memory estimate counts).
struct Rows {
  Ordinal begin, end;
  double share;
  Ordinal count() const { return end - begin; }
};
Rows resolve(RowRange range, Ordinal m, const std::string& what);

// Builds rows [first, first + m) of a CSR with n columns in two passes over rows on the host
// threads: length(i) gives row i's non-zero count, fill(i, cols, vals) writes exactly that many
// sorted entries (i the global row). Both must be pure functions of i so that the result does
// not depend on the number of threads, nor on the rows built with it. Progress: 10% for the
// lengths, the rest for the rows.
template <class S, class Length, class Fill>
CsrMatrix<S> build_csr(Ordinal m, Ordinal n, const Length& length, const Fill& fill,
                       Ordinal first = 0) {
  auto row_ptr = make_host_view<Offset>("kspmv::csr::row_ptr", std::size_t(m) + 1);
  Offset* rp = row_ptr.data();
  rp[0] = 0;
  for_each_index(
      m, [&](std::int64_t i) { rp[i + 1] = length(static_cast<Ordinal>(first + i)); }, 0.0, 0.1);
  inclusive_scan(rp + 1, m);
  CsrMatrix<S> a(m, n, rp[m]);
  a.row_ptr = row_ptr;
  Ordinal* col = a.col_idx.data();
  S* val = a.values.data();
  for_each_index(
      m, [&](std::int64_t i) { fill(static_cast<Ordinal>(first + i), col + rp[i], val + rp[i]); },
      0.1, 1.0);
  return a;
}

// with_long_rows on rows [first, first + a.nrows) of a matrix of total_rows rows (`a` holds
// them, global columns): the rows planted among all total_rows, those in the block made long.
template <class S>
CsrMatrix<S> plant_long_rows(const CsrMatrix<S>& a, Ordinal first, Ordinal total_rows, int count,
                             Ordinal max_length, std::uint64_t seed);

}  // namespace kspmv::gen::detail
