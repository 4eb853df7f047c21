// SPDX-License-Identifier: Apache-2.0
/* shm_fill MIB HOLD_MS: fills MIB MiB of POSIX shared memory (/dev/shm) through a shared mapping
 * (shared-memory RSS of MIB MiB), holds it for HOLD_MS, then removes it. */
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>

#include "workload.h"

int main(int argc, char** argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: shm_fill MIB HOLD_MS\n");
    return 2;
  }
  const size_t mib = strtoul(argv[1], NULL, 10);
  const long hold = atol(argv[2]);
  char name[64];
  snprintf(name, sizeof name, "/qprof_shm_fill_%ld", (long)getpid());
  int fd = shm_open(name, O_RDWR | O_CREAT | O_EXCL, 0600);
  if (fd < 0) {
    perror("shm_open");
    return 1;
  }
  shm_unlink(name); /* gone from /dev/shm once this process exits, whatever happens */
  if (ftruncate(fd, (off_t)(mib * MIB)) != 0) {
    perror("ftruncate");
    return 1;
  }
  char* p = mmap(NULL, mib * MIB, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (p == MAP_FAILED) {
    perror("mmap");
    return 1;
  }
  memset(p, 's', mib * MIB);
  mark("filled");
  sleep_ms(hold);
  munmap(p, mib * MIB);
  close(fd);
  return 0;
}
