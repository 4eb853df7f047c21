// SPDX-License-Identifier: Apache-2.0
#include "qprof/analysis/sweep_grid.hpp"

#include <algorithm>

#include "qprof/common/trace_label.hpp"

namespace qprof::analysis {
namespace {

bool is_name(std::string_view s) {
  if (s.empty()) return false;
  for (std::size_t i = 0; i < s.size(); ++i) {
    const char c = s[i];
    const bool letter = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_';
    if (!letter && !(i > 0 && c >= '0' && c <= '9')) return false;
  }
  return true;
}

bool is_separator(char c) { return c == ',' || c == '/' || c == ' '; }

}  // namespace

Result<SweepParameter> parse_sweep_parameter(std::string_view text) {
  const auto eq = text.find('=');
  if (eq == std::string_view::npos) return Failure{"'" + std::string(text) + "' is not NAME=VALUE,VALUE,..."};
  SweepParameter p;
  p.name = std::string(text.substr(0, eq));
  if (!is_name(p.name)) {
    return Failure{"'" + p.name + "' is not a parameter name (letters, digits and _, not starting with a digit)"};
  }
  std::string_view rest = text.substr(eq + 1);
  while (true) {
    const auto comma = rest.find(',');
    const std::string_view value = rest.substr(0, comma);
    if (value.empty()) return Failure{"-p " + std::string(text) + ": an empty value"};
    // A value twice would be two runs of one point, taken for one point's repeats: --repeat is that.
    if (std::find(p.values.begin(), p.values.end(), value) != p.values.end()) {
      return Failure{"-p " + std::string(text) + ": the value " + std::string(value) +
                     " is given twice (--repeat N runs each point N times)"};
    }
    p.values.emplace_back(value);
    if (comma == std::string_view::npos) break;
    rest = rest.substr(comma + 1);
  }
  return p;
}

std::vector<SweepPoint> sweep_grid(const std::vector<SweepParameter>& parameters) {
  std::vector<SweepPoint> points{SweepPoint{}};
  for (const SweepParameter& p : parameters) {
    std::vector<SweepPoint> next;
    for (const SweepPoint& base : points) {
      for (const std::string& v : p.values) {
        SweepPoint point = base;
        point.emplace_back(p.name, v);
        next.push_back(std::move(point));
      }
    }
    points = std::move(next);
  }
  if (parameters.empty()) return {};
  return points;
}

std::string fill_placeholders(std::string_view text, const SweepPoint& point) {
  std::string out;
  std::size_t i = 0;
  while (i < text.size()) {
    if (text[i] == '{') {
      const auto close = text.find('}', i + 1);
      if (close != std::string_view::npos) {
        const std::string_view name = text.substr(i + 1, close - i - 1);
        const auto found = std::find_if(point.begin(), point.end(), [&](const auto& nv) { return nv.first == name; });
        if (found != point.end()) {
          out += found->second;
          i = close + 1;
          continue;
        }
      }
    }
    out += text[i++];
  }
  return out;
}

std::string point_name(const SweepPoint& point) {
  std::string out;
  for (const auto& [name, value] : point) {
    if (!out.empty()) out += ',';
    out += name + "=";
    for (char c : value) {
      const bool kept = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '.' ||
                        c == '_' || c == '+' || c == '-';
      out += kept ? c : '_';
    }
  }
  return out;
}

std::optional<std::string> value_in_label(std::string_view label, std::string_view name) {
  label = without_dat_suffix(label);
  const std::string key = std::string(name) + "=";
  for (std::size_t at = label.find(key); at != std::string_view::npos; at = label.find(key, at + 1)) {
    if (at > 0 && !is_separator(label[at - 1])) continue;  // "num_workers=" is not "workers="
    const std::size_t from = at + key.size();
    std::size_t to = from;
    while (to < label.size() && !is_separator(label[to])) ++to;
    std::string_view value = label.substr(from, to - from);
    // "n=20~2.dat": a run again into the same directory, named by create_fresh's next free name;
    // point_name never writes '~', so "~N" is that mark, not part of the value.
    if (const std::size_t tilde = value.rfind('~'); tilde != std::string_view::npos && tilde + 1 < value.size() &&
                                                    value.find_first_not_of("0123456789", tilde + 1) == value.npos) {
      value = value.substr(0, tilde);
    }
    if (!value.empty()) return std::string(value);
  }
  return std::nullopt;
}

}  // namespace qprof::analysis
