// CSR-Vector: V threads per row (V = 1 is CSR-scalar), V from the mean row length (paper 4,
// Table 2), warp-shuffle reduction. Rows longer than a threshold are left to the long-row path
// (long_rows.hpp), so one 1e6-nnz row costs ~1e6/1024 warps spread over the GPU, not one group;
// its chunks run in the first blocks of the same launch (long_rows.cuh).
#pragma once

#include <memory>

#include "backends/cuda/device_spmv.hpp"
#include "backends/cuda/row_profile.hpp"

namespace kspmv::cuda {

struct CsrVectorConfig {
  int vector_size = 0;            // 1, 2, 4, 8, 16 or 32; 0: analysis::csr_vector_lanes of
                                  // the rows that are not long
  Offset long_row_threshold = 0;  // rows with more non-zeros go to the long-row path;
                                  // 0: analysis::csr_vector_long_row_threshold(vector_size)
};

// `config` with its automatic fields chosen for the matrix of host row pointer `row_ptr` (m + 1):
// the lanes and long-row threshold make_csr_vector runs with (and csr_spmm's plan, spmm.hpp),
// except that make_csr_vector takes a thread a row for many short rows whose columns are
// clustered (it reads them). Throws InvalidArgument for a bad config.
CsrVectorConfig resolve_csr_vector_config(const Offset* row_ptr, Ordinal m, CsrVectorConfig config);

// `a` is the uploaded matrix (current device), `host` the same matrix on the host (row
// statistics, the clustering of the columns and the long-row plan). Throws InvalidArgument for a
// bad config. `stream`: null uploads the long-row plan synchronously (the kernel is ready on
// return), another enqueues it there (the kernel is ready once `stream` has passed it).
template <class Scalar>
std::unique_ptr<DeviceSpmv<Scalar>> make_csr_vector(std::shared_ptr<const DeviceCsr<Scalar>> a,
                                                    const CsrPointers<Scalar>& host,
                                                    CsrVectorConfig config = {},
                                                    cudaStream_t stream = nullptr);

// The same planned from the row profile computed on the device (row_profile.hpp), for a matrix
// whose row pointer is in device memory only: the automatic lanes and long-row threshold, the
// long rows found there. No pass over the rows on the host. The long-row plan is uploaded on
// DevicePlanInput::stream (synchronously when it is null).
template <class Scalar>
std::unique_ptr<DeviceSpmv<Scalar>> make_csr_vector(std::shared_ptr<const DeviceCsr<Scalar>> a,
                                                    const DevicePlanInput& in);

}  // namespace kspmv::cuda
