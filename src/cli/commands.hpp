// The tool's commands; each one is declared (options, help) and run from its own file.
#pragma once

#include <string>

#include "kspmv/core/options.hpp"
#include "partitioners/exchange.hpp"
#include "tools/args.hpp"

namespace kspmv::cli {

// The commands are written with the tools library (arguments, loading, JSON) in plain sight.
using namespace tools;  // NOLINT(google-build-using-namespace)

Command demo_command();     // cmd_demo.cpp
Command info_command();     // cmd_info.cpp
Command spmv_command();     // cmd_spmv.cpp
Command convert_command();  // cmd_files.cpp
Command gen_command();      // cmd_files.cpp
Command cg_command();       // cmd_cg.cpp

#ifdef KSPMV_HAVE_TPETRA
// cg --tpetra (tpetra/cmd_cg_tpetra.cpp): Belos CG over the MPI ranks on a TpetraOperator.
int run_cg_tpetra(const ParsedArgs& args, const Options& options, double tol, int max_iters);
#endif

// The "FILE|gen:SPEC" argument, explained once for every command's help.
inline const char* kMatrixArgumentHelp =
    "FILE is a Matrix Market file (.mtx, or gzip-compressed .mtx.gz; - reads standard input);\n"
    "gen:SPEC generates the matrix instead (e.g. gen:laplace2d:n=1024; 'kspmv help gen' lists\n"
    "the specs).";

inline const char* kBackendHelp =
    "host (Kokkos on the host threads), cuda (CUDA kernels and cuSPARSE), kokkos-default (Kokkos "
    "kernels on Kokkos' default execution space: the GPU with a CUDA Kokkos); default host";
inline const char* kDevicesHelp =
    "device ids, comma-separated, or all (default 0); several: the matrix is partitioned over "
    "them (the host backend emulates that many devices)";
// The option's help with every name of KSPMV_SCHEMES / KSPMV_EXCHANGES.
inline std::string partition_help() {
  std::string names;
  for (part::Scheme s : part::all_schemes())
    names += (names.empty() ? "" : ", ") + std::string(part::to_string(s));
  return "multi-device partition: " + names + " (default nz; pcsc: host backend only)";
}
inline std::string exchange_help() {
  std::string names, candidates;
  for (part::Exchange e : part::all_exchanges())
    names += (names.empty() ? "" : ", ") + std::string(part::to_string(e));
  for (part::Exchange e : part::exchange_candidates(part::Scheme::NZ))
    candidates += (candidates.empty() ? "" : ", ") + std::string(part::to_string(e));
  return "multi-device exchange: " + names + " (default auto: the fastest of " + candidates +
         " where they apply)";
}
inline const char* kChunksHelp =
    "nz: blocks per device, so that the exchange hides under the kernels (1-16, default 1)";
inline const char* kChooseDevicesHelp =
    "cuda, several --devices: use as many of them as pay for themselves by the cost model (the "
    "first k; --json lists them)";
inline const char* kReorderHelp =
    "none; rcm (reverse Cuthill-McKee), degree (rows by decreasing length) or bfs (breadth first "
    "from seeds every 64 rows): square matrices run on P A P^T, vectors gathered and scattered in "
    "the caller's order; bfs is found on the GPU with cuda on one device, the others on the host; "
    "stripes (cuda, one device): the non-zeros in column stripes whose part of x fits the L2, no "
    "vector permuted; auto: stripes or bfs where the locality model says they pay, else none "
    "(default none)";
inline const char* kGraphsHelp =
    "cuda, several devices: replay each apply (and CG iteration) as one CUDA graph (default on; "
    "off: enqueue every step from the host)";
inline const char* kSignalsHelp =
    "cuda, several distinct GPUs with peer access, halo exchange: the GPUs order the exchange by "
    "flags in each other's memory, each GPU's apply launched on its own (default on; off: by "
    "events across the GPUs)";

}  // namespace kspmv::cli
