// SPDX-License-Identifier: Apache-2.0
// nvidia-smi and rocm-smi output, parsed (qprof/gpu/smi.hpp).
#include <algorithm>
#include <cctype>
#include <charconv>
#include <nlohmann/json.hpp>

#include "qprof/common/units.hpp"
#include "qprof/gpu/smi.hpp"

namespace qprof::gpu {
namespace smi {
namespace {

std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

// Splits at commas; the last field keeps any further commas when `rest_last`.
std::size_t split(std::string_view line, std::string_view* fields, std::size_t max, bool rest_last) {
  std::size_t n = 0;
  while (n < max) {
    const auto comma = (rest_last && n + 1 == max) ? std::string_view::npos : line.find(',');
    fields[n++] = trim(line.substr(0, comma));
    if (comma == std::string_view::npos) return n;
    line = line.substr(comma + 1);
  }
  return n + 1;  // more fields than asked for
}

template <class T>
std::optional<T> number(std::string_view s) {
  s = trim(s);
  T v{};
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (s.empty() || ec != std::errc() || end != s.data() + s.size()) return std::nullopt;
  return v;
}

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

// The JSON object in rocm-smi's output, which may have log lines before or after it.
std::optional<nlohmann::json> json_object(std::string_view text) {
  const auto open = text.find('{');
  const auto close = text.rfind('}');
  if (open == std::string_view::npos || close == std::string_view::npos || close < open) return std::nullopt;
  nlohmann::json j = nlohmann::json::parse(text.substr(open, close - open + 1), nullptr, false);
  if (j.is_discarded() || !j.is_object()) return std::nullopt;
  return j;
}

std::optional<Bytes> json_bytes(const nlohmann::json& v) {
  if (v.is_number_unsigned()) return v.get<Bytes>();
  if (v.is_number_integer() && v.get<long long>() >= 0) return static_cast<Bytes>(v.get<long long>());
  if (v.is_string()) return number<Bytes>(v.get<std::string>());
  return std::nullopt;
}

std::string json_text(const nlohmann::json& v) {
  if (v.is_string()) return v.get<std::string>();
  if (v.is_number()) return v.dump();
  return {};
}

}  // namespace

std::optional<Bytes> parse_mib(std::string_view field) {
  const auto mib = number<Bytes>(field);
  if (!mib || *mib > (~Bytes{0} >> 20)) return std::nullopt;
  return *mib << 20;
}

bool parse_gpu_row(std::string_view line, GpuRow& out) {
  std::string_view f[5];
  if (split(line, f, 5, true) != 5) return false;
  const auto index = number<int>(f[0]);
  if (!index || f[1].empty()) return false;
  out.index = *index;
  out.uuid = std::string(f[1]);
  out.total = parse_mib(f[2]);
  out.used = parse_mib(f[3]);
  out.name = std::string(f[4]);
  return true;
}

bool parse_used_row(std::string_view line, std::string& uuid, std::optional<Bytes>& used) {
  std::string_view f[2];
  if (split(line, f, 2, false) != 2 || f[0].empty() || f[0].front() == '[') return false;
  uuid = std::string(f[0]);
  used = parse_mib(f[1]);
  return true;
}

bool parse_app_row(std::string_view line, AppRow& out) {
  std::string_view f[3];
  if (split(line, f, 3, false) != 3) return false;
  const auto pid = number<pid_t>(f[0]);
  if (!pid || *pid <= 0 || f[1].empty()) return false;
  out.pid = *pid;
  out.uuid = std::string(f[1]);
  out.used = parse_mib(f[2]);
  return true;
}

std::optional<std::vector<RocmCard>> parse_rocm_meminfo(std::string_view text) {
  const auto j = json_object(text);
  if (!j) return std::nullopt;
  std::vector<RocmCard> cards;
  for (const auto& [key, value] : j->items()) {
    if (!key.starts_with("card") || !value.is_object()) continue;
    RocmCard c;
    c.key = key;
    for (const auto& [k, v] : value.items()) {
      const std::string name = lower(k);
      // "VRAM Total Memory (B)" (ROCm 5, 6), "vram Total Memory (B)" (ROCm 4).
      if (name.find("total used memory") != std::string::npos) {
        c.used = json_bytes(v);
      } else if (name.find("total memory") != std::string::npos) {
        c.total = json_bytes(v);
      } else if (name == "pci bus") {
        c.bus = json_text(v);
      } else if (name == "card series" || (c.name.empty() && name == "card model")) {
        c.name = json_text(v);
      }
    }
    cards.push_back(std::move(c));
  }
  std::sort(cards.begin(), cards.end(), [](const RocmCard& a, const RocmCard& b) {
    return a.key.size() != b.key.size() ? a.key.size() < b.key.size() : a.key < b.key;
  });
  return cards;
}

std::optional<std::vector<RocmProcess>> parse_rocm_pids(std::string_view text) {
  std::vector<RocmProcess> out;
  if (trim(text).empty()) return out;  // nothing printed: no processes
  const auto j = json_object(text);
  if (!j) {
    // "No KFD PIDs currently running" without any JSON
    if (text.find("No KFD PIDs") != std::string_view::npos) return out;
    return std::nullopt;
  }
  auto scan = [&](const nlohmann::json& obj) {
    for (const auto& [key, value] : obj.items()) {
      if (!key.starts_with("PID")) continue;
      const auto pid = number<pid_t>(std::string_view(key).substr(3));
      if (!pid || *pid <= 0) continue;
      RocmProcess p;
      p.pid = *pid;
      // "name, gpus, vram, sdma, cu": the name may itself hold ", " (spaces became commas), so
      // count from the end.
      const std::string v = json_text(value);
      std::vector<std::string_view> fields;
      std::string_view rest = v;
      for (;;) {
        const auto comma = rest.find(',');
        fields.push_back(trim(rest.substr(0, comma)));
        if (comma == std::string_view::npos) break;
        rest = rest.substr(comma + 1);
      }
      if (fields.size() >= 5) {
        const std::size_t n = fields.size();
        p.vram = number<Bytes>(fields[n - 3]);
        p.gpus = number<int>(fields[n - 4]).value_or(0);
      }
      out.push_back(p);
    }
  };
  scan(*j);
  if (j->contains("system") && (*j)["system"].is_object()) scan((*j)["system"]);
  std::sort(out.begin(), out.end(), [](const RocmProcess& a, const RocmProcess& b) { return a.pid < b.pid; });
  return out;
}

}  // namespace smi

}  // namespace qprof::gpu
