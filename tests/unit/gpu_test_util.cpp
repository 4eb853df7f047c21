// SPDX-License-Identifier: Apache-2.0
#include "gpu_test_util.hpp"

#include <dlfcn.h>
#include <stdlib.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>

namespace qprof::test {
namespace fs = std::filesystem;

std::string fake_nvml_dir(const std::string& variant) { return std::string(QPROF_TEST_FAKES) + "/nvml-" + variant; }
std::string fake_nvml(const std::string& variant) { return fake_nvml_dir(variant) + "/libnvidia-ml.so.1"; }
std::string fake_scripts_dir() { return QPROF_TEST_FAKE_SCRIPTS; }
std::string gpu_probe_bin() { return std::string(QPROF_TEST_FAKES) + "/gpu_probe"; }
std::string gpu_fake_job_bin() { return std::string(QPROF_TEST_WORKLOADS) + "/gpu_fake_job"; }
std::string gpu_data(const std::string& relative) { return std::string(QPROF_TEST_DATA) + "/gpu/" + relative; }

namespace {
std::atomic<int> g_counter{0};
}

ScratchDir::ScratchDir() {
  path_ = (fs::temp_directory_path() / ("qprof-gpu-" + std::to_string(getpid()) + "-" + std::to_string(g_counter++)))
              .string();
  fs::remove_all(path_);
  fs::create_directories(path_);
}

ScratchDir::~ScratchDir() {
  std::error_code ec;
  fs::remove_all(path_, ec);
}

void write_atomically(const std::string& path, const std::string& text) {
  const std::string tmp = path + ".tmp";
  {
    std::ofstream f(tmp, std::ios::trunc);
    f << text;
    if (!f) throw std::runtime_error("cannot write " + tmp);
  }
  fs::rename(tmp, path);
}

std::string slurp(const std::string& path) {
  std::ifstream f(path);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

FakeNvmlScript::FakeNvmlScript(const std::string& text) : path_(dir_.file("nvml.script")) {
  write_atomically(path_, text);
  ::setenv("QPROF_FAKE_NVML_SCRIPT", path_.c_str(), 1);
}

FakeNvmlScript::~FakeNvmlScript() { ::unsetenv("QPROF_FAKE_NVML_SCRIPT"); }

long fake_nvml_calls(const std::string& library, const char* function) {
  void* h = ::dlopen(library.c_str(), RTLD_NOW | RTLD_NOLOAD);
  if (!h) return 0;
  using Fn = long (*)(const char*);
  auto fn = reinterpret_cast<Fn>(::dlsym(h, "qprof_fake_nvml_calls"));
  const long n = fn ? fn(function) : 0;
  ::dlclose(h);
  return n;
}

}  // namespace qprof::test
