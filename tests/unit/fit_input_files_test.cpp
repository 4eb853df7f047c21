// SPDX-License-Identifier: Apache-2.0
// The files a job reads, as qprof fit finds them: data mappings read from a maps text, and a real
// file's pages counted in page cache and dropped from it.
#include "qprof/fit/input_files.hpp"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <linux/magic.h>
#include <sys/vfs.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

namespace qprof::fit {
namespace {

TEST(FitInputFiles, DataMappingsAreTheFileMappingsThatAreNotCode) {
  const std::string maps =
      "55d0c000-55d0d000 r--p 00000000 08:01 1234 /usr/bin/python3.11\n"
      "55d0d000-55d0e000 r-xp 00001000 08:01 1234 /usr/bin/python3.11\n"
      "7f00000000-7f09600000 r--s 00000000 08:01 99 /data/model weights.bin\n"
      "7f09600000-7f09700000 r--s 00100000 08:01 99 /data/model weights.bin\n"
      "7f10000000-7f10001000 r-xp 00000000 08:01 55 /usr/lib/libc.so.6\n"
      "7f20000000-7f20100000 rw-p 00000000 00:00 0 \n"
      "7f30000000-7f30100000 rw-s 00000000 00:05 77 /dev/zero (deleted)\n"
      "7ffc0000-7ffc1000 rw-p 00000000 00:00 0 [stack]\n";
  const std::vector<std::string> want{"/data/model weights.bin"};
  EXPECT_EQ(data_mapping_paths(maps), want) << "programs and libraries left out, each file once, spaces kept";
}

// A file this process holds open: found, its pages counted once read, dropped by evict().
TEST(FitInputFiles, AnOpenFileIsFoundCountedAndEvicted) {
  // In the build tree, on a disk: a tmpfs file's pages are shared memory, which no advice drops.
  std::filesystem::create_directories(QPROF_TEST_SCRATCH);
  std::string path = std::string(QPROF_TEST_SCRATCH) + "/fit-input-XXXXXX";
  const int fd = ::mkstemp(path.data());
  ASSERT_GE(fd, 0);
  struct statfs fs {};
  if (::fstatfs(fd, &fs) == 0 && fs.f_type == TMPFS_MAGIC) {
    ::close(fd);
    ::unlink(path.c_str());
    GTEST_SKIP() << QPROF_TEST_SCRATCH << " is a tmpfs: its pages cannot be dropped";
  }
  std::vector<char> block(1 << 20, 'q');
  for (int i = 0; i < 4; ++i) ASSERT_EQ(::write(fd, block.data(), block.size()), static_cast<ssize_t>(block.size()));
  ::fsync(fd);  // clean pages: the kernel drops only those
  InputFiles files;
  files.scan({::getpid()});
  files.scan({::getpid()});
  EXPECT_GE(files.count(), 1u);
  EXPECT_GE(files.size(), Bytes{4} << 20);
  const Bytes before = files.resident();
  EXPECT_GE(before, Bytes{4} << 20) << "just written: in page cache";
  EXPECT_EQ(files.evict(), 0u);
  EXPECT_LE(files.resident(), before - (Bytes{4} << 20)) << "its pages dropped";
  ::close(fd);
  ::unlink(path.c_str());
}

}  // namespace
}  // namespace qprof::fit
