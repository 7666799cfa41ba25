// What a user can ask of an Operator: backend, kernel, devices, partition, residency.
// Kokkos-free so that the CUDA backend shares the names.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "kspmv/core/types.hpp"

namespace kspmv {

// Host: the Kokkos kernels on the default host execution space (host threads). Cuda: the CUDA
// kernels and cuSPARSE. KokkosDefault ("kokkos-default"): the Kokkos CSR, COO and CSC kernels on
// Kokkos' default execution space, a GPU when Kokkos was built with CUDA (HIP, SYCL), the host
// otherwise.
enum class Backend { Host, Cuda, KokkosDefault };
inline constexpr Backend kBackends[] = {Backend::Host, Backend::Cuda, Backend::KokkosDefault};

// Every kernel once: X(enumerator, command-line name). Which backend runs it, and how, is the
// kernel registry's business (kspmv/registry.hpp); this list only names them.
#define KSPMV_KERNELS(X)                                                                          \
  X(Auto, "auto")                      /* chosen from row statistics (and, optionally, timing) */ \
  X(Csr, "csr")                        /* host: row-block CSR */                                  \
  X(Coo, "coo")                        /* host: COO */                                            \
  X(Csc, "csc")                        /* host: CSC (scatter by columns) */                       \
  X(CsrVector, "csr-vector")           /* CUDA: 1..32 threads per row */                          \
  X(PartialOverlap, "partial-overlap") /* CSR-Partial-Overlap (paper 4) */                        \
  X(FullOverlap, "full-overlap")       /* CSR-Full-Overlap (paper 4): matrix streamed */          \
  X(Seg, "seg")                        /* segSpMV (paper 5) */                                    \
  X(SegR, "seg-r")                     /* segSpMV-r (paper 5): tree reduction of segments */      \
  X(Cusparse, "cusparse")              /* cusparseSpMV CSR_ALG1 */                                \
  X(CusparseAlg2, "cusparse-alg2")     /* cusparseSpMV CSR_ALG2 */                                \
  X(Hbp, "hbp")                        /* hash-based 2D partition (paper 3) */

#define KSPMV_KERNEL_ENUMERATOR(e, name) e,
enum class Kernel { KSPMV_KERNELS(KSPMV_KERNEL_ENUMERATOR) };
#undef KSPMV_KERNEL_ENUMERATOR

// Where the matrix lives during apply (docs/DESIGN.md "Residency"): uploaded once, streamed from
// host memory on every apply, or Auto: resident when it fits in the device memory kspmv may use
// with room for the vectors, streamed otherwise (the host backend has no device: Auto is resident).
enum class Residency { Resident, Streamed, Auto };

// A symmetric permutation P A P^T of a square matrix, found when the Operator is built, that
// clusters the columns each group of rows reads (analysis/ordering.hpp): none; rcm, reverse
// Cuthill-McKee; degree, rows by decreasing length (hubs first); bfs, breadth first from seeds
// every 64 rows, the cells seed by seed (on the device where the CUDA backend runs the matrix
// resident on one device: backends/cuda/bfs_order.cu; rcm and degree are found on the host). Or
// stripes (CUDA, one device, resident; any shape): the non-zeros in column stripes whose part of
// x fits the L2 (Options::stripe_columns), applied stripe after stripe so that each stripe's
// gathers of x hit the L2 (the column blocks of HBP, paper 3, without its hashing); no vector is
// permuted. auto: stripes where the locality model (analysis/locality.hpp) says they move fewer
// bytes, else bfs where it says bfs gains more than the gather of x and the scatter of y cost,
// or none.
enum class Reorder { None, Auto, Rcm, Degree, Bfs, Stripes };

// apply's operation: y = alpha*A*x + beta*y, or y = alpha*A^T*x + beta*y.
enum class Mode { NoTranspose, Transpose };

// The multi-device partition schemes (partitioners/partition_plan.hpp) and exchanges
// (partitioners/exchange.hpp) that Options names. They keep the partitioners' namespace, part.
namespace part {

// Every partition scheme once: X(enumerator, command-line name). The names, the parser, the list
// of schemes and the command line's help are made from it.
#define KSPMV_SCHEMES(X)                                                                         \
  X(Rows, "rows")    /* equal numbers of rows per device */                                      \
  X(NZ, "nz")        /* contiguous row blocks of ~nnz/ndev non-zeros (Gao et al. 2024, §3.1) */ \
  X(TwoNZ, "2nz")    /* two-level NZ: 2*ndev blocks, two streams per device (§3.2) */           \
  X(LRA, "lra")      /* long-row-aware (§3.3) */                                                \
  X(LRARC, "lra-rc") /* long-row-aware + redundant computing (§3.4) */                          \
  X(PCSR, "pcsr")    /* MSREP partial CSR: equal non-zero ranges, rows may be split (Alg. 2) */  \
  X(PCSC, "pcsc")    /* MSREP partial CSC: equal non-zero ranges over columns (Alg. 4) */        \
  X(PCOO, "pcoo")    /* MSREP partial COO, row-sorted: equal non-zero ranges (Alg. 6) */

#define KSPMV_SCHEME_ENUMERATOR(e, name) e,
enum class Scheme { KSPMV_SCHEMES(KSPMV_SCHEME_ENUMERATOR) };
#undef KSPMV_SCHEME_ENUMERATOR

// Every exchange once: X(enumerator, command-line name), as KSPMV_SCHEMES.
//   AllGather: x replicated; each device sends its owned y rows to every other device after
//     their kernel (Gao et al. 2024, Fig. 2); redundant blocks are never sent.
//   Merge: x replicated; every block's alpha*A_b*x summed on device 0, beta applied once there
//     (MSREP Alg. 3/5/7).
//   Halo: each device owns its rows of x and y and receives only the x entries its rows read,
//     found once at set-up (as distributed-memory libraries do).
//   AllGatherX: each device owns its rows of x and y and sends its x entries to every other
//     device before the kernels: Gao et al. 2024's CG(comp) baseline (§5.3).
//   Auto: the fastest of AllGather, Merge and Halo where they apply (core/tuner.hpp).
#define KSPMV_EXCHANGES(X)     \
  X(AllGather, "allgather")    \
  X(Merge, "merge")            \
  X(Halo, "halo")              \
  X(AllGatherX, "allgather-x") \
  X(Auto, "auto")

#define KSPMV_EXCHANGE_ENUMERATOR(e, name) e,
enum class Exchange { KSPMV_EXCHANGES(KSPMV_EXCHANGE_ENUMERATOR) };
#undef KSPMV_EXCHANGE_ENUMERATOR

// "rows", "nz", "2nz", "lra", "lra-rc", "pcsr", "pcsc", "pcoo".
const char* to_string(Scheme s);
// "allgather", "merge", "halo", "allgather-x", "auto".
const char* to_string(Exchange e);
// Throw InvalidArgument listing the valid names.
Scheme parse_scheme(const std::string& name);
Exchange parse_exchange(const std::string& name);
// Every scheme, every exchange, in the lists' order.
std::vector<Scheme> all_schemes();
std::vector<Exchange> all_exchanges();

}  // namespace part

// The lower-case names used on the command line and in results ("csr-vector", ...).
const char* to_string(Backend b);
const char* to_string(Kernel k);
const char* to_string(Residency r);
const char* to_string(Mode m);
const char* to_string(Reorder r);
// Parse a name; throws InvalidArgument listing the valid names.
Backend parse_backend(const std::string& name);
Kernel parse_kernel(const std::string& name);
Residency parse_residency(const std::string& name);
Reorder parse_reorder(const std::string& name);

// Options::devices = {kAllDevices}: every CUDA device present (the host backend: one).
inline constexpr int kAllDevices = -1;

struct Options {
  Backend backend = Backend::Host;
  Kernel kernel = Kernel::Auto;
  Residency residency = Residency::Auto;
  // CUDA device ids (repeats allowed: each entry is one device of the partition). More than one
  // entry runs the matrix partitioned over them (cuda::MultiDeviceSpmv; the host backend
  // emulates that many devices, host::MultiDeviceHost) with the settings below.
  std::vector<int> devices = {0};
  // Kernel::Auto may time its candidates on the first calls of apply and keep the fastest (the
  // tuner's rule, core/tuner.hpp).
  bool autotune = false;
  // Square matrices given on the host: apply runs on P A P^T and takes and returns vectors in
  // the caller's order (x gathered, y scattered around each apply), unless
  // Operator::use_permuted_order asks for the permuted order (kspmv::cg does); distributed
  // vectors and CG's vectors hold the permuted order. A rectangular matrix, or one given in
  // device memory, is refused for rcm, degree and bfs and left as it is by auto.
  Reorder reorder = Reorder::None;
  // Reorder::Stripes: the columns of a stripe; 0: those whose entries of x fill a third of the
  // device's L2 (analysis::stripe_columns).
  Ordinal stripe_columns = 0;
  // Reorder::Auto for an operator applied in the permuted order (Operator::use_permuted_order,
  // as kspmv::cg does): an ordering is kept where the apply on P A P^T alone moves fewer bytes,
  // without the gather of x and the scatter of y that each apply in the caller's order adds.
  bool permuted_applies = false;
  // Multi-device partition scheme (PCSC on the host backend only) and exchange (Auto times
  // AllGather, Merge and Halo once, when the Operator is built, and keeps the fastest); the
  // exchange must apply to the scheme (part::exchange_applies). Names to enums: part::parse_scheme,
  // part::parse_exchange.
  part::Scheme partition = part::Scheme::NZ;
  part::Exchange exchange = part::Exchange::Auto;
  // LRA / LRA+RC row fractions; < 0: Table 3 default of Gao et al. 2024 by mean nnz/row.
  double d_l = -1, d_c = -1;
  // nz: each device's rows in this many blocks, so that the exchange hides under the kernels
  // (part::PartitionOptions::chunks).
  int chunks = 1;
  // CUDA, LRA / LRA+RC with both fractions left at their defaults: the first applies try each
  // of part::tuning_candidates by the tuner's rule (core/tuner.hpp; every apply a correct SpMV)
  // and keep the fastest (the paper tunes d_l, d_c in the first iterations); distributed
  // vectors (Operator::make_vector) end it. false: Table 3 default.
  bool tune_partition = true;
  // CUDA, several devices: use only as many of `devices` (the first k) as pay for themselves by
  // the cost model (part::choose_device_count: the fastest predicted apply among the counts at
  // which the devices keep at least half their share, efficiency >= 1/2; one device when none
  // does); Operator::options() then lists those.
  bool choose_devices = false;
  // CUDA, several devices: each apply (and each iteration of kspmv::cg) replayed as one CUDA
  // graph captured on first use (cuda::MultiDeviceSpmv); false: enqueued step by step.
  bool graphs = true;
  // CUDA, several distinct devices with peer access, Halo exchange: the devices order the
  // exchange by flags they raise in each other's memory, with no event between devices, and
  // each device's apply is replayed on its own (cuda::MultiDeviceSpmv); false: by events.
  bool signals = true;
  // CUDA: time every apply on a caller's stream with events (Timings::kernel_ms), at a cost of a
  // few microseconds of device time per apply. false: only autotuning and applies of host
  // vectors are timed; the others leave kernel_ms and total_ms at 0. (Several devices: every
  // apply is timed, its events order the devices' streams anyway.)
  bool time_applies = false;
  // The most device memory (bytes) a single-device CUDA operator plans to use for the matrix and
  // its work buffers; 0: the free memory of the device. Residency::Auto decides by it, a
  // streamed matrix sizes its ring of buffers to it, and a resident matrix that needs more is
  // refused (MemoryError), so that a smaller GPU can be stood in for.
  std::size_t device_memory_limit = 0;
  // The Operator checks the matrix in O(nnz) when it is built (sizes, a row pointer that starts at
  // 0 and never decreases, column indices in range) and throws InvalidArgument naming the first
  // bad row or entry. false: the caller has checked it (CsrMatrix::validate) and vouches for it.
  bool validate = true;
};

}  // namespace kspmv
