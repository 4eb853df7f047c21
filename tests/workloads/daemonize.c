// SPDX-License-Identifier: Apache-2.0
/* daemonize MIB HOLD_MS
 * Double-forks a daemon (setsid, parent gone) that touches MIB MiB and holds it HOLD_MS after
 * the command itself has exited; it announces itself with a marker. */
#include <sys/wait.h>

#include "workload.h"

int main(int argc, char** argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: daemonize MIB HOLD_MS\n");
    return 2;
  }
  size_t mib = strtoul(argv[1], NULL, 10);
  long hold_ms = atol(argv[2]);
  pid_t first = fork();
  if (first == 0) {
    setsid();
    if (fork() == 0) {
      touch_mib(mib);
      mark("Daemon Start");
      sleep_ms(hold_ms);
      mark("Daemon End");
      _exit(0);
    }
    _exit(0);
  }
  waitpid(first, NULL, 0);
  return 0;
}
