// Generator internals: the permutation, sampling without replacement, argument checks.
#include "kspmv/gen/detail.hpp"

#include <algorithm>
#include <cstdio>
#include <limits>
#include <utility>

#include "kspmv/core/error.hpp"

namespace kspmv::gen::detail {

namespace {
// Inverse of an odd number modulo 2^64 (Newton iteration, 6 steps double the correct bits).
std::uint64_t odd_inverse(std::uint64_t a) {
  std::uint64_t x = a;
  for (int i = 0; i < 6; ++i) x *= 2 - a * x;
  return x;
}
}  // namespace

Bijection::Bijection(std::uint64_t n, std::uint64_t seed) : n_(n), bits_(0) {
  while (bits_ < 64 && (std::uint64_t(1) << bits_) < n) ++bits_;
  mask_ = bits_ == 64 ? ~std::uint64_t(0) : (std::uint64_t(1) << bits_) - 1;
  shift_ = bits_ / 2 + 1;
  for (int r = 0; r < kRounds; ++r) {
    mul_[r] = hash(seed, 0xB1, r) | 1;
    mul_inv_[r] = odd_inverse(mul_[r]);
    add_[r] = hash(seed, 0xB2, r);
  }
}

std::uint64_t Bijection::forward_once(std::uint64_t x) const {
  for (int r = 0; r < kRounds; ++r) {
    x = (x * mul_[r]) & mask_;
    x ^= x >> shift_;
    x = (x + add_[r]) & mask_;
  }
  return x;
}

std::uint64_t Bijection::inverse_once(std::uint64_t x) const {
  for (int r = kRounds - 1; r >= 0; --r) {
    x = (x - add_[r]) & mask_;
    std::uint64_t y = x;  // undo x ^= x >> shift: each step fixes `shift` more bits
    for (int fixed = shift_; fixed < bits_; fixed += shift_) y = x ^ (y >> shift_);
    x = (y * mul_inv_[r]) & mask_;
  }
  return x;
}

void sample_sorted(Rng& rng, Offset k, Offset n, Ordinal* out) {
  if (k * k <= 4 * n) {  // Floyd: k draws, insertion into the sorted prefix
    Offset size = 0;
    for (Offset j = n - k; j < n; ++j) {
      const auto t = static_cast<Ordinal>(rng.below(static_cast<std::uint64_t>(j) + 1));
      Ordinal* pos = std::lower_bound(out, out + size, t);
      if (pos != out + size && *pos == t) {
        out[size] = static_cast<Ordinal>(j);  // j exceeds every value chosen so far
      } else {
        std::copy_backward(pos, out + size, out + size + 1);
        *pos = t;
      }
      ++size;
    }
    return;
  }
  Offset chosen = 0;  // selection sampling: keep t with probability (k-chosen)/(n-t)
  for (Offset t = 0; t < n && chosen < k; ++t) {
    if (static_cast<Offset>(rng.below(static_cast<std::uint64_t>(n - t))) < k - chosen)
      out[chosen++] = static_cast<Ordinal>(t);
  }
}

std::function<void(double)>& progress_sink() {
  thread_local std::function<void(double)> sink;
  return sink;
}

ProgressScope::ProgressScope(std::function<void(double)> progress)
    : previous_(std::exchange(progress_sink(), std::move(progress))) {}

ProgressScope::ProgressScope(double from, double to)
    : ProgressScope(progress_sink() ? std::function<void(double)>(
                                          [outer = progress_sink(), from, to](double x) {
                                            outer(from + x * (to - from));
                                          })
                                    : std::function<void(double)>()) {}

ProgressScope::~ProgressScope() {
  progress_sink() = std::move(previous_);
}

void require(bool ok, const std::string& what, const std::string& message) {
  if (!ok) throw InvalidArgument(what + ": " + message);
}

Rows resolve(RowRange range, Ordinal m, const std::string& what) {
  const Ordinal end = range.end < 0 ? m : range.end;
  require(range.begin >= 0 && range.begin <= end && end <= m, what,
          "rows [" + std::to_string(range.begin) + ", " + std::to_string(end) +
              ") are not a range of its " + std::to_string(m) + " rows");
  return {range.begin, end, m > 0 ? double(end - range.begin) / m : 1.0};
}

void require_memory(const std::string& what, Offset m, Offset n, double nnz, bool exact,
                    std::size_t scalar_bytes, double work_bytes) {
  const double bytes =
      double(m + 1) * sizeof(Offset) + nnz * double(sizeof(Ordinal) + scalar_bytes) + work_bytes;
  constexpr auto kMax = std::numeric_limits<std::size_t>::max();
  char count[32];
  std::snprintf(count, sizeof count, "%.0f", nnz);
  kspmv::require_memory(bytes < double(kMax) ? static_cast<std::size_t>(bytes) : kMax,
                        what + ": " + std::to_string(m) + " x " + std::to_string(n) +
                            " matrix with " + (exact ? "" : "about ") + count + " non-zeros in " +
                            (scalar_bytes == sizeof(float) ? "float" : "double"));
}

}  // namespace kspmv::gen::detail
