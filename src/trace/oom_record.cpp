// SPDX-License-Identifier: Apache-2.0
#include "oom_record.hpp"

#include "record_range.hpp"

#include <charconv>
#include <cmath>

#include "qprof/trace/format.hpp"

namespace qprof::trace {
namespace {

template <typename T>
T number_of(std::string_view key, std::string_view value) {
  T v{};
  const auto r = std::from_chars(value.data(), value.data() + value.size(), v);
  if (r.ec != std::errc() || r.ptr != value.data() + value.size()) {
    throw BadRecord("OOM: " + std::string(key) + "=" + escape_text(value.substr(0, 40)) + " is not a number");
  }
  return v;
}

void add(std::string& out, std::string_view key, const std::string& value) {
  if (value.empty()) return;
  out += out.empty() ? "" : " ";
  out += key;
  out += '=';
  out += escape_text(value, true);
}

}  // namespace

std::string oom_record_fields(const OomKill& k) {
  std::string out;
  if (k.pid > 0) add(out, "pid", std::to_string(k.pid));
  add(out, "name", k.name);
  add(out, "role", k.role);
  add(out, "source", k.source);
  add(out, "scope", k.scope);
  if (k.limit) add(out, "limit", std::to_string(*k.limit));
  if (k.held) add(out, "held", std::to_string(*k.held));
  if (k.tree) add(out, "tree", std::to_string(*k.tree));
  add(out, "stage", k.stage);
  return out;
}

OomKill parse_oom_record(std::string_view fields) {
  OomKill k;
  const std::size_t sp = fields.find(' ');
  const std::string_view t = fields.substr(0, sp);
  k.t = number_of<double>("time", t);
  if (auto why = detail::time_out_of_range("OOM", "time", k.t)) throw BadRecord(*why);
  fields.remove_prefix(sp == std::string_view::npos ? fields.size() : sp + 1);
  while (!fields.empty()) {
    const std::size_t end = fields.find(' ');
    const std::string_view pair = fields.substr(0, end);
    fields.remove_prefix(end == std::string_view::npos ? fields.size() : end + 1);
    if (pair.empty()) continue;
    const std::size_t eq = pair.find('=');
    if (eq == std::string_view::npos || eq == 0) {
      throw BadRecord("OOM: expected key=value, got '" + escape_text(pair.substr(0, 40)) + "'");
    }
    const std::string_view key = pair.substr(0, eq);
    const std::string_view raw = pair.substr(eq + 1);
    if (key == "pid")
      k.pid = number_of<std::int64_t>(key, raw);
    else if (key == "limit")
      k.limit = number_of<Bytes>(key, raw);
    else if (key == "held")
      k.held = number_of<Bytes>(key, raw);
    else if (key == "tree")
      k.tree = number_of<Bytes>(key, raw);
    else if (key == "name")
      k.name = unescape_text(raw);
    else if (key == "role")
      k.role = unescape_text(raw);
    else if (key == "source")
      k.source = unescape_text(raw);
    else if (key == "scope")
      k.scope = unescape_text(raw);
    else if (key == "stage")
      k.stage = unescape_text(raw);
  }
  return k;
}

}  // namespace qprof::trace
