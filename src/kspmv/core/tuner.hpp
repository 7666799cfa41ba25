// The one rule by which kspmv chooses by timing (docs/DESIGN.md "The tuner"): Kernel::Auto's
// autotune, the LRA / LRA+RC (d_l, d_c) pair and the Auto exchange of several devices. Each
// candidate makes kTuneWarmup untimed calls and then kTuneRuns timed ones, in turn (every call of
// one candidate, then the next: where a candidate is costly to build) or interleaved (a call of
// each in a round, the warm-up rounds first: where all are alive, so that a drift of the device,
// e.g. its clocks rising after a long set-up on the host, weighs on every candidate alike); the
// candidate with the smallest median time is kept (ties: the earlier one). The caller times each
// call its own way (CUDA events on a device, a steady clock on the host) and hands the time over.
// Kokkos-free: the CUDA backend uses it.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace kspmv {

inline constexpr int kTuneWarmup = 1;
inline constexpr int kTuneRuns = 5;

// One candidate of one choice, as the tuner measured it.
struct TuneTrial {
  std::string choice;     // what was chosen: "kernel", "exchange" or "partition"
  std::string candidate;  // e.g. "csr-vector", "halo", "d_l=0.3,d_c=0.025"
  double median_ms = 0;   // median of its timed calls (0 before they ran)
  int runs = 0;           // its timed calls so far
  bool kept = false;      // the choice, once every candidate ran
};

class Tuner {
 public:
  enum class Order { InTurn, Interleaved };
  Tuner() = default;
  // Throws InvalidArgument for no candidates, warmup < 0 or runs < 1.
  Tuner(std::string choice, std::vector<std::string> candidates, int warmup = kTuneWarmup,
        int runs = kTuneRuns, Order order = Order::InTurn);

  // Every candidate has run (a single candidate is chosen at once, untimed).
  bool done() const { return next_ >= times_.size(); }
  // The candidate the next call runs (the best one once done).
  std::size_t current() const { return done() ? best_ : next_; }
  // The time of the call that just ran current(): dropped during its warm-up.
  void record(double ms);
  // The kept candidate (valid once done).
  std::size_t best() const { return best_; }
  std::size_t size() const { return names_.size(); }
  std::vector<TuneTrial> trials() const;

 private:
  std::string choice_;
  std::vector<std::string> names_;
  int warmup_ = kTuneWarmup, runs_ = kTuneRuns;
  Order order_ = Order::InTurn;
  std::vector<std::vector<double>> times_;  // per candidate, its timed calls
  std::size_t next_ = 0, best_ = 0;  // next_: the candidate of the next call; size() once done
  int calls_ = 0;  // in turn: calls of candidate next_ so far; interleaved: rounds begun
  void decide();
};

}  // namespace kspmv
