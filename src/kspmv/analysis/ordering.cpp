// The orderings of ordering.hpp.
#include "kspmv/analysis/ordering.hpp"

#include <algorithm>
#include <numeric>
#include <string>

#include "kspmv/core/error.hpp"
#include "kspmv/core/parallel.hpp"

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

// Throws InvalidArgument naming the first column outside [0, n).
void check_square(const Offset* row_ptr, const Ordinal* col, Ordinal n, const char* who) {
  for (Offset p = 0; p < (n > 0 ? row_ptr[n] : 0); ++p)
    if (col[p] < 0 || col[p] >= n)
      throw InvalidArgument(std::string(who) + ": column " + std::to_string(col[p]) + " of a " +
                            std::to_string(n) + " x " + std::to_string(n) + " pattern");
}

}  // namespace

std::vector<Ordinal> rcm_order(const Offset* row_ptr, const Ordinal* col, Ordinal n) {
  check_square(row_ptr, col, n, "rcm_order");
  const auto degree = [&](Ordinal v) { return row_ptr[v + 1] - row_ptr[v]; };
  // The roots of the components, least degree first.
  const std::vector<Ordinal> by_degree = rows_by_length(row_ptr, n, false);
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
      std::stable_sort(neighbours.begin(), neighbours.end(),
                       [&](Ordinal a, Ordinal b) { return degree(a) < degree(b); });
      order.insert(order.end(), neighbours.begin(), neighbours.end());
    }
  }
  std::reverse(order.begin(), order.end());
  return order;
}

std::vector<Ordinal> bfs_order(const Offset* row_ptr, const Ordinal* col, Ordinal n) {
  check_square(row_ptr, col, n, "bfs_order");
  // Breadth first from every seed of a round at once, levels counted on across the rounds, each
  // vertex the seed of least index among its neighbours one level nearer (bfs_order.cu's rule).
  std::vector<Ordinal> seed(n, n), level(n, -1), front, next;
  Ordinal depth = 0;  // the levels of the rounds so far
  for (Ordinal spacing = kBfsSeedSpacing;;
       spacing = std::max<Ordinal>(1, spacing / kBfsSeedShrink)) {
    front.clear();
    for (Ordinal v = 0; v < n; ++v)
      if (level[v] < 0 && v % spacing == 0) {
        level[v] = depth;
        seed[v] = v;
        front.push_back(v);
      }
    for (; !front.empty(); ++depth) {
      next.clear();
      for (const Ordinal v : front)
        for (Offset p = row_ptr[v]; p < row_ptr[v + 1]; ++p) {
          const Ordinal w = col[p];
          if (level[w] < 0) {
            level[w] = depth + 1;
            seed[w] = seed[v];
            next.push_back(w);
          } else if (level[w] == depth + 1) {
            seed[w] = std::min(seed[w], seed[v]);
          }
        }
      front.swap(next);
    }
    if (spacing == 1) break;
  }
  // By (seed, level, index): a counting sort by level, then a stable one by seed.
  const auto counting_sort = [n](const std::vector<Ordinal>& in, const std::vector<Ordinal>& key,
                                 Ordinal buckets) {
    std::vector<Ordinal> first(static_cast<std::size_t>(buckets) + 1, 0), out(n);
    for (const Ordinal v : in) ++first[key[v] + 1];
    std::partial_sum(first.begin(), first.end(), first.begin());
    for (const Ordinal v : in) out[first[key[v]]++] = v;
    return out;
  };
  std::vector<Ordinal> order(n);
  std::iota(order.begin(), order.end(), 0);
  return counting_sort(counting_sort(order, level, depth + 1), seed, n);
}

std::vector<Ordinal> degree_order(const Offset* row_ptr, Ordinal n) {
  return rows_by_length(row_ptr, n, true);
}

std::vector<Ordinal> inverse_permutation(const std::vector<Ordinal>& perm) {
  std::vector<Ordinal> inv(perm.size());
  parallel_blocks(static_cast<std::int64_t>(perm.size()), std::int64_t(1) << 16,
                  [&](std::int64_t begin, std::int64_t end) {
                    for (std::int64_t i = begin; i < end; ++i)
                      inv[perm[i]] = static_cast<Ordinal>(i);
                  });
  return inv;
}

}  // namespace kspmv::analysis
