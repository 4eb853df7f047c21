// SPDX-License-Identifier: Apache-2.0
/* fork_holder MIB WORKERS GAP_MS [shared]: the parent touches MIB MiB and holds them to the end; then, for
 * each worker, marks `Fork K` and forks at once a worker that reads every page (copy-on-write:
 * nothing is copied) and waits; GAP_MS apart. Then it marks `Hold End` and lets them go. From the
 * first marker to the last the tree holds the MIB MiB (its Σ PSS can never be below them), shared
 * by more processes at every fork. With `shared` the pages are MAP_SHARED (shmem, not Anonymous:
 * no single process's anonymous memory bounds the sum from below, only the workers' own shares). */
#include <sys/wait.h>

#include "workload.h"

int main(int argc, char** argv) {
  if (argc != 4 && !(argc == 5 && strcmp(argv[4], "shared") == 0)) return 2;
  size_t mib = strtoul(argv[1], NULL, 10);
  int workers = atoi(argv[2]);
  long gap_ms = atol(argv[3]);
  char* data = argc == 5 ? touch_shared_mib(mib) : touch_mib(mib);
  int go[2];
  if (pipe(go) != 0) return 97;
  for (int i = 0; i < workers; ++i) {
    char label[32];
    snprintf(label, sizeof label, "Fork %d", i + 1);
    mark(label);
    if (fork() == 0) {
      close(go[1]);
      volatile char sum = 0;
      for (size_t off = 0; off < mib * MIB; off += 4096) sum += data[off];
      char byte;
      while (read(go[0], &byte, 1) > 0) {
      }
      _exit(0);
    }
    sleep_ms(gap_ms);
  }
  mark("Hold End");
  close(go[1]);
  while (wait(NULL) > 0) {
  }
  return data[0] == 1 ? 0 : 1;
}
