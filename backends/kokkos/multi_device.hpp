// Host emulation of multi-device SpMV: executes a PartitionPlan on N virtual devices, one after
// the other, carrying out the steps of the same part::ExchangeStrategy as the CUDA executor, so
// that its layout, its copies and its bytes exchanged are checked here. Each device's vectors
// hold NaN wherever the strategy does not put a value, so an entry read before it arrived shows
// in the result.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "kspmv/core/operator_impl.hpp"
#include "kspmv/core/tuner.hpp"
#include "kspmv/formats/csr.hpp"
#include "partitioners/exchange.hpp"
#include "partitioners/partition_plan.hpp"

namespace kspmv::host {

// The exchange modes, their names and which schemes they apply to (partitioners/exchange.hpp).
using part::DeviceTraffic;
using part::Exchange;
using part::exchange_applies;
using part::parse_exchange;
using part::to_string;

template <class S>
class MultiDeviceHost {
 public:
  // Copies each block into a local piece (local row_ptr = row_ptr - nnz_begin, MSREP style;
  // pCOO: local row indices; pCSC: a CSC of `a` with local column pointers; columns stay global)
  // and, for Halo, finds once which x entries each device receives from which owner.
  // Exchange::Auto times every candidate (part::exchange_candidates) on a steady clock by the
  // tuner's rule (core/tuner.hpp) and keeps the fastest. Throws InvalidArgument when the plan
  // does not describe `a` and UnsupportedError when the exchange does not apply.
  MultiDeviceHost(const CsrMatrix<S>& a, const part::PartitionPlan& plan, Exchange exchange);

  // y = alpha*A*x + beta*y (beta == 0 overwrites y, NaN included). x: ncols, y: nrows entries.
  void apply(S alpha, const S* x, S beta, S* y);

  // New values of the same pattern, nnz entries in the CSR order of `a`, in place of each
  // piece's (the plan, the pieces and the halo are kept): its non-zero range of them, or for
  // pCSC of their CSC order.
  void update_values(const S* csr_values);

  // The exchange in use (Auto resolved) and its strategy.
  Exchange exchange() const { return strategy_->mode(); }
  const part::ExchangeStrategy& strategy() const { return *strategy_; }
  // Per device, the traffic of one apply (fixed at construction).
  std::vector<DeviceTraffic> exchange_bytes() const { return strategy_->traffic(sizeof(S)); }
  // Device d's y after the last apply: the whole y where every device ends with it (AllGather),
  // else the rows it holds (part::ExchangeStrategy::y_home) in increasing row order.
  std::vector<S> device_y(int d) const;
  // Halo: the x entries device d receives from the others in each apply (global indices),
  // grouped by owner, increasing within an owner.
  std::vector<Ordinal> halo_columns(int d) const;
  // Exchange::Auto: what the tuner tried and kept (empty otherwise).
  const std::vector<TuneTrial>& trials() const { return trials_; }

 private:
  struct Piece {
    part::Block block;
    std::vector<Offset> ptr;    // local row pointer (CSR / pCSR) or column pointer (pCSC)
    std::vector<Ordinal> idx;   // column (row-based) or row (pCSC), global
    std::vector<Ordinal> rows;  // pCOO: local row of each entry
    std::vector<S> val;
    std::vector<S> partial;  // alpha * A_piece * x: block rows (pCSC: nrows) entries
    std::vector<S> inbox;    // Merge: its partial received on device 0
  };
  struct Device {
    std::vector<S> x, y;
  };

  void find_halo(const CsrMatrix<S>& a);
  void compute(Piece& pc, S alpha, const std::vector<S>& x) const;
  // The steps of one apply, on the devices' vectors already loaded.
  void run(S alpha, S beta);
  S* buffer(part::Buffer b, int device, int block);
  void use(Exchange mode);

  part::PartitionPlan plan_;
  std::unique_ptr<part::ExchangeStrategy> strategy_;
  HostView<Offset> csc_order_;  // pCSC: csc_order(a), where the CSC's values come from
  std::vector<Piece> pieces_;   // plan order
  std::vector<Device> devices_;
  std::vector<std::vector<std::vector<Ordinal>>> halo_;  // [dst][src]: the x entries received
  std::vector<bool> x_readers_;  // per piece: reads an x entry its device does not own
  std::vector<TuneTrial> trials_;
};

// The host backend's Operator over Options::devices.size() emulated devices: the
// Options::partition plan (pcsc through partition_pcsc) and Options::exchange. timings() gives
// the whole apply (the emulation has no per-device clock) and the Auto exchange's trials.
template <class S>
std::unique_ptr<OperatorImpl<S>> make_multi_operator(const CsrMatrix<S>& a, const Options& o);

extern template class MultiDeviceHost<float>;
extern template class MultiDeviceHost<double>;
extern template std::unique_ptr<OperatorImpl<float>> make_multi_operator(const CsrMatrix<float>&,
                                                                         const Options&);
extern template std::unique_ptr<OperatorImpl<double>> make_multi_operator(const CsrMatrix<double>&,
                                                                          const Options&);

}  // namespace kspmv::host
