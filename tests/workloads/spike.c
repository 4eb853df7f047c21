// SPDX-License-Identifier: Apache-2.0
/* spike MIB HOLD_MS QUIET_MS: a baseline, then one short spike of MIB MiB held HOLD_MS, freed,
 * then QUIET_MS more at the baseline. A sampler slower than the spike misses it. */
#include "workload.h"

int main(int argc, char** argv) {
  if (argc != 4) return 2;
  size_t mib = strtoul(argv[1], NULL, 10);
  long hold_ms = atol(argv[2]);
  long quiet_ms = atol(argv[3]);
  sleep_ms(quiet_ms);
  char* p = touch_mib(mib);
  sleep_ms(hold_ms);
  release_mib(p, mib);
  sleep_ms(quiet_ms);
  return 0;
}
