// The Tpetra adapter's tests, run by ctest under mpiexec on 1, 2 and 4 ranks. Every rank runs
// every test and the checks compare collective results (global norms), so all ranks pass or fail
// a test together. Rank 0 prints the progress; the other ranks print only their failures.
#include <gtest/gtest.h>

#include <Tpetra_Core.hpp>
#include <cstdio>

namespace {
class FailurePrinter : public ::testing::EmptyTestEventListener {
 public:
  explicit FailurePrinter(int rank) : rank_(rank) {}
  void OnTestPartResult(const ::testing::TestPartResult& r) override {
    if (r.failed())
      std::fprintf(stderr, "[rank %d] %s:%d: failure\n%s\n", rank_,
                   r.file_name() ? r.file_name() : "?", r.line_number(), r.message());
  }

 private:
  int rank_;
};
}  // namespace

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  Tpetra::ScopeGuard tpetra(&argc, &argv);  // MPI and Kokkos, for the whole run
  const int rank = Tpetra::getDefaultComm()->getRank();
  if (rank != 0) {
    auto& listeners = ::testing::UnitTest::GetInstance()->listeners();
    delete listeners.Release(listeners.default_result_printer());
    listeners.Append(new FailurePrinter(rank));
  }
  return RUN_ALL_TESTS();
}
