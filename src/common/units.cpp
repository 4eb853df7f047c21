// SPDX-License-Identifier: Apache-2.0
#include "qprof/common/units.hpp"

#include <charconv>
#include <cmath>
#include <cstdio>
#include <utility>

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

std::optional<Unit> parse_display_unit(std::string_view name) {
  if (const auto u = parse_unit(name)) return u;
  if (name.size() != 1) return std::nullopt;
  switch (name[0]) {
    case 'K':
    case 'k':
      return Unit::KiB;
    case 'M':
    case 'm':
      return Unit::MiB;
    case 'G':
    case 'g':
      return Unit::GiB;
    default:
      return std::nullopt;
  }
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

namespace {

// The number at the start of `text` (blanks around it skipped) and what follows it, the unit,
// with its own leading blanks skipped. nullopt unless a finite number >= 0 starts the text.
std::optional<std::pair<double, std::string_view>> number_and_unit(std::string_view text) {
  while (!text.empty() && text.front() == ' ') text.remove_prefix(1);
  while (!text.empty() && text.back() == ' ') text.remove_suffix(1);
  double value = 0;
  auto r = std::from_chars(text.data(), text.data() + text.size(), value);
  if (r.ec != std::errc() || !std::isfinite(value) || value < 0) return std::nullopt;
  std::string_view suffix = text.substr(static_cast<std::size_t>(r.ptr - text.data()));
  while (!suffix.empty() && suffix.front() == ' ') suffix.remove_prefix(1);
  return std::pair{value, suffix};
}

// A size's unit: the display units, and the one-letter forms of ulimit, docker and systemd
// (K, M, G, T in either case: binary, so "4G" is what a cgroup limit of 4G is).
std::optional<double> size_scale(std::string_view suffix) {
  if (const auto unit = parse_unit(suffix)) return unit_bytes(*unit);
  if (suffix == "TiB") return 1024.0 * 1024.0 * 1024.0 * 1024.0;
  if (suffix == "TB") return 1e12;
  if (suffix.size() != 1) return std::nullopt;
  switch (suffix[0]) {
    case 'K':
    case 'k':
      return 1024.0;
    case 'M':
    case 'm':
      return 1024.0 * 1024.0;
    case 'G':
    case 'g':
      return 1024.0 * 1024.0 * 1024.0;
    case 'T':
    case 't':
      return 1024.0 * 1024.0 * 1024.0 * 1024.0;
    default:
      return std::nullopt;
  }
}

}  // namespace

std::optional<Bytes> parse_size(std::string_view text) {
  const auto parsed = number_and_unit(text);
  if (!parsed) return std::nullopt;
  const auto [value, suffix] = *parsed;
  // A bare number is MiB, mprof's unit (and Slurm's --mem's): "--max-peak 50" is never 50 bytes.
  const auto scale = suffix.empty() ? std::optional<double>(1024.0 * 1024.0) : size_scale(suffix);
  if (!scale) return std::nullopt;
  const double bytes = value * *scale;
  if (bytes >= 18446744073709551615.0) return std::nullopt;
  return static_cast<Bytes>(std::llround(bytes));
}

std::optional<Seconds> parse_duration(std::string_view text) {
  const auto parsed = number_and_unit(text);
  if (!parsed) return std::nullopt;
  const auto [value, suffix] = *parsed;
  // Fractions of a second divide, so that 100us is the double 0.0001 (100 * 1e-6 lies below it,
  // and an interval of at least 100us refused it).
  static constexpr std::pair<std::string_view, double> kFractions[] = {{"ms", 1e3}, {"us", 1e6}, {"µs", 1e6}};
  for (const auto& [name, per_second] : kFractions) {
    if (suffix == name) return value / per_second;
  }
  static constexpr std::pair<std::string_view, double> kScales[] = {
      {"", 1}, {"s", 1}, {"sec", 1}, {"m", 60}, {"min", 60}, {"h", 3600}, {"d", 86400}, {"w", 7 * 86400},
  };
  for (const auto& [name, scale] : kScales) {
    if (suffix == name) return value * scale;
  }
  return std::nullopt;
}

std::optional<std::pair<double, std::string>> duration_parts(std::string_view text) {
  if (!parse_duration(text)) return std::nullopt;
  const auto [value, suffix] = *number_and_unit(text);
  return std::pair{value, std::string(suffix)};
}

std::string size_forms() {
  return "a size: 4G or 4GiB (4 x 2^30 bytes), 4096M, 512MiB, 2GB (2 x 10^9 bytes), or a bare number of MiB "
         "(512, as mprof); units K M G T (binary, either case), KiB MiB GiB TiB, KB MB GB TB, B";
}

std::string duration_forms() {
  return "a duration: seconds (0.5) or 10ms, 0.5s, 1m (a minute), 1min, 2h, 7d, 2w; units us ms s m min h d w";
}

std::string human_bytes(Bytes bytes) {
  static constexpr Unit kLadder[] = {Unit::B, Unit::KiB, Unit::MiB, Unit::GiB};
  double v = static_cast<double>(bytes);
  std::size_t step = 0;
  // The unit of the figure as printed: 1023.96 KiB prints as 1.00 MiB, not 1024.0 KiB beside a
  // 1.00 MiB (a sweep's model mixed them in one column), and 9.996 as 10.0, not 10.00.
  while (v >= 1023.95 && step + 1 < std::size(kLadder)) {
    v /= 1024.0;
    ++step;
  }
  char buf[32];
  if (step == 0)
    std::snprintf(buf, sizeof buf, "%llu B", static_cast<unsigned long long>(bytes));
  else
    std::snprintf(buf, sizeof buf, v < 9.995 ? "%.2f %s" : "%.1f %s", v, unit_name(kLadder[step]).data());
  return buf;
}

std::string human_seconds(Seconds s) {
  char buf[64];
  // Floating-point arithmetic throughout: a duration read from a trace can be anything, and a
  // cast of 1e13 s of hours to int is undefined behaviour.
  if (std::isnan(s)) return "? s";
  if (s < 0) return "-" + human_seconds(-s);
  if (s < 0.5e-6) return "0 s";  // the start itself, or less than the microsecond shown: not "0 µs"
  // Each unit up to where its figure would round to the next one's: 0.9996 s read "1e+03 ms".
  if (s < 0.9995e-3)
    std::snprintf(buf, sizeof buf, "%.0f µs", s * 1e6);
  else if (s < 0.9995)
    std::snprintf(buf, sizeof buf, "%.3g ms", s * 1e3);
  else if (s < 120.0)
    std::snprintf(buf, sizeof buf, "%.3g s", s);
  else if (s < 7200.0)
    std::snprintf(buf, sizeof buf, "%.0f min %.0f s", std::floor(s / 60), std::floor(std::fmod(s, 60)));
  else if (s < 172800.0)
    std::snprintf(buf, sizeof buf, "%.0f h %.0f min", std::floor(s / 3600), std::floor(std::fmod(s, 3600) / 60));
  else if (s < 1e9)  // two days and more: "1157 d 9 h" reads where "27777 h 46 min" has to be divided
    std::snprintf(buf, sizeof buf, "%.0f d %.0f h", std::floor(s / 86400), std::floor(std::fmod(s, 86400) / 3600));
  else
    std::snprintf(buf, sizeof buf, "%.3g d", s / 86400);  // beyond 30 years: no hours
  return buf;
}

}  // namespace qprof
