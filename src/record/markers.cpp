#include "qprof/record/markers.hpp"

#include <stdexcept>

namespace qprof {
namespace {

std::string_view trim(std::string_view s) {
  const auto is_space = [](char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; };
  while (!s.empty() && is_space(s.front())) s.remove_prefix(1);
  while (!s.empty() && is_space(s.back())) s.remove_suffix(1);
  return s;
}

std::optional<std::string_view> strip_suffix(std::string_view label, std::string_view suffix) {
  if (label.size() <= suffix.size() || label.substr(label.size() - suffix.size()) != suffix) {
    return std::nullopt;
  }
  std::string_view name = trim(label.substr(0, label.size() - suffix.size()));
  if (name.empty()) return std::nullopt;
  return name;
}

}  // namespace

MarkerMatcher::MarkerMatcher(const std::string& regex) {
  try {
    auto re = std::make_shared<std::regex>(regex, std::regex::ECMAScript);
    if (re->mark_count() != 1) {
      throw std::invalid_argument("the marker pattern needs exactly one capture group (the label), it has " +
                                  std::to_string(re->mark_count()));
    }
    regex_ = std::move(re);
  } catch (const std::regex_error& e) {
    throw std::invalid_argument("the marker pattern is not a valid regular expression: " + std::string(e.what()));
  }
}

std::optional<std::string> MarkerMatcher::match(std::string_view line) const {
  if (line.size() > kMarkerScanLimit) line = line.substr(0, kMarkerScanLimit);
  if (regex_) {
    std::match_results<std::string_view::const_iterator> m;
    if (!std::regex_search(line.begin(), line.end(), m, *regex_) || !m[1].matched) return std::nullopt;
    const std::string label = m[1].str();
    return std::string(trim(label));
  }
  std::size_t i = 0;
  while (i < line.size() && (line[i] == ' ' || line[i] == '\t')) ++i;
  if (line.substr(i, kDefaultMarkerPrefix.size()) != kDefaultMarkerPrefix) return std::nullopt;
  return std::string(trim(line.substr(i + kDefaultMarkerPrefix.size())));
}

std::optional<std::string_view> stage_start_name(std::string_view label) {
  return strip_suffix(label, " Start");
}

std::optional<std::string_view> stage_end_name(std::string_view label) { return strip_suffix(label, " End"); }

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

}  // namespace qprof
