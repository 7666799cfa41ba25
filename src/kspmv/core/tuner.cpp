#include "kspmv/core/tuner.hpp"

#include <algorithm>
#include <utility>

#include "kspmv/core/error.hpp"

namespace kspmv {

namespace {

double median_of(std::vector<double> v) {
  if (v.empty()) return 0;
  const auto mid = v.begin() + v.size() / 2;
  std::nth_element(v.begin(), mid, v.end());
  if (v.size() % 2) return *mid;
  return 0.5 * (*mid + *std::max_element(v.begin(), mid));
}

}  // namespace

Tuner::Tuner(std::string choice, std::vector<std::string> candidates, int warmup, int runs,
             Order order)
    : choice_(std::move(choice)),
      names_(std::move(candidates)),
      warmup_(warmup),
      runs_(runs),
      order_(order) {
  if (names_.empty()) throw InvalidArgument("Tuner: no candidates for " + choice_);
  if (warmup < 0 || runs < 1) throw InvalidArgument("Tuner: warmup >= 0 and runs >= 1 needed");
  times_.resize(names_.size());
  if (names_.size() == 1) next_ = 1;  // nothing to compare
}

void Tuner::record(double ms) {
  if (done()) return;
  if (order_ == Order::Interleaved) {  // calls_: the round of this call
    if (calls_ >= warmup_) times_[next_].push_back(ms);
    if (++next_ < times_.size()) return;
    next_ = 0;
    if (++calls_ < warmup_ + runs_) return;
    next_ = times_.size();
    decide();
    return;
  }
  if (calls_++ >= warmup_) times_[next_].push_back(ms);
  if (static_cast<int>(times_[next_].size()) < runs_) return;
  calls_ = 0;
  if (++next_ < times_.size()) return;
  decide();
}

void Tuner::decide() {
  for (std::size_t k = 1; k < times_.size(); ++k)
    if (median_of(times_[k]) < median_of(times_[best_])) best_ = k;
}

std::vector<TuneTrial> Tuner::trials() const {
  std::vector<TuneTrial> t;
  for (std::size_t k = 0; k < names_.size(); ++k)
    t.push_back({choice_, names_[k], median_of(times_[k]), static_cast<int>(times_[k].size()),
                 done() && k == best_});
  return t;
}

}  // namespace kspmv
