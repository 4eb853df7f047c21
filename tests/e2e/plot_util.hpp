// SPDX-License-Identifier: Apache-2.0
// What the plot tests share: their fixtures, a folder per test, and files checked as files (a
// PNG's size from its header, an SVG's text through a real XML parser).
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>

#include "e2e_util.hpp"

namespace qprof::test::plot_files {
namespace fs = std::filesystem;

inline std::string plot_data(const std::string& name) { return data_file("plot/" + name); }

// A fresh folder per test: no test sees another's files.
inline std::string test_dir() {
  const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
  const std::string dir = temp_dir() + "/" + info->name();
  fs::create_directories(dir);
  return dir;
}

inline void write(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary);
  out << text;
}

inline std::uint32_t be32(const std::string& s, std::size_t at) {
  return (static_cast<std::uint32_t>(static_cast<unsigned char>(s[at])) << 24) |
         (static_cast<std::uint32_t>(static_cast<unsigned char>(s[at + 1])) << 16) |
         (static_cast<std::uint32_t>(static_cast<unsigned char>(s[at + 2])) << 8) |
         static_cast<std::uint32_t>(static_cast<unsigned char>(s[at + 3]));
}

inline void expect_png(const std::string& path, std::uint32_t width, std::uint32_t height) {
  const std::string png = read_file(path);
  ASSERT_GT(png.size(), 2000u) << path;
  EXPECT_EQ(png.substr(0, 8), std::string("\x89PNG\r\n\x1a\n", 8));
  EXPECT_EQ(png.substr(12, 4), "IHDR");
  EXPECT_EQ(be32(png, 16), width);
  EXPECT_EQ(be32(png, 20), height);
}

// The text of every element of an SVG file, through a real XML parser (it fails on bad XML).
inline std::string svg_text(const std::string& path) {
  const std::string script =
      "import sys, xml.etree.ElementTree as E\n"
      "root = E.parse(sys.argv[1]).getroot()\n"
      "assert root.tag.endswith('svg'), root.tag\n"
      "sys.stdout.write('\\n'.join(t.strip() for t in root.itertext() if t.strip()))\n";
  const Result r = run({debian_python(), "-c", script, path});
  EXPECT_EQ(r.status, 0) << r.err;
  return r.out;
}

inline bool has(const std::string& haystack, const std::string& needle) {
  return haystack.find(needle) != std::string::npos;
}

}  // namespace qprof::test::plot_files
