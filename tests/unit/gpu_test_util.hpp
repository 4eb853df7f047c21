// SPDX-License-Identifier: Apache-2.0
// Helpers of the GPU tests: the fake libraries and scripts the build made, scratch directories.
#pragma once

#include <string>

namespace qprof::test {

// The fake libnvidia-ml.so.1 of a variant: full, no_v3, no_v2, no_mem_v2, old_init.
std::string fake_nvml(const std::string& variant = "full");
std::string fake_nvml_dir(const std::string& variant = "full");
// The directory holding the fake nvidia-smi and rocm-smi scripts.
std::string fake_scripts_dir();
std::string gpu_probe_bin();
std::string gpu_fake_job_bin();
std::string gpu_data(const std::string& relative);

// A scratch directory removed with the object.
class ScratchDir {
 public:
  ScratchDir();
  ~ScratchDir();
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;
  const std::string& path() const { return path_; }
  std::string file(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

// Replaces `path` with `text` atomically (a new file renamed over it): a reader re-reading it
// sees the old text or the new one, and a different inode, so it knows it changed.
void write_atomically(const std::string& path, const std::string& text);
std::string slurp(const std::string& path);

// The fake NVML reads its script from $QPROF_FAKE_NVML_SCRIPT: set for the test's lifetime.
class FakeNvmlScript {
 public:
  explicit FakeNvmlScript(const std::string& text);
  ~FakeNvmlScript();
  void set(const std::string& text) { write_atomically(path_, text); }
  const std::string& path() const { return path_; }

 private:
  ScratchDir dir_;
  std::string path_;
};

// Calls of one entry point of the fake NVML loaded from `library` (0 if it is not loaded).
long fake_nvml_calls(const std::string& library, const char* function);

}  // namespace qprof::test
