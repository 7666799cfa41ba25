// The kspmv-backed Tpetra operator against Tpetra::CrsMatrix::apply on the same distributed
// matrix, on 1, 2, 4, ... MPI ranks, host (and, with a GPU, one rank with the CUDA backend).
//
//   mpiexec -np 4 tpetra_bench [--matrix SPEC]... [--ranks 1,2,4] [--backend host|cuda|all]
//                              [--runs N] [--out DIR]
//
// One launch measures every rank count of --ranks up to the ranks launched, on the first ranks
// (the others wait asleep). Each rank generates its own rows (equal row counts). The two applies
// run alternately after warm-up (A B ... B A in every round), each timed from a barrier to the
// last rank's return (both move the halo with the same Tpetra Import); shown: the mean of the
// two positions' medians over --runs rounds, with the time of the Import alone and of each local
// SpMV alone, and kspmv's result is checked against Tpetra's
// (NaN-poisoned output, relative l2 error <= 1e-12). Writes tpetra_bench.csv, tpetra_bench.json
// and summary.json into --out (rank 0).
#include <mpi.h>

#include <Teuchos_CommHelpers.hpp>
#include <Teuchos_DefaultMpiComm.hpp>
#include <Tpetra_CrsMatrix.hpp>
#include <Tpetra_Import.hpp>
#include <chrono>
#include <cstdio>
#include <limits>
#include <string>
#include <thread>
#include <vector>

#include "kspmv/gen/generators.hpp"
#include "kspmv/interop/tpetra_operator.hpp"
#include "kspmv/registry.hpp"
#include "tools/args.hpp"
#include "tools/common.hpp"
#include "tools/csv.hpp"
#include "tools/tpetra/distributed.hpp"

namespace {

using namespace kspmv;
using namespace kspmv::tools;

// Waits for every rank of `comm` to reach this point, sleeping between polls (a rank left out of
// a measurement must not take the CPU from the ranks measured).
void sleepy_barrier(const Teuchos::Comm<int>& comm) {
  const auto* mpi = dynamic_cast<const Teuchos::MpiComm<int>*>(&comm);
  if (mpi == nullptr) return;
  MPI_Request request;
  MPI_Ibarrier((*mpi->getRawMpiComm())(), &request);
  for (int done = 0;;) {
    MPI_Test(&request, &done, MPI_STATUS_IGNORE);
    if (done) return;
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
}

// The value of `key` in r.
const Value& field(const Record& r, const std::string& key) {
  for (const auto& [k, v] : r)
    if (k == key) return v;
  throw InvalidArgument("tpetra_bench: no field " + key);
}

struct Row {
  Record record;
  bool ok;
};

// One matrix on the ranks of `comm` with one backend.
Row measure(const std::string& spec, const TpetraComm& comm, Backend backend, int runs) {
  const auto a = load_distributed("gen:" + spec, comm);
  Options options;
  options.backend = backend;
  if (backend == Backend::Cuda) options.devices = {kAllDevices};
  TpetraOperator<double> op(a, options);

  const auto x = random_vectors(a->getDomainMap(), 1, 42);
  TpetraVectors y_ours(a->getRangeMap(), 1), y_tpetra(a->getRangeMap(), 1);
  y_ours.putScalar(std::numeric_limits<double>::quiet_NaN());
  op.apply(*x, y_ours);
  a->apply(*x, y_tpetra);
  const double error = max_relative_error(y_ours, y_tpetra);

  // The halo alone, and each local SpMV alone (x already in the column map).
  const auto importer = a->getGraph()->getImporter();
  TpetraVectors x_cols(a->getColMap(), 1);
  if (importer.is_null())
    Tpetra::deep_copy(x_cols, *x);
  else
    x_cols.doImport(*x, *importer, Tpetra::INSERT);
  TpetraVectors y_rows(a->getRowMap(), 1);
  const auto x_view = x_cols.getLocalViewHost(Tpetra::Access::ReadOnly);
  const auto y_view = y_rows.getLocalViewHost(Tpetra::Access::OverwriteAll);
  Operator<double>& local = op.local();

  auto timed = [&](const Body& body) {
    comm->barrier();
    const auto start = std::chrono::steady_clock::now();
    body();
    double ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    double slowest = ms;
    Teuchos::reduceAll(*comm, Teuchos::REDUCE_MAX, ms, Teuchos::outArg(slowest));
    return slowest;
  };
  // kspmv and Tpetra in the order A B ... B A in every round: neither always runs first.
  const Body ours = [&] { op.apply(*x, y_ours); }, theirs = [&] { a->apply(*x, y_tpetra); };
  const Body import = [&] {
    if (!importer.is_null()) x_cols.doImport(*x, *importer, Tpetra::INSERT);
  };
  const Body our_local = [&] { local.apply(1.0, x_view, 0.0, y_view); };
  const Body their_local = [&] { a->localApply(x_cols, y_rows, Teuchos::NO_TRANS, 1.0, 0.0); };
  const std::vector<double> ms = interleaved_median_ms(
      {ours, theirs, import, our_local, their_local, theirs, ours}, runs, 3, timed);
  const double kspmv_ms = (ms[0] + ms[6]) / 2, tpetra_ms = (ms[1] + ms[5]) / 2;

  const bool ok = error <= 1e-12;
  Record r = {{"matrix", spec},
              {"rows", static_cast<long long>(a->getGlobalNumRows())},
              {"nnz", static_cast<long long>(a->getGlobalNumEntries())},
              {"ranks", comm->getSize()},
              {"backend", to_string(backend)},
              {"kernel", to_string(op.local().kernel())},
              {"kspmv_ms", kspmv_ms},
              {"tpetra_ms", tpetra_ms},
              {"kspmv_over_tpetra", kspmv_ms / tpetra_ms},
              {"import_ms", ms[2]},
              {"kspmv_local_ms", ms[3]},
              {"tpetra_local_ms", ms[4]},
              {"halo_entries", static_cast<long long>(a->getColMap()->getGlobalNumElements() -
                                                      a->getDomainMap()->getGlobalNumElements())},
              {"rel_error", error},
              {"ok", ok},
              {"runs", runs}};
  return {r, ok};
}

int run_ranks(const ParsedArgs& in, const TpetraComm& world) {
  const int runs = static_cast<int>(in.integer("runs", 30, 1, 1000000));
  std::vector<std::string> specs = in.all("matrix");
  if (specs.empty())
    specs = {"laplace2d:n=1000", "stencil27:n=60", "uniform:rows=1e6,k=8", "kron:scale=18",
             "fullchip:rows=1e6"};
  std::vector<int> rank_counts;
  for (const std::string& r : split(in.text("ranks", "1,2,4"), ',')) {
    const long n = parse_integer(r, "--ranks");
    if (n < 1) throw UsageError("--ranks: rank counts are at least 1");
    if (n <= world->getSize()) rank_counts.push_back(static_cast<int>(n));
  }
  const std::string which = in.choice("backend", "all", {"host", "cuda", "all"});
  std::vector<Backend> backends;
  if (which != "cuda") backends.push_back(Backend::Host);
  if (which != "host" && cuda_device_count() > 0) backends.push_back(Backend::Cuda);
  if (which == "cuda" && backends.empty()) throw UsageError("--backend cuda: no CUDA device");
  const bool root = world->getRank() == 0;
  const unsigned cores = std::thread::hardware_concurrency();

  std::vector<Record> rows;
  bool all_ok = true;
  if (root)
    std::printf("%-24s %5s %-5s %-10s %9s %9s %7s %9s %9s %9s %8s\n", "matrix", "ranks", "back",
                "kernel", "kspmv_ms", "tpetra_ms", "ratio", "import_ms", "k_local", "t_local",
                "rel_err");
  for (const std::string& spec : specs)
    for (const int ranks : rank_counts)
      for (const Backend backend : backends) {
        // GPUs: one rank (the GPU machine's run); the CUDA backend beside the host on it.
        if (backend == Backend::Cuda && ranks != 1) continue;
        const bool active = world->getRank() < ranks;
        const auto comm = world->split(active ? 0 : 1, world->getRank());
        Row row;
        if (active) row = measure(spec, comm, backend, runs);
        sleepy_barrier(*world);
        if (!root) continue;
        row.record.emplace_back("oversubscribed", ranks > static_cast<int>(cores));
        rows.push_back(row.record);
        all_ok = all_ok && row.ok;
        auto get = [&](const char* key) { return std::get<double>(field(row.record, key).v); };
        std::printf("%-24s %5d %-5s %-10s %9.3f %9.3f %7.3f %9.3f %9.3f %9.3f %8.1e\n",
                    spec.c_str(), ranks, to_string(backend),
                    std::get<std::string>(field(row.record, "kernel").v).c_str(), get("kspmv_ms"),
                    get("tpetra_ms"), get("kspmv_over_tpetra"), get("import_ms"),
                    get("kspmv_local_ms"), get("tpetra_local_ms"), get("rel_error"));
        std::fflush(stdout);
      }
  if (root) {
    std::printf(
        "median of %d runs after 3 warm-up runs, each timed from a barrier to the last "
        "rank; ratio = kspmv / Tpetra::CrsMatrix::apply; %u cores\n",
        runs, cores);
    const Record header = {{"date", utc_date()},
                           {"ranks_launched", world->getSize()},
                           {"cores", static_cast<long long>(cores)},
                           {"cuda_devices", cuda_device_count()},
                           {"runs", runs}};
    if (in.has("out"))
      write_results(in.text("out", "."), "tpetra_bench", header, rows, rows,
                    {"matrix", "ranks", "backend", "kspmv_ms", "tpetra_ms", "kspmv_over_tpetra"});
  }
  int failed = all_ok ? 0 : 1;
  Teuchos::broadcast(*world, 0, 1, &failed);
  return failed;
}

Command command() {
  Command c;
  c.name = "tpetra_bench";
  c.program = "";
  c.description =
      "kspmv's TpetraOperator against Tpetra::CrsMatrix::apply on 1, 2, 4, ... MPI ranks\n"
      "(mpiexec -np N tpetra_bench: every rank count of --ranks up to N, on the first ranks),\n"
      "host, and with a GPU the CUDA backend on one rank. Writes tpetra_bench.csv and\n"
      "tpetra_bench.json into --out.";
  c.options = {
      {"matrix", "SPEC", "a generated matrix (kspmv::gen spec); repeatable"},
      {"ranks", "LIST",
       "rank counts, comma-separated (default 1,2,4; those above the ranks "
       "launched are left out)"},
      {"backend", "host|cuda|all", "the kspmv backend (default all: host, and cuda with a GPU)"},
      {"runs", "N", "timed runs of each apply (default 30)"},
      {"out", "DIR", "write tpetra_bench.csv, tpetra_bench.json and summary.json there"},
  };
  c.run = [](const ParsedArgs& in) {
    return with_mpi([&](const TpetraComm& world) { return run_ranks(in, world); });
  };
  c.extra_help = gen::spec_help;
  return c;
}

}  // namespace

int main(int argc, char** argv) {
  return kspmv::tools::command_main(command(), argc, argv);
}
