// SPDX-License-Identifier: Apache-2.0
#include "text_out.hpp"

#include <nlohmann/json.hpp>

namespace qprof::exports {

std::string json_string(std::string_view s) {
  return nlohmann::json(std::string(s)).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace qprof::exports
