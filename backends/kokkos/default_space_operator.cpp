// The kokkos-default backend: the portable kernels on Kokkos::DefaultExecutionSpace.
#include "backends/kokkos/default_space_operator.hpp"

#include <optional>
#include <string>
#include <type_traits>
#include <utility>

#include "backends/kokkos/space_adopt.hpp"
#include "backends/kokkos/spmv.hpp"
#include "kspmv/core/error.hpp"
#include "kspmv/formats/convert.hpp"

namespace kspmv::host {

namespace {

using Exec = Kokkos::DefaultExecutionSpace;
using Memory = SpaceMemory;
template <class T>
using SpaceView = Kokkos::View<T*, Memory>;
template <class T>
using HostIn = Kokkos::View<const T*, HostMemorySpace, Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
template <class T>
using HostOut = Kokkos::View<T*, HostMemorySpace, Kokkos::MemoryTraits<Kokkos::Unmanaged>>;

// A host View's entries in the space's memory: the View itself where that memory is the host's.
template <class T>
SpaceView<T> to_space(const HostView<T>& v) {
  return Kokkos::create_mirror_view_and_copy(Memory(), v);
}

// `values` made the space's own (not shared with the host matrix) before it is written.
template <class S>
void own(SpaceView<S>& values, const S* shared) {
  if (values.data() == shared && values.extent(0) > 0)
    values =
        SpaceView<S>(Kokkos::view_alloc(Kokkos::WithoutInitializing, "values"), values.extent(0));
}

// Each format in the space's memory: run(exec, ...) enqueues its kernel; refresh(src) puts new
// values (in the CSR order of the source, a View in host or space memory) in place.
// CSR: from a host matrix, or adopted in the space (adopt_in_space) from the caller's arrays. On
// a device, the chunks of its long rows are planned once with the arrays (the pattern: new values
// keep them).
template <class S>
struct SpaceCsr {
  static constexpr Kernel kKernel = Kernel::Csr;
  SpaceCsrArrays<S> a;
  const S* shared = nullptr;  // the host matrix's values, shared where the space's memory is the
                              // host's
  Ordinal m, n;
  Offset nnz;
  RowChunks<Exec> chunks;

  explicit SpaceCsr(const CsrMatrix<S>& h)
      : a{to_space(h.row_ptr), to_space(h.col_idx), to_space(h.values), h.nrows, h.ncols, h.nnz()},
        shared(h.values.data()),
        m(a.m),
        n(a.n),
        nnz(a.nnz),
        chunks(plan()) {}
  explicit SpaceCsr(SpaceCsrArrays<S> adopted)
      : a(std::move(adopted)), m(a.m), n(a.n), nnz(a.nnz), chunks(plan()) {}
  CsrArrays<Exec, S> arrays() const { return {a.row_ptr, a.col, a.val, m, n, nnz}; }
  RowChunks<Exec> plan() const {
    return kOnHost<Exec> ? RowChunks<Exec>() : plan_row_chunks(Exec(), arrays());
  }
  void run(const Exec& e, S alpha, const S* x, S beta, S* y, const ScatterWork<Exec>&) const {
    spmv(e, alpha, arrays(), x, beta, y, chunks);
  }
  template <class Src>
  void refresh(const Src& csr_values) {
    own(a.val, shared);
    Kokkos::deep_copy(a.val, csr_values);
  }
};

// COO: to_coo keeps the CSR's order of the entries, so new values are copied in.
template <class S>
struct SpaceCoo {
  static constexpr Kernel kKernel = Kernel::Coo;
  SpaceView<Ordinal> row, col;
  SpaceView<S> val;
  Ordinal m, n;
  Offset nnz;

  explicit SpaceCoo(const CsrMatrix<S>& a) {
    const CooMatrix<S> coo = to_coo(a);
    row = to_space(coo.row_idx), col = to_space(coo.col_idx), val = to_space(coo.values);
    m = a.nrows, n = a.ncols, nnz = a.nnz();
  }
  void run(const Exec& e, S alpha, const S* x, S beta, S* y, const ScatterWork<Exec>& work) const {
    spmv(e, alpha, CooArrays<Exec, S>{row, col, val, m, n, nnz}, x, beta, y, work);
  }
  template <class Src>
  void refresh(const Src& csr_values) {
    Kokkos::deep_copy(val, csr_values);
  }
};

// CSC: new values gathered through the CSR position of each CSC entry (csc_order, computed from
// the host matrix at the first refresh and kept in the space: nnz Offsets).
template <class S>
struct SpaceCsc {
  static constexpr Kernel kKernel = Kernel::Csc;
  SpaceView<Offset> col_ptr;
  SpaceView<Ordinal> row;
  SpaceView<S> val;
  Ordinal m, n;
  Offset nnz;
  CsrMatrix<S> source;  // shared until the first refresh
  SpaceView<Offset> order;

  explicit SpaceCsc(const CsrMatrix<S>& a) : source(a) {
    const CscMatrix<S> csc = to_csc(a);
    col_ptr = to_space(csc.col_ptr), row = to_space(csc.row_idx), val = to_space(csc.values);
    m = a.nrows, n = a.ncols, nnz = a.nnz();
  }
  void run(const Exec& e, S alpha, const S* x, S beta, S* y, const ScatterWork<Exec>& work) const {
    spmv(e, alpha, CscArrays<Exec, S>{col_ptr, row, val, m, n, nnz}, x, beta, y, work);
  }
  template <class Src>
  void refresh(const Src& csr_values) {
    if (order.extent(0) != static_cast<std::size_t>(nnz)) {
      order = to_space(csc_order(source));
      source = CsrMatrix<S>();
    }
    const auto from = Kokkos::create_mirror_view_and_copy(Memory(), csr_values);
    Kokkos::parallel_for("kspmv::csc::refresh",
                         Kokkos::RangePolicy<Exec, Kokkos::IndexType<Offset>>(0, nnz),
                         Gather<decltype(from)>{val, order, from});
  }

  // to(p) = from(at(p)).
  template <class From>
  struct Gather {
    SpaceView<S> to;
    SpaceView<Offset> at;
    From from;
    KOKKOS_INLINE_FUNCTION void operator()(Offset p) const { to(p) = from(at(p)); }
  };
};

template <class S, class Format>
class SpaceOperator final : public OperatorImpl<S> {
 public:
  // From a host matrix, or (CSR) from arrays adopted in the space (`adopted`: nothing of the
  // matrix is on the host, so the operator builds its transpose itself).
  template <class Source>
  explicit SpaceOperator(const Source& a, bool adopted = false) : adopted_(adopted) {
    Kokkos::Timer timer;
    format_.emplace(a);
    if (Format::kKernel != Kernel::Csr)
      work_ = ScatterWork<Exec>(Kokkos::view_alloc(Kokkos::WithoutInitializing, "t"), format_->m);
    Exec().fence();
    preprocess_ms_ = timings_.preprocess_ms = timer.seconds() * 1e3;
  }

  void apply_host(S alpha, const S* x, S beta, S* y) override {
    Kokkos::Timer timer;
    const Exec exec;
    timings_ = {};
    timings_.preprocess_ms = preprocess_ms_;
    if constexpr (kOnHost<Exec>) {
      format_->run(exec, alpha, x, beta, y, work_);
      exec.fence();
      timings_.kernel_ms = timings_.total_ms = timer.seconds() * 1e3;
    } else {  // staged through buffers in the space's memory, after the applies on a stream
      synchronize();
      const auto m = static_cast<std::size_t>(format_->m), n = static_cast<std::size_t>(format_->n);
      if (x_.extent(0) != n || y_.extent(0) != m) {
        x_ = SpaceView<S>(Kokkos::view_alloc(Kokkos::WithoutInitializing, "x"), n);
        y_ = SpaceView<S>(Kokkos::view_alloc(Kokkos::WithoutInitializing, "y"), m);
      }
      Kokkos::deep_copy(exec, x_, HostIn<S>(x, n));
      if (beta != S(0)) Kokkos::deep_copy(exec, y_, HostIn<S>(y, m));
      exec.fence();
      timings_.h2d_ms = timer.seconds() * 1e3;
      format_->run(exec, alpha, x_.data(), beta, y_.data(), work_);
      exec.fence();
      timings_.kernel_ms = timer.seconds() * 1e3 - timings_.h2d_ms;
      Kokkos::deep_copy(exec, HostOut<S>(y, m), y_);
      exec.fence();
      timings_.total_ms = timer.seconds() * 1e3;
    }
  }

  void apply_device(S alpha, const S* x, S beta, S* y, DeviceStream stream) override {
    if constexpr (kOnHost<Exec>) {
      (void)alpha, (void)x, (void)beta, (void)y, (void)stream;
      throw UnsupportedError(std::string("the kokkos-default backend runs on the host (Kokkos::") +
                             Exec::name() + "): use host vectors");
    } else {
      timings_ = {};
      timings_.preprocess_ms = preprocess_ms_;
      format_->run(instance(stream), alpha, x, beta, y, work_);
    }
  }

  void update_values(const S* values, bool device) override {
    synchronize();  // the applies already queued read the old values
    const auto nnz = static_cast<std::size_t>(format_->nnz);
    if (device)
      format_->refresh(SpaceIn<Exec, S>(values, nnz));
    else
      format_->refresh(HostIn<S>(values, nnz));
    Exec().fence();
  }

  void synchronize() override {
    if (instance_) instance_->fence();
  }
  // Adopted arrays: the transpose of their current values, through the host (as much memory as
  // the operator again). Otherwise kspmv::Operator transposes its host matrix.
  std::unique_ptr<OperatorImpl<S>> make_transpose() const override {
    if constexpr (std::is_same_v<Format, SpaceCsr<S>>) {
      if (adopted_) {
        Exec().fence();
        return std::make_unique<SpaceOperator>(transpose(to_host(format_->a)));
      }
    }
    return nullptr;
  }
  bool transposes_itself() const override { return adopted_; }
  Kernel kernel() const override { return Format::kKernel; }
  Timings timings() const override { return timings_; }

 private:
  // The instance of the space on `stream` (CUDA), kept while the caller's stream stays the same:
  // building one allocates. Other spaces: their default instance.
  Exec instance(DeviceStream stream) {
#ifdef KOKKOS_ENABLE_CUDA
    if constexpr (std::is_same_v<Exec, Kokkos::Cuda>) {
      if (!instance_ || stream != stream_) instance_.emplace(stream), stream_ = stream;
      return *instance_;
    }
#endif
    (void)stream;
    if (!instance_) instance_.emplace();
    return *instance_;
  }

  bool adopted_;
  std::optional<Format> format_;
  ScatterWork<Exec> work_;
  SpaceView<S> x_, y_;  // staging of host vectors
  std::optional<Exec> instance_;
  DeviceStream stream_ = nullptr;
  double preprocess_ms_ = 0;
  Timings timings_;
};

template <class S, class Format>
std::unique_ptr<OperatorImpl<S>> make(const CsrMatrix<S>& a) {
  return std::make_unique<SpaceOperator<S, Format>>(a);
}

constexpr KernelInfo info(Kernel k, const char* summary) {
  return {k, Backend::KokkosDefault, Residency::Resident, false, false, false, summary};
}

}  // namespace

template <class S>
const std::vector<KernelRow<S>>& default_space_kernel_table() {
  static const std::vector<KernelRow<S>> rows = {
      {info(Kernel::Csr, "CSR, a row loop or vector lanes per row, on Kokkos' default space"),
       &make<S, SpaceCsr<S>>},
      {info(Kernel::Coo, "COO, scattered by rows, on Kokkos' default space"),
       &make<S, SpaceCoo<S>>},
      {info(Kernel::Csc, "CSC, scattered by columns, on Kokkos' default space"),
       &make<S, SpaceCsc<S>>},
  };
  return rows;
}

template <class S>
std::unique_ptr<OperatorImpl<S>> make_default_space_operator(const CsrMatrix<S>& a,
                                                             const Options& options) {
  return make_from_table(default_space_kernel_table<S>(), a, options.kernel,
                         Backend::KokkosDefault);
}

template <class S>
std::unique_ptr<OperatorImpl<S>> make_default_space_operator(const DeviceCsrArrays<S>& a,
                                                             const Options& options) {
  if (options.kernel != Kernel::Auto && options.kernel != Kernel::Csr)
    throw UnsupportedError(std::string("the kokkos-default backend runs csr on a matrix given in "
                                       "device memory (not '") +
                           to_string(options.kernel) + "')");
  return std::make_unique<SpaceOperator<S, SpaceCsr<S>>>(adopt_in_space(a, options.validate), true);
}

const char* default_space_name() {
  return Exec::name();
}

bool default_space_is_host() {
  return kOnHost<Exec>;
}

template const std::vector<KernelRow<float>>& default_space_kernel_table();
template const std::vector<KernelRow<double>>& default_space_kernel_table();
template std::unique_ptr<OperatorImpl<float>> make_default_space_operator(const CsrMatrix<float>&,
                                                                          const Options&);
template std::unique_ptr<OperatorImpl<double>> make_default_space_operator(const CsrMatrix<double>&,
                                                                           const Options&);
template std::unique_ptr<OperatorImpl<float>> make_default_space_operator(
    const DeviceCsrArrays<float>&, const Options&);
template std::unique_ptr<OperatorImpl<double>> make_default_space_operator(
    const DeviceCsrArrays<double>&, const Options&);

}  // namespace kspmv::host
