// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <string_view>

namespace qprof {
inline constexpr std::string_view kVersion = QPROF_VERSION;  // from CMakeLists.txt's project()
}  // namespace qprof
