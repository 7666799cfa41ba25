#include "kspmv/core/options.hpp"

#include <array>
#include <utility>

#include "kspmv/core/error.hpp"

namespace kspmv {

namespace {
constexpr std::array<std::pair<Kernel, const char*>, 12> kKernelNames = {{
    {Kernel::Auto, "auto"},
    {Kernel::Csr, "csr"},
    {Kernel::Coo, "coo"},
    {Kernel::Csc, "csc"},
    {Kernel::CsrVector, "csr-vector"},
    {Kernel::PartialOverlap, "partial-overlap"},
    {Kernel::FullOverlap, "full-overlap"},
    {Kernel::Seg, "seg"},
    {Kernel::SegR, "seg-r"},
    {Kernel::Cusparse, "cusparse"},
    {Kernel::CusparseAlg2, "cusparse-alg2"},
    {Kernel::Hbp, "hbp"},
}};

template <class Enum, std::size_t N>
Enum parse(const std::array<std::pair<Enum, const char*>, N>& table, const std::string& name,
           const char* what) {
  std::string valid;
  for (const auto& [value, text] : table) {
    if (name == text) return value;
    valid += (valid.empty() ? "" : ", ") + std::string(text);
  }
  throw InvalidArgument("unknown " + std::string(what) + " '" + name + "' (valid: " + valid + ")");
}

template <class Enum, std::size_t N>
const char* name_of(const std::array<std::pair<Enum, const char*>, N>& table, Enum e) {
  for (const auto& [value, text] : table)
    if (value == e) return text;
  return "?";
}

constexpr std::array<std::pair<Backend, const char*>, 2> kBackendNames = {{
    {Backend::Host, "host"},
    {Backend::Cuda, "cuda"},
}};
constexpr std::array<std::pair<Residency, const char*>, 2> kResidencyNames = {{
    {Residency::Resident, "resident"},
    {Residency::Streamed, "streamed"},
}};
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
Backend parse_backend(const std::string& n) {
  return parse(kBackendNames, n, "backend");
}
Kernel parse_kernel(const std::string& n) {
  return parse(kKernelNames, n, "kernel");
}
Residency parse_residency(const std::string& n) {
  return parse(kResidencyNames, n, "residency");
}

std::vector<Kernel> all_kernels() {
  std::vector<Kernel> v;
  for (const auto& entry : kKernelNames) v.push_back(entry.first);
  return v;
}

}  // namespace kspmv
