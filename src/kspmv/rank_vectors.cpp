// The facade's choice of where one rank's vectors live.
#include "kspmv/rank_vectors.hpp"

#include <string>

#include "kspmv/core/error.hpp"
#include "kspmv/registry.hpp"
#ifdef KSPMV_HAVE_CUDA
#include "backends/cuda/rank_vectors.hpp"
#endif

namespace kspmv {

template <class Scalar>
std::unique_ptr<RankVectors<Scalar>> make_rank_vectors(Backend backend, int device) {
  if (backend == Backend::Cuda) {
#ifdef KSPMV_HAVE_CUDA
    return cuda::make_device_rank_vectors<Scalar>(device);
#else
    throw UnsupportedError("rank vectors: this build has no CUDA backend");
#endif
  }
  if (runs_on_device(backend))
    throw UnsupportedError(std::string("rank vectors: not for the ") + to_string(backend) +
                           " backend on a device");
  (void)device;
  return make_host_rank_vectors<Scalar>();
}

template std::unique_ptr<RankVectors<float>> make_rank_vectors(Backend, int);
template std::unique_ptr<RankVectors<double>> make_rank_vectors(Backend, int);

}  // namespace kspmv
