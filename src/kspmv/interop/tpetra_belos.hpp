// Belos on kspmv's device-resident vectors: Belos::MultiVecTraits for kspmv::MpiMultiVector and
// Belos::OperatorTraits for kspmv::MpiOperator, so that Belos' solvers (CG, GMRES, ...) run with
// every vector where the ranks' kspmv backends compute (each rank's GPU with the CUDA backend),
// the dot products and norms reduced by one allreduce per call. Include it before instantiating
// a Belos solver on these types:
//
//   using MV = kspmv::MpiMultiVector<double>;
//   using OP = kspmv::MpiOperator<double>;
//   Belos::LinearProblem<double, MV, OP> problem(op, x, b);
//   Belos::PseudoBlockCGSolMgr<double, MV, OP> solver(problem, params);
//
// Views (CloneView*) share the columns of the multivector they come from. Not supported:
// transposed applies (HasApplyTranspose is false).
#pragma once

#include <BelosMultiVecTraits.hpp>
#include <BelosOperatorTraits.hpp>
#include <Teuchos_Range1D.hpp>
#include <Teuchos_SerialDenseMatrix.hpp>
#include <numeric>
#include <vector>

#include "kspmv/core/error.hpp"
#include "kspmv/interop/tpetra_distributed.hpp"
#include "kspmv/interop/tpetra_vector.hpp"

namespace Belos {

template <class Scalar>
class MultiVecTraits<Scalar, kspmv::MpiMultiVector<Scalar>> {
  using MV = kspmv::MpiMultiVector<Scalar>;
  using Dense = Teuchos::SerialDenseMatrix<int, Scalar>;
  using Magnitude = typename Teuchos::ScalarTraits<Scalar>::magnitudeType;

  static std::vector<int> indices(const Teuchos::Range1D& r) {
    std::vector<int> index(static_cast<std::size_t>(r.size()));
    std::iota(index.begin(), index.end(), static_cast<int>(r.lbound()));
    return index;
  }
  static Teuchos::RCP<MV> rcp(MV v) { return Teuchos::rcp(new MV(std::move(v))); }

 public:
  static Teuchos::RCP<MV> Clone(const MV& mv, const int numvecs) {
    return rcp(mv.clone(static_cast<std::size_t>(numvecs)));
  }
  static Teuchos::RCP<MV> CloneCopy(const MV& mv) { return rcp(mv.copy()); }
  static Teuchos::RCP<MV> CloneCopy(const MV& mv, const std::vector<int>& index) {
    return rcp(mv.view(index).copy());
  }
  static Teuchos::RCP<MV> CloneCopy(const MV& mv, const Teuchos::Range1D& index) {
    return CloneCopy(mv, indices(index));
  }
  static Teuchos::RCP<MV> CloneViewNonConst(MV& mv, const std::vector<int>& index) {
    return rcp(mv.view(index));
  }
  static Teuchos::RCP<MV> CloneViewNonConst(MV& mv, const Teuchos::Range1D& index) {
    return rcp(mv.view(indices(index)));
  }
  static Teuchos::RCP<const MV> CloneView(const MV& mv, const std::vector<int>& index) {
    return rcp(mv.view(index));
  }
  static Teuchos::RCP<const MV> CloneView(const MV& mv, const Teuchos::Range1D& index) {
    return rcp(mv.view(indices(index)));
  }

  static ptrdiff_t GetGlobalLength(const MV& mv) {
    return static_cast<ptrdiff_t>(mv.global_length());
  }
  static int GetNumberVecs(const MV& mv) { return static_cast<int>(mv.num_vectors()); }
  static bool HasConstantStride(const MV&) { return false; }  // a column is an array of its own

  // mv = alpha * A * B + beta * mv.
  static void MvTimesMatAddMv(const Scalar alpha, const MV& A, const Dense& B, const Scalar beta,
                              MV& mv) {
    mv.add_product(alpha, A, B.values(), B.stride(), beta);
  }
  static void MvAddMv(const Scalar alpha, const MV& A, const Scalar beta, const MV& B, MV& mv) {
    mv.combine(alpha, A, beta, B);
  }
  static void MvScale(MV& mv, const Scalar alpha) {
    mv.scale(std::vector<Scalar>(mv.num_vectors(), alpha));
  }
  static void MvScale(MV& mv, const std::vector<Scalar>& alpha) { mv.scale(alpha); }
  // B(i, j) = alpha * A_i . mv_j.
  static void MvTransMv(const Scalar alpha, const MV& A, const MV& mv, Dense& B) {
    const std::vector<double> d = A.dot(mv, true);
    for (std::size_t j = 0; j < mv.num_vectors(); ++j)
      for (std::size_t i = 0; i < A.num_vectors(); ++i)
        B(static_cast<int>(i), static_cast<int>(j)) =
            alpha * static_cast<Scalar>(d[i + j * A.num_vectors()]);
  }
  static void MvDot(const MV& mv, const MV& A, std::vector<Scalar>& b) {
    const std::vector<double> d = mv.dot(A);
    b.assign(d.begin(), d.end());
  }
  static void MvNorm(const MV& mv, std::vector<Magnitude>& normvec, NormType type = TwoNorm) {
    const std::vector<double> n = mv.norms(type == OneNorm   ? kspmv::Reduction::AbsSum
                                           : type == InfNorm ? kspmv::Reduction::AbsMax
                                                             : kspmv::Reduction::Dot);
    normvec.assign(n.begin(), n.end());
  }

  // The first index.size() columns of A into the columns `index` of mv.
  static void SetBlock(const MV& A, const std::vector<int>& index, MV& mv) {
    std::vector<int> first(index.size());
    std::iota(first.begin(), first.end(), 0);
    mv.view(index).assign(A.view(first));
  }
  static void SetBlock(const MV& A, const Teuchos::Range1D& index, MV& mv) {
    SetBlock(A, indices(index), mv);
  }
  static void Assign(const MV& A, MV& mv) { mv.assign(A); }
  static void MvRandom(MV& mv) { mv.randomize(seed_++); }
  static void MvInit(MV& mv, const Scalar alpha = Teuchos::ScalarTraits<Scalar>::zero()) {
    mv.fill(alpha);
  }
  static void MvPrint(const MV& mv, std::ostream& os) { mv.print(os); }

 private:
  static inline std::uint64_t seed_ = 1;  // each MvRandom draws other vectors
};

template <class Scalar>
class OperatorTraits<Scalar, kspmv::MpiMultiVector<Scalar>, kspmv::MpiOperator<Scalar>> {
 public:
  static void Apply(const kspmv::MpiOperator<Scalar>& op, const kspmv::MpiMultiVector<Scalar>& x,
                    kspmv::MpiMultiVector<Scalar>& y, ETrans trans = NOTRANS) {
    if (trans != NOTRANS)
      throw kspmv::UnsupportedError("kspmv::MpiOperator applies A, not its transpose");
    op.apply(x, y);
  }
  static bool HasApplyTranspose(const kspmv::MpiOperator<Scalar>&) { return false; }
};

}  // namespace Belos
