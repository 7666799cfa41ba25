// CG's vectors on one CUDA device or several (core/cg_vectors.hpp): the fused vector kernels of
// Gao et al. 2024's Alg. 1 (with Jacobi, PCG: Saad 2003, Alg. 9.1) on each part's rows, enqueued on
// the operator's stream of each device so that they order themselves with its applies; dot products
// reduced in double by the last block of the kernel that computes them, and across parts by copies
// of one number per part. The scalars and the stop state stay on the devices. Kokkos-free.
#pragma once

#include <cuda_runtime_api.h>

#include <functional>
#include <memory>
#include <vector>

#include "kspmv/core/cg_vectors.hpp"
#include "partitioners/exchange.hpp"

namespace kspmv::cuda {

// One device's share of the vectors.
struct CgPart {
  int device = 0;                // CUDA device
  cudaStream_t stream = {};      // the operator's stream there
  std::vector<part::Span> rows;  // the rows its operations update and its dot products sum
};

// The parts holding x, r, p, q (and, made by `vector` when a preconditioner is loaded, its
// inverse diagonal, laid out as r is). `reduce`: each part holds its own rows and the dot products
// are summed over the parts; otherwise every part holds every row and computes every dot product
// itself (redundantly). upload(host, v) and download(v, host) move n entries of one vector.
// Throws InvalidArgument for more parts than kMaxCgParts or a part with more than
// part::kMaxStreamSlots spans of rows.
template <class S>
struct CgLayout {
  std::vector<CgPart> parts;
  bool reduce = false;
  bool graphs = true;  // each iteration captured once and replayed (Options::graphs)
  DistributedVector<S> x, r, p, q;
  std::function<DistributedVector<S>()> vector;  // one more vector in this layout
  std::function<void(const S*, const DistributedVector<S>&)> upload;
  std::function<void(const DistributedVector<S>&, S*)> download;
};

inline constexpr int kMaxCgParts = 16;

template <class S>
std::unique_ptr<CgVectors<S>> make_device_cg_vectors(CgLayout<S> layout);

extern template std::unique_ptr<CgVectors<float>> make_device_cg_vectors(CgLayout<float>);
extern template std::unique_ptr<CgVectors<double>> make_device_cg_vectors(CgLayout<double>);

}  // namespace kspmv::cuda
