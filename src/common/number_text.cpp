// SPDX-License-Identifier: Apache-2.0
#include "qprof/common/number_text.hpp"

#include <charconv>
#include <cmath>
#include <cstdio>
#include <system_error>

namespace qprof {
namespace {

// to_chars into a buffer that grows until the text fits: errc::value_too_large is the only
// error to_chars has for a double, and a buffer of 330 + decimals bytes fits any double in any
// form, so this loops at most twice.
template <class Format>
std::string to_text(Format&& format) {
  std::string buf(64, '\0');
  while (true) {
    const std::to_chars_result r = format(buf.data(), buf.data() + buf.size());
    if (r.ec == std::errc()) {
      buf.resize(static_cast<std::size_t>(r.ptr - buf.data()));
      return buf;
    }
    buf.resize(buf.size() * 8);
  }
}

}  // namespace

std::string number_text(double v, std::string_view not_finite) {
  if (!std::isfinite(v)) return std::string(not_finite);
  const bool whole = v == std::trunc(v) && std::fabs(v) < 1e21;
  return to_text([&](char* first, char* last) {
    return whole ? std::to_chars(first, last, v, std::chars_format::fixed) : std::to_chars(first, last, v);
  });
}

std::string fixed_text(double v, int decimals, std::string_view not_finite) {
  if (!std::isfinite(v)) return std::string(not_finite);
  decimals = decimals < 0 ? 0 : decimals > 17 ? 17 : decimals;
  std::string s = to_text(
      [&](char* first, char* last) { return std::to_chars(first, last, v, std::chars_format::fixed, decimals); });
  if (s.find('.') == std::string::npos) return s == "-0" ? "0.0" : s + ".0";
  while (s.back() == '0') s.pop_back();
  if (s.back() == '.') s += '0';
  if (s == "-0.0") s = "0.0";
  return s;
}

std::string yaml_float(double v, int decimals) {
  if (std::isinf(v)) return v > 0 ? ".inf" : "-.inf";
  return fixed_text(v, decimals, ".nan");
}

std::string printf_number(const char* format, double v) {
  char small[64];
  const int n = std::snprintf(small, sizeof small, format, v);
  if (n < 0) return {};
  if (static_cast<std::size_t>(n) < sizeof small) return std::string(small, static_cast<std::size_t>(n));
  std::string out(static_cast<std::size_t>(n) + 1, '\0');  // %f of 1e300: 301 digits
  std::snprintf(out.data(), out.size(), format, v);
  out.resize(static_cast<std::size_t>(n));
  return out;
}

}  // namespace qprof
