// SPDX-License-Identifier: Apache-2.0
/* map_file PATH MIB HOLD_MS: writes a MIB MiB file at PATH, maps it read-only and reads every
 * page (file-backed RSS of MIB MiB), holds it for HOLD_MS, then unmaps and removes the file.
 * Its anonymous memory stays small (no buffer beyond one 1 MiB block). */
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>

#include "workload.h"

int main(int argc, char** argv) {
  if (argc != 4) {
    fprintf(stderr, "usage: map_file PATH MIB HOLD_MS\n");
    return 2;
  }
  const char* path = argv[1];
  const size_t mib = strtoul(argv[2], NULL, 10);
  const long hold = atol(argv[3]);
  int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
  if (fd < 0) {
    perror("open");
    return 1;
  }
  static char block[MIB];
  memset(block, 'q', sizeof block);
  for (size_t i = 0; i < mib; ++i) {
    if (write(fd, block, sizeof block) != (ssize_t)sizeof block) {
      perror("write");
      return 1;
    }
  }
  const char* p = mmap(NULL, mib * MIB, PROT_READ, MAP_SHARED, fd, 0);
  if (p == MAP_FAILED) {
    perror("mmap");
    return 1;
  }
  long page = sysconf(_SC_PAGESIZE);
  unsigned long sum = 0;
  for (size_t off = 0; off < mib * MIB; off += (size_t)page) sum += (unsigned char)p[off];
  if (sum == 0) return 3;
  mark("mapped");
  sleep_ms(hold);
  munmap((void*)p, mib * MIB);
  close(fd);
  unlink(path);
  return 0;
}
