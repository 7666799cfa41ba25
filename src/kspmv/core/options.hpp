// What a user can ask of an Operator: backend, kernel, devices, partition, residency.
// Kokkos-free so that the CUDA backend shares the names.
#pragma once

#include <string>
#include <vector>

namespace kspmv {

enum class Backend { Host, Cuda };

enum class Kernel {
  Auto,            // chosen from row statistics (and, optionally, timing)
  Csr,             // host: team-per-row-block CSR
  Coo,             // host: COO
  Csc,             // host: CSC (scatter by columns)
  CsrVector,       // CUDA: 1..32 threads per row
  PartialOverlap,  // CSR-Partial-Overlap (paper 4): batches + memcpy_async pipeline
  FullOverlap,     // CSR-Full-Overlap (paper 4): streamed big batches from pinned host memory
  Seg,             // segSpMV (paper 5)
  SegR,            // segSpMV-r (paper 5): tree reduction of segments
  Cusparse,        // cusparseSpMV CSR_ALG1
  CusparseAlg2,    // cusparseSpMV CSR_ALG2
  Hbp,             // hash-based 2D partition (paper 3)
};

// Where the matrix lives during apply (DESIGN.md "Residency").
enum class Residency { Resident, Streamed };

// The lower-case names used on the command line and in results ("csr-vector", ...).
const char* to_string(Backend b);
const char* to_string(Kernel k);
const char* to_string(Residency r);
// Parse a name; throws InvalidArgument listing the valid names.
Backend parse_backend(const std::string& name);
Kernel parse_kernel(const std::string& name);
Residency parse_residency(const std::string& name);
// Every kernel name, in declaration order.
std::vector<Kernel> all_kernels();

// Options::devices = {kAllDevices}: every CUDA device present (the host backend: one).
inline constexpr int kAllDevices = -1;

struct Options {
  Backend backend = Backend::Host;
  Kernel kernel = Kernel::Auto;
  Residency residency = Residency::Resident;
  // CUDA device ids (repeats allowed: each entry is one device of the partition). More than one
  // entry runs the matrix partitioned over them (cuda::MultiDeviceSpmv; the host backend
  // emulates that many devices, host::MultiDeviceHost) with the settings below.
  std::vector<int> devices = {0};
  // Kernel::Auto may time its candidates on the first calls of apply and keep the fastest.
  bool autotune = false;
  // Multi-device partition scheme: rows, nz, 2nz, lra, lra-rc, pcsr, pcsc (host only), pcoo
  // (partitioners/partition_plan.hpp), and exchange: auto, allgather, merge, halo
  // (partitioners/exchange.hpp; auto times the candidates for a single apply).
  std::string partition = "nz";
  std::string exchange = "auto";
  // LRA / LRA+RC row fractions; < 0: Table 3 default of Gao et al. 2024 by mean nnz/row.
  double d_l = -1, d_c = -1;
  // CUDA, LRA / LRA+RC with both fractions left at their defaults: the first applies try each
  // of part::tuning_candidates (kPartitionTuneTrials applies each, every one a correct SpMV) and
  // keep the fastest (the paper tunes d_l, d_c in the first iterations). false: Table 3 default.
  bool tune_partition = true;
};

inline constexpr int kPartitionTuneTrials = 2;

}  // namespace kspmv
