// The one-string matrix spec of the CLI and the benchmarks: parsing and dispatch.
#include <algorithm>
#include <functional>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "kspmv/core/error.hpp"
#include "kspmv/gen/detail.hpp"
#include "kspmv/gen/generators.hpp"

namespace kspmv::gen {

namespace {
constexpr std::uint64_t kDefaultSeed = 42;
constexpr std::int64_t kMaxOrdinal = std::numeric_limits<Ordinal>::max();

// Saturating arithmetic for exact number parsing: kTooLarge stands for "past every limit".
constexpr std::uint64_t kTooLarge = std::numeric_limits<std::uint64_t>::max();
std::uint64_t saturating_mul(std::uint64_t a, std::uint64_t b) {
  return b != 0 && a > kTooLarge / b ? kTooLarge : a * b;
}
std::uint64_t saturating_add(std::uint64_t a, std::uint64_t b) {
  return a > kTooLarge - b ? kTooLarge : a + b;
}
std::uint64_t saturating_pow(std::uint64_t base, std::uint64_t exponent) {
  std::uint64_t v = 1;  // a base of 2 or more saturates within 64 steps
  for (; exponent > 0 && v != 0 && v != kTooLarge && base != 1; --exponent)
    v = saturating_mul(v, base);
  return v;
}

struct Family {
  const char* name;
  std::vector<std::string> required, optional;
  const char* help;
};

const std::vector<Family>& families() {
  static const std::vector<Family> f = {
      {"laplace2d", {}, {"n", "nx", "ny"}, "2D 5-point Laplacian on an n x n (or nx x ny) grid"},
      {"stencil7", {"n"}, {}, "3D 7-point Laplacian on an n^3 grid"},
      {"stencil27", {"n"}, {}, "3D 27-point Laplacian on an n^3 grid"},
      {"uniform", {"rows", "k"}, {"cols"}, "exactly k random columns per row (cols = rows)"},
      {"kron", {"scale"}, {"ef"}, "Graph500 R-MAT, 2^scale rows, ef*2^scale edges (ef = 16)"},
      {"rgg", {"scale"}, {}, "random geometric graph, 2^scale points (like rgg_n_2_N_s0)"},
      {"kmer", {"rows"}, {}, "k-mer-like graph, 1-4 non-zeros per row, scattered"},
      {"banded", {"n", "bw"}, {}, "band matrix, half bandwidth bw"},
      {"fullchip", {"rows"}, {}, "circuit-like, mean ~9 per row, a few rows up to rows/1.3"},
  };
  return f;
}

class Parser {
 public:
  explicit Parser(const std::string& spec) : spec_(spec) {}

  [[noreturn]] void fail(const std::string& why) const {
    throw InvalidArgument("bad matrix spec \"" + printable(spec_) + "\": " + why +
                          " (see --help for the grammar)");
  }

  // "name:key=value,key=value" -> name and keys; keys may not repeat.
  std::pair<std::string, std::map<std::string, std::string>> section(const std::string& text) {
    const auto colon = text.find(':');
    const std::string name = text.substr(0, colon);
    if (name.empty()) fail("missing family name before ':'");
    std::map<std::string, std::string> keys;
    if (colon == std::string::npos) return {name, keys};
    const std::string body = text.substr(colon + 1) + ",";
    std::size_t begin = 0;
    for (std::size_t comma; (comma = body.find(',', begin)) != std::string::npos;
         begin = comma + 1) {
      const std::string item = body.substr(begin, comma - begin);
      const auto eq = item.find('=');
      if (eq == std::string::npos || eq == 0 || eq + 1 == item.size())
        fail("expected key=value, got \"" + printable(item) + "\" in " + printable(name));
      if (!keys.emplace(item.substr(0, eq), item.substr(eq + 1)).second)
        fail("key '" + printable(item.substr(0, eq)) + "' given twice in " + printable(name));
    }
    return {name, keys};
  }

  // An integer in [lo, hi], read exactly: decimal digits, B^E, or M e E with a decimal mantissa
  // M (2^21, 1e6, 1.5e6 and 1.1e2 are integers, 1.15e1 is not).
  std::int64_t number(const std::string& key, const std::string& text, std::int64_t lo,
                      std::int64_t hi) const {
    auto bad = [&](const std::string& why) { fail(key + "=" + printable(text) + ": " + why); };
    auto digits = [&](const std::string& d) {
      if (d.empty() || d.find_first_not_of("0123456789") != std::string::npos)
        bad("not a non-negative integer, 2^N or 1eN number");
      std::uint64_t v = 0;
      for (char c : d) v = saturating_add(saturating_mul(v, 10), std::uint64_t(c - '0'));
      return v;
    };
    std::uint64_t value;
    if (const auto caret = text.find('^'); caret != std::string::npos) {
      value = saturating_pow(digits(text.substr(0, caret)), digits(text.substr(caret + 1)));
    } else if (const auto e = text.find_first_of("eE"); e != std::string::npos) {
      // M e E with M = whole.frac is whole frac * 10^(E - |frac|), an integer when the last
      // |frac| - E digits of "whole frac" are zeros.
      const std::string mant = text.substr(0, e);
      const auto dot = mant.find('.');
      const std::string whole = mant.substr(0, dot);
      const std::string frac = dot == std::string::npos ? "" : mant.substr(dot + 1);
      std::string all = whole + frac;
      if (whole.empty() || (dot != std::string::npos && frac.empty()) ||
          all.find_first_not_of("0123456789") != std::string::npos)
        bad("malformed number");
      std::uint64_t exponent = digits(text.substr(e + 1));
      if (exponent < frac.size()) {
        const std::size_t drop = frac.size() - exponent;
        if (all.find_first_not_of('0', all.size() - drop) != std::string::npos)
          bad("not an integer");
        all.resize(all.size() - drop);
        exponent = 0;
      } else {
        exponent -= frac.size();
      }
      value = saturating_mul(digits(all), saturating_pow(10, exponent));
    } else {
      value = digits(text);
    }
    if (value < std::uint64_t(lo) || value > std::uint64_t(hi))
      bad("out of range [" + std::to_string(lo) + ", " + std::to_string(hi) + "]");
    return static_cast<std::int64_t>(value);
  }

 private:
  std::string spec_;
};

// Rows r of a whole matrix a, copied.
template <class S>
CsrMatrix<S> rows_of(const CsrMatrix<S>& a, const detail::Rows& r) {
  auto length = [=](Ordinal i) -> Offset { return a.row_ptr(i + 1) - a.row_ptr(i); };
  auto fill = [=](Ordinal i, Ordinal* col, S* val) {
    std::copy(a.col_idx.data() + a.row_ptr(i), a.col_idx.data() + a.row_ptr(i + 1), col);
    std::copy(a.values.data() + a.row_ptr(i), a.values.data() + a.row_ptr(i + 1), val);
  };
  return detail::build_csr<S>(r.count(), a.ncols, length, fill, r.begin);
}

// from_spec, and the number of rows of the whole matrix into m.
template <class S>
CsrMatrix<S> build_spec(const std::string& spec, RowRange rows, Ordinal& m) {
  Parser p(spec);
  if (spec.empty()) p.fail("empty spec");
  const auto plus = spec.find('+');
  if (plus != std::string::npos && spec.find('+', plus + 1) != std::string::npos)
    p.fail("at most one '+longrows:...' part");
  // Named variables, not a structured binding: C++17 lambdas cannot capture one (below).
  auto parts = p.section(spec.substr(0, plus));
  const std::string name = parts.first;
  auto& keys = parts.second;

  // The seed may stand in either part, once.
  std::map<std::string, std::string> lr_keys;
  if (plus != std::string::npos) {
    auto [lr_name, lr] = p.section(spec.substr(plus + 1));
    if (lr_name != "longrows")
      p.fail("unknown part '" + printable(lr_name) + "' after '+' (only longrows)");
    lr_keys = lr;
  }
  if (keys.count("seed") && lr_keys.count("seed")) p.fail("seed given twice");
  std::uint64_t seed = kDefaultSeed;
  for (auto* k : {&keys, &lr_keys}) {
    if (const auto it = k->find("seed"); it != k->end()) {
      seed = static_cast<std::uint64_t>(p.number("seed", it->second, 0, kMaxOrdinal * kMaxOrdinal));
      k->erase(it);
    }
  }

  const Family* fam = nullptr;
  std::string names;
  for (const auto& f : families()) {
    if (name == f.name) fam = &f;
    names += std::string(names.empty() ? "" : ", ") + f.name;
  }
  if (!fam) p.fail("unknown family '" + printable(name) + "' (families: " + names + ")");
  for (const auto& [k, v] : keys) {
    const bool known = std::count(fam->required.begin(), fam->required.end(), k) +
                       std::count(fam->optional.begin(), fam->optional.end(), k);
    if (!known) p.fail("unknown key '" + printable(k) + "' for " + name);
  }
  for (const auto& k : fam->required)
    if (!keys.count(k)) p.fail(name + " needs " + k + "=");
  auto get = [&](const std::string& k, std::int64_t lo, std::int64_t hi) {
    return p.number(k, keys.at(k), lo, hi);
  };
  auto opt = [&](const std::string& k, std::int64_t def, std::int64_t lo, std::int64_t hi) {
    return keys.count(k) ? get(k, lo, hi) : def;
  };

  // The matrix (or its rows `range`) and its number of rows.
  std::optional<detail::ProgressScope> base_part;  // with long rows planted after it
  if (plus != std::string::npos) base_part.emplace(0.0, 0.7);
  CsrMatrix<S> a;
  if (name == "laplace2d") {
    if (keys.count("n") && (keys.count("nx") || keys.count("ny")))
      p.fail("laplace2d takes either n= or nx=,ny=");
    Ordinal nx, ny;
    if (keys.count("n")) {
      nx = ny = static_cast<Ordinal>(get("n", 0, kMaxOrdinal));
    } else {
      if (!keys.count("nx") || !keys.count("ny")) p.fail("laplace2d needs n= or both nx= and ny=");
      nx = static_cast<Ordinal>(get("nx", 0, kMaxOrdinal));
      ny = static_cast<Ordinal>(get("ny", 0, kMaxOrdinal));
    }
    a = laplace2d<S>(nx, ny, rows);
    m = nx * ny;  // checked by laplace2d
  } else if (name == "stencil7" || name == "stencil27") {
    const auto n = static_cast<Ordinal>(get("n", 0, kMaxOrdinal));
    a = name == "stencil7" ? stencil3d_7<S>(n, rows) : stencil3d_27<S>(n, rows);
    m = n * n * n;
  } else if (name == "uniform") {
    m = static_cast<Ordinal>(get("rows", 0, kMaxOrdinal));
    a = uniform_random<S>(m, static_cast<Ordinal>(opt("cols", m, 0, kMaxOrdinal)),
                          static_cast<int>(get("k", 0, kMaxOrdinal)), seed, rows);
  } else if (name == "kron" || name == "rgg") {  // edges and points of the whole matrix
    const auto scale = static_cast<int>(get("scale", 1, 30));
    m = Ordinal(1) << scale;
    const auto r = detail::resolve(rows, m, name);
    const auto ef = static_cast<int>(opt("ef", 16, 1, 1 << 16));
    if (r.count() == 0) {
      a = CsrMatrix<S>(0, m, 0);
    } else {
      const double cut = r.share < 1 ? 0.9 : 1.0;  // the rest of the progress: the rows cut
      {
        const detail::ProgressScope whole(0.0, cut);
        a = name == "kron" ? kronecker<S>(scale, ef, seed) : random_geometric<S>(scale, seed);
      }
      if (r.share < 1) {
        const detail::ProgressScope cutting(cut, 1.0);
        a = rows_of(a, r);
      }
    }
  } else if (name == "kmer") {
    m = static_cast<Ordinal>(get("rows", 2, kMaxOrdinal));
    a = kmer<S>(m, seed, rows);
  } else if (name == "banded") {
    m = static_cast<Ordinal>(get("n", 0, kMaxOrdinal));
    a = banded<S>(m, static_cast<Ordinal>(get("bw", 0, kMaxOrdinal)), rows);
  } else {
    m = static_cast<Ordinal>(get("rows", 1, kMaxOrdinal));
    a = fullchip_like<S>(m, seed, rows);
  }

  if (plus == std::string::npos) return a;
  base_part.reset();
  const detail::ProgressScope planting(0.7, 1.0);
  for (const auto& [k, v] : lr_keys)
    if (k != "count" && k != "len")
      p.fail("unknown key '" + printable(k) + "' for longrows (count, len, seed)");
  if (!lr_keys.count("count") || !lr_keys.count("len")) p.fail("longrows needs count= and len=");
  return detail::plant_long_rows(
      a, detail::resolve(rows, m, name).begin, m,
      static_cast<int>(p.number("count", lr_keys["count"], 0, m)),
      static_cast<Ordinal>(p.number("len", lr_keys["len"], 1, kMaxOrdinal)),
      detail::hash(seed, 0x10E6));
}
}  // namespace

template <class S>
CsrMatrix<S> from_spec(const std::string& spec, RowRange rows,
                       const std::function<void(double)>& progress) {
  const detail::ProgressScope scope(progress);
  Ordinal m = 0;
  return build_spec<S>(spec, rows, m);
}

Ordinal spec_rows(const std::string& spec) {
  Ordinal m = 0;
  (void)build_spec<float>(spec, {0, 0}, m);  // an empty block: parsed and checked, nothing built
  return m;
}

std::string spec_help() {
  std::string h =
      "Matrix spec: FAMILY:KEY=VALUE[,KEY=VALUE...][+longrows:count=C,len=L][,seed=S]\n"
      "  Numbers may be written 1000000, 1e6, 1.5e6 or 2^20. seed (default " +
      std::to_string(kDefaultSeed) +
      ") may appear once, in either part.\n"
      "  +longrows plants C random rows, the longest with L non-zeros, the next L/2, L/4, ...\n"
      "Families:\n";
  for (const auto& f : families()) {
    std::string keys;
    for (const auto& k : f.required) keys += (keys.empty() ? "" : ",") + k + "=";
    for (const auto& k : f.optional) keys += (keys.empty() ? "[" : ",[") + k + "=]";
    std::string usage = "  " + std::string(f.name) + ":" + keys;
    usage.resize(std::max<std::size_t>(usage.size() + 1, 30), ' ');
    h += usage + f.help + "\n";
  }
  h += "Examples: laplace2d:n=4096  stencil27:n=160  uniform:rows=2e7,k=8  kron:scale=21,ef=16\n"
       "          rgg:scale=23  kmer:rows=6e7  fullchip:rows=3e6  "
       "banded:n=1e6,bw=8+longrows:count=4,len=1e5\n";
  return h;
}

template CsrMatrix<float> from_spec<float>(const std::string&, RowRange,
                                           const std::function<void(double)>&);
template CsrMatrix<double> from_spec<double>(const std::string&, RowRange,
                                             const std::function<void(double)>&);

}  // namespace kspmv::gen
