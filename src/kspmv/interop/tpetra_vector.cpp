// kspmv::MpiMultiVector: the columns are rank vectors (core/rank_vectors.hpp); the dot products
// and norms sum each rank's share with one allreduce over the Map's communicator.
#include "kspmv/interop/tpetra_vector.hpp"

#include <Teuchos_CommHelpers.hpp>
#include <Tpetra_Map.hpp>
#include <Tpetra_MultiVector.hpp>
#include <cmath>
#include <ostream>
#include <string>

#include "kspmv/core/error.hpp"
#include "kspmv/interop/tpetra_matrix.hpp"

namespace kspmv {

template <class Scalar>
MpiMultiVector<Scalar>::MpiMultiVector(std::shared_ptr<const layout_type> layout, std::size_t k)
    : layout_(std::move(layout)) {
  if (!layout_ || !layout_->vectors) throw InvalidArgument("MpiMultiVector: no layout");
  const std::size_t n = layout_->owned + layout_->ghosts;
  for (std::size_t j = 0; j < k; ++j) {
    columns_.push_back(layout_->vectors->allocate(n));
    layout_->vectors->fill(columns_.back().data(0), n, Scalar(0));
  }
}

template <class Scalar>
long long MpiMultiVector<Scalar>::global_length() const {
  return static_cast<long long>(layout_->map->getGlobalNumElements());
}

template <class Scalar>
MpiMultiVector<Scalar> MpiMultiVector<Scalar>::view(const std::vector<int>& index) const {
  MpiMultiVector v;
  v.layout_ = layout_;
  for (const int j : index) {
    if (j < 0 || static_cast<std::size_t>(j) >= columns_.size())
      throw InvalidArgument("MpiMultiVector::view: no column " + std::to_string(j) + " of " +
                            std::to_string(columns_.size()));
    v.columns_.push_back(columns_[static_cast<std::size_t>(j)]);
  }
  return v;
}

template <class Scalar>
MpiMultiVector<Scalar> MpiMultiVector<Scalar>::copy() const {
  MpiMultiVector v = clone(num_vectors());
  v.assign(*this);
  return v;
}

template <class Scalar>
void MpiMultiVector<Scalar>::check_like(const MpiMultiVector& other, const char* what) const {
  if (other.layout_ != layout_)
    throw InvalidArgument(std::string("MpiMultiVector::") + what +
                          ": the vectors belong to different operators");
  if (other.num_vectors() != num_vectors())
    throw InvalidArgument(std::string("MpiMultiVector::") + what + ": " +
                          std::to_string(other.num_vectors()) + " vectors, not " +
                          std::to_string(num_vectors()));
}

template <class Scalar>
void MpiMultiVector<Scalar>::combine(Scalar a, const MpiMultiVector& A, Scalar b,
                                     const MpiMultiVector& B) {
  check_like(A, "combine");
  if (b != Scalar(0)) check_like(B, "combine");
  for (std::size_t j = 0; j < num_vectors(); ++j)
    layout_->vectors->combine(a, A.column(j), b, b != Scalar(0) ? B.column(j) : nullptr, column(j),
                              local_length());
}

template <class Scalar>
void MpiMultiVector<Scalar>::scale(const std::vector<Scalar>& a) {
  if (a.size() != num_vectors())
    throw InvalidArgument("MpiMultiVector::scale: " + std::to_string(a.size()) + " factors for " +
                          std::to_string(num_vectors()) + " vectors");
  for (std::size_t j = 0; j < num_vectors(); ++j)
    layout_->vectors->combine(a[j], column(j), Scalar(0), nullptr, column(j), local_length());
}

template <class Scalar>
void MpiMultiVector<Scalar>::fill(Scalar value) {
  for (std::size_t j = 0; j < num_vectors(); ++j)
    layout_->vectors->fill(column(j), local_length(), value);
}

template <class Scalar>
void MpiMultiVector<Scalar>::add_product(Scalar alpha, const MpiMultiVector& A, const Scalar* c,
                                         int ldc, Scalar beta) {
  if (A.layout_ != layout_)
    throw InvalidArgument("MpiMultiVector::add_product: the vectors belong to different operators");
  const std::size_t k = A.num_vectors();
  for (std::size_t j = 0; j < num_vectors(); ++j) {
    Scalar keep = beta;  // the factor of this_j in the first pass
    for (std::size_t i = 0; i < k; ++i) {
      layout_->vectors->combine(alpha * c[i + j * static_cast<std::size_t>(ldc)], A.column(i), keep,
                                column(j), column(j), local_length());
      keep = Scalar(1);
    }
    if (k == 0)
      layout_->vectors->combine(Scalar(0), nullptr, beta, column(j), column(j), local_length());
  }
}

template <class Scalar>
std::vector<double> MpiMultiVector<Scalar>::dot(const MpiMultiVector& B, bool all_pairs) const {
  if (B.layout_ != layout_)
    throw InvalidArgument("MpiMultiVector::dot: the vectors belong to different operators");
  if (!all_pairs) check_like(B, "dot");
  std::vector<const Scalar*> x, y;
  for (std::size_t j = 0; j < (all_pairs ? B.num_vectors() : num_vectors()); ++j)
    for (std::size_t i = 0; i < (all_pairs ? num_vectors() : 1); ++i) {
      x.push_back(column(all_pairs ? i : j));
      y.push_back(B.column(j));
    }
  std::vector<double> mine(x.size()), sum(x.size());
  layout_->vectors->reduce(Reduction::Dot, x.data(), y.data(), static_cast<int>(x.size()),
                           local_length(), mine.data());
  if (!sum.empty())
    Teuchos::reduceAll(*layout_->map->getComm(), Teuchos::REDUCE_SUM, static_cast<int>(sum.size()),
                       mine.data(), sum.data());
  return sum;
}

template <class Scalar>
std::vector<double> MpiMultiVector<Scalar>::norms(Reduction kind) const {
  std::vector<const Scalar*> x;
  for (std::size_t j = 0; j < num_vectors(); ++j) x.push_back(column(j));
  std::vector<double> mine(x.size()), all(x.size());
  layout_->vectors->reduce(kind, x.data(), x.data(), static_cast<int>(x.size()), local_length(),
                           mine.data());
  if (!all.empty())
    Teuchos::reduceAll(*layout_->map->getComm(),
                       kind == Reduction::AbsMax ? Teuchos::REDUCE_MAX : Teuchos::REDUCE_SUM,
                       static_cast<int>(all.size()), mine.data(), all.data());
  if (kind == Reduction::Dot)
    for (double& v : all) v = std::sqrt(v);
  return all;
}

template <class Scalar>
std::vector<Scalar> MpiMultiVector<Scalar>::download(std::size_t j) const {
  const std::size_t n = local_length();
  std::vector<Scalar> stored(n), out(n);
  layout_->vectors->download(column(j), n, stored.data());
  const auto& order = layout_->order;
  if (order.empty()) return stored;
  for (std::size_t p = 0; p < n; ++p) out[static_cast<std::size_t>(order[p])] = stored[p];
  return out;
}

template <class Scalar>
void MpiMultiVector<Scalar>::upload(std::size_t j, const Scalar* in_map_order) {
  const std::size_t n = local_length();
  const auto& order = layout_->order;
  if (order.empty()) {
    layout_->vectors->upload(in_map_order, n, column(j));
    return;
  }
  std::vector<Scalar> stored(n);
  for (std::size_t p = 0; p < n; ++p) stored[p] = in_map_order[order[p]];
  layout_->vectors->upload(stored.data(), n, column(j));
}

template <class Scalar>
void MpiMultiVector<Scalar>::randomize(std::uint64_t seed) {
  const auto& map = *layout_->map;
  std::vector<Scalar> v(local_length());
  for (std::size_t j = 0; j < num_vectors(); ++j) {
    for (std::size_t i = 0; i < v.size(); ++i) {
      v[i] = random_entry<Scalar>(seed, map.getGlobalElement(static_cast<int>(i)), j);
    }
    upload(j, v.data());
  }
}

template <class Scalar>
void MpiMultiVector<Scalar>::assign_from(const tpetra_type& v) {
  if (v.getNumVectors() != num_vectors() || !v.getMap()->isSameAs(*layout_->map))
    throw InvalidArgument("MpiMultiVector::assign_from: another map or number of vectors");
  const auto h = v.getLocalViewHost(Tpetra::Access::ReadOnly);
  std::vector<Scalar> col(local_length());
  for (std::size_t j = 0; j < num_vectors(); ++j) {
    for (std::size_t i = 0; i < col.size(); ++i) col[i] = h(i, j);
    upload(j, col.data());
  }
}

template <class Scalar>
void MpiMultiVector<Scalar>::copy_to(tpetra_type& v) const {
  if (v.getNumVectors() != num_vectors() || !v.getMap()->isSameAs(*layout_->map))
    throw InvalidArgument("MpiMultiVector::copy_to: another map or number of vectors");
  const auto h = v.getLocalViewHost(Tpetra::Access::OverwriteAll);
  for (std::size_t j = 0; j < num_vectors(); ++j) {
    const std::vector<Scalar> col = download(j);
    for (std::size_t i = 0; i < col.size(); ++i) h(i, j) = col[i];
  }
}

template <class Scalar>
void MpiMultiVector<Scalar>::print(std::ostream& os) const {
  const auto& comm = *layout_->map->getComm();
  for (int r = 0; r < comm.getSize(); ++r) {
    if (r == comm.getRank()) {
      os << "rank " << r << ": " << local_length() << " of " << global_length() << " entries, "
         << num_vectors() << " vectors\n";
      for (std::size_t j = 0; j < num_vectors(); ++j) {
        const std::vector<Scalar> col = download(j);
        for (std::size_t i = 0; i < col.size(); ++i)
          os << layout_->map->getGlobalElement(static_cast<int>(i)) << ' ' << j << ' ' << col[i]
             << '\n';
      }
      os << std::flush;
    }
    comm.barrier();
  }
}

#ifdef HAVE_TPETRA_INST_DOUBLE
template class MpiMultiVector<double>;
#endif
#ifdef HAVE_TPETRA_INST_FLOAT
template class MpiMultiVector<float>;
#endif

}  // namespace kspmv
