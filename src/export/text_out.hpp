// Small text pieces the exporters share: numbers in their shortest exact form, JSON strings and
// CSV fields that no label can break.
#pragma once

#include <string>
#include <string_view>

namespace qprof::exports {

// The shortest text that reads back as the same double ("1073741824", "0.5"); "null"-free: the
// caller decides what a missing value is.
std::string number(double v);
// A JSON string literal; invalid UTF-8 becomes U+FFFD, control characters are escaped.
std::string json_string(std::string_view s);
// A CSV field (RFC 4180): quoted when it holds a comma, a quote, CR or LF.
std::string csv_field(std::string_view s);

}  // namespace qprof::exports
