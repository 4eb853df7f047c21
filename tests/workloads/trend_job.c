// SPDX-License-Identifier: Apache-2.0
/* trend_job SHAPE SECONDS: memory over time of a known shape, for the trend tests.
 *   grow    touches 1 MiB every 50 ms (20 MiB/s) on top of 40 MiB, for SECONDS
 *   flat    holds 100 MiB for SECONDS
 *   step    holds 40 MiB, then 240 MiB from the middle of SECONDS
 *   spike   holds 60 MiB, with 400 MiB more for 200 ms at 60 % of SECONDS
 *   staged  stage "Load" holds 60 MiB for SECONDS/2, stage "Leak" then grows 20 MiB/s (markers)
 * Memory is touched page by page, so that RSS is what the shape says. */
#include "workload.h"

/* 1 MiB at each 50 ms deadline from now on, paced by the clock (not by sleeps after the work), so
 * that the rate is 20 MiB/s whatever touching a MiB costs on a loaded machine. */
static void grow_for(long ms) {
  struct timespec next;
  clock_gettime(CLOCK_MONOTONIC, &next);
  for (long t = 0; t < ms; t += 50) {
    touch_mib(1);
    next.tv_nsec += 50 * 1000000L;
    if (next.tv_nsec >= 1000000000L) {
      next.tv_nsec -= 1000000000L;
      next.tv_sec += 1;
    }
    while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &next, NULL) != 0) {
    }
  }
}

int main(int argc, char** argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: trend_job grow|flat|step|spike|staged SECONDS\n");
    return 2;
  }
  const char* shape = argv[1];
  const long ms = (long)(atof(argv[2]) * 1000);
  if (strcmp(shape, "grow") == 0) {
    touch_mib(40);
    grow_for(ms);
  } else if (strcmp(shape, "flat") == 0) {
    touch_mib(100);
    sleep_ms(ms);
  } else if (strcmp(shape, "step") == 0) {
    touch_mib(40);
    sleep_ms(ms / 2);
    touch_mib(200);
    sleep_ms(ms - ms / 2);
  } else if (strcmp(shape, "spike") == 0) {
    touch_mib(60);
    sleep_ms(ms * 6 / 10);
    char* spike = touch_mib(400);
    sleep_ms(200);
    release_mib(spike, 400);
    sleep_ms(ms * 4 / 10 - 200);
  } else if (strcmp(shape, "staged") == 0) {
    mark("Load Start");
    touch_mib(60);
    sleep_ms(ms / 2);
    mark("Load End");
    mark("Leak Start");
    grow_for(ms - ms / 2);
    mark("Leak End");
  } else {
    fprintf(stderr, "trend_job: unknown shape %s\n", shape);
    return 2;
  }
  return 0;
}
