// SPDX-License-Identifier: Apache-2.0
// Small text pieces the exporters share: JSON strings that no label can break. Numbers are
// common/number_text.hpp's, CSV cells common/csv_cell.hpp's.
#pragma once

#include <string>
#include <string_view>

namespace qprof::exports {

// A JSON string literal; invalid UTF-8 becomes U+FFFD, control characters are escaped.
std::string json_string(std::string_view s);

}  // namespace qprof::exports
