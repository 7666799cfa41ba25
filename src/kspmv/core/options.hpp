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

struct Options {
  Backend backend = Backend::Host;
  Kernel kernel = Kernel::Auto;
  Residency residency = Residency::Resident;
  std::vector<int> devices = {0};  // CUDA device ids
  // Kernel::Auto may time its candidates on the first calls of apply and keep the fastest.
  bool autotune = false;
};

}  // namespace kspmv
