#include "text_out.hpp"

#include <charconv>
#include <cmath>
#include <nlohmann/json.hpp>

namespace qprof::exports {

std::string number(double v) {
  if (!std::isfinite(v)) return "0";
  // Whole numbers as integers ("100000", not the shortest form "1e+05"): easier on every reader.
  if (v == std::trunc(v) && std::fabs(v) < 1e15) return std::to_string(static_cast<long long>(v));
  char buf[64];
  const auto r = std::to_chars(buf, buf + sizeof buf, v);
  return std::string(buf, r.ptr);
}

std::string json_string(std::string_view s) {
  return nlohmann::json(std::string(s)).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

std::string csv_field(std::string_view s) {
  if (s.find_first_of(",\"\r\n") == std::string_view::npos) return std::string(s);
  std::string out = "\"";
  for (char c : s) {
    if (c == '"') out += '"';
    out += c;
  }
  return out + '"';
}

}  // namespace qprof::exports
