// SPDX-License-Identifier: Apache-2.0
// Files the unit tests write and read back: a name in the temporary directory unique to the
// test process (ctest runs tests side by side, so a fixed name is a race), and a whole file as bytes.
#pragma once

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <system_error>

namespace qprof::test {

inline std::string unit_temp_file(const std::string& name) {
  return (std::filesystem::temp_directory_path() / ("qprof-unit-" + std::to_string(getpid()) + "-" + name)).string();
}

// A name from unit_temp_file whose file goes with the object, however the test ends.
class RemovedTempFile {
 public:
  explicit RemovedTempFile(const std::string& name) : path_(unit_temp_file(name)) {}
  ~RemovedTempFile() {
    std::error_code ignored;
    std::filesystem::remove(path_, ignored);
  }
  RemovedTempFile(const RemovedTempFile&) = delete;
  RemovedTempFile& operator=(const RemovedTempFile&) = delete;
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

inline std::string whole_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

}  // namespace qprof::test
