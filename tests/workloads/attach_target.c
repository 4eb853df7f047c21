// SPDX-License-Identifier: Apache-2.0
/* attach_target MIB CHILD_MIB HOLD_MS TRIGGER: a process for `qprof attach` to find running.
 * Touches MIB MiB, creates TRIGGER.ready, then waits until TRIGGER exists (the test creates it
 * once qprof has attached). Then, when CHILD_MIB > 0, forks a child that touches CHILD_MIB MiB
 * and holds it HOLD_MS ms (the parent waits for it); holds its own HOLD_MS ms and exits 7. */
#include <fcntl.h>
#include <sys/wait.h>

#include "workload.h"

int main(int argc, char** argv) {
  if (argc != 5) return 2;
  const size_t mib = strtoul(argv[1], NULL, 10);
  const size_t child_mib = strtoul(argv[2], NULL, 10);
  const long hold_ms = strtol(argv[3], NULL, 10);
  char ready[4096];
  snprintf(ready, sizeof ready, "%s.ready", argv[4]);
  char* p = touch_mib(mib);
  close(open(ready, O_WRONLY | O_CREAT | O_TRUNC, 0644));
  for (int i = 0; i < 60000 && access(argv[4], F_OK) != 0; ++i) sleep_ms(10);
  if (child_mib > 0) {
    const pid_t child = fork();
    if (child == 0) {
      char* c = touch_mib(child_mib);
      sleep_ms(hold_ms);
      release_mib(c, child_mib);
      _exit(0);
    }
    waitpid(child, NULL, 0);
  }
  sleep_ms(hold_ms);
  release_mib(p, mib);
  return 7;
}
