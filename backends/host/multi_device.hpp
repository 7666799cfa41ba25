// Host emulation of multi-device SpMV: executes a PartitionPlan on N virtual devices, one after
// the other, with the data layout and exchange logic the CUDA multi-device executor uses, so that
// its results and its bytes exchanged can be checked against this class.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "kspmv/core/operator_impl.hpp"
#include "kspmv/formats/csr.hpp"
#include "partitioners/exchange.hpp"
#include "partitioners/partition_plan.hpp"

namespace kspmv::host {

// The exchange modes, their names and which schemes they apply to (partitioners/exchange.hpp).
using part::Exchange;
using part::exchange_applies;
using part::parse_exchange;
using part::to_string;

// Bytes one device sends to and receives from the other devices in one apply (device-to-device
// traffic only: uploading x and y and downloading y are not exchanges).
struct DeviceTraffic {
  std::size_t bytes_sent = 0;
  std::size_t bytes_received = 0;
};

template <class S>
class MultiDeviceHost {
 public:
  // Copies each device's blocks into local pieces (local row_ptr = row_ptr - nnz_begin, MSREP
  // style; pCOO: local row indices; pCSC: a CSC of `a` with local column pointers) and, for Halo,
  // computes once which x entries each device receives from which owner. Exchange::Auto takes
  // the candidate with the fewest bytes exchanged per apply (ties: AllGather, Merge, Halo).
  // Throws InvalidArgument when the plan does not describe `a` and UnsupportedError when the
  // exchange does not apply.
  MultiDeviceHost(const CsrMatrix<S>& a, const part::PartitionPlan& plan, Exchange exchange);

  // y = alpha*A*x + beta*y (beta == 0 overwrites y, NaN included). x: ncols, y: nrows entries.
  void apply(S alpha, const S* x, S beta, S* y);

  // New values of the same pattern, nnz entries in the CSR order of `a`, in place of each
  // piece's (the plan, the pieces and the halo are kept): its non-zero range of them, or for
  // pCSC of their CSC order.
  void update_values(const S* csr_values);

  // The exchange in use (Auto resolved).
  Exchange exchange() const { return exchange_; }
  // Per device, the traffic of one apply (fixed at construction).
  const std::vector<DeviceTraffic>& exchange_bytes() const { return traffic_; }
  // Device d's y after the last apply: the whole y (AllGather: every device; Merge: device 0,
  // the others hold nothing) or its owned rows in increasing row order (Halo).
  const std::vector<S>& device_y(int d) const { return devices_[d].y; }
  // Halo: the x entries device d receives from the others in each apply (global indices).
  const std::vector<Ordinal>& halo_columns(int d) const { return devices_[d].halo_cols; }

 private:
  struct Piece {
    part::Block block;
    std::vector<Offset> ptr;    // local row pointer (CSR / pCSR) or column pointer (pCSC)
    std::vector<Ordinal> idx;   // column (row-based; Halo: index into the device's x) or row (pCSC)
    std::vector<Ordinal> rows;  // pCOO: local row of each entry
    std::vector<S> val;
    Ordinal y_offset = 0;    // Halo: where its rows start in the device's y
    std::vector<S> partial;  // alpha * A_piece * x: block rows (pCSC: nrows) entries
  };
  struct Device {
    std::vector<Piece> pieces;
    std::vector<S> x, y;
    std::vector<Ordinal> owned_cols;    // Halo: x entries this device owns, increasing
    std::vector<Ordinal> halo_cols;     // Halo: x entries it receives, grouped by owner
    std::vector<int> halo_src;          // Halo: owner of each received entry ...
    std::vector<Ordinal> halo_src_pos;  // ... and its position in the owner's x
  };

  void setup_halo(const CsrMatrix<S>& a);
  void compute_partials(S alpha);

  Exchange exchange_;
  part::PartitionPlan plan_;
  HostView<Offset> csc_order_;  // pCSC: csc_order(a), where the CSC's values come from
  std::vector<Device> devices_;
  std::vector<DeviceTraffic> traffic_;
};

// The host backend's Operator over Options::devices.size() emulated devices: the
// Options::partition plan (pcsc through partition_pcsc) and Options::exchange (auto: fewest
// bytes). timings() gives the whole apply; the emulation has no per-device clock.
template <class S>
std::unique_ptr<OperatorImpl<S>> make_multi_operator(const CsrMatrix<S>& a, const Options& o);

extern template class MultiDeviceHost<float>;
extern template class MultiDeviceHost<double>;
extern template std::unique_ptr<OperatorImpl<float>> make_multi_operator(const CsrMatrix<float>&,
                                                                         const Options&);
extern template std::unique_ptr<OperatorImpl<double>> make_multi_operator(const CsrMatrix<double>&,
                                                                          const Options&);

}  // namespace kspmv::host
