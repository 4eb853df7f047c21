// SPDX-License-Identifier: Apache-2.0
/* Helpers shared by the test workloads: programs whose memory use is known by construction. */
#ifndef QPROF_TEST_WORKLOAD_H
#define QPROF_TEST_WORKLOAD_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#define MIB (1024UL * 1024UL)

/* Maps and touches `mib` MiB of anonymous memory, MAP_PRIVATE or MAP_SHARED as `share` says
 * (every page resident). */
static inline char* touch_mapped(size_t mib, int share) {
  if (mib == 0) return NULL;
  char* p = mmap(NULL, mib * MIB, PROT_READ | PROT_WRITE, share | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) {
    perror("mmap");
    exit(99);
  }
  long page = sysconf(_SC_PAGESIZE);
  for (size_t off = 0; off < mib * MIB; off += (size_t)page) p[off] = (char)(off / page + 1);
  return p;
}

static inline char* touch_mib(size_t mib) { return touch_mapped(mib, MAP_PRIVATE); }

/* Shared with the children forked after it: shmem, not Anonymous. */
static inline char* touch_shared_mib(size_t mib) { return touch_mapped(mib, MAP_SHARED); }

static inline void release_mib(char* p, size_t mib) {
  if (p) munmap(p, mib * MIB);
}

static inline void sleep_ms(long ms) {
  struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
  while (nanosleep(&ts, &ts) != 0) {
  }
}

/* A marker line for qprof, written with one write(2) so that it is never interleaved. */
static inline void mark(const char* label) {
  char line[512];
  int n = snprintf(line, sizeof line, "QPROF_MARK: %s\n", label);
  if (write(2, line, (size_t)n) < 0) exit(98);
}

#endif
