// SPDX-License-Identifier: Apache-2.0
#include "qprof/trace/stages.hpp"

#include <iterator>

#include "qprof/common/text.hpp"

namespace qprof::trace {
namespace {

std::optional<std::string_view> strip_suffix(std::string_view label, std::string_view suffix) {
  if (label.size() <= suffix.size() || label.substr(label.size() - suffix.size()) != suffix) {
    return std::nullopt;
  }
  std::string_view name = trim_blanks(label.substr(0, label.size() - suffix.size()));
  if (name.empty()) return std::nullopt;
  return name;
}

}  // namespace

std::optional<std::string_view> stage_start_name(std::string_view label) { return strip_suffix(label, " Start"); }

std::optional<std::string_view> stage_end_name(std::string_view label) { return strip_suffix(label, " End"); }

std::optional<std::pair<std::string, Seconds>> StageTracker::innermost_at(Seconds t) const {
  for (auto it = open_.rbegin(); it != open_.rend(); ++it) {
    if (it->t <= t) return std::make_pair(it->name, it->t);
  }
  return std::nullopt;
}

std::optional<Stage> StageTracker::on_marker(std::string_view label, Seconds t, Bytes mem) {
  if (auto name = stage_start_name(label)) {
    open_.push_back({std::string(*name), t, mem});
    return std::nullopt;
  }
  auto name = stage_end_name(label);
  if (!name) return std::nullopt;
  for (auto it = open_.rbegin(); it != open_.rend(); ++it) {
    if (it->name != *name) continue;
    Stage s;
    s.name = it->name;
    s.t_start = it->t;
    s.mem_start = it->mem;
    s.t_end = t;
    s.mem_end = mem;
    open_.erase(std::next(it).base());
    return s;
  }
  return std::nullopt;
}

std::vector<Stage> StageTracker::unclosed(Seconds t_end, Bytes mem_end) const {
  std::vector<Stage> out;
  for (const Open& o : open_) {
    Stage s;
    s.name = o.name;
    s.t_start = o.t;
    s.mem_start = o.mem;
    s.t_end = t_end;
    s.mem_end = mem_end;
    s.closed = false;
    out.push_back(std::move(s));
  }
  return out;
}

}  // namespace qprof::trace
