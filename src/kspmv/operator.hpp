// kspmv::Operator: bind a matrix and options once, then apply y = alpha*A*x + beta*y many times.
//
// Scalar: float, double, or Kokkos::complex<float> / Kokkos::complex<double> on the kernels whose
// registry row takes complex values (KernelInfo::complex_values: the host backend's csr, the CUDA
// backend's csr-vector, cusparse and cusparse-alg2; the others throw UnsupportedError). kspmv::spmv
// (kspmv/spmv.hpp) is KokkosSparse::spmv's call shape on top, with the conjugate modes and vectors
// of any layout.
//
// Matrices come as a host CsrMatrix or as CSR Views (KokkosSparse's arrays; a KokkosSparse::
// CrsMatrix through kspmv/interop/kokkos_sparse.hpp) in host or CUDA memory; vectors as rank-1
// Views (or rank-2 LayoutLeft Views of k vectors) in HostSpace, CudaSpace, CudaUVMSpace or
// CudaHostPinnedSpace, or as raw pointers. Device memory is the CUDA backend's and, with a Kokkos
// built with CUDA, the kokkos-default backend's (Kokkos' default execution space).
//
// Where work runs, and when apply returns:
// - Vectors in host memory (HostSpace, CudaHostPinnedSpace): apply returns when y is written.
//   The CUDA backend stages them through device buffers of its own.
// - Vectors in device memory (CudaSpace; CudaUVMSpace with the CUDA and kokkos-default
//   backends), CUDA and kokkos-default backends: the kernels read and write them in place.
//   apply(exec, ...) with a Kokkos::Cuda instance enqueues on that instance's stream, apply(stream,
//   ...) on a cudaStream_t, and plain apply(...) on the legacy default stream (ordered after work
//   on every blocking stream, Kokkos' default instance included); all three return without waiting
//   for y: it is ready for later work on the same stream, or after exec.fence() / Kokkos::fence().
//   No host synchronization, no allocation and no global fence happen there (CUDA-graph
//   capturable), except while Kernel::Auto autotunes (its first calls time each candidate and wait
//   for it).
// - Set-up on the caller's instance: the constructors taking an execution space instance (or a
//   cudaStream_t) enqueue the set-up's device work of a one-device CUDA operator on that
//   instance's stream (a Kokkos::Cuda instance; a host instance is fenced and the set-up runs
//   as without one) and return without waiting for it and without any device-wide
//   synchronization: the matrix's upload, CSR-Vector's and cuSPARSE's set-up (its analysis
//   included), a device matrix's conversion and row profile. Applies and update_values on any
//   stream are ordered after it. The host still waits for that stream (never for the device)
//   where it must read something back: a device matrix's row profile (its sums and the long
//   rows' extents, which choose the kernel and its plan), the checks of Options::validate and
//   of converted row maps and column indices, the row pointer of kernels planned on the host
//   (and the entries for seg, seg-r, hbp, full-overlap), and before the factories of the
//   kernels that plan on the host (partial-overlap, seg, seg-r, hbp), which then upload
//   synchronously. Pageable host arrays are staged before the constructor returns;
//   page-locked ones are read later. timings().preprocess_ms is then the host's part. Several
//   devices, and the host and kokkos-default backends, set up before returning as without an
//   instance.
// - Threads: distinct Operators are independent, on any thread, each with its own stream on the
//   GPU. One Operator serves one thread at a time (apply reuses its buffers and records its
//   timings): a call of apply, update_values or timings while another thread's is running on
//   the same Operator throws InvalidArgument instead of racing.
#pragma once

#include <cstddef>
#include <memory>
#include <mutex>
#include <string>
#include <tuple>
#include <type_traits>
#include <vector>

#include "kspmv/core/kokkos.hpp"
#include "kspmv/core/operator_impl.hpp"
#include "kspmv/core/options.hpp"
#include "kspmv/formats/csr.hpp"
#include "kspmv/registry.hpp"

namespace kspmv {

namespace detail {

// Throws InvalidArgument unless a CSR matrix of `rows` x `ncols` with these array extents can be
// an Operator (rows and ncols in Ordinal's range, as many values as entries).
void check_csr_extents(std::size_t rows, Ordinal ncols, std::size_t entries, std::size_t values);

// Where the data of a View of memory space M is read: host memory unless only a device reaches
// it, or it is managed (UVM) memory and the backend runs on the GPU (CUDA, kokkos-default).
template <class M>
Place place_of(Backend backend) {
  constexpr bool host = Kokkos::SpaceAccessibility<Kokkos::HostSpace, M>::accessible;
#ifdef KOKKOS_ENABLE_CUDA
  constexpr bool managed = std::is_same_v<M, Kokkos::CudaUVMSpace>;
#else
  constexpr bool managed = false;
#endif
  return host && !(managed && backend != Backend::Host) ? Place::Host : Place::Device;
}

// Throws InvalidArgument unless the rank-1 or rank-2 View v is stored column by column with
// unit stride (LayoutLeft, or LayoutStride/LayoutRight with that layout).
template <class V>
void check_columns(const V& v, const char* name) {
  static_assert(V::rank == 1 || V::rank == 2, "kspmv: vectors are rank-1 or rank-2 Views");
  const bool unit = v.extent(0) <= 1 || v.stride(0) == 1;
  if (!unit)
    throw InvalidArgument(std::string("apply: ") + name +
                          " is not contiguous down its columns (stride " +
                          std::to_string(v.stride(0)) + "); use LayoutLeft or a contiguous View");
}

// The stream of a Kokkos::Cuda instance; any other instance is fenced and gives null (the
// legacy default stream: work there is done before the call returns).
template <class Exec>
DeviceStream stream_of(const Exec& exec) {
#ifdef KOKKOS_ENABLE_CUDA
  if constexpr (std::is_same_v<Exec, Kokkos::Cuda>) return exec.cuda_stream();
#endif
  exec.fence();
  return nullptr;
}

template <class V>
std::size_t leading_dim(const V& v) {
  if constexpr (V::rank == 2) return v.extent(1) > 1 ? v.stride(1) : v.extent(0);
  return v.extent(0);
}

// A host array of T with v's entries: v itself (unmanaged, kept alive by the caller) when it
// already is one, a converted copy otherwise.
template <class T, class V>
HostView<T> host_array(const V& v, const char* label) {
  static_assert(V::rank == 1, "kspmv: CSR arrays are rank-1 Views");
  if constexpr (std::is_same_v<std::remove_const_t<typename V::value_type>, T>) {
    if (v.span_is_contiguous()) return HostView<T>(const_cast<T*>(v.data()), v.extent(0));
  }
  HostView<T> out = make_host_view<T>(label, v.extent(0));
  for (std::size_t i = 0; i < v.extent(0); ++i) out(i) = static_cast<T>(v(i));
  return out;
}

}  // namespace detail

template <class Scalar>
class Operator {
 public:
  // Does all preprocessing (format conversion, device upload, partitioning) now, after checking
  // the matrix (Options::validate). The matrix is shared, not copied (its Views are reference
  // counted; the host backend computes on it, every backend builds Mode::Transpose from it): do
  // not modify it while the Operator lives. A moved-from Operator throws InvalidArgument.
  explicit Operator(const CsrMatrix<Scalar>& a, Options options = {});
  // The same with the set-up on `exec` or `stream` (see "Set-up on the caller's instance" at the
  // top of this file).
  Operator(DeviceStream stream, const CsrMatrix<Scalar>& a, Options options = {});
  template <class Exec, class = std::enable_if_t<Kokkos::is_execution_space<Exec>::value>>
  Operator(const Exec& exec, const CsrMatrix<Scalar>& a, Options options = {})
      : Operator(detail::stream_of(exec), a, std::move(options)) {}

  // From CSR Views (row_map: nrows + 1 offsets of any integer type; entries: column indices;
  // values), all in host memory or all in CUDA memory (CudaSpace, or CudaUVMSpace with the CUDA
  // and kokkos-default backends). The Operator keeps the Views (reference counted) for its
  // lifetime.
  // Host memory: as the CsrMatrix constructor; arrays of kspmv's types (int64 offsets, int32
  // columns) are shared, others converted once.
  // CUDA memory, CUDA backend: the entries never leave the device. The row map and the column
  // indices are used in place when they are 32-bit (otherwise narrowed once into a device copy,
  // which needs nnz < 2^31); the values are copied once on the device (update_values writes
  // there, never into the caller's array). Kernel::Auto (not autotuned), csr-vector and the
  // cuSPARSE kernels are planned from the row profile computed on the device (the long rows
  // found there, their extents alone read back): the row map stays there. Other kernels and
  // autotuning read the row map back (4 bytes per row);
  // kernels that preprocess the entries on the host (seg, seg-r, hbp, full-overlap) copy the
  // matrix to the host once, and Kernel::Auto does not pick them.
  // Memory of Kokkos' default execution space, kokkos-default backend (a CUDA Kokkos): a row map
  // of 64-bit signed offsets and 32-bit column indices are used in place (others converted once
  // there), the values copied once there, nothing read back; kernel csr only, Mode::Transpose
  // built through the host.
  template <class RowMap, class Entries, class Values,
            class = std::enable_if_t<Kokkos::is_view<RowMap>::value>>
  Operator(Ordinal ncols, const RowMap& row_map, const Entries& entries, const Values& values,
           Options options = {})
      : options_(std::move(options)) {
    init_views(nullptr, ncols, row_map, entries, values);
  }
  // The same with the set-up on `exec` (see "Set-up on the caller's instance" above): Views in
  // CUDA memory are converted, checked and profiled on its stream.
  template <class Exec, class RowMap, class Entries, class Values,
            class = std::enable_if_t<Kokkos::is_execution_space<Exec>::value>>
  Operator(const Exec& exec, Ordinal ncols, const RowMap& row_map, const Entries& entries,
           const Values& values, Options options = {})
      : options_(std::move(options)) {
    init_views(detail::stream_of(exec), ncols, row_map, entries, values);
  }

  // From CSR arrays in the memory of options.devices[0] given as pointers (the CUDA backend),
  // as the View constructor above; the caller keeps the arrays alive while the Operator lives.
  explicit Operator(const DeviceCsrArrays<Scalar>& a, Options options = {});
  Operator(DeviceStream stream, const DeviceCsrArrays<Scalar>& a, Options options = {});

  ~Operator();
  Operator(Operator&&) noexcept;
  Operator& operator=(Operator&&) noexcept;

  // y = alpha*op(A)*x + beta*y (op: A, or A^T for Mode::Transpose) with Views x and y: rank 1,
  // or rank 2 with k columns each (LayoutLeft). beta == 0 overwrites y (NaN included);
  // alpha == 0 leaves A unread. Throws InvalidArgument when the extents do not match, x and y
  // overlap, a View is not contiguous down its columns, or its memory is not the backend's.
  // Mode::Transpose builds the transpose's operator on first use (as much memory as the
  // operator again; update_values drops it). When apply returns: see the top of this file.
  template <class X, class Y, class = std::enable_if_t<Kokkos::is_view<X>::value>>
  void apply(Scalar alpha, const X& x, Scalar beta, const Y& y, Mode mode = Mode::NoTranspose) {
    apply_views(nullptr, alpha, x, beta, y, mode);
  }
  // The same on an execution space instance: with device vectors and a Kokkos::Cuda instance,
  // enqueued on its stream; a host instance (or host vectors) runs after exec.fence().
  template <class Exec, class X, class Y,
            class = std::enable_if_t<Kokkos::is_execution_space<Exec>::value>>
  void apply(const Exec& exec, Scalar alpha, const X& x, Scalar beta, const Y& y,
             Mode mode = Mode::NoTranspose) {
    apply_views(detail::stream_of(exec), alpha, x, beta, y, mode);
  }
  // Device vectors of options().devices[0] as raw pointers (CUDA backend), enqueued on
  // `stream` (a cudaStream_t) without waiting: k vectors stored one after the other.
  void apply(DeviceStream stream, Scalar alpha, const Scalar* x, Scalar beta, Scalar* y, int k = 1,
             Mode mode = Mode::NoTranspose);
  // Raw pointers to host memory, or to device memory of options().devices[0] (CUDA backend)
  // when `device_pointers` is true; returns when y is written in both cases.
  void apply(Scalar alpha, const Scalar* x, Scalar beta, Scalar* y, bool device_pointers = false);

  // Vectors laid out for this operator's devices (kspmv/core/distributed_vector.hpp): a part per
  // device, each of max(nrows, ncols) entries at their global positions; the host backend: one
  // host array. After apply(alpha, x, beta, y) on them, y is whole on every part on one device
  // and with the AllGather exchange, on part 0 with Merge; with Halo and allgather-x each part
  // holds the rows its device owns (Operator::parts), and apply wrote into each part of x the
  // entries owned by other devices that its rows read (the ghost entries of distributed-memory
  // libraries). upload(host, len, v): `len` host entries (ncols of x, or nrows of y) into the
  // parts that read them (the entries a device owns; every entry where x is replicated);
  // download(v, nrows, host): y from the parts that hold it. Both return when done.
  // make_vector ends the tuning of the partition (Options::tune_partition): distributed vectors
  // fix it.
  DistributedVector<Scalar> make_vector();
  void upload(const Scalar* host, std::size_t len, const DistributedVector<Scalar>& v);
  void download(const DistributedVector<Scalar>& v, std::size_t len, Scalar* host);
  // y = alpha*A*x + beta*y on vectors of make_vector(): enqueued on the operator's streams (one
  // per device) after the work it queued there, without waiting (the host backend runs it at
  // once); synchronize() and timings() wait. InvalidArgument for vectors of another operator.
  void apply(Scalar alpha, const DistributedVector<Scalar>& x, Scalar beta,
             const DistributedVector<Scalar>& y);
  // What kspmv::cg runs on: CG's vectors in this layout and its fused vector operations (square
  // matrices; InvalidArgument otherwise). Ends the tuning of the partition, as make_vector does.
  std::unique_ptr<CgVectors<Scalar>> cg_vectors();
  // Several devices: the parts of the partition, each part's kernel timed alone on its device
  // (median of `runs` after a warm-up, CUDA events) when runs > 0; empty on one device. And the
  // cost model of one apply on distinct devices (partitioners/cost_model.hpp) from each part's
  // time alone, a peer bandwidth (GB/s each way) and the device copy bandwidth (GB/s read plus
  // written); UnsupportedError on one device.
  std::vector<PartInfo> parts(int runs = 0);
  Prediction predict(const std::vector<double>& part_ms, double peer_gbps,
                     double device_gbps) const;

  // New values for the same pattern (nnz of them, in the CSR order of the matrix the Operator
  // was built from), in host or device memory: every plan (kernel, batches, segments,
  // partitions, the autotuner's choice) is kept. On one CUDA device they are read on the
  // operator's own stream after its last apply (device values written on another stream must
  // be ready: fence it first, or use the instance form below); the call returns when the
  // operator holds them.
  template <class V, class = std::enable_if_t<Kokkos::is_view<V>::value>>
  void update_values(const V& values) {
    update_views(nullptr, values);
  }
  void update_values(const Scalar* values, std::size_t count, bool device_memory);
  // The same enqueued on `exec` (a Kokkos::Cuda instance; a host instance is fenced and the call
  // is the one above) or `stream`, one CUDA device: after the work queued there, without
  // waiting; applies on any stream come after it. Host values: pageable memory is staged
  // before the call returns, page-locked memory (CudaHostPinnedSpace) is read later and must
  // not change until the stream has passed the refresh. Where the Operator keeps a host copy
  // of the values for Mode::Transpose (kernels without a resident CSR: seg, seg-r,
  // full-overlap; 64-bit offsets), device values are read back: the host waits for the stream
  // first. Several devices and the other backends: `exec` is fenced, then as update_values(values)
  // (the stream form does not wait: there `stream` must have passed the values' writes).
  template <class Exec, class V, class = std::enable_if_t<Kokkos::is_execution_space<Exec>::value>>
  void update_values(const Exec& exec, const V& values) {
    if (options_.backend != Backend::Cuda || options_.devices.size() != 1) exec.fence();
    update_views(detail::stream_of(exec), values);
  }
  void update_values(DeviceStream stream, const Scalar* values, std::size_t count,
                     bool device_memory);

  // Waits for the device work this Operator has queued (nothing on the host backend).
  void synchronize();

  Kernel kernel() const;
  // Options::reorder: the ordering the operator runs on (Reorder::Auto resolved; None where it
  // keeps none) and its permutation, perm[new] = old (empty for none and for stripes, which
  // permute no vector).
  Reorder reorder() const { return reorder_; }
  const std::vector<Ordinal>& permutation() const { return perm_; }
  // With a permutation: apply on Views and pointers takes and returns vectors in the permuted
  // order (entry i is the caller's entry perm[i]) when `permuted` is true, saving the gather of
  // x and the scatter of y (for a solver that permutes its right-hand side once); false: the
  // caller's order, the default. Distributed vectors always hold the permuted order.
  void use_permuted_order(bool permuted) { permuted_order_ = permuted; }
  bool permuted_order() const { return permuted_order_; }
  // Where the matrix lives during apply: Options::residency with Auto resolved (Resident on the
  // host backend).
  Residency residency() const;
  const Options& options() const { return options_; }
  // The last apply's times (waits for it when it is still running on a device), and the
  // reordering's (Timings::reorder_ms). Applies on device vectors are timed only with
  // Options::time_applies (kernel_ms and total_ms are 0 otherwise): timing events cost the
  // device a few microseconds per apply.
  Timings timings() const;
  Ordinal nrows() const { return nrows_; }
  Ordinal ncols() const { return ncols_; }

 private:
  void init(const CsrMatrix<Scalar>& a, DeviceStream stream);
  void init_device(const DeviceCsrArrays<Scalar>& a, DeviceStream stream);
  // The View constructors' work, the set-up on `stream`.
  template <class RowMap, class Entries, class Values>
  void init_views(DeviceStream stream, Ordinal ncols, const RowMap& row_map, const Entries& entries,
                  const Values& values);
  template <class V>
  void update_views(DeviceStream stream, const V& values) {
    static_assert(std::is_same_v<std::remove_const_t<typename V::value_type>, Scalar>,
                  "kspmv: update_values takes Views of the operator's scalar type");
    if (!values.span_is_contiguous())
      throw InvalidArgument("update_values: the values View is not contiguous");
    update_values(stream, values.data(), values.extent(0),
                  detail::place_of<typename V::memory_space>(options_.backend) == Place::Device);
  }
  // `a` reordered by Options::reorder (perm_, reorder_ and the timings set), or `a` itself; or,
  // where Reorder::Bfs was found on the CUDA device (detail::order_on_device), `a` returned
  // unused and impl_ built there, on P A P^T where it is kept and on A otherwise.
  CsrMatrix<Scalar> reordered(const CsrMatrix<Scalar>& a, DeviceStream stream);
  // source_, made from original_ and perm_ on first use where the device built P A P^T (a
  // transpose the device operator does not make itself).
  const CsrMatrix<Scalar>& host_source();
  // Whether the operator runs `a` in column stripes (Reorder::Stripes, or Auto where the model
  // says they pay; reorder_model_ set); `cache`: the L2 of the device (0 off CUDA).
  bool takes_stripes(const CsrMatrix<Scalar>& a, std::size_t cache);
  // The gather and scatter of vectors in `place` (made on first use for host vectors).
  VectorPermutation<Scalar>& permuter(Place place);
  OperatorImpl<Scalar>& impl() const;  // InvalidArgument after a move
  // Held while a call runs; InvalidArgument when another thread's call holds it (or after a
  // move). Host-type backends also hold host_kokkos_lock() (the second of the pair).
  std::pair<std::unique_lock<std::mutex>, std::unique_lock<std::recursive_mutex>> claim() const;
  OperatorImpl<Scalar>& impl(Mode mode);
  // Throws InvalidArgument unless v was made by this operator's make_vector.
  void check_layout(const DistributedVector<Scalar>& v, const char* name) const;
  // Checks and runs one apply on k columns (the Views' extents already known).
  void apply_columns(DeviceStream stream, Place place, Scalar alpha, const Scalar* x,
                     std::size_t nx, std::size_t ldx, Scalar beta, Scalar* y, std::size_t ny,
                     std::size_t ldy, std::size_t k, std::size_t ky, Mode mode);

  template <class X, class Y>
  void apply_views(DeviceStream stream, Scalar alpha, const X& x, Scalar beta, const Y& y,
                   Mode mode) {
    static_assert(Kokkos::is_view<Y>::value, "kspmv: y must be a View");
    static_assert(std::is_same_v<typename Y::value_type, Scalar>,
                  "kspmv: y must be a View of the operator's (non-const) scalar type");
    static_assert(std::is_same_v<std::remove_const_t<typename X::value_type>, Scalar>,
                  "kspmv: x must be a View of the operator's scalar type");
    static_assert(unsigned(X::rank) == unsigned(Y::rank), "kspmv: x and y must have the same rank");
    detail::check_columns(x, "x");
    detail::check_columns(y, "y");
    const Place px = detail::place_of<typename X::memory_space>(options_.backend);
    const Place py = detail::place_of<typename Y::memory_space>(options_.backend);
    if (px != py)
      throw InvalidArgument("apply: x and y must both be in host memory or both in device memory");
    const std::size_t kx = X::rank == 2 ? x.extent(1) : 1, ky = Y::rank == 2 ? y.extent(1) : 1;
    apply_columns(stream, px, alpha, x.data(), x.extent(0), detail::leading_dim(x), beta, y.data(),
                  y.extent(0), detail::leading_dim(y), kx, ky, mode);
  }

  Options options_;
  Ordinal nrows_ = 0, ncols_ = 0;
  std::size_t nnz_ = 0;
  std::unique_ptr<OperatorImpl<Scalar>> impl_;
  OperatorImpl<Scalar>* last_ = nullptr;  // the operator (or its transpose) of the last apply
  std::unique_ptr<OperatorImpl<Scalar>> transpose_;  // built on the first Mode::Transpose
  CsrMatrix<Scalar> source_;          // the host matrix (shared) that the transpose comes from
                                      // (host_source())
  std::shared_ptr<const void> keep_;  // the caller's Views when built from Views
  Reorder reorder_ = Reorder::None;
  std::vector<Ordinal> perm_;    // perm[new] = old; empty without reordering
  Ordinal permute_window_ = 0;   // the device vectors' permutation's (ReorderEstimate::window)
  CsrMatrix<Scalar> original_;   // the caller's matrix (shared) that source_ permutes
  bool permuted_order_ = false;  // use_permuted_order
  double reorder_ms_ = 0, reorder_model_ = 0;
  double device_upload_ms_ = 0;  // A's upload where the ordering ran on the device
  std::unique_ptr<VectorPermutation<Scalar>> host_permuter_, device_permuter_;
  std::unique_ptr<std::mutex> busy_ = std::make_unique<std::mutex>();  // claim()'s
};

template <class Scalar>
template <class RowMap, class Entries, class Values>
void Operator<Scalar>::init_views(DeviceStream stream, Ordinal ncols, const RowMap& row_map,
                                  const Entries& entries, const Values& values) {
  static_assert(RowMap::rank == 1 && Entries::rank == 1 && Values::rank == 1,
                "kspmv: CSR arrays are rank-1 Views");
  static_assert(std::is_integral_v<typename RowMap::value_type> &&
                    std::is_integral_v<typename Entries::value_type>,
                "kspmv: row map and entries hold integers");
  static_assert(std::is_same_v<std::remove_const_t<typename Values::value_type>, Scalar>,
                "kspmv: the values View must hold the operator's scalar type");
  const Place place = detail::place_of<typename RowMap::memory_space>(options_.backend);
  if (detail::place_of<typename Entries::memory_space>(options_.backend) != place ||
      detail::place_of<typename Values::memory_space>(options_.backend) != place)
    throw InvalidArgument("Operator: row map, entries and values must live in the same memory");
  if (!row_map.span_is_contiguous() || !entries.span_is_contiguous() ||
      !values.span_is_contiguous())
    throw InvalidArgument("Operator: the CSR Views must be contiguous");
  const std::size_t rows = row_map.extent(0) > 0 ? row_map.extent(0) - 1 : 0;
  detail::check_csr_extents(rows, ncols, entries.extent(0), values.extent(0));
  keep_ = std::make_shared<const std::tuple<RowMap, Entries, Values>>(row_map, entries, values);
  if (place == Place::Host) {
    CsrMatrix<Scalar> a;
    a.nrows = static_cast<Ordinal>(rows);
    a.ncols = ncols;
    a.row_ptr = row_map.extent(0) > 0 ? detail::host_array<Offset>(row_map, "row_ptr")
                                      : HostView<Offset>("row_ptr", 1);
    a.col_idx = detail::host_array<Ordinal>(entries, "col_idx");
    a.values = detail::host_array<Scalar>(values, "values");
    init(a, stream);
    return;
  }
  using O = std::remove_const_t<typename RowMap::value_type>;
  using C = std::remove_const_t<typename Entries::value_type>;
  init_device({row_map.data(), static_cast<int>(sizeof(O)), std::is_signed_v<O>, entries.data(),
               static_cast<int>(sizeof(C)), values.data(), static_cast<Ordinal>(rows), ncols,
               entries.extent(0)},
              stream);
}

extern template class Operator<float>;
extern template class Operator<double>;
extern template class Operator<Kokkos::complex<float>>;
extern template class Operator<Kokkos::complex<double>>;

}  // namespace kspmv
