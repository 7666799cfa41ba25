#include "kspmv/core/options.hpp"

#include <utility>
#include <vector>

#include "kspmv/core/error.hpp"

namespace kspmv {

namespace {
#define KSPMV_KERNEL_NAME(e, name) {Kernel::e, name},
constexpr std::pair<Kernel, const char*> kKernelNames[] = {KSPMV_KERNELS(KSPMV_KERNEL_NAME)};
#undef KSPMV_KERNEL_NAME

template <class Enum, std::size_t N>
Enum parse(const std::pair<Enum, const char*> (&table)[N], const std::string& name,
           const char* what) {
  std::string valid;
  for (const auto& [value, text] : table) {
    if (name == text) return value;
    valid += (valid.empty() ? "" : ", ") + std::string(text);
  }
  throw InvalidArgument("unknown " + std::string(what) + " '" + name + "' (valid: " + valid + ")");
}

template <class Enum, std::size_t N>
const char* name_of(const std::pair<Enum, const char*> (&table)[N], Enum e) {
  for (const auto& [value, text] : table)
    if (value == e) return text;
  return "?";
}

constexpr std::pair<Backend, const char*> kBackendNames[] = {
    {Backend::Host, "host"},
    {Backend::Cuda, "cuda"},
    {Backend::KokkosDefault, "kokkos-default"},
};
constexpr std::pair<Residency, const char*> kResidencyNames[] = {
    {Residency::Resident, "resident"},
    {Residency::Streamed, "streamed"},
    {Residency::Auto, "auto"},
};
constexpr std::pair<Reorder, const char*> kReorderNames[] = {
    {Reorder::None, "none"},     {Reorder::Auto, "auto"}, {Reorder::Rcm, "rcm"},
    {Reorder::Degree, "degree"}, {Reorder::Bfs, "bfs"},   {Reorder::Stripes, "stripes"},
};
#define KSPMV_SCHEME_NAME(e, name) {part::Scheme::e, name},
constexpr std::pair<part::Scheme, const char*> kSchemeNames[] = {KSPMV_SCHEMES(KSPMV_SCHEME_NAME)};
#undef KSPMV_SCHEME_NAME
#define KSPMV_EXCHANGE_NAME(e, name) {part::Exchange::e, name},
constexpr std::pair<part::Exchange, const char*> kExchangeNames[] = {
    KSPMV_EXCHANGES(KSPMV_EXCHANGE_NAME)};
#undef KSPMV_EXCHANGE_NAME

template <class Enum, std::size_t N>
std::vector<Enum> all_of(const std::pair<Enum, const char*> (&table)[N]) {
  std::vector<Enum> all;
  for (const auto& entry : table) all.push_back(entry.first);
  return all;
}
}  // namespace

const char* to_string(Backend b) {
  return name_of(kBackendNames, b);
}
const char* to_string(Kernel k) {
  return name_of(kKernelNames, k);
}
const char* to_string(Residency r) {
  return name_of(kResidencyNames, r);
}
const char* to_string(Mode m) {
  return m == Mode::Transpose ? "transpose" : "no-transpose";
}
const char* to_string(Reorder r) {
  return name_of(kReorderNames, r);
}
Backend parse_backend(const std::string& n) {
  return parse(kBackendNames, n, "backend");
}
Kernel parse_kernel(const std::string& n) {
  return parse(kKernelNames, n, "kernel");
}
Residency parse_residency(const std::string& n) {
  return parse(kResidencyNames, n, "residency");
}

Reorder parse_reorder(const std::string& n) {
  return parse(kReorderNames, n, "reorder");
}

namespace part {

const char* to_string(Scheme s) {
  return name_of(kSchemeNames, s);
}
const char* to_string(Exchange e) {
  return name_of(kExchangeNames, e);
}
Scheme parse_scheme(const std::string& n) {
  return parse(kSchemeNames, n, "partition scheme");
}
Exchange parse_exchange(const std::string& n) {
  return parse(kExchangeNames, n, "exchange");
}
std::vector<Scheme> all_schemes() {
  return all_of(kSchemeNames);
}
std::vector<Exchange> all_exchanges() {
  return all_of(kExchangeNames);
}

}  // namespace part

}  // namespace kspmv
