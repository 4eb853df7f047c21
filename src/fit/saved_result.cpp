// SPDX-License-Identifier: Apache-2.0
#include "qprof/fit/saved_result.hpp"

#include <fstream>
#include <nlohmann/json.hpp>

namespace qprof::fit {
namespace {

// A finding's limit, or nullopt where the search did not find one (null in the JSON). nlohmann's
// own exceptions (no limit_bytes) are caught by read_saved_limits.
Result<std::optional<Bytes>> finding_limit(const nlohmann::json& findings, const char* key) {
  if (!findings.contains(key) || findings[key].is_null()) return std::optional<Bytes>();
  const nlohmann::json& limit = findings[key].at("limit_bytes");
  if (!limit.is_number_unsigned()) return Failure{std::string(key) + ".limit_bytes is not a size"};
  return std::optional<Bytes>(limit.get<Bytes>());
}

}  // namespace

std::string saved_result_path(const std::string& trace_path) {
  const std::string stem = trace_path.size() > 4 && trace_path.compare(trace_path.size() - 4, 4, ".dat") == 0
                               ? trace_path.substr(0, trace_path.size() - 4)
                               : trace_path;
  return stem + ".fit.json";
}

Result<std::optional<SavedLimits>> read_saved_limits(const std::string& json_path) {
  std::ifstream in(json_path, std::ios::binary);
  if (!in) return std::optional<SavedLimits>();
  // fit's JSON is a few KB; a file far larger is not one, and is not read into memory whole.
  constexpr std::streamoff kMaxBytes = 16 << 20;
  in.seekg(0, std::ios::end);
  const std::streamoff size = in.tellg();
  if (size < 0 || size > kMaxBytes) {
    return Failure{json_path + ": " + (size < 0 ? "cannot be read" : "larger than 16 MiB: not qprof fit's JSON")};
  }
  in.seekg(0);
  std::string text(static_cast<std::size_t>(size), '\0');
  in.read(text.data(), size);
  text.resize(static_cast<std::size_t>(in.gcount()));
  try {
    const nlohmann::json j = nlohmann::json::parse(text);
    if (!j.is_object() || !j.contains("findings") || !j["findings"].is_object()) {
      return Failure{json_path + ": no findings: not qprof fit's JSON"};
    }
    const Result<std::optional<Bytes>> runs_in = finding_limit(j["findings"], "smallest_running");
    if (!runs_in) return Failure{json_path + ": " + runs_in.failure().message};
    const Result<std::optional<Bytes>> full_speed = finding_limit(j["findings"], "full_speed");
    if (!full_speed) return Failure{json_path + ": " + full_speed.failure().message};
    return std::optional<SavedLimits>(SavedLimits{*runs_in, *full_speed});
  } catch (const std::exception& e) {
    return Failure{json_path + ": " + e.what()};
  }
}

}  // namespace qprof::fit
