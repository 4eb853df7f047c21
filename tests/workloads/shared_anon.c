// SPDX-License-Identifier: Apache-2.0
/* shared_anon MIB READERS HOLD_MS: the parent writes MIB MiB of a MAP_SHARED anonymous mapping,
 * then forks READERS children that each read every page and hold it HOLD_MS, as a process pool
 * shares a buffer. The kernel keeps such pages as shared memory (shmem): a cgroup is charged
 * them as page cache, yet only swap could free them. Shared pages once: MIB MiB, unreclaimable;
 * Σ RSS counts them once per process: (1 + READERS) × MIB MiB. */
#include <sys/wait.h>

#include "workload.h"

int main(int argc, char** argv) {
  if (argc != 4) {
    fprintf(stderr, "usage: shared_anon MIB READERS HOLD_MS\n");
    return 2;
  }
  const size_t mib = strtoul(argv[1], NULL, 10);
  const int readers = atoi(argv[2]);
  const long hold_ms = atol(argv[3]);
  char* shared = mmap(NULL, mib * MIB, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (shared == MAP_FAILED) {
    perror("mmap");
    return 1;
  }
  const long page = sysconf(_SC_PAGESIZE);
  for (size_t off = 0; off < mib * MIB; off += (size_t)page) shared[off] = 1;
  for (int i = 0; i < readers; ++i) {
    if (fork() == 0) {
      volatile char sum = 0;
      for (size_t off = 0; off < mib * MIB; off += (size_t)page) sum += shared[off];
      sleep_ms(hold_ms);
      _exit(0);
    }
  }
  sleep_ms(hold_ms);
  while (wait(NULL) > 0) {
  }
  return 0;
}
