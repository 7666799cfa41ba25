// Matrices and checks shared by the CSR-Partial/Full-Overlap tests (host twin and CUDA).
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "kspmv/formats/batch_plan.hpp"
#include "testing/reference.hpp"
#include "testing/test_matrices.hpp"

namespace kspmv::test {

// Rows of mixed lengths: empty runs, short rows, and long rows (up to 5000 non-zeros) that
// exceed any small max_batch_size, at the start, middle and end.
template <class Scalar>
CsrMatrix<Scalar> mixed_long_rows(Ordinal m, Ordinal n, std::uint64_t seed) {
  std::mt19937_64 gen(seed);
  std::uniform_int_distribution<Ordinal> col(0, n - 1);
  std::uniform_real_distribution<double> val(-1.0, 1.0);
  std::vector<std::tuple<Ordinal, Ordinal, double>> t;
  for (Ordinal i = 0; i < m; ++i) {
    int len = static_cast<int>(gen() % 40);
    if (i == 0 || i == m - 1 || gen() % 50 == 0) len = 500 + static_cast<int>(gen() % 4500);
    if ((i / 100) % 7 == 3) len = 0;  // runs of empty rows
    for (int k = 0; k < len; ++k) t.emplace_back(i, col(gen), val(gen));
  }
  return from_triplets<Scalar>(m, n, t);
}

// The zoo plus long-row matrices.
template <class Scalar>
std::vector<std::pair<std::string, CsrMatrix<Scalar>>> batched_matrices() {
  auto z = zoo<Scalar>();
  z.emplace_back("mixed_long_rows", mixed_long_rows<Scalar>(3000, 4000, 5));
  z.emplace_back("long_rows_only_tall", mixed_long_rows<Scalar>(3, 9000, 6));
  return z;
}

// Parameter sets that exercise many batches, long rows and several (or many) big batches.
inline std::vector<std::pair<std::string, BatchParams>> batch_param_sets() {
  std::vector<std::pair<std::string, BatchParams>> p;
  p.emplace_back("default", BatchParams{});
  BatchParams small;
  small.max_batch_size = 8;
  small.max_batch_rows = 16;
  small.big_batches = 3;
  p.emplace_back("small_batches", small);
  BatchParams odd;
  odd.max_batch_size = 97;
  odd.max_batch_rows = 33;
  odd.big_batches = 7;
  odd.vector_switch = {2, 4, 6, 8, 10};  // every vector size appears
  p.emplace_back("odd_sizes_all_vectors", odd);
  BatchParams ring;  // big batches as small as a ring slot of a tiny device: many of them
  ring.max_batch_size = 64;
  ring.max_batch_rows = 32;
  ring.big_batch_nnz = 300;
  ring.big_batch_rows = 48;
  p.emplace_back("small_big_batches", ring);
  return p;
}

}  // namespace kspmv::test
