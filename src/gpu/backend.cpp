// SPDX-License-Identifier: Apache-2.0
// Choosing a backend (--gpu) and reading CUDA_VISIBLE_DEVICES.
#include <algorithm>
#include <cctype>
#include <set>

#include "qprof/gpu/backend.hpp"

namespace qprof::gpu {

std::optional<Choice> parse_choice(std::string_view text) {
  if (text == "auto") return Choice::automatic;
  if (text == "nvml") return Choice::nvml;
  if (text == "amd") return Choice::amd;
  if (text == "smi") return Choice::smi;
  if (text == "none") return Choice::none;
  return std::nullopt;
}

std::string_view choice_name(Choice c) {
  switch (c) {
    case Choice::automatic:
      return "auto";
    case Choice::nvml:
      return "nvml";
    case Choice::amd:
      return "amd";
    case Choice::smi:
      return "smi";
    case Choice::none:
      return "none";
  }
  return "?";
}

const char* compute_mode_name(ComputeMode m) {
  switch (m) {
    case ComputeMode::default_mode:
      return "Default";
    case ComputeMode::exclusive_thread:
      return "Exclusive_Thread";
    case ComputeMode::prohibited:
      return "Prohibited";
    case ComputeMode::exclusive_process:
      return "Exclusive_Process";
  }
  return "?";
}

Selection open_backend(Choice choice, const OpenOptions& options) {
  Selection s;
  std::string reasons;
  auto attempt = [&](Choice c) {
    std::string why;
    try {
      Result<std::unique_ptr<Backend>> opened = Failure{""};
      switch (c) {
        case Choice::nvml:
          opened = open_nvml(options);
          break;
        case Choice::amd:
          opened = open_amd(options);
          break;
        case Choice::smi:
          opened = open_smi(options);
          break;
        default:
          break;
      }
      if (opened)
        s.backend = std::move(*opened);
      else
        why = opened.failure().message;
    } catch (const std::exception& e) {
      s.backend.reset();
      why = e.what();
    }
    if (s.backend) {
      s.message = "GPU: " + s.backend->description();
      return true;
    }
    if (!reasons.empty()) reasons += "; ";
    reasons += std::string(choice_name(c)) + ": " + (why.empty() ? "not available" : why);
    return false;
  };
  switch (choice) {
    case Choice::none:
      s.message = "GPU: not recorded (--gpu none)";
      break;
    case Choice::automatic:
      if (!attempt(Choice::nvml) && !attempt(Choice::amd) && (options.no_helpers || !attempt(Choice::smi))) {
        if (options.no_helpers) reasons += "; smi: not tried (NVML's library is here; --gpu smi tries it)";
        s.message = "GPU: none found (" + reasons + ")";
      }
      break;
    default:
      if (!attempt(choice)) {
        s.failed_request = true;
        s.message = "GPU: --gpu " + std::string(choice_name(choice)) + " found nothing (" + reasons +
                    "); no GPU memory is recorded";
      }
      break;
  }
  return s;
}

bool opens_without_helpers(Choice choice, const OpenOptions& options) {
  if (choice == Choice::nvml || choice == Choice::amd) return true;
  return choice == Choice::automatic && nvml_library_loads(options);
}

namespace {

std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

bool all_digits(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

// The model of the physical GPU a device is (or is a MIG slice of).
std::string_view model(const Device& d) {
  std::string_view n = d.name;
  if (const auto mig = n.find(" MIG "); !d.parent_uuid.empty() && mig != std::string_view::npos) n = n.substr(0, mig);
  return n;
}

}  // namespace

std::vector<bool> visible_devices(const std::vector<Device>& devices, std::optional<std::string_view> cuda_visible,
                                  std::optional<std::string_view> cuda_device_order, std::string* warning) {
  std::vector<bool> all(devices.size(), true);
  if (!cuda_visible) return all;
  std::vector<bool> seen(devices.size(), false);
  std::set<std::string_view> models;
  for (const Device& d : devices) models.insert(model(d));
  const bool pci_order = cuda_device_order && trim(*cuda_device_order) == "PCI_BUS_ID";
  const bool indices_map = pci_order || models.size() <= 1;

  std::string_view rest = *cuda_visible;
  for (;;) {
    const auto comma = rest.find(',');
    const std::string_view entry = trim(rest.substr(0, comma));
    rest = comma == std::string_view::npos ? std::string_view() : rest.substr(comma + 1);
    if (entry.empty()) break;  // "" hides every device; CUDA stops at an empty or invalid entry
    std::vector<std::size_t> hits;
    if (all_digits(entry)) {
      if (!indices_map) {
        if (warning) {
          *warning = "CUDA_VISIBLE_DEVICES=" + std::string(*cuda_visible) +
                     " counts GPUs in CUDA's fastest-first order, which qprof cannot map to NVML's on this machine of "
                     "mixed GPUs (set CUDA_DEVICE_ORDER=PCI_BUS_ID, or use GPU UUIDs); recording every GPU";
        }
        return all;
      }
      const long index = entry.size() > 6 ? -1 : std::stol(std::string(entry));
      for (std::size_t i = 0; i < devices.size(); ++i) {
        if (devices[i].vendor_index == index) hits.push_back(i);
      }
    } else if (entry.starts_with("GPU-") || entry.starts_with("MIG-")) {
      std::set<std::string_view> physical;  // a prefix must name one GPU (or one MIG device)
      for (std::size_t i = 0; i < devices.size(); ++i) {
        const Device& d = devices[i];
        if (std::string_view(d.uuid).starts_with(entry)) {
          hits.push_back(i);
          physical.insert(d.uuid);
        } else if (!d.parent_uuid.empty() && std::string_view(d.parent_uuid).starts_with(entry)) {
          hits.push_back(i);
          physical.insert(d.parent_uuid);
        }
      }
      if (physical.size() > 1) hits.clear();
      if (hits.empty() && warning) {
        *warning = "CUDA_VISIBLE_DEVICES entry '" + std::string(entry) +
                   "' names no single GPU qprof sees; the job sees the GPUs before it only";
      }
    }
    if (hits.empty()) break;
    for (std::size_t i : hits) seen[i] = true;
    if (comma == std::string_view::npos) break;
  }
  return seen;
}

}  // namespace qprof::gpu
