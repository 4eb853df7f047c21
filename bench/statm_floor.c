// SPDX-License-Identifier: Apache-2.0
/* The kernel's floor under qprof's sampling cost: a loop that does nothing but wake on an
 * absolute schedule and pread /proc/PID/statm of N sleeping processes through descriptors kept
 * open, as qprof's sampler does, and nothing else (no stats pass, no trace, no bookkeeping).
 *
 *   statm_floor N INTERVAL SECONDS [CHARGE_FILE]     (N = 0: the wake-ups alone)
 *
 * With CHARGE_FILE (a cgroup's memory.current or memory.usage_in_bytes), each round also preads
 * it through a descriptor kept open: what reading the tree cgroup's charge at every sample adds.
 *
 * Prints "N INTERVAL CPU_PER_ROUND_S SHARE_OF_A_CORE ROUNDS_PER_ASKED": CPU time of this process
 * (CLOCK_PROCESS_CPUTIME_ID) over the loop, per round; the rounds done over those the schedule
 * asked for in the time the loop took. bench/run_all.sh runs it beside qprof.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double seconds_of(clockid_t clock) {
  struct timespec t;
  clock_gettime(clock, &t);
  return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

int main(int argc, char** argv) {
  if (argc != 4 && argc != 5) {
    fprintf(stderr, "usage: statm_floor N INTERVAL SECONDS [CHARGE_FILE]\n");
    return 2;
  }
  const int n = atoi(argv[1]);
  const double interval = atof(argv[2]), duration = atof(argv[3]);
  if (n < 0 || n > 4096 || !(interval > 0) || !(duration > 0)) return 2;
  const int charge_fd = argc == 5 ? open(argv[4], O_RDONLY | O_CLOEXEC) : -1;
  if (argc == 5 && charge_fd < 0) {
    perror(argv[4]);
    return 2;
  }
  pid_t* pids = calloc((size_t)n + 1, sizeof *pids);
  int* fds = calloc((size_t)n + 1, sizeof *fds);
  for (int i = 0; i < n; ++i) {
    pids[i] = fork();
    if (pids[i] == 0) {
      pause();
      _exit(0);
    }
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/statm", (int)pids[i]);
    fds[i] = open(path, O_RDONLY | O_CLOEXEC);
  }
  usleep(200000);
  const long step = (long)(interval * 1e9);
  struct timespec next;
  clock_gettime(CLOCK_MONOTONIC, &next);
  const double wall0 = seconds_of(CLOCK_MONOTONIC), cpu0 = seconds_of(CLOCK_PROCESS_CPUTIME_ID);
  long rounds = 0;
  char buf[128];
  unsigned sink = 0;
  while (seconds_of(CLOCK_MONOTONIC) - wall0 < duration) {
    for (int i = 0; i < n; ++i) {
      if (pread(fds[i], buf, sizeof buf, 0) > 0) sink += (unsigned char)buf[0];
    }
    if (charge_fd >= 0 && pread(charge_fd, buf, sizeof buf, 0) > 0) sink += (unsigned char)buf[0];
    ++rounds;
    /* The next deadline as qprof's loop takes it (common/clock.cpp, next_deadline): deadlines
     * already past are skipped, not caught up in a burst, so that rounds / asked compares. */
    const double now = seconds_of(CLOCK_MONOTONIC);
    long long next_ns = (long long)next.tv_sec * 1000000000LL + next.tv_nsec + step;
    const long long now_ns = (long long)(now * 1e9);
    if (next_ns <= now_ns) next_ns += ((now_ns - next_ns) / step + 1) * step;
    next.tv_sec = (time_t)(next_ns / 1000000000LL);
    next.tv_nsec = (long)(next_ns % 1000000000LL);
    clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &next, NULL);
  }
  const double cpu = seconds_of(CLOCK_PROCESS_CPUTIME_ID) - cpu0, wall = seconds_of(CLOCK_MONOTONIC) - wall0;
  printf("%d %g %.9f %.6f %.4f\n", n, interval, cpu / (double)rounds, cpu / wall, (double)rounds / (wall / interval));
  for (int i = 0; i < n; ++i) kill(pids[i], SIGKILL);
  while (wait(NULL) > 0) {
  }
  return sink == 0xFFFFFFFFu; /* keeps the reads from being optimised away */
}
