// One rank's vectors (kspmv/core/rank_vectors.hpp) on the host and, with a GPU, on a CUDA device:
// every operation against plain loops, the halo's pack and unpack, and the SpMV of the rows
// after the first ones applied on the vectors' stream into a vector's middle (as MpiOperator's
// boundary rows are).
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "kspmv/gen/generators.hpp"
#include "kspmv/operator.hpp"
#include "kspmv/rank_vectors.hpp"
#include "kspmv/registry.hpp"
#include "testing/reference.hpp"

namespace kspmv::test {
namespace {

class RankVectorsTest : public ::testing::TestWithParam<Backend> {
 protected:
  void SetUp() override {
    if (GetParam() == Backend::Cuda && cuda_device_count() == 0) GTEST_SKIP() << "no CUDA device";
    v_ = make_rank_vectors<double>(GetParam(), 0);
  }
  // n entries where the vectors live, from host values.
  DistributedVector<double> put(const std::vector<double>& host) {
    DistributedVector<double> d = v_->allocate(host.size());
    v_->upload(host.data(), host.size(), d.data(0));
    return d;
  }
  std::vector<double> get(const DistributedVector<double>& d, std::size_t n) {
    std::vector<double> host(n);
    v_->download(d.data(0), n, host.data());
    return host;
  }
  std::unique_ptr<RankVectors<double>> v_;
};

std::vector<double> ramp(std::size_t n, double scale) {
  std::vector<double> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = scale * std::sin(0.37 * double(i) + scale);
  return v;
}

TEST_P(RankVectorsTest, OperationsMatchPlainLoops) {
  const std::size_t n = 100003;  // several blocks and a ragged end
  const std::vector<double> x = ramp(n, 1.5), y = ramp(n, -0.75);
  DistributedVector<double> dx = put(x), dy = put(y), out = v_->allocate(n);
  v_->fill(out.data(0), n, std::nan(""));
  v_->combine(2.0, dx.data(0), -3.0, dy.data(0), out.data(0), n);
  std::vector<double> got = get(out, n);
  for (std::size_t i = 0; i < n; ++i) ASSERT_DOUBLE_EQ(got[i], 2 * x[i] - 3 * y[i]) << i;
  v_->combine(0.5, dx.data(0), 0.0, nullptr, out.data(0), n);  // y unread when b == 0
  got = get(out, n);
  for (std::size_t i = 0; i < n; ++i) ASSERT_DOUBLE_EQ(got[i], 0.5 * x[i]) << i;

  double dot = 0, sum = 0, most = 0;
  for (std::size_t i = 0; i < n; ++i)
    dot += x[i] * y[i], sum += std::abs(x[i]), most = std::max(most, std::abs(x[i]));
  const double* xs[] = {dx.data(0), dy.data(0)};
  const double* ys[] = {dy.data(0), dy.data(0)};
  double r[2];
  v_->reduce(Reduction::Dot, xs, ys, 2, n, r);
  EXPECT_NEAR(r[0], dot, 1e-12 * n);
  double yy = 0;
  for (double e : y) yy += e * e;
  EXPECT_NEAR(r[1], yy, 1e-12 * n);
  v_->reduce(Reduction::AbsSum, xs, xs, 1, n, r);
  EXPECT_NEAR(r[0], sum, 1e-12 * n);
  v_->reduce(Reduction::AbsMax, xs, xs, 1, n, r);
  EXPECT_EQ(r[0], most);
}

TEST_P(RankVectorsTest, CgPassesMatchPlainLoops) {
  const std::size_t n = 7777;
  std::vector<double> x = ramp(n, 1), r = ramp(n, 2), p = ramp(n, 3);
  const std::vector<double> q = ramp(n, 4);
  DistributedVector<double> dx = put(x), dr = put(r), dp = put(p), dq = put(q);
  const double rr = v_->update_r(0.25, dq.data(0), dr.data(0), n);
  v_->update_xp(0.25, 0.5, dr.data(0), dp.data(0), dx.data(0), n);
  double expected = 0;
  for (std::size_t i = 0; i < n; ++i) {
    r[i] -= 0.25 * q[i];
    expected += r[i] * r[i];
    x[i] += 0.25 * p[i];
    p[i] = r[i] + 0.5 * p[i];
  }
  EXPECT_NEAR(rr, expected, 1e-12 * expected);
  EXPECT_EQ(get(dr, n), r);
  EXPECT_EQ(get(dx, n), x);
  EXPECT_EQ(get(dp, n), p);
}

// The halo's round trip: gather some entries to host memory, land them after the owned ones.
TEST_P(RankVectorsTest, PackAndUnpackTheHalo) {
  const std::size_t owned = 5000, ghosts = 300;
  std::vector<double> x = ramp(owned + ghosts, 1);
  DistributedVector<double> dx = put(x);
  std::vector<Ordinal> idx;
  for (Ordinal i = 0; i < static_cast<Ordinal>(ghosts); ++i) idx.push_back((i * 17) % owned);
  const DistributedVector<Ordinal> di = v_->indices(idx);
  DistributedVector<double> send = v_->host_buffer(ghosts), receive = v_->host_buffer(ghosts);
  v_->pack(dx.data(0), di.data(0), ghosts, send.data(0));
  v_->wait_packed();
  for (std::size_t i = 0; i < ghosts; ++i) {
    ASSERT_EQ(send.data(0)[i], x[idx[i]]) << i;
    receive.data(0)[i] = -double(i);
  }
  v_->unpack(receive.data(0), ghosts, dx.data(0) + owned);
  const std::vector<double> got = get(dx, owned + ghosts);
  for (std::size_t i = 0; i < ghosts; ++i) EXPECT_EQ(got[owned + i], -double(i));
  for (std::size_t i = 0; i < owned; ++i) ASSERT_EQ(got[i], x[i]);
}

// An Operator of the same backend applied on the vectors' stream, y being the middle of an array.
TEST_P(RankVectorsTest, OperatorAppliesOnTheStreamIntoAnArraysMiddle) {
  const auto a = gen::stencil3d_27<double>(12);
  Options o;
  o.backend = GetParam();
  Operator<double> op(a, o);
  const std::size_t n = static_cast<std::size_t>(a.nrows), offset = 123;
  const std::vector<double> x = ramp(n, 1);
  std::vector<double> y(n + offset, std::numeric_limits<double>::quiet_NaN());
  DistributedVector<double> dx = put(x), dy = put(y);
  if (v_->device() >= 0)
    op.apply(v_->stream(), 1.0, dx.data(0), 0.0, dy.data(0) + offset);
  else
    op.apply(1.0, dx.data(0), 0.0, dy.data(0) + offset);
  std::vector<double> expected(n, 0.0);
  reference::spmv(1.0, a, x.data(), 0.0, expected.data());
  const std::vector<double> got = get(dy, n + offset);  // waits for the stream
  EXPECT_LE(reference::rel_l2_error(got.data() + offset, expected.data(), n), 1e-12);
  EXPECT_TRUE(std::isnan(got[offset - 1]));
}

INSTANTIATE_TEST_SUITE_P(Backends, RankVectorsTest, ::testing::Values(Backend::Host, Backend::Cuda),
                         [](const auto& info) { return std::string(to_string(info.param)); });

}  // namespace
}  // namespace kspmv::test
