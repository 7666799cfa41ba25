// The orderings of ordering.hpp.
#include "kspmv/analysis/ordering.hpp"

#include <algorithm>
#include <numeric>
#include <string>

#include "kspmv/core/error.hpp"

namespace kspmv::analysis {

namespace {

// Breadth-first search along the rows from `root` over the vertices not yet numbered, marking
// each vertex it reaches with `stamp`; returns the vertices of the last level and the number of
// levels.
std::pair<std::vector<Ordinal>, int> last_level(const Offset* row_ptr, const Ordinal* col,
                                                Ordinal root, const std::vector<char>& numbered,
                                                std::vector<Ordinal>& mark, Ordinal stamp) {
  std::vector<Ordinal> level{root}, next;
  mark[root] = stamp;
  int depth = 1;
  for (;;) {
    next.clear();
    for (const Ordinal v : level)
      for (Offset p = row_ptr[v]; p < row_ptr[v + 1]; ++p) {
        const Ordinal w = col[p];
        if (!numbered[w] && mark[w] != stamp) {
          mark[w] = stamp;
          next.push_back(w);
        }
      }
    if (next.empty()) return {level, depth};
    level.swap(next);
    ++depth;
  }
}

}  // namespace

std::vector<Ordinal> rcm_order(const Offset* row_ptr, const Ordinal* col, Ordinal n) {
  for (Offset p = 0; p < (n > 0 ? row_ptr[n] : 0); ++p)
    if (col[p] < 0 || col[p] >= n)
      throw InvalidArgument("rcm_order: column " + std::to_string(col[p]) + " of a " +
                            std::to_string(n) + " x " + std::to_string(n) + " pattern");
  const auto degree = [&](Ordinal v) { return row_ptr[v + 1] - row_ptr[v]; };
  std::vector<Ordinal> by_degree(n);  // the roots of the components, least degree first
  std::iota(by_degree.begin(), by_degree.end(), 0);
  std::stable_sort(by_degree.begin(), by_degree.end(),
                   [&](Ordinal a, Ordinal b) { return degree(a) < degree(b); });
  std::vector<char> numbered(n, 0);
  std::vector<Ordinal> order, mark(n, -1), neighbours;
  order.reserve(n);
  Ordinal stamp = 0;
  for (const Ordinal start : by_degree) {
    if (numbered[start]) continue;
    // The pseudo-peripheral root: a vertex of least degree in the last level, while that level
    // moves further away (at most a few sweeps: each costs a pass over the component).
    Ordinal root = start;
    auto [level, depth] = last_level(row_ptr, col, root, numbered, mark, stamp++);
    for (int sweep = 0; sweep < 4; ++sweep) {
      const Ordinal far = *std::min_element(
          level.begin(), level.end(), [&](Ordinal a, Ordinal b) { return degree(a) < degree(b); });
      auto [far_level, far_depth] = last_level(row_ptr, col, far, numbered, mark, stamp++);
      if (far_depth <= depth) break;
      root = far;
      level = std::move(far_level);
      depth = far_depth;
    }
    // Cuthill-McKee from the root: the queue is the order itself.
    std::size_t head = order.size();
    order.push_back(root);
    numbered[root] = 1;
    for (; head < order.size(); ++head) {
      const Ordinal v = order[head];
      neighbours.clear();
      for (Offset p = row_ptr[v]; p < row_ptr[v + 1]; ++p) {
        const Ordinal w = col[p];
        if (!numbered[w]) {
          numbered[w] = 1;
          neighbours.push_back(w);
        }
      }
      std::stable_sort(neighbours.begin(), neighbours.end(),
                       [&](Ordinal a, Ordinal b) { return degree(a) < degree(b); });
      order.insert(order.end(), neighbours.begin(), neighbours.end());
    }
  }
  std::reverse(order.begin(), order.end());
  return order;
}

std::vector<Ordinal> degree_order(const Offset* row_ptr, Ordinal n) {
  std::vector<Ordinal> order(n);
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](Ordinal a, Ordinal b) {
    return row_ptr[a + 1] - row_ptr[a] > row_ptr[b + 1] - row_ptr[b];
  });
  return order;
}

std::vector<Ordinal> inverse_permutation(const std::vector<Ordinal>& perm) {
  std::vector<Ordinal> inv(perm.size());
  for (std::size_t i = 0; i < perm.size(); ++i) inv[perm[i]] = static_cast<Ordinal>(i);
  return inv;
}

}  // namespace kspmv::analysis
