// kspmv::MpiMultiVector: k vectors distributed over MPI ranks like the rows of a Tpetra Map, each
// rank's entries held where its kspmv backend computes (kspmv/core/rank_vectors.hpp): on the
// rank's GPU for the CUDA backend, in host memory for the host backend. Not a Tpetra object:
// Debian's Tpetra is built on a Serial Kokkos, and a Kokkos CUDA View cannot live in the same
// process, so the entries sit in kspmv's own device memory and Tpetra contributes only the
// plan (its Map here, its Import in MpiOperator). Belos runs on it through
// kspmv/interop/tpetra_belos.hpp (DESIGN.md "Execution", past one process).
#pragma once

#include <TpetraCore_config.h>
#include <Teuchos_RCP.hpp>
#include <Tpetra_Map_decl.hpp>
#include <Tpetra_MultiVector_decl.hpp>
#include <cstdint>
#include <iosfwd>
#include <memory>
#include <vector>

#include "kspmv/core/rank_vectors.hpp"

namespace kspmv {

// What the vectors of one MpiOperator share: the Map, and where and in which order each rank
// keeps its entries.
template <class Scalar>
struct MpiLayout {
  Teuchos::RCP<const Tpetra::Map<>> map;  // the entries' global indices and owners
  std::size_t owned = 0;                  // entries this rank owns (the map's local count)
  std::size_t ghosts = 0;  // entries of other ranks that its rows read (the halo), stored after
                           // the owned ones in every vector; an apply rewrites them in x
  // order[p]: the map's local index of the entry at position p (interior rows first: those that
  // read no ghost); empty where positions are the map's order.
  std::vector<Ordinal> order;
  std::shared_ptr<RankVectors<Scalar>> vectors;  // where the entries live, and their operations
};

template <class Scalar>
class MpiMultiVector {
 public:
  using layout_type = MpiLayout<Scalar>;
  using tpetra_type = Tpetra::MultiVector<Scalar>;

  MpiMultiVector() = default;
  // k vectors of zeros.
  MpiMultiVector(std::shared_ptr<const layout_type> layout, std::size_t k);

  std::size_t num_vectors() const { return columns_.size(); }
  std::size_t local_length() const { return layout_->owned; }
  long long global_length() const;
  const std::shared_ptr<const layout_type>& layout() const { return layout_; }
  // Column j where the rank keeps it: owned entries in layout order, then the ghosts.
  Scalar* column(std::size_t j) const { return columns_.at(j).data(0); }

  // The columns `index` of this multivector, sharing its storage.
  MpiMultiVector view(const std::vector<int>& index) const;
  // k new vectors of zeros of the same layout; a copy of the values (new storage).
  MpiMultiVector clone(std::size_t k) const { return MpiMultiVector(layout_, k); }
  MpiMultiVector copy() const;

  // this_j = a*A_j + b*B_j for every column j (A and B may be this; B not read when b == 0).
  void combine(Scalar a, const MpiMultiVector& A, Scalar b, const MpiMultiVector& B);
  void assign(const MpiMultiVector& A) { combine(Scalar(1), A, Scalar(0), A); }
  void scale(const std::vector<Scalar>& a);
  void fill(Scalar value);
  // this_j = beta*this_j + sum_i alpha*c(i, j)*A_i: c is A.num_vectors() x num_vectors(),
  // column-major with leading dimension ldc (Belos' MvTimesMatAddMv). A must not share storage
  // with this.
  void add_product(Scalar alpha, const MpiMultiVector& A, const Scalar* c, int ldc, Scalar beta);

  // Collective, one allreduce: dot(B)[j] = this_j . B_j; with all_pairs, entry i + j*k of
  // this_i . B_j for every pair (k = num_vectors()).
  std::vector<double> dot(const MpiMultiVector& B, bool all_pairs = false) const;
  // Collective: the norms of the columns (Dot: the two-norm, AbsSum: the one-norm, AbsMax: the
  // largest magnitude).
  std::vector<double> norms(Reduction kind = Reduction::Dot) const;

  // Entry (global index g, column j) uniform in [-1, 1) from (seed, g, j): the same on any
  // number of ranks.
  void randomize(std::uint64_t seed);
  // The values of a Tpetra MultiVector on the layout's map with as many columns, and back.
  void assign_from(const tpetra_type& v);
  void copy_to(tpetra_type& v) const;
  // Every rank's entries, by rank, on `os` (Belos' MvPrint).
  void print(std::ostream& os) const;

 private:
  void check_like(const MpiMultiVector& other, const char* what) const;
  // The host values of column j in map order, and back.
  std::vector<Scalar> download(std::size_t j) const;
  void upload(std::size_t j, const Scalar* in_map_order);

  std::shared_ptr<const layout_type> layout_;
  std::vector<DistributedVector<Scalar>> columns_;  // owned + ghosts entries each
};

#ifdef HAVE_TPETRA_INST_DOUBLE
extern template class MpiMultiVector<double>;
#endif
#ifdef HAVE_TPETRA_INST_FLOAT
extern template class MpiMultiVector<float>;
#endif

}  // namespace kspmv
