// SPDX-License-Identifier: Apache-2.0
/* exit_with CODE | exit_with -SIGNAL: exits with CODE, or kills itself with SIGNAL. */
#include <signal.h>

#include "workload.h"

int main(int argc, char** argv) {
  if (argc != 2) return 2;
  int n = atoi(argv[1]);
  sleep_ms(50);
  if (n < 0) {
    signal(-n, SIG_DFL);
    kill(getpid(), -n);
    sleep_ms(5000);
    return 97;
  }
  return n;
}
