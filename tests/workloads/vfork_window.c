// SPDX-License-Identifier: Apache-2.0
/* vfork_window MIB HOLD_MS: the parent touches MIB MiB, then vforks a child that stays in its
 * vfork window for HOLD_MS (as a posix_spawn child does until it execs, only longer) and exits.
 * The child shares its parent's address space: the tree holds the MIB MiB once, though each of
 * the two processes' smaps_rollup shows them all. The child marks `Window Start` as it enters
 * the window, the parent `Window End` once it is past. */
#include <sys/wait.h>

#include "workload.h"

/* A function of its own: no local of main's lives across the vfork. */
static __attribute__((noinline)) pid_t vfork_and_hold(long hold_ms) {
  pid_t child = vfork();
  if (child == 0) {
    /* Only system calls in the window: write, nanosleep, _exit. */
    mark("Window Start");
    sleep_ms(hold_ms);
    _exit(0);
  }
  return child;
}

int main(int argc, char** argv) {
  if (argc != 3) return 2;
  size_t mib = strtoul(argv[1], NULL, 10);
  long hold_ms = atol(argv[2]);
  char* data = touch_mib(mib);
  pid_t child = vfork_and_hold(hold_ms);
  if (child < 0) return 97;
  mark("Window End");
  int status = 0;
  if (waitpid(child, &status, 0) != child || !WIFEXITED(status) || WEXITSTATUS(status) != 0) return 96;
  return data[0] == 1 ? 0 : 1;
}
