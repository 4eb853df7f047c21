// SPDX-License-Identifier: Apache-2.0
// Files the unit tests write and read back: a name in the temporary directory unique to the
// test process, and a whole file as bytes.
#pragma once

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

namespace qprof::test {

inline std::string unit_temp_file(const std::string& name) {
  return (std::filesystem::temp_directory_path() / ("qprof-unit-" + std::to_string(getpid()) + "-" + name)).string();
}

inline std::string whole_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

}  // namespace qprof::test
