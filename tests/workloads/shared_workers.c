// SPDX-License-Identifier: Apache-2.0
/* shared_workers PARENT_MIB WORKERS OWN_MIB HOLD_MS: the parent touches PARENT_MIB MiB, then forks
 * WORKERS children that each read every shared page (copy-on-write: nothing is copied) and touch
 * OWN_MIB MiB of their own, as a data loader's or a calibration pool's workers do. The memory
 * used, shared pages once: PARENT_MIB + WORKERS × OWN_MIB; Σ RSS counts the shared pages once per
 * process: PARENT_MIB + WORKERS × (PARENT_MIB + OWN_MIB).
 * With a fifth argument "marks": stage markers "Load" (the parent's pages) and "Workers" (the
 * forks, to the last one's end), as a job that marks its phases. */
#include <sys/wait.h>

#include "workload.h"

int main(int argc, char** argv) {
  if (argc != 5 && !(argc == 6 && strcmp(argv[5], "marks") == 0)) return 2;
  size_t parent_mib = strtoul(argv[1], NULL, 10);
  int workers = atoi(argv[2]);
  size_t own_mib = strtoul(argv[3], NULL, 10);
  long hold_ms = atol(argv[4]);
  int marks = argc == 6;
  if (marks) mark("Load Start");
  char* shared = touch_mib(parent_mib);
  if (marks) {
    sleep_ms(300);  // the parent alone, long enough for a PSS pass inside Load
    mark("Load End");
    mark("Workers Start");
  }
  for (int i = 0; i < workers; ++i) {
    if (fork() == 0) {
      volatile char sum = 0;
      for (size_t off = 0; off < parent_mib * MIB; off += 4096) sum += shared[off];
      char* own = touch_mib(own_mib);
      sleep_ms(hold_ms);
      (void)own;
      _exit(0);
    }
  }
  sleep_ms(hold_ms);
  while (wait(NULL) > 0) {
  }
  if (marks) mark("Workers End");
  return 0;
}
