// SPDX-License-Identifier: Apache-2.0
/* burn MS CHILDREN: CHILDREN processes each spin on the CPU for MS ms of wall time. The parent
 * waits for them and prints what the kernel counted: "cpu_seconds <user+system of the children>
 * wall_seconds <elapsed>". */
#include <sys/resource.h>
#include <sys/time.h>
#include <sys/wait.h>

#include "workload.h"

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

int main(int argc, char** argv) {
  if (argc != 3) return 2;
  double seconds = atol(argv[1]) / 1000.0;
  int children = atoi(argv[2]);
  double start = now_s();
  for (int i = 0; i < children; ++i) {
    if (fork() == 0) {
      volatile unsigned long x = 0;
      while (now_s() - start < seconds) ++x;
      _exit(0);
    }
  }
  while (wait(NULL) > 0) {
  }
  double wall = now_s() - start;
  struct rusage ru;
  getrusage(RUSAGE_CHILDREN, &ru);
  double cpu =
      (double)ru.ru_utime.tv_sec + ru.ru_utime.tv_usec * 1e-6 + (double)ru.ru_stime.tv_sec + ru.ru_stime.tv_usec * 1e-6;
  printf("cpu_seconds %.6f wall_seconds %.6f\n", cpu, wall);
  return 0;
}
