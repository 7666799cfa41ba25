#include "partitioners/exchange.hpp"

#include "kspmv/core/error.hpp"

namespace kspmv::part {

const char* to_string(Exchange e) {
  switch (e) {
    case Exchange::AllGather:
      return "allgather";
    case Exchange::Merge:
      return "merge";
    case Exchange::Halo:
      return "halo";
    case Exchange::Auto:
      return "auto";
  }
  return "?";
}

Exchange parse_exchange(const std::string& name) {
  for (Exchange e : {Exchange::AllGather, Exchange::Merge, Exchange::Halo, Exchange::Auto})
    if (name == to_string(e)) return e;
  throw InvalidArgument("unknown exchange '" + name + "' (valid: allgather, merge, halo, auto)");
}

bool exchange_applies(Scheme s, Exchange e) {
  const bool msrep = s == Scheme::PCSR || s == Scheme::PCSC || s == Scheme::PCOO;
  switch (e) {
    case Exchange::AllGather:
      return !msrep;
    case Exchange::Merge:
      return s != Scheme::LRARC;
    case Exchange::Halo:
      return !msrep && s != Scheme::LRARC;
    case Exchange::Auto:
      return true;
  }
  return false;
}

std::vector<Exchange> exchange_candidates(Scheme s) {
  std::vector<Exchange> c;
  for (Exchange e : {Exchange::AllGather, Exchange::Merge, Exchange::Halo})
    if (exchange_applies(s, e)) c.push_back(e);
  return c;
}

}  // namespace kspmv::part
