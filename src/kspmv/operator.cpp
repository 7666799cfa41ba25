#include "kspmv/operator.hpp"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <string>

#include "kspmv/analysis/locality.hpp"
#include "kspmv/analysis/ordering.hpp"
#include "kspmv/core/error.hpp"
#include "kspmv/core/region.hpp"
#include "kspmv/core/timer.hpp"
#include "kspmv/formats/convert.hpp"
#include "kspmv/formats/permute.hpp"
#include "kspmv/registry.hpp"
#include "partitioners/cost_model.hpp"
#include "partitioners/exchange.hpp"
#include "partitioners/partition_plan.hpp"

namespace kspmv {

namespace detail {

void check_csr_extents(std::size_t rows, Ordinal ncols, std::size_t entries, std::size_t values) {
  constexpr auto kMax = static_cast<std::size_t>(std::numeric_limits<Ordinal>::max());
  if (rows > kMax || ncols < 0)
    throw InvalidArgument("Operator: " + std::to_string(rows) + " x " + std::to_string(ncols) +
                          " is not a matrix kspmv can index (rows and columns in [0, 2^31))");
  if (entries != values)
    throw InvalidArgument("Operator: " + std::to_string(entries) + " column indices but " +
                          std::to_string(values) + " values");
}

}  // namespace detail

namespace {

// Resolves Options::devices = {kAllDevices} and checks every option, whatever the others are
// (the partition and exchange too, although one device uses neither), on every backend: the
// one place Options are checked before a backend sees them.
// An option that would change nothing is refused, so that a caller never believes it took.
void resolve(Options& o) {
  if (o.devices == std::vector<int>{kAllDevices}) {
    const int count = o.backend == Backend::Cuda ? cuda_device_count() : 1;
    if (count == 0) throw InvalidArgument("Operator: devices 'all' but no CUDA device is present");
    o.devices.clear();
    for (int d = 0; d < count; ++d) o.devices.push_back(d);
  }
  if (o.devices.empty())
    throw InvalidArgument("Operator: Options::devices is empty; give at least one device id");
  for (const int d : o.devices)
    if (d < 0)
      throw InvalidArgument("Operator: device id " + std::to_string(d) +
                            " in Options::devices; ids are >= 0 (or {kAllDevices} alone)");
  if (!part::exchange_applies(o.partition, o.exchange))
    throw UnsupportedError(std::string("Operator: exchange ") + part::to_string(o.exchange) +
                           " does not apply to partition " + part::to_string(o.partition));
  if (o.autotune &&
      (o.backend != Backend::Cuda || o.kernel != Kernel::Auto || o.devices.size() > 1))
    throw InvalidArgument(std::string("Operator: autotune times Kernel::Auto's candidates on one "
                                      "CUDA device; it does nothing for kernel ") +
                          to_string(o.kernel) + " on " + std::to_string(o.devices.size()) + " " +
                          to_string(o.backend) + " device(s)");
  if (o.reorder == Reorder::Stripes &&
      (o.backend != Backend::Cuda || o.devices.size() > 1 || o.residency == Residency::Streamed))
    throw UnsupportedError(std::string("Operator: reorder stripes runs on one CUDA device with the "
                                       "matrix resident; asked: backend ") +
                           to_string(o.backend) + ", " + std::to_string(o.devices.size()) +
                           " device(s), residency " + to_string(o.residency));
  if (o.permuted_applies && o.reorder != Reorder::Auto)
    throw InvalidArgument(std::string("Operator: permuted_applies with reorder ") +
                          to_string(o.reorder) + "; it weighs the choice of reorder auto");
  if (o.stripe_columns < 0 ||
      (o.stripe_columns > 0 && o.reorder != Reorder::Stripes && o.reorder != Reorder::Auto))
    throw InvalidArgument("Operator: stripe_columns " + std::to_string(o.stripe_columns) +
                          " with reorder " + to_string(o.reorder) +
                          "; it sizes the stripes of reorder stripes (or auto), > 0, 0 by the L2");
  if (o.chunks != 1 && (o.devices.size() < 2 || o.partition != part::Scheme::NZ))
    throw InvalidArgument("Operator: chunks apply to nz on several devices; chunks " +
                          std::to_string(o.chunks) + " with partition " +
                          part::to_string(o.partition) + " on " + std::to_string(o.devices.size()) +
                          " device(s) would do nothing");
}

// Throws InvalidArgument when the k columns of x and of y share memory: the kernels read x
// while they write y.
template <class Scalar>
void check_no_alias(const Scalar* x, std::size_t nx, const Scalar* y, std::size_t ny) {
  if (nx == 0 || ny == 0) return;
  const auto xa = reinterpret_cast<std::uintptr_t>(x), ya = reinterpret_cast<std::uintptr_t>(y);
  if (xa < ya + ny * sizeof(Scalar) && ya < xa + nx * sizeof(Scalar))
    throw InvalidArgument(
        "apply: x and y overlap in memory; y = alpha*A*x + beta*y needs them "
        "apart");
}

}  // namespace

template <class Scalar>
Operator<Scalar>::Operator(const CsrMatrix<Scalar>& a, Options options)
    : Operator(nullptr, a, std::move(options)) {}

template <class Scalar>
Operator<Scalar>::Operator(DeviceStream stream, const CsrMatrix<Scalar>& a, Options options)
    : options_(std::move(options)) {
  init(a, stream);
}

template <class Scalar>
Operator<Scalar>::Operator(const DeviceCsrArrays<Scalar>& a, Options options)
    : Operator(nullptr, a, std::move(options)) {}

template <class Scalar>
Operator<Scalar>::Operator(DeviceStream stream, const DeviceCsrArrays<Scalar>& a, Options options)
    : options_(std::move(options)) {
  detail::check_csr_extents(static_cast<std::size_t>(std::max<Ordinal>(a.m, 0)), a.n, a.nnz, a.nnz);
  if (a.m < 0) throw InvalidArgument("Operator: negative row count");
  init_device(a, stream);
}

// Options::choose_devices: the first devices that pay for themselves on an apply of `a` by the
// cost model (part::choose_device_count), from the first device's peak bandwidth.
template <class Scalar>
void choose_devices(Options& o, const CsrMatrix<Scalar>& a) {
  if (!o.choose_devices || o.backend != Backend::Cuda || o.devices.size() < 2) return;
  const double peak = cuda_peak_bandwidth_gbps(o.devices.front());
  if (!(peak > 0)) return;  // no device to ask: the operator's construction says why
  const double bytes = a.nnz() * double(sizeof(Scalar) + sizeof(Ordinal)) +
                       (a.nrows + 1.0) * sizeof(DeviceOffset) +
                       (a.nrows + double(a.ncols)) * sizeof(Scalar);
  o.devices.resize(part::choose_device_count(bytes, static_cast<int>(o.devices.size()), peak));
}

template <class Scalar>
void Operator<Scalar>::init(const CsrMatrix<Scalar>& a, DeviceStream stream) {
  const Region region("kspmv::setup");
  resolve(options_);
  choose_devices(options_, a);
  const auto host = host_kokkos_lock(options_.backend != Backend::Cuda);
  nrows_ = a.nrows;
  ncols_ = a.ncols;
  if (options_.validate) a.validate();
  nnz_ = static_cast<std::size_t>(a.nnz());
  const CsrMatrix<Scalar> b = reordered(a, stream);
  if (!impl_) {                   // not built on the device with its ordering
    Options resolved = options_;  // the backend builds the stripes Auto chose
    resolved.reorder = reorder_;
    impl_ = detail::make_operator_impl(b, resolved, stream);
    if (reorder_ == Reorder::Stripes && impl_->residency() == Residency::Streamed) {
      if (options_.reorder == Reorder::Stripes)
        throw UnsupportedError(
            "Operator: reorder stripes keeps the matrix resident, and it does not "
            "fit the device memory kspmv may use (it would be streamed)");
      reorder_ = Reorder::None;  // Auto's stripes were left out by the streamed CUDA operator
    }
    source_ = b;  // shared: Mode::Transpose builds from it
  }
  if (!perm_.empty() && options_.backend == Backend::Cuda) {
    const auto t0 = Clock::now();
    permuter(Place::Device);  // perm's upload and its windows' indices: the ordering's set-up
    reorder_ms_ += ms_since(t0);
  }
}

template <class Scalar>
bool Operator<Scalar>::takes_stripes(const CsrMatrix<Scalar>& a, std::size_t cache) {
  if constexpr (is_complex_v<Scalar>) {
    if (options_.reorder == Reorder::Stripes)
      throw UnsupportedError("Operator: reorder stripes runs on real values");
    return false;
  }
  if (options_.reorder == Reorder::Stripes) return true;
  // Auto, where x overflows the L2 of the one device: stripes before any permutation (they help
  // where no order clusters the columns, and keep the caller's order).
  if (options_.reorder != Reorder::Auto || cache == 0 || options_.devices.size() > 1 ||
      options_.residency == Residency::Streamed || double(a.ncols) * sizeof(Scalar) <= cache)
    return false;
  const Ordinal width = analysis::stripe_columns(cache, sizeof(Scalar), options_.stripe_columns);
  const analysis::StripesEstimate e = analysis::estimate_stripes(
      a.row_ptr.data(), a.col_idx.data(), a.nrows, a.ncols, sizeof(Scalar), width);
  if (!e.pays()) return false;
  reorder_model_ = e.after / e.before;
  return true;
}

template <class Scalar>
const CsrMatrix<Scalar>& Operator<Scalar>::host_source() {
  if (source_.row_ptr.extent(0) == 0 && !perm_.empty())
    source_ = permute_symmetric(original_, perm_);
  return source_;
}

template <class Scalar>
CsrMatrix<Scalar> Operator<Scalar>::reordered(const CsrMatrix<Scalar>& a, DeviceStream stream) {
  if (options_.reorder == Reorder::None) return a;
  const auto t0 = Clock::now();
  // On CUDA the gathers of x hit the first device's L2 before memory (the host: not modelled).
  const std::size_t cache =
      options_.backend == Backend::Cuda ? cuda_l2_cache_bytes(options_.devices.front()) : 0;
  if (takes_stripes(a, cache)) {  // the backend cuts the stripes; no vector is permuted
    reorder_ = Reorder::Stripes;
    reorder_ms_ = ms_since(t0);
    return a;
  }
  if (a.nrows != a.ncols) {
    if (options_.reorder == Reorder::Auto) return a;
    throw InvalidArgument(std::string("Operator: reorder ") + to_string(options_.reorder) +
                          " permutes a square matrix symmetrically (P A P^T); this one is " +
                          std::to_string(a.nrows) + " x " + std::to_string(a.ncols));
  }
  // Reorder::Bfs is found on the CUDA device where the matrix can stay there (the operator is
  // then built there from that upload), else on the host.
  std::unique_ptr<DeviceOrdering<Scalar>> ordering;
  const auto bfs = [&] {
    if constexpr (!is_complex_v<Scalar>) {
      ordering = detail::order_on_device(a, options_, stream);
      if (ordering) return std::move(ordering->perm);
    }
    return analysis::bfs_order(a.row_ptr.data(), a.col_idx.data(), a.nrows);
  };
  const bool permuted = options_.permuted_applies;
  analysis::ReorderChoice choice =
      analysis::choose_reorder(a.row_ptr.data(), a.col_idx.data(), a.nrows, options_.reorder,
                               sizeof(Scalar), cache, permuted, bfs);
  const analysis::ReorderEstimate& e = choice.estimate;
  reorder_model_ = e.before > 0 ? e.bytes(permuted) / e.before : 0;
  reorder_ = choice.reorder;
  permute_window_ = e.window;
  if (ordering) {
    // reorder_ms: the ordering's own time, not A's upload (upload_ms) nor the operator's
    // construction.
    device_upload_ms_ = ordering->upload_ms;
    reorder_ms_ = ms_since(t0) - device_upload_ms_;
    if (choice.perm.empty()) {  // A as it is, from the upload the ordering ran on
      const CsrPointers<Scalar> p{a.row_ptr.data(), a.col_idx.data(), a.values.data(), a.nrows,
                                  a.ncols};
      impl_ =
          ordering->unpermuted(p, std::make_shared<const CsrMatrix<Scalar>>(a), options_, stream);
      source_ = a;
      return a;
    }
    perm_ = std::move(choice.perm);
    original_ = a;
    impl_ = ordering->permuted(options_, e.x_sectors, stream);
    reorder_ms_ += ordering->permute_ms;
    return a;
  }
  if (choice.perm.empty()) {
    reorder_ms_ = ms_since(t0);
    return a;
  }
  perm_ = std::move(choice.perm);
  original_ = a;
  CsrMatrix<Scalar> b = permute_symmetric(a, perm_);
  reorder_ms_ = ms_since(t0);
  return b;
}

template <class Scalar>
VectorPermutation<Scalar>& Operator<Scalar>::permuter(Place place) {
  auto& p = place == Place::Host ? host_permuter_ : device_permuter_;
  if (!p)
    p = detail::make_vector_permutation<Scalar>(perm_, options_.backend, place, options_.devices[0],
                                                permute_window_);
  return *p;
}

template <class Scalar>
void Operator<Scalar>::init_device(const DeviceCsrArrays<Scalar>& a, DeviceStream stream) {
  const Region region("kspmv::setup");
  resolve(options_);
  if (options_.reorder != Reorder::None && options_.reorder != Reorder::Auto)
    throw UnsupportedError(std::string("Operator: reorder ") + to_string(options_.reorder) +
                           " orders a matrix given on the host; this one is in device memory");
  const auto host = host_kokkos_lock(options_.backend != Backend::Cuda);
  nrows_ = a.m;
  ncols_ = a.n;
  nnz_ = a.nnz;
  impl_ = detail::make_operator_impl(a, options_, stream);
}

template <class Scalar>
OperatorImpl<Scalar>& Operator<Scalar>::impl() const {
  if (!impl_) throw InvalidArgument("Operator: used after it was moved from");
  return *impl_;
}

template <class Scalar>
std::pair<std::unique_lock<std::mutex>, std::unique_lock<std::recursive_mutex>>
Operator<Scalar>::claim() const {
  impl();
  std::unique_lock<std::mutex> mine(*busy_, std::try_to_lock);
  if (!mine.owns_lock())
    throw InvalidArgument(
        "Operator: called from two threads at once; one Operator serves one thread at a time "
        "(make one Operator per thread)");
  return {std::move(mine), host_kokkos_lock(options_.backend != Backend::Cuda)};
}

template <class Scalar>
OperatorImpl<Scalar>& Operator<Scalar>::impl(Mode mode) {
  OperatorImpl<Scalar>& a = impl();
  if (mode == Mode::NoTranspose) return a;
  if (!transpose_) {
    transpose_ = a.make_transpose();
    if (!transpose_) {
      if (host_source().row_ptr.extent(0) == 0)
        throw UnsupportedError("apply: this operator has no transpose (built from device arrays)");
      Options o = options_;
      o.validate = false;  // the transpose of a checked matrix
      transpose_ = detail::make_operator_impl(transpose(source_), o);
    }
  }
  return *transpose_;
}

template <class Scalar>
Operator<Scalar>::~Operator() = default;
template <class Scalar>
Operator<Scalar>::Operator(Operator&&) noexcept = default;
template <class Scalar>
Operator<Scalar>& Operator<Scalar>::operator=(Operator&&) noexcept = default;

template <class Scalar>
void Operator<Scalar>::apply_columns(DeviceStream stream, Place place, Scalar alpha,
                                     const Scalar* x, std::size_t nx, std::size_t ldx, Scalar beta,
                                     Scalar* y, std::size_t ny, std::size_t ldy, std::size_t k,
                                     std::size_t ky, Mode mode) {
  const Region region("kspmv::apply");
  const auto claimed = claim();  // a moved-from Operator throws here
  OperatorImpl<Scalar>& op = impl(Mode::NoTranspose);
  const auto rows = static_cast<std::size_t>(mode == Mode::Transpose ? ncols_ : nrows_);
  const auto cols = static_cast<std::size_t>(mode == Mode::Transpose ? nrows_ : ncols_);
  if (nx != cols || ny != rows || k != ky) {
    throw InvalidArgument("apply: x is " + std::to_string(nx) + " x " + std::to_string(k) +
                          " and y " + std::to_string(ny) + " x " + std::to_string(ky) + ", " +
                          (mode == Mode::Transpose ? "the transpose of " : "") + "the matrix is " +
                          std::to_string(nrows_) + " x " + std::to_string(ncols_));
  }
  if (k == 0) return;
  if (k > static_cast<std::size_t>(std::numeric_limits<int>::max()))
    throw InvalidArgument("apply: too many columns");
  check_no_alias(x, (k - 1) * ldx + nx, y, (k - 1) * ldy + ny);
  if (place == Place::Device && !runs_on_device(options_.backend))
    throw InvalidArgument(std::string("apply: the ") + to_string(options_.backend) +
                          " backend reads vectors in host memory, not device memory");
  OperatorImpl<Scalar>& run = mode == Mode::NoTranspose ? op : impl(mode);
  last_ = &run;
  const int columns = static_cast<int>(k);
  const auto run_on = [&](const Scalar* xs, std::size_t ldxs, Scalar* ys, std::size_t ldys) {
    if (place == Place::Host) {
      if (columns == 1)
        run.apply_host(alpha, xs, beta, ys);
      else
        run.apply_host_block(alpha, xs, ldxs, beta, ys, ldys, columns);
      return;
    }
    if (columns == 1)
      run.apply_device(alpha, xs, beta, ys, stream);
    else
      run.apply_device_block(alpha, xs, ldxs, beta, ys, ldys, columns, stream);
  };
  if (perm_.empty() || permuted_order_) {
    run_on(x, ldx, y, ldy);
    return;
  }
  // P A P^T (or its transpose, P A^T P^T) on x and y gathered into the permuted order.
  VectorPermutation<Scalar>& p = permuter(place);
  Scalar* px = p.work(0, columns);
  Scalar* py = p.work(1, columns);
  p.gather(x, ldx, px, columns, stream);
  if (beta != Scalar(0)) p.gather(y, ldy, py, columns, stream);
  run_on(px, nx, py, ny);
  p.scatter(py, y, ldy, columns, stream);
}

template <class Scalar>
void Operator<Scalar>::apply(DeviceStream stream, Scalar alpha, const Scalar* x, Scalar beta,
                             Scalar* y, int k, Mode mode) {
  const auto rows = static_cast<std::size_t>(mode == Mode::Transpose ? ncols_ : nrows_);
  const auto cols = static_cast<std::size_t>(mode == Mode::Transpose ? nrows_ : ncols_);
  if (k < 0) throw InvalidArgument("apply: negative number of vectors");
  if (k > 0 && ((cols > 0 && x == nullptr) || (rows > 0 && y == nullptr)))
    throw InvalidArgument("apply: null vector pointer");
  const auto columns = static_cast<std::size_t>(k);
  apply_columns(stream, Place::Device, alpha, x, cols, cols, beta, y, rows, rows, columns, columns,
                mode);
}

template <class Scalar>
void Operator<Scalar>::apply(Scalar alpha, const Scalar* x, Scalar beta, Scalar* y,
                             bool device_pointers) {
  if ((ncols_ > 0 && x == nullptr) || (nrows_ > 0 && y == nullptr))
    throw InvalidArgument("apply: null vector pointer");
  const auto rows = static_cast<std::size_t>(nrows_), cols = static_cast<std::size_t>(ncols_);
  apply_columns(nullptr, device_pointers ? Place::Device : Place::Host, alpha, x, cols, cols, beta,
                y, rows, rows, 1, 1, Mode::NoTranspose);
  if (device_pointers) impl().synchronize();
}

template <class Scalar>
void Operator<Scalar>::check_layout(const DistributedVector<Scalar>& v, const char* name) const {
  if (v.layout() != &impl())
    throw InvalidArgument(std::string("apply: ") + name +
                          " is not a vector of this operator (use its make_vector())");
}

template <class Scalar>
DistributedVector<Scalar> Operator<Scalar>::make_vector() {
  return impl().make_vector(nrows_, ncols_);
}

template <class Scalar>
void Operator<Scalar>::upload(const Scalar* host, std::size_t len,
                              const DistributedVector<Scalar>& v) {
  check_layout(v, "the vector");
  if (len != static_cast<std::size_t>(nrows_) && len != static_cast<std::size_t>(ncols_))
    throw InvalidArgument("upload: " + std::to_string(len) + " entries for a " +
                          std::to_string(nrows_) + " x " + std::to_string(ncols_) + " operator");
  if (len > 0 && host == nullptr) throw InvalidArgument("upload: null host array");
  if (perm_.empty()) {
    impl().upload(host, len, v);
    return;
  }
  std::vector<Scalar> permuted(len);  // distributed vectors hold the permuted order
  permuter(Place::Host).gather(host, len, permuted.data(), 1, nullptr);
  impl().upload(permuted.data(), len, v);
}

template <class Scalar>
void Operator<Scalar>::download(const DistributedVector<Scalar>& v, std::size_t len, Scalar* host) {
  check_layout(v, "the vector");
  if (len != static_cast<std::size_t>(nrows_))
    throw InvalidArgument("download: y has " + std::to_string(nrows_) + " entries, not " +
                          std::to_string(len));
  if (len > 0 && host == nullptr) throw InvalidArgument("download: null host array");
  if (perm_.empty()) {
    impl().download(v, len, host);
    return;
  }
  std::vector<Scalar> permuted(len);
  impl().download(v, len, permuted.data());
  permuter(Place::Host).scatter(permuted.data(), host, len, 1, nullptr);
}

template <class Scalar>
void Operator<Scalar>::apply(Scalar alpha, const DistributedVector<Scalar>& x, Scalar beta,
                             const DistributedVector<Scalar>& y) {
  check_layout(x, "x");
  check_layout(y, "y");
  if (x.data(0) == y.data(0) && nrows_ > 0 && ncols_ > 0)
    throw InvalidArgument("apply: x and y are the same vector");
  const Region region("kspmv::apply");
  const auto claimed = claim();
  last_ = impl_.get();
  impl_->apply_distributed(alpha, x, beta, y);
}

template <class Scalar>
std::unique_ptr<CgVectors<Scalar>> Operator<Scalar>::cg_vectors() {
  if (nrows_ != ncols_) throw InvalidArgument("cg_vectors: the matrix must be square");
  return impl().make_cg_vectors(nrows_);
}

template <class Scalar>
std::vector<PartInfo> Operator<Scalar>::parts(int runs) {
  if (runs < 0) throw InvalidArgument("parts: runs must be >= 0");
  return impl().parts(runs);
}

template <class Scalar>
Prediction Operator<Scalar>::predict(const std::vector<double>& part_ms, double peer_gbps,
                                     double device_gbps) const {
  if (!(peer_gbps > 0) || !(device_gbps > 0))
    throw InvalidArgument("predict: bandwidths must be positive");
  return impl().predict(part_ms, peer_gbps, device_gbps);
}

template <class Scalar>
void Operator<Scalar>::update_values(const Scalar* values, std::size_t count, bool device_memory) {
  update_values(nullptr, values, count, device_memory);
}

template <class Scalar>
void Operator<Scalar>::update_values(DeviceStream stream, const Scalar* values, std::size_t count,
                                     bool device_memory) {
  const Region region("kspmv::update_values");
  const auto claimed = claim();
  OperatorImpl<Scalar>& op = impl();
  if (count != nnz_)
    throw InvalidArgument("update_values: " + std::to_string(count) + " values for a matrix of " +
                          std::to_string(nnz_) + " non-zeros");
  if (values == nullptr && count > 0) throw InvalidArgument("update_values: null values");
  if (device_memory && !runs_on_device(options_.backend))
    throw InvalidArgument(std::string("update_values: the ") + to_string(options_.backend) +
                          " backend takes values in host memory");
  HostView<Scalar> permuted;  // the values in the order of P A P^T
  if (!perm_.empty()) {
    HostView<Scalar> given = make_host_view<Scalar>("values", device_memory ? count : 0);
    if (device_memory) detail::copy_device_to_host(given.data(), values, count * sizeof(Scalar));
    permuted = make_host_view<Scalar>("values", count);
    permute_values(original_, perm_, device_memory ? given.data() : values, permuted.data());
    values = permuted.data();
    device_memory = false;
  }
  if (last_ == transpose_.get()) last_ = nullptr;
  transpose_.reset();  // rebuilt from the new values on its next use
  // The host matrix's values become a copy of the new ones (never the caller's old array) where
  // a transpose would be built from it, or the host kernels read it.
  const bool host = options_.backend == Backend::Host;
  if (source_.row_ptr.extent(0) > 0 && (host || !op.transposes_itself())) {
    HostView<Scalar> own = make_host_view<Scalar>("values", count);
    if (device_memory)
      detail::copy_device_to_host(own.data(), values, count * sizeof(Scalar), stream);
    else
      std::copy(values, values + count, own.data());
    source_.values = own;
    if (host) values = own.data();
  }
  if (stream)
    op.update_values_on(values, device_memory, stream);
  else
    op.update_values(values, device_memory);
}

template <class Scalar>
void Operator<Scalar>::synchronize() {
  impl().synchronize();
  if (transpose_) transpose_->synchronize();
}

template <class Scalar>
Kernel Operator<Scalar>::kernel() const {
  return impl().kernel();
}

template <class Scalar>
Residency Operator<Scalar>::residency() const {
  return impl().residency();
}

template <class Scalar>
Timings Operator<Scalar>::timings() const {
  const auto claimed = claim();
  const OperatorImpl<Scalar>& op = impl();
  Timings t = last_ ? last_->timings() : op.timings();
  t.reorder_ms = reorder_ms_;
  t.reorder_model = reorder_model_;
  t.upload_ms += device_upload_ms_;
  return t;
}

template class Operator<float>;
template class Operator<double>;
template class Operator<Kokkos::complex<float>>;
template class Operator<Kokkos::complex<double>>;

}  // namespace kspmv
