// SPDX-License-Identifier: Apache-2.0
/* on_signal EXIT_CODE [ignore]: reports which signal reached it and exits with EXIT_CODE; with
 * "ignore" it ignores SIGTERM and SIGINT (to test the SIGKILL after a timeout's grace period).
 * Holds 20 MiB so that the trace has something to show. */
#include <signal.h>

#include "workload.h"

static volatile sig_atomic_t got;

static void on(int sig) { got = sig; }

int main(int argc, char** argv) {
  if (argc < 2) return 2;
  int code = atoi(argv[1]);
  int ignore = argc > 2 && strcmp(argv[2], "ignore") == 0;
  signal(SIGTERM, ignore ? SIG_IGN : on);
  signal(SIGINT, ignore ? SIG_IGN : on);
  signal(SIGHUP, on);
  touch_mib(20);
  mark("Waiting");
  for (int i = 0; i < 3000 && !got; ++i) sleep_ms(10);
  if (!got) return 3;
  fprintf(stderr, "workload got signal %d\n", (int)got);
  return code;
}
