// SPDX-License-Identifier: Apache-2.0
/* markers: three stages with known memory at each checkpoint.
 *   Load: +40 MiB; Calibration: +80 MiB (released at its end); Export: a checkpoint only.
 * Memory stays still for QUIET ms after each marker, so that the sample qprof takes at the
 * marker has one right answer. Also writes an ordinary stderr line and a line that only looks
 * like a marker (QPROF_MARKER:, not QPROF_MARK:). */
#include "workload.h"

#define QUIET 30

static void checkpoint(const char* label) {
  mark(label);
  sleep_ms(QUIET);
}

int main(void) {
  fprintf(stderr, "starting (not a marker)\n");
  fflush(stderr);
  checkpoint("Load Start");
  char* model = touch_mib(40);
  sleep_ms(150);
  checkpoint("Load End");
  checkpoint("Calibration Start");
  char* activations = touch_mib(80);
  sleep_ms(150);
  checkpoint("Calibration End");
  release_mib(activations, 80);
  sleep_ms(100);
  fprintf(stderr, "info: QPROF_MARKER: looks like a marker, is not one\n");
  fflush(stderr);
  if (write(2, "   QPROF_MARK:   Export   \n", 27) < 0) return 98;
  sleep_ms(100);
  model[0] = 1;
  return 0;
}
