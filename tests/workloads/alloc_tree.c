// SPDX-License-Identifier: Apache-2.0
/* alloc_tree PARENT_MIB CHILDREN CHILD_MIB HOLD_MS
 * Forks CHILDREN first (so no page is shared copy-on-write), then every process touches its own
 * memory; all hold it together for HOLD_MS (the children until the parent's hold ends, however
 * slowly a loaded machine touches the parent's pages), then the children exit and the parent
 * reaps them.
 * The tree's true peak is PARENT_MIB + CHILDREN × CHILD_MIB plus each process's baseline. */
#include <sys/wait.h>

#include "workload.h"

int main(int argc, char** argv) {
  if (argc != 5) {
    fprintf(stderr, "usage: alloc_tree PARENT_MIB CHILDREN CHILD_MIB HOLD_MS\n");
    return 2;
  }
  size_t parent_mib = strtoul(argv[1], NULL, 10);
  int children = atoi(argv[2]);
  size_t child_mib = strtoul(argv[3], NULL, 10);
  long hold_ms = atol(argv[4]);
  int ready[2], release[2];
  if (pipe(ready) != 0 || pipe(release) != 0) return 97;
  for (int i = 0; i < children; ++i) {
    if (fork() == 0) {
      close(ready[0]);
      close(release[1]);
      touch_mib(child_mib);
      if (write(ready[1], "x", 1) != 1) _exit(96);
      char end;
      if (read(release[0], &end, 1) != 0) _exit(94); /* EOF: the parent's hold is over */
      _exit(0);
    }
  }
  close(ready[1]);
  close(release[0]);
  touch_mib(parent_mib);
  char c;
  for (int i = 0; i < children; ++i) {
    if (read(ready[0], &c, 1) != 1) return 95;
  }
  mark("Hold Start");
  sleep_ms(hold_ms);
  mark("Hold End");
  close(release[1]);
  while (wait(NULL) > 0) {
  }
  return 0;
}
