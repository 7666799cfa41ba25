#include "kspmv/formats/batched_csr.hpp"

#include <string>
#include <vector>

namespace kspmv {

namespace {

template <class T>
HostView<T> to_view(const std::string& label, const std::vector<T>& v) {
  HostView<T> view = make_host_view<T>(label, v.size());
  for (std::size_t i = 0; i < v.size(); ++i) view(i) = v[i];
  return view;
}

int log2_of(int power_of_two) {
  int k = 0;
  while ((1 << k) < power_of_two) ++k;
  return k;
}

}  // namespace

template <class Scalar>
BatchedCsr<Scalar> make_batched_csr(const CsrMatrix<Scalar>& a, const BatchParams& params) {
  const BatchPlan plan = make_batch_plan(a.row_ptr.data(), a.nrows, params);
  BatchedCsr<Scalar> b;
  b.csr = a;
  b.params = params;
  b.batch_infos = to_view("kspmv::batched_csr::batch_infos", plan.batches);
  b.long_row_infos = to_view("kspmv::batched_csr::long_row_infos", plan.long_rows);
  b.big_batch_infos = to_view("kspmv::batched_csr::big_batch_infos", plan.big_batches);

  std::array<std::vector<Ordinal>, 6> groups;
  for (std::size_t i = 0; i < plan.batches.size(); ++i)
    groups[log2_of(plan.batches[i].vector_size)].push_back(static_cast<Ordinal>(i));
  std::vector<Ordinal> order;
  for (std::size_t k = 0; k < groups.size(); ++k) {
    b.vector_begin[k] = static_cast<Ordinal>(order.size());
    order.insert(order.end(), groups[k].begin(), groups[k].end());
  }
  b.vector_begin[6] = static_cast<Ordinal>(order.size());
  b.batches_by_vector = to_view("kspmv::batched_csr::batches_by_vector", order);
  return b;
}

template BatchedCsr<float> make_batched_csr(const CsrMatrix<float>&, const BatchParams&);
template BatchedCsr<double> make_batched_csr(const CsrMatrix<double>&, const BatchParams&);

}  // namespace kspmv
