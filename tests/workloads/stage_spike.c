// SPDX-License-Identifier: Apache-2.0
/* stage_spike SPIKE_MIB SPIKE_MS HELD_MIB HELD_MS
 * Stage A: 300 ms quiet, a spike of SPIKE_MIB held SPIKE_MS and freed, 300 ms quiet.
 * Stage B: HELD_MIB touched before it starts and held through it (HELD_MS), freed 200 ms after it
 * ends.
 * Stage A's true peak is the spike; stage B's is HELD_MIB at its start, its end and throughout. */
#include "workload.h"

int main(int argc, char** argv) {
  if (argc != 5) {
    fprintf(stderr, "usage: stage_spike SPIKE_MIB SPIKE_MS HELD_MIB HELD_MS\n");
    return 2;
  }
  size_t spike_mib = strtoul(argv[1], NULL, 10);
  long spike_ms = atol(argv[2]);
  size_t held_mib = strtoul(argv[3], NULL, 10);
  long held_ms = atol(argv[4]);
  mark("A Start");
  sleep_ms(300);
  char* spike = touch_mib(spike_mib);
  sleep_ms(spike_ms);
  release_mib(spike, spike_mib);
  sleep_ms(300);
  mark("A End");
  /* Markers reach qprof through a pipe: a moment's pause after each, so that the memory at a
   * marker is the memory of that moment, not of what the next line of code does. */
  sleep_ms(200);
  char* held = touch_mib(held_mib);
  mark("B Start");
  sleep_ms(held_ms);
  mark("B End");
  sleep_ms(200);
  release_mib(held, held_mib);
  return 0;
}
