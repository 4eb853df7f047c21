// SPDX-License-Identifier: Apache-2.0
/* count_signals EXIT_CODE: counts the SIGINT, SIGTERM and SIGHUP that reach it. Marks "Ready"
 * once its handlers are in place; after the first signal it waits 1 s for more, then prints one
 * line per delivery ("workload got signal N from pid P, code C") and exits with EXIT_CODE. The
 * sender and si_code tell a kernel delivery (a terminal key, a group kill) from a forwarded one. */
#include <signal.h>

#include "workload.h"

#define MAX_SEEN 16

static volatile sig_atomic_t seen;
static int sigs[MAX_SEEN], pids[MAX_SEEN], codes[MAX_SEEN];

static void on(int sig, siginfo_t* info, void* ctx) {
  (void)ctx;
  if (seen < MAX_SEEN) {
    sigs[seen] = sig;
    pids[seen] = (int)info->si_pid;
    codes[seen] = info->si_code;
  }
  seen = seen + 1;
}

int main(int argc, char** argv) {
  if (argc < 2) return 2;
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_sigaction = on;
  sa.sa_flags = SA_SIGINFO;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, NULL);
  sigaction(SIGTERM, &sa, NULL);
  sigaction(SIGHUP, &sa, NULL);
  touch_mib(10);
  mark("Ready");
  for (int i = 0; i < 3000 && !seen; ++i) sleep_ms(10);
  if (!seen) return 3;
  for (int i = 0; i < 100; ++i) sleep_ms(10); /* sleep_ms resumes after each signal */
  for (int i = 0; i < seen && i < MAX_SEEN; ++i) {
    fprintf(stderr, "workload got signal %d from pid %d, code %d\n", sigs[i], pids[i], codes[i]);
  }
  fprintf(stderr, "workload got %d signal(s)\n", (int)seen);
  return atoi(argv[1]);
}
