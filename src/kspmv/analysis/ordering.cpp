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

// The rows of [0, n) by length, increasing or decreasing, ties in their order: a counting sort
// (stable, O(n + longest row)), where a comparison sort of 6e7 rows took seconds.
std::vector<Ordinal> rows_by_length(const Offset* row_ptr, Ordinal n, bool decreasing) {
  Offset longest = 0;
  for (Ordinal v = 0; v < n; ++v) longest = std::max(longest, row_ptr[v + 1] - row_ptr[v]);
  const auto key = [&](Ordinal v) {
    const Offset len = row_ptr[v + 1] - row_ptr[v];
    return static_cast<std::size_t>(decreasing ? longest - len : len);
  };
  std::vector<Ordinal> first(static_cast<std::size_t>(longest) + 2, 0);  // then: next slot
  for (Ordinal v = 0; v < n; ++v) ++first[key(v) + 1];
  std::partial_sum(first.begin(), first.end(), first.begin());
  std::vector<Ordinal> order(n);
  for (Ordinal v = 0; v < n; ++v) order[first[key(v)]++] = v;
  return order;
}

// Cuthill-McKee's breadth-first numbering of every component in turn, from its vertex of least
// degree: with `rcm`, from a pseudo-peripheral root, each vertex's neighbours by increasing
// degree, the order reversed; without, from that vertex, neighbours in column order (one pass).
std::vector<Ordinal> breadth_first(const Offset* row_ptr, const Ordinal* col, Ordinal n, bool rcm,
                                   const char* who) {
  for (Offset p = 0; p < (n > 0 ? row_ptr[n] : 0); ++p)
    if (col[p] < 0 || col[p] >= n)
      throw InvalidArgument(std::string(who) + ": column " + std::to_string(col[p]) + " of a " +
                            std::to_string(n) + " x " + std::to_string(n) + " pattern");
  const auto degree = [&](Ordinal v) { return row_ptr[v + 1] - row_ptr[v]; };
  // The roots of the components, least degree first.
  const std::vector<Ordinal> by_degree = rows_by_length(row_ptr, n, false);
  std::vector<char> numbered(n, 0);
  std::vector<Ordinal> order, mark(rcm ? n : 0, -1), neighbours;
  order.reserve(n);
  Ordinal stamp = 0;
  for (const Ordinal start : by_degree) {
    if (numbered[start]) continue;
    Ordinal root = start;
    if (rcm) {
      // The pseudo-peripheral root: a vertex of least degree in the last level, while that level
      // moves further away (at most a few sweeps: each costs a pass over the component).
      auto [level, depth] = last_level(row_ptr, col, root, numbered, mark, stamp++);
      for (int sweep = 0; sweep < 4; ++sweep) {
        const Ordinal far =
            *std::min_element(level.begin(), level.end(),
                              [&](Ordinal a, Ordinal b) { return degree(a) < degree(b); });
        auto [far_level, far_depth] = last_level(row_ptr, col, far, numbered, mark, stamp++);
        if (far_depth <= depth) break;
        root = far;
        level = std::move(far_level);
        depth = far_depth;
      }
    }
    // Breadth first from the root: the queue is the order itself.
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
      if (rcm)
        std::stable_sort(neighbours.begin(), neighbours.end(),
                         [&](Ordinal a, Ordinal b) { return degree(a) < degree(b); });
      order.insert(order.end(), neighbours.begin(), neighbours.end());
    }
  }
  if (rcm) std::reverse(order.begin(), order.end());
  return order;
}

}  // namespace

std::vector<Ordinal> rcm_order(const Offset* row_ptr, const Ordinal* col, Ordinal n) {
  return breadth_first(row_ptr, col, n, true, "rcm_order");
}

std::vector<Ordinal> bfs_order(const Offset* row_ptr, const Ordinal* col, Ordinal n) {
  return breadth_first(row_ptr, col, n, false, "bfs_order");
}

std::vector<Ordinal> degree_order(const Offset* row_ptr, Ordinal n) {
  return rows_by_length(row_ptr, n, true);
}

std::vector<Ordinal> inverse_permutation(const std::vector<Ordinal>& perm) {
  std::vector<Ordinal> inv(perm.size());
  for (std::size_t i = 0; i < perm.size(); ++i) inv[perm[i]] = static_cast<Ordinal>(i);
  return inv;
}

}  // namespace kspmv::analysis
