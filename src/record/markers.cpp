// SPDX-License-Identifier: Apache-2.0
#include "qprof/record/markers.hpp"

#include <stdexcept>

#include "qprof/common/text.hpp"

namespace qprof {

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
    return std::string(trim_blanks(label));
  }
  // Anywhere in the line: a logging framework's prefix (INFO:root:, a time stamp) stays in front.
  const std::size_t at = line.find(kDefaultMarkerPrefix);
  if (at == std::string_view::npos) return std::nullopt;
  return std::string(trim_blanks(line.substr(at + kDefaultMarkerPrefix.size())));
}

}  // namespace qprof
