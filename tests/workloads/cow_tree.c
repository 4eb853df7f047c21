// SPDX-License-Identifier: Apache-2.0
/* cow_tree MIB READERS HOLD_MS: the parent touches MIB MiB, then forks READERS children that
 * read every page (copy-on-write: nothing is copied). Σ RSS ≈ (1 + READERS) × MIB; the
 * memory really used, and Σ PSS, ≈ MIB. */
#include <sys/wait.h>

#include "workload.h"

int main(int argc, char** argv) {
  if (argc != 4) return 2;
  size_t mib = strtoul(argv[1], NULL, 10);
  int readers = atoi(argv[2]);
  long hold_ms = atol(argv[3]);
  char* data = touch_mib(mib);
  for (int i = 0; i < readers; ++i) {
    if (fork() == 0) {
      volatile char sum = 0;
      for (size_t off = 0; off < mib * MIB; off += 4096) sum += data[off];
      sleep_ms(hold_ms);
      _exit(sum == 42);
    }
  }
  sleep_ms(hold_ms);
  while (wait(NULL) > 0) {
  }
  return 0;
}
