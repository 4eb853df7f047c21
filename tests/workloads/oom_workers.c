// SPDX-License-Identifier: Apache-2.0
/* oom_workers WORKERS WORKER_MIB HOLD_MS [ignore]
 * Forks WORKERS workers one after the other, 100 ms apart; each touches WORKER_MIB MiB of its
 * own, holds it HOLD_MS and exits 0. The parent touches nothing of note; it waits for its workers
 * (or, with "ignore", sets SIGCHLD to SIG_IGN so that the kernel reaps them unseen, as a job that
 * ignores its workers' deaths does) and exits 0 whatever became of them: under a memory limit
 * smaller than the workers' sum the OOM killer kills one, and only qprof can say so. */
#include <signal.h>
#include <sys/wait.h>

#include "workload.h"

int main(int argc, char** argv) {
  if (argc != 4 && argc != 5) {
    fprintf(stderr, "usage: oom_workers WORKERS WORKER_MIB HOLD_MS [ignore]\n");
    return 2;
  }
  int workers = atoi(argv[1]);
  size_t worker_mib = strtoul(argv[2], NULL, 10);
  long hold_ms = atol(argv[3]);
  int ignore = argc == 5 && strcmp(argv[4], "ignore") == 0;
  if (ignore) signal(SIGCHLD, SIG_IGN);
  for (int i = 0; i < workers; ++i) {
    if (fork() == 0) {
      touch_mib(worker_mib);
      sleep_ms(hold_ms);
      _exit(0);
    }
    sleep_ms(100);
  }
  if (ignore) {
    sleep_ms(hold_ms + 200); /* the workers are gone by then, whichever way */
    return 0;
  }
  while (wait(NULL) > 0) {
  }
  return 0;
}
