// kspmv::MpiOperator and kspmv::mpi_cg: the halo planned once from Tpetra's Import, moved by
// kspmv's packing and nonblocking MPI on every apply.
#include "kspmv/interop/tpetra_distributed.hpp"

#include <Teuchos_CommHelpers.hpp>
#include <Teuchos_DefaultMpiComm.hpp>
#include <Tpetra_CrsMatrix.hpp>
#include <Tpetra_Distributor.hpp>
#include <Tpetra_Import.hpp>
#include <algorithm>
#include <chrono>
#include <cmath>
#include <numeric>

#include "kspmv/core/error.hpp"
#include "kspmv/interop/tpetra_matrix.hpp"
#include "kspmv/interop/tpetra_operator.hpp"
#include "kspmv/rank_vectors.hpp"

namespace kspmv {

namespace {

constexpr int kHaloTag = 32;  // the halo's messages, on a communicator of their own
constexpr Ordinal kNone = -1;

static_assert(sizeof(TpetraGlobal) == sizeof(std::int64_t), "global indices travel as int64");

// A duplicate of the MPI communicator under `comm` (MPI_COMM_NULL for a serial one).
MPI_Comm duplicate(const Teuchos::Comm<int>& comm) {
  const auto* mpi = dynamic_cast<const Teuchos::MpiComm<int>*>(&comm);
  if (mpi == nullptr) return MPI_COMM_NULL;
  MPI_Comm dup;
  MPI_Comm_dup((*mpi->getRawMpiComm())(), &dup);
  return dup;
}

// Per rank of `ranks`, the first of its entries in a buffer of `counts` entries each: ranks + 1.
std::vector<std::size_t> offsets_of(const std::vector<std::size_t>& counts) {
  std::vector<std::size_t> at(counts.size() + 1, 0);
  std::partial_sum(counts.begin(), counts.end(), at.begin() + 1);
  return at;
}

// Sends send[offsets] to each of `to` and receives into receive[offsets] from each of `from`:
// the requests, posted (receives first).
template <class T>
void post(MPI_Comm comm, MPI_Datatype type, const T* send, const std::vector<int>& to,
          const std::vector<std::size_t>& to_at, T* receive, const std::vector<int>& from,
          const std::vector<std::size_t>& from_at, std::vector<MPI_Request>& requests) {
  requests.assign(to.size() + from.size(), MPI_REQUEST_NULL);
  for (std::size_t i = 0; i < from.size(); ++i)
    MPI_Irecv(receive + from_at[i], static_cast<int>(from_at[i + 1] - from_at[i]), type, from[i],
              kHaloTag, comm, &requests[i]);
  for (std::size_t i = 0; i < to.size(); ++i)
    MPI_Isend(send + to_at[i], static_cast<int>(to_at[i + 1] - to_at[i]), type, to[i], kHaloTag,
              comm, &requests[from.size() + i]);
}

// Rows `rows` of the local matrix m (its row map, entries and values) as a CSR of ncols columns,
// column c of m becoming column[c].
template <class Scalar, class Local>
CsrMatrix<Scalar> select_rows(const Local& m, const std::vector<Ordinal>& rows,
                              const std::vector<Ordinal>& column, Ordinal ncols) {
  Offset nnz = 0;
  for (const Ordinal r : rows)
    nnz += static_cast<Offset>(m.graph.row_map(r + 1) - m.graph.row_map(r));
  CsrMatrix<Scalar> out(static_cast<Ordinal>(rows.size()), ncols, nnz);
  Offset k = 0;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    for (auto e = m.graph.row_map(rows[i]); e < m.graph.row_map(rows[i] + 1); ++e) {
      out.col_idx(k) = column[static_cast<std::size_t>(m.graph.entries(e))];
      out.values(k++) = m.values(e);
    }
    out.row_ptr(static_cast<Ordinal>(i) + 1) = k;
  }
  return out;
}

}  // namespace

template <class Scalar>
MpiOperator<Scalar>::MpiOperator(Teuchos::RCP<const crs_matrix_type> a, Options options)
    : matrix_(std::move(a)), options_(std::move(options)) {
  if (matrix_.is_null()) throw InvalidArgument("MpiOperator: null matrix");
  const crs_matrix_type& m = *matrix_;
  if (!m.isFillComplete()) throw InvalidArgument("MpiOperator: the matrix is not fill complete");
  const auto row_map = m.getRowMap(), col_map = m.getColMap();
  if (!row_map->isSameAs(*m.getDomainMap()) || !row_map->isSameAs(*m.getRangeMap()))
    throw InvalidArgument(
        "MpiOperator: the matrix's row, domain and range maps must be the same (a square "
        "matrix distributed by rows)");
  const auto comm = row_map->getComm();
  const std::size_t owned = local_count(*row_map), ncols = local_count(*col_map);
  if (options_.backend == Backend::Cuda)
    options_.devices = {device_for_rank(*comm, options_.devices)};
  else
    options_.devices = {0};  // one block per rank
  auto layout = std::make_shared<MpiLayout<Scalar>>();
  layout->map = row_map;
  layout->owned = owned;
  layout->vectors = make_rank_vectors<Scalar>(options_.backend, options_.devices[0]);

  // The plan: which owned entries go where (grouped by rank), how many arrive from where.
  std::vector<Ordinal> send_lids;
  const auto importer = m.getGraph()->getImporter();
  if (!importer.is_null()) {
    const auto lids = importer->getExportLIDs();
    const auto pids = importer->getExportPIDs();
    std::vector<std::size_t> by_rank(lids.size());
    std::iota(by_rank.begin(), by_rank.end(), 0);
    std::stable_sort(by_rank.begin(), by_rank.end(),
                     [&](std::size_t i, std::size_t j) { return pids[i] < pids[j]; });
    std::vector<std::size_t> counts;
    for (const std::size_t i : by_rank) {
      if (send_ranks_.empty() || send_ranks_.back() != pids[i])
        send_ranks_.push_back(pids[i]), counts.push_back(0);
      ++counts.back();
      send_lids.push_back(lids[i]);
    }
    send_offsets_ = offsets_of(counts);
    const auto& distributor = importer->getDistributor();
    const auto from = distributor.getProcsFrom();
    const auto lengths = distributor.getLengthsFrom();
    receive_ranks_.assign(from.begin(), from.end());
    receive_offsets_ = offsets_of({lengths.begin(), lengths.end()});
  }
  layout->ghosts = receive_ranks_.empty() ? 0 : receive_offsets_.back();
  if (!send_ranks_.empty() || !receive_ranks_.empty()) comm_ = duplicate(*comm);
  if (comm_ == MPI_COMM_NULL && (!send_ranks_.empty() || !receive_ranks_.empty()))
    throw UnsupportedError("MpiOperator: a halo over a communicator that is not MPI's");

  // The order of the ghosts: the global indices, sent once the way the entries will be.
  std::vector<std::int64_t> sent_ids(send_lids.size()), received_ids(layout->ghosts);
  for (std::size_t i = 0; i < send_lids.size(); ++i)
    sent_ids[i] = row_map->getGlobalElement(send_lids[i]);
  post(comm_, MPI_INT64_T, sent_ids.data(), send_ranks_, send_offsets_, received_ids.data(),
       receive_ranks_, receive_offsets_, requests_);
  if (!requests_.empty())
    MPI_Waitall(static_cast<int>(requests_.size()), requests_.data(), MPI_STATUSES_IGNORE);
  std::vector<Ordinal> ghost_of(ncols, kNone);  // column -> place among the ghosts
  for (std::size_t i = 0; i < received_ids.size(); ++i) {
    const Ordinal c = col_map->getLocalElement(received_ids[i]);
    if (c == Teuchos::OrdinalTraits<Ordinal>::invalid())
      throw Error("MpiOperator: the halo brought an index the column map does not hold");
    ghost_of[static_cast<std::size_t>(c)] = static_cast<Ordinal>(i);
  }
  std::vector<Ordinal> owned_of(ncols, kNone);  // column -> the row map's local index
  for (std::size_t c = 0; c < ncols; ++c) {
    owned_of[c] = row_map->getLocalElement(col_map->getGlobalElement(static_cast<Ordinal>(c)));
    if (owned_of[c] == Teuchos::OrdinalTraits<Ordinal>::invalid()) owned_of[c] = kNone;
    if (owned_of[c] == kNone && ghost_of[c] == kNone)
      throw Error("MpiOperator: a column neither owned nor in the Import's plan");
  }

  // Interior rows first, then the boundary rows, each in the matrix's order.
  const auto local = m.getLocalMatrixHost();
  std::vector<Ordinal> interior, boundary;
  for (std::size_t r = 0; r < owned; ++r) {
    bool reads_ghost = false;
    for (auto e = local.graph.row_map(r); e < local.graph.row_map(r + 1) && !reads_ghost; ++e)
      reads_ghost = owned_of[static_cast<std::size_t>(local.graph.entries(e))] == kNone;
    (reads_ghost ? boundary : interior).push_back(static_cast<Ordinal>(r));
  }
  interior_rows_ = interior.size();
  layout->order = interior;
  layout->order.insert(layout->order.end(), boundary.begin(), boundary.end());
  std::vector<Ordinal> position(owned);
  for (std::size_t p = 0; p < owned; ++p) position[layout->order[p]] = static_cast<Ordinal>(p);
  if (boundary.empty()) layout->order.clear();  // the map's order
  std::vector<Ordinal> column(ncols);
  for (std::size_t c = 0; c < ncols; ++c)
    column[c] =
        owned_of[c] != kNone ? position[owned_of[c]] : static_cast<Ordinal>(owned) + ghost_of[c];
  if (!interior.empty())
    interior_ = std::make_unique<Operator<Scalar>>(
        select_rows<Scalar>(local, interior, column, static_cast<Ordinal>(owned)), options_);
  if (!boundary.empty())
    boundary_ = std::make_unique<Operator<Scalar>>(
        select_rows<Scalar>(local, boundary, column, static_cast<Ordinal>(owned + layout->ghosts)),
        options_);

  std::vector<Ordinal> send_positions(send_lids.size());
  for (std::size_t i = 0; i < send_lids.size(); ++i) send_positions[i] = position[send_lids[i]];
  send_positions_ = layout->vectors->indices(send_positions);
  send_buffer_ = layout->vectors->host_buffer(send_lids.size());
  receive_buffer_ = layout->vectors->host_buffer(layout->ghosts);
  layout_ = std::move(layout);
}

template <class Scalar>
MpiOperator<Scalar>::~MpiOperator() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (comm_ != MPI_COMM_NULL && !finalized) MPI_Comm_free(&comm_);
}

template <class Scalar>
void MpiOperator<Scalar>::apply(const vector_type& X, vector_type& Y, Scalar alpha,
                                Scalar beta) const {
  if (X.layout() != layout_ || Y.layout() != layout_)
    throw InvalidArgument("MpiOperator::apply: vectors of another operator (use make_vectors)");
  if (X.num_vectors() != Y.num_vectors())
    throw InvalidArgument("MpiOperator::apply: X has " + std::to_string(X.num_vectors()) +
                          " vectors but Y has " + std::to_string(Y.num_vectors()));
  for (std::size_t i = 0; i < X.num_vectors(); ++i)
    for (std::size_t j = 0; j < Y.num_vectors(); ++j)
      if (X.column(i) == Y.column(j))
        throw InvalidArgument("MpiOperator::apply: X and Y share a vector");
  RankVectors<Scalar>& v = *layout_->vectors;
  const bool device = v.device() >= 0;
  const bool halo = comm_ != MPI_COMM_NULL;
  const std::size_t owned = layout_->owned;
  const auto run = [&](Operator<Scalar>* op, const Scalar* x, Scalar* y) {
    if (op == nullptr) return;
    if (device)
      op->apply(v.stream(), alpha, x, beta, y);
    else
      op->apply(alpha, x, beta, y);
  };
  for (std::size_t j = 0; j < X.num_vectors(); ++j) {
    Scalar* x = X.column(j);  // its ghost entries are the halo's landing place
    Scalar* y = Y.column(j);
    if (!halo) {
      run(interior_.get(), x, y);
      continue;
    }
    // A device computes the interior rows while the host waits for the packed halo; the host
    // computes them while the messages travel.
    v.pack(x, send_positions_.data(0), sent(), send_buffer_.data(0));
    if (device) run(interior_.get(), x, y);
    v.wait_packed();
    post(comm_, std::is_same_v<Scalar, float> ? MPI_FLOAT : MPI_DOUBLE, send_buffer_.data(0),
         send_ranks_, send_offsets_, receive_buffer_.data(0), receive_ranks_, receive_offsets_,
         requests_);
    if (!device) run(interior_.get(), x, y);
    MPI_Waitall(static_cast<int>(requests_.size()), requests_.data(), MPI_STATUSES_IGNORE);
    v.unpack(receive_buffer_.data(0), layout_->ghosts, x + owned);
    run(boundary_.get(), x, y + interior_rows_);
  }
}

template <class Scalar>
Kernel MpiOperator<Scalar>::kernel() const {
  if (interior_) return interior_->kernel();
  return boundary_ ? boundary_->kernel() : Kernel::Auto;
}

template <class Scalar>
std::string MpiOperator<Scalar>::description() const {
  std::string d = "kspmv::MpiOperator (" + std::string(to_string(options_.backend)) + " kernel " +
                  to_string(kernel());
  if (options_.backend == Backend::Cuda) d += ", device " + std::to_string(options_.devices[0]);
  return d + "; " + std::to_string(interior_rows_) + " of " + std::to_string(layout_->owned) +
         " rows interior, halo " + std::to_string(sent()) + " entries out to " +
         std::to_string(neighbours()) + " rank(s), " + std::to_string(received()) + " in)";
}

template <class Scalar>
CgResult mpi_cg(const MpiOperator<Scalar>& a, const MpiMultiVector<Scalar>& b,
                MpiMultiVector<Scalar>& x, const CgOptions& o) {
  if (!(o.tolerance >= 0) || o.max_iterations < 0)
    throw InvalidArgument("mpi_cg: tolerance must be >= 0 and max_iterations >= 0");
  if (b.num_vectors() == 0 || x.num_vectors() == 0)
    throw InvalidArgument("mpi_cg: b and x need a vector each");
  const auto& comm = *a.layout()->map->getComm();
  RankVectors<Scalar>& v = *a.layout()->vectors;
  const std::size_t n = a.layout()->owned;
  const auto sum = [&](double mine) {
    double all = 0;
    Teuchos::reduceAll(comm, Teuchos::REDUCE_SUM, mine, Teuchos::outArg(all));
    return all;
  };
  const MpiMultiVector<Scalar> b0 = b.view({0});
  MpiMultiVector<Scalar> x0 = x.view({0});
  const double bnorm = b0.norms()[0];
  CgResult res;
  if (bnorm == 0) {
    x0.fill(Scalar(0));
    res.converged = true;
    res.stop = CgStop::Converged;
    return res;
  }
  MpiMultiVector<Scalar> r = b0.copy(), p = a.make_vectors(1), q = a.make_vectors(1);
  a.apply(x0, r, Scalar(-1), Scalar(1));  // r = b - A x
  p.assign(r);
  const double limit = o.tolerance * bnorm;
  double rr = r.dot(r)[0];
  const auto start = std::chrono::steady_clock::now();
  while (res.iterations < o.max_iterations) {
    if (std::sqrt(rr) <= limit) {
      res.stop = CgStop::Converged;
      break;
    }
    a.apply(p, q);
    const double pq = p.dot(q)[0];  // the first dot group
    if (!(pq > 0)) {
      res.stop = CgStop::NotPositive;
      res.curvature = pq;
      break;
    }
    const auto alpha = static_cast<Scalar>(rr / pq);
    const double rr_next = sum(v.update_r(alpha, q.column(0), r.column(0), n));  // the second
    v.update_xp(alpha, static_cast<Scalar>(rr_next / rr), r.column(0), p.column(0), x0.column(0),
                n);
    rr = rr_next;
    ++res.iterations;
  }
  if (res.iterations == o.max_iterations && std::sqrt(rr) <= limit) res.stop = CgStop::Converged;
  v.synchronize();
  const double ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  res.ms_per_iteration = res.iterations > 0 ? ms / res.iterations : 0;
  res.converged = std::sqrt(rr) <= limit;
  r.assign(b0);  // the true residual of the returned x
  a.apply(x0, r, Scalar(-1), Scalar(1));
  res.relative_residual = r.norms()[0] / bnorm;
  return res;
}

#define KSPMV_INSTANTIATE(S)                                                                    \
  template class MpiOperator<S>;                                                                \
  template CgResult mpi_cg(const MpiOperator<S>&, const MpiMultiVector<S>&, MpiMultiVector<S>&, \
                           const CgOptions&);
KSPMV_TPETRA_SCALARS(KSPMV_INSTANTIATE)
#undef KSPMV_INSTANTIATE

}  // namespace kspmv
