// SPDX-License-Identifier: Apache-2.0
/* shared_flux MIB READERS SECONDS DWELL_MS: the parent writes MIB MiB of a MAP_SHARED anonymous
 * mapping and forks READERS children. For SECONDS each child maps every page (reads it), holds
 * it DWELL_MS to 2 × DWELL_MS, drops its own mapping of the pages (MADV_DONTNEED: for shared
 * memory only this process's page table entries go, never the pages) and waits as long, over and
 * over, as workers that map a shared buffer and let it go. The parent maps every page all along:
 * at every moment each page's shares over its mappers sum to one page, so the tree's Σ PSS is
 * MIB MiB and its own few pages whatever the phase, while the readers' sharing never rests. */
#include <sys/wait.h>

#include "workload.h"

int main(int argc, char** argv) {
  if (argc != 5) {
    fprintf(stderr, "usage: shared_flux MIB READERS SECONDS DWELL_MS\n");
    return 2;
  }
  const size_t len = strtoul(argv[1], NULL, 10) * MIB;
  const int readers = atoi(argv[2]);
  const double seconds = atof(argv[3]);
  const long dwell_ms = atol(argv[4]) > 0 ? atol(argv[4]) : 1;
  char* shared = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (shared == MAP_FAILED) {
    perror("mmap");
    return 1;
  }
  const long page = sysconf(_SC_PAGESIZE);
  for (size_t off = 0; off < len; off += (size_t)page) shared[off] = 1;
  for (int i = 0; i < readers; ++i) {
    if (fork() == 0) {
      struct timespec start;
      clock_gettime(CLOCK_MONOTONIC, &start);
      volatile char sum = 0;
      unsigned r = 12345u * (unsigned)(i + 1);  // each reader its own phases
      for (;;) {
        struct timespec now;
        clock_gettime(CLOCK_MONOTONIC, &now);
        if ((double)(now.tv_sec - start.tv_sec) + (double)(now.tv_nsec - start.tv_nsec) * 1e-9 >= seconds) break;
        for (size_t off = 0; off < len; off += (size_t)page) sum += shared[off];
        r = r * 1103515245u + 12345u;
        sleep_ms(dwell_ms + (long)((r >> 8) % (unsigned)dwell_ms));
        madvise(shared, len, MADV_DONTNEED);
        r = r * 1103515245u + 12345u;
        sleep_ms(dwell_ms + (long)((r >> 8) % (unsigned)dwell_ms));
      }
      _exit(0);
    }
  }
  while (wait(NULL) > 0) {
  }
  return 0;
}
