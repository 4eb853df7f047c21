// SPDX-License-Identifier: Apache-2.0
#include "qprof/record/markers.hpp"

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

#include "qprof/common/text.hpp"

namespace qprof::record {

// PCRE2 rather than std::regex: std::regex backtracks without any bound (26 s of CPU for
// '^(?:a|a)*X(.*)$' on a 31-character line) and recurses once per character; PCRE2 counts its
// steps and keeps its backtracking on the heap within a limit.
struct MarkerMatcher::Compiled {
  pcre2_code* code = nullptr;
  pcre2_match_context* context = nullptr;
  std::atomic<std::uint64_t> gave_up{0};
  ~Compiled() {
    pcre2_match_context_free(context);
    pcre2_code_free(code);
  }
};

namespace {

std::string pcre2_message(int code) {
  PCRE2_UCHAR buf[256];
  if (pcre2_get_error_message(code, buf, sizeof buf) < 0) return "error " + std::to_string(code);
  return reinterpret_cast<const char*>(buf);
}

}  // namespace

Result<MarkerMatcher> MarkerMatcher::compile(const std::string& regex) {
  auto c = std::make_shared<Compiled>();
  int error = 0;
  PCRE2_SIZE offset = 0;
  // Bytes, not UTF-8: a job's stderr may hold anything, and an invalid sequence must not fail
  // the match.
  c->code = pcre2_compile(reinterpret_cast<PCRE2_SPTR>(regex.data()), regex.size(), 0, &error, &offset, nullptr);
  if (!c->code) {
    return Failure{"the marker pattern is not a valid regular expression: " + pcre2_message(error) + " at offset " +
                   std::to_string(offset)};
  }
  std::uint32_t groups = 0;
  pcre2_pattern_info(c->code, PCRE2_INFO_CAPTURECOUNT, &groups);
  if (groups != 1) {
    return Failure{"the marker pattern needs exactly one capture group (the label), it has " + std::to_string(groups)};
  }
  c->context = pcre2_match_context_create(nullptr);
  if (!c->context) return Failure{"the marker pattern: out of memory for its match context"};
  pcre2_set_match_limit(c->context, kMarkerMatchSteps);
  pcre2_set_depth_limit(c->context, kMarkerMatchSteps);
  pcre2_set_heap_limit(c->context, 4096);  // KiB of backtracking memory
  MarkerMatcher m;
  m.regex_ = std::move(c);
  return m;
}

std::uint64_t MarkerMatcher::gave_up() const { return regex_ ? regex_->gave_up.load() : 0; }

std::optional<std::string> MarkerMatcher::match(std::string_view line) const {
  if (regex_) {
    // One match block a thread, kept: the tee matches every line of a chatty stderr, and a block
    // (with the backtracking frames PCRE2 keeps in it) made for each line cost more than the match.
    // Two pairs fit every pattern: compile() took only those with exactly one group.
    thread_local const std::unique_ptr<pcre2_match_data, decltype(&pcre2_match_data_free)> m(
        pcre2_match_data_create(2, nullptr), &pcre2_match_data_free);
    if (!m) return std::nullopt;
    const int rc = pcre2_match(regex_->code, reinterpret_cast<PCRE2_SPTR>(line.data()), line.size(), 0, 0, m.get(),
                               regex_->context);
    if (rc == PCRE2_ERROR_MATCHLIMIT || rc == PCRE2_ERROR_DEPTHLIMIT || rc == PCRE2_ERROR_HEAPLIMIT) {
      ++regex_->gave_up;
      return std::nullopt;
    }
    if (rc < 2) return std::nullopt;  // no match, an error, or the group took no part
    const PCRE2_SIZE* v = pcre2_get_ovector_pointer(m.get());
    if (v[2] == PCRE2_UNSET || v[3] < v[2]) return std::nullopt;
    return std::string(trim_blanks(line.substr(v[2], v[3] - v[2])));
  }
  // Anywhere in the line: a logging framework's prefix (INFO:root:, a time stamp) stays in front.
  const std::size_t at = line.find(kDefaultMarkerPrefix);
  if (at == std::string_view::npos) return std::nullopt;
  return std::string(trim_blanks(line.substr(at + kDefaultMarkerPrefix.size())));
}

}  // namespace qprof::record
