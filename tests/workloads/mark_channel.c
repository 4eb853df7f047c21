// SPDX-License-Identifier: Apache-2.0
/* Markers through the marker channel with qprof_mark.h (the header users include), driven by
 * its arguments, one step each:
 *   mark:LABEL  qprof_mark       sync:LABEL  qprof_mark_sync (prints "sync LABEL = RESULT")
 *   err:LABEL   a stderr marker   touch:N     maps and touches N MiB    free   unmaps the last
 *   sleep:MS    nofd              forgets QPROF_MARK_FD (the FIFO is used instead)
 *   flood:N     N markers at once, printing how long they took ("flood ms = T")
 *   present     prints "present = 0|1" */
#include "workload.h"

#include <qprof_mark.h>

int main(int argc, char** argv) {
  char* last = NULL;
  size_t last_mib = 0;
  for (int i = 1; i < argc; ++i) {
    const char* a = argv[i];
    if (strncmp(a, "mark:", 5) == 0) {
      qprof_mark(a + 5);
    } else if (strncmp(a, "sync:", 5) == 0) {
      printf("sync %s = %d\n", a + 5, qprof_mark_sync(a + 5));
      fflush(stdout);
    } else if (strncmp(a, "err:", 4) == 0) {
      mark(a + 4);
    } else if (strncmp(a, "touch:", 6) == 0) {
      last_mib = (size_t)atol(a + 6);
      last = touch_mib(last_mib);
    } else if (strcmp(a, "free") == 0) {
      release_mib(last, last_mib);
      last = NULL;
    } else if (strncmp(a, "sleep:", 6) == 0) {
      sleep_ms(atol(a + 6));
    } else if (strcmp(a, "nofd") == 0) {
      unsetenv("QPROF_MARK_FD");
    } else if (strncmp(a, "flood:", 6) == 0) {
      struct timespec t0, t1;
      long n = atol(a + 6);
      clock_gettime(CLOCK_MONOTONIC, &t0);
      for (long k = 0; k < n; ++k) qprof_mark("flood");
      clock_gettime(CLOCK_MONOTONIC, &t1);
      printf("flood ms = %ld\n", (t1.tv_sec - t0.tv_sec) * 1000 + (t1.tv_nsec - t0.tv_nsec) / 1000000);
      fflush(stdout);
    } else if (strcmp(a, "present") == 0) {
      printf("present = %d\n", qprof_mark_present());
      fflush(stdout);
    } else {
      fprintf(stderr, "mark_channel: unknown step %s\n", a);
      return 2;
    }
  }
  return 0;
}
