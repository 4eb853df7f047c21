// Small text pieces the exporters share: JSON strings and CSV fields that no label can break.
// Numbers are common/number_text.hpp's.
#pragma once

#include <string>
#include <string_view>

namespace qprof::exports {

// A JSON string literal; invalid UTF-8 becomes U+FFFD, control characters are escaped.
std::string json_string(std::string_view s);
// A CSV field (RFC 4180): quoted when it holds a comma, a quote, CR or LF.
std::string csv_field(std::string_view s);

}  // namespace qprof::exports
