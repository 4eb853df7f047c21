// SPDX-License-Identifier: Apache-2.0
#include "qprof/common/units.hpp"

#include <charconv>
#include <cmath>
#include <cstdio>

namespace qprof {
namespace {

struct UnitInfo {
  Unit unit;
  std::string_view name;
  double bytes;
};

constexpr UnitInfo kUnits[] = {
    {Unit::B, "B", 1.0},
    {Unit::KiB, "KiB", 1024.0},
    {Unit::MiB, "MiB", 1024.0 * 1024.0},
    {Unit::GiB, "GiB", 1024.0 * 1024.0 * 1024.0},
    {Unit::KB, "KB", 1e3},
    {Unit::MB, "MB", 1e6},
    {Unit::GB, "GB", 1e9},
};

const UnitInfo& info(Unit u) {
  for (const UnitInfo& i : kUnits) {
    if (i.unit == u) return i;
  }
  return kUnits[0];
}

}  // namespace

std::optional<Unit> parse_unit(std::string_view name) {
  for (const UnitInfo& i : kUnits) {
    if (i.name == name) return i.unit;
  }
  return std::nullopt;
}

std::string_view unit_name(Unit u) { return info(u).name; }
double unit_bytes(Unit u) { return info(u).bytes; }

Bytes bytes_from_double(double v) {
  if (!(v > 0)) return 0;
  if (v >= 18446744073709549568.0) return ~Bytes{0};  // the largest double below 2^64
  return static_cast<Bytes>(std::round(v));
}

Unit auto_unit(Bytes largest, Unit smallest) {
  if (largest >= (Bytes{10} << 30)) return Unit::GiB;
  if (smallest == Unit::KiB && largest < (Bytes{1} << 20)) return Unit::KiB;
  return Unit::MiB;
}

std::optional<Bytes> parse_size(std::string_view text) {
  while (!text.empty() && text.front() == ' ') text.remove_prefix(1);
  while (!text.empty() && text.back() == ' ') text.remove_suffix(1);
  double value = 0;
  auto r = std::from_chars(text.data(), text.data() + text.size(), value);
  if (r.ec != std::errc() || !std::isfinite(value) || value < 0) return std::nullopt;
  std::string_view suffix = text.substr(static_cast<std::size_t>(r.ptr - text.data()));
  while (!suffix.empty() && suffix.front() == ' ') suffix.remove_prefix(1);
  double scale = 1.0;
  if (!suffix.empty()) {
    const auto unit = parse_unit(suffix);
    if (!unit) return std::nullopt;
    scale = unit_bytes(*unit);
  } else if (value != std::floor(value)) {
    return std::nullopt;  // plain bytes are whole
  }
  const double bytes = value * scale;
  if (bytes >= 18446744073709551615.0) return std::nullopt;
  return static_cast<Bytes>(std::llround(bytes));
}

std::string human_bytes(Bytes bytes) {
  static constexpr Unit kLadder[] = {Unit::B, Unit::KiB, Unit::MiB, Unit::GiB};
  double v = static_cast<double>(bytes);
  std::size_t step = 0;
  while (v >= 1024.0 && step + 1 < std::size(kLadder)) {
    v /= 1024.0;
    ++step;
  }
  char buf[32];
  if (step == 0) std::snprintf(buf, sizeof buf, "%llu B", static_cast<unsigned long long>(bytes));
  else std::snprintf(buf, sizeof buf, v < 10 ? "%.2f %s" : "%.1f %s", v, unit_name(kLadder[step]).data());
  return buf;
}

std::string human_seconds(Seconds s) {
  char buf[64];
  // Floating-point arithmetic throughout: a duration read from a trace can be anything, and a
  // cast of 1e13 s of hours to int is undefined behaviour.
  if (std::isnan(s)) return "? s";
  if (s < 0) return "-" + human_seconds(-s);
  if (s < 0.001) std::snprintf(buf, sizeof buf, "%.0f µs", s * 1e6);
  else if (s < 1.0) std::snprintf(buf, sizeof buf, "%.3g ms", s * 1e3);
  else if (s < 120.0) std::snprintf(buf, sizeof buf, "%.3g s", s);
  else if (s < 7200.0) std::snprintf(buf, sizeof buf, "%.0f min %.0f s", std::floor(s / 60), std::floor(std::fmod(s, 60)));
  else if (s < 1e9) std::snprintf(buf, sizeof buf, "%.0f h %.0f min", std::floor(s / 3600), std::floor(std::fmod(s, 3600) / 60));
  else std::snprintf(buf, sizeof buf, "%.3g h", s / 3600);  // beyond 100 000 years: no minutes
  return buf;
}

}  // namespace qprof
