// Batched CSR of CSR-Partial-Overlap / CSR-Full-Overlap (Zeng & Zou 2023, Sec. 4): the CSR plus
// its batch plan (batch_plan.hpp) in host Views.
#pragma once

#include <array>

#include "kspmv/formats/batch_plan.hpp"
#include "kspmv/formats/csr.hpp"

namespace kspmv {

template <class Scalar>
struct BatchedCsr {
  CsrMatrix<Scalar> csr;  // shares the source's Views
  BatchParams params;
  HostView<BatchInfo> batch_infos;         // Alg. 3 batches, in row order
  HostView<Ordinal> long_row_infos;        // rows longer than params.max_batch_size
  HostView<BigBatchInfo> big_batch_infos;  // Alg. 7 big batches (one stream each)
  // Batch ids grouped by threads per row: batches_by_vector[vector_begin[k], vector_begin[k+1])
  // are the batches with 2^k threads per row (k = 0..5), in row order within a group.
  HostView<Ordinal> batches_by_vector;
  std::array<Ordinal, 7> vector_begin{};
};

// Plans `a` (validated by the caller) with `params`; throws InvalidArgument on bad params.
template <class Scalar>
BatchedCsr<Scalar> make_batched_csr(const CsrMatrix<Scalar>& a, const BatchParams& params = {});

extern template BatchedCsr<float> make_batched_csr(const CsrMatrix<float>&, const BatchParams&);
extern template BatchedCsr<double> make_batched_csr(const CsrMatrix<double>&, const BatchParams&);

}  // namespace kspmv
